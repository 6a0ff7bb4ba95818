/* libFuzzer target for the owner parsers: ng_parse_cgconfig() (libcgroup's
 * cgconfig.conf), ng_parse_unit_cpuset() (systemd unit files), the
 * hugepage pools at boot (kernel command line, sysctl.d, tmpfiles.d) and
 * the status line of Docker's replies (ng_docker_http_status()). */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ng-owner.h"
#include "owner-internal.h"
#include "act-docker-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        struct ng_cgconfig_group *g = NULL;
        size_t n = 0;
        unsigned line = 0;
        if (ng_parse_cgconfig(buf, &g, &n, &line) == 0) {
                for (size_t i = 0; i < n; i++) {
                        /* positions stay inside the text */
                        if (g[i].cpus.present && (g[i].cpus.start >= g[i].cpus.end || g[i].cpus.end > size))
                                abort();
                        if (g[i].mems.present && (g[i].mems.start >= g[i].mems.end || g[i].mems.end > size))
                                abort();
                        if (g[i].has_cpuset && (g[i].cpuset_close >= size || buf[g[i].cpuset_close] != '}'))
                                abort();
                }
                free(g);
        }
        int m = ng_cgconfig_mounts(buf, "cpuset");
        if (m != 0 && m != 1 && m != -EINVAL)
                abort();
        struct ng_unit_cpuset u = {0};
        (void) ng_parse_unit_cpuset(buf, &u);
        struct ng_boot_pool *bp = NULL;
        size_t nb = 0;
        (void) ng_parse_hugepages_cmdline(buf, 2048, &bp, &nb);
        (void) ng_parse_hugepages_tmpfiles(buf, &bp, &nb);
        (void) ng_boot_pool_find(bp, nb, 0, 2048);
        for (size_t i = 0; i < nb; i++) {
                char where[256];
                ng_boot_pool_describe(&bp[i], where, sizeof(where));
        }
        uint64_t pages;
        unsigned sline = 0;
        if (ng_parse_sysctl_hugepages(buf, &pages, &sline) == 1 && sline == 0)
                abort();
        free(bp);
        char name[256];
        (void) ng_unit_from_cgroup(buf, name, sizeof(name));
        int code = ng_docker_http_status(buf);
        if (code != -EBADMSG && (code < 0 || code > 999))
                abort();
        free(buf);
        return 0;
}

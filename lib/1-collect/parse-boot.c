/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hugepage pools as the boot configuration sets them (ng-owner.h): the
 * kernel command line (Documentation/admin-guide/mm/hugetlbpage.rst:
 * "hugepagesz=", "hugepages=", the per-node form "hugepages=0:N,1:M",
 * "default_hugepagesz=") and numaguard's own tmpfiles.d file.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-owner.h"
#include "ng-parse.h"
#include "parse-internal.h"

static int push(struct ng_boot_pool **pools, size_t *n, struct ng_boot_pool bp)
{
        size_t cap = *n;        /* grown one at a time: a handful of entries */
        int r = ng_parse_grow((void **) pools, &cap, *n, sizeof(**pools));
        if (r < 0)
                return r;
        (*pools)[(*n)++] = bp;
        return 0;
}

/* "2M", "1G", "2048k": KiB, or 0. Same spelling the kernel's memparse takes. */
static uint64_t size_kib(const char *s, size_t len)
{
        uint64_t v = 0;
        size_t i = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
                if (v > UINT64_MAX / 10 / 1024 / 1024)
                        return 0;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        if (i == 0 || i + 1 != len)
                return 0;
        switch (s[i]) {
        case 'k': case 'K': return v;
        case 'm': case 'M': return v * 1024;
        case 'g': case 'G': return v * 1024 * 1024;
        }
        return 0;
}

/* "0:512,1:512" -> entries; anything else -> none (the global form). */
static int per_node(const char *s, size_t len, uint64_t kib, struct ng_boot_pool **pools, size_t *n)
{
        char buf[512];
        if (!memchr(s, ':', len) || len >= sizeof(buf) || kib == 0)
                return 0;
        memcpy(buf, s, len);
        buf[len] = '\0';
        size_t start = *n;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                const char *p = tok;
                uint64_t node, pages;
                if (ng_parse_u64(&p, &node) < 0 || *p++ != ':' || ng_parse_u64(&p, &pages) < 0 || *p ||
                    node > 4095) {
                        *n = start;     /* the kernel rejects the whole parameter */
                        return 0;
                }
                int r = push(pools, n, (struct ng_boot_pool) { .node = (int) node, .page_kib = kib, .pages = pages });
                if (r < 0)
                        return r;
        }
        return 0;
}

int ng_parse_hugepages_cmdline(const char *cmdline, uint64_t default_kib, struct ng_boot_pool **pools, size_t *n)
{
        if (!cmdline || !pools || !n)
                return -EINVAL;
        /* default_hugepagesz= may come anywhere */
        for (const char *p = cmdline; (p = strstr(p, "default_hugepagesz=")); p++)
                if (p == cmdline || p[-1] == ' ') {
                        const char *v = p + strlen("default_hugepagesz=");
                        uint64_t k = size_kib(v, strcspn(v, " \n"));
                        if (k)
                                default_kib = k;
                }
        uint64_t cur = default_kib;
        for (const char *p = cmdline; *p;) {
                p += strspn(p, " \n\t");
                size_t len = strcspn(p, " \n\t");
                if (len > 11 && !strncmp(p, "hugepagesz=", 11))
                        cur = size_kib(p + 11, len - 11);
                else if (len > 10 && !strncmp(p, "hugepages=", 10)) {
                        int r = per_node(p + 10, len - 10, cur, pools, n);
                        if (r < 0)
                                return r;
                }
                p += len;
        }
        return 0;
}

/* "w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 512" */
static int tmpfiles_line(char *line, void *item, void *userdata)
{
        unsigned *lineno = userdata;
        ++*lineno;
        struct ng_boot_pool *bp = item;
        char type[8], path[256], f[4][8];
        uint64_t pages;
        int node;
        unsigned long kib;
        char tail;
        if (sscanf(line, "%7s %255s %7s %7s %7s %7s %" SCNu64 " %c", type, path, f[0], f[1], f[2], f[3], &pages,
                   &tail) != 7 || strcmp(type, "w"))
                return 0;
        if (sscanf(path, "/sys/devices/system/node/node%d/hugepages/hugepages-%lukB/nr_hugepages%c", &node, &kib,
                   &tail) != 2 || node < 0 || node > 4095 || kib == 0)
                return 0;
        *bp = (struct ng_boot_pool) { .node = node, .page_kib = kib, .pages = pages, .from_file = true,
                                      .line = *lineno };
        return 1;
}

static void free_pools(void *a, size_t n)
{
        (void) n;
        free(a);
}

int ng_parse_hugepages_tmpfiles(const char *text, struct ng_boot_pool **pools, size_t *n)
{
        if (!text || !pools || !n)
                return -EINVAL;
        struct ng_boot_pool *v = NULL;
        size_t k = 0;
        unsigned lineno = 0;
        int r = ng_parse_lines(text, sizeof(*v), tmpfiles_line, &lineno, free_pools, (void **) &v, &k);
        if (r < 0)
                return r;
        size_t i;
        for (i = 0; i < k && r >= 0; i++)
                r = push(pools, n, v[i]);
        free(v);
        return r;
}

const struct ng_boot_pool *ng_boot_pool_find(const struct ng_boot_pool *pools, size_t n, int node, uint64_t page_kib)
{
        const struct ng_boot_pool *cmd = NULL, *file = NULL;
        for (size_t i = 0; i < n; i++)
                if (pools[i].node == node && pools[i].page_kib == page_kib)
                        *(pools[i].from_file ? &file : &cmd) = &pools[i];
        return file ? file : cmd;
}

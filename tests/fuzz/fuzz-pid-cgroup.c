/* libFuzzer target for ng_parse_pid_cgroup(), the container its paths
 * name (ng_container_from_cgroup()) and ng_parse_ns_link(). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "ng-snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        struct ng_pid_cgroup c = {};

        struct ng_container ct;
        uint64_t ino;
        (void)ng_container_from_cgroup(buf, &ct);
        (void)ng_parse_ns_link(buf, "ipc", &ino);
        if (ng_parse_pid_cgroup(buf, &c) == 0) {
                (void)ng_container_from_cgroup(ng_pid_cgroup_v2_path(&c), &ct);
                (void)ng_container_from_cgroup(ng_pid_cgroup_v1_path(&c, "cpuset"), &ct);
                (void)ng_pid_cgroup_v2_path(&c);
                (void)ng_pid_cgroup_v1_path(&c, "cpuset");
                (void)ng_pid_cgroup_v1_path(&c, "name=systemd");
                ng_pid_cgroup_done(&c);
        }
        free(buf);
        return 0;
}

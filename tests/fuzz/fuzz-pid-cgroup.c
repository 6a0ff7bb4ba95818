/* libFuzzer target for ng_parse_pid_cgroup(). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ng-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        struct ng_pid_cgroup c = {};

        if (ng_parse_pid_cgroup(buf, &c) == 0) {
                (void)ng_pid_cgroup_v2_path(&c);
                (void)ng_pid_cgroup_v1_path(&c, "cpuset");
                (void)ng_pid_cgroup_v1_path(&c, "name=systemd");
                ng_pid_cgroup_done(&c);
        }
        free(buf);
        return 0;
}

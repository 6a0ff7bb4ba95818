/* libFuzzer target for ng_parse_mountinfo() and the option helpers. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        struct ng_mount *m = NULL;
        size_t n = 0;
        char val[64];

        if (ng_parse_mountinfo(buf, &m, &n) == 0) {
                for (size_t i = 0; i < n; i++) {
                        (void)ng_mount_has_option(&m[i], "cpuset");
                        (void)ng_mount_option_value(&m[i], "pagesize", val, sizeof(val));
                }
                ng_mounts_free(m, n);
        }
        free(buf);
        return 0;
}

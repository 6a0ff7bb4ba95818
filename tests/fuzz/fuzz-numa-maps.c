/* libFuzzer target for ng_parse_numa_maps(). */

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

        struct ng_numa_map *m = NULL;
        size_t n = 0;

        if (ng_parse_numa_maps(buf, &m, &n) == 0) {
                for (size_t i = 0; i < n; i++)
                        (void)ng_mpol_name(m[i].policy);
                ng_numa_maps_free(m, n);
        }
        free(buf);
        return 0;
}

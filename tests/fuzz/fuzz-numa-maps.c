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
        struct ng_parse_skipped bad;
        size_t n = 0;

        if (ng_parse_numa_maps(buf, &m, &n, &bad) == 0) {
                /* the first skipped line is named whenever one is */
                if ((bad.lines == 0) != (bad.first_line == 0))
                        abort();
                for (size_t i = 0; i < n; i++) {
                        (void)ng_mpol_name(m[i].policy);
                        /* no node a host can lack past the bitmaps */
                        for (size_t k = 0; k < m[i].n_np; k++)
                                if (m[i].np[k].node < 0 || m[i].np[k].node >= NG_BITMAP_BITS)
                                        abort();
                }
                ng_numa_maps_free(m, n);
        }
        free(buf);
        return 0;
}

/* libFuzzer target for ng_parse_maps(). */

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

        struct ng_map *m = NULL;
        struct ng_parse_skipped bad;
        size_t n = 0;

        if (ng_parse_maps(buf, 1, &m, &n, &bad) == 0) {
                /* the first skipped line is named whenever one is */
                if ((bad.lines == 0) != (bad.first_line == 0))
                        abort();
                ng_maps_free(m, n);
        }
        if (ng_parse_maps(buf, 0, &m, &n, NULL) == 0)
                ng_maps_free(m, n);
        free(buf);
        return 0;
}

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
        size_t n = 0;

        if (ng_parse_maps(buf, 1, &m, &n) == 0)
                ng_maps_free(m, n);
        if (ng_parse_maps(buf, 0, &m, &n) == 0)
                ng_maps_free(m, n);
        free(buf);
        return 0;
}

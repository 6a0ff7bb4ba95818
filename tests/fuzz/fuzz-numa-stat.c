/* libFuzzer target for ng_parse_numa_stat(). */

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

        struct ng_numa_stat_line *l = NULL;
        size_t n = 0;

        if (ng_parse_numa_stat(buf, &l, &n) == 0)
                ng_numa_stat_free(l, n);
        free(buf);
        return 0;
}

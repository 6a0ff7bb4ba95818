/* libFuzzer target for ng_parse_zoneinfo_high(). */

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
        uint64_t pages;
        for (int node = 0; node < 4; node++)
                (void)ng_parse_zoneinfo_high(buf, node, &pages);
        free(buf);
        return 0;
}

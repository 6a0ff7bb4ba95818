/* libFuzzer target for ng_parse_loadavg() (/proc/loadavg). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);
        uint64_t threads, last;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (ng_parse_loadavg(buf, &threads, &last) == 0 && last > INT32_MAX)
                abort();
        free(buf);
        return 0;
}

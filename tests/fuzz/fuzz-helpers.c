/* libFuzzer target for the small helpers of lib/1-collect/kernel-text/parse.c. */

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

        uint64_t v, row[16];
        size_t n;
        char out[32];
        const char *p = buf;

        (void)ng_parse_u64(&p, &v);
        (void)ng_parse_u64_full(buf, &v);
        (void)ng_parse_u64_row(buf, row, 16, &n);
        (void)ng_parse_hugepages_dirname(buf, &v);
        (void)ng_parse_bracketed_choice(buf, out, sizeof(out));
        ng_unescape_octal(buf);
        free(buf);
        return 0;
}

/* libFuzzer target for ng_bitmap_parse_list() and ng_bitmap_format_list(). */

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

        struct ng_bitmap b;
        char out[256];

        if (ng_bitmap_parse_list(buf, &b) == 0) {
                (void)ng_bitmap_format_list(&b, out, sizeof(out));
                (void)ng_bitmap_count(&b);
        }
        free(buf);
        return 0;
}

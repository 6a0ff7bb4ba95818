/* libFuzzer target for ng_parse_meminfo(). */

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

        struct ng_meminfo *m = malloc(sizeof(*m));

        if (m && ng_parse_meminfo(buf, m) == 0) {
                (void)ng_meminfo_value(m, "MemTotal");
                (void)ng_meminfo_get(m, m->f[m->n - 1].key, NULL);
        }
        free(m);
        free(buf);
        return 0;
}

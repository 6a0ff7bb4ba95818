/* libFuzzer target for ng_parse_sysvipc_shm(). */

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

        struct ng_shm_seg *s = NULL;
        size_t n = 0;

        if (ng_parse_sysvipc_shm(buf, &s, &n) == 0)
                free(s);
        free(buf);
        return 0;
}

/* libFuzzer target for ng_parse_pid_status() and ng_parse_pid_limit(). */

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

        struct ng_pid_status *st = malloc(sizeof(*st));

        if (st && ng_parse_pid_status(buf, st) == 0)
                ng_pid_status_done(st);
        free(st);
        uint64_t soft, hard;
        (void) ng_parse_pid_limit(buf, "Max locked memory", &soft, &hard);
        free(buf);
        return 0;
}

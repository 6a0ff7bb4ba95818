/* libFuzzer target for ng_parse_pid_stat() and ng_parse_cmdline(). */

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

        struct ng_pid_stat st;
        char *cmd = NULL;

        (void)ng_parse_pid_stat(buf, &st);
        /* cmdline takes raw bytes, NULs included */
        if (ng_parse_cmdline((const char *)data, size, &cmd) == 0)
                free(cmd);
        free(buf);
        return 0;
}

/* libFuzzer target for the configuration parser (ng_config_load_string):
 * numaguard.conf is written by people and by configuration management, and
 * a reload must never crash the daemon whatever the file holds. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ng-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void diag(void *userdata, int priority, const char *file, unsigned line, const char *msg)
{
        (void)userdata, (void)priority, (void)file, (void)line, (void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);
        struct ng_config *c = NULL;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (ng_config_load_string(buf, "fuzz.conf", diag, NULL, &c) == 0)
                ng_config_free(c);
        free(buf);
        return 0;
}

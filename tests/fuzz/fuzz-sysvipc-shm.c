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

        if (ng_parse_sysvipc_shm(buf, &s, &n) == 0) {
                /* one entry a shmid, whatever the rows (a short input
                 * holds few: the pairs are cheap) */
                for (size_t i = 0; i < n; i++)
                        for (size_t k = i + 1; k < n; k++)
                                if (s[i].shmid == s[k].shmid)
                                        abort();
                free(s);
        }
        free(buf);
        return 0;
}

/* libFuzzer target for ng_proc_events_parse() (one proc connector
 * datagram, as recvmmsg() hands it over: aligned, len bytes). */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "picture-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ng_pid_set set = {0};
        void *buf = malloc(size ? size : 1);    /* exactly size bytes: ASan sees a read past them */

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        int r = ng_proc_events_parse(buf, size, &set);
        if (r < 0 ? r != -ENOMEM : (size_t) r != set.n || (set.n && set.v[0].pid <= 0))
                abort();
        free(set.v);
        free(buf);
        return 0;
}

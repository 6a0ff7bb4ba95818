/* libFuzzer target for numaguardd's control-socket request framing
 * (server_request_parse): any local user in status_group may write
 * anything to the socket. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char out[SERVER_REQUEST_MAX + 1];
        int n = server_request_parse((const char *) data, size, out, sizeof(out));
        if (n >= 0 && strlen(out) != (size_t) n)
                abort();
        return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's request framing: pure, so that it is fuzzed
 * (tests/fuzz/fuzz-control-request.c) apart from the socket. */

#include <errno.h>
#include <string.h>

#include "request.h"

int server_request_parse(const char *buf, size_t len, char *ret, size_t size)
{
        const char *nl = memchr(buf, '\n', len);
        size_t n = nl ? (size_t) (nl - buf) : len;
        if (n > SERVER_REQUEST_MAX || n >= size)
                return -E2BIG;
        if (n > 0 && buf[n - 1] == '\r')
                n--;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) buf[i] < 0x20 || (unsigned char) buf[i] > 0x7e)
                        return -EBADMSG;
        memcpy(ret, buf, n);
        ret[n] = '\0';
        return (int) n;
}

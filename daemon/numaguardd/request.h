/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The control socket's request framing (request.c): pure, fuzzed apart from
 * the socket. */

#include <stddef.h>

/* Requests: one line of at most SERVER_REQUEST_MAX bytes, newline included. */
#define SERVER_REQUEST_MAX 4096

/* One request from the len bytes a client sent: up to the first newline (or
 * all of them), a trailing CR dropped, printable ASCII only, copied
 * NUL-terminated into ret (size bytes). Returns its length, -E2BIG beyond
 * SERVER_REQUEST_MAX or size, -EBADMSG for other bytes. */
int server_request_parse(const char *buf, size_t len, char *ret, size_t size);

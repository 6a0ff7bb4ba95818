/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the parsers of kernel text (kernel-text/parse*.c): the field
 * readers. Not installed; the line readers that other text parsers share
 * are in parse.h. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* ---- parse-fields.c ---- */

/* MAX_NUMNODES is at most 1024. */
#define NG_PARSE_MAX_NODES_PER_LINE 1024u
#define NG_PARSE_MAX_FIELDS 64

/* Splits on runs of blanks in place; returns the field count, or max + 1
 * when there are more fields than max. */
size_t ng_parse_split(char *s, char **f, size_t max);
/* A whole field as an unsigned decimal. */
int ng_parse_field_u64(const char *s, uint64_t *ret);
int ng_parse_field_u32(const char *s, uint32_t *ret);
int ng_parse_field_i64(const char *s, int64_t min, int64_t max, int64_t *ret);
int ng_parse_field_pid(const char *s, pid_t *ret);
/* Hex digits up to end or stop; no "0x". */
int ng_parse_hex_u64(const char **s, char stop, uint64_t *ret);
int ng_parse_field_hex(const char *s, uint64_t *ret);

#pragma GCC visibility pop

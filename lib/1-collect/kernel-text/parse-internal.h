/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the parsers of lib/1-collect/parse*.c. Not installed. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_parse_skipped;        /* parse.h */

/* Far above what a sane file holds (a 1 TiB process has ~10^5 VMAs), low
 * enough that a hostile file cannot make us allocate gigabytes. */
#define NG_PARSE_MAX_ENTRIES (1u << 20)
/* A mountinfo or numa_maps line with two escaped PATH_MAX paths fits. */
#define NG_PARSE_MAX_LINE (64u * 1024)

/* Copies the line at *p and advances past it. A line longer than
 * NG_PARSE_MAX_LINE comes back empty so the caller skips it as malformed.
 * NULL on allocation failure. */
char *ng_parse_line_dup(const char **p);


/* Parses one line (a writable copy) into item: 1 keeps it, 0 skips the
 * line, -EINVAL skips it as malformed (counted), any other <0 fails the
 * whole parse. item holds nothing to free unless 1 is returned. */
typedef int (*ng_line_fn)(char *line, void *item, void *userdata);

/*
 * Runs fn over every line of buf (an over-long line comes back empty, to be
 * skipped) and collects the kept items; *ret_skipped (may be NULL) says how
 * many lines fn found malformed and where the first is. On failure the
 * kept items are freed with free_items(array, n) and the -errno returned;
 * outputs untouched.
 */
int ng_parse_lines(const char *buf, size_t item_size, ng_line_fn fn, void *userdata,
                   void (*free_items)(void *array, size_t n), void **ret, size_t *ret_n,
                   struct ng_parse_skipped *ret_skipped);

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

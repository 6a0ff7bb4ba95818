/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Inside the configuration: the table of keys (config.c), the value codecs
 * it points to (config-values.c, config-names.c) and the loader that walks it
 * (config-load.c). Not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-config.h"
#include "util.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

#define USEC_PER_MIN (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MIN)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)
#define PIB (UINT64_C(1) << 50)

/* Larger files are not configs; keeps a mistaken path from eating memory. */
#define CONFIG_MAX_BYTES (1024 * 1024)

/* Kernel MAX_NUMNODES is at most 1 << CONFIG_NODES_SHIFT (10) on any arch. */
#define NODE_ID_MAX 1023

/* sizeof(sockaddr_un.sun_path) minus the NUL. */
#define SOCKET_PATH_MAX 107

/* The kernel keeps TASK_COMM_LEN - 1 = 15 characters of a command name. */
#define COMM_MAX 15

/* The table has at most this many keys (config.c checks at compile time). */
#define NG_CFG_ITEMS_MAX 64

enum section_kind {
        SEC_NONE,    /* before the first header */
        SEC_GLOBAL,
        SEC_INSTANCE,
        SEC_SKIP,    /* unknown or broken header: its keys are ignored */
};

struct item;

/* Returns 0, 1 (accepted, with a warning in why), -EINVAL (reason in why)
 * or -ENOMEM. */
typedef int (*parse_fn)(const struct item *it, const char *value, void *field, char *why,
                        size_t whylen);
/* Returns false when the field is unset (then it is not dumped). */
typedef bool (*format_fn)(const struct item *it, const void *field, char *buf, size_t size);

enum {
        ITEM_MATCHER = 1u << 0, /* selects processes/segments of an instance */
};

struct item {
        enum section_kind section;
        const char *key;
        parse_fn parse;
        format_fn format;
        size_t offset;
        double min, max; /* numbers: value range; strings: length range */
        const char *def; /* parsed at init; NULL = unset */
        const char *const *names; /* choices (index = value) or flag bits */
        unsigned flags;
};

/* The table, in dump order, and its length. */
extern const struct item ng_cfg_items[];
extern const size_t ng_cfg_n_items;

const struct item *ng_cfg_find_item(enum section_kind section, const char *key);
/* Sets every key of section that has a default in base (a struct ng_config
 * or struct ng_instance_config); 0, -EINVAL or -ENOMEM. */
int ng_cfg_apply_defaults(enum section_kind section, void *base);
int ng_cfg_instance_init(struct ng_instance_config *inst, const char *name, unsigned line);

/* The value codecs, one pair per kind of value: numbers in config-values.c,
 * names and text in config-names.c. */

/* Leading decimal digits; no sign, no blanks, no base prefixes. */
int ng_cfg_parse_digits(const char *s, uint64_t *ret, const char **ret_end);
/* 0, or -EINVAL with the range (formatted by fmt) in why. */
int ng_cfg_check_u64_range(const struct item *it, uint64_t v,
                           void (*fmt)(uint64_t v, char *buf, size_t size), char *why, size_t whylen);
void ng_cfg_format_plain(uint64_t v, char *buf, size_t size);

int ng_cfg_parse_duration(const struct item *it, const char *value, void *field, char *why,
                          size_t whylen);
bool ng_cfg_fmt_duration(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_size(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen);
bool ng_cfg_fmt_size(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_floor(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen);
bool ng_cfg_fmt_floor(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_uint(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen);
bool ng_cfg_fmt_uint(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_fraction(const struct item *it, const char *value, void *field, char *why,
                          size_t whylen);
bool ng_cfg_fmt_fraction(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_bool(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen);
bool ng_cfg_fmt_bool(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_choice(const struct item *it, const char *value, void *field, char *why,
                        size_t whylen);
bool ng_cfg_fmt_choice(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_flags(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen);
bool ng_cfg_fmt_flags(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_path(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen);
int ng_cfg_parse_glob(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen);
int ng_cfg_parse_comm_glob(const struct item *it, const char *value, void *field, char *why,
                           size_t whylen);
int ng_cfg_parse_unreadable_ok(const struct item *it, const char *value, void *field, char *why,
                               size_t whylen);
bool ng_cfg_fmt_string(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_group(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen);
int ng_cfg_parse_uid(const struct item *it, const char *value, void *field, char *why,
                     size_t whylen);
bool ng_cfg_fmt_uid(const struct item *it, const void *field, char *buf, size_t size);
int ng_cfg_parse_nodes(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen);
bool ng_cfg_fmt_nodes(const struct item *it, const void *field, char *buf, size_t size);

/* The files (config-files.c). Reads a regular file (or /dev/null, as
 * empty) of at most CONFIG_MAX_BYTES: 0, -EINVAL with *ret_mode set when
 * path is anything else, -EFBIG, or -errno. */
int ng_cfg_read_text(const char *path, char **ret, size_t *ret_len, mode_t *ret_mode);
/* "is a FIFO, not a regular file; not read", ... */
const char *ng_cfg_file_kind(mode_t mode);
/* The line of text that byte off is on, from 1. */
unsigned ng_cfg_line_of(const char *text, size_t off);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The parser of PostgreSQL's configuration files (fuzzed: another user's
 * text) and the applying of its settings. Internal: not installed. */

#include <stddef.h>

#include "ng-dbconf.h"

#pragma GCC visibility push(hidden)

struct ng_pg_conf_item {
        char name[64];          /* lower case */
        char value[512];        /* unquoted, escapes undone */
        unsigned line;
};

/* At most this many settings a file, and this deep an include chain. */
#define NG_PG_CONF_MAX_ITEMS 4096
#define NG_PG_CONF_MAX_DEPTH 10

/*
 * PostgreSQL's configuration text: "name = value" or "name value" per line, '#'
 * comments, values bare or in single quotes ('' and backslash escapes).
 * include, include_if_exists and include_dir come out as items of those
 * names, in their place. A line that does not parse fails the whole file
 * (-EINVAL, *ret_bad_line its number), as the server refuses to start on
 * it. Returns 0 with *ret malloc'd, or -errno.
 */
int ng_pg_conf_parse(const char *buf, size_t len, struct ng_pg_conf_item **ret, size_t *ret_n,
                     unsigned *ret_bad_line);

/* Applies one setting (name lower case) to s, from where it came ("FILE:LINE").
 * 0; -EINVAL for a value the server would refuse, -ERANGE for a number
 * beyond 64 bits (s untouched). Settings
 * numaguard does not use are ignored. */
int ng_pg_setting_apply(struct ng_db_settings *s, const char *name, const char *value, const char *from);

/* The "-c name=value" and "--name=value" options of a postmaster's command
 * line (blank-separated, as ng_parse_cmdline() gives it), applied to s;
 * config_file, if given, into buf (else ""). */
void ng_pg_cmdline_apply(struct ng_db_settings *s, const char *cmdline, char *config_file, size_t size);

/* The postmaster's data directory as its command line gives it (-D DIR,
 * -DDIR, --pgdata=DIR), when absolute; else "". */
void ng_pg_cmdline_datadir(const char *cmdline, char *buf, size_t size);

#pragma GCC visibility pop

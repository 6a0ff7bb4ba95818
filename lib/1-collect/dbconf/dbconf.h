/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the databases leave and read outside /proc, as the snapshot holds
 * it: what each main process's configuration asks of hugepages at its
 * next start (dbconf.c, mycnf.c, oracle.c), the pid files the
 * configuration names and the unversioned libnuma.so an engine loads
 * (db-files.c); and the parsers of the databases' configuration files
 * (fuzzed: another user's text) with the applying of their settings:
 * PostgreSQL's, MariaDB's option files, Oracle's parameter files.
 * Internal: not installed; what only dbconf/'s readers share is in
 * dbconf-internal.h.
 */

#include <stdbool.h>
#include <stddef.h>

#include "ng-dbconf.h"

#pragma GCC visibility push(hidden)

/* ---- collection, in the order ng_snapshot_collect() calls it ---- */

struct collector;
/* db-files.c: the pid files of ng_collect_opts.pidfiles, each one's pid
 * (0 when absent or unreadable). 0 or -ENOMEM. */
int ng_collect_pidfiles(struct collector *c);
/* dbconf.c: the hugepage settings of each database main process. */
int ng_collect_db_settings(struct collector *c);
/* db-files.c: whether the unversioned libnuma.so is there, looked for
 * only where an engine that needs it runs (ng_snapshot.libnuma_so). */
void ng_collect_libnuma(struct collector *c);

/* ---- PostgreSQL's configuration text (parse-dbconf.c) ---- */

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
/* Digits and at most one suffix of units (each 1024 times the one before),
 * either case, into *ret: 0, -EINVAL, -ERANGE (parse-dbconf.c). */
int ng_dbconf_suffixed_size(const char *v, const char *units, uint64_t *ret);

int ng_pg_setting_apply(struct ng_db_settings *s, const char *name, const char *value, const char *from);

/* The "-c name=value" and "--name=value" options of a postmaster's command
 * line (blank-separated, as ng_parse_cmdline() gives it), applied to s;
 * config_file, if given, into buf (else ""). */
void ng_pg_cmdline_apply(struct ng_db_settings *s, const char *cmdline, char *config_file, size_t size);

/* The postmaster's data directory as its command line gives it (-D DIR,
 * -DDIR, --pgdata=DIR), when absolute; else "". */
void ng_pg_cmdline_datadir(const char *cmdline, char *buf, size_t size);

/* The first error of ret's reading: err, at where ("FILE", "FILE:LINE");
 * later ones are not kept. */
void ng_dbconf_fail(struct ng_db_settings *ret, int err, const char *where);
/* The first reason ret's next start cannot be told (ng_db_settings.unknown). */
void ng_dbconf_unknown(struct ng_db_settings *ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* At most this many files one instance's configuration reads (an
 * !includedir of thousands is not a configuration). */
#define NG_DB_CONF_MAX_FILES 256

/* Whether a path another user wrote (an include, ORACLE_HOME) may be read
 * below a process's root: absolute, no "." or ".." component (a ".." at
 * /proc/PID/root leads out of a container's root), no control character,
 * shorter than 1024 bytes. */
bool ng_db_path_ok(const char *path);

/* ---- MariaDB (and MySQL) option files ---- */

enum ng_my_cnf_kind {
        NG_MY_CNF_OPTION,       /* "name" or "name = value" in the current group */
        NG_MY_CNF_GROUP,        /* "[name]": name lower case */
        NG_MY_CNF_INCLUDE,      /* "!include FILE": value */
        NG_MY_CNF_INCLUDEDIR,   /* "!includedir DIR": value */
};

struct ng_my_cnf_item {
        enum ng_my_cnf_kind kind;
        char name[64];          /* an option's name as written */
        char value[512];        /* unquoted, escapes undone */
        bool has_value;         /* "name = value", not "name" */
        bool cut;               /* value (or group name) longer than its field: cut */
        unsigned line;
};

/*
 * An option file as the MySQL and MariaDB server reads it
 * (mysys/my_default.c): '#' and ';'
 * comment lines, "[group]", "!include" and "!includedir" directives,
 * "name", "name = value" with a '#' outside quotes ending the line (an
 * option whose name does not fit the field is left out: none numaguard
 * reads is that long), one
 * pair of quotes around a value taken off and its \n \t \r \b \s \\ \'
 * \" escapes undone. The server refuses to start on an option before any
 * group, a group without its ']' and a directive without its argument:
 * -EINVAL with *ret_bad_line its number; a NUL in the text too. 0 with
 * *ret malloc'd, -E2BIG beyond NG_PG_CONF_MAX_ITEMS items, -ENOMEM.
 */
int ng_my_cnf_parse(const char *buf, size_t len, struct ng_my_cnf_item **ret, size_t *ret_n,
                    unsigned *ret_bad_line);

/* Whether MariaDB's server reads the options of group (lower case) with
 * the --defaults-group-suffix suffix ("" none): 1 yes, 0 no, 2 a group of
 * one server version ([mariadb-11.4]: read only by a server of that
 * version, which numaguard does not know). The groups are the engine
 * table's (engine.h: conf_groups). */
int ng_my_group_read(const char *group, const char *suffix);

/* Applies one option of MariaDB's server, as a file or the command line
 * gives it
 * ("large-pages", "skip-large-pages", "loose-innodb_buffer_pool_size"),
 * value NULL when given none, from where it came ("FILE:LINE",
 * "command line"): large_pages, innodb_buffer_pool_size and
 * innodb_buffer_pool_size_max, dashes and underscores alike, with the
 * loose-, skip-, disable-, enable- and maximum- prefixes of my_getopt.
 * 0, 1 when it is one numaguard reads (the caller may need to know), or
 * -EINVAL for a value the server refuses or numaguard cannot tell how it
 * reads, -ERANGE beyond 64 bits (s untouched). Others are ignored (0). */
int ng_my_option_apply(struct ng_db_settings *s, const char *name, const char *value, const char *from);

/* What the leading options of the server's command line (as
 * ng_parse_cmdline() gives it: blank-separated) say of the option files
 * it reads. */
struct ng_my_defaults {
        bool no_defaults;               /* --no-defaults, the first argument */
        char file[512];                 /* --defaults-file=, "" none */
        char extra_file[512];           /* --defaults-extra-file=, "" none */
        char group_suffix[64];          /* --defaults-group-suffix=, "" none */
};
void ng_my_cmdline_defaults(const char *cmdline, struct ng_my_defaults *ret);

/* The options of the server's command line applied to s, after its files, as
 * the server applies them ("--large-pages", "--innodb-buffer-pool-size=1G"
 * or "--innodb-buffer-pool-size 1G"). -EINVAL or -ERANGE as
 * ng_my_option_apply() for the first option it refuses, 0 otherwise. */
int ng_my_cmdline_apply(struct ng_db_settings *s, const char *cmdline);

/* ---- Oracle parameter files ---- */

struct ng_ora_param {
        char sid[32];           /* the instance it applies to, "*" every one */
        char name[64];          /* lower case */
        char value[512];        /* unquoted */
        unsigned line;
        bool cut;               /* value longer than the field: cut */
};

/*
 * The parameters numaguard reads (use_large_pages, sga_max_size,
 * sga_target, memory_target, memory_max_target, and spfile and ifile of a
 * text pfile) of an Oracle parameter file, "[SID.]name = value" a line, a
 * value bare or quoted, '#' a comment. spfile: a server parameter file,
 * whose text lines sit between binary bytes (a header, padding, the block
 * headers of a larger file); every setting there has its "SID." or "*."
 * and must end a line; a line of one of these parameters cut by binary
 * bytes (the block structure of the file) makes the file unreadable
 * (-EBADMSG, *ret_bad_line the line), since the part beyond the cut
 * cannot be told. sid is the instance's own (a cut within its prefix is
 * recognised by it). Other lines are not parsed. 0 with *ret malloc'd,
 * -E2BIG, -ENOMEM; -EINVAL for a NUL in a text pfile.
 */
int ng_ora_params_parse(const char *buf, size_t len, bool spfile, const char *sid, struct ng_ora_param **ret,
                        size_t *ret_n, unsigned *ret_bad_line);

/* Whether a snapshot keeps the line of a parameter file: it holds the
 * beginning of one of the parameters numaguard reads, whole or cut. */
bool ng_ora_line_kept(const char *line, size_t len);

/* The parameters of one instance, as Oracle applies them: one of its SID
 * overrides one of "*", a later one of the same kind an earlier one. */
struct ng_ora_conf {
        struct {
                bool set, own;          /* own: of its SID */
                char value[64];
                char from[160];
        } use_large_pages, sga_max_size, sga_target, memory_target, memory_max_target;
};

/* Applies one parameter of the instance sid to conf (others ignored):
 * -EINVAL for a value Oracle would refuse (the conf untouched). */
int ng_ora_param_apply(struct ng_ora_conf *conf, const char *sid, const struct ng_ora_param *p, const char *from);

/* The settings conf makes (use_large_pages, the SGA size, memory_target):
 * 0, -EINVAL for a value that does not parse (error_path says which). */
int ng_ora_conf_settings(const struct ng_ora_conf *conf, struct ng_db_settings *s);

/* The value of name in a process's environment (NUL-separated
 * "NAME=value" entries), the first, as getenv(3) finds it: 0 with it in
 * out, -ENOENT when it has none, -ENAMETOOLONG when it does not fit. */
int ng_environ_get(const char *buf, size_t len, const char *name, char *out, size_t size);

#pragma GCC visibility pop

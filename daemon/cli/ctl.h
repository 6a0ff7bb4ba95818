/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared state of numaguardctl's commands. */

#include <stdbool.h>
#include <stdio.h>

#include "ng-action.h"
#include "ng-path.h"

struct ng_snapshot;
struct ng_config;

/* Exit statuses (monitoring-plugin convention, see numaguardctl(1)). */
enum {
        NG_EXIT_OK = 0,
        NG_EXIT_WARNING = 1,
        NG_EXIT_CRITICAL = 2,
        NG_EXIT_UNKNOWN = 3,    /* could not audit; also usage and I/O errors */
};

/* --color=WHEN */
enum ctl_color {
        CTL_COLOR_AUTO,         /* on a terminal, unless NO_COLOR is set */
        CTL_COLOR_ALWAYS,
        CTL_COLOR_NEVER,
};

/* What the terminals numaguardctl writes to can show (term.c). */
struct ctl_term {
        bool utf8;              /* stdout: a terminal with a UTF-8 locale: block bars */
        bool color;             /* severities in colour */
        bool progress;          /* stderr: a terminal: progress for long work */
        unsigned width;         /* stdout: a terminal this many columns wide; 0: piped, no wrapping */
};

int ctl_color_parse(const char *s, enum ctl_color *ret);
void ctl_term_init(struct ctl_term *t, enum ctl_color color);
/* A stream to use as stdout that adapts the library's text to t (ASCII bars,
 * coloured severities), writing into stdout; NULL when the text goes out as
 * it is (or on ENOMEM). fclose() it to flush. */
FILE *ctl_term_stdout(const struct ctl_term *t);

/* Progress on stderr for work that may take seconds: nothing unless stderr
 * is a terminal, and nothing for the first second; cleared when stopped.
 * NULL (no progress) is fine to pass around. */
struct ctl_progress;
struct ctl_progress *ctl_progress_start(const struct ctl_term *t, const char *what);
void ctl_progress_file(struct ctl_progress *p);
void ctl_progress_stop(struct ctl_progress *p);

#define CTL_INSTANCES_MAX 64

struct ctl_opts {
        const char *root;
        const char *output;
        const char *config;
        const char *socket;     /* status, reload: --socket PATH */
        bool json;
        bool exact;
        bool replayable;        /* exact from files only (snapshot) */
        bool verbose;           /* audit: every segment on its own line */
        bool dry_run;           /* corrections: show the writes, change nothing */
        bool persist;           /* hugepages reserve|apply: record the pools for boot too */
        const char *size;       /* hugepages reserve --size 2M|1G */
        long pages;             /* hugepages reserve --pages P (-1 unset) */
        int node;               /* --node N (-1: unset) */
        const char *command;    /* "audit", "hugepages reserve": for messages */
        const struct ctl_term *term;
        const char *nodes;      /* probe --nodes LIST */
        bool save;              /* probe --save */
        const char *instances[CTL_INSTANCES_MAX];      /* audit --instance NAME ... */
        size_t n_instances;
        char **args;            /* positional arguments after the command */
        int n_args;
};

/* The reporting commands (cmd-report.c). */
int ctl_audit(const struct ctl_opts *o);
int ctl_topology(const struct ctl_opts *o);
int ctl_segments(const struct ctl_opts *o);
int ctl_hugepages_plan(const struct ctl_opts *o);
int ctl_snapshot(const struct ctl_opts *o);
/* What a snapshot could not take, or took with a warning: the lines of its
 * NG_PATH_INCOMPLETE_FILE, "PATH<tab>WHY" (archive.c). */
struct ctl_notes {
        char *text;
        size_t len, cap;
};
/* Adds a line for the host path path. 0 or -ENOMEM. */
int ctl_note(struct ctl_notes *n, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Adds lines as they are (a newline after the last). 0 or -ENOMEM. */
int ctl_notes_append(struct ctl_notes *n, const char *text, size_t len);
void ctl_notes_done(struct ctl_notes *n);
/* The staging tree dir as a .tar.gz in out ("-": stdout), 0600, removed
 * again when it fails (archive.c); what the tree lacks, notes and the
 * entries that could not be packed, is its last entry,
 * NG_PATH_INCOMPLETE_FILE. 0, -EEXIST when out is there and not a regular
 * file or a link, or another -errno. */
int ctl_pack_tree(const char *out, const char *dir, struct ctl_notes *notes);
/* `status` and `reload`: requests to numaguardd's control socket (cmd-status.c). */
int ctl_status(const struct ctl_opts *o);
int ctl_reload(const struct ctl_opts *o);
/* `cpuset apply INSTANCE [--dry-run]` (cmd-cpuset.c). */
int ctl_cpuset(const struct ctl_opts *o);
/* `probe [--nodes LIST] [--size SIZE] [--save]` (cmd-probe.c). */
int ctl_probe(const struct ctl_opts *o);
/* `rebalance INSTANCE [--dry-run]` (cmd-rebalance.c). */
int ctl_rebalance(const struct ctl_opts *o);
/* `rehearse [INSTANCE]` (cmd-rehearse.c): the next start of each instance,
 * or of INSTANCE, predicted. Returns the exit status. */
int ctl_rehearse(const struct ctl_opts *o);
/* Prints "numaguardctl: COMMAND: what was wrong (see 'numaguardctl help
 * COMMAND')" to stderr and returns NG_EXIT_UNKNOWN: a usage error. */
int ctl_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "numaguardctl: what: strerror" to stderr and returns NG_EXIT_UNKNOWN. */
int ctl_fail(const char *what, int r);
/* The same for a failed collection, naming --root when given. */
int ctl_fail_read(const struct ctl_opts *o, int r);

struct json_object;
/* Prints o pretty and drops it; -ENOMEM when o is NULL, 0 or -errno. */
int ctl_print_json(struct json_object *o, FILE *f);
/* Renders what `topology` / `segments` print; 0 or -errno. */
int ctl_render_topology(const struct ng_snapshot *s, bool json, FILE *f);
int ctl_render_segments(const struct ng_snapshot *s, bool json, FILE *f);

/* Loads --config (or the default file, or built-in defaults when it is
 * absent); prints diagnostics with file:line. 0 or -errno. */
int ctl_load_config(const struct ctl_opts *o, struct ng_config **ret);
/* One collection for an audit under cfg (pidfiles, sampling size, --exact). */
int ctl_collect_for_audit(const struct ctl_opts *o, const struct ng_config *cfg, struct ng_snapshot **ret);
/* The same, with the path layer's recorder on (snapshot). */
int ctl_collect_for_audit_recorded(const struct ctl_opts *o, const struct ng_config *cfg,
                                   ng_path_recorder_t recorder, void *userdata, struct ng_snapshot **ret);

/* Prints every write (or "would write" in a dry run) and the outcome, logs
 * it at NOTICE unless dry-run or --root (the fields of
 * ng_correction_journal_fields; NUMAGUARD_INSTANCE is the target but for
 * hugepages, which correct the host), and returns the exit status:
 * 0 done / no-op / dry run, 1 partial, 2 refused, 3 failed. With --json,
 * instead of the text: one document (schema 1) with the action, its plan
 * (taken over; may be NULL), every write with before / asked / read back,
 * the outcome and exit status; appended to collect instead of printed when
 * collect is not NULL (rebalance: one entry per segment). */
int ctl_action_emit(const struct ctl_opts *o, enum ng_correction kind, const char *target, struct json_object *plan,
                    const struct ng_action_result *res, struct json_object *collect);
/* That entry alone (with "schema" first when with_schema); NULL on ENOMEM. */
struct json_object *ctl_action_json(const struct ctl_opts *o, enum ng_correction kind, const char *target,
                                    struct json_object *plan, const struct ng_action_result *res, bool with_schema);
/* The file a host path names: under --root, inside the tree. */
void ctl_tree_path(const struct ctl_opts *o, const char *path, char *buf, size_t size);

/* `hugepages reserve --size --pages [--node]` and `hugepages apply`
 * (cmd-hugepages.c); [--dry-run]. Return the exit status. */
int ctl_hugepages_reserve(const struct ctl_opts *o);
int ctl_hugepages_apply(const struct ctl_opts *o);

struct ng_audit;
struct ng_instance;
/* Loads the configuration, collects, audits and finds instance name; on
 * failure prints why (an unknown name lists the known ones) and returns the
 * exit status (3), else 0 with everything for the caller to free with
 * ctl_audit_done(). */
int ctl_audit_instance(const struct ctl_opts *o, const char *name, struct ng_config **ret_cfg,
                       struct ng_snapshot **ret_s, struct ng_audit **ret_a, const struct ng_instance **ret_in);
void ctl_audit_done(struct ng_config *cfg, struct ng_snapshot *s, struct ng_audit *a);

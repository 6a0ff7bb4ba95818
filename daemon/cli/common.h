/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What numaguardctl's commands share (common.c): the exit statuses, the
 * options, failing with a message, loading the configuration, collecting
 * and auditing, printing JSON. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ng-path.h"

/* Exit statuses (monitoring-plugin convention, see numaguardctl(1)). */
enum {
        NG_EXIT_OK = 0,
        NG_EXIT_WARNING = 1,
        NG_EXIT_CRITICAL = 2,
        NG_EXIT_UNKNOWN = 3,    /* could not audit; also usage and I/O errors */
};

#define CTL_INSTANCES_MAX 64

struct ctl_term;

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

struct ng_snapshot;
/* Renders what `topology` / `segments` print; 0 or -errno. */
int ctl_render_topology(const struct ng_snapshot *s, bool json, FILE *f);
int ctl_render_segments(const struct ng_snapshot *s, bool json, FILE *f);

struct ng_config;
/* Loads --config (or the default file, or built-in defaults when it is
 * absent); prints diagnostics with file:line. 0 or -errno. */
int ctl_load_config(const struct ctl_opts *o, struct ng_config **ret);
/* One collection for an audit under cfg (pidfiles, sampling size, --exact). */
int ctl_collect_for_audit(const struct ctl_opts *o, const struct ng_config *cfg, struct ng_snapshot **ret);
/* The same, with the path layer's recorder on (snapshot). */
int ctl_collect_for_audit_recorded(const struct ctl_opts *o, const struct ng_config *cfg,
                                   ng_path_recorder_t recorder, void *userdata, struct ng_snapshot **ret);

struct ng_audit;
struct ng_instance;
/* Loads the configuration, collects, audits and finds instance name; on
 * failure prints why (an unknown name lists the known ones) and returns the
 * exit status (3), else 0 with everything for the caller to free with
 * ctl_audit_done(). */
int ctl_audit_instance(const struct ctl_opts *o, const char *name, struct ng_config **ret_cfg,
                       struct ng_snapshot **ret_s, struct ng_audit **ret_a, const struct ng_instance **ret_in);
void ctl_audit_done(struct ng_config *cfg, struct ng_snapshot *s, struct ng_audit *a);

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

struct ctl_opts {
        const char *root;
        const char *output;
        const char *config;
        const char *socket;     /* status, reload: --socket PATH */
        bool json;
        bool exact;
        bool dry_run;           /* corrections: show the writes, change nothing */
        const char *size;       /* hugepages reserve --size 2M|1G */
        long pages;             /* hugepages reserve --pages P (-1 unset) */
        int node;               /* --node N (-1: unset) */
        char **args;            /* positional arguments after the command */
        int n_args;
};

int ctl_snapshot(const struct ctl_opts *o);
/* `status` and `reload`: requests to numaguardd's control socket (status.c). */
int ctl_status(const struct ctl_opts *o);
int ctl_reload(const struct ctl_opts *o);
/* `cpuset apply INSTANCE [--dry-run]` (cpuset.c). */
int ctl_cpuset(const struct ctl_opts *o);
/* `rebalance INSTANCE [--dry-run]` (rebalance.c). */
int ctl_rebalance(const struct ctl_opts *o);
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

enum ctl_action_kind {
        CTL_ACTION_CPUSET,
        CTL_ACTION_HUGEPAGES,
        CTL_ACTION_REBALANCE,
};

/* The MESSAGE_ID of a kind of correction (systemd/numaguard.catalog). */
const char *ctl_action_message_id(enum ctl_action_kind kind);
/* Prints every write (or "would write" in a dry run) and the outcome, logs
 * it at NOTICE unless dry-run or --root, and returns the exit status:
 * 0 done / no-op / dry run, 1 partial, 2 refused, 3 failed. */
int ctl_action_report(const struct ctl_opts *o, enum ctl_action_kind kind, const char *target,
                      const struct ng_action_result *res);

/* `hugepages reserve --size --pages [--node]` and `hugepages apply`
 * (hugepages.c); [--dry-run]. Return the exit status. */
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

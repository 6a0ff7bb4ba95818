/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How numaguardctl shows and logs a correction: every write with the file's
 * value before and after (or "would write" in a dry run), then one NOTICE
 * entry per action with its own MESSAGE_ID (journald, syslog without it, or
 * JSON lines to $NUMAGUARD_ACTION_LOG for tests). Paths, targets and
 * summaries name cgroups and instances that others may have named: the
 * text escapes them, the JSON keeps them UTF-8 (text.h).
 */

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "act-json.h"
#include "cleanup-json.h"
#include "cleanup.h"
#include "common.h"
#include "correction-log.h"
#include "ng-action.h"
#include "ng-correction.h"
#include "text.h"

/* Journal fields of one entry, collected before sending. */
#define MAX_FIELDS 24
#define MAX_WRITES_LOGGED 16

struct fields {
        char *kv[MAX_FIELDS];   /* "NAME=value", malloc'd */
        size_t n;
};

static void add_field(void *userdata, const char *name, const char *value)
{
        struct fields *fl = userdata;
        if (fl->n < MAX_FIELDS && asprintf(&fl->kv[fl->n], "%s=%s", name, value) >= 0)
                fl->n++;
}

static void fields_done(struct fields *fl)
{
        for (size_t i = 0; i < fl->n; i++)
                free(fl->kv[i]);
        fl->n = 0;
}

static const char *field_value(const struct fields *fl, const char *name)
{
        size_t l = strlen(name);
        for (size_t i = 0; i < fl->n; i++)
                if (strncmp(fl->kv[i], name, l) == 0 && fl->kv[i][l] == '=')
                        return fl->kv[i] + l + 1;
        return "";
}

/* One JSON object per line; a repeated name (NUMAGUARD_WRITE) becomes an
 * array. */
static void log_file(const char *path, const struct fields *fl)
{
        _cleanup_fclose_ FILE *f = fopen(path, "ae");
        _cleanup_json_ struct json_object *o = json_object_new_object();
        if (!f || !o)
                return;
        for (size_t i = 0; i < fl->n; i++) {
                const char *eq = strchr(fl->kv[i], '=');
                char key[64];
                snprintf(key, sizeof(key), "%.*s", (int) (eq - fl->kv[i]), fl->kv[i]);
                struct json_object *v = json_object_new_string(eq + 1), *prev;
                if (!strcmp(key, "NUMAGUARD_WRITE")) {
                        if (!json_object_object_get_ex(o, key, &prev)) {
                                prev = json_object_new_array();
                                json_object_object_add(o, key, prev);
                        }
                        json_object_array_add(prev, v);
                } else
                        json_object_object_add(o, key, v);
        }
        fprintf(f, "%s\n", json_object_to_json_string_ext(ng_json_utf8(o),
                                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void log_action(enum ng_correction kind, const char *instance, const char *target,
                       const struct ng_action_result *res)
{
        struct fields fl = {0};
        ng_correction_journal_fields(kind, "numaguardctl", instance, target, res, MAX_WRITES_LOGGED, add_field, &fl);
        const char *file = getenv("NUMAGUARD_ACTION_LOG");
        struct stat st;
        if (file && *file)
                log_file(file, &fl);
        else if (stat(NG_JOURNAL_SOCKET, &st) == 0) {
                struct iovec iov[MAX_FIELDS];
                for (size_t i = 0; i < fl.n; i++)
                        iov[i] = (struct iovec) { fl.kv[i], strlen(fl.kv[i]) };
                sd_journal_sendv(iov, (int) fl.n);
        } else {
                openlog("numaguardctl", LOG_PID, LOG_DAEMON);
                syslog(LOG_NOTICE, "%s", field_value(&fl, "MESSAGE"));
                closelog();
        }
        fields_done(&fl);
}

void ctl_tree_path(const struct ctl_opts *o, const char *path, char *buf, size_t size)
{
        ng_act_tree_path(o->root, path, buf, size);
}

static int outcome_exit_status(enum ng_outcome outcome)
{
        switch (outcome) {
        case NG_OUTCOME_DRY_RUN:
        case NG_OUTCOME_NOOP:
        case NG_OUTCOME_DONE:
                return NG_EXIT_OK;
        case NG_OUTCOME_PARTIAL:
                return NG_EXIT_WARNING;
        case NG_OUTCOME_REFUSED:
                return NG_EXIT_CRITICAL;
        default:
                return NG_EXIT_UNKNOWN;
        }
}

struct json_object *ctl_action_json(const struct ctl_opts *o, enum ng_correction kind, const char *target,
                                    struct json_object *plan, const struct ng_action_result *res, bool with_schema)
{
        return ng_act_outcome_json(kind, target, o->dry_run, o->root, plan, res, outcome_exit_status(res->outcome),
                                   with_schema);
}

/* ctl_tree_path, escaped for the terminal. */
static void tree_path_text(const struct ctl_opts *o, const char *path, char *buf, size_t size)
{
        char raw[PATH_MAX + 256];
        ctl_tree_path(o, path, raw, sizeof(raw));
        ng_text_escape(NG_TEXT_TERM, raw, buf, size);
}

/* A unit property ("set AllowedMemoryNodes=0 on UNIT") or a config file
 * line ("change FILE:LINE from ... to ..."). Under --root the file is the
 * tree's copy, named as written, then as the tree's host names it. */
static void print_owner_write(const struct ctl_opts *o, const struct ng_write *w, bool dry)
{
        char path[PATH_MAX + 256], in_tree[PATH_MAX + 300] = "";
        _cleanup_free_ char *name = ng_text_dup(NG_TEXT_TERM, w->path);
        if (w->kind == NG_WRITE_UNIT_PROPERTY) {
                /* NUMAPolicy= is the service's start, not its cgroup's: a drop-in */
                bool start = !strncmp(w->value, "NUMAPolicy=", 11);
                printf("%s %s on systemd unit %s (%s; %s: %s%s%s)\n",
                       dry ? "would set" : w->error < 0 ? "failed to set" : "set", w->value, name ? name : "?",
                       start ? "for its next start, in numaguard's drop-in, then daemon-reload"
                             : "runtime and persistent, as systemctl set-property",
                       dry ? "now" : "was", w->before, dry ? "" : ", read back: ", dry ? "" : w->after);
                return;
        }
        if (w->kind == NG_WRITE_SEGMENT_POLICY) {
                printf("%s policy %s on %s, which its new pages follow (%s: %s%s%s)\n",
                       dry ? "would install" : w->error < 0 ? "failed to install" : "installed", w->value,
                       name ? name : "?", dry ? "now" : "was", w->before, dry ? "" : ", read back: ",
                       dry ? "" : w->after);
                return;
        }
        tree_path_text(o, w->path, path, sizeof(path));
        if (o->root)
                snprintf(in_tree, sizeof(in_tree), " (the tree's %s)", name ? name : "?");
        if (!w->before[0])
                printf("%s line to %s%s: %s%s%s%s\n", dry ? "would add a" : "added a", path, in_tree, w->value,
                       dry ? "" : " (read back: ", dry ? "" : w->after[0] ? w->after : "-", dry ? "" : ")");
        else
                printf("%s %s%s\n  from: %s\n    to: %s\n", dry ? "would change" : "changed", path, in_tree, w->before,
                       w->value);
}

static void report_text(const struct ctl_opts *o, enum ng_correction kind, const char *target,
                        const struct ng_action_result *res)
{
        bool dry = res->outcome == NG_OUTCOME_DRY_RUN;
        char path[PATH_MAX + 256];
        for (size_t i = 0; i < res->n_writes; i++) {
                const struct ng_write *w = &res->writes[i];
                if (w->kind != NG_WRITE_FILE) {
                        print_owner_write(o, w, dry || o->dry_run);
                        continue;
                }
                tree_path_text(o, w->path, path, sizeof(path));
                if (dry)
                        printf("would write %s to %s (now: %s)\n", w->value, path, w->before[0] ? w->before : "-");
                else if (w->error < 0)
                        fprintf(stderr, "write %s to %s failed: %s (read back: %s)\n", w->value, path,
                                strerror(-w->error), w->after[0] ? w->after : "-");
                else
                        printf("wrote %s to %s (was: %s, read back: %s)\n", w->value, path,
                               w->before[0] ? w->before : "-", w->after[0] ? w->after : "-");
        }
        if (res->check[0] && !res->check_refused) {
                _cleanup_free_ char *check = ng_text_dup(NG_TEXT_TERM, res->check);
                printf("check: %s\n", check ? check : "?");
        }
        _cleanup_free_ char *t = ng_text_dup(NG_TEXT_TERM, target), *summary = ng_text_dup(NG_TEXT_TERM, res->summary);
        /* What was done goes to stdout; a refusal or a failure is an error. */
        bool error = res->outcome == NG_OUTCOME_REFUSED || res->outcome == NG_OUTCOME_TRANSIENT ||
                     res->outcome == NG_OUTCOME_PERMANENT;
        fflush(stdout);         /* the writes before it, in order on a shared terminal */
        fprintf(error ? stderr : stdout, "%s %s: %s: %s\n", ng_correction_kind(kind)->name, t ? t : "?",
                ng_outcome_name(res->outcome), summary ? summary : "?");
}

int ctl_action_emit(const struct ctl_opts *o, enum ng_correction kind, const char *target, struct json_object *plan,
                    const struct ng_action_result *res, struct json_object *collect)
{
        bool dry = res->outcome == NG_OUTCOME_DRY_RUN;
        int status = outcome_exit_status(res->outcome);
        if (o->json) {
                struct json_object *j = ctl_action_json(o, kind, target, plan, res, !collect);
                if (collect)
                        json_object_array_add(collect, j);
                else if (ctl_print_json(j, stdout) < 0)
                        status = ctl_fail("writing output", -EIO);
        } else {
                json_object_put(plan);
                report_text(o, kind, target, res);
        }
        /* A dry run changes nothing, whatever it found: nothing to log. */
        if (!dry && !o->dry_run && !o->root)
                log_action(kind, kind == NG_CORRECTION_HUGEPAGES ? NULL : target, target, res);
        return status;
}

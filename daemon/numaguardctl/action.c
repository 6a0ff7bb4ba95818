/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How numaguardctl shows and logs a correction: every write with the file's
 * value before and after (or "would write" in a dry run), then one NOTICE
 * entry per action with its own MESSAGE_ID (journald, syslog without it, or
 * JSON lines to $NUMAGUARD_ACTION_LOG for tests).
 */

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "ctl.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

const char *ctl_action_message_id(enum ctl_action_kind kind)
{
        switch (kind) {
        case CTL_ACTION_CPUSET: return NG_MSGID_ACTION_CPUSET;
        case CTL_ACTION_HUGEPAGES: return NG_MSGID_ACTION_HUGEPAGES;
        case CTL_ACTION_REBALANCE: return NG_MSGID_ACTION_REBALANCE;
        }
        return "";
}

static const char *kind_name(enum ctl_action_kind kind)
{
        switch (kind) {
        case CTL_ACTION_CPUSET: return "cpuset";
        case CTL_ACTION_HUGEPAGES: return "hugepages";
        case CTL_ACTION_REBALANCE: return "rebalance";
        }
        return "action";
}

static void log_file(const char *path, enum ctl_action_kind kind, const char *target, const char *msg,
                     const struct ng_action_result *res)
{
        FILE *f = fopen(path, "ae");
        struct json_object *o = json_object_new_object(), *w = json_object_new_array();
        if (!f || !o || !w) {
                if (f)
                        fclose(f);
                json_object_put(o);
                json_object_put(w);
                return;
        }
        json_object_object_add(o, "MESSAGE", json_object_new_string(msg));
        json_object_object_add(o, "MESSAGE_ID", json_object_new_string(ctl_action_message_id(kind)));
        json_object_object_add(o, "PRIORITY", json_object_new_int(LOG_NOTICE));
        json_object_object_add(o, "NUMAGUARD_ACTION", json_object_new_string(kind_name(kind)));
        json_object_object_add(o, "NUMAGUARD_TARGET", json_object_new_string(target));
        json_object_object_add(o, "NUMAGUARD_OUTCOME", json_object_new_string(ng_outcome_name(res->outcome)));
        for (size_t i = 0; i < res->n_writes; i++)
                json_object_array_add(w, json_object_new_string(res->writes[i].path));
        json_object_object_add(o, "NUMAGUARD_WRITES", w);
        fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        fclose(f);
        json_object_put(o);
}

static void log_action(enum ctl_action_kind kind, const char *target, const struct ng_action_result *res)
{
        char msg[768];
        snprintf(msg, sizeof(msg), "%s %s: %s: %s", kind_name(kind), target, ng_outcome_name(res->outcome),
                 res->summary);
        const char *file = getenv("NUMAGUARD_ACTION_LOG");
        struct stat st;
        if (file && *file)
                log_file(file, kind, target, msg, res);
        else if (stat(JOURNAL_SOCKET, &st) == 0)
                sd_journal_send("MESSAGE=%s", msg, "MESSAGE_ID=%s", ctl_action_message_id(kind),
                                "PRIORITY=%d", LOG_NOTICE, "SYSLOG_IDENTIFIER=numaguardctl",
                                "NUMAGUARD_ACTION=%s", kind_name(kind), "NUMAGUARD_TARGET=%s", target,
                                "NUMAGUARD_OUTCOME=%s", ng_outcome_name(res->outcome),
                                "NUMAGUARD_WRITES=%zu", res->n_writes, NULL);
        else {
                openlog("numaguardctl", LOG_PID, LOG_DAEMON);
                syslog(LOG_NOTICE, "%s", msg);
                closelog();
        }
}

int ctl_action_report(const struct ctl_opts *o, enum ctl_action_kind kind, const char *target,
                      const struct ng_action_result *res)
{
        bool dry = res->outcome == NG_OUTCOME_DRY_RUN;
        for (size_t i = 0; i < res->n_writes; i++) {
                const struct ng_write *w = &res->writes[i];
                if (dry)
                        printf("would write %s to %s (now: %s)\n", w->value, w->path, w->before[0] ? w->before : "-");
                else if (w->error < 0)
                        printf("write %s to %s failed: %s (read back: %s)\n", w->value, w->path, strerror(-w->error),
                               w->after[0] ? w->after : "-");
                else
                        printf("wrote %s to %s (was: %s, read back: %s)\n", w->value, w->path,
                               w->before[0] ? w->before : "-", w->after[0] ? w->after : "-");
        }
        printf("%s %s: %s: %s\n", kind_name(kind), target, ng_outcome_name(res->outcome), res->summary);
        /* A dry run changes nothing, whatever it found: nothing to log. */
        if (!dry && !o->dry_run && !o->root)
                log_action(kind, target, res);
        switch (res->outcome) {
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

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Alert sinks. journald gets structured entries: a fixed MESSAGE_ID per
 * finding code (systemd/numaguard.catalog explains each one to
 * `journalctl -x`) and NUMAGUARD_* fields to filter on. Without journald the
 * same event becomes one syslog line. The file sink writes the journal's
 * fields as one JSON object per line, for tests on hosts without journald.
 * journald and syslog stand in for each other: an alert the primary does
 * not take goes to the other, then to standard error, and the change is
 * said once (health[]: status, numaguard_alert_sink_up).
 *
 * Names in an alert are chosen by others (text.h): MESSAGE, which
 * journalctl, syslog and terminals show, is escaped; the NUMAGUARD_* fields
 * keep the bytes (sd_journal_sendv() sends a field with a newline in it as
 * binary, whole), except in the file sink's JSON, which must be UTF-8.
 */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "alerts.h"
#include "log.h"
#include "ng-action.h"
#include "ng-codes.h"
#include "ng-correction.h"
#include "ng-snapshot.h"
#include "sink.h"
#include "syslog.h"
#include "text.h"
#include "util.h"

#define MAX_FIELDS 20
/* NUMAGUARD_WRITE fields of a correction, at most. */
#define MAX_WRITES_LOGGED 6

/* Raised findings have their code's ID (ng-codes.h); keep in step with
 * systemd/numaguard.catalog, never change an ID. */
#define CLEARED_ID "4491951522f942d38dd118ae985ee4f0"
/* MESSAGE_ID and NUMAGUARD_EVENT of the daemon's own events, in
 * enum daemon_event order (systemd/numaguard.catalog). */
static const struct {
        const char *message_id, *name;
} daemon_events[] = {
        [DAEMON_EVENT_RELOAD_FAILED] = { "3b5b3cc2892c4d27a840cdf367b9cd23", "reload_failed" },
        [DAEMON_EVENT_POLL_FAILED] = { "885c5dd9fafb4519a7853ed8fd25f888", "poll_failed" },
        [DAEMON_EVENT_POLL_STUCK] = { "cec973d627a34add8c462e8b3a1dec34", "poll_stuck" },
};

struct fields {
        char kv[MAX_FIELDS][640];
        size_t n;
};

static void field(struct fields *fl, const char *key, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void field(struct fields *fl, const char *key, const char *fmt, ...)
{
        if (fl->n == MAX_FIELDS)
                return;
        char *p = fl->kv[fl->n++];
        int k = snprintf(p, sizeof(fl->kv[0]), "%s=", key);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p + k, sizeof(fl->kv[0]) - (size_t) k, fmt, ap);
        va_end(ap);
}

/* MESSAGE=, formatted whole and then escaped, so that a cut falls between
 * characters. */
static void message(struct fields *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void message(struct fields *fl, const char *fmt, ...)
{
        char raw[2048];
        static const char key[] = "MESSAGE=";
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof(raw), fmt, ap);
        va_end(ap);
        if (fl->n == MAX_FIELDS)
                return;
        char *p = fl->kv[fl->n++];
        memcpy(p, key, sizeof(key) - 1);
        ng_text_escape(NG_TEXT_TERM, raw, p + sizeof(key) - 1, sizeof(fl->kv[0]) - (sizeof(key) - 1));
}

static const char *field_value(const struct fields *fl, const char *key)
{
        size_t kl = strlen(key);
        for (size_t i = 0; i < fl->n; i++)
                if (!strncmp(fl->kv[i], key, kl) && fl->kv[i][kl] == '=')
                        return fl->kv[i] + kl + 1;
        return "";
}

const char *sink_message_id(enum alert_event_kind kind, enum ng_code code)
{
        if (kind == ALERT_EVENT_CLEARED)
                return CLEARED_ID;
        const struct ng_code_info *c = ng_code_info(code);
        return c ? c->message_id : CLEARED_ID;
}

const char *sink_kind_name(enum sink_kind kind)
{
        return kind == SINK_JOURNAL ? "journal" : kind == SINK_SYSLOG ? "syslog" : "file";
}

const char *sink_kind_path(enum sink_kind kind)
{
        return kind == SINK_JOURNAL ? NG_JOURNAL_SOCKET : kind == SINK_SYSLOG ? SYSLOG_SOCKET : "the file";
}

int sink_open(struct alert_sink *s, const char *path)
{
        *s = (struct alert_sink) { .kind = SINK_JOURNAL, .syslog.fd = -1 };
        if (path) {
                s->file = fopen(path, "ae");
                if (!s->file)
                        return -errno;
                s->kind = SINK_FILE;
                s->health[SINK_FILE] = (struct sink_health) { .used = true, .up = true };
                return 0;
        }
        int jr = access(NG_JOURNAL_SOCKET, W_OK) < 0 ? -errno : 0;
        int sr = syslog_connect(&s->syslog);
        s->health[SINK_JOURNAL] = (struct sink_health) { .used = true, .up = jr >= 0, .error = jr };
        s->health[SINK_SYSLOG] = (struct sink_health) { .used = true, .up = sr >= 0, .error = sr };
        if (jr < 0)
                s->kind = SINK_SYSLOG;
        if (sr < 0 && jr < 0)
                log_warning("Alerts cannot reach syslog (%s: %s) nor the journal (%s: %s): they go to standard "
                            "error", SYSLOG_SOCKET, strerror(-sr), NG_JOURNAL_SOCKET, strerror(-jr));
        else if (sr < 0 && s->kind == SINK_SYSLOG)
                log_warning("Alerts cannot reach syslog (%s: %s): they go to the journal", SYSLOG_SOCKET,
                            strerror(-sr));
        return 0;
}

void sink_close(struct alert_sink *s)
{
        if (s->file)
                fclose(s->file);
        syslog_disconnect(&s->syslog);
        *s = (struct alert_sink) { .syslog.fd = -1 };
}

const char *sink_name(const struct alert_sink *s)
{
        return sink_kind_name(s->kind);
}

const char *sink_route(const struct alert_sink *s)
{
        if (s->kind == SINK_FILE)
                return "file";
        bool journal = s->health[SINK_JOURNAL].up, syslog = s->health[SINK_SYSLOG].up;
        if (journal && syslog)
                return "journal (syslog as fallback)";
        if (journal)
                return "journal (syslog down)";
        if (syslog)
                return "syslog (journal down)";
        return "standard error (syslog and journal down)";
}

static void send_file(FILE *f, const struct fields *fl)
{
        struct json_object *o = json_object_new_object();
        if (!o)
                return;
        for (size_t i = 0; i < fl->n; i++) {
                const char *eq = strchr(fl->kv[i], '=');
                char key[64];
                snprintf(key, sizeof(key), "%.*s", (int) (eq - fl->kv[i]), fl->kv[i]);
                json_object_object_add(o, key, json_object_new_string(eq + 1));
        }
        fprintf(f, "%s\n", json_object_to_json_string_ext(ng_json_utf8(o), JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        fflush(f);
        json_object_put(o);
}

static int deliver(struct alert_sink *s, enum sink_kind kind, int priority, const struct fields *fl)
{
        switch (kind) {
        case SINK_JOURNAL: {
                /* sd_journal_sendv() says nothing of a missing socket
                 * (ENOENT is success to it): asked here. */
                if (access(NG_JOURNAL_SOCKET, W_OK) < 0)
                        return -errno;
                struct iovec iov[MAX_FIELDS];
                for (size_t i = 0; i < fl->n; i++)
                        iov[i] = (struct iovec) { (void *) fl->kv[i], strlen(fl->kv[i]) };
                return sd_journal_sendv(iov, (int) fl->n);
        }
        case SINK_SYSLOG:
                return syslog_send(&s->syslog, priority, field_value(fl, "MESSAGE"));
        default:
                send_file(s->file, fl);
                return ferror(s->file) ? -EIO : 0;
        }
}

/* Notes how a delivery went; a sink that stops or starts delivering is
 * said once, at the change. */
static void note(struct alert_sink *s, enum sink_kind kind, int r, const char *then)
{
        struct sink_health *h = &s->health[kind];
        bool was = h->up;
        h->used = true;
        h->up = r >= 0;
        h->error = r < 0 ? r : 0;
        h->failures += r < 0;
        if (was && r < 0)
                log_warning("Alerts to %s fail (%s: %s): %s", sink_kind_name(kind), sink_kind_path(kind), strerror(-r),
                            then);
        else if (!was && r >= 0)
                log_notice("Alerts to %s are delivered again", sink_kind_name(kind));
}

/* The primary, else the other of journal and syslog, else stderr: an alert
 * is never lost without a word. */
static void send_fields(struct alert_sink *s, int priority, const struct fields *fl)
{
        enum sink_kind other = s->kind == SINK_JOURNAL ? SINK_SYSLOG : SINK_JOURNAL;
        int r = deliver(s, s->kind, priority, fl);
        if (s->kind == SINK_FILE) {
                note(s, SINK_FILE, r, "alerts go to standard error");
        } else {
                note(s, s->kind, r, other == SINK_JOURNAL ? "sending them to the journal" : "sending them to syslog");
                if (r < 0) {
                        r = deliver(s, other, priority, fl);
                        note(s, other, r, "alerts go to standard error");
                }
        }
        if (r < 0) {
                s->lost++;
                log_full(priority, 0, "alert: %s", field_value(fl, "MESSAGE"));
        }
}

static int alert_priority(enum alert_event_kind kind, enum ng_severity sev)
{
        if (kind == ALERT_EVENT_CLEARED)
                return LOG_NOTICE;
        return sev == NG_SEV_CRITICAL ? LOG_CRIT : sev == NG_SEV_WARNING ? LOG_WARNING : LOG_INFO;
}

/* The instance's container, where it runs in one: journalctl
 * NUMAGUARD_CONTAINER=pg-main finds its alerts. */
static void container_fields(struct fields *fl, const struct ng_container *ct)
{
        if (!ct->id[0])
                return;
        field(fl, "NUMAGUARD_CONTAINER_ID", "%s", ct->id);
        if (ct->runtime[0])
                field(fl, "NUMAGUARD_CONTAINER_RUNTIME", "%s", ct->runtime);
        if (ct->name[0])
                field(fl, "NUMAGUARD_CONTAINER", "%s", ct->name);
        if (ct->pod_uid[0])
                field(fl, "NUMAGUARD_POD_UID", "%s", ct->pod_uid);
        if (ct->pod[0])
                field(fl, "NUMAGUARD_POD", "%s", ct->pod);
        if (ct->pod_namespace[0])
                field(fl, "NUMAGUARD_POD_NAMESPACE", "%s", ct->pod_namespace);
}

void sink_emit(void *userdata, enum alert_event_kind kind, const struct alert *a)
{
        struct alert_sink *s = userdata;
        struct fields fl = {0};
        char nodes[256];
        int prio = alert_priority(kind, a->severity);
        const char *code = ng_code_name(a->code);
        const char *inst = a->instance[0] ? a->instance : "host";

        alert_nodes_format(&a->nodes, nodes, sizeof(nodes));
        if (kind == ALERT_EVENT_RAISED)
                message(&fl, "%s raised (%s, %s%s): %s", code, inst,
                        nodes[0] ? "nodes " : "no node", nodes, a->message);
        else
                message(&fl, "%s cleared (%s, %s%s) after %" PRIu64 " s", code, inst,
                        nodes[0] ? "nodes " : "no node", nodes, (a->cleared_usec - a->raised_usec) / USEC_PER_SEC);
        field(&fl, "MESSAGE_ID", "%s", sink_message_id(kind, a->code));
        field(&fl, "PRIORITY", "%d", prio);
        field(&fl, "SYSLOG_IDENTIFIER", "numaguardd");
        field(&fl, "NUMAGUARD_EVENT", "%s", kind == ALERT_EVENT_RAISED ? "raised" : "cleared");
        field(&fl, "NUMAGUARD_CODE", "%s", code);
        field(&fl, "NUMAGUARD_INSTANCE", "%s", a->instance);
        field(&fl, "NUMAGUARD_NODES", "%s", nodes);
        field(&fl, "NUMAGUARD_SEVERITY", "%s", ng_severity_name(a->severity));
        field(&fl, "NUMAGUARD_VALUE", "%.6g", a->value);
        if (a->segment[0])
                field(&fl, "NUMAGUARD_SEGMENT", "%s", a->segment);
        field(&fl, "NUMAGUARD_DETAIL", "%s", a->message);
        if (a->advice[0])
                field(&fl, "NUMAGUARD_ADVICE", "%s", a->advice);
        container_fields(&fl, &a->container);
        field(&fl, "NUMAGUARD_RAISED_USEC", "%" PRIu64, a->raised_usec);
        if (kind == ALERT_EVENT_CLEARED)
                field(&fl, "NUMAGUARD_CLEARED_USEC", "%" PRIu64, a->cleared_usec);
        send_fields(s, prio, &fl);
}

static void add_field(void *userdata, const char *name, const char *value)
{
        field(userdata, name, "%s", value);
}

void sink_action(struct alert_sink *s, enum ng_correction kind, const char *instance,
                 const struct ng_action_result *res)
{
        struct fields fl = {0};
        ng_correction_journal_fields(kind, "numaguardd", instance, instance, res, MAX_WRITES_LOGGED, add_field, &fl);
        send_fields(s, LOG_NOTICE, &fl);
}

void sink_daemon_event(struct alert_sink *s, enum daemon_event ev, int priority,
                       const char *fmt, ...)
{
        struct fields fl = {0};
        char msg[600];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        message(&fl, "%s", msg);
        field(&fl, "MESSAGE_ID", "%s", daemon_events[ev].message_id);
        field(&fl, "PRIORITY", "%d", priority);
        field(&fl, "SYSLOG_IDENTIFIER", "numaguardd");
        field(&fl, "NUMAGUARD_EVENT", "%s", daemon_events[ev].name);
        send_fields(s, priority, &fl);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Where alerts go (sink.c): journald, syslog or a JSON-lines file, and
 * whether each delivers. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "alerts.h"
#include "ng-codes.h"
#include "ng-correction.h"
#include "syslog.h"

enum sink_kind {
        SINK_JOURNAL,
        SINK_SYSLOG,
        SINK_FILE,      /* JSON lines with the journal's fields: tests, debugging */
        SINK_KINDS_
};

/* Whether a sink delivers: status and numaguard_alert_sink_up. */
struct sink_health {
        bool used;              /* the sink or the fallback of the journal/syslog pair */
        bool up;                /* the last delivery (before any, the check at start) worked */
        int error;              /* -errno of the last failure, 0 */
        uint64_t failures;      /* deliveries that failed */
};

struct alert_sink {
        enum sink_kind kind;    /* the primary */
        FILE *file;
        struct syslog_conn syslog;
        struct sink_health health[SINK_KINDS_];
        uint64_t lost;          /* alerts no sink took: written to stderr */
};

/* path non-NULL: SINK_FILE appending to path; otherwise the journal when
 * /run/systemd/journal/socket exists, syslog when it does not, each the
 * other's fallback (then standard error). Says once at start when the
 * primary cannot be reached. */
int sink_open(struct alert_sink *s, const char *path);
void sink_close(struct alert_sink *s);
const char *sink_name(const struct alert_sink *s);
/* Where alerts go as sink_open() found the sinks, for the start-up line:
 * the primary and its fallback, the one of them that is down, or standard
 * error when both are ("file" for SINK_FILE). */
const char *sink_route(const struct alert_sink *s);
const char *sink_kind_name(enum sink_kind kind);
/* The socket a sink writes to ("/dev/log"), "the file" for SINK_FILE. */
const char *sink_kind_path(enum sink_kind kind);
void sink_emit(void *userdata, enum alert_event_kind kind, const struct alert *a);
/* The fixed MESSAGE_ID of an event (systemd/numaguard.catalog), 32 hex. */
const char *sink_message_id(enum alert_event_kind kind, enum ng_code code);
/* Daemon events that have catalog entries of their own. */
enum daemon_event {
        DAEMON_EVENT_RELOAD_FAILED,
        DAEMON_EVENT_POLL_FAILED,
        DAEMON_EVENT_POLL_STUCK,
};
struct ng_action_result;
/* One correction carried out by the daemon: NOTICE with its MESSAGE_ID. */
void sink_action(struct alert_sink *s, enum ng_correction kind, const char *instance,
                 const struct ng_action_result *res);
void sink_daemon_event(struct alert_sink *s, enum daemon_event ev, int priority,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

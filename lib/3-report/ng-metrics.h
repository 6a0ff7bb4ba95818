/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fleet metrics: a snapshot and its audit rendered as Prometheus text
 * exposition format (node_exporter's textfile collector). Pure: no I/O but
 * the FILE it writes to. Every metric name starts with "numaguard_"; names
 * and labels are a stable interface (numaguardd(8), METRICS).
 */

#include <stdint.h>
#include <stdio.h>

#include "ng-audit.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the caller knows about the poll beyond the snapshot's own cost. */
struct ng_metrics_poll {
        uint64_t timestamp_usec;        /* CLOCK_REALTIME, end of the poll */
        uint64_t duration_usec;         /* wall time: collect + audit + alerts */
        uint64_t cpu_usec;              /* CPU time of the same */
        uint64_t polls_total, poll_failures_total;
        uint64_t alerts_raised_total, alerts_cleared_total;
        uint64_t alerts_active;
        /* The collection in flight, when it has read nothing for longer
         * than stuck_after (numaguard.conf(5)); 0 otherwise. */
        uint64_t stalled_usec;
        uint64_t polls_stuck_total;
        /* The last poll's process picture (see ng_picture_new). */
        bool full_scan;
        bool process_events;
        bool listing_skipped;
        uint64_t procs_held;
        /* Processes mapping a segment, whose CPU time prices weigh; of
         * them, those whose stat and threads the last poll read; each is
         * read at least once in cpu_read_every polls (attacher_read_budget). */
        uint64_t cpu_holders, cpu_reads;
        unsigned cpu_read_every;
};

/* Writes the exposition text. a may be NULL (then no instance or finding
 * series). Returns 0, -ENOMEM or -EIO. */
int ng_metrics_render(const struct ng_snapshot *s, const struct ng_audit *a,
                      const struct ng_metrics_poll *p, FILE *f);

/* The exposition text's head of family numaguard_NAME: its HELP and its
 * TYPE (gauge, counter). Every family numaguard writes, the library's and
 * numaguardd's own, begins here. */
void ng_metrics_family(FILE *f, const char *name, const char *type, const char *help);
/* A gauge family numaguard_NAME of one series without labels, in seconds
 * from usec, exact to the microsecond. */
void ng_metrics_seconds(FILE *f, const char *name, const char *help, uint64_t usec);

/* Escapes a label value into buf: backslash, double quote and newline as
 * the exposition format says, and each byte that is not valid UTF-8 as
 * U+FFFD (label values must be UTF-8). A buf of 4 times the length of v
 * plus one always holds the whole value; a shorter one holds whole
 * characters. */
void ng_metrics_escape(const char *v, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

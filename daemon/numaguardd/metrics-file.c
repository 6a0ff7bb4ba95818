/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics file for node_exporter's textfile collector. Written to a
 * temporary file in the same directory and renamed over the old one, so the
 * collector never reads half a file; the temporary name does not end in
 * ".prom", so the collector never picks it up either.
 *
 * A running daemon writes numaguard_up 1 with every poll. One stopped on
 * purpose (SIGTERM, SIGINT: systemctl stop) replaces the file with one that
 * says so, numaguard_up 0 and when; the series of the last poll go, since
 * nobody watches them any more. A daemon that dies leaves its last file
 * behind, numaguard_up 1 and a last poll that grows old: the NumaguardDown
 * rule (conf/numaguard.rules.yml) fires on that one only. A one-off run
 * (--once) writes its poll with numaguard_up 0: nothing polls after it.
 * Every file says which build wrote it (numaguard_build_info).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alerts.h"
#include "cleanup.h"
#include "enforce.h"
#include "manager.h"
#include "metrics-file.h"
#include "ng-action.h"
#include "ng-correction.h"
#include "ng-metrics.h"
#include "poll.h"
#include "sink.h"
#include "util.h"

static void fill_poll(const struct manager *m, struct ng_metrics_poll *p)
{
        *p = (struct ng_metrics_poll) {
                .timestamp_usec = m->last_poll_usec,
                .duration_usec = m->last_poll_wall_usec,
                .cpu_usec = m->last_poll_cpu_usec,
                .polls_total = m->polls,
                .poll_failures_total = m->poll_failures,
                .alerts_raised_total = m->alerts.raised_total,
                .alerts_cleared_total = m->alerts.cleared_total,
                .alerts_active = alerts_active(&m->alerts),
                .stalled_usec = m->job.stuck_reported ? manager_stalled_usec(m) : 0,
                .polls_stuck_total = m->polls_stuck,
                .full_scan = m->last_picture.full,
                .process_events = m->last_picture.events,
                .listing_skipped = m->last_picture.listing_skipped,
                .procs_held = m->last_picture.procs,
                .cpu_holders = m->last_picture.cpu_holders,
                .cpu_reads = m->last_picture.cpu_reads,
                .cpu_read_every = m->last_picture.cpu_read_every,
        };
}

/* The daemon's own series, after the library's: whether each alert sink
 * delivers (numaguardd(8), METRICS). */
static void sink_metrics(const struct alert_sink *s, FILE *f)
{
        ng_metrics_family(f, "alert_sink_up", "gauge", "1 when the alert sink took the last alert sent to it (before "
                          "any, could be reached at start), 0 when not.");
        for (int k = 0; k < SINK_KINDS_; k++)
                if (s->health[k].used)
                        fprintf(f, "numaguard_alert_sink_up{sink=\"%s\"} %d\n", sink_kind_name((enum sink_kind) k),
                                s->health[k].up);
        ng_metrics_family(f, "alert_sink_failures_total", "counter", "Alerts the sink did not take.");
        for (int k = 0; k < SINK_KINDS_; k++)
                if (s->health[k].used)
                        fprintf(f, "numaguard_alert_sink_failures_total{sink=\"%s\"} %" PRIu64 "\n",
                                sink_kind_name((enum sink_kind) k), s->health[k].failures);
        ng_metrics_family(f, "alerts_lost_total", "counter", "Alerts no sink took, written to standard error only.");
        fprintf(f, "numaguard_alerts_lost_total %" PRIu64 "\n", s->lost);
}

/* What enforce mode did: every correction tried, by kind and outcome, and
 * those the hugepage reservation check refused (a write that would have
 * left a reservation short of free pages: SIGBUS at the next first touch). */
static void enforce_metrics(const struct enforce_table *e, FILE *f)
{
        ng_metrics_family(f, "corrections_total", "counter",
                          "Corrections numaguardd tried in enforce mode, by kind and outcome.");
        for (int k = 0; k < NG_CORRECTION_MAX_; k++)
                for (int o = 0; o <= NG_OUTCOME_PERMANENT; o++)
                        if (e->outcomes[k][o])
                                fprintf(f, "numaguard_corrections_total{kind=\"%s\",outcome=\"%s\"} %" PRIu64 "\n",
                                        ng_correction_kind((enum ng_correction) k)->name,
                                        ng_outcome_name((enum ng_outcome) o), e->outcomes[k][o]);
        ng_metrics_family(f, "corrections_refused_hugepage_check_total", "counter",
                          "Corrections the hugepage reservation check refused: the write would have left reserved "
                          "hugepages without free pages on the nodes allowed (SIGBUS at the next first touch).");
        for (int k = 0; k < NG_CORRECTION_MAX_; k++)
                fprintf(f, "numaguard_corrections_refused_hugepage_check_total{kind=\"%s\"} %" PRIu64 "\n",
                        ng_correction_kind((enum ng_correction) k)->name, e->check_refused[k]);
}

static void up(FILE *f, bool running)
{
        ng_metrics_family(f, "up", "gauge", "1 while numaguardd runs; 0 once it stopped on purpose (SIGTERM, systemctl stop) or "
               "after a one-off poll (--once).");
        fprintf(f, "numaguard_up %d\n", running);
        ng_metrics_family(f, "build_info", "gauge", "Always 1; its version label is the numaguardd that wrote this file.");
        fprintf(f, "numaguard_build_info{version=\"%s\"} 1\n", NG_VERSION);
}

/* The running daemon's file: up, then the last poll. */
static int render_poll(const struct manager *m, FILE *f)
{
        struct ng_metrics_poll p;
        fill_poll(m, &p);
        up(f, !m->opts.once);
        int r = ng_metrics_render(m->snapshot, m->audit, &p, f);
        if (r >= 0) {
                sink_metrics(&m->sink, f);
                enforce_metrics(&m->enforce, f);
        }
        return r;
}

/* The file a clean stop leaves: down on purpose, since when, and when the
 * last poll was (absent if none finished). */
static int render_stopped(const struct manager *m, FILE *f)
{
        up(f, false);
        ng_metrics_seconds(f, "stopped_timestamp_seconds", "When numaguardd stopped on purpose (Unix time).",
                now_usec(CLOCK_REALTIME));
        if (m->last_poll_usec)
                ng_metrics_seconds(f, "last_poll_timestamp_seconds", "End of the last poll (Unix time).", m->last_poll_usec);
        return ferror(f) ? -EIO : 0;
}

/* Renders into a temporary file beside path and renames it over path. */
static int write_atomic(const struct manager *m, const char *path, int (*render)(const struct manager *, FILE *))
{
        size_t len = strlen(path);
        _cleanup_free_ char *tmp = malloc(len + 8);
        if (!tmp)
                return -ENOMEM;
        memcpy(tmp, path, len);
        memcpy(tmp + len, ".XXXXXX", 8);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        FILE *f = fdopen(fd, "w");
        if (!f) {
                int r = -errno;
                close(fd);
                unlink(tmp);
                return r;
        }
        int r = fchmod(fd, 0644) < 0 ? -errno : 0;
        if (r >= 0)
                r = render(m, f);
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        return r;
}

int metrics_write(const struct manager *m, const char *path)
{
        if (!path || !path[0] || !m->snapshot)
                return 0;
        return write_atomic(m, path, render_poll);
}

int metrics_write_stopped(const struct manager *m, const char *path)
{
        if (!path || !path[0])
                return 0;
        return write_atomic(m, path, render_stopped);
}

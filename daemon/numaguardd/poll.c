/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One poll: collect (on the worker thread, or here), then audit, alerts,
 * metrics and the status line on the loop's thread. manager.c runs the loop
 * and its sources.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "alerts.h"
#include "cleanup.h"
#include "enforce.h"
#include "log.h"
#include "manager.h"
#include "metrics-file.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "poll.h"
#include "sink.h"
#include "util.h"

void manager_notify_status(struct manager *m)
{
        char st[256];
        if (m->snapshot)
                snprintf(st, sizeof(st), "STATUS=Poll %" PRIu64 ": %zu finding(s), %zu alert(s) active, %.1f ms",
                         m->polls, m->audit ? m->audit->n_findings : 0, alerts_active(&m->alerts),
                         (double) m->last_poll_wall_usec / 1000.0);
        else
                snprintf(st, sizeof(st), "STATUS=No successful poll yet%s%s",
                         m->last_poll_error ? ": " : "", m->last_poll_error ? strerror(-m->last_poll_error) : "");
        sd_notify(0, st);
}

static void poll_failed(struct manager *m, const char *what, int r)
{
        m->poll_failures++;
        /* Log the first failure of a run of them, not every poll. */
        if (m->last_poll_error != r) {
                if (m->sink.kind == SINK_JOURNAL)
                        sink_daemon_event(&m->sink, DAEMON_EVENT_POLL_FAILED, LOG_ERR,
                                          "Poll failed while %s, keeping the last result: %s", what,
                                          strerror(-r));
                else
                        log_error_errno(r, "Poll failed while %s, keeping the last result", what);
        }
        m->last_poll_error = r;
}

/* A segment with attachers but no placement carried over: new, or its
 * representative changed. */
static int unplaced_segments(const struct ng_snapshot *s)
{
        struct ng_segment *v;
        size_t n;
        int r = ng_segments_build(s, &v, &n);
        if (r < 0)
                return r;
        int unplaced = 0;
        for (size_t i = 0; i < n; i++)
                /* Never placed, rather than placed as "unknown" (an
                 * attacher that maps none of a counted segment): the
                 * latter would resample every poll. */
                unplaced += v[i].kind != NG_SEG_PRIVATE && v[i].n_pids > 0 && v[i].method != NG_METHOD_SAMPLED &&
                            v[i].placement_source == NG_SOURCE_NONE && v[i].placement_coverage < 0;
        ng_segments_free(v, n);
        return unplaced;
}

/* Called by the collecting thread before every read: the loop watches the
 * count move and names the pid when it stops. */
static void on_progress(void *userdata, pid_t pid)
{
        struct manager *m = userdata;
        __atomic_store_n(&m->job.pid, pid, __ATOMIC_RELAXED);
        __atomic_add_fetch(&m->job.progress, 1, __ATOMIC_RELAXED);
}

static int collect_with(struct manager *m, enum ng_placement placement, struct ng_snapshot **ret)
{
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.placement = placement;
        o.picture = m->picture;
        o.progress = on_progress;
        o.progress_data = m;
        return ng_collect_for_config_opts(m->path, m->job.config, &o, ret);
}

/*
 * One collection, in the collecting thread: it reads m->job, m->path,
 * m->picture and m->snapshot (the last poll's, which the loop replaces only
 * after this returns) and writes m->job's results.
 *
 * Tier 1 (move_pages sampling) every sample_every polls and whenever a
 * segment changed; in between, counters only with the last placement of
 * each unchanged segment carried over (docs/ARCHITECTURE.md, "Cost tiers").
 */
static int collect(struct manager *m, struct ng_snapshot **ret)
{
        if (m->job.sample)
                return collect_with(m, NG_PLACEMENT_AUTO, ret);
        struct ng_snapshot *s;
        int r = collect_with(m, NG_PLACEMENT_COUNTERS, &s);
        if (r < 0)
                return r;
        r = ng_snapshot_carry_placement(s, m->snapshot);
        if (r >= 0)
                r = unplaced_segments(s);
        if (r == 0) {
                *ret = s;
                return 0;
        }
        ng_snapshot_free(s);
        return r < 0 ? r : collect_with(m, NG_PLACEMENT_AUTO, ret);
}

void manager_job_run(struct manager *m)
{
        m->job.snapshot = NULL;
        m->job.error = collect(m, &m->job.snapshot);
        m->job.cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - m->job.cpu_start_usec;
}

void *manager_worker_main(void *userdata)
{
        struct manager *m = userdata;
        m->job.cpu_start_usec = now_usec(CLOCK_THREAD_CPUTIME_ID);
        manager_job_run(m);
        uint64_t one = 1;
        (void) !write(m->worker_fd, &one, sizeof(one));
        return NULL;
}

void manager_job_prepare(struct manager *m)
{
        const struct ng_config *cfg = m->config;
        m->polls++;
        m->job.sample = !m->snapshot || !ng_path_is_live(m->path) || cfg->sample_every <= 1 ||
                        m->polls % cfg->sample_every == 1;
        m->job.config = m->config;
        m->job.started_usec = now_usec(CLOCK_MONOTONIC);
        m->job.progress_seen = __atomic_load_n(&m->job.progress, __ATOMIC_RELAXED);
        m->job.progress_usec = m->job.started_usec;
        m->job.stuck_reported = false;
        ng_picture_set_full_scan_every(m->picture, cfg->full_scan_every);
        ng_picture_set_read_budget(m->picture, cfg->attacher_read_budget);
}

/* The rest of a poll, on the loop: audit, alerts, corrections, metrics.
 * Pure or cheap, no /proc read. */
int manager_poll_finish(struct manager *m)
{
        uint64_t c0 = now_usec(CLOCK_THREAD_CPUTIME_ID);
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = ng_steal_ptr(&m->job.snapshot);
        struct ng_audit *a = NULL;
        int r = m->job.error;
        if (m->retired_config) {
                ng_config_free(m->retired_config);
                m->retired_config = NULL;
        }
        m->job.config = NULL;
        if (m->job.stuck_reported)
                log_notice("The poll stuck on pid %d went on and finished after %.1f s",
                           (int) m->job.stuck_pid, (double) (now_usec(CLOCK_MONOTONIC) - m->job.started_usec) / 1e6);
        m->job.stuck_reported = false;
        if (r < 0) {
                poll_failed(m, "reading the host", r);
                return r;
        }
        /* Prices weigh the CPU time since the last read of each process
         * that maps a segment: the picture rereads its stat and its
         * threads' by turns (attacher_read_budget), and the weights are
         * scaled to a turn. */
        if (m->snapshot)
                ng_snapshot_cpu_since(s, m->snapshot);
        if (s->latency_error[0] && (!m->snapshot || strcmp(m->snapshot->latency_error, s->latency_error)))
                log_warning("%s; prices come from the SLIT until numaguardctl probe --save rewrites it",
                            s->latency_error);
        r = ng_audit_run(s, m->config, &a);
        if (r < 0) {
                poll_failed(m, "auditing", r);
                return r;
        }
        if (m->last_poll_error)
                log_notice("Poll succeeded again");
        m->last_poll_error = 0;
        uint64_t now = now_usec(CLOCK_REALTIME);
        r = alerts_update(&m->alerts, a->findings, a->n_findings, now, sink_emit, &m->sink);
        if (r < 0)
                log_error_errno(r, "Tracking alerts, ignoring");
        enforce_run(m, s, a);
        ng_audit_free(m->audit);
        ng_snapshot_free(m->snapshot);
        m->snapshot = ng_steal_ptr(&s);
        m->audit = a;
        ng_picture_get_stats(m->picture, &m->last_picture);
        m->last_poll_usec = now;
        m->last_poll_wall_usec = now_usec(CLOCK_MONOTONIC) - m->job.started_usec;
        m->last_poll_cpu_usec = m->job.cpu_usec + (now_usec(CLOCK_THREAD_CPUTIME_ID) - c0);
        r = metrics_write(m, m->config->metrics_file);
        if (r < 0 && r != m->metrics_error)
                log_error_errno(r, "Writing %s, ignoring", m->config->metrics_file);
        m->metrics_error = r < 0 ? r : 0;
        manager_notify_status(m);
        return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Manager: one sd-event loop around the collect -> analyze -> report
 * pipeline. Sources: the poll timer, SIGTERM/SIGINT (exit), SIGHUP (reload),
 * the control socket, and sd-event's own watchdog pings when the service
 * manager set WATCHDOG_USEC. No work happens in signal handlers: signals are
 * blocked and read through a signalfd by sd-event.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "alerts.h"
#include "check.h"
#include "enforce.h"
#include "log.h"
#include "manager.h"
#include "metrics-file.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-codes.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-snapshot.h"
#include "poll.h"
#include "server.h"
#include "sink.h"
#include "status-reply.h"
#include "util.h"

struct reload_diag {
        char first[512];
        unsigned errors;
};

static void on_config_diag(void *userdata, int level, const char *file, unsigned line, const char *msg)
{
        struct reload_diag *d = userdata;
        char num[16] = "";
        /* Line 0: about the file as a whole ("is a FIFO, ..."). */
        if (line)
                snprintf(num, sizeof(num), ":%u:", line);
        if (level > LOG_ERR) {
                log_warning("%s%s %s", file, num, msg);
                return;
        }
        if (d->errors++ == 0)
                snprintf(d->first, sizeof(d->first), "%s%s %s", file, num, msg);
}

/* Under the unit's ProtectSystem=strict every directory outside its
 * ReadWritePaths= is a read-only mount: access(2) says EROFS. Caught here, a
 * metrics_file there fails the start or the reload with the fix, instead of
 * one "ignoring" line per poll and a textfile collector serving nothing. */
static int check_metrics_dir(const struct manager *m, const struct ng_config *c, char *why, size_t whylen)
{
        const char *f = c->metrics_file, *slash = strrchr(f, '/');
        char dir[PATH_MAX];
        if (!*f || !slash)
                return 0;
        snprintf(dir, sizeof(dir), "%.*s", slash == f ? 1 : (int) (slash - f), f);
        if (access(dir, W_OK) >= 0 || errno != EROFS)
                return 0;
        snprintf(why, whylen,
                 "%s: metrics_file = %s: %s is read-only for numaguardd (its unit allows writes only below "
                 "ReadWritePaths=); allow it with `systemctl edit numaguard`: [Service] ReadWritePaths=%s",
                 m->config_path, f, dir, dir);
        return -EROFS;
}

/* Loads the config file; a missing default file means compiled defaults. */
static int load_config(struct manager *m, struct ng_config **ret, char *why, size_t whylen)
{
        struct reload_diag d = {0};
        struct ng_bitmap nodes;
        _ng_cleanup_(ng_config_freep) struct ng_config *c = NULL;
        bool have_nodes = m->path && host_nodes(m->path, &nodes) >= 0;
        int r = ng_config_load_checked(m->config_path, have_nodes ? &nodes : NULL, on_config_diag, &d, &c);
        if (r == -ENOENT && !m->config_required)
                r = ng_config_new_default(&c);
        if (r >= 0) {
                r = check_metrics_dir(m, c, why, whylen);
                if (r >= 0)
                        *ret = ng_steal_ptr(&c);
                return r;
        }
        if (d.errors > 1)
                snprintf(why, whylen, "%s (and %u more error%s)", d.first, d.errors - 1,
                         d.errors > 2 ? "s" : "");
        else if (d.errors == 1)
                snprintf(why, whylen, "%s", d.first);
        else
                snprintf(why, whylen, "%s: %s", m->config_path, strerror(-r));
        return r;
}

static int arm_timer(struct manager *m)
{
        int r = sd_event_source_set_time_relative(m->timer, m->config->interval_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->timer, SD_EVENT_ONESHOT);
        if (r < 0) {
                log_error_errno(r, "Re-arming the poll timer");
                return sd_event_exit(m->event, 1);
        }
        return 0;
}

static int on_worker_done(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        struct manager *m = userdata;
        uint64_t v;
        (void) es;
        (void) revents;
        if (read(fd, &v, sizeof(v)) < 0 || !m->worker_busy)
                return 0;
        pthread_join(m->worker, NULL);
        m->worker_busy = false;
        (void) manager_poll_finish(m);
        if (m->opts.once)
                return sd_event_exit(m->event, m->last_poll_error ? 1 : 0);
        return arm_timer(m);
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        (void) es;
        (void) usec;
        if (m->worker_busy)
                return 0;       /* re-armed when it finishes */
        manager_job_prepare(m);
        int r = pthread_create(&m->worker, NULL, manager_worker_main, m);
        if (r != 0) {
                /* No thread to be had: collect here rather than not at all. */
                log_error_errno(-r, "Starting the collecting thread, polling on the loop");
                m->job.cpu_start_usec = now_usec(CLOCK_THREAD_CPUTIME_ID);
                manager_job_run(m);
                (void) manager_poll_finish(m);
                return m->opts.once ? sd_event_exit(m->event, m->last_poll_error ? 1 : 0) : arm_timer(m);
        }
        m->worker_busy = true;
        return 0;
}

/*
 * Every second while a poll runs, and at watchdog time: notes progress;
 * a poll with none for stuck_after is reported once (status, metrics, one
 * warning naming the process it waits on). The service manager's watchdog
 * is fed only while no poll runs or the running one moved within half the
 * watchdog period: a collection stuck for good ends in a restart, a slow
 * one never does.
 */
static void watch_worker(struct manager *m)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        if (!m->worker_busy)
                return;
        uint64_t p = __atomic_load_n(&m->job.progress, __ATOMIC_RELAXED);
        if (p != m->job.progress_seen) {
                m->job.progress_seen = p;
                m->job.progress_usec = now;
                return;
        }
        if (m->job.stuck_reported || now - m->job.progress_usec < m->config->stuck_after_usec)
                return;
        m->job.stuck_reported = true;
        m->job.stuck_pid = __atomic_load_n(&m->job.pid, __ATOMIC_RELAXED);
        m->polls_stuck++;
        char what[64] = "a host file";
        if (m->job.stuck_pid > 0)
                snprintf(what, sizeof(what), "process %d", (int) m->job.stuck_pid);
        if (m->sink.kind == SINK_JOURNAL)
                sink_daemon_event(&m->sink, DAEMON_EVENT_POLL_STUCK, LOG_WARNING,
                                  "Poll stuck for %.0f s reading %s (its mmap lock is held?); status answers "
                                  "from the last complete poll", (double) (now - m->job.progress_usec) / 1e6, what);
        else
                log_warning("Poll stuck for %.0f s reading %s (its mmap lock is held?); status answers from the "
                            "last complete poll", (double) (now - m->job.progress_usec) / 1e6, what);
        int r = metrics_write(m, m->config->metrics_file);
        if (r < 0 && r != m->metrics_error)
                log_error_errno(r, "Writing %s, ignoring", m->config->metrics_file);
}

static int on_watch(sd_event_source *es, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        watch_worker(m);
        if (m->watchdog_usec && (!m->worker_busy || manager_stalled_usec(m) < m->watchdog_usec / 2))
                sd_notify(0, "WATCHDOG=1");
        uint64_t step = m->watchdog_usec ? m->watchdog_usec / 4 : USEC_PER_SEC;
        if (step > USEC_PER_SEC)
                step = USEC_PER_SEC;
        int r = sd_event_source_set_time(es, usec + step);
        return r < 0 ? r : sd_event_source_set_enabled(es, SD_EVENT_ON);
}

int manager_reload(struct manager *m, char *why, size_t whylen)
{
        struct ng_config *c = NULL;
        sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading %s", now_usec(CLOCK_MONOTONIC),
                   m->config_path);
        int r = load_config(m, &c, why, whylen);
        if (r < 0) {
                m->reload_failures++;
                snprintf(m->last_reload_error, sizeof(m->last_reload_error), "%s", why);
                if (m->sink.kind == SINK_JOURNAL)
                        sink_daemon_event(&m->sink, DAEMON_EVENT_RELOAD_FAILED, LOG_ERR,
                                          "Reload failed, keeping the running configuration: %s", why);
                else
                        log_full(LOG_ERR, 0, "Reload failed, keeping the running configuration: %s", why);
                sd_notify(0, "READY=1");
                manager_notify_status(m);
                return r;
        }
        if (strcmp(c->socket_path, m->config->socket_path) || strcmp(c->status_group, m->config->status_group))
                log_notice("socket and status_group changes take effect when numaguardd restarts");
        /* The last audit points into the old config: redo it on the new one
         * before the old one goes (pure and cheap, no host I/O). */
        struct ng_audit *a = NULL;
        if (m->snapshot && ng_audit_run(m->snapshot, c, &a) < 0)
                a = NULL;
        ng_audit_free(m->audit);
        m->audit = a;
        /* A running poll reads the old config until it finishes. */
        if (m->worker_busy && m->job.config == m->config)
                m->retired_config = m->config;
        else
                ng_config_free(m->config);
        m->config = c;
        m->reloads++;
        m->last_reload_error[0] = '\0';
        if (m->timer && !m->opts.once)
                (void) sd_event_source_set_time_relative(m->timer, m->config->interval_usec);
        log_info("Reloaded %s", m->config_path);
        sd_notify(0, "READY=1");
        manager_notify_status(m);
        return 0;
}

static int on_signal(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;
        char why[600];
        (void) es;
        if (si->ssi_signo == SIGHUP) {
                (void) manager_reload(m, why, sizeof(why));
                return 0;
        }
        log_info("Received %s, exiting", strsignal((int) si->ssi_signo));
        sd_notify(0, "STOPPING=1");
        m->stopping = true;
        return sd_event_exit(m->event, 0);
}

/* 0, 1 or 2: the worst active alert (warning, critical), as `audit` exits. */
static int exit_hint(const struct manager *m)
{
        int worst = 0;
        for (size_t i = 0; i < m->alerts.n; i++)
                if (m->alerts.v[i].state == ALERT_ACTIVE) {
                        int e = m->alerts.v[i].severity == NG_SEV_CRITICAL ? 2 :
                                m->alerts.v[i].severity == NG_SEV_WARNING ? 1 : 0;
                        worst = e > worst ? e : worst;
                }
        return worst;
}

static const struct {
        const char *request;
        enum request_access access;
        int kind;       /* 0 status text, 1 status json, 2 reload */
} requests[] = {
        { "status", ACCESS_READ, 0 },
        { "status text", ACCESS_READ, 0 },
        { "status json", ACCESS_READ, 1 },
        { "reload", ACCESS_WRITE, 2 },
};

static int dispatch(struct manager *m, const struct peer *p, const char *request, FILE *out,
                    char *why, size_t whylen)
{
        for (size_t i = 0; i < ELEMENTSOF(requests); i++) {
                if (strcmp(request, requests[i].request))
                        continue;
                if (!peer_allowed(p, requests[i].access, server_status_gid(m->server))) {
                        log_info("Refused \"%s\" from uid %u (pid %d)", request, (unsigned) p->uid, (int) p->pid);
                        snprintf(why, whylen, "permission denied: %s", requests[i].access == ACCESS_WRITE ?
                                 "only root may change state" : "only root and members of status_group may read");
                        return -EPERM;
                }
                switch (requests[i].kind) {
                case 0: return status_render_text(m, out);
                case 1: return status_render_json(m, out);
                default:
                        log_info("Reload requested by uid %u (pid %d)", (unsigned) p->uid, (int) p->pid);
                        if (manager_reload(m, why, whylen) < 0)
                                return -EINVAL;
                        fprintf(out, "reloaded %s\n", m->config_path);
                        return 0;
                }
        }
        snprintf(why, whylen, "unknown request (expected status, status json or reload)");
        return -EINVAL;
}

static int on_request(struct manager *m, const struct peer *p, const char *request, FILE *out,
                      char *why, size_t whylen)
{
        int r = dispatch(m, p, request, out, why, whylen);
        return r < 0 ? r : exit_hint(m);
}

static int setup_signals(struct manager *m)
{
        static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
        sigset_t ss;
        sigemptyset(&ss);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaddset(&ss, sigs[i]);
        /* sd-event reads them from a signalfd; they must be blocked first
         * (SD_EVENT_SIGNAL_PROCMASK needs systemd 254). */
        if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
                int r = sd_event_add_signal(m->event, NULL, sigs[i], on_signal, m);
                if (r < 0)
                        return r;
        }
        return 0;
}

int manager_new(const struct manager_opts *o, struct manager **ret, bool *ret_config_error)
{
        _ng_cleanup_(manager_freep) struct manager *m = calloc(1, sizeof(*m));
        char why[600] = "";
        if (!m)
                return -ENOMEM;
        m->worker_fd = -1;
        m->opts = *o;
        m->started_usec = now_usec(CLOCK_REALTIME);
        m->config_required = o->config_path != NULL;
        m->config_path = strdup(o->config_path ? o->config_path : NG_CONFIG_DEFAULT_PATH);
        int r = m->config_path ? 0 : -ENOMEM;
        /* The root first: the configuration's nodes are checked against it. */
        if (r >= 0 && (r = ng_path_new(o->root, &m->path)) < 0)
                log_error_errno(r, "Root %s", o->root);
        if (r >= 0 && (r = load_config(m, &m->config, why, sizeof(why))) < 0) {
                log_full(LOG_ERR, 0, "Cannot load the configuration: %s", why);
                *ret_config_error = true;
        }
        if (r >= 0 && (r = sink_open(&m->sink, o->alert_log)) < 0)
                log_error_errno(r, "Opening %s", o->alert_log);
        if (r >= 0 && (r = sd_event_default(&m->event)) < 0)
                log_error_errno(r, "Creating the event loop");
        if (r >= 0 && (r = setup_signals(m)) < 0)
                log_error_errno(r, "Setting up signals");
        if (r >= 0 && !o->once) {
                const char *sock = o->socket_path ? o->socket_path : m->config->socket_path;
                r = server_new(m->event, sock, m->config->status_group, m, on_request, &m->server, why, sizeof(why));
                if (r < 0)
                        log_full(LOG_ERR, 0, "Control socket: %s", why);
        }
        if (r >= 0 && (r = sd_event_add_time_relative(m->event, &m->timer, CLOCK_MONOTONIC, 0, 0,
                                                       on_timer, m)) < 0)
                log_error_errno(r, "Creating the poll timer");
        if (r >= 0 && (r = ng_picture_new(m->config->full_scan_every, &m->picture)) < 0)
                log_error_errno(r, "Creating the process picture");
        if (r >= 0 && (m->worker_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
                r = log_error_errno(-errno, "Creating the collecting thread's eventfd");
        if (r >= 0 && (r = sd_event_add_io(m->event, &m->worker_io, m->worker_fd, EPOLLIN, on_worker_done, m)) < 0)
                log_error_errno(r, "Watching the collecting thread");
        /* The watchdog is fed by on_watch, not by sd-event on its own: only
         * while collection moves. */
        int wd = 0;
        if (r >= 0 && (r = wd = sd_watchdog_enabled(0, &m->watchdog_usec)) < 0)
                log_error_errno(r, "Reading WATCHDOG_USEC");
        if (r >= 0 && (r = sd_event_add_time_relative(m->event, &m->watch, CLOCK_MONOTONIC, 0, 0, on_watch, m)) < 0)
                log_error_errno(r, "Creating the watch timer");
        if (r < 0)
                return r;
        if (wd <= 0)    /* usec is only meaningful when enabled */
                m->watchdog_usec = 0;
        m->watchdog = m->watchdog_usec > 0;
        *ret = ng_steal_ptr(&m);
        return 0;
}

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        m->server = server_free(m->server);
        sd_event_source_disable_unref(m->timer);
        sd_event_source_disable_unref(m->watch);
        sd_event_source_disable_unref(m->worker_io);
        sd_event_unref(m->event);
        if (m->worker_busy) {
                /* A collection still runs: wait a little, and if it is stuck
                 * leave what it reads allocated; the process is ending. */
                struct timespec ts = ng_timespec_usec(now_usec(CLOCK_REALTIME) + 2 * USEC_PER_SEC);
                if (pthread_timedjoin_np(m->worker, NULL, &ts) != 0) {
                        log_warning("Exiting with a poll still stuck on pid %d", (int) m->job.pid);
                        return NULL;
                }
                ng_snapshot_free(m->job.snapshot);
        }
        if (m->worker_fd >= 0)
                close(m->worker_fd);
        ng_picture_free(m->picture);
        ng_config_free(m->retired_config);
        ng_audit_free(m->audit);
        ng_snapshot_free(m->snapshot);
        alerts_done(&m->alerts);
        enforce_table_free(&m->enforce);
        sink_close(&m->sink);
        ng_path_free(m->path);
        ng_config_free(m->config);
        free(m->config_path);
        free(m);
        return NULL;
}

int manager_run(struct manager *m)
{
        sd_notifyf(0, "READY=1\nSTATUS=Started, interval %" PRIu64 " ms, alerts to %s",
                   m->config->interval_usec / USEC_PER_MSEC, sink_route(&m->sink));
        log_info("Started: root %s, config %s, socket %s, alerts to %s%s", m->opts.root ? m->opts.root : "/",
                 m->config_path, m->server ? server_path(m->server) : "none", sink_route(&m->sink),
                 m->watchdog ? ", watchdog on" : "");
        int r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed");
        /* Stopped on purpose: the metrics say so, and the NumaguardDown
         * rule stays silent (metrics-file.c). */
        if (m->stopping) {
                int w = metrics_write_stopped(m, m->config->metrics_file);
                if (w < 0)
                        log_error_errno(w, "Writing %s at exit, ignoring", m->config->metrics_file);
        }
        return r;
}

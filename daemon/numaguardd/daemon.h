/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * numaguardd's modules (daemon/numaguardd/) share this header:
 *   numaguardd.c     main: options, --check-config, the Manager's run
 *   check.c          --check-config: the merged configuration against this
 *                    host
 *   manager.c        the Manager: sd-event loop, poll timer, signals, reload,
 *                    watchdog, sd_notify
 *   poll.c           one poll: collect (on the worker thread), then audit,
 *                    alerts, metrics and the status line
 *   alerts.c         finding -> alert transitions (raise/clear, damping)
 *   enforce.c        corrections in enforce mode
 *   sink.c           where alerts go: journald, syslog or a JSON-lines file,
 *                    and whether each delivers
 *   syslog.c         /dev/log, written so that a failure is known
 *   server.c         the control socket (numaguardctl status/reload)
 *   request.c        its request framing, pure (fuzzed apart from it)
 *   listen.c         its place in the file system: the directory and those
 *                    above it checked, the socket bound and handed to status_group without a race
 *   status-reply.c   what `status` answers, text and JSON
 *   metrics-file.c   the Prometheus textfile, written atomically
 *   log.c            the daemon's own log lines
 * Calls go one way: manager.c calls the others; server.c reaches the
 * Manager only through the handler it is given.
 * All state lives in struct manager; nothing here is a mutable global except
 * the log threshold.
 */

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <syslog.h>
#include <systemd/sd-event.h>

#include "ng-action.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-snapshot.h"
#include "util.h"


/* ---- log.c -------------------------------------------------------------- */

/* Lines go to stderr with a "<N>" priority prefix when stderr is the journal
 * (JOURNAL_STREAM), plain otherwise. Returns -abs(err) for `return log_...`. */
void log_set_max_level(int level);
int log_full(int level, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define log_error_errno(e, ...) log_full(LOG_ERR, (e), __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, 0, __VA_ARGS__)

/* ---- alerts.c: transitions ---------------------------------------------- */

/*
 * An alert is keyed by (code, instance, nodes): one finding of the audit maps
 * to one key; several findings with the same key (two cyclops segments of one
 * instance on one node) are one alert.
 *
 * Damping: a key is raised on the first poll that reports it, and cleared only
 * after ALERT_CLEAR_POLLS consecutive polls without it, so a finding that
 * comes and goes every other poll stays one raised alert. A key cleared less
 * than ALERT_FLAP_POLLS polls ago must be seen ALERT_RAISE_CONFIRM_POLLS polls
 * in a row before it is raised again.
 */
#define ALERT_CLEAR_POLLS 2
#define ALERT_FLAP_POLLS 10
#define ALERT_RAISE_CONFIRM_POLLS 2

enum alert_state {
        ALERT_PENDING,  /* seen, not raised yet (confirming after a flap) */
        ALERT_ACTIVE,   /* raised */
        ALERT_CLEARED,  /* cleared, remembered for flap detection */
};

struct alert {
        enum ng_code code;
        char instance[NG_INSTANCE_NAME_MAX + 1];
        struct ng_bitmap nodes;
        enum alert_state state;
        /* Copied from the last finding with this key: */
        enum ng_severity severity;
        char segment[128];
        char message[512];
        char advice[256];
        double value;
        struct ng_container container;  /* of the instance; "" when none */
        uint64_t raised_usec, cleared_usec;     /* CLOCK_REALTIME */
        uint64_t last_seen_poll, cleared_poll;
        unsigned seen_streak, missing_streak;
        unsigned raises;
};

enum alert_event_kind {
        ALERT_EVENT_RAISED,
        ALERT_EVENT_CLEARED,
};

typedef void (*alert_event_fn)(void *userdata, enum alert_event_kind kind, const struct alert *a);

struct alert_table {
        struct alert *v;
        size_t n, cap;
        uint64_t polls;
        uint64_t raised_total, cleared_total;
};

/* Feeds one poll's findings; calls fn for every transition. Returns 0 or
 * -ENOMEM (the table is then unchanged for the findings not yet merged). */
int alerts_update(struct alert_table *t, const struct ng_finding *f, size_t n, uint64_t now_usec,
                  alert_event_fn fn, void *userdata);
void alerts_done(struct alert_table *t);
size_t alerts_active(const struct alert_table *t);
/* "0-1" for nodes, "" when empty. */
void alert_nodes_format(const struct ng_bitmap *nodes, char *buf, size_t size);

/* ---- sink.c: where alerts go -------------------------------------------- */

enum sink_kind {
        SINK_JOURNAL,
        SINK_SYSLOG,
        SINK_FILE,      /* JSON lines with the journal's fields: tests, debugging */
        SINK_KINDS_
};

/* syslog.c: /dev/log, written without syslog(3), which drops messages
 * without a word. */
#define SYSLOG_SOCKET "/dev/log"
struct syslog_conn {
        int fd;         /* -1: not connected */
        bool stream;    /* a SOCK_STREAM logger: messages end with a NUL */
        bool congested; /* the last wait for room in its queue timed out */
};
/* 0 or -errno (-ENOENT: no /dev/log). */
int syslog_connect(struct syslog_conn *c);
void syslog_disconnect(struct syslog_conn *c);
/* One message at priority (facility daemon); connects when not connected
 * and once more after the logger restarted. Waits 100 ms at most for room
 * in the logger's queue. 0 or -errno. */
int syslog_send(struct syslog_conn *c, int priority, const char *msg);

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

/* ---- server.c: control socket ------------------------------------------- */

/* Requests: one line of at most SERVER_REQUEST_MAX bytes, newline included. */
#define SERVER_REQUEST_MAX 4096

/* request.c: one request from the len bytes a client sent: up to the first
 * newline (or all of them), a trailing CR dropped, printable ASCII only,
 * copied NUL-terminated into ret (size bytes). Returns its length, -E2BIG
 * beyond SERVER_REQUEST_MAX or size, -EBADMSG for other bytes. */
int server_request_parse(const char *buf, size_t len, char *ret, size_t size);
#define SERVER_TIMEOUT_USEC (2 * USEC_PER_SEC)
#define SERVER_MAX_CONNECTIONS 32
#define SERVER_MAX_PER_UID 8            /* for every user but root */

struct peer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
        gid_t *groups;          /* SO_PEERGROUPS (supplementary groups) */
        size_t n_groups;
};

enum request_access {
        ACCESS_READ,    /* root and members of status_group */
        ACCESS_WRITE,   /* root only */
};

/* Pure: whether peer may do a request needing access. group_gid is
 * (gid_t)-1 when there is no status_group. */
bool peer_allowed(const struct peer *p, enum request_access access, gid_t group_gid);

struct manager;
struct server;

/* Answers one request line (without the newline) into out: returns the
 * exit hint N >= 0 for "ok exit=N" (0, 1 or 2: the worst active alert, as
 * `audit` exits), or -errno with a one-line reason in why. */
typedef int (*server_handler_fn)(struct manager *m, const struct peer *p, const char *request,
                                 FILE *out, char *why, size_t whylen);

/* Returns 0 or -errno with a one-line reason, naming the path, in why. */
int server_new(sd_event *e, const char *path, const char *group, struct manager *m,
               server_handler_fn handler, struct server **ret, char *why, size_t whylen);
struct server *server_free(struct server *s);
const char *server_path(const struct server *s);
/* Resolved status_group, (gid_t)-1 when none. */
gid_t server_status_gid(const struct server *s);

/* ---- listen.c: the control socket's place in the file system ----------- */

struct socket_place {
        int dir_fd;             /* O_PATH of the socket's directory, -1: none */
        char name[108];         /* the socket's name in it */
        bool bound;
};

/* "a regular file", "a FIFO"...: what st_mode says is there. */
const char *file_type_name(mode_t mode);
/* Binds the unix socket fd at path, mode 0600, in a directory that only
 * root can change, reached from / through directories only root can change
 * and no symbolic link (refused otherwise, naming the directory), after
 * removing a stale socket of an earlier run. Returns 0 or -errno with a
 * one-line reason naming the path or the directory in why (-EADDRINUSE: another numaguardd answers there, -EEXIST:
 * something that is not a socket is there). */
int socket_place_bind(struct socket_place *p, int fd, const char *path, char *why, size_t whylen);
/* Gives the bound socket to group gid, mode 0660. 0 or -errno and why. */
int socket_place_give(const struct socket_place *p, const char *path, gid_t gid, char *why, size_t whylen);
/* Removes the socket if a socket is still at its name; closes the directory. */
void socket_place_release(struct socket_place *p);

/* ---- enforce.c: corrections in enforce mode ----------------------------- */

/* Transient failures (EBUSY, EAGAIN, ENOMEM) of one correction retried on
 * later polls, after the cooldown, before the target is given up. */
#define ENFORCE_MAX_TRANSIENT 3


struct enforce_entry {
        char instance[NG_INSTANCE_NAME_MAX + 1];
        enum ng_correction kind;
        uint64_t last_usec;             /* CLOCK_MONOTONIC of the last attempt */
        unsigned transient;             /* consecutive transient failures */
        bool unmanaged;                 /* permanent error: never again until restart */
};

struct enforce_table {
        struct enforce_entry *v;
        size_t n;
        uint64_t actions, failures;     /* for status and metrics */
        /* Attempts by kind and outcome; those the hugepage reservation
         * check refused, by kind (numaguardd(8), METRICS). */
        uint64_t outcomes[NG_CORRECTION_MAX_][NG_OUTCOME_PERMANENT + 1];
        uint64_t check_refused[NG_CORRECTION_MAX_];
};

struct manager;
/* In mode = enforce: for every configured instance whose enforce= allows a
 * correction and whose findings call for it, carry it out once per cooldown,
 * log it (NOTICE, the action's MESSAGE_ID) and read it back. */
void enforce_run(struct manager *m, const struct ng_snapshot *s, const struct ng_audit *a);
void enforce_table_free(struct enforce_table *t);

/* ---- metrics-file.c ---------------------------------------------------- */

struct manager;
/* Writes the metrics file of the last poll (temp file + rename). Empty path:
 * nothing. Returns 0 or -errno. */
int metrics_write(const struct manager *m, const char *path);
/* Replaces it with the file of a daemon stopped on purpose: numaguard_up 0,
 * numaguard_stopped_timestamp_seconds, the last poll's timestamp. */
int metrics_write_stopped(const struct manager *m, const char *path);

/* ---- status-reply.c ---------------------------------------------------- */

int status_render_text(const struct manager *m, FILE *f);
int status_render_json(const struct manager *m, FILE *f);

/* ---- manager.c ---------------------------------------------------------- */

struct manager_opts {
        const char *root;
        const char *config_path;        /* NULL: NG_CONFIG_DEFAULT_PATH, missing = defaults */
        const char *alert_log;          /* test sink */
        const char *socket_path;        /* overrides the config's socket */
        bool once;
};

/* ---- check.c ------------------------------------------------------------ */

/* The host's online nodes (node 0 alone on a kernel without NUMA): 0 or -errno. */
int host_nodes(const struct ng_path *p, struct ng_bitmap *ret);
/* --check-config: exit status 0 (valid; warnings on stderr) or 78. */
int check_config_run(const struct manager_opts *o);

/* One collection, run by the collecting thread. The loop sets the inputs
 * before it starts the thread and reads the results after joining it;
 * progress and pid are written by the thread as it goes (atomics). */
struct poll_job {
        /* inputs */
        const struct ng_config *config;
        bool sample;
        uint64_t started_usec;          /* CLOCK_MONOTONIC */
        /* results */
        struct ng_snapshot *snapshot;
        int error;
        uint64_t cpu_start_usec, cpu_usec;      /* the collecting thread's */
        /* progress: reads started, and whose */
        uint64_t progress;
        pid_t pid;
        /* the loop's watch */
        uint64_t progress_seen, progress_usec;
        bool stuck_reported;
        pid_t stuck_pid;
};

struct manager {
        sd_event *event;
        sd_event_source *timer;
        sd_event_source *watch;         /* stuck polls and the watchdog */
        sd_event_source *worker_io;     /* the collecting thread is done */
        int worker_fd;                  /* eventfd it writes */
        pthread_t worker;
        bool worker_busy;
        struct poll_job job;
        struct ng_picture *picture;     /* processes kept between polls */
        struct ng_picture_stats last_picture;
        struct ng_config *retired_config;       /* replaced while a poll read it */
        uint64_t polls_stuck;
        uint64_t watchdog_usec;         /* 0: no watchdog */
        struct manager_opts opts;
        char *config_path;
        bool config_required;           /* --config given: a missing file is an error */
        struct ng_config *config;
        struct ng_path *path;
        struct alert_sink sink;
        struct alert_table alerts;
        struct enforce_table enforce;
        struct server *server;
        /* The last successful poll: */
        struct ng_snapshot *snapshot;
        struct ng_audit *audit;
        uint64_t last_poll_usec;        /* CLOCK_REALTIME when it finished */
        uint64_t last_poll_wall_usec;   /* its cost, collect + audit + alerts */
        uint64_t last_poll_cpu_usec;
        int last_poll_error;            /* -errno of the last poll, 0 if fine */
        uint64_t polls, poll_failures;
        uint64_t started_usec;
        uint64_t reloads, reload_failures;
        char last_reload_error[512];
        bool watchdog;
        int metrics_error;              /* of the last write, logged once */
        bool stopping;                  /* SIGTERM/SIGINT: leave a stopped metrics file */
};

/* *ret_config_error is set when the failure is the config file's. */
int manager_new(const struct manager_opts *o, struct manager **ret, bool *ret_config_error);
struct manager *manager_free(struct manager *m);
int manager_run(struct manager *m);
/* Parses the config file into a new config, validates it and swaps it in.
 * On error keeps the old one, logs once, puts "file:line: reason" in why. */
int manager_reload(struct manager *m, char *why, size_t whylen);
/* One poll on the calling thread (collect, audit, alerts, metrics). The
 * loop runs the collection on a thread of its own instead. */
int manager_poll(struct manager *m);

/* poll.c: the steps of a poll manager.c takes apart to run the collection
 * on the worker thread. */
/* Counts the poll and fills m->job for the collection. */
void manager_job_prepare(struct manager *m);
/* The collection (m->job); the worker thread's body. */
void manager_job_run(struct manager *m);
void *manager_worker_main(void *userdata);
/* The rest of the poll on the loop's thread, once the collection is done. */
int manager_poll_finish(struct manager *m);
/* STATUS= for the service manager. */
void manager_notify_status(struct manager *m);

/* How long the running poll has read nothing, 0 when none runs. Inline:
 * status-reply.c and metrics-file.c read it, and manager.c calls them. */
static inline uint64_t manager_stalled_usec(const struct manager *m)
{
        if (!m->worker_busy)
                return 0;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        return now > m->job.progress_usec ? now - m->job.progress_usec : 0;
}

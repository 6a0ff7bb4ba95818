/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The Manager (manager.c): the sd-event loop, the poll timer, signals,
 * reload, the watchdog and sd_notify. It drives the other modules (see
 * docs/ARCHITECTURE.md, "The modules of the programs"); all of numaguardd's
 * state lives in struct manager. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "alerts.h"
#include "cleanup.h"
#include "enforce.h"
#include "ng-snapshot.h"
#include "poll.h"
#include "sink.h"
#include "util.h"

struct manager_opts {
        const char *root;
        const char *config_path;        /* NULL: NG_CONFIG_DEFAULT_PATH, missing = defaults */
        const char *alert_log;          /* test sink */
        const char *socket_path;        /* overrides the config's socket */
        bool once;
};

struct ng_audit;
struct ng_config;
struct ng_path;
struct server;

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
NG_DEFINE_CLEANUP(struct manager, manager_free)
int manager_run(struct manager *m);
/* Parses the config file into a new config, validates it and swaps it in.
 * On error keeps the old one, logs once, puts "file:line: reason" in why. */
int manager_reload(struct manager *m, char *why, size_t whylen);

/* How long the running poll has read nothing, 0 when none runs. Inline:
 * status-reply.c and metrics-file.c read it, and manager.c calls them. */
static inline uint64_t manager_stalled_usec(const struct manager *m)
{
        if (!m->worker_busy)
                return 0;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        return now > m->job.progress_usec ? now - m->job.progress_usec : 0;
}

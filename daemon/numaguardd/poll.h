/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* One poll (poll.c): collect (on the worker thread), then audit, alerts,
 * metrics and the status line; the steps manager.c takes apart to run the
 * collection on the worker thread. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct manager;
struct ng_config;
struct ng_snapshot;

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

/* Counts the poll and fills m->job for the collection. */
void manager_job_prepare(struct manager *m);
/* The collection (m->job); the worker thread's body. */
void manager_job_run(struct manager *m);
void *manager_worker_main(void *userdata);
/* The rest of the poll on the loop's thread, once the collection is done. */
int manager_poll_finish(struct manager *m);
/* STATUS= for the service manager. */
void manager_notify_status(struct manager *m);

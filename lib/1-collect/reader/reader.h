/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One collection under way (struct collector), as every part of collect
 * that fills the snapshot gets it, and the readers they share: every file
 * a snapshot reads goes through them (counted, the progress hook called
 * first), and a file that cannot be used is a problem of the snapshot
 * naming it (collect-read.c). Not installed.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-snapshot.h"
#include "path.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_seg_key;      /* placement: a segment asked of itself */
struct shm_scan;        /* shm: a mount scanned */

struct collector {
        const struct ng_path *p;
        /* p, counting what the collector's reads cost: every file the
         * snapshot reads goes through it (ng_collect_vread(), or the path
         * layer's readers directly). */
        const struct ng_path *reads;
        struct ng_path_cost cost;
        struct ng_collect_opts o;
        struct ng_snapshot *s;
        pid_t current_pid;      /* whose files are being read, 0 for the host's */
        struct ng_seg_key *whole;       /* segments asked of themselves */
        size_t n_whole, n_whole_sorted; /* the first n_whole_sorted sorted (collect-whole.c) */
        bool sysvipc_missing;   /* no /proc/sysvipc/shm (numaguard's own namespace) */
        /* The entries of /dev/shm and hugetlbfs mounts looked at, at most
         * NG_SHM_MAX_EXAMINED; each mount scanned (s->unlisted[i]); and
         * the signature of their files' names (ng_picture's files_sig). */
        size_t shm_examined;
        struct shm_scan *shm_scans;
        uint64_t files_sig;
};

/* Reads a file through c->reads (which counts it); calls the progress
 * hook first. */
int ng_collect_vread(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
/* ng_collect_vread() with the arguments inline. */
int ng_collect_read(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Records a problem with a file of the tree (path relative to its root). */
void ng_collect_problem(struct collector *c, const char *path, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The same with what to do about it, where that is not to check the file. */
void ng_collect_problem_advice(struct collector *c, const char *path, const char *advice, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* A tree's NG_PATH_INCOMPLETE_FILE: each file the snapshot could not take
 * is a problem naming it (nothing on the live host). 0, or -ENOMEM. */
int ng_collect_incomplete(struct collector *c);
/* Reads a list file ("0-3"); an absent file leaves *ret empty, one that
 * does not parse too, with a problem naming it. */
int ng_collect_read_list(struct collector *c, struct ng_bitmap *ret, const char *path);
void ng_collect_read_meminfo(struct collector *c, struct ng_meminfo *m, bool *has, bool must_exist,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#pragma GCC visibility pop

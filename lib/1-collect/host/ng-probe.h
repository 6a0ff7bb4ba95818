/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * collect: measuring this host's node-to-node latency and read bandwidth
 * (numaguardctl probe). For every memory node one buffer is bound there
 * with mbind(2) MPOL_BIND and its placement checked with move_pages(2)
 * before any number is kept; then, for every CPU node:
 *   latency    a dependent-load pointer chase over one random cycle through
 *              the buffer's cache lines (prefetchers cannot guess the next
 *              address; no MSR needed), from a thread pinned to a CPU of
 *              the CPU node: nanoseconds per load;
 *   bandwidth  one thread per CPU of the CPU node, each streaming its slice
 *              of the buffer: MB/s read.
 * Each figure is the median of `reps` runs; runs that disagree by more than
 * NG_PROBE_MAX_SPREAD are taken again, twice at most, and the attempt
 * that agreed best is kept with its spread. Live host only. It allocates
 * `size_bytes` on one node at a time and refuses when that would push the
 * node below its free-memory floor.
 */

#include <stddef.h>
#include <stdint.h>

#include "ng-bitmap.h"
#include "ng-latency.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Far larger than the last-level cache of the hosts we know of. */
#define NG_PROBE_DEFAULT_SIZE_BYTES (256u << 20)
#define NG_PROBE_MIN_SIZE_BYTES (1u << 20)
#define NG_PROBE_DEFAULT_REPS 3
/* Runs of one cell further apart than this (the largest over the smallest)
 * are no measurement of the host but of what else ran: a busy host. */
#define NG_PROBE_MAX_SPREAD 2.0
/* move_pages(2) checks this many pages of each buffer, evenly spread. */
#define NG_PROBE_VERIFY_PAGES 256

typedef void (*ng_probe_progress_t)(void *userdata, int cpu_node, int mem_node, double seconds, size_t done,
                                    size_t total);

struct ng_probe_opts {
        struct ng_bitmap nodes;         /* empty: every node */
        uint64_t size_bytes;
        unsigned reps;
        uint64_t floor_bytes;           /* node_free_floor as configured */
        /* Each node's floor from floor_bytes (ng_node_free_floor(), which
         * analyze owns); NULL: floor_bytes, at most 10 % of the node. */
        uint64_t (*node_floor)(uint64_t floor_bytes, const struct ng_node *nd);
        ng_probe_progress_t progress;   /* after every pair; may be NULL */
        void *userdata;
};

/*
 * The nodes the probe would use: rows (online CPUs) and columns (memory),
 * within opts->nodes. Checks every memory node's free memory against its
 * floor. Returns 0, -ENOSPC (err names the node and the numbers), -ENODEV
 * when opts->nodes selects no node.
 */
int ng_probe_plan(const struct ng_snapshot *s, const struct ng_probe_opts *opts, struct ng_bitmap *ret_cpu_nodes,
                  struct ng_bitmap *ret_mem_nodes, char *err, size_t err_size);

/*
 * Measures. s must come from the live host (-EOPNOTSUPP otherwise).
 * Returns 0, the errors of ng_probe_plan(), -EXDEV when a buffer did not
 * land on its node, or another -errno (err says what failed where).
 */
int ng_probe_run(const struct ng_snapshot *s, const struct ng_probe_opts *opts, struct ng_latency **ret,
                 char *err, size_t err_size);

/* The cells of m whose runs lay further apart than max_spread
 * (NG_PROBE_MAX_SPREAD), in latency or in bandwidth; cells whose spread is
 * unknown (a file of 0.1.0) are not counted. */
size_t ng_probe_unstable(const struct ng_latency *m, double max_spread);

#ifdef __cplusplus
}
#endif

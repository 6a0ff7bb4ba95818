/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One run of rebalance (act-rebalance.c), and what is said of it
 * (act-rebalance-result.c). Private to those two. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "act-rebalance-internal.h"

#pragma GCC visibility push(hidden)

struct run {
        struct ng_rebalance_plan *p;
        const struct ng_rebalance_opts *o;
        const struct ng_rebalance_ops *ops;
        ng_move_pages_fn mp;
        pid_t pid;                      /* whose page tables: p->pid, or 0 (our own mapping) */
        struct ng_rebalance_stats st;
        bool moving;                    /* false: the counting pass */
        void **addrs, **maddrs;
        uint64_t *slot;                 /* page index in the segment, per address */
        int *status, *mnodes, *mfrom;
        void **aaddrs;                  /* set aside: busy, for a retry */
        int *anodes, *afrom;
        unsigned n_aside;
        uint64_t excess[NG_REBALANCE_MAX_NODES], deficit[NG_REBALANCE_MAX_NODES];
        /* node id -> its index in p->nodes (-1: none), and the index of
         * each destination: asked once per page, so not a search */
        int16_t index_of[NG_REBALANCE_MAX_NODES], dest_k[NG_REBALANCE_MAX_NODES];
        uint64_t t_move, moved_bytes;
        /* One destination (one_way()): no count first; the pages each
         * batch finds are counted as it goes, and those left on another
         * node because the destination reached its floor. */
        bool one_way;
        uint64_t left_for_room;
        const char *failed_call;        /* which call gave err */
};

/* The index in r->p->nodes of node, -1: none. */
static inline int ng_rebalance_node_k(const struct run *r, int node)
{
        return node >= 0 && node < NG_REBALANCE_MAX_NODES ? r->index_of[node] : -1;
}

/* One way through the mover (act-rebalance-window.c): the batch is every
 * resident page of a window the mover maps; counts (per node index) from
 * its numa_maps. 1 when the window's line counts exactly the n pages, 0 to
 * ask page by page, -ENOMEM. */
int ng_rebalance_window_counts(const struct run *r, unsigned n, uint64_t *counts);

/* The outcome and summary of a run that counted and moved (err: its
 * error, 0), into res. */
void ng_rebalance_finish(struct run *r, int err, struct ng_action_result *res);
/* What was left and why ("; 12 pages busy (EBUSY), ..."), into buf: its
 * length. */
size_t ng_rebalance_tail_notes(const struct run *r, char *buf, size_t size);
/* The plan's verdict as the outcome, its reason as the summary. */
void ng_rebalance_verdict_result(const struct ng_rebalance_plan *p, struct ng_action_result *res);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * analyze: the price of a placement. Pure functions over a const snapshot
 * (its topology, SLIT and, when numaguardctl probe saved one, the measured
 * matrices in s->latency). No I/O.
 *
 * Model: an instance's processes run on CPU node i with share c_i (their
 * CPU time there) and touch their resident shared memory uniformly, so a
 * share m_j of accesses goes to memory node j.
 *   remote share          1 - sum_i c_i m_i
 *   expected latency      sum_ij c_i m_j L(i,j)
 *   interleaved latency   the same with m_j = 1/|K| over the instance's CPU nodes K
 *   local latency         sum_i c_i L(i,i)
 *   bandwidth ceiling     min_j B_j / m_j, B_j = sum_i c_i B(i,j): the traffic at
 *                         which the first memory node saturates
 * L and B come from the measured matrices when every cell the instance
 * needs was measured (source "measured": ns and MB/s), else from the
 * firmware's HMAT when it gives every cell (source "hmat": read latency in
 * ns and read bandwidth in MB/s of access class 1, else 0; the kernel
 * exports a memory node's figures from its best initiators only, so a cell
 * from another node is missing), otherwise from the SLIT (source "slit": L
 * in distance units, 10 = local, and every node's bandwidth counted as 1,
 * so ceilings are in nodes).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ng-bitmap.h"
#include "ng-segments.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* HIDDEN_HOP: latencies this far apart are distinct levels. */
#define NG_HIDDEN_HOP_RATIO 1.10

enum ng_price_source {
        NG_PRICE_NONE = 0,      /* nothing to price: no resident memory or CPU node known */
        NG_PRICE_SLIT,
        NG_PRICE_MEASURED,
        NG_PRICE_HMAT,          /* the firmware's figures, no probe saved */
};

const char *ng_price_source_name(enum ng_price_source src);

struct ng_node_share {
        int node;
        double share;           /* 0..1, shares sum to 1 */
};

struct ng_price {
        enum ng_price_source source;
        struct ng_node_share *cpu_share;        /* malloc'd, node order */
        size_t n_cpu_share;
        bool cpu_share_measured;        /* from CPU time; false: spread evenly over the CPU nodes */
        double remote_access_ratio;
        /* ns when measured or from the HMAT, SLIT units from the SLIT */
        double expected_latency, interleaved_latency, local_latency;
        /* MB/s when measured or from the HMAT, nodes from the SLIT */
        double bandwidth_ceiling, interleaved_bandwidth_ceiling;
        unsigned interleave_nodes;      /* |K| */
};

void ng_price_done(struct ng_price *p);

/*
 * CPU share per node of the processes pids: each thread's last CPU (field
 * 39 of task/<tid>/stat) weighted by its weight_ticks, or for a process
 * without tasks its own last CPU weighted by its cpu_weight_ticks. When
 * none used CPU time, an even share over cpu_nodes (ret_measured false).
 * Returns 0 or -ENOMEM; *ret_n is 0 when no node is known.
 */
int ng_price_cpu_share(const struct ng_snapshot *s, const pid_t *pids, size_t n_pids,
                       const struct ng_bitmap *cpu_nodes, struct ng_node_share **ret, size_t *ret_n,
                       bool *ret_measured);

/*
 * Prices memory placed as mem (resident bytes per node) for CPU shares cpu,
 * against interleaving over cpu_nodes. Takes ownership of nothing; ret's
 * cpu_share is a copy. Returns 0 or -ENOMEM; ret->source NONE when there
 * is nothing to price.
 */
int ng_price_compute(const struct ng_snapshot *s, const struct ng_bitmap *cpu_nodes,
                     const struct ng_node_share *cpu, size_t n_cpu, const struct ng_node_bytes *mem, size_t n_mem,
                     struct ng_price *ret);

/* Expected latency against local, as a percentage above it (+115). */
double ng_price_latency_pct(const struct ng_price *p);
/* The bandwidth ceiling in nodes' worth of interleaving (1 of 4). */
double ng_price_ceiling_nodes(const struct ng_price *p);

struct ng_hidden_hop {
        int cpu_node;
        int near_node, far_node;        /* far measured more than NG_HIDDEN_HOP_RATIO x near */
        int near_slit, far_slit;        /* far_slit <= near_slit */
        double near_ns, far_ns;
        enum ng_price_source source;    /* MEASURED (a saved probe) or HMAT */
};

/* One per CPU node whose measured remote latencies (or, with no probe
 * saved, the firmware's HMAT read latencies) split a SLIT level or reverse
 * its order (the worst pair). Returns the count or -ENOMEM. */
int ng_price_hidden_hops(const struct ng_snapshot *s, struct ng_hidden_hop **ret);

#ifdef __cplusplus
}
#endif

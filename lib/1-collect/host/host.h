/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The host as the snapshot holds it: its memory and hugepage pools, the
 * NUMA topology (nodes, CPUs, distances, the firmware's HMAT, memory tiers,
 * sockets), the kernel's knobs and features (collect-topology.c,
 * collect-hmat.c, collect-tiers.c, collect-features.c); and the latency
 * and bandwidth matrix numaguardctl probe measures and saves (public:
 * ng-latency.h, ng-probe.h). In the order ng_snapshot_collect() calls
 * them. Not installed; what only host/ shares is in host-internal.h.
 */

#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* /proc/meminfo and the host's hugepage pools. */
int ng_collect_memory(struct collector *c);
/* The nodes: CPUs, memory, pools, distances, HMAT, tiers. */
int ng_collect_topology(struct collector *c);
void ng_collect_knobs(struct collector *c);
/* The kernel features (enum ng_feature), after the topology and knobs. */
void ng_collect_features(struct collector *c);

#pragma GCC visibility pop

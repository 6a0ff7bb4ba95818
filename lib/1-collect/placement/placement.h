/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where the segments' pages sit (docs/ARCHITECTURE.md, "Cost tiers"): each
 * shmem segment asked of itself (collect-whole.c), the rest through one
 * representative attacher's numa_maps or tier-1 samples
 * (collect-placement.c), whose processes may speak for a segment
 * (speakers.c), and what a poll carries over from the last one
 * (carry-placement.c). Its public part (ng_proc_rep_cmp, ng_speakers_*,
 * ng_snapshot_carry_placement) is in ng-snapshot.h. Not installed; what
 * only placement/ shares is in placement-internal.h.
 */

#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* After the processes, cgroups and owners: the placement tier asked
 * (ng_collect_opts.placement) carried out. 0 or -errno. */
int ng_collect_placement(struct collector *c);

#pragma GCC visibility pop

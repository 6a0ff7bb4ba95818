/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A tier-1 sample of a mapping's placement (docs/ARCHITECTURE.md, "Cost
 * tiers"): where its pages are, from move_pages(2) asked about some of
 * its addresses or from the segment asked of itself. The sampler that
 * takes it is internal to the library (sample.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* move_pages(2) as libnuma declares it; swappable for tests. */
typedef long (*ng_move_pages_fn)(int pid, unsigned long count, void **pages, const int *nodes,
                                 int *status, int flags);

struct ng_sample {
        pid_t pid;
        uint64_t start, len;
        uint32_t asked, present;        /* addresses queried / with a page behind them */
        struct ng_node_pages *np;       /* sampled pages per node, node order */
        size_t n_np;
        /* Asked of the segment itself (its file, mapped read-only by
         * numaguard) rather than of pid's page tables: every resident page
         * counts, mapped by a process or not. Then len is the bytes of the
         * file that hold data, start 0, pid whose map_files reached it (0:
         * opened by path), and dev/inode name the segment (a SysV
         * segment's inode is its shmid). */
        bool whole;
        bool exact;                     /* every page with data, not a sample */
        bool sysv;                      /* a SysV segment (inode: its shmid) */
        unsigned dev_major, dev_minor;
        uint64_t inode;
        uint64_t ipc_ns;                /* a SysV segment's IPC namespace, 0 unknown */
        /* Asked of the segment itself: the policy its new pages follow
         * (its shared policy, as numa_maps writes one: "default",
         * "interleave:0-3"), "" when not asked (an empty file). */
        char policy[96];
        /* Asked of the segment itself, a sample of a file fragmented past
         * the extents numaguard follows (ng_segment_extents): its data
         * beyond them (the allocated bytes not in the extents sampled),
         * whose placement is unknown; 0 otherwise. */
        uint64_t unwalked_bytes;
};

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The snapshot's face inside the library; its public part is ng-snapshot.h
 * (the struct every part of collect fills, its queries, and the types it
 * carries of the parts above it: owners, boot pools, a database's
 * settings). Not installed.
 *
 * The samples a snapshot asked of segments themselves (ng_sample.whole),
 * by identity: a lookup is a bisection rather than a walk of every
 * sample, which a /dev/shm of a hundred thousand files would make a walk
 * a file. For the placement (2-analyze) and the carry-over of placement
 * from one poll to the next (placement/carry-placement.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-snapshot.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_proc_gen;

/* A snapshot as the library allocates it: the public part first (a
 * snapshot's address is its rec's), then what only the library sees. Every
 * snapshot is one: ng_snapshot_free() reads the rest. */
struct snapshot_rec {
        struct ng_snapshot s;
        /* What keeps the records a process picture shares with this
         * snapshot alive (picture-gen.c); NULL when every record is the
         * snapshot's own. */
        struct ng_proc_gen *proc_gen;
};

/* A zeroed snapshot (a literal one's start, too: the tests build theirs
 * with it), or NULL. */
struct ng_snapshot *ng_snapshot_alloc(void);

static inline struct snapshot_rec *snapshot_rec_of(const struct ng_snapshot *s)
{
        return (struct snapshot_rec *) s;
}

struct ng_whole_index {
        const struct ng_sample **v;
        size_t n;
};

/* The whole samples of s as they are now. 0 or -ENOMEM. */
int ng_whole_index_build(const struct ng_snapshot *s, struct ng_whole_index *ret);
void ng_whole_index_free(struct ng_whole_index *ix);
/* What ng_snapshot_whole_sample_ns() answers of the snapshot indexed: the
 * first sample of the identity in the snapshot's order, or NULL. */
const struct ng_sample *ng_whole_index_find(const struct ng_whole_index *ix, bool sysv, uint64_t ipc_ns,
                                            unsigned major, unsigned minor, uint64_t inode);

#pragma GCC visibility pop

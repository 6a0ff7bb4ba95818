/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the files of placement/: the segments asked of themselves
 * (collect-whole.c) and the samples a snapshot holds. Not installed; the
 * rest of collect uses placement.h. */

#include <stdbool.h>
#include <stdint.h>

#include "ng-snapshot.h"
#include "placement.h"
#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* A segment tier 1 asked of itself (collect-whole.c): a SysV segment is
 * its shmid on the kernel's internal mount, a file its device and inode. */
struct ng_seg_key {
        bool sysv, sampled;     /* sampled false: tried, hugetlb */
        unsigned major, minor;
        uint64_t inode;
        uint64_t ipc_ns;        /* a SysV segment's IPC namespace */
};

/* collect-whole.c: adds a copy of *smp to s->samples. */
int ng_collect_add_sample(struct ng_snapshot *s, const struct ng_sample *smp);
/* Tier 1 (or 2, exact) asked of each shmem segment itself; live host
 * only. */
int ng_collect_whole(struct collector *c, bool exact);
/* What a snapshot can replay of tier 1: live, the /dev/shm files no
 * process maps are asked of themselves (sampled) and their answer recorded
 * in the tree; under a root prefix, those answers replayed. 0 or -ENOMEM. */
int ng_collect_whole_kept(struct collector *c);
/* Whether the mapping's segment was sampled that way. */
bool ng_collect_whole_done(const struct collector *c, bool sysv, uint64_t ipc_ns, unsigned major, unsigned minor,
                           uint64_t inode);

#pragma GCC visibility pop

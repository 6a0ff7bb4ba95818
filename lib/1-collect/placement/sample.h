/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Tier 1 of the cost model: where a mapping's pages are, from move_pages(2)
 * asked about K addresses of one process -- no page-table walk, no fault,
 * no allocation (nodes == NULL only queries). struct ng_sample and
 * ng_move_pages_fn are in ng-kernel.h. Internal to the library: not
 * installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* Queries at most k addresses spread evenly over [start, start + len), one
 * per page of page_bytes (4096 when unknown). fn NULL means move_pages(2).
 * Returns 0 or -errno (-ESRCH: the process is gone, -EPERM). */
int ng_sample_range(pid_t pid, uint64_t start, uint64_t len, uint64_t page_bytes, unsigned k,
                    ng_move_pages_fn fn, struct ng_sample *ret);
void ng_sample_done(struct ng_sample *s);
/* xorshift64*: deterministic per seed, so two polls of an unchanged segment
 * sample the same pages and report the same shares. */
uint64_t ng_sample_random(uint64_t *state);
/* One more sampled page on node, s->np kept in node order: 0 or -ENOMEM. */
int ng_sample_count_node(struct ng_sample *s, int node);

/* What ng_sample_segment_fd() asks the kernel through; swappable for tests
 * (NULL: mincore(2) and move_pages(2)). */
struct ng_seg_sample_ops {
        int (*mincore)(void *addr, size_t len, unsigned char *vec);
        ng_move_pages_fn move_pages;
};

/* Asks the shmem file behind fd (a /dev/shm file, or a SysV or anonymous
 * shared segment opened through /proc/PID/map_files) where its resident
 * pages are: k pages spread over the bytes that hold data, or every page
 * when exact. Maps the file read-only in our address space a window at a
 * time and reads one byte of a page only when mincore(2) said it is
 * resident: it never allocates a page, never writes, never migrates
 * (sample-segment.c says how). ret->whole is set; ret->len is the bytes
 * holding data, ret->asked the pages asked, ret->present those resident
 * with a node. Returns 0, -EOPNOTSUPP for a hugetlbfs file, -EINVAL for
 * anything but a regular file, or -errno (-EPERM: a call was refused). */
int ng_sample_segment_fd(int fd, unsigned k, bool exact, const struct ng_seg_sample_ops *ops,
                         struct ng_sample *ret);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

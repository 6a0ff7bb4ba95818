/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The path layer's library-internal part: counting what reads cost. Not
 * installed. */

#include <stdbool.h>
#include <stdint.h>

#include "ng-path.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* What the files read through a path cost. */
struct ng_path_cost {
        uint64_t files_read, bytes_read;
};

/*
 * A copy of p as it is now (root, recorder, the tree's denied paths) that
 * adds every file it reads whole (ng_path_read, ng_path_vread,
 * ng_path_read_u64) to *cost. Listings and stat(2)s are not counted. Free it
 * with ng_path_free(); *cost must outlive it. Returns 0 or -ENOMEM.
 */
int ng_path_new_counting(const struct ng_path *p, struct ng_path_cost *cost, struct ng_path **ret);

/* Live host only (-EOPNOTSUPP under a root prefix): opens a regular file
 * read-only to ask it where its pages are, never blocking (a FIFO is
 * -EINVAL), following no symlink unless follow (/proc/PID/map_files links
 * must be followed). Returns the descriptor or -errno. */
int ng_path_open_segment(const struct ng_path *p, bool follow, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The path layer's library-internal part: counting what reads cost. Not
 * installed. */

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

#pragma GCC visibility pop

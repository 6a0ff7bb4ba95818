/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Tier 1 of the cost model: where a mapping's pages are, from move_pages(2)
 * asked about K addresses of one process -- no page-table walk, no fault,
 * no allocation (nodes == NULL only queries). struct ng_sample and
 * ng_move_pages_fn are in ng-kernel.h. Internal to the library: not
 * installed.
 */

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

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

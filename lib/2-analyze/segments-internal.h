/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by segments.c (the list of segments) and segments-place.c (where
 * their pages sit). Not installed. */

#include "ng-segments.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct builder {
        const struct ng_snapshot *s;
        struct ng_segment *v;
        size_t n, cap;
};

/* Places every segment of b: 0 or -ENOMEM. */
int ng_segments_place(struct builder *b);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by act-cpuset-plan.c (the plan, the values in effect) and
 * act-cpuset.c (applying it). Not installed. */

#include <stdbool.h>

#include "ng-act-cpuset.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* A formatted list; longer than a struct ng_write value can hold is refused. */
struct list_str {
        char s[256];
};

struct list_str ng_cpuset_list_s(const struct ng_bitmap *b);
/* The value in effect: the file, or on v2 when it is empty, the effective one. */
int ng_cpuset_read_current(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_cpuset_plan *plan,
                           bool mems, struct ng_bitmap *ret);

#pragma GCC visibility pop

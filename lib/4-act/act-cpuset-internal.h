/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by act-cpuset-plan.c (the plan, the values in effect) and
 * act-cpuset.c (applying it). Not installed. */

#include <stdbool.h>

#include "ng-act-cpuset.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* SetUnitProperties(unit, runtime=false, [AllowedCPUs (cpus), AllowedMemoryNodes
 * (mems)]) on bus (an sd_bus * to the manager); NULL leaves one out.
 * 0 or -errno (the manager's error mapped by sd-bus). */
int ng_unit_bus_set(void *bus, const char *unit, const struct ng_bitmap *cpus, const struct ng_bitmap *mems);

/*
 * Pure: text with the cgconfig group's cpuset values set to cpus/mems (NULL:
 * leave that one), everything else byte for byte as it was. Each change is
 * recorded as an NG_WRITE_CONFIG_LINE in res (path "file:LINE") when res is
 * not NULL. Returns 0 with *ret malloc'd, -ENOENT when the group is not in
 * text, -ENODATA when it has no cpuset block, -EINVAL when text does not
 * parse, -ENOMEM.
 */
int ng_cgconfig_edit(const char *text, const char *file, const char *group, const struct ng_bitmap *cpus,
                     const struct ng_bitmap *mems, struct ng_action_result *res, char **ret);

/* A formatted list; longer than a struct ng_write value can hold is refused. */
struct list_str {
        char s[256];
};

struct list_str ng_cpuset_list_s(const struct ng_bitmap *b);
/* The value in effect: the file, or on v2 when it is empty, the effective one. */
int ng_cpuset_read_current(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_cpuset_plan *plan,
                           bool mems, struct ng_bitmap *ret);

#pragma GCC visibility pop

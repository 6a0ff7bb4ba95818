/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The cgroups of the processes, as the snapshot holds them
 * (collect-cgroups.c): where the cpuset controller lives, each cgroup's
 * cpusets and, where hugetlb pages are charged, its memory and hugetlb
 * limits. Who restores a cpuset is owners/'s. Not installed.
 */

#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* After the processes: the cpuset cgroup of each, read once. 0 or
 * -ENOMEM. */
int ng_collect_cgroups(struct collector *c);

#pragma GCC visibility pop

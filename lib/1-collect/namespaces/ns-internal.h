/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the files of namespaces/: a namespace link read (ns-read.c),
 * the container a process's cgroups name (ns-container.c). Not installed;
 * the rest of collect uses namespaces.h. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "namespaces.h"
#include "ng-path.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/*
 * Namespaces (ns-read.c). A link's text ("ipc:[4026531839]" of
 * /proc/PID/ns/ipc) into buf: live by readlink(2), in a tree from the
 * regular file that the snapshot made of it. 0, -ENOENT, -ENAMETOOLONG or
 * -errno.
 */
int ng_path_read_link(const struct ng_path *p, char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* ns-container.c: the container named by a process's cgroups (v2 first,
 * then cpuset, memory, pids, name=systemd of v1). 0 or -ENOENT. */
struct ng_pid_cgroup;
struct ng_container;
int ng_container_of_cgroups(const struct ng_pid_cgroup *cg, struct ng_container *ret);

#pragma GCC visibility pop

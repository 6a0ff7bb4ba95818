/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The namespaces a database lives in (docs/ARCHITECTURE.md, "Namespaces"):
 * ns-read.c reads their links and the System V table of an IPC namespace,
 * ns-collect.c scans each namespace that holds a watched process once. Not
 * installed. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
/*
 * The System V shared memory table of IPC namespace ns (the inode of
 * /proc/pid/ns/ipc), which /proc/sysvipc/shm shows only to a reader inside
 * it: live, read by a short-lived thread that joins the namespace
 * (setns(2), CAP_SYS_ADMIN), after checking that pid is still in ns
 * (-ESTALE otherwise); in a tree, and for the recorder, the file
 * NG_PATH_IPC_NS_DIR/<ns>/sysvipc/shm. 0 or -errno (-EPERM: not allowed).
 */
int ng_path_read_ipc_ns(const struct ng_path *p, pid_t pid, uint64_t ns, char **ret_buf, size_t *ret_len);
/* How many reader threads ng_path_read_ipc_ns() has started in this
 * process so far: each took a pid from the kernel, which the picture's
 * "nothing started since the listing" witness (picture.c) counts out. */
uint64_t ng_ns_readers_started(void);

/* ns-container.c: the container named by a process's cgroups (v2 first,
 * then cpuset, memory, pids, name=systemd of v1). 0 or -ENOENT. */
struct ng_pid_cgroup;
struct ng_container;
int ng_container_of_cgroups(const struct ng_pid_cgroup *cg, struct ng_container *ret);

/* A file read live without telling the recorder, for the caller to record
 * only what it keeps of it (a runtime's container file holds its
 * environment); in a tree, the file as recorded. 0 or -errno. */
int ng_path_read_unrecorded(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *rel);

#pragma GCC visibility pop

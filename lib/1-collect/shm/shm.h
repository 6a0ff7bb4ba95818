/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The shared memory a snapshot holds that no process is asked for: the
 * System V table (collect-shm.c), the mounts and the /dev/shm and
 * hugetlbfs files (collect-shm.c, collect-shm-record.c, collect-unlisted.c,
 * the picture's copy of their listings in collect-shm-cache.c), and the
 * same of every other IPC and mount namespace a watched process lives in
 * (shm-namespaces.c). In the order ng_snapshot_collect() calls them. Not
 * installed; what only shm/ shares is in shm-internal.h.
 */

#include <stdbool.h>
#include <stddef.h>

#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* The System V table of numaguard's own IPC namespace (/proc/sysvipc/shm). */
int ng_collect_sysvipc(struct collector *c);
/* The mounts (numaguard's mountinfo) and the files of those that hold
 * segments: /dev/shm and every hugetlbfs. */
int ng_collect_mounts(struct collector *c);
int ng_collect_files(struct collector *c);
/* After the processes: the System V table and the /dev/shm and hugetlbfs
 * files of every other namespace a process lives in (shm-namespaces.c). */
int ng_collect_namespaces(struct collector *c);
/* After the processes and namespaces: the files under min_file_bytes that
 * no process maps leave s->files for their mount's count. 0 or -ENOMEM. */
int ng_collect_files_fold(struct collector *c);
/* After the processes: a SysV segment mapped without a row, or without a
 * table, is a problem. */
void ng_collect_sysvipc_check(struct collector *c);
/* What c->shm_scans hold, and c->shm_scans. */
void ng_collect_scans_free(struct collector *c);

#pragma GCC visibility pop

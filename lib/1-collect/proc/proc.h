/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The processes (collect-proc.c): one read in full (stat, status, cmdline,
 * cgroup, maps, threads, namespaces), every one of /proc read so, and the
 * records a snapshot holds: shared between a picture's snapshots, or a
 * snapshot's own copy. Not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-snapshot.h"
#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* A process record as the library allocates it: the public part first (a
 * record's address is its rec's), then what only the library sees. Every
 * record of a snapshot is one (ng_proc_alloc(), or a picture's entry). */
struct proc_rec {
        struct ng_proc pr;
        /* Set when cmdline, cgroup and the status's CPU and node sets are
         * shared, counted and never modified, between this record and
         * others of the same process (the process picture a daemon keeps
         * and the snapshots of its polls); ng_proc_done() releases them.
         * NULL: the record owns them. */
        struct ng_proc_hold *held;
        /* The collection of a picture that last read its stat and its
         * threads' (ng_picture_set_read_budget: a poll may leave them as
         * read some polls before); 0 outside a picture, or for a process
         * that maps no segment. */
        uint64_t cpu_read_seq;
        /* Held by a process picture and handed to each of its snapshots
         * while the process is unchanged: such a snapshot neither frees
         * the record nor changes it (it takes its own copy first). */
        bool shared;
};

static inline struct proc_rec *proc_rec_of(const struct ng_proc *pr)
{
        return (struct proc_rec *) pr;
}

/* A zeroed record, or NULL; freed with ng_proc_release() and free(). */
struct ng_proc *ng_proc_alloc(void);

/* 1 when the process was read, 0 when it is a kernel thread or went away
 * mid-read, <0 on a real error. */
int ng_collect_read_proc(struct collector *c, pid_t pid, struct ng_proc *pr);
/* Reads pid's status into *ret (free it with ng_pid_status_done()): 1
 * done, 0 gone or unreadable (*ret untouched), <0 on a real error. */
int ng_collect_read_status(struct collector *c, pid_t pid, struct ng_pid_status *ret);
int ng_collect_read_stat(struct collector *c, pid_t pid, struct ng_pid_stat *ret);
/* pr's real and effective uid read again (its status), after what it was
 * asked for a segment (its map_files links, its page tables): one that may
 * speak for a segment now could not have been another user's to drive
 * since its status was first read, before its maps (speakers.c). Gone or
 * unreadable: NG_UID_UNKNOWN, it speaks for nothing. pr must be c->s's own
 * record (ng_snapshot_own_proc). 0, or -ENOMEM. */
int ng_collect_reread_uids(struct collector *c, struct ng_proc *pr);
/* Appends a copy of *pr (taking what it owns) to s->procs, *cap its room. */
int ng_collect_add_proc(struct ng_snapshot *s, size_t *cap, const struct ng_proc *pr);
/* Releases what pr owns or holds; ng_proc_done() also clears it. */
void ng_proc_release(struct ng_proc *pr);
void ng_proc_done(struct ng_proc *pr);
/* Makes pr's cmdline, cgroup and status sets shared with the records
 * ng_proc_copy_shared() makes of it, counted and never modified: pr and
 * every copy release them with ng_proc_done(). A cgroup list equal to that
 * of like (a shared record, or NULL) is like's, held once more. 0 or
 * -ENOMEM. */
int ng_proc_share(struct ng_proc *pr, const struct ng_proc *like);
/* *src with its shared parts held once more, without maps or numa_maps. */
void ng_proc_copy_shared(const struct ng_proc *src, struct ng_proc *dst);
bool ng_map_is_segment(const struct ng_map *m);
/* Whether pr maps a segment: a database process, whose threads count. */
bool ng_proc_maps_segment(const struct ng_proc *pr);
/* Reads pr's threads into pr->tasks (left empty for one thread, or when
 * task/ cannot be read). 0, or -ENOMEM. */
int ng_collect_read_tasks(struct collector *c, struct ng_proc *pr);
/* Every user process of /proc, each read in full, into c->s->procs (a
 * collection without a picture). 0 or -errno. */
int ng_collect_procs(struct collector *c);
/* After the processes: a process whose maps hold a line that does not
 * parse is a problem (its segments are unknown). */
void ng_collect_maps_check(struct collector *c);
/* A record of its own (shared false) copied from a picture's (its held
 * set): maps and threads copied, no numa_maps. 0 or -ENOMEM. */
int ng_proc_copy_own(const struct ng_proc *src, struct ng_proc *dst);
/* s->procs[i] made s's own when it is a picture's shared record, before s
 * changes it. 0 or -ENOMEM. */
int ng_snapshot_own_proc(struct ng_snapshot *s, size_t i);

#pragma GCC visibility pop

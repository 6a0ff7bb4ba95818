/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the picture's own files: picture.c (collecting through the
 * picture), picture-diff.c (its change detection), picture-gen.c (how long
 * its records live), picture-cpu.c (CPU time by turns) and proc-events.c
 * (the kernel's process events). Not installed; the rest of collect uses
 * picture.h. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "picture.h"
#include "proc.h"
#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* proc-events.c: the kernel's process events (live host only). */
struct ng_pid_touch {
        pid_t pid;
        bool exited;            /* this event was its exit */
        size_t seq;             /* the order the kernel sent them in */
};
struct ng_pid_set {
        struct ng_pid_touch *v; /* in the order the kernel sent them */
        size_t n, cap;
};
struct ng_proc_events;
/* 0, or -errno when the kernel does not deliver them to this process:
 * -ECONNREFUSED in another network namespace, -ETIMEDOUT outside the
 * initial user and pid namespaces (no answer), -EPERM without CAP_NET_ADMIN
 * on older kernels, -EAFNOSUPPORT where AF_NETLINK is filtered. */
int ng_proc_events_open(struct ng_proc_events **ret);
void ng_proc_events_free(struct ng_proc_events *ev);
/* The processes born, exec()ed, renamed, exited or given another uid or gid
 * since the last call, in *touched (replaced; may repeat). -ENOBUFS when
 * events were lost meanwhile (then *touched is incomplete). */
int ng_proc_events_drain(struct ng_proc_events *ev, struct ng_pid_set *touched);
/* One datagram the kernel sent (buf aligned to NLMSG_ALIGNTO, len bytes):
 * 1 when it names a process, appended to *touched; 0 when it names none of
 * ours (a thread's event, another kind, short or not the proc connector's);
 * -ENOMEM. */
int ng_proc_events_parse(const void *buf, size_t len, struct ng_pid_set *touched);

/*
 * One process as last read. Its cmdline, cgroup and status sets are shared
 * with the snapshots made from it (ng_proc_share) and never modified once
 * read: snapshots of earlier polls may still hold them, on another thread.
 *
 * A process with no maps (most of them) is handed to each snapshot as pr
 * itself, not a copy: once handed over, pr is never modified, and an entry
 * the picture lets go of lives on until every snapshot that may point at it
 * is freed (struct ng_proc_gen). A change is a new entry. A process with
 * maps has its pr updated in place, and is handed as a copy (handed): the
 * same copy to each snapshot while pr is unchanged (thousands of attachers
 * of one SGA, read by turns, are), a new one after a change, the old one
 * retired as entries are. A snapshot that annotates a record (the
 * placement of a representative, a page size carried over) takes its own
 * copy first (ng_proc_copy_own).
 */
struct pic_rec {
        union {
                struct proc_rec rec;    /* rec.shared set */
                struct ng_proc pr;      /* rec.pr */
        };
        struct pic_rec *next_retired;   /* in ng_proc_gen.retired_recs */
};

struct pic_ent {
        /* First, on one cache line with pr.pid: a poll walks every entry. */
        uint64_t ino;           /* of /proc/PID at the last listing */
        bool kept;              /* a user process; else a kernel thread or unreadable */
        bool fresh;             /* read in full by this collection */
        bool mapped;            /* pr.n_maps > 0: something a poll may look at again */
        bool holds;             /* ng_proc_maps_segment(&pr), as pr's maps never change */
        union {
                struct proc_rec rec;
                struct ng_proc pr;      /* rec.pr: pid and stat set for every entry */
        };
        struct pic_rec *handed; /* pr as the last snapshots got it, or NULL */
        struct pic_ent *next_retired;   /* in ng_proc_gen.retired */
};

/*
 * What keeps let-go entries alive. Each collection through the picture
 * hands its snapshot a new generation; an entry the picture lets go of
 * while building the next one joins the current generation's retired list.
 * A generation holds a reference on the next newer one, so it is freed
 * (with its retired entries) only once its own snapshot, the picture (while
 * it is current) and every older generation, so every older snapshot, are
 * gone: no snapshot that may point at a retired entry is left.
 */
struct ng_proc_gen {
        unsigned refs;                  /* atomic */
        struct ng_proc_gen *newer;      /* a reference held, or NULL */
        struct pic_ent *retired;
        struct pic_rec *retired_recs;
};

/* What /proc/sysvipc/shm said of a segment at the last collection. */
struct pic_seg {
        int32_t shmid;
        uint64_t nattch;
        pid_t lpid;
        int64_t atime, dtime;
        /* nattch minus the attachments the picture's maps show, as of the
         * last full scan: attachers in other pid namespaces or unreadable. */
        int64_t hidden;
};

/* What says whether a process or thread started or ended between two
 * collections: of /proc/loadavg the threads that exist and the last pid
 * handed out, and how many reader threads of its own this process had
 * started by then (ng_ns_readers_started(), read before the file). */
struct ng_pid_witness {
        uint64_t threads, last_pid, own;
};

/* Quiet between was and now: the same number of threads, and every pid
 * handed out since went to a reader thread of this process or, when
 * caller (live: the collecting thread's id; 0 in a tree) is the last one,
 * to the collecting thread itself. */
bool ng_pid_witness_quiet(const struct ng_pid_witness *was, const struct ng_pid_witness *now, uint64_t caller);

struct ng_picture {
        struct pic_ent **v;     /* pid order; entries move between polls, not copied */
        size_t n;
        struct ng_proc_gen *gen;        /* of the last snapshot handed out, or NULL */
        struct pic_seg *segs;   /* shmid order */
        size_t n_segs;
        uint64_t files_sig;
        unsigned full_scan_every, since_full;
        bool valid;
        /* ng_collect_opts.all_namespaces of the last collection: records
         * read without it lack their namespaces, so a change reads every
         * process again. */
        bool all_namespaces;
        struct ng_proc_events *events;  /* NULL: not available, see events_errno */
        int events_errno;
        bool events_tried;
        bool events_new;        /* opened by this collection: they say nothing of before */
        struct ng_pid_set touched;
        /* /proc/loadavg at the last collection that listed /proc. */
        bool witness_ok;
        struct ng_pid_witness witness;
        struct ng_picture_stats stats;
        uint64_t seq;           /* collections begun: proc_rec.cpu_read_seq */
        /* Reads by turns: of the processes that map a segment, how many a
         * collection reads the CPU time (picture-cpu.c) and the status
         * counters (picture.c) of (0: all), and the pid of the last one
         * read by turn of each. */
        unsigned read_budget;
        pid_t cpu_cursor, counters_cursor;
        /* What the last listing of each /dev/shm and hugetlbfs mount found
         * (shm/collect-shm-cache.c), and what frees it. */
        struct shm_cache *shm_cache;
        void (*free_shm_cache)(struct shm_cache *cache);
};

/* picture-gen.c: an entry let go of by the picture (freed once no
 * snapshot can point at it); _all frees v too. */
void ng_picture_retire(struct ng_picture *pic, struct pic_ent *e);
void ng_picture_retire_all(struct ng_picture *pic, struct pic_ent **v, size_t n);
struct ng_proc_gen *ng_picture_next_gen(struct ng_picture *pic);
/* e->pr changed in place: its handed copy no longer serves (retired). */
void ng_picture_changed(struct ng_picture *pic, struct pic_ent *e);

bool ng_picture_counters_move(const struct ng_proc *pr, uint64_t min_bytes);
bool ng_picture_pid_in(const pid_t *v, size_t n, pid_t pid);
int ng_picture_diff_segments(struct ng_picture *pic, const struct ng_snapshot *s, bool full,
                             struct pic_seg **ret, pid_t **ret_want, size_t *ret_n_want);
/* picture-cpu.c: reads the stat and threads of the segment holders whose
 * turn it is (the new and changed ones were read in full), marks what was
 * read with pic->seq and says in s how often each holder is read. */
int ng_picture_read_cpu(struct ng_picture *pic, struct collector *c, struct pic_ent **v, size_t n);
bool ng_picture_attachments_match(struct pic_seg *segs, size_t n_segs, struct pic_ent *const *v, size_t n,
                                  bool full);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the collector's files: collect.c (the entry points) and the
 * collect-*.c parts it calls, picture.c and collect-proc.c. Not installed. */

#include <stdarg.h>

#include "ng-snapshot.h"
#include "path.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* A segment tier 1 asked of itself (collect-whole.c): a SysV segment is
 * its shmid on the kernel's internal mount, a file its device and inode. */
struct ng_seg_key {
        bool sysv, sampled;     /* sampled false: tried, hugetlb */
        unsigned major, minor;
        uint64_t inode;
        uint64_t ipc_ns;        /* a SysV segment's IPC namespace */
};

struct collector {
        const struct ng_path *p;
        /* p, counting what the collector's reads cost: every file the
         * snapshot reads goes through it (ng_collect_vread(), or the path
         * layer's readers directly). */
        const struct ng_path *reads;
        struct ng_path_cost cost;
        struct ng_collect_opts o;
        struct ng_snapshot *s;
        pid_t current_pid;      /* whose files are being read, 0 for the host's */
        struct ng_seg_key *whole;       /* segments asked of themselves */
        size_t n_whole, n_whole_sorted; /* the first n_whole_sorted sorted (collect-whole.c) */
        bool sysvipc_missing;   /* no /proc/sysvipc/shm (numaguard's own namespace) */
        /* The entries of /dev/shm and hugetlbfs mounts looked at, at most
         * NG_SHM_MAX_EXAMINED; each mount scanned (s->unlisted[i]); and
         * the signature of their files' names (ng_picture's files_sig). */
        size_t shm_examined;
        struct shm_scan *shm_scans;
        uint64_t files_sig;
};

/* ---- /dev/shm and hugetlbfs mounts (collect-shm.c, collect-unlisted.c,
 * collect-shm-cache.c) ---- */

/* A directory of a mount as it was listed. */
struct shm_dir {
        char *path;             /* as its mount namespace sees it */
        uint64_t dev, ino, size;        /* tmpfs: its size counts its entries */
        int64_t mtime_ns, ctime_ns;
};

/* A file counted, not listed (under min_file_bytes, mapped by nobody). */
struct shm_small {
        uint64_t inode;
        char *path;
        uint64_t size_bytes, allocated_bytes;
};

struct shm_cached;

/* One mount scanned, s->unlisted[i] and its files s->files[from..to). */
struct shm_scan {
        size_t from, to;
        char prefix[48];        /* its files' paths are read under it */
        enum ng_shm_file_kind kind;     /* and are of this kind, page size */
        uint64_t page_kib;
        enum ng_shmem_huge huge;        /* the mount's huge= (tmpfs) */
        pid_t ns_pid;
        uint64_t sig;           /* FNV-1a of the names of its files */
        size_t budget;          /* c->shm_examined before it */
        size_t examined;        /* entries it looked at */
        uint32_t top_uid;       /* owns top_owned of its n_examined_files files, the most */
        size_t top_owned, n_examined_files;
        /* For the picture's copy (collect-shm-cache.c): a live listing
         * whose directories are all stamped (not changed in the last
         * moments) on a file system whose use in bytes is known. */
        bool stamped;
        uint64_t used_bytes;
        struct shm_dir *dirs;
        size_t n_dirs;
        struct shm_small *small;        /* what ng_collect_files_fold() counted */
        size_t n_small;
        /* Served by the picture's copy of the last listing, not listed. */
        struct shm_cached *cached;
};

/* Reads a file through c->reads (which counts it); calls the progress
 * hook first. */
int ng_collect_vread(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
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

/* picture.c: the processes of c->s from the picture, reading only what may
 * have changed since the last collection (or everything, see ng-picture.h). */
int ng_picture_collect_procs(struct ng_picture *pic, struct collector *c);
/* Lets go of a snapshot's hold on the picture's records (NULL: nothing). */
void ng_proc_gen_unref(struct ng_proc_gen *g);
/* A record of its own (shared false) copied from a picture's (src->held
 * set): maps and threads copied, no numa_maps. 0 or -ENOMEM. */
int ng_proc_copy_own(const struct ng_proc *src, struct ng_proc *dst);
/* s->procs[i] made s's own when it is a picture's shared record, before s
 * changes it. 0 or -ENOMEM. */
int ng_snapshot_own_proc(struct ng_snapshot *s, size_t i);

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

/* ---- collect-read.c: the shared readers ---- */

/* ng_collect_vread() with the arguments inline. */
int ng_collect_read(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Records a problem with a file of the tree (path relative to its root). */
void ng_collect_problem(struct collector *c, const char *path, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The same with what to do about it, where that is not to check the file. */
void ng_collect_problem_advice(struct collector *c, const char *path, const char *advice, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* A tree's NG_PATH_INCOMPLETE_FILE: each file the snapshot could not take
 * is a problem naming it (nothing on the live host). 0, or -ENOMEM. */
int ng_collect_incomplete(struct collector *c);
/* Reads a list file ("0-3"); an absent file leaves *ret empty, one that
 * does not parse too, with a problem naming it. */
int ng_collect_read_list(struct collector *c, struct ng_bitmap *ret, const char *path);
void ng_collect_read_meminfo(struct collector *c, struct ng_meminfo *m, bool *has, bool must_exist,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- the parts of ng_snapshot_collect(), in the order it calls them ---- */

/* collect-topology.c */
int ng_collect_memory(struct collector *c);
int ng_collect_topology(struct collector *c);
void ng_collect_knobs(struct collector *c);

/* collect-hmat.c: nd's HMAT access classes and memory-side caches (absent
 * ones leave them unknown). 0, or -errno on a real error. */
int ng_collect_node_hmat(struct collector *c, struct ng_node *nd);

/* collect-tiers.c: each node's socket and memory tier, the tiers and
 * whether demotion is on (absent ones unknown). 0, or -errno. */
int ng_collect_tiers(struct collector *c);
/* The kernel features (enum ng_feature), after the topology and knobs;
 * the promo watermark's from the /proc/zoneinfo the topology reads (NULL:
 * unreadable). */
void ng_collect_features(struct collector *c);
/* A feature's state and detail. */
void ng_feature_set(struct ng_topology *t, enum ng_feature f, enum ng_feature_state st, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* true when r, the result of reading or listing path, is a success; else
 * the feature is absent (-ENOENT) or unknown (why), and false. */
bool ng_feature_found(struct ng_topology *t, enum ng_feature f, const char *path, int r);
/* Appends ", word" (or "word" first) to buf, silently cut at its end. */
void ng_feature_add_word(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ng_collect_features_zoneinfo(struct ng_topology *t, const char *zoneinfo);
/* collect-shm.c */
int ng_collect_sysvipc(struct collector *c);
/* After the processes: a SysV segment mapped without a row, or without a
 * table, is a problem. */
void ng_collect_sysvipc_check(struct collector *c);
/* A row of the SysV table at path (a tree's file of it) that is listed
 * twice, cannot be true or did not parse in full: a problem naming it, and
 * the row made unknown where its size cannot be. */
void ng_collect_shm_row_check(struct collector *c, const char *path, struct ng_shm_seg *sh);
/* After the processes: a process whose maps hold a line that does not
 * parse is a problem (its segments are unknown). */
void ng_collect_maps_check(struct collector *c);
int ng_collect_mounts(struct collector *c);
int ng_collect_files(struct collector *c);
/* Whether mount i of v (a mountinfo) holds files that are segments: /dev/shm
 * or a hugetlbfs, not hidden by one mounted later on the same mountpoint. */
bool ng_mount_holds_segments(const struct ng_mount *v, size_t n, size_t i);
/* Adds m's files to c->s->files, listed under prefix ("" for numaguard's
 * mount namespace, "/proc/PID/root" for mnt_ns through ns_pid). */
int ng_collect_mount_files(struct collector *c, const struct ng_mount *m, const char *prefix, uint64_t mnt_ns,
                           pid_t ns_pid);
/* collect-shm-record.c: a snapshot's record of m's files s->files[from..]
 * (what stat said of each: its tree's copies are empty) */
int ng_shm_record_files(struct collector *c, const struct ng_mount *m, size_t from);
/* A tree: s->files[from..] made what its snapshot's record says (the
 * files it does not name dropped). 1 done, 0 no record, or -ENOMEM. */
int ng_shm_replay_files(struct collector *c, const struct ng_mount *m, const char *prefix, size_t from);
/* An older tree: its files' owners, from its record of them. 0 or -ENOMEM. */
int ng_shm_replay_owners(struct collector *c, const struct ng_mount *m, size_t from);
/* collect-unlisted.c: what mount i of c->s->unlisted holds past the
 * entries a collection examines, kept by a snapshot's record and replayed
 * from it, is a problem naming the mount and the uid owning most of its
 * files. 0 or -ENOMEM. */
int ng_collect_unexamined(struct collector *c, size_t i);
/* After the processes and namespaces: the files under min_file_bytes that
 * no process maps leave s->files for their mount's count. 0 or -ENOMEM. */
int ng_collect_files_fold(struct collector *c);
/* What c->shm_scans hold, and c->shm_scans. */
void ng_collect_scans_free(struct collector *c);

/* collect-shm-cache.c: the picture's copy of what the last listing of
 * each mount found (live host), so that a collection stats the files it
 * lists and not every file it counted while nothing changed there: no
 * directory listed (its times and size), no byte more or less held by the
 * files it did not list (the file system's use, less what those it lists
 * hold), and not the full_scan_every-th collection since the listing. */
struct shm_cache;
/* Whether listings are copied (a live collection through a picture that
 * counts small files, no snapshot being taken), and whether a copy may
 * serve this collection. */
bool ng_shm_cache_wanted(const struct collector *c);
bool ng_shm_cache_usable(const struct collector *c);
/* Bytes in use on the file system of prefix+dir: -EOPNOTSUPP when it has
 * no size limit (tmpfs size=0, hugetlbfs without size=). */
int ng_shm_fs_used(struct collector *c, const char *prefix, const char *dir, uint64_t *ret_bytes);
/* The copy of u's mount, when its directories are as they were listed
 * (sc->used_bytes then set), else NULL. */
struct shm_cached *ng_shm_cache_find(struct collector *c, const struct ng_shm_unlisted *u, struct shm_scan *sc);
size_t ng_shm_cache_n_kept(const struct shm_cached *k);
/* The path of the i-th file the copy lists, and its inode. */
const char *ng_shm_cache_kept(const struct shm_cached *k, size_t i, uint64_t *ret_inode);
/* The copy serves u and sc when its files not listed hold what they held
 * (kept_allocated: the bytes of those listed, now): counts, signature and
 * entries examined set; false when it cannot. */
bool ng_shm_cache_use(struct collector *c, struct shm_cached *k, struct ng_shm_unlisted *u, struct shm_scan *sc,
                      uint64_t kept_allocated);
/* A file the copy counted, by inode, or NULL. */
const struct shm_small *ng_shm_cache_small(const struct shm_cached *k, uint64_t inode);
/* Not to serve again: the mount is listed by the next collection. */
void ng_shm_cache_drop(struct shm_cached *k);
/* After ng_collect_files_fold(): the copies of the mounts listed (sc's
 * directories and counted files taken), and those of mounts no longer
 * there let go. 0 or -ENOMEM. */
int ng_shm_cache_store(struct collector *c);
void ng_shm_cache_free(struct shm_cache *cache);
/* collect-placement.c */
int ng_collect_procs(struct collector *c);
int ng_collect_placement(struct collector *c);
int ng_collect_pidfiles(struct collector *c);
void ng_collect_libnuma(struct collector *c);
/* dbconf/dbconf.c: the hugepage settings of each PostgreSQL postmaster. */
int ng_collect_db_settings(struct collector *c);
/* collect-whole.c: adds a copy of *smp to s->samples. */
int ng_collect_add_sample(struct ng_snapshot *s, const struct ng_sample *smp);
/* collect-whole.c: tier 1 (or 2, exact) asked of each shmem segment
 * itself; live host only. */
int ng_collect_whole(struct collector *c, bool exact);
/* What a snapshot can replay of tier 1 (collect-whole.c): live, the /dev/shm
 * files no process maps are asked of themselves (sampled) and their answer
 * recorded in the tree; under a root prefix, those answers replayed. 0 or
 * -ENOMEM. */
int ng_collect_whole_kept(struct collector *c);
/* Whether the mapping's segment was sampled that way. */
bool ng_collect_whole_done(const struct collector *c, bool sysv, uint64_t ipc_ns, unsigned major, unsigned minor,
                           uint64_t inode);
/* collect-cgroups.c */
int ng_collect_cgroups(struct collector *c);
/* namespaces/ns-collect.c: numaguard's own namespaces into c->s, read
 * before anything is matched against them. */
void ng_collect_own_ns(struct collector *c);
/* namespaces/ns-creds.c: numaguard's own credentials into c->s->self
 * (live host), and for a process whose maps were refused the facts that
 * say why (ng_proc.userns_other, lsm_label). */
void ng_collect_own_creds(struct collector *c);
void ng_collect_refusal(struct collector *c, struct ng_proc *pr);
/* Reads pr's IPC and mount namespaces (numaguard's where unreadable). */
void ng_collect_proc_ns(struct collector *c, struct ng_proc *pr);
/* After the processes: the SysV table of every other IPC namespace and the
 * /dev/shm and hugetlbfs files of every other mount namespace that holds
 * one of them whose namespaces were read, each namespace once. */
int ng_collect_namespaces(struct collector *c);
/* namespaces/ns-names.c: the containers of the processes in namespaces of
 * their own, named by their runtimes' files, into c->s->containers. */
int ng_collect_containers(struct collector *c);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the files of shm/: the mounts scanned and their files, the
 * snapshot's record of them, the counted ones, the picture's copy of a
 * listing. Not installed; the rest of collect uses shm.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-snapshot.h"
#include "reader.h"
#include "shm.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

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

/* collect-shm.c */
/* A row of the SysV table at path (a tree's file of it) that is listed
 * twice, cannot be true or did not parse in full: a problem naming it, and
 * the row made unknown where its size cannot be. */
void ng_collect_shm_row_check(struct collector *c, const char *path, struct ng_shm_seg *sh);
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

#pragma GCC visibility pop

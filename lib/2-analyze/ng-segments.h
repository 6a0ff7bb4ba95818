/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared memory segments found in a snapshot, with their placement per node.
 * Pure: built from a const snapshot, no I/O.
 */

#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ng_seg_kind {
        NG_SEG_SYSV,            /* shmget(); 4 KiB or SHM_HUGETLB */
        NG_SEG_FILE,            /* /dev/shm (Oracle AMM, PostgreSQL DSM) or hugetlbfs file */
        NG_SEG_ANON_SHARED,     /* MAP_SHARED|MAP_ANONYMOUS (PostgreSQL main segment) */
        NG_SEG_PRIVATE,         /* large private anonymous heap (InnoDB buffer pool) */
};

enum ng_method {
        NG_METHOD_NONE,         /* nobody maps it: placement unknown */
        NG_METHOD_COUNTERS,     /* totals only (sysvipc rss) */
        NG_METHOD_SAMPLED,      /* move_pages() on sampled addresses */
        NG_METHOD_EXACT,        /* the representative's numa_maps */
};

/* Where a segment's resident bytes, and the nodes of its pages, came from. */
enum ng_source {
        NG_SOURCE_NONE,         /* unknown */
        NG_SOURCE_SEGMENT,      /* the segment's own pages, mapped or not (tier 1 or 2 asked of it) */
        NG_SOURCE_COUNTER,      /* the kernel's count for the whole segment (/proc/sysvipc/shm rss) */
        NG_SOURCE_ATTACHER,     /* the pages one attacher (rep_pid) maps: its page tables only */
        NG_SOURCE_POOL,         /* per-node hugepage pool counters: the segment is all its pool holds */
        NG_SOURCE_COUNT_
};

struct ng_node_bytes {
        int node;
        uint64_t bytes;
};

/* When the kernel may fold a 4 KiB shmem segment's pages into
 * transparent hugepages of one size (ng_segment_thp()). */
enum ng_thp_when {
        NG_THP_WHEN_ALWAYS,             /* at any fault or write */
        NG_THP_WHEN_WITHIN_SIZE,        /* where the huge page lies within the segment's size */
        NG_THP_WHEN_ADVISED,            /* only in mappings madvise(MADV_HUGEPAGE) asked it of */
};

enum ng_thp_fold_state {
        NG_THP_FOLD_NOT_APPLICABLE = 0, /* no 4 KiB shmem: hugetlb pages, private memory */
        NG_THP_FOLD_KNOWN,              /* the sizes (none when there are none) */
        NG_THP_FOLD_UNKNOWN,            /* basis says what is not known */
};

/* What the kernel's per-size settings (hugepages-<N>kB/shmem_enabled,
 * Linux 6.11) had to do with it. */
enum ng_thp_per_size {
        NG_THP_PER_SIZE_NOT_APPLICABLE = 0,
        NG_THP_PER_SIZE_APPLIED,        /* anonymous shared memory, on a kernel that has them */
        NG_THP_PER_SIZE_NOT_USED,       /* the kernel has them; they are not for SysV or tmpfs files */
        NG_THP_PER_SIZE_ABSENT,         /* the kernel has none: the PMD size alone */
        NG_THP_PER_SIZE_UNKNOWN,        /* whether the kernel has them is unknown */
};

struct ng_thp_fold {
        enum ng_thp_fold_state state;
        struct {
                uint64_t page_kib;
                enum ng_thp_when when;
        } sizes[NG_MAX_THP_SIZES];      /* largest first */
        size_t n_sizes;
        enum ng_thp_per_size per_size;
        char basis[240];                /* the settings that decided it, or what is unknown */
};

/* A SysV segment whose attachers' maps lines name two devices. */
#define NG_SEG_DEV_CONFLICT UINT32_MAX

struct ng_segment {
        enum ng_seg_kind kind;
        char name[512];         /* "SYSV0052e2c1", "/dev/shm/ora_ORCL_1", "/dev/zero (deleted)" */
        int32_t shmid, key;     /* SysV only */
        uint32_t uid;
        uint64_t bytes;
        /* Its size could not be read (a garbage or missing row of
         * /proc/sysvipc/shm: a problem of the snapshot says why); bytes is
         * 0 and means nothing. */
        bool bytes_unknown;
        uint64_t page_kib;      /* 0 when unknown (nobody maps it) */
        bool huge;
        bool dest, locked;      /* SysV SHM_DEST / SHM_LOCKED */
        uint64_t nattch;        /* kernel's count for SysV, else pids mapping it */
        unsigned dev_major, dev_minor;  /* SysV: NG_SEG_DEV_CONFLICT when attachers disagree */
        uint64_t inode;
        pid_t *pids;            /* processes mapping it, pid order */
        size_t n_pids;
        /* Whose processes may speak for it (ng-snapshot.h, struct
         * ng_speakers), and those of pids that may not: their maps lines
         * (device, page size) and page tables are not taken for it, and
         * rep_pid is never one of them. pid order. */
        struct ng_speakers speakers;
        pid_t *untrusted;
        size_t n_untrusted;
        pid_t rep_pid;          /* whose mapping gave the placement, 0 if none */
        uint64_t rep_start;     /* address of the segment in rep_pid */
        enum ng_method method;
        uint64_t resident_bytes;
        struct ng_node_bytes *nodes;    /* node id order */
        size_t n_nodes;
        uint64_t allocated_bytes;       /* a file's pages, resident or swapped (st_blocks); 0 unknown */
        enum ng_source resident_source, placement_source;
        /* Share of resident_bytes whose node the placement source saw: 1
         * for the segment's own pages; for an attacher's page tables, what
         * it maps of the kernel's count (the rest is taken to sit like
         * it); negative when unknown. */
        double placement_coverage;
        /* Where it lives: a SysV segment's IPC namespace, a file's mount
         * namespace (inodes of /proc/PID/ns/ipc and ns/mnt), 0 unknown. A
         * SysV segment is its (ipc_ns, shmid), a file its (device, inode):
         * never a shmid or a path alone. */
        uint64_t ipc_ns, mnt_ns;
        /* Its namespace is not numaguard's own (a container's): messages
         * name it. */
        bool other_ns;
        /* The policy its new pages follow, asked of the segment itself
         * (live only: its shared policy, "default" when it has none,
         * "interleave:0-3"); "" unknown (a tree, a hugetlb segment: a
         * process's numa_maps shows its own policy where the segment has
         * none). */
        char policy[96];
        /* A tmpfs file's mount's huge= option (ng_shm_file.huge). */
        enum ng_shmem_huge tmpfs_huge;
        /* The page sizes the kernel may fold its pages into, for a 4 KiB
         * shmem segment (SysV, tmpfs file, anonymous shared). */
        struct ng_thp_fold thp;
};

int ng_segments_build(const struct ng_snapshot *s, struct ng_segment **ret, size_t *ret_n);
void ng_segments_free(struct ng_segment *v, size_t n);

const char *ng_seg_kind_name(enum ng_seg_kind k);
const char *ng_method_name(enum ng_method m);
/* "none", "segment", "counter", "attacher", "pool" */
const char *ng_source_name(enum ng_source src);
/* How messages name a segment: "shmid 5 (key 0x0052e2c1)" for SysV (keys
 * are often IPC_PRIVATE, shmids are unique within an IPC namespace), else
 * its name; with " in IPC namespace N" ("mount namespace") when it lives
 * in another namespace than numaguard's. */
const char *ng_segment_label(const struct ng_segment *seg, char *buf, size_t size);
/* True if mapping m of process pr is (a VMA of) the segment. */
bool ng_segment_maps(const struct ng_segment *seg, const struct ng_proc *pr, const struct ng_map *m);
/* Whether pr may speak for the segment (seg->speakers): the check collect
 * made of pr's mappings of it, with pr's uids as last read. */
bool ng_segment_may_speak(const struct ng_segment *seg, const struct ng_proc *pr);
/* Attached, and only by processes that may not speak for it: its placement
 * is unknown for that reason, unless the segment itself was asked. */
bool ng_segment_untrusted_only(const struct ng_segment *seg);
/* Whose processes may speak for it, for messages: "root", "root and uid
 * 54321", "root and uids 54321, 1001", "root (its owner is unknown)". */
const char *ng_segment_speakers_text(const struct ng_segment *seg, char *buf, size_t size);
/* Its untrusted attachers, for messages: "pid 2223", "pids 2223, 2224,
 * 2225 and 4 more". */
const char *ng_segment_untrusted_text(const struct ng_segment *seg, char *buf, size_t size);
/* Adds bytes to node in a node-ordered array, inserting the node if new.
 * 0 or -ENOMEM (array untouched). */
int ng_node_bytes_add(struct ng_node_bytes **v, size_t *n, int node, uint64_t bytes);
/* Resident bytes of the segments v[idx[0..n)] by where their placement
 * came from, ret[source] (saturating). */
void ng_segments_resident_by_source(const struct ng_segment *v, const size_t *idx, size_t n,
                                    uint64_t ret[NG_SOURCE_COUNT_]);
/* Bytes of the segment on node, 0 if none. */
uint64_t ng_segment_node_bytes(const struct ng_segment *seg, int node);

/* The page sizes the kernel may fold seg's 4 KiB pages into under the
 * settings s holds (the rules of mm/shmem.c, Linux 6.12; see
 * shmem-thp.c). ng_segments_build() sets seg->thp so. */
void ng_segment_thp(const struct ng_snapshot *s, const struct ng_segment *seg, struct ng_thp_fold *ret);
/* "always", "within_size", "advised"; "known", "unknown",
 * "not_applicable"; "applied", "not_used", "absent", "unknown",
 * "not_applicable". */
const char *ng_thp_when_name(enum ng_thp_when w);
const char *ng_thp_fold_state_name(enum ng_thp_fold_state st);
const char *ng_thp_per_size_name(enum ng_thp_per_size p);

#ifdef __cplusplus
}
#endif

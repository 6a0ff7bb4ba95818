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

struct ng_node_bytes {
        int node;
        uint64_t bytes;
};

struct ng_segment {
        enum ng_seg_kind kind;
        char name[512];         /* "SYSV0052e2c1", "/dev/shm/ora_ORCL_1", "/dev/zero (deleted)" */
        int32_t shmid, key;     /* SysV only */
        uint32_t uid;
        uint64_t bytes;
        uint64_t page_kib;      /* 0 when unknown (nobody maps it) */
        bool huge;
        bool dest, locked;      /* SysV SHM_DEST / SHM_LOCKED */
        uint64_t nattch;        /* kernel's count for SysV, else pids mapping it */
        unsigned dev_major, dev_minor;
        uint64_t inode;
        pid_t *pids;            /* processes mapping it, pid order */
        size_t n_pids;
        pid_t rep_pid;          /* whose mapping gave the placement, 0 if none */
        uint64_t rep_start;     /* address of the segment in rep_pid */
        enum ng_method method;
        uint64_t resident_bytes;
        struct ng_node_bytes *nodes;    /* node id order */
        size_t n_nodes;
};

int ng_segments_build(const struct ng_snapshot *s, struct ng_segment **ret, size_t *ret_n);
void ng_segments_free(struct ng_segment *v, size_t n);

const char *ng_seg_kind_name(enum ng_seg_kind k);
const char *ng_method_name(enum ng_method m);
/* How messages name a segment: "shmid 5 (key 0x0052e2c1)" for SysV (keys
 * are often IPC_PRIVATE, shmids are unique), else its name. */
const char *ng_segment_label(const struct ng_segment *seg, char *buf, size_t size);
/* True if mapping m of process pr is (a VMA of) the segment. */
bool ng_segment_maps(const struct ng_segment *seg, const struct ng_proc *pr, const struct ng_map *m);
/* Adds bytes to node in a node-ordered array, inserting the node if new.
 * 0 or -ENOMEM (array untouched). */
int ng_node_bytes_add(struct ng_node_bytes **v, size_t *n, int node, uint64_t bytes);
/* Bytes of the segment on node, 0 if none. */
uint64_t ng_segment_node_bytes(const struct ng_segment *seg, int node);

#ifdef __cplusplus
}
#endif

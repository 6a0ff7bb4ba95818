/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the kernel's files say, as the snapshot holds it: the structs the
 * parsers of kernel text fill (the parsers themselves are internal to the
 * library) and the queries on them. A tier-1 sample of a mapping's
 * placement is in ng-sample.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-bitmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- /proc/meminfo and /sys/devices/system/node/nodeN/meminfo ---- */

#define NG_MEMINFO_MAX_FIELDS 128
#define NG_MEMINFO_KEY_MAX 40

struct ng_meminfo_field {
        char key[NG_MEMINFO_KEY_MAX];
        uint64_t value;         /* kB when kib, else a count (HugePages_*) */
        bool kib;
};

struct ng_meminfo {
        size_t n;
        struct ng_meminfo_field f[NG_MEMINFO_MAX_FIELDS];
};

/* -ENOENT when the key is absent. */
int ng_meminfo_get(const struct ng_meminfo *m, const char *key, uint64_t *ret);
/* Value or 0 when absent. */
uint64_t ng_meminfo_value(const struct ng_meminfo *m, const char *key);

/* ---- /sys/devices/system/node/nodeN/access{0,1}, memory_side_cache ---- */

/* A performance figure of the firmware's HMAT the kernel did not give
 * (no such file, or the kernel's 0: the table had no value). */
#define NG_HMAT_UNKNOWN (-1)

/* The firmware's HMAT as the kernel exports it for a memory node: the
 * performance of its memory from its best initiators (access0: any
 * initiator, access1: CPUs only; Linux >= 5.2, access1 >= 5.10), in ns and
 * MB/s, NG_HMAT_UNKNOWN when not given. Only the best initiators are
 * exported: the cell from any other node is unknown. */
struct ng_hmat_access {
        bool present;                   /* the accessN/initiators directory exists */
        struct ng_bitmap initiators;    /* its initiators/nodeM links */
        int64_t read_latency_ns, write_latency_ns;
        int64_t read_bandwidth_mbps, write_bandwidth_mbps;
};
#define NG_HMAT_ACCESS_CLASSES 2

/* A memory-side cache in front of a node's memory (nodeN/memory_side_cache/
 * indexK): level K, NG_HMAT_UNKNOWN where a file is missing. */
struct ng_mem_cache {
        unsigned level;
        int64_t size_bytes, line_size_bytes;
        int64_t indexing;               /* 0 direct-mapped, 1 indexed, 2 other */
        int64_t write_policy;           /* 0 write-back, 1 write-through, 2 other */
};
#define NG_MAX_MEM_CACHES 4

/* ---- transparent_hugepage/shmem_enabled, tmpfs huge= ---- */

/* A shmem huge setting as the kernel names it (mm/shmem.c): the top-level
 * transparent_hugepage/shmem_enabled (always, within_size, advise, never,
 * deny, force), a size's hugepages-<N>kB/shmem_enabled (Linux 6.11: always,
 * inherit, within_size, advise, never) and a tmpfs mount's huge= (always,
 * within_size, advise, never; the kernel shows no huge= for never). */
enum ng_shmem_huge {
        NG_SHMEM_HUGE_UNKNOWN = 0,      /* not read, or no value the kernel prints */
        NG_SHMEM_HUGE_NEVER,
        NG_SHMEM_HUGE_ALWAYS,
        NG_SHMEM_HUGE_WITHIN_SIZE,
        NG_SHMEM_HUGE_ADVISE,
        NG_SHMEM_HUGE_INHERIT,
        NG_SHMEM_HUGE_DENY,
        NG_SHMEM_HUGE_FORCE,
};
/* "never", "always", ... ("unknown" for NG_SHMEM_HUGE_UNKNOWN); the name
 * back (NG_SHMEM_HUGE_UNKNOWN for any other word). */
const char *ng_shmem_huge_name(enum ng_shmem_huge h);
enum ng_shmem_huge ng_shmem_huge_from_name(const char *name);

/* ---- /proc/sysvipc/shm ---- */

#define NG_SHM_DEST 01000   /* segment marked for destruction (ipcrm'd, still attached) */
#define NG_SHM_LOCKED 02000 /* SHM_LOCK'ed */

struct ng_shm_seg {
        int32_t key;            /* printed as signed decimal by the kernel */
        int32_t shmid;
        uint32_t perms;         /* mode bits incl. NG_SHM_DEST/NG_SHM_LOCKED */
        uint64_t size_bytes;
        pid_t cpid, lpid;
        uint64_t nattch;
        uint32_t uid, gid, cuid, cgid;
        int64_t atime, dtime, ctime;
        uint64_t rss_bytes, swap_bytes;
        bool has_rss;           /* rss/swap columns exist (Linux >= 2.6.29) */
        /* Its key, shmid and mode parse but a later number does not (a
         * negative size, garbage): everything after the mode is unknown
         * and reads 0. */
        bool unknown;
        /* The rows after this one that list its shmid again (the kernel
         * lists it once): dropped, and this one unknown as above. */
        unsigned duplicates;
        /* The IPC namespace whose table lists it (the inode of a member's
         * /proc/PID/ns/ipc), 0 unknown: shmids are unique only within it. */
        uint64_t ipc_ns;
};

/* ---- /proc/<pid>/stat ---- */

#define NG_PF_KTHREAD 0x00200000u

struct ng_pid_stat {
        pid_t pid;
        char comm[64];          /* between the first '(' and the last ')' */
        char state;
        pid_t ppid;
        uint32_t flags;
        uint64_t utime_ticks, stime_ticks; /* fields 14, 15: CPU time of all its threads */
        uint64_t num_threads;   /* field 20 */
        uint64_t starttime_ticks; /* field 22: pid-reuse guard */
        int processor;          /* field 39, -1 if absent */
};

/* ---- /proc/<pid>/status ---- */

/* Supplementary groups kept of a process (Groups:); more make groups_more
 * true, and a group not among the kept ones unknown. */
#define NG_STATUS_MAX_GROUPS 32
/* The capability that lets a process create SysV SHM_HUGETLB segments
 * whatever its groups (CapEff bit, include/uapi/linux/capability.h). */
#define NG_CAP_IPC_LOCK 14

/* Never a process's uid (the kernel's invalid uid, (uid_t) -1): a status
 * without a Uid: line that parses, or not read again when asked. */
#define NG_UID_UNKNOWN UINT32_MAX

struct ng_pid_status {
        char name[64];
        pid_t tgid, ppid;
        uint32_t uid, euid;     /* real and effective; NG_UID_UNKNOWN */
        /* Gid: real, effective, saved, filesystem; Groups:. The kernel's
         * group checks (in_group_p) use fsgid and the groups. */
        bool has_gid, has_groups;
        uint32_t gid, egid, fsgid;
        uint32_t groups[NG_STATUS_MAX_GROUPS];
        size_t n_groups;
        bool groups_more;
        uint64_t vm_size_kib, vm_rss_kib, rss_anon_kib, rss_file_kib, rss_shmem_kib;
        uint64_t vm_pte_kib, hugetlb_kib, threads;
        bool has_rss_shmem, has_vm_pte, has_hugetlb, has_cpus_allowed, has_mems_allowed;
        struct ng_idset cpus_allowed;   /* Cpus_allowed_list */
        struct ng_idset mems_allowed;   /* Mems_allowed_list */
        /* CapPrm and CapEff (has_cap_prm, has_cap_eff: the line parsed:
         * 16 hex digits at most). */
        uint64_t cap_prm, cap_eff;
        bool has_cap_prm, has_cap_eff;
};

/* ---- /proc/<pid>/cgroup ---- */

struct ng_cgroup_entry {
        unsigned hierarchy_id;
        char *controllers;      /* "cpuset", "cpu,cpuacct", "name=systemd", "" for v2 */
        char *path;
};

struct ng_pid_cgroup {
        struct ng_cgroup_entry *e;
        size_t n;
};

/* The "0::PATH" entry, or NULL. */
const char *ng_pid_cgroup_v2_path(const struct ng_pid_cgroup *c);
/* The v1 entry whose controller list contains controller, or NULL. */
const char *ng_pid_cgroup_v1_path(const struct ng_pid_cgroup *c, const char *controller);

/* ---- /proc/<pid>/maps ---- */

enum ng_map_kind {
        NG_MAP_OTHER = 0,
        NG_MAP_SYSV,            /* "/SYSV%08x (deleted)", inode = shmid */
        NG_MAP_FILE_SHARED,     /* a shared file mapping (/dev/shm, hugetlbfs, ...) */
        NG_MAP_ANON_SHARED,     /* "/dev/zero (deleted)" or "/anon_hugepage (deleted)" */
        NG_MAP_ANON_PRIVATE,    /* large private anonymous (InnoDB buffer pool), "/anon_hugepage (deleted)" too */
};

struct ng_map {
        uint64_t start, end, offset;
        bool read, write, exec, shared;
        unsigned dev_major, dev_minor;
        uint64_t inode;
        char *path;             /* "" for anonymous; " (deleted)" stripped */
        bool deleted;
        enum ng_map_kind kind;
        int32_t sysv_key;       /* NG_MAP_SYSV only */
        uint64_t page_kib;      /* set by collect on the live host (map_files), 0 unknown */
};

/* ---- /proc/<pid>/numa_maps ---- */

enum ng_mpol {
        NG_MPOL_DEFAULT = 0,
        NG_MPOL_PREFERRED,
        NG_MPOL_BIND,
        NG_MPOL_INTERLEAVE,
        NG_MPOL_LOCAL,
        NG_MPOL_PREFERRED_MANY,
        NG_MPOL_WEIGHTED_INTERLEAVE,
        NG_MPOL_UNKNOWN,
};

struct ng_node_pages {
        int node;
        uint64_t pages;
};

struct ng_numa_map {
        uint64_t start;
        enum ng_mpol policy;
        char *policy_nodes;     /* "0-3" from "interleave:0-3", "" if none */
        char *file;             /* unescaped, NULL if no file= */
        bool heap, stack, huge;
        uint64_t anon, dirty, mapped, mapmax, swapcache, active, writeback;
        uint64_t kernelpagesize_kib;    /* 0 when the line has no pages */
        struct ng_node_pages *np;       /* N<node>=<pages>, in line order */
        size_t n_np;
};

const char *ng_mpol_name(enum ng_mpol p);
/* The numactl(8) option that starts a process under policy m
 * ("interleave", "membind", "preferred", "weighted-interleave";
 * "interleave" for a policy without one). */
const char *ng_mpol_numactl_option(enum ng_mpol m);
/* systemd's name of a NUMAPolicy= mode ("interleave"), NULL for none. */
const char *ng_unit_numa_policy_name(int mode);
/* What get_mempolicy(2) said (mode, with its flags; a mask of nbits) as
 * numa_maps writes a policy: "default", "interleave:0-3", "prefer:1". */
void ng_mpol_format(int mode, const unsigned long *mask, size_t nbits, char *buf, size_t size);

/* ---- /proc/self/mountinfo ---- */

struct ng_mount {
        int id, parent_id;
        unsigned major, minor;
        char *root, *mountpoint, *mount_options, *fstype, *source, *super_options;
};

/* True if opt ("cpuset", "rw") is one of the comma-separated options of
 * either option field. */
bool ng_mount_has_option(const struct ng_mount *m, const char *opt);
/* Value of key= ("pagesize", "mpol") from either option field; -ENOENT. */
int ng_mount_option_value(const struct ng_mount *m, const char *key, char *buf, size_t size);

/* ---- cgroup memory.numa_stat (v1 and v2), hugetlb.<size>.numa_stat ---- */

struct ng_numa_stat_line {
        char key[48];           /* "anon", "total", "hierarchical_total", ... */
        uint64_t total;         /* v1 "key=total"; 0 on v2 */
        bool has_total;
        struct ng_node_pages *np;       /* N<node>=<value> (bytes on v2, pages on v1) */
        size_t n_np;
};

#ifdef __cplusplus
}
#endif

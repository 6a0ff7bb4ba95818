/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Parsers of kernel text. Each takes a NUL-terminated buffer (whatever a
 * file held: it may be truncated, garbage or hostile) and fills a struct.
 * They never read past the NUL, never allocate without bound per line, and
 * return 0 or -errno (-EINVAL for text they cannot use, -ENOMEM). Output
 * parameters are untouched on failure. Lines that do not parse are skipped
 * where the rest of the file stays meaningful (documented per parser).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-bitmap.h"

/* ---- small helpers ---- */

/* Parses an unsigned decimal at *s, skipping leading blanks; advances *s.
 * -EINVAL if no digits, -ERANGE on overflow. */
int ng_parse_u64(const char **s, uint64_t *ret);
/* Whole buffer is one unsigned decimal, optional trailing whitespace. */
int ng_parse_u64_full(const char *buf, uint64_t *ret);
/* Blank-separated unsigned decimals (a node's "distance" row). */
int ng_parse_u64_row(const char *buf, uint64_t *ret, size_t max, size_t *ret_n);
/* "hugepages-2048kB" -> 2048. */
int ng_parse_hugepages_dirname(const char *name, uint64_t *ret_kib);
/* "always [madvise] never" -> "madvise". */
int ng_parse_bracketed_choice(const char *buf, char *ret, size_t size);
/* Decodes kernel octal escapes ("\040" -> ' ') in place. */
void ng_unescape_octal(char *s);

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

/* Accepts both "MemTotal: 123 kB" and "Node 0 MemTotal: 123 kB"; malformed
 * lines are skipped; -EINVAL when no line parsed. */
int ng_parse_meminfo(const char *buf, struct ng_meminfo *ret);
/* -ENOENT when the key is absent. */
int ng_meminfo_get(const struct ng_meminfo *m, const char *key, uint64_t *ret);
/* Value or 0 when absent. */
uint64_t ng_meminfo_value(const struct ng_meminfo *m, const char *key);

/* ---- /proc/zoneinfo ---- */

/* Sum of the "high" watermarks (pages) of the zones of node in a
 * /proc/zoneinfo text; -ENOENT when no zone of that node has one, -ERANGE
 * on overflow. */
int ng_parse_zoneinfo_high(const char *buf, int node, uint64_t *ret_pages);

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
};

/* Skips the header and malformed lines. An empty table is valid (n = 0). */
int ng_parse_sysvipc_shm(const char *buf, struct ng_shm_seg **ret, size_t *ret_n);

/* ---- /proc/<pid>/stat ---- */

#define NG_PF_KTHREAD 0x00200000u

struct ng_pid_stat {
        pid_t pid;
        char comm[64];          /* between the first '(' and the last ')' */
        char state;
        pid_t ppid;
        uint32_t flags;
        uint64_t utime_ticks, stime_ticks; /* fields 14, 15: CPU time of all its threads */
        uint64_t starttime_ticks; /* field 22: pid-reuse guard */
        int processor;          /* field 39, -1 if absent */
};

int ng_parse_pid_stat(const char *buf, struct ng_pid_stat *ret);

/* ---- /proc/<pid>/status ---- */

struct ng_pid_status {
        char name[64];
        pid_t tgid, ppid;
        uint32_t uid, euid;
        uint64_t vm_size_kib, vm_rss_kib, rss_anon_kib, rss_file_kib, rss_shmem_kib;
        uint64_t vm_pte_kib, hugetlb_kib, threads;
        bool has_rss_shmem, has_vm_pte, has_hugetlb, has_cpus_allowed, has_mems_allowed;
        struct ng_bitmap cpus_allowed;  /* Cpus_allowed_list */
        struct ng_bitmap mems_allowed;  /* Mems_allowed_list */
};

/* Unknown and malformed lines are skipped; -EINVAL without a Name: or Pid: line. */
int ng_parse_pid_status(const char *buf, struct ng_pid_status *ret);

/* ---- /proc/<pid>/cmdline ---- */

/* NULs become spaces, trailing NULs dropped; returns a malloc'd string. */
int ng_parse_cmdline(const char *buf, size_t len, char **ret);

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

int ng_parse_pid_cgroup(const char *buf, struct ng_pid_cgroup *ret);
void ng_pid_cgroup_done(struct ng_pid_cgroup *c);
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
        NG_MAP_ANON_PRIVATE,    /* large private anonymous (InnoDB buffer pool) */
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

/* Keeps shared mappings and private anonymous ones of at least
 * min_private_bytes (0 keeps none); skips malformed lines. */
int ng_parse_maps(const char *buf, uint64_t min_private_bytes, struct ng_map **ret, size_t *ret_n);
void ng_maps_free(struct ng_map *m, size_t n);

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

int ng_parse_numa_maps(const char *buf, struct ng_numa_map **ret, size_t *ret_n);
void ng_numa_maps_free(struct ng_numa_map *m, size_t n);
const char *ng_mpol_name(enum ng_mpol p);

/* ---- /proc/self/mountinfo ---- */

struct ng_mount {
        int id, parent_id;
        unsigned major, minor;
        char *root, *mountpoint, *mount_options, *fstype, *source, *super_options;
};

int ng_parse_mountinfo(const char *buf, struct ng_mount **ret, size_t *ret_n);
void ng_mounts_free(struct ng_mount *m, size_t n);
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

/* Both "anon N0=4096 N1=0" (v2) and "total=12 N0=10 N1=2" (v1/hugetlb). */
int ng_parse_numa_stat(const char *buf, struct ng_numa_stat_line **ret, size_t *ret_n);
void ng_numa_stat_free(struct ng_numa_stat_line *l, size_t n);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Parsers of kernel text. Each takes a NUL-terminated buffer (whatever a
 * file held: it may be truncated, garbage or hostile) and fills a struct.
 * They never read past the NUL, never allocate without bound per line, and
 * return 0 or -errno (-EINVAL for text they cannot use, -ENOMEM). Output
 * parameters are untouched on failure. Lines that do not parse are skipped
 * where the rest of the file stays meaningful (documented per parser).
 * The structs they fill are in ng-kernel.h. Internal to the library: not
 * installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* ---- lines: what every parser of text read from a file shares ---- */

/* The lines a parser skipped because they are not what the kernel prints
 * there (a field that does not parse, an impossible node id): how many,
 * and the number of the first (from 1; 0 when none). What a file's other
 * lines say stands, but what the skipped lines held is unknown: the caller
 * names the file and the line. */
struct ng_parse_skipped {
        size_t lines;
        size_t first_line;
};

/* Far above what a sane file holds (a 1 TiB process has ~10^5 VMAs), low
 * enough that a hostile file cannot make us allocate gigabytes. */
#define NG_PARSE_MAX_ENTRIES (1u << 20)
/* A mountinfo or numa_maps line with two escaped PATH_MAX paths fits. */
#define NG_PARSE_MAX_LINE (64u * 1024)

/* Copies the line at *p and advances past it. A line longer than
 * NG_PARSE_MAX_LINE comes back empty so the caller skips it as malformed.
 * NULL on allocation failure. */
char *ng_parse_line_dup(const char **p);

/* Parses one line (a writable copy) into item: 1 keeps it, 0 skips the
 * line, -EINVAL skips it as malformed (counted), any other <0 fails the
 * whole parse. item holds nothing to free unless 1 is returned. */
typedef int (*ng_line_fn)(char *line, void *item, void *userdata);

/*
 * Runs fn over every line of buf (an over-long line comes back empty, to be
 * skipped) and collects the kept items; *ret_skipped (may be NULL) says how
 * many lines fn found malformed and where the first is. On failure the
 * kept items are freed with free_items(array, n) and the -errno returned;
 * outputs untouched.
 */
int ng_parse_lines(const char *buf, size_t item_size, ng_line_fn fn, void *userdata,
                   void (*free_items)(void *array, size_t n), void **ret, size_t *ret_n,
                   struct ng_parse_skipped *ret_skipped);

/* ---- numbers and words ---- */

/* Parses an unsigned decimal at *s, skipping leading blanks; advances *s.
 * -EINVAL if no digits, -ERANGE on overflow. */
int ng_parse_u64(const char **s, uint64_t *ret);
/* Whole buffer is one unsigned decimal, optional trailing whitespace. */
int ng_parse_u64_full(const char *buf, uint64_t *ret);
/* Blank-separated unsigned decimals (a node's "distance" row). */
int ng_parse_u64_row(const char *buf, uint64_t *ret, size_t max, size_t *ret_n);
/* "hugepages-2048kB" -> 2048. */
int ng_parse_hugepages_dirname(const char *name, uint64_t *ret_kib);
/* "UID PATH" (a line of a snapshot's record of who owns each /dev/shm file,
 * PATH the rest of the line, absolute): 0, or -EINVAL. */
int ng_parse_owner_line(const char *line, uint32_t *ret_uid, const char **ret_path);
/* "UID SIZE ALLOCATED PATH" (a line of a snapshot's record of each file of
 * a /dev/shm or hugetlbfs mount: PATH the rest of the line, absolute, as
 * NG_TEXT_RECORD escapes it), PATH decoded in place; 0, or -EINVAL. */
struct ng_shm_file_line {
        uint32_t uid;
        uint64_t size_bytes, allocated_bytes;
        const char *path;
};
int ng_parse_shm_file_line(char *line, struct ng_shm_file_line *ret);
/* "always [madvise] never" -> "madvise". */
int ng_parse_bracketed_choice(const char *buf, char *ret, size_t size);
/* Decodes kernel octal escapes ("\040" -> ' ') in place. */
void ng_unescape_octal(char *s);

/* A line of a tree's NG_PATH_FEATURES_FILE: "NAME STATE DETAIL", NAME of
 * [a-z0-9_], STATE of [a-z]; the detail keeps printable ASCII (anything
 * else becomes '?') and is cut to fit. -EINVAL when malformed. */
struct ng_feature_line {
        char name[32];
        char state[16];
        char detail[192];
};
int ng_parse_feature_line(const char *line, struct ng_feature_line *ret);

/* ---- /proc/meminfo and /sys/devices/system/node/nodeN/meminfo ---- */

/* Accepts both "MemTotal: 123 kB" and "Node 0 MemTotal: 123 kB"; malformed
 * lines are skipped; -EINVAL when no line parsed. */
int ng_parse_meminfo(const char *buf, struct ng_meminfo *ret);

/* ---- /proc/zoneinfo ---- */

/* Sum of the "high" watermarks (pages) of the zones of node in a
 * /proc/zoneinfo text; -ENOENT when no zone of that node has one, -ERANGE
 * on overflow. */
int ng_parse_zoneinfo_high(const char *buf, int node, uint64_t *ret_pages);
/* The same for the "promo" watermarks (Linux 5.18 and later: the free
 * memory above which NUMA balancing in tiering mode promotes pages into the
 * node, and down to which kswapd then reclaims). */
int ng_parse_zoneinfo_promo(const char *buf, int node, uint64_t *ret_pages);

/* ---- /proc/sysvipc/shm ---- */

/* Skips the header and lines whose key, shmid and mode do not parse; a row
 * whose later numbers do not parse is kept with unknown set. A shmid the
 * kernel lists once but the text lists in several rows is one entry: the
 * first row, unknown (which row is true cannot be told), its duplicates
 * counting the others. An empty table is valid (n = 0). */
int ng_parse_sysvipc_shm(const char *buf, struct ng_shm_seg **ret, size_t *ret_n);

/* ---- /proc/loadavg ---- */

/* "0.74 1.22 1.22 2/345 12345": the threads that exist (345) and the last
 * pid the kernel handed out in the reader's pid namespace (12345).
 * -EINVAL on anything else. */
int ng_parse_loadavg(const char *buf, uint64_t *ret_threads, uint64_t *ret_last_pid);

/* ---- /proc/<pid>/stat ---- */

int ng_parse_pid_stat(const char *buf, struct ng_pid_stat *ret);

/* ---- /proc/<pid>/status ---- */

/* Unknown and malformed lines are skipped; -EINVAL without a Name: or Pid:
 * line. The sets are allocated: free them with ng_pid_status_done(). */
int ng_parse_pid_status(const char *buf, struct ng_pid_status *ret);
void ng_pid_status_done(struct ng_pid_status *st);

/* ---- /proc/<pid>/limits ---- */

/* The soft and hard values of the limit named name ("Max locked memory"),
 * UINT64_MAX for "unlimited": 0, -ENOENT when no line names it, -EINVAL
 * when its values do not parse. */
int ng_parse_pid_limit(const char *buf, const char *name, uint64_t *ret_soft, uint64_t *ret_hard);

/* ---- /proc/<pid>/cmdline ---- */

/* NULs become spaces, trailing NULs dropped; returns a malloc'd string. */
int ng_parse_cmdline(const char *buf, size_t len, char **ret);

/* ---- /proc/<pid>/ns/<type> ---- */

/* The inode in a namespace link's text, "ipc:[4026531839]" for type "ipc"
 * (a trailing newline allowed: a tree holds the text as a file). 0, or
 * -EINVAL for another type or a malformed text. */
int ng_parse_ns_link(const char *buf, const char *type, uint64_t *ret);

/* ---- /proc/<pid>/cgroup ---- */

int ng_parse_pid_cgroup(const char *buf, struct ng_pid_cgroup *ret);
void ng_pid_cgroup_done(struct ng_pid_cgroup *c);

/* ---- /proc/<pid>/maps ---- */

/* Keeps shared mappings and private anonymous ones of at least
 * min_private_bytes (0 keeps none) that can be read or written (a "---p"
 * reservation holds no memory); skips malformed lines, said in
 * *ret_skipped (may be NULL). */
int ng_parse_maps(const char *buf, uint64_t min_private_bytes, struct ng_map **ret, size_t *ret_n,
                  struct ng_parse_skipped *ret_skipped);
void ng_maps_free(struct ng_map *m, size_t n);

/* ---- /proc/<pid>/numa_maps ---- */

/* A line with a bad address, a counter the kernel prints that does not
 * parse, a node token ("N<id>=<pages>") whose id is not one below
 * NG_BITMAP_BITS ("N-1", "N2147483648") or whose count does not parse, or
 * two file= is skipped, said in *ret_skipped (may be NULL); unknown tokens
 * (newer kernels) are ignored. file= is unescaped and keeps its
 * " (deleted)". */
int ng_parse_numa_maps(const char *buf, struct ng_numa_map **ret, size_t *ret_n,
                       struct ng_parse_skipped *ret_skipped);
void ng_numa_maps_free(struct ng_numa_map *m, size_t n);

/* ---- /proc/self/mountinfo ---- */

int ng_parse_mountinfo(const char *buf, struct ng_mount **ret, size_t *ret_n);
void ng_mounts_free(struct ng_mount *m, size_t n);

/* ---- cgroup memory.numa_stat (v1 and v2), hugetlb.<size>.numa_stat ---- */

/* Both "anon N0=4096 N1=0" (v2) and "total=12 N0=10 N1=2" (v1/hugetlb). */
int ng_parse_numa_stat(const char *buf, struct ng_numa_stat_line **ret, size_t *ret_n);
void ng_numa_stat_free(struct ng_numa_stat_line *l, size_t n);

/* ---- cgroup v2 memory.max, memory.current, memory.stat (parse-sysfs.c) ---- */

/* "max" (UINT64_MAX) or one decimal, one trailing newline at most (a
 * memory controller's limit); -EINVAL otherwise. */
int ng_parse_cgroup_limit(const char *buf, uint64_t *ret);
/* The value of the line "KEY VALUE" of a flat keyed file (memory.stat):
 * 0; -ENOENT when no line has KEY; -EINVAL when the first line that has
 * it holds no one decimal. */
int ng_parse_keyed_u64(const char *buf, const char *key, uint64_t *ret);

/* ---- small sysfs attributes (parse-sysfs.c) ---- */

/* An HMAT figure of nodeN/accessK/initiators/ (read_latency and the
 * others: a u32): the kernel's 0 (no value in the firmware's table) is
 * NG_HMAT_UNKNOWN. -EINVAL on anything but one decimal, -ERANGE above
 * UINT32_MAX. */
int ng_parse_hmat_value(const char *buf, int64_t *ret);
/* "node12" with prefix "node" -> 12 ("memory_tier4", "index1"): digits
 * only, no leading zero, at most max; -EINVAL otherwise. */
int ng_parse_prefixed_id(const char *name, const char *prefix, unsigned max, unsigned *ret);
/* "true", "false" (demotion_enabled), "1", "0", one trailing newline at
 * most; -EINVAL otherwise. */
int ng_parse_true_false(const char *buf, bool *ret);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The path layer: every /proc, /sys and /dev access of libnumaguard goes
 * through a struct ng_path, which prefixes a root directory ("--root DIR").
 * This header is the only place that spells the kernel's base paths.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NG_PROC_DIR "/proc"
#define NG_SYS_DIR "/sys"
#define NG_SYS_NODE_DIR "/sys/devices/system/node"
#define NG_SYS_CPU_DIR "/sys/devices/system/cpu"
#define NG_SYS_HUGEPAGES_DIR "/sys/kernel/mm/hugepages"
#define NG_SYS_THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define NG_SYS_MEMORY_TIERS_DIR "/sys/devices/virtual/memory_tiering"
#define NG_SYS_DEMOTION_ENABLED "/sys/kernel/mm/numa/demotion_enabled"
#define NG_SYS_WEIGHTED_INTERLEAVE_DIR "/sys/kernel/mm/mempolicy/weighted_interleave"
#define NG_SYS_THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define NG_SYS_DAMON_ADMIN_DIR "/sys/kernel/mm/damon/admin"
#define NG_DEV_SHM_DIR "/dev/shm"
/* Where Oracle looks for the unversioned libnuma.so (EL and Debian layouts). */
#define NG_LIBNUMA_PATHS { "/usr/lib64/libnuma.so", "/lib64/libnuma.so", \
                           "/usr/lib/x86_64-linux-gnu/libnuma.so", "/usr/lib/aarch64-linux-gnu/libnuma.so", \
                           "/usr/lib/libnuma.so" }

/* In a tree: host paths (one a line) the live host refused to read; reads
 * of them answer -EACCES under that root. */
#define NG_PATH_DENIED_FILE "/numaguard/unreadable"
/* In a tree: what the snapshot could not take (a file it could not stage
 * or pack), or took with a warning, one "PATH<tab>WHY" a line, PATH
 * escaped as a snapshot's records escape names (a backslash as two, a
 * control character or a byte that is not UTF-8 as \xNN). A --root
 * collection says each is a problem of the snapshot (AUDIT_INCOMPLETE). */
#define NG_PATH_INCOMPLETE_FILE "/numaguard/incomplete"
/* In a tree: the System V table of each IPC namespace other than
 * numaguard's own, as <dir>/<namespace inode>/sysvipc/shm (live, only a
 * reader inside the namespace sees it in /proc/sysvipc/shm). */
#define NG_PATH_IPC_NS_DIR "/numaguard/ipc"
/* In a tree: what the live host's kernel answered to the probes no file
 * shows (a mount option, an ioctl), one "NAME STATE DETAIL" a line. */
#define NG_PATH_FEATURES_FILE "/numaguard/features"

/* Linux's PATH_MAX, for the path buffers of public structs: <limits.h>
 * defines PATH_MAX only in POSIX builds (not under -std=c99), and a public
 * header must compile in any. path.c checks that the two agree. */
#define NG_PATH_MAX 4096

/* Kernel text files are small; anything larger is not what we expect. */
#define NG_PATH_MAX_FILE_BYTES (64u * 1024u * 1024u)

struct ng_path;

/*
 * Called after every successful read (kind 'f': contents in buf/len), after
 * every stat of a regular file ('s': len is the file size, buf is NULL),
 * for every directory listed ('d') and for every read refused with EACCES
 * or EPERM ('e': len is the errno). The snapshot tool uses it to copy exactly
 * what numaguard read, and lists the refused paths in NG_PATH_DENIED_FILE.
 */
typedef void (*ng_path_recorder_t)(void *userdata, char kind, const char *path,
                                   const char *buf, size_t len);

/* root NULL, "" or "/" means the live host. Returns 0 or -errno. */
int ng_path_new(const char *root, struct ng_path **ret);
void ng_path_free(struct ng_path *p);
/* For _ng_cleanup_(ng_path_freep) (cleanup.h, not installed). */
static inline void ng_path_freep(struct ng_path **p)
{
        ng_path_free(*p);
}

bool ng_path_is_live(const struct ng_path *p);
/* "" for the live host, otherwise the prefix without a trailing slash. */
const char *ng_path_root(const struct ng_path *p);
void ng_path_set_recorder(struct ng_path *p, ng_path_recorder_t cb, void *userdata);

/* Formats an absolute path under the root into buf. Returns 0 or -ENAMETOOLONG. */
int ng_path_resolve(const struct ng_path *p, char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/*
 * Reads a whole file into a malloc'd NUL-terminated buffer. Returns 0,
 * -ENOENT when the file is absent (a feature this kernel lacks, or a process
 * that went away: ESRCH is mapped to ENOENT), -EFBIG beyond
 * NG_PATH_MAX_FILE_BYTES, or another -errno. *ret_buf untouched on failure.
 */
int ng_path_read(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
int ng_path_vread(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

/* Reads a file holding one unsigned decimal number (trailing newline allowed). */
int ng_path_read_u64(const struct ng_path *p, uint64_t *ret, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Size in bytes of a regular file (stat, contents never read). */
int ng_path_file_size(const struct ng_path *p, uint64_t *ret_bytes, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* What stat(2) says of a regular file: its size, the bytes its file system
 * allocated for it (on tmpfs and hugetlbfs: its pages, resident or
 * swapped), and its identity. */
struct ng_file_stat {
        uint64_t size_bytes, allocated_bytes, inode;
        unsigned dev_major, dev_minor;
        uint32_t uid;           /* its owner (a tree's copy: whoever unpacked it) */
};
int ng_path_file_stat(const struct ng_path *p, struct ng_file_stat *ret, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* What lstat(2) says of a directory entry, never following a link: its
 * kind in *ret_kind ('f' regular file, 'd' directory, 'l' link, 'o'
 * other) and its identity; size and allocated bytes of a regular file
 * only. For the entries of a directory others can write (/dev/shm): a
 * link there is anyone's, and what it leads to is not the directory's. */
int ng_path_entry_stat(const struct ng_path *p, struct ng_file_stat *ret, char *ret_kind, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* A numeric entry of a /proc listing: the pid and the inode of its
 * directory, which changes when the pid is reused by a new process. */
struct ng_pid_entry {
        pid_t pid;
        uint64_t ino;
};
/* Far above any pid_max (4194304): a hostile tree cannot make us allocate
 * without bound. */
#define NG_PATH_MAX_PIDS (1u << 23)

/* The numeric entries of dir (NG_PROC_DIR) in pid order, without a
 * string per entry: the cheap listing an incremental poll diffs against its
 * picture. Returns 0, -ENOENT when absent, -E2BIG, -ENOMEM. */
int ng_path_list_pids(const struct ng_path *p, struct ng_pid_entry **ret, size_t *ret_n, const char *dir);

/* Live host only (-EOPNOTSUPP under a root prefix, where the tree's files are
 * copies): st_blksize of what a path resolves to. On
 * /proc/<pid>/map_files/<range> it is the page size of the mapping's file
 * (2 MiB for a SHM_HUGETLB segment) -- learned without a page-table walk. */
int ng_path_blksize(const struct ng_path *p, uint64_t *ret_bytes, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/*
 * Lists a directory: names (no "." or ".."), sorted with strverscmp so that
 * node2 < node10 and pids come out numerically. *ret_names is a malloc'd,
 * NULL-terminated vector freed by ng_strv_free().
 */
int ng_path_list(const struct ng_path *p, char ***ret_names, size_t *ret_n, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Writes buf to an existing file (O_WRONLY|O_TRUNC, never O_CREAT), as a
 * shell redirection does. Returns 0, -errno, or -EIO on a short write. */
int ng_path_write(const struct ng_path *p, const char *buf, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The same, refusing (-ELOOP, -ENOTDIR) a last component that is a link. */
int ng_path_list_nofollow(const struct ng_path *p, char ***ret_names, size_t *ret_n, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ng_strv_free(char **v);
/* For _ng_cleanup_(ng_strv_freep) (cleanup.h, not installed). */
static inline void ng_strv_freep(char ***v)
{
        ng_strv_free(*v);
}

#ifdef __cplusplus
}
#endif

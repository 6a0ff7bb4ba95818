/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The path layer's face inside the library (its public part is ng-path.h):
 * what the collector's reads cost, reading and listing what a public
 * reader does not (a descriptor, a bounded listing, a directory's own
 * stat), the recorder a snapshot is taken through, a segment opened to be
 * asked of itself, naming what is wrong in a tree, and opening a file or
 * its directory under a root, which act and the programs use to write
 * corrections and archive a snapshot. Not installed, not exported; what
 * only the path layer's own files share is in path-internal.h.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>

#include "ng-path.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* What the files read through a path cost. */
struct ng_path_cost {
        uint64_t files_read, bytes_read;
};

/*
 * A copy of p as it is now (root, recorder, the tree's denied paths) that
 * adds every file it reads whole (ng_path_read, ng_path_vread,
 * ng_path_read_u64) to *cost. Listings and stat(2)s are not counted. Free it
 * with ng_path_free(); *cost must outlive it. Returns 0 or -ENOMEM.
 */
int ng_path_new_counting(const struct ng_path *p, struct ng_path_cost *cost, struct ng_path **ret);

/* Reads fd whole into a malloc'd NUL-terminated buffer: 0 or -errno. */
int ng_path_read_fd(int fd, char **ret_buf, size_t *ret_len);
/* ng_path_list_nofollow() taking at most max names (0: none), those
 * readdir(3) gives first, sorted; *ret_total counts every entry, the names
 * taken and those past them (a directory anyone can fill: the names are
 * bounded, the count is not). ret_st (or NULL): the directory's own stat,
 * taken before its entries are read. */
int ng_path_list_bounded(const struct ng_path *p, size_t max, char ***ret_names, size_t *ret_n, size_t *ret_total,
                         struct stat *ret_st, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* A directory's own stat and (ret_sfs, or NULL) its file system's, never
 * through a link. 0 or -errno. */
int ng_path_dir_stat(const struct ng_path *p, struct stat *ret_st, struct statfs *ret_sfs, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Whether p has a recorder (a snapshot is being taken). */
bool ng_path_recording(const struct ng_path *p);
/* Tells p's recorder (and cost) that rel was read and held buf. */
void ng_path_record(const struct ng_path *p, const char *rel, const char *buf, size_t len);

/* Live host only (-EOPNOTSUPP under a root prefix): opens a regular file
 * read-only to ask it where its pages are, never blocking (a FIFO is
 * -EINVAL), following no symlink unless follow (/proc/PID/map_files links
 * must be followed). Returns the descriptor or -errno. */
int ng_path_open_segment(const struct ng_path *p, bool follow, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/*
 * Why a read of p's rel failed with r (-EINVAL: not a regular file, -ELOOP,
 * -ENOTDIR, -ENOENT through a link that leads nowhere in the tree), for a
 * message about the tree: the path to name (the component at fault:
 * "/proc/179" for a FIFO there) into ret_path and the reason into ret_why
 * ("is a FIFO, not a regular file", "too many levels of symbolic links",
 * "is a symbolic link to /dev/zero, which is not in the tree"). Returns 0,
 * or -errno when r is none of those (a file that is simply missing).
 */
int ng_path_why(const struct ng_path *p, int r, const char *rel, char *ret_path, size_t path_size, char *ret_why,
                size_t why_size);

/* ---- opening under a root (path-open.c): act writes corrections through
 * these, numaguardctl snapshot archives a tree ---- */

/* What p's rel resolves to (openat2(2) inside the root, or a walk that
 * refuses the tree's links where the kernel lacks it): a descriptor or
 * -errno. */
int ng_path_open(const struct ng_path *p, int flags, mode_t mode, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The directory that holds p's rel's last component (O_PATH, for the *at
 * calls), making the missing ones (0755) when create; the component goes
 * to ret_name. */
int ng_path_open_parent(const struct ng_path *p, bool create, char *ret_name, size_t name_size, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

#pragma GCC visibility pop

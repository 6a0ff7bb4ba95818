/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the path layer's own files (path.c, path-list.c, path-open.c,
 * path-why.c); the rest of the library uses path.h. Not installed. */

#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

#include "ng-path.h"
#include "path.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* A directory under the root (rel: PATH_MAX bytes, the formatted path),
 * for readdir(3); follow false refuses a last component that is a link.
 * Tells the recorder of a listing of n entries. (path-list.c) */
int ng_path_vopen_dir(const struct ng_path *p, bool follow, char *rel, DIR **ret, const char *fmt, va_list ap)
        __attribute__((format(printf, 5, 0)));
void ng_path_record_dir(const struct ng_path *p, const char *rel, size_t n);

/*
 * Opening inside a root (path-open.c). root_fd is the tree held open
 * (O_PATH), or -1 for the live host, where rel is opened as it is. walk:
 * the kernel lacks openat2(2), so links in the tree are refused (-ELOOP)
 * rather than resolved inside it. rel is a host path ("/proc/1/stat").
 * Return a descriptor or -errno.
 */
int ng_root_open(int root_fd, bool walk, const char *rel, int flags, mode_t mode);
/* The directory that holds rel's last component (O_PATH, for the *at
 * calls), making the missing ones (0755) when create; the component goes
 * to ret_name. */
int ng_root_open_parent(int root_fd, bool walk, const char *rel, bool create, char *ret_name, size_t name_size);
/* 1 when openat2(2) resolves in root_fd, 0 when it is not there (ENOSYS,
 * or EPERM from a seccomp filter), else -errno. */
int ng_root_probe(int root_fd);

/* Whether p refuses the links of its tree (no openat2(2)). */
bool ng_path_walks(const struct ng_path *p);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Naming what is wrong in a tree (path.h, ng_path_why): a read
 * that met a FIFO, a link that loops, or a file where the kernel has a
 * directory says which file, and what it is instead.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path-internal.h"

static const char *type_name(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFREG: return "a regular file";
        case S_IFDIR: return "a directory";
        case S_IFIFO: return "a FIFO";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFSOCK: return "a socket";
        case S_IFLNK: return "a symbolic link";
        default: return "not a file";
        }
}

/* The first component of rel at which resolving it fails with ELOOP, or
 * that is not a directory though more follows; its length, 0 if none. */
static size_t component_at_fault(const struct ng_path *p, const char *rel, struct stat *ret_st, int *ret_err)
{
        char prefix[PATH_MAX];
        for (const char *s = strchr(rel + 1, '/');; s = strchr(s + 1, '/')) {
                size_t n = s ? (size_t) (s - rel) : strlen(rel);
                snprintf(prefix, sizeof(prefix), "%.*s", (int) n, rel);
                int fd = ng_path_open(p, O_PATH | O_CLOEXEC, 0, "%s", prefix);
                if (fd == -ELOOP) {
                        *ret_err = ELOOP;
                        return n;
                }
                if (fd < 0)
                        return 0;
                bool bad = fstat(fd, ret_st) == 0 && s && !S_ISDIR(ret_st->st_mode);
                close(fd);
                if (bad) {
                        *ret_err = ENOTDIR;
                        return n;
                }
                if (!s)
                        return 0;
        }
}

/* The first component of rel that is a symbolic link leading to nothing in
 * the tree (a tree's "numa_maps -> /dev/zero" resolves to its own
 * /dev/zero, which it does not hold): its length, its target into
 * ret_target; 0 if none. A capture holds no links: such a file is not
 * one the kernel showed, never a process that went away. */
static size_t dangling_link(const struct ng_path *p, const char *rel, char *ret_target, size_t target_size)
{
        char prefix[PATH_MAX];
        for (const char *s = strchr(rel + 1, '/');; s = strchr(s + 1, '/')) {
                size_t n = s ? (size_t) (s - rel) : strlen(rel);
                snprintf(prefix, sizeof(prefix), "%.*s", (int) n, rel);
                int fd = ng_path_open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, "%s", prefix);
                if (fd < 0)
                        return 0;
                struct stat st;
                ssize_t k = -1;
                if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode))
                        k = readlinkat(fd, "", ret_target, target_size - 1);
                close(fd);
                if (k >= 0) {
                        ret_target[k] = '\0';
                        int to = ng_path_open(p, O_PATH | O_CLOEXEC, 0, "%s", prefix);
                        if (to >= 0)
                                close(to);
                        return to == -ENOENT ? n : 0;
                }
                if (!s)
                        return 0;
        }
}

int ng_path_why(const struct ng_path *p, int r, const char *rel, char *ret_path, size_t path_size, char *ret_why,
                size_t why_size)
{
        if (r == -ENOENT && rel[0] == '/') {
                char target[PATH_MAX];
                size_t n = dangling_link(p, rel, target, sizeof(target));
                if (!n)
                        return r;
                snprintf(ret_path, path_size, "%.*s", (int) n, rel);
                snprintf(ret_why, why_size, "is a symbolic link to %s, which is not in the tree (a capture holds "
                         "no links)", target);
                return 0;
        }
        if (r != -EINVAL && r != -ELOOP && r != -ENOTDIR)
                return r < 0 ? r : -EINVAL;
        struct stat st;
        int e = -r;
        size_t n = rel[0] == '/' ? component_at_fault(p, rel, &st, &e) : 0;
        snprintf(ret_path, path_size, "%.*s", (int) (n ? n : strlen(rel)), rel);
        if (e == ELOOP)
                snprintf(ret_why, why_size, "%s", ng_path_walks(p) ? "is a symbolic link, not followed (openat2(2) is "
                         "missing, so links in a tree are refused)" : "too many levels of symbolic links");
        else if (e == ENOTDIR)
                snprintf(ret_why, why_size, "is %s, not a directory", type_name(st.st_mode));
        else {
                int fd = ng_path_open(p, O_PATH | O_CLOEXEC, 0, "%s", rel);
                bool known = fd >= 0 && fstat(fd, &st) == 0;
                if (fd >= 0)
                        close(fd);
                snprintf(ret_why, why_size, "is %s, not a regular file", known ? type_name(st.st_mode) : "not");
        }
        return 0;
}

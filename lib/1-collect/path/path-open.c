/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Opening a path inside a tree (--root) so that nothing the tree holds can
 * lead outside it (docs/ARCHITECTURE.md, "Root prefix"). A captured tree is
 * anyone's: a link in it may point at /etc/shadow, a directory of it may be
 * swapped for a link between two calls. So every open under a root starts at
 * the root held open, and the kernel resolves the rest inside it:
 * openat2(2) with RESOLVE_IN_ROOT (Linux 5.6) resolves ".." and absolute
 * links as if the tree were "/", which is what a tree's own links mean.
 * Without openat2 (ENOSYS: an older kernel, or a seccomp filter that does
 * not know it) links are refused instead of followed: each component is
 * opened O_NOFOLLOW from the one before, and ".." is taken lexically,
 * never above the root. Trees numaguardctl snapshot writes hold no links.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "path-internal.h"
#include "util.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* openat2 fails with EAGAIN when a rename raced with its ".." checks. */
#define OPENAT2_TRIES 8

static int openat2_in_root(int root_fd, const char *rel, int flags, mode_t mode)
{
        struct open_how how = {
                .flags = (uint64_t) flags,
                .mode = (flags & O_CREAT) ? mode : 0,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        for (int i = 0; i < OPENAT2_TRIES; i++) {
                long fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                if (errno != EAGAIN && errno != EINTR)
                        break;
        }
        return -errno;
}

int ng_root_probe(int root_fd)
{
        int fd = openat2_in_root(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd >= 0) {
                close(fd);
                return 1;
        }
        return fd == -ENOSYS || fd == -EPERM ? 0 : fd;
}

/* The components of rel with "." dropped and ".." applied, never above
 * the root; with no link followed the lexical answer is the true one. */
static int split_lexical(const char *rel, char *buf, size_t size, const char **comps, size_t max, size_t *ret_n)
{
        if (snprintf(buf, size, "%s", rel) >= (int) size)
                return -ENAMETOOLONG;
        size_t n = 0;
        for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (!strcmp(c, "."))
                        continue;
                if (!strcmp(c, "..")) {
                        if (n > 0)
                                n--;
                        continue;
                }
                if (n == max)
                        return -ENAMETOOLONG;
                comps[n++] = c;
        }
        *ret_n = n;
        return 0;
}

/* A component that is a link where links are not followed: ELOOP, the
 * errno a link under O_NOFOLLOW gives, rather than ENOTDIR. */
static int refused_link(int dir_fd, const char *name, int e)
{
        struct stat st;
        if (e == ENOTDIR && fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                return -ELOOP;
        return -e;
}

static int walk_no_links(int root_fd, const char *rel, int flags, mode_t mode)
{
        char buf[PATH_MAX];
        const char *comps[PATH_MAX / 2];
        size_t n;
        int r = split_lexical(rel, buf, sizeof(buf), comps, ELEMENTSOF(comps), &n);
        if (r < 0)
                return r;
        if (n == 0) {
                int fd = openat(root_fd, ".", flags, mode);
                return fd < 0 ? -errno : fd;
        }
        _cleanup_close_ int dir = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return -errno;
        for (size_t i = 0; i + 1 < n; i++) {
                int next = openat(dir, comps[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return refused_link(dir, comps[i], errno);
                close(dir);
                dir = next;
        }
        _cleanup_close_ int fd = openat(dir, comps[n - 1], flags | O_NOFOLLOW, mode);
        if (fd < 0)
                return refused_link(dir, comps[n - 1], errno);
        struct stat st;
        /* O_PATH|O_NOFOLLOW opens the link itself */
        if ((flags & O_PATH) && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode))
                return -ELOOP;
        return ng_steal_fd(&fd);
}

int ng_root_open(int root_fd, bool walk, const char *rel, int flags, mode_t mode)
{
        if (root_fd < 0) {
                int fd = open(rel, flags, mode);
                return fd < 0 ? -errno : fd;
        }
        while (*rel == '/')
                rel++;
        if (walk)
                return walk_no_links(root_fd, rel, flags, mode);
        return openat2_in_root(root_fd, *rel ? rel : ".", flags, mode);
}

int ng_root_open_parent(int root_fd, bool walk, const char *rel, bool create, char *ret_name, size_t name_size)
{
        char dir[PATH_MAX];
        const char *slash = strrchr(rel, '/');
        if (!slash || !slash[1] || !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
                return -EINVAL;
        if (snprintf(ret_name, name_size, "%s", slash + 1) >= (int) name_size)
                return -ENAMETOOLONG;
        snprintf(dir, sizeof(dir), "%.*s", (int) (slash - rel), rel);
        int fd = ng_root_open(root_fd, walk, *dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd != -ENOENT || !create)
                return fd;
        /* mkdir -p, each directory made in the one opened before it */
        _cleanup_close_ int up = ng_root_open(root_fd, walk, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (up < 0)
                return up;
        for (char *s = dir + 1;; s++) {
                if (*s && *s != '/')
                        continue;
                char c = *s;
                *s = '\0';
                const char *name = strrchr(dir, '/') + 1;
                fd = ng_root_open(root_fd, walk, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
                if (fd == -ENOENT && *name && mkdirat(up, name, 0755) < 0 && errno != EEXIST)
                        return -errno;
                if (fd == -ENOENT)
                        fd = ng_root_open(root_fd, walk, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
                *s = c;
                if (fd < 0)
                        return fd;
                close(up);
                up = fd;
                if (!c)
                        return ng_steal_fd(&up);
        }
}

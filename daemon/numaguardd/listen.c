/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket's place in the file system. Root creates the socket
 * and, with status_group, hands it to that group. Done by path, a user who
 * can write the socket's directory swaps a symbolic link in after bind(2)
 * and root's chown(2)/chmod(2) follow it: any file of the host goes to
 * status_group. A unix socket's descriptor cannot tell which inode bind
 * created (its fstat(2) is the sockfs inode, not the file's), so the proof
 * comes from the directory instead:
 *
 *   - the directory is opened once (O_PATH) and everything after happens
 *     relative to that descriptor: renaming it or a parent later changes
 *     nothing;
 *   - a directory that a user other than root can change is refused: owned
 *     by another user, or writable by group or others without the sticky
 *     bit (with the sticky bit others may add names, never rename or remove
 *     one of root's);
 *   - bind(2) goes through /proc/self/fd/N/NAME, into that directory;
 *   - owner and mode change with fchownat(2)/fchmodat(2), never following a
 *     link, after fstatat(2) says the name is a socket of root's: in such a
 *     directory nobody but root can have put anything else there since.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"

const char *file_type_name(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFREG: return "a regular file";
        case S_IFDIR: return "a directory";
        case S_IFLNK: return "a symbolic link";
        case S_IFIFO: return "a FIFO";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFSOCK: return "a socket";
        default: return "a file of unknown type";
        }
}

/* Opens dir (its last component created 0755 when missing) and refuses a
 * directory that a user other than root could change. */
static int open_dir(const char *dir, char *why, size_t whylen)
{
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return snprintf(why, whylen, "creating directory %s: %s", dir, strerror(errno)), -errno;
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return snprintf(why, whylen, "directory %s: %s", dir, strerror(errno)), -errno;
        struct stat st;
        if (fstat(fd, &st) < 0) {
                int r = -errno;
                close(fd);
                return snprintf(why, whylen, "directory %s: %s", dir, strerror(-r)), r;
        }
        if (st.st_uid != 0)
                snprintf(why, whylen, "directory %s is owned by uid %u, not root: that user could put a link where "
                         "the socket goes; use a directory of root's (chown root %s)", dir, (unsigned) st.st_uid, dir);
        else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
                snprintf(why, whylen, "directory %s (mode %04o) is writable by %s without the sticky bit: a user "
                         "could put a link where the socket goes; use a directory only root writes (chmod go-w %s)",
                         dir, (unsigned) (st.st_mode & 07777), st.st_mode & S_IWOTH ? "others" : "its group", dir);
        else
                return fd;
        close(fd);
        return -EPERM;
}

/* "/proc/self/fd/N/NAME": the path bind(2) and connect(2) take to reach
 * NAME inside the directory held open, however it is reached by name. */
static int fd_path(const struct socket_place *p, struct sockaddr_un *sa)
{
        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        int k = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", p->dir_fd, p->name);
        return k < 0 || (size_t) k >= sizeof(sa->sun_path) ? -ENAMETOOLONG : 0;
}

/* A stale socket of an earlier run goes; a live one belongs to another
 * numaguardd; anything else is never removed, and named. */
static int clear_name(const struct socket_place *p, const char *path, char *why, size_t whylen)
{
        struct stat st;
        if (fstatat(p->dir_fd, p->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : (snprintf(why, whylen, "%s: %s", path, strerror(errno)), -errno);
        if (!S_ISSOCK(st.st_mode)) {
                snprintf(why, whylen, "%s is %s, not a socket; remove it if nothing needs it", path,
                         file_type_name(st.st_mode));
                return -EEXIST;
        }
        struct sockaddr_un sa;
        int r = fd_path(p, &sa);
        if (r < 0)
                return snprintf(why, whylen, "%s: %s", path, strerror(-r)), r;
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && connect(probe, (struct sockaddr *) &sa, sizeof(sa)) == 0;
        if (probe >= 0)
                close(probe);
        if (live) {
                snprintf(why, whylen, "%s is in use by a running numaguardd", path);
                return -EADDRINUSE;
        }
        if (unlinkat(p->dir_fd, p->name, 0) < 0 && errno != ENOENT)
                return snprintf(why, whylen, "removing the stale socket %s: %s", path, strerror(errno)), -errno;
        return 0;
}

int socket_place_give(const struct socket_place *p, const char *path, gid_t gid, char *why, size_t whylen)
{
        struct stat st;
        if (fstatat(p->dir_fd, p->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return snprintf(why, whylen, "%s: %s", path, strerror(errno)), -errno;
        if (!S_ISSOCK(st.st_mode) || st.st_uid != 0) {
                snprintf(why, whylen, "%s is no longer the socket numaguardd bound (%s of uid %u)", path,
                         file_type_name(st.st_mode), (unsigned) st.st_uid);
                return -EPERM;
        }
        if (fchownat(p->dir_fd, p->name, (uid_t) -1, gid, AT_SYMLINK_NOFOLLOW) < 0)
                return snprintf(why, whylen, "giving %s to gid %u: %s", path, (unsigned) gid, strerror(errno)), -errno;
        /* glibc before 2.32 refuses AT_SYMLINK_NOFOLLOW here; the name is
         * the socket just checked, in a directory only root changes. */
        int r = fchmodat(p->dir_fd, p->name, 0660, AT_SYMLINK_NOFOLLOW);
        if (r < 0 && (errno == EOPNOTSUPP || errno == ENOTSUP))
                r = fchmodat(p->dir_fd, p->name, 0660, 0);
        if (r < 0)
                return snprintf(why, whylen, "chmod 0660 %s: %s", path, strerror(errno)), -errno;
        return 0;
}

static int split_path(struct socket_place *p, const char *path, char *dir, size_t dirlen)
{
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        if (!*name || strlen(path) >= sizeof(((struct sockaddr_un *) 0)->sun_path))
                return -ENAMETOOLONG;
        snprintf(p->name, sizeof(p->name), "%s", name);
        if (!slash)
                snprintf(dir, dirlen, ".");
        else
                snprintf(dir, dirlen, "%.*s", slash == path ? 1 : (int) (slash - path), path);
        return 0;
}

int socket_place_bind(struct socket_place *p, int fd, const char *path, char *why, size_t whylen)
{
        char dir[sizeof(((struct sockaddr_un *) 0)->sun_path)];
        *p = (struct socket_place) { .dir_fd = -1 };
        int r = split_path(p, path, dir, sizeof(dir));
        if (r < 0)
                return snprintf(why, whylen, "%s: not a usable socket path (at most 107 characters)", path), r;
        r = open_dir(dir, why, whylen);
        if (r < 0)
                return r;
        p->dir_fd = r;
        struct sockaddr_un sa;
        r = clear_name(p, path, why, whylen);
        if (r >= 0 && (r = fd_path(p, &sa)) < 0)
                snprintf(why, whylen, "%s: %s", path, strerror(-r));
        if (r >= 0) {
                mode_t old = umask(0177);
                if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        r = -errno;
                        snprintf(why, whylen, "binding %s: %s", path, strerror(errno));
                }
                umask(old);
        }
        if (r < 0) {
                close(p->dir_fd);
                p->dir_fd = -1;
                return r;
        }
        p->bound = true;
        return 0;
}

void socket_place_release(struct socket_place *p)
{
        struct stat st;
        if (p->dir_fd < 0)
                return;
        if (p->bound && fstatat(p->dir_fd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode))
                (void) unlinkat(p->dir_fd, p->name, 0);
        close(p->dir_fd);
        *p = (struct socket_place) { .dir_fd = -1 };
}

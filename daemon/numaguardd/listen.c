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
 *   - it is reached from / one name at a time (openat(2), O_NOFOLLOW), and
 *     it and every directory above it must be ones only root can change:
 *     a directory owned by another user, or writable by group or others
 *     without the sticky bit (with the sticky bit others may add names,
 *     never rename or remove one of root's), or a symbolic link on the way
 *     is refused. A user who could change any of them could point the path
 *     at a directory of root's and have the stale socket removed and a new
 *     one made there;
 *   - bind(2) goes through /proc/self/fd/N/NAME, into that directory;
 *   - owner and mode change with fchownat(2)/fchmodat(2), never following a
 *     link, after fstatat(2) says the name is a socket of root's: in such a
 *     directory nobody but root can have put anything else there since.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "listen.h"

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

/* The directory as an absolute path: relative to the working directory
 * (--socket may be) when it does not start with '/'. */
static int absolute(const char *dir, char *abs, size_t size, char *why, size_t whylen)
{
        char cwd[PATH_MAX];
        int k;
        if (dir[0] == '/')
                k = snprintf(abs, size, "%s", dir);
        else if (!getcwd(cwd, sizeof(cwd)))
                return snprintf(why, whylen, "directory %s: the working directory: %s", dir, strerror(errno)), -errno;
        else
                k = snprintf(abs, size, "%s/%s", strcmp(cwd, "/") ? cwd : "", dir);
        if (k < 0 || (size_t) k >= size)
                return snprintf(why, whylen, "directory %s: %s", dir, strerror(ENAMETOOLONG)), -ENAMETOOLONG;
        return 0;
}

/* The next name of the path at *s, skipping empty names and ".": 1 and the
 * name, 0 at the path's end, -EINVAL for "..", -ENAMETOOLONG. */
static int next_name(const char **s, char *name, size_t size)
{
        for (;;) {
                while (**s == '/')
                        (*s)++;
                size_t n = strcspn(*s, "/");
                if (n == 1 && **s == '.') {
                        (*s)++;
                        continue;
                }
                if (n >= size)
                        return -ENAMETOOLONG;
                memcpy(name, *s, n);
                name[n] = '\0';
                *s += n;
                if (!strcmp(name, ".."))
                        return -EINVAL;
                return n > 0;
        }
}

/* Refuses the directory fd, reached as path, when a user other than root
 * could change it. For the socket's own directory (sockdir NULL) that user
 * could put a link where the socket goes; for a directory on the way to
 * sockdir, a link or a directory of their own where the next one is, and
 * numaguardd would make its socket wherever that leads. */
static int judge_dir(int fd, const char *path, const char *sockdir, char *why, size_t whylen)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return snprintf(why, whylen, "directory %s: %s", path, strerror(errno)), -errno;
        if (!S_ISDIR(st.st_mode)) {
                snprintf(why, whylen, "%s is %s, not a directory", path, file_type_name(st.st_mode));
                return -ENOTDIR;
        }
        bool writable = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
        const char *by = st.st_mode & S_IWOTH ? "others" : "its group";
        unsigned mode = (unsigned) (st.st_mode & 07777);
        if (st.st_uid != 0 && !sockdir)
                snprintf(why, whylen, "directory %s is owned by uid %u, not root: that user could put a link where "
                         "the socket goes; use a directory of root's (chown root %s)", path, (unsigned) st.st_uid, path);
        else if (writable && !sockdir)
                snprintf(why, whylen, "directory %s (mode %04o) is writable by %s without the sticky bit: a user "
                         "could put a link where the socket goes; use a directory only root writes (chmod go-w %s)",
                         path, mode, by, path);
        else if (st.st_uid != 0)
                snprintf(why, whylen, "directory %s is owned by uid %u, not root: that user could put a link on the "
                         "way to the socket directory %s and have the socket made wherever it leads; every directory "
                         "up to the socket must be root's (chown root %s)", path, (unsigned) st.st_uid, sockdir, path);
        else if (writable)
                snprintf(why, whylen, "directory %s (mode %04o) is writable by %s without the sticky bit: a user "
                         "could put a link on the way to the socket directory %s and have the socket made wherever "
                         "it leads; every directory up to the socket must be one only root writes (chmod go-w %s)",
                         path, mode, by, sockdir, path);
        else
                return 0;
        return -EPERM;
}

/* Why name in the directory fd (path, with name) could not be opened as a
 * directory without following a link. */
static int not_opened(int fd, const char *name, const char *path, int err, char *why, size_t whylen)
{
        struct stat st;
        char target[PATH_MAX];
        if ((err != ENOTDIR && err != ELOOP) || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return snprintf(why, whylen, "directory %s: %s", path, strerror(err)), -err;
        if (!S_ISLNK(st.st_mode)) {
                snprintf(why, whylen, "%s is %s, not a directory", path, file_type_name(st.st_mode));
                return -ENOTDIR;
        }
        ssize_t n = readlinkat(fd, name, target, sizeof(target) - 1);
        target[n < 0 ? 0 : n] = '\0';
        snprintf(why, whylen, "%s is a symbolic link (to %s): numaguardd follows no link on the way to its socket, "
                 "since whoever can change the link, or a directory it leads through, decides where the socket goes; "
                 "name the directory itself", path, n < 0 ? "?" : target);
        return -ELOOP;
}

/* Opens dir (its last component created 0755 when missing) by walking down
 * from /, one name at a time, never following a link, and refuses it when
 * a user other than root could change it or any directory above it. */
static int open_dir(const char *dir, char *why, size_t whylen)
{
        char abs[PATH_MAX], path[PATH_MAX] = "/", name[NAME_MAX + 1];
        int r = absolute(dir, abs, sizeof(abs), why, whylen);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return snprintf(why, whylen, "directory /: %s", strerror(errno)), -errno;
        const char *s = abs;
        for (;;) {
                int more = next_name(&s, name, sizeof(name));
                if (more < 0) {
                        snprintf(why, whylen, "socket directory %s: %s", dir, more == -EINVAL ?
                                 "a path with \"..\" is refused; name the directory directly" : strerror(-more));
                        return more;
                }
                r = judge_dir(fd, path, more ? abs : NULL, why, whylen);
                if (r < 0)
                        return r;
                if (!more)
                        return ng_steal_fd(&fd);
                size_t len = strlen(path);
                snprintf(path + len, sizeof(path) - len, "%s%s", len > 1 ? "/" : "", name);
                const char *peek = s;
                char rest[NAME_MAX + 1];
                if (next_name(&peek, rest, sizeof(rest)) == 0 && mkdirat(fd, name, 0755) < 0 && errno != EEXIST)
                        return snprintf(why, whylen, "creating directory %s: %s", path, strerror(errno)), -errno;
                int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
                if (next < 0)
                        return not_opened(fd, name, path, errno, why, whylen);
                close(fd);
                fd = next;
        }
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

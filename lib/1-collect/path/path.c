/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The root-prefixed path layer (see ng-path.h). */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "parse.h"
#include "ng-path.h"
#include "path-internal.h"
#include "util.h"

_Static_assert(NG_PATH_MAX == PATH_MAX, "NG_PATH_MAX sizes path buffers of public structs: it must be PATH_MAX");

struct ng_path {
        char root[PATH_MAX];    /* no trailing slash; "" = live host */
        /* The tree held open: every access under it starts there and stays
         * inside (path-open.c). -1 on the live host. */
        int root_fd;
        bool walk;              /* no openat2(2): links in the tree refused */
        ng_path_recorder_t recorder;
        void *recorder_data;
        /* A tree's NG_PATH_DENIED_FILE: host paths, one a line, that the
         * live host refused to read when the tree was taken. */
        char *denied;
        /* NULL, or what every file read adds to (ng_path_new_counting). */
        struct ng_path_cost *cost;
};

/* A tree answers EACCES where the live host did, so its audit says the
 * same (AUDIT_INCOMPLETE). */
static void load_denied(struct ng_path *p)
{
        _cleanup_close_ int fd = ng_root_open(p->root_fd, p->walk, NG_PATH_DENIED_FILE,
                                              O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
        if (fd < 0)
                return;
        struct stat st;
        size_t len;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ng_path_read_fd(fd, &p->denied, &len) < 0)
                p->denied = NULL;
}

static bool is_denied(const struct ng_path *p, const char *rel)
{
        size_t n = strlen(rel);
        for (const char *l = p->denied; l && *l;) {
                const char *e = strchr(l, '\n');
                size_t ll = e ? (size_t) (e - l) : strlen(l);
                if (ll == n && !memcmp(l, rel, n))
                        return true;
                l = e ? e + 1 : l + ll;
        }
        return false;
}

/* The root itself may be reached through links (the caller named it);
 * nothing below it is. */
static int open_root(struct ng_path *p)
{
        p->root_fd = open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (p->root_fd < 0)
                return -errno;
        int r = ng_root_probe(p->root_fd);
        if (r < 0)
                return r;
        p->walk = r == 0;
        return 0;
}

int ng_path_new(const char *root, struct ng_path **ret)
{
        assert(ret);
        _ng_cleanup_(ng_path_freep) struct ng_path *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->root_fd = -1;
        if (root && *root) {
                size_t n = strlen(root);
                while (n > 1 && root[n - 1] == '/')
                        n--;
                if (n >= sizeof(p->root))
                        return -ENAMETOOLONG;
                if (!(n == 1 && root[0] == '/'))
                        memcpy(p->root, root, n);
                if (p->root[0]) {
                        int e = open_root(p);
                        if (e < 0)
                                return e;
                        load_denied(p);
                } else {
                        struct stat st;
                        int e = stat(root, &st) < 0 ? -errno : (S_ISDIR(st.st_mode) ? 0 : -ENOTDIR);
                        if (e < 0)
                                return e;
                }
        }
        *ret = ng_steal_ptr(&p);
        return 0;
}

int ng_path_new_counting(const struct ng_path *p, struct ng_path_cost *cost, struct ng_path **ret)
{
        _ng_cleanup_(ng_path_freep) struct ng_path *n = malloc(sizeof(*n));
        if (!n)
                return -ENOMEM;
        *n = *p;
        n->denied = NULL;
        if (p->root_fd >= 0 && (n->root_fd = fcntl(p->root_fd, F_DUPFD_CLOEXEC, 3)) < 0)
                return -errno;
        if (p->denied && !(n->denied = strdup(p->denied)))
                return -ENOMEM;
        n->cost = cost;
        *ret = ng_steal_ptr(&n);
        return 0;
}

void ng_path_free(struct ng_path *p)
{
        if (!p)
                return;
        free(p->denied);
        if (p->root_fd >= 0)
                close(p->root_fd);
        free(p);
}

bool ng_path_is_live(const struct ng_path *p)
{
        return p->root[0] == '\0';
}

const char *ng_path_root(const struct ng_path *p)
{
        return p->root;
}

void ng_path_set_recorder(struct ng_path *p, ng_path_recorder_t cb, void *userdata)
{
        p->recorder = cb;
        p->recorder_data = userdata;
}

bool ng_path_recording(const struct ng_path *p)
{
        return p->recorder != NULL;
}

void ng_path_record(const struct ng_path *p, const char *rel, const char *buf, size_t len)
{
        if (p->recorder)
                p->recorder(p->recorder_data, 'f', rel, buf, len);
        if (p->cost) {
                p->cost->files_read++;
                p->cost->bytes_read += len;
        }
}

static int vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
        int n = vsnprintf(buf, size, fmt, ap);
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* Formats the host path into rel and the prefixed path into abs. */
static int vformat_rel(char *rel, const char *fmt, va_list ap)
{
        int r = vformat(rel, PATH_MAX, fmt, ap);
        if (r < 0)
                return r;
        return rel[0] == '/' ? 0 : -EINVAL;
}

static int vresolve2(const struct ng_path *p, char *rel, char *abs, const char *fmt, va_list ap)
{
        int r = vformat_rel(rel, fmt, ap);
        if (r < 0)
                return r;
        if (snprintf(abs, PATH_MAX, "%s%s", p->root, rel) >= PATH_MAX)
                return -ENAMETOOLONG;
        return 0;
}

int ng_path_resolve(const struct ng_path *p, char *buf, size_t size, const char *fmt, ...)
{
        char rel[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vformat(rel, sizeof(rel), fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        if (snprintf(buf, size, "%s%s", p->root, rel) >= (int) size)
                return -ENAMETOOLONG;
        return 0;
}

/* /proc files of a vanished process answer ESRCH on read; treat as absent. */
static int errno_absent(int e)
{
        return (e == ENOENT || e == ESRCH || e == ENOTDIR) ? -ENOENT : -e;
}

/* The same, except that in a tree a file where a directory must be (a FIFO
 * planted as proc/PID) is said, not taken for a process that went away. */
static int errno_absent_in(const struct ng_path *p, int e)
{
        return e == ENOTDIR && !ng_path_is_live(p) ? -ENOTDIR : errno_absent(e);
}

/* rel opened under the root (path-open.c); -errno as it came */
static int open_rel(const struct ng_path *p, const char *rel, int flags)
{
        return ng_root_open(p->root_fd, p->walk, rel, flags, 0);
}

int ng_path_read_fd(int fd, char **ret_buf, size_t *ret_len)
{
        /* procfs and sysfs report st_size 0 or 4096: grow as we go. */
        size_t cap = 4096, len = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                int r = ng_grow(&buf, &cap, len + 1, 1, NG_PATH_MAX_FILE_BYTES);
                if (r < 0)
                        return r == -E2BIG ? -EFBIG : r;
                ssize_t k = read(fd, buf + len, cap - len - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno_absent(errno);
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = '\0';
        *ret_buf = ng_steal_ptr(&buf);
        *ret_len = len;
        return 0;
}

int ng_path_vread(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
{
        assert(p && ret_buf && fmt);
        char rel[PATH_MAX];
        int r = vformat_rel(rel, fmt, ap);
        if (r < 0)
                return r;
        if (is_denied(p, rel))
                return -EACCES;
        _cleanup_close_ int fd = open_rel(p, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int e = -fd;
                if ((e == EACCES || e == EPERM) && p->recorder)
                        p->recorder(p->recorder_data, 'e', rel, NULL, (size_t) e);
                return errno_absent_in(p, e);
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -EINVAL; /* never block on a FIFO or read a device planted in a tree */
        char *buf = NULL;
        size_t len = 0;
        r = ng_path_read_fd(fd, &buf, &len);
        if (r < 0)
                return r;
        if (p->recorder)
                p->recorder(p->recorder_data, 'f', rel, buf, len);
        if (p->cost) {
                p->cost->files_read++;
                p->cost->bytes_read += len;
        }
        *ret_buf = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int ng_path_read(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = ng_path_vread(p, ret_buf, ret_len, fmt, ap);
        va_end(ap);
        return r;
}

int ng_path_read_u64(const struct ng_path *p, uint64_t *ret, const char *fmt, ...)
{
        _cleanup_free_ char *buf = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = ng_path_vread(p, &buf, NULL, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        return ng_parse_u64_full(buf, ret);
}

/* stat(2) of a formatted path; rel gets the host path for the recorder. */
static int vstat(const struct ng_path *p, struct stat *st, char *rel, const char *fmt, va_list ap)
{
        int r = vformat_rel(rel, fmt, ap);
        if (r < 0)
                return r;
        if (ng_path_is_live(p))
                return stat(rel, st) < 0 ? errno_absent(errno) : 0;
        _cleanup_close_ int fd = open_rel(p, rel, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return errno_absent_in(p, -fd);
        return fstat(fd, st) < 0 ? -errno : 0;
}

static int vfile_stat(const struct ng_path *p, struct ng_file_stat *ret, const char *fmt, va_list ap)
{
        char rel[PATH_MAX];
        struct stat st;
        int r = vstat(p, &st, rel, fmt, ap);
        if (r < 0)
                return r;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if (p->recorder)
                p->recorder(p->recorder_data, 's', rel, NULL, (size_t) st.st_size);
        *ret = (struct ng_file_stat) {
                .size_bytes = (uint64_t) st.st_size,
                /* st_blocks counts 512-byte units whatever st_blksize says */
                .allocated_bytes = (uint64_t) st.st_blocks * 512,
                .inode = (uint64_t) st.st_ino,
                .dev_major = major(st.st_dev), .dev_minor = minor(st.st_dev),
                .uid = (uint32_t) st.st_uid,
        };
        return 0;
}

int ng_path_entry_stat(const struct ng_path *p, struct ng_file_stat *ret, char *ret_kind, const char *fmt, ...)
{
        char rel[PATH_MAX];
        struct stat st;
        va_list ap;
        va_start(ap, fmt);
        int r = vformat_rel(rel, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        if (ng_path_is_live(p)) {
                if (lstat(rel, &st) < 0)
                        return errno_absent(errno);
        } else {
                /* A tree's walk refuses links (-ELOOP): a link all the same. */
                _cleanup_close_ int fd = open_rel(p, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd == -ELOOP) {
                        *ret = (struct ng_file_stat) {0};
                        *ret_kind = 'l';
                        return 0;
                }
                if (fd < 0)
                        return errno_absent_in(p, -fd);
                if (fstat(fd, &st) < 0)
                        return -errno;
        }
        bool reg = S_ISREG(st.st_mode);
        *ret_kind = reg ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'o';
        if (reg && p->recorder)
                p->recorder(p->recorder_data, 's', rel, NULL, (size_t) st.st_size);
        *ret = (struct ng_file_stat) {
                .size_bytes = reg ? (uint64_t) st.st_size : 0,
                .allocated_bytes = reg ? (uint64_t) st.st_blocks * 512 : 0,
                .inode = (uint64_t) st.st_ino,
                .dev_major = major(st.st_dev), .dev_minor = minor(st.st_dev),
                .uid = (uint32_t) st.st_uid,
        };
        return 0;
}

int ng_path_file_size(const struct ng_path *p, uint64_t *ret_bytes, const char *fmt, ...)
{
        struct ng_file_stat fs;
        va_list ap;
        va_start(ap, fmt);
        int r = vfile_stat(p, &fs, fmt, ap);
        va_end(ap);
        if (r >= 0)
                *ret_bytes = fs.size_bytes;
        return r;
}

int ng_path_file_stat(const struct ng_path *p, struct ng_file_stat *ret, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vfile_stat(p, ret, fmt, ap);
        va_end(ap);
        return r;
}

int ng_path_open_segment(const struct ng_path *p, bool follow, const char *fmt, ...)
{
        if (!ng_path_is_live(p))
                return -EOPNOTSUPP;
        char rel[PATH_MAX], abs[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vresolve2(p, rel, abs, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
        /* O_NOATIME needs the owner or CAP_FOWNER; without, atime it is. */
        _cleanup_close_ int fd = open(abs, flags | O_NOATIME);
        if (fd < 0 && errno == EPERM)
                fd = open(abs, flags);
        if (fd < 0)
                return errno_absent(errno);
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -EINVAL;
        return ng_steal_fd(&fd);
}

int ng_path_blksize(const struct ng_path *p, uint64_t *ret_bytes, const char *fmt, ...)
{
        if (!ng_path_is_live(p))
                return -EOPNOTSUPP;
        char rel[PATH_MAX];
        struct stat st;
        va_list ap;
        va_start(ap, fmt);
        int r = vstat(p, &st, rel, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        /* shmem says the PMD size where it may fold base pages into
         * transparent hugepages (shmem_getattr): its pages are base pages */
        struct statfs sfs;
        long base = sysconf(_SC_PAGESIZE);
        if (statfs(rel, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC && base > 0) {
                *ret_bytes = (uint64_t) base;
                return 0;
        }
        *ret_bytes = (uint64_t) st.st_blksize;
        return 0;
}

/* An open directory under the root, rel formatted into rel (PATH_MAX),
 * for readdir(3) (path-list.c); follow false refuses a last component
 * that is a link. */
int ng_path_vopen_dir(const struct ng_path *p, bool follow, char *rel, DIR **ret, const char *fmt, va_list ap)
{
        int r = vformat_rel(rel, fmt, ap);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = open_rel(p, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK |
                                                     (follow ? 0 : O_NOFOLLOW));
        if (fd < 0)
                return errno_absent_in(p, -fd);
        if (!(*ret = fdopendir(fd)))
                return -errno;
        fd = -1;        /* *ret owns it */
        return 0;
}

void ng_path_record_dir(const struct ng_path *p, const char *rel, size_t n)
{
        if (p->recorder)
                p->recorder(p->recorder_data, 'd', rel, NULL, n);
}

int ng_path_write(const struct ng_path *p, const char *buf, const char *fmt, ...)
{
        char rel[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vformat_rel(rel, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        /* O_TRUNC as a shell redirection does: sysfs, cgroupfs and procfs accept
         * it, and a tree copy (--root) must not keep stale trailing digits.
         * Never through a link, live or in a tree; in a tree, never out of
         * it on the way either. */
        _cleanup_close_ int fd = open_rel(p, rel, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return fd;
        struct stat st;
        if (!ng_path_is_live(p) && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
                return -EINVAL;
        size_t len = strlen(buf);
        ssize_t k = write(fd, buf, len);
        int e = k < 0 ? -errno : ((size_t) k != len ? -EIO : 0);
        if (close(ng_steal_fd(&fd)) < 0 && e == 0)
                e = -errno;
        return e;
}

int ng_path_open(const struct ng_path *p, int flags, mode_t mode, const char *fmt, ...)
{
        char rel[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vformat_rel(rel, fmt, ap);
        va_end(ap);
        return r < 0 ? r : ng_root_open(p->root_fd, p->walk, rel, flags, mode);
}

int ng_path_open_parent(const struct ng_path *p, bool create, char *ret_name, size_t name_size, const char *fmt, ...)
{
        char rel[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vformat_rel(rel, fmt, ap);
        va_end(ap);
        return r < 0 ? r : ng_root_open_parent(p->root_fd, p->walk, rel, create, ret_name, name_size);
}

bool ng_path_walks(const struct ng_path *p)
{
        return p->walk;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The snapshot's tarball, written with libarchive: a gzip'd POSIX (pax)
 * tar of the staging tree, paths "./...", numeric owners only, /dev/shm
 * and hugetlbfs files as the sparse files they are staged as (their holes
 * take no room in the archive; GNU tar and bsdtar restore them). Spawning
 * tar(1) let its own messages and gzip's through ("gzip: stdout: No space
 * left on device", "tar: Child returned status 1", then "Input/output
 * error"); here a failure is one -errno, for one line.
 */

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

#define ZEROS_BYTES 65536

static int archive_err(struct archive *a)
{
        int e = archive_errno(a);
        return e > 0 ? -e : -EIO;
}

/* The bundle holds what only root may read (every process's maps, the
 * database's command line): made 0600 from the start, never widened
 * meanwhile. A regular file or a link already there is replaced, not
 * written through (it may be a link another user left in a shared
 * directory); anything else (a device, a FIFO) is refused. */
static int open_output(const char *out)
{
        for (int i = 0; i < 2; i++) {
                int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd >= 0 || errno != EEXIST || i > 0)
                        return fd < 0 ? -errno : fd;
                struct stat st;
                if (lstat(out, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
                        return -EEXIST;
                if (unlink(out) < 0)
                        return -errno;
        }
        return -EEXIST;
}

/* Holes are handed over as zeros: the pax writer knows the entry's sparse
 * map and stores none of them. */
static int write_zeros(struct archive *out, int64_t n)
{
        static const char zeros[ZEROS_BYTES];
        while (n > 0) {
                size_t k = n > ZEROS_BYTES ? ZEROS_BYTES : (size_t) n;
                la_ssize_t w = archive_write_data(out, zeros, k);
                if (w < 0)
                        return archive_err(out);
                n -= (int64_t) k;
        }
        return 0;
}

static int copy_data(struct archive *disk, struct archive *out, int64_t size)
{
        const void *buf;
        size_t len;
        la_int64_t off;
        int64_t done = 0;
        for (;;) {
                int r = archive_read_data_block(disk, &buf, &len, &off);
                if (r == ARCHIVE_EOF)
                        return done < size ? write_zeros(out, size - done) : 0;
                if (r != ARCHIVE_OK)
                        return archive_err(disk);
                if (off > done && (r = write_zeros(out, off - done)) < 0)
                        return r;
                if (len > 0 && archive_write_data(out, buf, len) < 0)
                        return archive_err(out);
                done = off + (int64_t) len;
        }
}

/* One entry of the tree under dir, named "./" and its path inside. */
static int add_entry(struct archive *disk, struct archive *out, struct archive_entry *e, size_t prefix)
{
        char name[PATH_MAX + 2];
        const char *path = archive_entry_pathname(e);
        snprintf(name, sizeof(name), ".%s", strlen(path) > prefix ? path + prefix : "");
        archive_entry_copy_pathname(e, name);
        archive_entry_set_uname(e, NULL);
        archive_entry_set_gname(e, NULL);
        if (archive_write_header(out, e) != ARCHIVE_OK)
                return archive_err(out);
        if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0)
                return copy_data(disk, out, archive_entry_size(e));
        return 0;
}

static int pack_tree(struct archive *disk, struct archive *out, const char *dir)
{
        int r = archive_read_disk_open(disk, dir) == ARCHIVE_OK ? 0 : archive_err(disk);
        struct archive_entry *e = archive_entry_new();
        if (!e)
                return -ENOMEM;
        while (r >= 0) {
                int k = archive_read_next_header2(disk, e);
                if (k == ARCHIVE_EOF)
                        break;
                if (k != ARCHIVE_OK && k != ARCHIVE_WARN) {
                        r = archive_err(disk);
                        break;
                }
                archive_read_disk_descend(disk);
                r = add_entry(disk, out, e, strlen(dir));
        }
        archive_entry_free(e);
        return r;
}

static int pack_fd(int fd, const char *dir)
{
        struct archive *out = archive_write_new(), *disk = archive_read_disk_new();
        int r = out && disk ? 0 : -ENOMEM;
        if (r >= 0 && (archive_write_add_filter_gzip(out) != ARCHIVE_OK ||
                       archive_write_set_format_pax_restricted(out) != ARCHIVE_OK ||
                       archive_write_open_fd(out, fd) != ARCHIVE_OK))
                r = archive_err(out);
        /* Owners by number (no name lookup), no xattrs, ACLs or flags: the
         * tree holds what numaguard read, nothing of the staging disk's. */
        if (r >= 0 && (archive_read_disk_set_symlink_physical(disk) != ARCHIVE_OK ||
                       archive_read_disk_set_behavior(disk, ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL |
                                                      ARCHIVE_READDISK_NO_FFLAGS) != ARCHIVE_OK))
                r = archive_err(disk);
        if (r >= 0)
                r = pack_tree(disk, out, dir);
        if (r >= 0 && archive_write_close(out) != ARCHIVE_OK)
                r = archive_err(out);
        archive_read_free(disk);
        archive_write_free(out);
        return r;
}

int ctl_pack_tree(const char *out, const char *dir)
{
        bool is_stdout = strcmp(out, "-") == 0;
        int fd = is_stdout ? STDOUT_FILENO : open_output(out);
        if (fd < 0)
                return fd;
        int r = pack_fd(fd, dir);
        if (!is_stdout) {
                if (close(fd) < 0 && r >= 0)
                        r = -errno;
                if (r < 0)
                        unlink(out);    /* no half archive left behind */
        }
        return r;
}

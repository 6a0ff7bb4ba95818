/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The snapshot's tarball, written with libarchive: a gzip'd POSIX (pax)
 * tar of the staging tree, paths "./...", numeric owners only. A name is
 * stored as the kernel's bytes: in the "C" locale every name with a byte
 * outside ASCII fails libarchive's conversion to UTF-8, and the entry is
 * written with its bytes and "hdrcharset=BINARY" (GNU tar and bsdtar
 * restore them; GNU tar says it ignores the keyword). Under another
 * locale libarchive would convert the names through it. /dev/shm and
 * hugetlbfs files are empty in the tree: their sizes are records of their
 * own (collect-shm.c). Spawning tar(1) let its own messages and gzip's
 * through ("gzip: stdout: No space left on device", "tar: Child returned
 * status 1", then "Input/output error"); here a failure is one -errno, for
 * one line, and a file that cannot be packed is noted in the snapshot's
 * NG_PATH_INCOMPLETE_FILE, written last, not a failure of the snapshot.
 */

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "cleanup.h"
#include "ng-path.h"
#include "text.h"
#include "util.h"

#define ZEROS_BYTES 65536

static int archive_err(struct archive *a)
{
        int e = archive_errno(a);
        return e > 0 ? -e : -EIO;
}

static const char *archive_why(struct archive *a)
{
        const char *why = archive_error_string(a);
        return why ? why : "no reason given";
}

int ctl_notes_append(struct ctl_notes *n, const char *text, size_t len)
{
        bool nl = len && text[len - 1] != '\n';
        /* room for the text, a newline and a NUL, doubling as it goes */
        while (n->cap < n->len + len + 2)
                if (ng_grow(&n->text, &n->cap, n->cap, 1, 0) < 0)
                        return -ENOMEM;
        memcpy(n->text + n->len, text, len);
        n->len += len;
        if (nl)
                n->text[n->len++] = '\n';
        n->text[n->len] = '\0';
        return 0;
}

int ctl_note(struct ctl_notes *n, const char *path, const char *fmt, ...)
{
        _cleanup_free_ char *esc = ng_text_dup(NG_TEXT_RECORD, path), *why = NULL, *line = NULL;
        va_list ap;
        va_start(ap, fmt);
        int k = vasprintf(&why, fmt, ap);
        va_end(ap);
        if (!esc || k < 0)
                return -ENOMEM;
        /* the reason is one field of one line */
        for (char *q = why; *q; q++)
                if (*q == '\n' || *q == '\t')
                        *q = ' ';
        k = asprintf(&line, "%s\t%s\n", esc, why);
        return k < 0 ? -ENOMEM : ctl_notes_append(n, line, (size_t) k);
}

void ctl_notes_done(struct ctl_notes *n)
{
        free(n->text);
        *n = (struct ctl_notes) {0};
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

static bool ascii(const char *s)
{
        for (; *s; s++)
                if ((unsigned char) *s >= 0x80)
                        return false;
        return true;
}

/* One entry of the tree under dir, named "./" and its path inside. A
 * header libarchive warns about is written all the same: noted, unless
 * the warning is the name stored as its bytes. One it refuses is noted
 * and left out. */
static int add_entry(struct archive *disk, struct archive *out, struct archive_entry *e, size_t prefix,
                     struct ctl_notes *notes)
{
        _cleanup_free_ char *name = NULL;
        const char *path = archive_entry_pathname(e);
        const char *host = strlen(path) > prefix ? path + prefix : "/";
        if (asprintf(&name, ".%s", strlen(path) > prefix ? path + prefix : "") < 0)
                return -ENOMEM;
        archive_entry_copy_pathname(e, name);
        archive_entry_set_uname(e, NULL);
        archive_entry_set_gname(e, NULL);
        int w = archive_write_header(out, e);
        if (w == ARCHIVE_FATAL)
                return archive_err(out);
        if (w == ARCHIVE_FAILED)
                return ctl_note(notes, host, "not in this snapshot: packing it failed (%s)", archive_why(out));
        /* libarchive's "file format" errno is EILSEQ on Linux */
        if (w == ARCHIVE_WARN && (ascii(name) || archive_errno(out) != EILSEQ)) {
                int r = ctl_note(notes, host, "in this snapshot with a warning: %s", archive_why(out));
                if (r < 0)
                        return r;
        }
        if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0)
                return copy_data(disk, out, archive_entry_size(e));
        return 0;
}

static int pack_tree(struct archive *disk, struct archive *out, const char *dir, struct ctl_notes *notes)
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
                const char *path = archive_entry_pathname(e);
                if (k == ARCHIVE_WARN && (r = ctl_note(notes, strlen(path) > strlen(dir) ? path + strlen(dir) : "/",
                                                       "in this snapshot with a warning: %s", archive_why(disk))) < 0)
                        break;
                archive_read_disk_descend(disk);
                r = add_entry(disk, out, e, strlen(dir), notes);
        }
        archive_entry_free(e);
        return r;
}

/* The notes, last: NG_PATH_INCOMPLETE_FILE, a file as the staged ones. */
static int pack_notes(struct archive *out, const struct ctl_notes *notes)
{
        if (!notes->len)
                return 0;
        struct archive_entry *e = archive_entry_new();
        if (!e)
                return -ENOMEM;
        archive_entry_copy_pathname(e, "." NG_PATH_INCOMPLETE_FILE);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t) notes->len);
        archive_entry_set_mtime(e, time(NULL), 0);
        int r = archive_write_header(out, e) == ARCHIVE_OK ? 0 : archive_err(out);
        if (r >= 0 && archive_write_data(out, notes->text, notes->len) != (la_ssize_t) notes->len)
                r = archive_err(out);
        archive_entry_free(e);
        return r;
}

static int pack_fd(int fd, const char *dir, struct ctl_notes *notes)
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
                r = pack_tree(disk, out, dir, notes);
        if (r >= 0)
                r = pack_notes(out, notes);
        if (r >= 0 && archive_write_close(out) != ARCHIVE_OK)
                r = archive_err(out);
        archive_read_free(disk);
        archive_write_free(out);
        return r;
}

int ctl_pack_tree(const char *out, const char *dir, struct ctl_notes *notes)
{
        bool is_stdout = strcmp(out, "-") == 0;
        /* names as their bytes, never through a locale (see above) */
        if (!setlocale(LC_CTYPE, "C"))
                return -EINVAL;
        int fd = is_stdout ? STDOUT_FILENO : open_output(out);
        if (fd < 0)
                return fd;
        int r = pack_fd(fd, dir, notes);
        if (!is_stdout) {
                if (close(fd) < 0 && r >= 0)
                        r = -errno;
                if (r < 0)
                        unlink(out);    /* no half archive left behind */
        }
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: the shared memory: System V segments, the mounts, and the files
 * of /dev/shm and the hugetlbfs mounts. */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "collect-internal.h"
#include "parse.h"
#include "text.h"
#include "ng-snapshot.h"
#include "units.h"
#include "util.h"

/* Bounds against hostile or absurd trees. */
#define MAX_SHM_FILES 100000
#define MAX_SHM_DIR_DEPTH 4

static size_t buf_rows(const char *buf);

/* A row for shmid in the table of IPC namespace ns (numaguard's own table
 * holds rows whose namespace is 0 or its own), or no table of ns was read:
 * then the namespace's reader has said so. */
static bool has_row(const struct ng_snapshot *s, int32_t shmid, uint64_t ns)
{
        bool own = !ns || ns == s->ipc_ns, table = own;
        for (size_t i = 0; i < s->n_shm; i++) {
                const struct ng_shm_seg *sh = &s->shm[i];
                bool mine = own ? (!sh->ipc_ns || sh->ipc_ns == s->ipc_ns) : sh->ipc_ns == ns;
                table |= mine;
                if (mine && sh->shmid == shmid)
                        return true;
        }
        return !table;
}

int ng_collect_sysvipc(struct collector *c)
{
        char *buf;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/sysvipc/shm");
        /* A kernel without System V IPC, unless a process maps a segment
         * (ng_collect_sysvipc_check) */
        c->sysvipc_missing = r == -ENOENT;
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ng_parse_sysvipc_shm(buf, &c->s->shm, &c->s->n_shm);
        size_t rows = buf_rows(buf), kept = c->s->n_shm;
        free(buf);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->s->n_shm; i++) {
                c->s->shm[i].ipc_ns = c->s->ipc_ns;
                kept += c->s->shm[i].duplicates;
        }
        c->s->has_sysvipc = true;
        if (rows > kept)
                ng_collect_problem(c, NG_PROC_DIR "/sysvipc/shm", "%zu row%s without a key, shmid and mode the "
                                   "kernel would print: the segments there are unknown", rows - kept,
                                   rows - kept == 1 ? "" : "s");
        for (size_t i = 0; i < c->s->n_shm; i++)
                ng_collect_shm_row_check(c, NG_PROC_DIR "/sysvipc/shm", &c->s->shm[i]);
        return 0;
}

/* Rows under the header. */
static size_t buf_rows(const char *buf)
{
        size_t n = 0;
        for (const char *p = buf; *p; ) {
                const char *end = strchrnul(p, '\n');
                if (strspn(p, " \t") < (size_t) (end - p))
                        n++;
                p = *end ? end + 1 : end;
        }
        return n ? n - 1 : 0;
}

/* A size past any machine is no size (2^64-1 planned 16383 PiB of
 * hugepages): the row is unknown, and said so. */
void ng_collect_shm_row_check(struct collector *c, const char *path, struct ng_shm_seg *sh)
{
        if (sh->duplicates)
                ng_collect_problem(c, path, "shmid %" PRId32 " is listed in %u rows, where the kernel lists a "
                                   "segment once: one segment, its size and attach count unknown", sh->shmid,
                                   sh->duplicates + 1);
        else if (!sh->unknown && sh->size_bytes > NG_PLAUSIBLE_MAX_BYTES) {
                ng_collect_problem(c, path, "shmid %" PRId32 ": size %" PRIu64 " bytes is more than any machine "
                                   "holds (4 PiB): its size is unknown", sh->shmid, sh->size_bytes);
                *sh = (struct ng_shm_seg) { .key = sh->key, .shmid = sh->shmid, .perms = sh->perms, .unknown = true,
                                            .ipc_ns = sh->ipc_ns };
        } else if (sh->unknown)
                ng_collect_problem(c, path, "shmid %" PRId32 ": a number of its row is not one the kernel prints (a "
                                   "negative size or count): its size and attach count are unknown", sh->shmid);
}

/* A SysV segment a process maps without a row of the table: removed while
 * it was read (or a damaged tree). Its size is unknown, never 0. */
void ng_collect_sysvipc_check(struct collector *c)
{
        const struct ng_snapshot *s = c->s;
        /* No table of numaguard's own namespace, yet a process there maps
         * a segment: the kernel has one, and every size in it is unknown. */
        for (size_t i = 0; i < s->n_procs && c->sysvipc_missing; i++) {
                const struct ng_proc *pr = s->procs[i];
                if (pr->ipc_ns && pr->ipc_ns != s->ipc_ns)
                        continue;
                for (size_t j = 0; j < pr->n_maps; j++)
                        if (pr->maps[j].kind == NG_MAP_SYSV) {
                                ng_collect_problem(c, NG_PROC_DIR "/sysvipc/shm", "missing, though pid %d maps "
                                                   "shmid %" PRId32 ": the size of every System V segment is "
                                                   "unknown", (int) pr->pid, (int32_t) pr->maps[j].inode);
                                return;
                        }
        }
        if (!s->has_sysvipc)
                return;
        for (size_t i = 0; i < s->n_procs; i++)
                for (size_t j = 0; j < s->procs[i]->n_maps; j++) {
                        const struct ng_map *m = &s->procs[i]->maps[j];
                        if (m->kind != NG_MAP_SYSV || has_row(s, (int32_t) m->inode, s->procs[i]->ipc_ns))
                                continue;
                        ng_collect_problem(c, NG_PROC_DIR "/sysvipc/shm", "no row for shmid %" PRId32 ", which pid "
                                           "%d maps (removed while read?): its size is unknown",
                                           (int32_t) m->inode, (int) s->procs[i]->pid);
                        return;
                }
}

int ng_collect_mounts(struct collector *c)
{
        char *buf;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/self/mountinfo");
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ng_parse_mountinfo(buf, &c->s->mounts, &c->s->n_mounts);
        free(buf);
        return r;
}

/* ---- /dev/shm and hugetlbfs files ---- */

static uint64_t hugetlbfs_page_kib(const struct ng_mount *m, const struct ng_snapshot *s)
{
        char v[32];
        uint64_t kib = 0;
        if (ng_mount_option_value(m, "pagesize", v, sizeof(v)) >= 0) {
                const char *q = v;
                if (ng_parse_u64(&q, &kib) >= 0) {
                        switch (*q) {
                        case 'G': case 'g': kib <<= 20; break;
                        case 'M': case 'm': kib <<= 10; break;
                        case 'K': case 'k': break;
                        default: kib >>= 10; break;     /* bytes */
                        }
                }
        }
        if (kib == 0 && s->has_meminfo)
                kib = ng_meminfo_value(&s->meminfo, "Hugepagesize");
        return kib;
}

/* Where a mount's files are listed: numaguard's own mount namespace
 * (prefix "", ns_pid 0), or another one's through /proc/PID/root. */
struct mount_scan {
        const struct ng_mount *m;
        enum ng_shm_file_kind kind;
        uint64_t page_kib;
        const char *prefix;
        uint64_t mnt_ns;
        pid_t ns_pid;
};

static int add_file(struct collector *c, const char *path, const struct ng_file_stat *fs, const struct mount_scan *ms)
{
        const struct ng_mount *m = ms->m;
        struct ng_snapshot *s = c->s;
        if (s->n_files >= MAX_SHM_FILES)
                return -E2BIG;
        if (ng_grow(&s->files, NULL, s->n_files, sizeof(*s->files), 0) < 0)
                return -ENOMEM;
        char *dup = strdup(path);
        if (!dup)
                return -ENOMEM;
        s->files[s->n_files++] = (struct ng_shm_file) {
                .path = dup, .kind = ms->kind, .size_bytes = fs->size_bytes, .page_kib = ms->page_kib,
                .dev_major = m->major, .dev_minor = m->minor,
                /* a tree's copy has an inode of its own, not the host's */
                .inode = ng_path_is_live(c->p) ? fs->inode : 0,
                .allocated_bytes = fs->allocated_bytes, .mnt_ns = ms->mnt_ns, .ns_pid = ms->ns_pid,
                /* a tree's copy is owned by whoever unpacked it: its record says (replay_owners) */
                .uid = ng_path_is_live(c->p) ? fs->uid : 0,
        };
        return 0;
}

/* A file or directory must sit on the mount its mountinfo names (live
 * host: a tree's copies have devices of their own). Any user may write
 * /dev/shm: whatever a directory there was swapped for, between our look
 * and our listing, is on another device and is not the mount's. */
static bool on_mount(const struct collector *c, const struct ng_file_stat *fs, const struct mount_scan *ms)
{
        return !ng_path_is_live(c->p) || (fs->dev_major == ms->m->major && fs->dev_minor == ms->m->minor);
}

/* Regular files are segments; directories are walked, on the mount only;
 * a link is never followed nor reported (anyone can plant one: to /, to
 * /etc, to a database's own file) and neither is anything else. */
static int scan_files(struct collector *c, const char *dir, const struct mount_scan *ms, int depth)
{
        char **names;
        size_t n;
        int r = ng_path_list_nofollow(c->p, &names, &n, "%s%s", ms->prefix, dir);
        if (r < 0)
                return r == -ENOENT || r == -EACCES || r == -ELOOP || r == -ENOTDIR ? 0 : r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                char path[4096], kind;
                if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", names[i]) >= (int) sizeof(path))
                        continue;
                struct ng_file_stat fs;
                if (ng_path_entry_stat(c->p, &fs, &kind, "%s%s", ms->prefix, path) < 0 || !on_mount(c, &fs, ms))
                        continue;
                if (kind == 'f')
                        r = add_file(c, path, &fs, ms);
                else if (kind == 'd' && depth < MAX_SHM_DIR_DEPTH)
                        r = scan_files(c, path, ms, depth + 1);
        }
        ng_strv_free(names);
        return r;
}

/* A mount stacked on the same mountpoint later in mountinfo hides this one
 * (containers mount a fresh /dev/shm over the host's): its files are not
 * the ones processes map, and scanning both would make every file an
 * orphan once. */
static bool shadowed(const struct ng_mount *v, size_t n, size_t i)
{
        for (size_t k = i + 1; k < n; k++)
                if (!strcmp(v[k].mountpoint, v[i].mountpoint))
                        return true;
        return false;
}

bool ng_mount_holds_segments(const struct ng_mount *v, size_t n, size_t i)
{
        const struct ng_mount *m = &v[i];
        return !shadowed(v, n, i) && (!strcmp(m->fstype, "hugetlbfs") ||
                                      (!strcmp(m->fstype, "tmpfs") && !strcmp(m->mountpoint, NG_DEV_SHM_DIR)));
}

static int cmp_inode(const void *a, const void *b, void *base)
{
        const struct ng_shm_file *v = base, *x = &v[*(const size_t *) a], *y = &v[*(const size_t *) b];
        if (x->inode != y->inode)
                return x->inode < y->inode ? -1 : 1;
        return *(const size_t *) a < *(const size_t *) b ? -1 : *(const size_t *) a > *(const size_t *) b;
}

/* One segment per device and inode: the hard links of a file (anyone may
 * make them in /dev/shm) are the file once, by its first path. The files
 * of one mount are s->files[from..n), on one device: sorted by inode
 * (then by where they came), the later ones of an inode go. */
static int dedupe_inodes(struct ng_snapshot *s, size_t from)
{
        size_t n = s->n_files - from, kept = 0;
        if (n < 2)
                return 0;
        _cleanup_free_ size_t *idx = malloc(n * sizeof(*idx));
        _cleanup_free_ bool *drop = calloc(n, sizeof(*drop));
        if (!idx || !drop)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                idx[i] = i;
        qsort_r(idx, n, sizeof(*idx), cmp_inode, s->files + from);
        for (size_t i = 1; i < n; i++)
                drop[idx[i]] = s->files[from + idx[i]].inode == s->files[from + idx[i - 1]].inode;
        for (size_t i = 0; i < n; i++) {
                if (drop[i]) {
                        free(s->files[from + i].path);
                        continue;
                }
                s->files[from + kept++] = s->files[from + i];
        }
        s->n_files = from + kept;
        return 0;
}

/* ---- what a snapshot keeps of each file ----
 *
 * A tree holds each file of a mount as an empty file of its name; what
 * stat(2) said of it on the live host is kept as FILES_FMT, one
 * "UID SIZE ALLOCATED PATH" line a file the collection kept (one path an
 * inode), PATH as NG_TEXT_RECORD escapes it (a name is any bytes but NUL,
 * newlines too), and a --root collection takes the files' sizes, allocated
 * bytes and owners (shm_owner claims files by them) from there. A sparse
 * file of any size (2^63-1 bytes, more than an ext4 /tmp holds) costs the
 * snapshot one line. A file of the record that is not in the tree (its
 * name lost on the way) is a problem of the snapshot; a file of the tree
 * without a line is none of the live host's (another name of a file it
 * kept, which the live collection left out).
 *
 * Older snapshots have no such record: their copies are sparse files of
 * the sizes, and OWNERS_FMT, "UID PATH" lines, holds the owners (none:
 * unknown, 0). */
#define FILES_FMT "/numaguard/shm-files-%u-%u"
#define OWNERS_FMT "/numaguard/shm-owners-%u-%u"

static int record_files(struct collector *c, const struct ng_mount *m, size_t from)
{
        const struct ng_snapshot *s = c->s;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (from == s->n_files)
                return 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        bool fail = false;
        for (size_t i = from; i < s->n_files && !fail; i++) {
                const struct ng_shm_file *sf = &s->files[i];
                _cleanup_free_ char *path = ng_text_dup(NG_TEXT_RECORD, sf->path);
                fail = !path || fprintf(f, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %s\n", sf->uid, sf->size_bytes,
                                        sf->allocated_bytes, path) < 0;
        }
        fail |= ferror(f);
        if (fclose(f) != 0 || fail)
                return -ENOMEM;
        char rel[64];
        snprintf(rel, sizeof(rel), FILES_FMT, m->major, m->minor);
        ng_path_record(c->p, rel, text, len);
        return 0;
}

struct kept {
        struct ng_shm_file_line l;
        bool found;
};

static int cmp_kept(const void *a, const void *b)
{
        return strcmp(((const struct kept *) a)->l.path, ((const struct kept *) b)->l.path);
}

/* The record's lines, sorted by path, into *ret (buf holds their paths). */
static int parse_kept(char *buf, struct kept **ret, size_t *ret_n)
{
        struct kept *v = NULL;
        size_t n = 0;
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                struct ng_shm_file_line l;
                if (ng_parse_shm_file_line(line, &l) < 0)
                        continue;       /* its file then has no line */
                int r = ng_grow(&v, NULL, n, sizeof(*v), MAX_SHM_FILES);
                if (r < 0) {
                        free(v);
                        return r;       /* -E2BIG: more files than a listing takes */
                }
                v[n++] = (struct kept) { .l = l };
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_kept);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* 1 when the tree has the record (the files of the mount, s->files[from..],
 * made what it says), 0 when it has none, or -ENOMEM, -E2BIG. */
static int replay_files(struct collector *c, const struct mount_scan *ms, size_t from)
{
        struct ng_snapshot *s = c->s;
        _cleanup_free_ char *buf = NULL;
        char rel[64];
        snprintf(rel, sizeof(rel), FILES_FMT, ms->m->major, ms->m->minor);
        int r = ng_collect_read(c, &buf, NULL, "%s", rel);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        _cleanup_free_ struct kept *v = NULL;
        size_t n, n_kept = from;
        if ((r = parse_kept(buf, &v, &n)) < 0)
                return r;
        for (size_t i = from; i < s->n_files; i++) {
                struct ng_shm_file *f = &s->files[i];
                struct kept key = { .l.path = f->path }, *k = n ? bsearch(&key, v, n, sizeof(*v), cmp_kept) : NULL;
                if (!k || k->found) {
                        free(f->path);
                        continue;
                }
                k->found = true;
                f->uid = k->l.uid;
                f->size_bytes = k->l.size_bytes;
                f->allocated_bytes = k->l.allocated_bytes;
                s->files[n_kept++] = *f;
        }
        s->n_files = n_kept;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                if (v[i].found)
                        continue;
                if (asprintf(&path, "%s%s", ms->prefix, v[i].l.path) < 0)
                        return -ENOMEM;
                ng_collect_problem(c, path, "in the snapshot's record (%s), not in the tree (its name lost when "
                                   "unpacked?): not audited", rel);
        }
        return 1;
}

static void replay_owners(struct collector *c, const struct ng_mount *m, size_t from)
{
        struct ng_snapshot *s = c->s;
        _cleanup_free_ char *buf = NULL;
        if (ng_path_read(c->p, &buf, NULL, OWNERS_FMT, m->major, m->minor) < 0)
                return;
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                uint32_t uid;
                const char *path;
                if (ng_parse_owner_line(line, &uid, &path) < 0)
                        continue;
                for (size_t i = from; i < s->n_files; i++)
                        if (!strcmp(s->files[i].path, path))
                                s->files[i].uid = uid;
        }
}

int ng_collect_mount_files(struct collector *c, const struct ng_mount *m, const char *prefix, uint64_t mnt_ns,
                           pid_t ns_pid)
{
        bool huge = !strcmp(m->fstype, "hugetlbfs");
        struct mount_scan ms = {
                .m = m, .kind = huge ? NG_SHM_FILE_HUGETLBFS : NG_SHM_FILE_TMPFS,
                .page_kib = huge ? hugetlbfs_page_kib(m, c->s) : 4,
                .prefix = prefix, .mnt_ns = mnt_ns, .ns_pid = ns_pid,
        };
        size_t from = c->s->n_files;
        int r = scan_files(c, m->mountpoint, &ms, 0);
        if (r < 0)
                return r;
        /* a tree's copies have no inode of the host's (0): its record says
         * which files the live host kept */
        if (!ng_path_is_live(c->p)) {
                r = replay_files(c, &ms, from);
                if (r == 0)
                        replay_owners(c, m, from);
        } else
                r = dedupe_inodes(c->s, from);
        /* kept by a snapshot of the tree too: its copies are empty */
        if (r >= 0 && ng_path_recording(c->p))
                r = record_files(c, m, from);
        return r < 0 ? r : 0;
}

/* Files in /dev/shm (Oracle AMM granules, PostgreSQL DSM) and on every
 * hugetlbfs mount. Only names and sizes: contents are never read. */
int ng_collect_files(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        for (size_t i = 0; i < s->n_mounts; i++) {
                if (!ng_mount_holds_segments(s->mounts, s->n_mounts, i))
                        continue;
                int r = ng_collect_mount_files(c, &s->mounts[i], "", s->mnt_ns, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

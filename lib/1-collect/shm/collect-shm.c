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
#include "shm-internal.h"
#include "parse.h"
#include "ng-snapshot.h"
#include "units.h"
#include "util.h"

/* Bound against hostile or absurd trees (the entries looked at are
 * bounded by NG_SHM_MAX_EXAMINED). */
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
        _cleanup_free_ char *buf = NULL;
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
        _cleanup_free_ char *buf = NULL;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/self/mountinfo");
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return ng_parse_mountinfo(buf, &c->s->mounts, &c->s->n_mounts);
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
        if (kib == 0)
                kib = ng_default_huge_kib(s);
        return kib;
}

/* A tmpfs mount's huge= option (mm/shmem.c, shmem_show_options: shown
 * only when not never); UNKNOWN for a value the kernel does not print. */
static enum ng_shmem_huge tmpfs_huge(const struct ng_mount *m)
{
        char v[32];
        if (ng_mount_option_value(m, "huge", v, sizeof(v)) < 0)
                return NG_SHMEM_HUGE_NEVER;
        enum ng_shmem_huge h = ng_shmem_huge_from_name(v);
        return h == NG_SHMEM_HUGE_INHERIT || h == NG_SHMEM_HUGE_DENY || h == NG_SHMEM_HUGE_FORCE
                ? NG_SHMEM_HUGE_UNKNOWN : h;
}

/* Where a mount's files are listed: numaguard's own mount namespace
 * (prefix "", ns_pid 0), or another one's through /proc/PID/root. */
struct mount_scan {
        const struct ng_mount *m;
        enum ng_shm_file_kind kind;
        uint64_t page_kib;
        enum ng_shmem_huge huge;
        const char *prefix;
        uint64_t mnt_ns;
        pid_t ns_pid;
        struct ng_shm_unlisted *unlisted;       /* the mount's entry */
        struct shm_scan *scan;                  /* and the collector's */
        int64_t now_ns;                         /* CLOCK_REALTIME when it began */
};

static int add_file(struct collector *c, const char *path, const struct ng_file_stat *fs, const struct mount_scan *ms)
{
        const struct ng_mount *m = ms->m;
        struct ng_snapshot *s = c->s;
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
                .uid = ng_path_is_live(c->p) ? fs->uid : 0, .huge = ms->huge,
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

/* A directory listed, for the picture's copy of the listing: stamped when
 * it did not change in the last 100 ms before (a change in the same tick of
 * the kernel's clock as the listing would leave its times as they were). */
static int stamp_dir(const struct mount_scan *ms, const char *dir, const struct stat *st)
{
        struct shm_scan *sc = ms->scan;
        int64_t mtime = (int64_t) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                ctime = (int64_t) st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
        if (!sc->stamped || mtime > ms->now_ns - 100000000 || ctime > ms->now_ns - 100000000) {
                sc->stamped = false;
                return 0;
        }
        if (ng_grow(&sc->dirs, NULL, sc->n_dirs, sizeof(*sc->dirs), 0) < 0)
                return -ENOMEM;
        char *path = strdup(dir);
        if (!path)
                return -ENOMEM;
        sc->dirs[sc->n_dirs++] = (struct shm_dir) {
                .path = path, .dev = st->st_dev, .ino = st->st_ino, .size = (uint64_t) st->st_size,
                .mtime_ns = mtime, .ctime_ns = ctime,
        };
        return 0;
}

/* Regular files are segments; directories are walked, on the mount only;
 * a link is never followed nor reported (anyone can plant one: to /, to
 * /etc, to a database's own file) and neither is anything else. Past
 * NG_SHM_MAX_EXAMINED entries in all, the rest are only counted: no name
 * kept, no stat(2), no directory walked. */
static int scan_files(struct collector *c, const char *dir, const struct mount_scan *ms, int depth)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n, total;
        struct stat st;
        int r = ng_path_list_bounded(c->p, NG_SHM_MAX_EXAMINED - c->shm_examined, &names, &n, &total,
                                     ms->scan->stamped ? &st : NULL, "%s%s", ms->prefix, dir);
        if (r < 0) {
                ms->scan->stamped = false;      /* listed next time: it may be by then */
                return r == -ENOENT || r == -EACCES || r == -ELOOP || r == -ENOTDIR ? 0 : r;
        }
        if (ms->scan->stamped && (r = stamp_dir(ms, dir, &st)) < 0)
                return r;
        ms->unlisted->unexamined += total - n;
        for (size_t i = 0; i < n && r >= 0; i++) {
                char path[4096], kind;
                if (c->shm_examined >= NG_SHM_MAX_EXAMINED) {
                        ms->unlisted->unexamined += n - i;
                        break;
                }
                c->shm_examined++;
                ms->scan->examined++;
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

/* The entry of s->unlisted (and of c->shm_scans) for m's files. */
static struct ng_shm_unlisted *add_unlisted(struct collector *c, const struct ng_mount *m, uint64_t mnt_ns,
                                            const char *prefix)
{
        struct ng_snapshot *s = c->s;
        if (ng_grow(&s->unlisted, NULL, s->n_unlisted, sizeof(*s->unlisted), 0) < 0 ||
            ng_grow(&c->shm_scans, NULL, s->n_unlisted, sizeof(*c->shm_scans), 0) < 0)
                return NULL;
        char *mp = strdup(m->mountpoint);
        if (!mp)
                return NULL;
        struct shm_scan *sc = &c->shm_scans[s->n_unlisted];
        *sc = (struct shm_scan) { .from = s->n_files, .to = s->n_files, .budget = c->shm_examined };
        snprintf(sc->prefix, sizeof(sc->prefix), "%s", prefix);
        s->unlisted[s->n_unlisted] = (struct ng_shm_unlisted) {
                .mountpoint = mp, .mnt_ns = mnt_ns, .dev_major = m->major, .dev_minor = m->minor,
        };
        return &s->unlisted[s->n_unlisted++];
}

/* FNV-1a of the names of s->files[from..to), each with its NUL. */
static uint64_t names_sig(const struct ng_snapshot *s, size_t from, size_t to)
{
        uint64_t h = UINT64_C(14695981039346656037);
        for (size_t i = from; i < to; i++)
                for (const unsigned char *q = (const unsigned char *) s->files[i].path;; q++) {
                        h = (h ^ *q) * UINT64_C(1099511628211);
                        if (!*q)
                                break;
                }
        return h;
}

/* The files the picture's copy of the last listing names, stat()ed again:
 * 1 served, 0 not (the mount is to be listed; nothing added), <0. */
static int from_copy(struct collector *c, const struct mount_scan *ms)
{
        struct shm_scan *sc = ms->scan;
        struct shm_cached *k = ng_shm_cache_find(c, ms->unlisted, sc);
        if (!k)
                return 0;
        size_t from = c->s->n_files;
        uint64_t allocated = 0;
        bool same = true;
        int r = 0;
        for (size_t i = 0; i < ng_shm_cache_n_kept(k) && same && r >= 0; i++) {
                uint64_t inode;
                const char *path = ng_shm_cache_kept(k, i, &inode);
                struct ng_file_stat fs;
                char kind;
                same = ng_path_entry_stat(c->p, &fs, &kind, "%s%s", ms->prefix, path) >= 0 && kind == 'f' &&
                       on_mount(c, &fs, ms) && fs.inode == inode;
                if (same) {
                        allocated = ng_add_sat(allocated, fs.allocated_bytes);
                        r = add_file(c, path, &fs, ms);
                }
        }
        if (r >= 0 && same && ng_shm_cache_use(c, k, ms->unlisted, sc, allocated))
                return 1;
        /* changed since: listed again, from nothing */
        for (size_t i = from; i < c->s->n_files; i++)
                free(c->s->files[i].path);
        c->s->n_files = from;
        return r < 0 ? r : 0;
}

int ng_collect_mount_files(struct collector *c, const struct ng_mount *m, const char *prefix, uint64_t mnt_ns,
                           pid_t ns_pid)
{
        bool huge = !strcmp(m->fstype, "hugetlbfs");
        struct mount_scan ms = {
                .m = m, .kind = huge ? NG_SHM_FILE_HUGETLBFS : NG_SHM_FILE_TMPFS,
                .page_kib = huge ? hugetlbfs_page_kib(m, c->s) : 4,
                .huge = huge ? NG_SHMEM_HUGE_UNKNOWN : tmpfs_huge(m),
                .prefix = prefix, .mnt_ns = mnt_ns, .ns_pid = ns_pid,
                .unlisted = add_unlisted(c, m, mnt_ns, prefix),
        };
        if (!ms.unlisted)
                return -ENOMEM;
        ms.scan = &c->shm_scans[c->s->n_unlisted - 1];
        ms.scan->kind = ms.kind;
        ms.scan->page_kib = ms.page_kib;
        ms.scan->huge = ms.huge;
        ms.scan->ns_pid = ns_pid;
        size_t from = c->s->n_files;
        int r = ng_shm_cache_usable(c) ? from_copy(c, &ms) : 0;
        if (r != 0) {
                ms.scan->to = c->s->n_files;
                c->files_sig = (c->files_sig ^ ms.scan->sig) * UINT64_C(1099511628211);
                return r < 0 ? r : ng_collect_unexamined(c, c->s->n_unlisted - 1);
        }
        /* the picture keeps a copy of what a live listing found where the
         * file system says how many bytes its files hold */
        if (ng_shm_cache_wanted(c)) {
                ms.now_ns = (int64_t) now_usec(CLOCK_REALTIME) * 1000;
                ms.scan->stamped = ng_shm_fs_used(c, prefix, m->mountpoint, &ms.scan->used_bytes) >= 0;
        }
        r = scan_files(c, m->mountpoint, &ms, 0);
        if (r < 0)
                return r;
        /* a tree's copies have no inode of the host's (0): its record says
         * which files the live host kept */
        if (!ng_path_is_live(c->p)) {
                r = ng_shm_replay_files(c, m, prefix, from);
                if (r == 0)
                        r = ng_shm_replay_owners(c, m, from);
        } else
                r = dedupe_inodes(c->s, from);
        /* kept by a snapshot of the tree too: its copies are empty */
        if (r >= 0 && ng_path_recording(c->p))
                r = ng_shm_record_files(c, m, from);
        if (r < 0)
                return r;
        ms.scan->to = c->s->n_files;
        ms.scan->sig = names_sig(c->s, from, ms.scan->to);
        c->files_sig = (c->files_sig ^ ms.scan->sig) * UINT64_C(1099511628211);
        return ng_collect_unexamined(c, c->s->n_unlisted - 1);
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

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

#include "collect-internal.h"
#include "ng-parse.h"
#include "ng-snapshot.h"
#include "ng-units.h"

/* Bounds against hostile or absurd trees. */
#define MAX_SHM_FILES 100000
#define MAX_SHM_DIR_DEPTH 4

static size_t buf_rows(const char *buf);
static void check_row(struct collector *c, struct ng_shm_seg *sh);

static bool has_row(const struct ng_snapshot *s, int32_t shmid)
{
        for (size_t i = 0; i < s->n_shm; i++)
                if (s->shm[i].shmid == shmid)
                        return true;
        return false;
}

int ng_collect_sysvipc(struct collector *c)
{
        char *buf;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/sysvipc/shm");
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ng_parse_sysvipc_shm(buf, &c->s->shm, &c->s->n_shm);
        size_t rows = buf_rows(buf);
        free(buf);
        if (r < 0)
                return r;
        c->s->has_sysvipc = true;
        if (rows > c->s->n_shm)
                ng_collect_problem(c, NG_PROC_DIR "/sysvipc/shm", "%zu row%s without a key, shmid and mode the "
                                   "kernel would print: the segments there are unknown", rows - c->s->n_shm,
                                   rows - c->s->n_shm == 1 ? "" : "s");
        for (size_t i = 0; i < c->s->n_shm; i++)
                check_row(c, &c->s->shm[i]);
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
static void check_row(struct collector *c, struct ng_shm_seg *sh)
{
        if (!sh->unknown && sh->size_bytes > NG_PLAUSIBLE_MAX_BYTES) {
                ng_collect_problem(c, NG_PROC_DIR "/sysvipc/shm", "shmid %" PRId32 ": size %" PRIu64 " bytes is more "
                                   "than any machine holds (4 PiB): its size is unknown", sh->shmid, sh->size_bytes);
                *sh = (struct ng_shm_seg) { .key = sh->key, .shmid = sh->shmid, .perms = sh->perms, .unknown = true };
        } else if (sh->unknown)
                ng_collect_problem(c, NG_PROC_DIR "/sysvipc/shm", "shmid %" PRId32 ": a number of its row is not "
                                   "one the kernel prints (a negative size or count): its size and attach count "
                                   "are unknown", sh->shmid);
}

/* A SysV segment a process maps without a row of the table: removed while
 * it was read (or a damaged tree). Its size is unknown, never 0. */
void ng_collect_sysvipc_check(struct collector *c)
{
        const struct ng_snapshot *s = c->s;
        if (!s->has_sysvipc)
                return;
        for (size_t i = 0; i < s->n_procs; i++)
                for (size_t j = 0; j < s->procs[i]->n_maps; j++) {
                        const struct ng_map *m = &s->procs[i]->maps[j];
                        if (m->kind != NG_MAP_SYSV || has_row(s, (int32_t) m->inode))
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

static int add_file(struct collector *c, const char *path, const struct ng_file_stat *fs, const struct ng_mount *m,
                    enum ng_shm_file_kind kind, uint64_t page_kib)
{
        struct ng_snapshot *s = c->s;
        if (s->n_files >= MAX_SHM_FILES)
                return -E2BIG;
        if (s->n_files % 64 == 0) {
                struct ng_shm_file *nf = realloc(s->files, (s->n_files + 64) * sizeof(*nf));
                if (!nf)
                        return -ENOMEM;
                s->files = nf;
        }
        char *dup = strdup(path);
        if (!dup)
                return -ENOMEM;
        s->files[s->n_files++] = (struct ng_shm_file) {
                .path = dup, .kind = kind, .size_bytes = fs->size_bytes, .page_kib = page_kib,
                .dev_major = m->major, .dev_minor = m->minor, .inode = fs->inode,
                .allocated_bytes = fs->allocated_bytes,
        };
        return 0;
}

static int scan_files(struct collector *c, const char *dir, const struct ng_mount *m,
                      enum ng_shm_file_kind kind, uint64_t page_kib, int depth)
{
        char **names;
        size_t n;
        int r = ng_path_list(c->p, &names, &n, "%s", dir);
        if (r < 0)
                return r == -ENOENT || r == -EACCES ? 0 : r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                char path[4096];
                if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", names[i]) >= (int) sizeof(path))
                        continue;
                struct ng_file_stat fs;
                int k = ng_path_file_stat(c->p, &fs, "%s", path);
                if (k >= 0)
                        r = add_file(c, path, &fs, m, kind, page_kib);
                else if (k == -EINVAL && depth < MAX_SHM_DIR_DEPTH)
                        r = scan_files(c, path, m, kind, page_kib, depth + 1);
        }
        ng_strv_free(names);
        return r;
}

/* Files in /dev/shm (Oracle AMM granules, PostgreSQL DSM) and on every
 * hugetlbfs mount. Only names and sizes: contents are never read. */
/* A mount stacked on the same mountpoint later in mountinfo hides this one
 * (containers mount a fresh /dev/shm over the host's): its files are not
 * the ones processes map, and scanning both would make every file an
 * orphan once. */
static bool shadowed(const struct ng_snapshot *s, size_t i)
{
        for (size_t k = i + 1; k < s->n_mounts; k++)
                if (!strcmp(s->mounts[k].mountpoint, s->mounts[i].mountpoint))
                        return true;
        return false;
}

int ng_collect_files(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct ng_mount *m = &s->mounts[i];
                int r = 0;
                if (shadowed(s, i))
                        continue;
                if (!strcmp(m->fstype, "hugetlbfs"))
                        r = scan_files(c, m->mountpoint, m, NG_SHM_FILE_HUGETLBFS, hugetlbfs_page_kib(m, s), 0);
                else if (!strcmp(m->fstype, "tmpfs") && !strcmp(m->mountpoint, NG_DEV_SHM_DIR))
                        r = scan_files(c, m->mountpoint, m, NG_SHM_FILE_TMPFS, 4, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

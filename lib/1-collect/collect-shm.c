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

int ng_collect_sysvipc(struct collector *c)
{
        char *buf;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/sysvipc/shm");
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ng_parse_sysvipc_shm(buf, &c->s->shm, &c->s->n_shm);
        free(buf);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->s->n_shm; i++)
                c->s->shm[i].ipc_ns = c->s->ipc_ns;
        c->s->has_sysvipc = true;
        return 0;
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
                .dev_major = m->major, .dev_minor = m->minor,
                /* a tree's copy has an inode of its own, not the host's */
                .inode = ng_path_is_live(c->p) ? fs->inode : 0,
                .allocated_bytes = fs->allocated_bytes, .mnt_ns = c->s->mnt_ns,
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

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
                .path = dup, .kind = ms->kind, .size_bytes = fs->size_bytes, .page_kib = ms->page_kib,
                .dev_major = m->major, .dev_minor = m->minor,
                /* a tree's copy has an inode of its own, not the host's */
                .inode = ng_path_is_live(c->p) ? fs->inode : 0,
                .allocated_bytes = fs->allocated_bytes, .mnt_ns = ms->mnt_ns, .ns_pid = ms->ns_pid,
        };
        return 0;
}

/* Another namespace's file must sit on the mount its mountinfo names:
 * reached through /proc/PID/root, a link planted in the container resolves
 * in numaguard's root, and what it leads to is not the container's. */
static bool on_mount(const struct collector *c, const struct ng_file_stat *fs, const struct mount_scan *ms)
{
        return !ms->ns_pid || !ng_path_is_live(c->p) ||
               (fs->dev_major == ms->m->major && fs->dev_minor == ms->m->minor);
}

static int scan_files(struct collector *c, const char *dir, const struct mount_scan *ms, int depth)
{
        char **names;
        size_t n;
        int r = ng_path_list(c->p, &names, &n, "%s%s", ms->prefix, dir);
        if (r < 0)
                return r == -ENOENT || r == -EACCES ? 0 : r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                char path[4096];
                if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", names[i]) >= (int) sizeof(path))
                        continue;
                struct ng_file_stat fs;
                int k = ng_path_file_stat(c->p, &fs, "%s%s", ms->prefix, path);
                if (k >= 0 && on_mount(c, &fs, ms))
                        r = add_file(c, path, &fs, ms);
                else if (k == -EINVAL && depth < MAX_SHM_DIR_DEPTH)
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

int ng_collect_mount_files(struct collector *c, const struct ng_mount *m, const char *prefix, uint64_t mnt_ns,
                           pid_t ns_pid)
{
        bool huge = !strcmp(m->fstype, "hugetlbfs");
        struct mount_scan ms = {
                .m = m, .kind = huge ? NG_SHM_FILE_HUGETLBFS : NG_SHM_FILE_TMPFS,
                .page_kib = huge ? hugetlbfs_page_kib(m, c->s) : 4,
                .prefix = prefix, .mnt_ns = mnt_ns, .ns_pid = ns_pid,
        };
        return scan_files(c, m->mountpoint, &ms, 0);
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

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Segments and their per-node placement, from one snapshot. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-segments.h"
#include "segments-internal.h"
#include "units.h"
#include "util.h"

#define MAX_SEGMENTS 1000000


const char *ng_seg_kind_name(enum ng_seg_kind k)
{
        static const char *const names[] = {
                [NG_SEG_SYSV] = "sysv",
                [NG_SEG_FILE] = "file",
                [NG_SEG_ANON_SHARED] = "anon_shared",
                [NG_SEG_PRIVATE] = "private",
        };
        return NG_NAME(names, k, "unknown");
}

const char *ng_method_name(enum ng_method m)
{
        static const char *const names[] = {
                [NG_METHOD_NONE] = "none",
                [NG_METHOD_COUNTERS] = "counters",
                [NG_METHOD_SAMPLED] = "sampled",
                [NG_METHOD_EXACT] = "exact",
        };
        return NG_NAME(names, m, "unknown");
}

const char *ng_source_name(enum ng_source src)
{
        static const char *const names[] = {
                [NG_SOURCE_NONE] = "none",
                [NG_SOURCE_SEGMENT] = "segment",
                [NG_SOURCE_COUNTER] = "counter",
                [NG_SOURCE_ATTACHER] = "attacher",
                [NG_SOURCE_POOL] = "pool",
        };
        return NG_NAME(names, src, "unknown");
}

const char *ng_segment_label(const struct ng_segment *seg, char *buf, size_t size)
{
        int n;
        if (seg->kind == NG_SEG_SYSV)
                n = snprintf(buf, size, "shmid %" PRId32 " (key 0x%08" PRIx32 ")", seg->shmid, (uint32_t) seg->key);
        else
                n = snprintf(buf, size, "%s", seg->name);
        if (seg->other_ns && n >= 0 && (size_t) n < size)
                snprintf(buf + n, size - (size_t) n, " in %s namespace %" PRIu64,
                         seg->kind == NG_SEG_SYSV ? "IPC" : "mount", seg->kind == NG_SEG_SYSV ? seg->ipc_ns : seg->mnt_ns);
        return buf;
}

const char *ng_segment_speakers_text(const struct ng_segment *seg, char *buf, size_t size)
{
        const struct ng_speakers *sp = &seg->speakers;
        uint32_t v[ELEMENTSOF(sp->uid)];
        size_t n = 0;
        for (size_t i = 0; i < sp->n && i < ELEMENTSOF(sp->uid); i++)
                if (sp->uid[i] != 0)
                        v[n++] = sp->uid[i];
        if (sp->anyone)
                snprintf(buf, size, "anyone");
        else if (sp->n == 0)
                snprintf(buf, size, "root (its owner is unknown)");
        else if (n == 0)
                snprintf(buf, size, "root");
        else if (n == 1)
                snprintf(buf, size, "root and uid %" PRIu32, v[0]);
        else
                snprintf(buf, size, "root and uids %" PRIu32 ", %" PRIu32, v[0], v[1]);
        return buf;
}

const char *ng_segment_untrusted_text(const struct ng_segment *seg, char *buf, size_t size)
{
        size_t len = 0, shown = seg->n_untrusted < 4 ? seg->n_untrusted : 3;
        buf[0] = '\0';
        for (size_t i = 0; i < shown; i++) {
                int k = snprintf(buf + len, size - len, "%s%d", i == 0 ? (seg->n_untrusted == 1 ? "pid " : "pids ") :
                                 i + 1 == seg->n_untrusted ? " and " : ", ", (int) seg->untrusted[i]);
                if (k < 0 || (size_t) k >= size - len)
                        return buf;
                len += (size_t) k;
        }
        if (seg->n_untrusted > shown)
                snprintf(buf + len, size - len, " and %zu more", seg->n_untrusted - shown);
        return buf;
}

uint64_t ng_segment_node_bytes(const struct ng_segment *seg, int node)
{
        for (size_t i = 0; i < seg->n_nodes; i++)
                if (seg->nodes[i].node == node)
                        return seg->nodes[i].bytes;
        return 0;
}

void ng_segments_resident_by_source(const struct ng_segment *v, const size_t *idx, size_t n,
                                    uint64_t ret[NG_SOURCE_COUNT_])
{
        for (int k = 0; k < NG_SOURCE_COUNT_; k++)
                ret[k] = 0;
        for (size_t i = 0; i < n; i++) {
                const struct ng_segment *seg = &v[idx[i]];
                unsigned src = seg->placement_source < NG_SOURCE_COUNT_ ? seg->placement_source : NG_SOURCE_NONE;
                if (!ng_add_u64(ret[src], seg->resident_bytes, &ret[src]))
                        ret[src] = UINT64_MAX;
        }
}

static struct ng_segment *add(struct builder *b)
{
        if (ng_grow(&b->v, &b->cap, b->n, sizeof(*b->v), MAX_SEGMENTS) < 0)
                return NULL;
        struct ng_segment *seg = &b->v[b->n++];
        memset(seg, 0, sizeof(*seg));
        seg->placement_coverage = -1;
        return seg;
}

static int add_sysv_table(struct builder *b)
{
        for (size_t i = 0; i < b->s->n_shm; i++) {
                const struct ng_shm_seg *sh = &b->s->shm[i];
                struct ng_segment *seg = add(b);
                if (!seg)
                        return -ENOMEM;
                seg->kind = NG_SEG_SYSV;
                snprintf(seg->name, sizeof(seg->name), "SYSV%08x", (uint32_t) sh->key);
                seg->shmid = sh->shmid;
                seg->key = sh->key;
                seg->uid = sh->uid;
                seg->bytes = sh->size_bytes;
                seg->bytes_unknown = sh->unknown;
                seg->dest = sh->perms & NG_SHM_DEST;
                seg->locked = sh->perms & NG_SHM_LOCKED;
                seg->nattch = sh->nattch;
                seg->inode = (uint64_t) (uint32_t) sh->shmid;
                seg->ipc_ns = sh->ipc_ns;
                seg->other_ns = sh->ipc_ns != b->s->ipc_ns;
                ng_speakers_of_shm_row(sh, &seg->speakers);
                if (sh->has_rss) {
                        seg->method = NG_METHOD_COUNTERS;
                        seg->resident_bytes = sh->rss_bytes;
                }
        }
        return 0;
}

static int add_files(struct builder *b)
{
        for (size_t i = 0; i < b->s->n_files; i++) {
                const struct ng_shm_file *f = &b->s->files[i];
                struct ng_segment *seg = add(b);
                if (!seg)
                        return -ENOMEM;
                seg->kind = NG_SEG_FILE;
                snprintf(seg->name, sizeof(seg->name), "%s", f->path);
                seg->bytes = f->size_bytes;
                seg->page_kib = f->page_kib;
                seg->huge = f->kind == NG_SHM_FILE_HUGETLBFS;
                seg->dev_major = f->dev_major;
                seg->dev_minor = f->dev_minor;
                seg->inode = f->inode;
                seg->uid = f->uid;
                seg->allocated_bytes = f->allocated_bytes;
                seg->mnt_ns = f->mnt_ns;
                seg->other_ns = f->mnt_ns != b->s->mnt_ns;
                ng_speakers_of_shm_file(f, &seg->speakers);
                seg->tmpfs_huge = f->huge;
                /* hugetlbfs pages are never swapped: its allocated pages
                 * are resident, counted by the kernel for the whole file.
                 * A tree has the count from its snapshot's record of the
                 * mount's files; an older tree's copies hold none. */
                if (seg->huge && f->allocated_bytes) {
                        seg->method = NG_METHOD_COUNTERS;
                        seg->resident_bytes = f->allocated_bytes;
                }
        }
        return 0;
}

/* The file segments, b->v[files_from..files_to), by device and inode (those
 * with one) and by device and path: a shared file mapping finds its file
 * by bisection, not by a walk of every file (a /dev/shm may hold a hundred
 * thousand). */
struct file_index {
        size_t files_from, files_to;
        size_t *by_inode, *by_name;
        size_t n_inode, n_name;
};

static int cmp_dev(const struct ng_segment *x, const struct ng_segment *y)
{
        if (x->dev_major != y->dev_major)
                return x->dev_major < y->dev_major ? -1 : 1;
        return (x->dev_minor > y->dev_minor) - (x->dev_minor < y->dev_minor);
}

static int cmp_at_inode(const void *a, const void *b, void *base)
{
        const struct ng_segment *v = base, *x = &v[*(const size_t *) a], *y = &v[*(const size_t *) b];
        int d = cmp_dev(x, y);
        if (!d)
                d = (x->inode > y->inode) - (x->inode < y->inode);
        return d ? d : (*(const size_t *) a > *(const size_t *) b) - (*(const size_t *) a < *(const size_t *) b);
}

static int cmp_at_name(const void *a, const void *b, void *base)
{
        const struct ng_segment *v = base, *x = &v[*(const size_t *) a], *y = &v[*(const size_t *) b];
        int d = cmp_dev(x, y);
        if (!d)
                d = strcmp(x->name, y->name);
        return d ? d : (*(const size_t *) a > *(const size_t *) b) - (*(const size_t *) a < *(const size_t *) b);
}

static int index_files(const struct builder *b, struct file_index *ix)
{
        size_t n = ix->files_to - ix->files_from;
        ix->by_inode = malloc((n + 1) * sizeof(*ix->by_inode));
        ix->by_name = malloc((n + 1) * sizeof(*ix->by_name));
        if (!ix->by_inode || !ix->by_name)
                return -ENOMEM;
        for (size_t i = ix->files_from; i < ix->files_to; i++) {
                if (b->v[i].inode)
                        ix->by_inode[ix->n_inode++] = i;
                ix->by_name[ix->n_name++] = i;
        }
        qsort_r(ix->by_inode, ix->n_inode, sizeof(size_t), cmp_at_inode, b->v);
        qsort_r(ix->by_name, ix->n_name, sizeof(size_t), cmp_at_name, b->v);
        return 0;
}

/* The first of v[idx[0..n)] (sorted by cmp) not before key, as an index of idx. */
static size_t lower(const struct ng_segment *v, const size_t *idx, size_t n, const struct ng_segment *key,
                    int (*cmp)(const struct ng_segment *, const struct ng_segment *))
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cmp(&v[idx[mid]], key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static int cmp_inode_key(const struct ng_segment *x, const struct ng_segment *y)
{
        int d = cmp_dev(x, y);
        return d ? d : (x->inode > y->inode) - (x->inode < y->inode);
}

static int cmp_name_key(const struct ng_segment *x, const struct ng_segment *y)
{
        int d = cmp_dev(x, y);
        return d ? d : strcmp(x->name, y->name);
}

/* The first file segment that maps m is (ng_segment_maps()), or NULL. */
static struct ng_segment *file_of(struct builder *b, const struct file_index *ix, const struct ng_map *m)
{
        struct ng_segment key = { .dev_major = m->dev_major, .dev_minor = m->dev_minor, .inode = m->inode };
        size_t best = SIZE_MAX;
        if (m->inode) {
                size_t k = lower(b->v, ix->by_inode, ix->n_inode, &key, cmp_inode_key);
                if (k < ix->n_inode && !cmp_inode_key(&b->v[ix->by_inode[k]], &key))
                        best = ix->by_inode[k];
        }
        /* by path where either has no inode (a tree's copies) */
        if (strlen(m->path) >= sizeof(key.name))
                return best == SIZE_MAX ? NULL : &b->v[best];
        snprintf(key.name, sizeof(key.name), "%s", m->path);
        for (size_t k = lower(b->v, ix->by_name, ix->n_name, &key, cmp_name_key);
             k < ix->n_name && !cmp_name_key(&b->v[ix->by_name[k]], &key); k++) {
                size_t i = ix->by_name[k];
                if ((!m->inode || !b->v[i].inode) && i < best)
                        best = i;
        }
        return best == SIZE_MAX ? NULL : &b->v[best];
}

/* The segment a mapping belongs to, created on first sight for anonymous
 * shared memory (and SysV when /proc/sysvipc is unreadable). NULL when the
 * mapping is no segment of ours (a shared library, a data file). */
static struct ng_segment *find_or_add(struct builder *b, const struct file_index *ix, const struct ng_proc *pr,
                                      const struct ng_map *m)
{
        if (m->kind == NG_MAP_OTHER)
                return NULL;
        if (m->kind == NG_MAP_FILE_SHARED)
                return file_of(b, ix, m);
        /* no file segment maps anything else */
        for (size_t i = 0; i < b->n; i++) {
                if (i == ix->files_from)
                        i = ix->files_to;
                if (i < b->n && (b->v[i].n_pids || b->v[i].kind != NG_SEG_PRIVATE) && ng_segment_maps(&b->v[i], pr, m))
                        return &b->v[i];
        }
        struct ng_segment *seg = add(b);
        if (!seg)
                return NULL;
        switch (m->kind) {
        case NG_MAP_SYSV:
                seg->kind = NG_SEG_SYSV;
                seg->key = m->sysv_key;
                seg->shmid = (int32_t) m->inode;
                seg->ipc_ns = pr->ipc_ns;
                seg->other_ns = pr->ipc_ns != b->s->ipc_ns;
                /* no row of its namespace's /proc/sysvipc/shm: its size is unknown */
                seg->bytes_unknown = true;
                snprintf(seg->name, sizeof(seg->name), "SYSV%08x", (uint32_t) m->sysv_key);
                break;
        case NG_MAP_ANON_SHARED:
                seg->kind = NG_SEG_ANON_SHARED;
                snprintf(seg->name, sizeof(seg->name), "%s (deleted)", m->path);
                break;
        default:
                seg->kind = NG_SEG_PRIVATE;
                snprintf(seg->name, sizeof(seg->name), "%s", m->path[0] ? m->path : "[anon]");
                seg->rep_start = m->start;
                break;
        }
        seg->uid = pr->status.uid;
        /* a SysV segment without a row has no owner known: root's alone */
        ng_speakers_of_map(b->s, pr, m, &seg->speakers);
        if (seg->kind != NG_SEG_SYSV) {
                seg->dev_major = m->dev_major;
                seg->dev_minor = m->dev_minor;
        }
        seg->inode = m->inode;
        return seg;
}

static int add_pid_to(pid_t **v, size_t *n, pid_t pid)
{
        if (*n && (*v)[*n - 1] == pid)
                return 0;
        if (ng_grow(v, NULL, *n, sizeof(**v), 0) < 0)
                return -ENOMEM;
        (*v)[(*n)++] = pid;
        return 0;
}

static int add_pid(struct ng_segment *seg, const struct ng_proc *pr, const struct ng_map *m)
{
        /* counted among the attachers, its maps line not taken */
        if (!ng_segment_may_speak(seg, pr)) {
                if (add_pid_to(&seg->untrusted, &seg->n_untrusted, pr->pid) < 0)
                        return -ENOMEM;
                goto attached;
        }
        if (m->page_kib && !seg->page_kib) {
                seg->page_kib = m->page_kib;
                seg->huge = m->page_kib > 4;
        }
        if (seg->kind != NG_SEG_SYSV && seg->kind != NG_SEG_FILE)
                seg->bytes = seg->bytes > m->end - m->start ? seg->bytes : m->end - m->start;
        /* A SysV segment's device is its IPC namespace's shm mount, the
         * same in every attacher's maps line; two devices for one shmid
         * in the lines of processes that may speak for it mean one line
         * is not the segment: then no device is trusted, and no sample of
         * the segment itself either (NG_SEG_DEV_CONFLICT never matches
         * one). Another user's line (a file of its own named like the
         * segment) was left out above. */
        if (seg->kind == NG_SEG_SYSV && seg->dev_major != NG_SEG_DEV_CONFLICT) {
                if (!seg->dev_major && !seg->dev_minor) {
                        seg->dev_major = m->dev_major;
                        seg->dev_minor = m->dev_minor;
                } else if (seg->dev_major != m->dev_major || seg->dev_minor != m->dev_minor)
                        seg->dev_major = seg->dev_minor = NG_SEG_DEV_CONFLICT;
        }
attached:
        if (add_pid_to(&seg->pids, &seg->n_pids, pr->pid) < 0)
                return -ENOMEM;
        if (seg->kind != NG_SEG_SYSV)
                seg->nattch = seg->n_pids;
        return 0;
}

static int collect_attachers(struct builder *b, struct file_index *ix)
{
        if (index_files(b, ix) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < b->s->n_procs; i++) {
                const struct ng_proc *pr = b->s->procs[i];
                for (size_t j = 0; j < pr->n_maps; j++) {
                        const struct ng_map *m = &pr->maps[j];
                        if (m->kind == NG_MAP_OTHER)
                                continue;
                        size_t before = b->n;
                        struct ng_segment *seg = find_or_add(b, ix, pr, m);
                        if (!seg) {
                                if (b->n != before || m->kind != NG_MAP_FILE_SHARED)
                                        return -ENOMEM;
                                continue;
                        }
                        if (add_pid(seg, pr, m) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}



int ng_segments_build(const struct ng_snapshot *s, struct ng_segment **ret, size_t *ret_n)
{
        assert(s && ret && ret_n);
        struct builder b = { .s = s };
        struct file_index ix = { 0 };
        int r = add_sysv_table(&b);
        ix.files_from = b.n;
        if (r >= 0)
                r = add_files(&b);
        ix.files_to = b.n;
        if (r >= 0)
                r = collect_attachers(&b, &ix);
        free(ix.by_inode);
        free(ix.by_name);
        if (r >= 0)
                r = ng_segments_place(&b);
        for (size_t i = 0; r >= 0 && i < b.n; i++)
                ng_segment_thp(s, &b.v[i], &b.v[i].thp);
        if (r < 0) {
                ng_segments_free(b.v, b.n);
                return r;
        }
        *ret = b.v;
        *ret_n = b.n;
        return 0;
}

void ng_segments_free(struct ng_segment *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].pids);
                free(v[i].untrusted);
                free(v[i].nodes);
        }
        free(v);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a new snapshot carries over from the previous one of the placement:
 * page sizes and tier-1 samples of the mappings that are still the same,
 * and the samples asked of segments themselves that are still there (a
 * counters-only poll between two samplings keeps the last placement). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "placement-internal.h"
#include "proc.h"
#include "ng-snapshot.h"
#include "snapshot.h"
#include "util.h"

static const struct ng_map *same_map(const struct ng_proc *pr, uint64_t start, uint64_t end)
{
        for (size_t j = 0; j < pr->n_maps; j++)
                if (pr->maps[j].start == start && pr->maps[j].end == end)
                        return &pr->maps[j];
        return NULL;
}

/* What a whole sample may name in s, sorted: the SysV rows (shmid,
 * namespace), the shmids mapped (in any namespace), and the files and
 * anonymous shared segments mapped (inode, device). */
struct triple {
        uint64_t a, b, c;
};

struct segments_there {
        struct triple *rows, *sysv_maps, *others;
        size_t n_rows, n_sysv_maps, n_others;
};

static int cmp_triple(const void *x, const void *y)
{
        const struct triple *p = x, *q = y;
        if (p->a != q->a)
                return p->a < q->a ? -1 : 1;
        if (p->b != q->b)
                return p->b < q->b ? -1 : 1;
        return (p->c > q->c) - (p->c < q->c);
}

static bool has_triple(const struct triple *v, size_t n, uint64_t a, uint64_t b, uint64_t c)
{
        struct triple key = { a, b, c };
        return n && bsearch(&key, v, n, sizeof(key), cmp_triple);
}

static void there_free(struct segments_there *t)
{
        free(t->rows);
        free(t->sysv_maps);
        free(t->others);
}

static int there_build(const struct ng_snapshot *s, struct segments_there *t)
{
        size_t maps = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                maps += s->procs[i]->n_maps;
        *t = (struct segments_there) {
                .rows = malloc((s->n_shm + 1) * sizeof(*t->rows)),
                .sysv_maps = malloc((maps + 1) * sizeof(*t->sysv_maps)),
                .others = malloc((s->n_files + maps + 1) * sizeof(*t->others)),
        };
        if (!t->rows || !t->sysv_maps || !t->others)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_shm; i++)
                t->rows[t->n_rows++] = (struct triple) { (uint64_t) (uint32_t) s->shm[i].shmid, s->shm[i].ipc_ns, 0 };
        for (size_t i = 0; i < s->n_files; i++)
                t->others[t->n_others++] = (struct triple) { s->files[i].inode, s->files[i].dev_major,
                                                             s->files[i].dev_minor };
        for (size_t i = 0; i < s->n_procs; i++)
                for (size_t j = 0; j < s->procs[i]->n_maps; j++) {
                        const struct ng_map *m = &s->procs[i]->maps[j];
                        if (m->kind == NG_MAP_SYSV)
                                t->sysv_maps[t->n_sysv_maps++] = (struct triple) { m->inode, 0, 0 };
                        else if (m->kind == NG_MAP_ANON_SHARED)
                                t->others[t->n_others++] = (struct triple) { m->inode, m->dev_major, m->dev_minor };
                }
        qsort(t->rows, t->n_rows, sizeof(*t->rows), cmp_triple);
        qsort(t->sysv_maps, t->n_sysv_maps, sizeof(*t->sysv_maps), cmp_triple);
        qsort(t->others, t->n_others, sizeof(*t->others), cmp_triple);
        return 0;
}

/* Whether the segment a whole sample names is still in s: a SysV one
 * removed (IPC_RMID) while attached is no longer listed, but still
 * mapped; carried, it is not sampled again on every poll. */
static bool whole_still_there(const struct segments_there *t, const struct ng_sample *w)
{
        if (w->sysv)
                return has_triple(t->rows, t->n_rows, w->inode, w->ipc_ns, 0) ||
                       has_triple(t->sysv_maps, t->n_sysv_maps, w->inode, 0, 0);
        return has_triple(t->others, t->n_others, w->inode, w->dev_major, w->dev_minor);
}

static int copy_sample(struct ng_snapshot *s, const struct ng_sample *os)
{
        struct ng_sample copy = *os;
        copy.np = malloc((os->n_np + 1) * sizeof(*copy.np));
        if (!copy.np)
                return -ENOMEM;
        if (os->n_np)   /* a sample with nothing resident has no np */
                memcpy(copy.np, os->np, os->n_np * sizeof(*copy.np));
        if (ng_collect_add_sample(s, &copy) < 0) {
                free(copy.np);
                return -ENOMEM;
        }
        return 0;
}

/* The samples asked of segments themselves, by the segment's identity:
 * which processes map it does not matter. The first of prev's of each
 * identity, when s has none and the segment is still there. */
static int carry_whole(struct ng_snapshot *s, const struct ng_snapshot *prev)
{
        struct ng_whole_index in_s, in_prev;
        struct segments_there there;
        _cleanup_free_ bool *carry = calloc(prev->n_samples + 1, sizeof(*carry));
        int r = carry ? 0 : -ENOMEM;
        if (r >= 0)
                r = ng_whole_index_build(s, &in_s);
        if (r >= 0 && (r = ng_whole_index_build(prev, &in_prev)) < 0)
                ng_whole_index_free(&in_s);
        if (r < 0)
                return r;
        r = there_build(s, &there);
        for (size_t i = 0; i < prev->n_samples && r >= 0; i++) {
                const struct ng_sample *w = &prev->samples[i];
                carry[i] = w->whole &&
                           ng_whole_index_find(&in_prev, w->sysv, w->ipc_ns, w->dev_major, w->dev_minor, w->inode) == w &&
                           !ng_whole_index_find(&in_s, w->sysv, w->ipc_ns, w->dev_major, w->dev_minor, w->inode) &&
                           whole_still_there(&there, w);
        }
        there_free(&there);
        /* s's samples move as they grow: its index is done with first */
        ng_whole_index_free(&in_s);
        ng_whole_index_free(&in_prev);
        int carried = 0;
        for (size_t i = 0; i < prev->n_samples && r >= 0; i++) {
                if (!carry[i])
                        continue;
                r = copy_sample(s, &prev->samples[i]);
                carried++;
        }
        return r < 0 ? r : carried;
}

int ng_snapshot_carry_placement(struct ng_snapshot *s, const struct ng_snapshot *prev)
{
        int carried = carry_whole(s, prev);
        if (carried < 0)
                return carried;
        size_t at = 0;
        for (size_t i = 0; i < s->n_procs; i++) {
                struct ng_proc *pr = s->procs[i];
                if (!pr->n_maps)
                        continue;
                const struct ng_proc *old = ng_snapshot_proc_next(prev, pr->pid, &at);
                if (!old || old->stat.starttime_ticks != pr->stat.starttime_ticks)
                        continue;
                for (size_t j = 0; j < pr->n_maps; j++) {
                        struct ng_map *m = &pr->maps[j];
                        if (!ng_map_is_segment(m))
                                continue;
                        /* prev may hold the very record (a picture's,
                         * unchanged): its page sizes are already there */
                        const struct ng_map *om = old == pr ? m : same_map(old, m->start, m->end);
                        if (!om || om->kind != m->kind || om->inode != m->inode)
                                continue;
                        if (!m->page_kib && om->page_kib) {
                                /* a shared record is never changed */
                                int r = ng_snapshot_own_proc(s, i);
                                if (r < 0)
                                        return r;
                                pr = s->procs[i];
                                m = &pr->maps[j];
                                m->page_kib = om->page_kib;
                        }
                        const struct ng_sample *os = ng_snapshot_sample(prev, pr->pid, m->start);
                        if (!os || ng_snapshot_sample(s, pr->pid, m->start))
                                continue;
                        if (copy_sample(s, os) < 0)
                                return -ENOMEM;
                        carried++;
                }
        }
        return carried;
}

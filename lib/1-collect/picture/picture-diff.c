/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the picture's change detection: which segments and processes may
 * have changed since the last collection (picture.c reads them again).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "picture-internal.h"

static int seg_cmp(const void *a, const void *b)
{
        const struct pic_seg *x = a, *y = b;
        return (x->shmid > y->shmid) - (x->shmid < y->shmid);
}

static struct pic_seg *seg_find(struct pic_seg *v, size_t n, int32_t shmid)
{
        struct pic_seg key = { .shmid = shmid };
        return v ? bsearch(&key, v, n, sizeof(*v), seg_cmp) : NULL;
}

/* RssShmem and VmPTE of small-page attachers move as they touch the
 * segment; a process whose shared memory is all hugetlb needs no reread,
 * nor one whose segments are all below the size that counts. */
bool ng_picture_counters_move(const struct ng_proc *pr, uint64_t min_bytes)
{
        if (pr->status.hugetlb_kib > 0 && pr->status.rss_shmem_kib == 0)
                return false;
        for (size_t j = 0; j < pr->n_maps; j++)
                if (ng_map_is_segment(&pr->maps[j]) && pr->maps[j].end - pr->maps[j].start >= min_bytes)
                        return true;
        return false;
}

bool ng_picture_pid_in(const pid_t *v, size_t n, pid_t pid)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] == pid)
                        return true;
        return false;
}

/* The segments of s, each with the pids worth rereading when it changed:
 * its last attacher or detacher, and its creator when it is new. */
int ng_picture_diff_segments(struct ng_picture *pic, const struct ng_snapshot *s, bool full,
                             struct pic_seg **ret, pid_t **ret_want, size_t *ret_n_want)
{
        struct pic_seg *nv = calloc(s->n_shm + 1, sizeof(*nv));
        pid_t *want = calloc(2 * s->n_shm + 1, sizeof(*want));
        size_t n_want = 0;
        if (!nv || !want) {
                free(nv);
                free(want);
                return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_shm; i++) {
                const struct ng_shm_seg *g = &s->shm[i];
                const struct pic_seg *old = seg_find(pic->segs, pic->n_segs, g->shmid);
                nv[i] = (struct pic_seg) { .shmid = g->shmid, .nattch = g->nattch, .lpid = g->lpid,
                                           .atime = g->atime, .dtime = g->dtime, .hidden = old ? old->hidden : 0 };
                if (full || (old && old->nattch == g->nattch && old->lpid == g->lpid && old->atime == g->atime &&
                             old->dtime == g->dtime))
                        continue;
                if (g->lpid > 0)
                        want[n_want++] = g->lpid;
                if (!old && g->cpid > 0)
                        want[n_want++] = g->cpid;
        }
        qsort(nv, s->n_shm, sizeof(*nv), seg_cmp);
        *ret = nv;
        *ret_want = want;
        *ret_n_want = n_want;
        return 0;
}

/* Attachments the picture sees per segment (one per VMA, as nattch counts
 * them) against nattch: after a full scan the difference is recorded;
 * after an incremental one a new difference means an attach the picture
 * missed (two processes attached in one interval): the next collection
 * rescans. */
bool ng_picture_attachments_match(struct pic_seg *segs, size_t n_segs, struct pic_ent *const *v, size_t n, bool full)
{
        int64_t *seen = calloc(n_segs + 1, sizeof(*seen));
        bool match = true;
        if (!seen)
                return false;
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; v[i]->kept && j < v[i]->pr.n_maps; j++) {
                        const struct ng_map *m = &v[i]->pr.maps[j];
                        struct pic_seg *g = m->kind == NG_MAP_SYSV && m->inode <= INT32_MAX ?
                                            seg_find(segs, n_segs, (int32_t) m->inode) : NULL;
                        if (g)
                                seen[g - segs]++;
                }
        for (size_t k = 0; k < n_segs; k++) {
                int64_t hidden = (int64_t) segs[k].nattch - seen[k];
                if (full)
                        segs[k].hidden = hidden;
                else if (hidden != segs[k].hidden)
                        match = false;
        }
        free(seen);
        return match;
}

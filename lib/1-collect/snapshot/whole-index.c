/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The whole samples of a snapshot by identity (snapshot.h). */

#include <errno.h>
#include <stdlib.h>

#include "snapshot.h"

/* A SysV segment is (IPC namespace, shmid) and, where known, a device; a
 * file or anonymous segment its device and inode. Sorted by kind, inode,
 * namespace (SysV), device, then place in the snapshot. */
struct key {
        bool sysv;
        uint64_t inode, ipc_ns;
        unsigned major, minor;
};

static struct key key_of(const struct ng_sample *w)
{
        return (struct key) { .sysv = w->sysv, .inode = w->inode, .ipc_ns = w->sysv ? w->ipc_ns : 0,
                              .major = w->sysv ? 0 : w->dev_major, .minor = w->sysv ? 0 : w->dev_minor };
}

static int cmp_u64(uint64_t a, uint64_t b)
{
        return (a > b) - (a < b);
}

static int cmp_key(const struct key *x, const struct key *y)
{
        int d = (int) x->sysv - (int) y->sysv;
        if (!d)
                d = cmp_u64(x->inode, y->inode);
        if (!d)
                d = cmp_u64(x->ipc_ns, y->ipc_ns);
        if (!d)
                d = cmp_u64(x->major, y->major);
        return d ? d : cmp_u64(x->minor, y->minor);
}

static int cmp_sample(const void *a, const void *b)
{
        const struct ng_sample *x = *(const struct ng_sample *const *) a, *y = *(const struct ng_sample *const *) b;
        struct key kx = key_of(x), ky = key_of(y);
        int d = cmp_key(&kx, &ky);
        /* the snapshot's order: the array's */
        return d ? d : (x > y) - (x < y);
}

int ng_whole_index_build(const struct ng_snapshot *s, struct ng_whole_index *ret)
{
        *ret = (struct ng_whole_index) { 0 };
        size_t n = 0;
        for (size_t i = 0; i < s->n_samples; i++)
                n += s->samples[i].whole;
        if (!n)
                return 0;
        ret->v = malloc(n * sizeof(*ret->v));
        if (!ret->v)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_samples; i++)
                if (s->samples[i].whole)
                        ret->v[ret->n++] = &s->samples[i];
        qsort(ret->v, ret->n, sizeof(*ret->v), cmp_sample);
        return 0;
}

void ng_whole_index_free(struct ng_whole_index *ix)
{
        free(ix->v);
        *ix = (struct ng_whole_index) { 0 };
}

const struct ng_sample *ng_whole_index_find(const struct ng_whole_index *ix, bool sysv, uint64_t ipc_ns,
                                            unsigned major, unsigned minor, uint64_t inode)
{
        /* a SysV segment's device is matched below: where the caller knows
         * none (0:0), any */
        struct key want = { .sysv = sysv, .inode = inode, .ipc_ns = sysv ? ipc_ns : 0,
                            .major = sysv ? 0 : major, .minor = sysv ? 0 : minor };
        size_t lo = 0, hi = ix->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                struct key k = key_of(ix->v[mid]);
                if (cmp_key(&k, &want) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        const struct ng_sample *best = NULL;
        for (size_t i = lo; i < ix->n; i++) {
                const struct ng_sample *w = ix->v[i];
                struct key k = key_of(w);
                if (cmp_key(&k, &want))
                        break;
                bool dev = w->dev_major == major && w->dev_minor == minor;
                if ((!sysv || dev || (!major && !minor)) && (!best || w < best))
                        best = w;
        }
        return best;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: how long the picture's entries live (struct ng_proc_gen in
 * picture-internal.h). Snapshots point at the records of processes with no
 * maps instead of copying them; an entry the picture lets go of waits until
 * no snapshot can point at it.
 */

#include <stdlib.h>

#include "picture-internal.h"

static void drop_rec(struct pic_rec *h)
{
        if (!h)
                return;
        ng_proc_done(&h->pr);
        free(h);
}

/* Frees e; snapshots holding its shared parts keep them. */
static void drop_entry(struct pic_ent *e)
{
        if (!e)
                return;
        drop_rec(e->handed);
        ng_proc_done(&e->pr);
        free(e);
}

void ng_proc_gen_unref(struct ng_proc_gen *g)
{
        while (g && __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0) {
                struct ng_proc_gen *newer = g->newer;
                for (struct pic_ent *e = g->retired, *next; e; e = next) {
                        next = e->next_retired;
                        drop_entry(e);
                }
                for (struct pic_rec *h = g->retired_recs, *next; h; h = next) {
                        next = h->next_retired;
                        drop_rec(h);
                }
                free(g);
                g = newer;
        }
}

/* The picture lets go of e: freed now when no snapshot was handed out,
 * else once no snapshot that may point at it is left. */
void ng_picture_retire(struct ng_picture *pic, struct pic_ent *e)
{
        if (!e)
                return;
        if (!pic->gen) {
                drop_entry(e);
                return;
        }
        e->next_retired = pic->gen->retired;
        pic->gen->retired = e;
}

void ng_picture_changed(struct ng_picture *pic, struct pic_ent *e)
{
        struct pic_rec *h = e->handed;
        if (!h)
                return;
        e->handed = NULL;
        if (!pic->gen) {
                drop_rec(h);
                return;
        }
        h->next_retired = pic->gen->retired_recs;
        pic->gen->retired_recs = h;
}

void ng_picture_retire_all(struct ng_picture *pic, struct pic_ent **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ng_picture_retire(pic, v[i]);
        free(v);
}

/* A new generation for the snapshot being handed out (its reference
 * included), current from now on; NULL on ENOMEM. */
struct ng_proc_gen *ng_picture_next_gen(struct ng_picture *pic)
{
        struct ng_proc_gen *g = calloc(1, sizeof(*g));
        if (!g)
                return NULL;
        g->refs = 2;            /* the picture's and the snapshot's */
        if (pic->gen) {
                g->refs++;      /* the older generation's */
                pic->gen->newer = g;
                ng_proc_gen_unref(pic->gen);
        }
        pic->gen = g;
        return g;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the CPU time of segment holders, read by turns through the
 * picture (docs/ARCHITECTURE.md, "Cost tiers"). A price weighs where each
 * thread of a database ran, so every process that maps a segment has its
 * stat and its threads' read: new and changed ones when they are read in
 * full, the others at their turn, at most the picture's budget of them a
 * collection, in pid order from where the last collection stopped. Each is
 * then read at least every ceil(holders / budget) collections, and
 * ng_snapshot_cpu_since() weighs the CPU time since its own last read at
 * the same scale for all, so the shares over a turn are those of reading
 * every thread.
 */

#include <errno.h>
#include <stdlib.h>

#include "picture-internal.h"

void ng_picture_set_read_budget(struct ng_picture *pic, unsigned budget)
{
        pic->read_budget = budget;
}

/* One file per process and one per thread, no page walk. 1 done, 0 gone,
 * <0 on a real error. */
static int reread_cpu(struct collector *c, struct ng_proc *pr)
{
        struct ng_pid_stat st;
        int r = ng_collect_read_stat(c, pr->pid, &st);
        if (r == -ENOENT || r == -ESRCH || r == -EACCES)
                return 0;
        if (r < 0)
                return r;
        if (st.starttime_ticks != pr->stat.starttime_ticks)
                return 0;       /* another process now: the next listing reads it */
        pr->stat = st;
        pr->cpu_weight_ticks = st.utime_ticks + st.stime_ticks;
        r = ng_collect_read_tasks(c, pr);
        return r < 0 ? r : 1;
}

static bool holder(const struct pic_ent *e)
{
        return e->kept && e->holds;
}

/* The holders not read by this collection yet, pid order (v's): their
 * indexes in due, and where the turn starts (the first after the cursor). */
static size_t due_list(struct ng_picture *pic, struct pic_ent **v, size_t n, size_t *due, size_t *ret_n,
                       uint64_t *ret_holders)
{
        size_t k = 0, start = SIZE_MAX;
        uint64_t holders = 0;
        for (size_t i = 0; i < n; i++) {
                struct pic_ent *e = v[i];
                if (!holder(e))
                        continue;
                holders++;
                if (e->fresh || e->rec.cpu_read_seq == pic->seq) {
                        e->rec.cpu_read_seq = pic->seq;
                        continue;
                }
                if (start == SIZE_MAX && e->pr.pid > pic->cpu_cursor)
                        start = k;
                due[k++] = i;
        }
        *ret_n = k;
        *ret_holders = holders;
        return start == SIZE_MAX ? 0 : start;
}

int ng_picture_read_cpu(struct ng_picture *pic, struct collector *c, struct pic_ent **v, size_t n)
{
        size_t *due = malloc((n + 1) * sizeof(*due)), n_due;
        if (!due)
                return -ENOMEM;
        uint64_t holders;
        size_t start = due_list(pic, v, n, due, &n_due, &holders);
        size_t budget = pic->read_budget ? pic->read_budget : SIZE_MAX, reads = 0;
        int r = 0;
        for (size_t k = 0; k < n_due && reads < budget; k++) {
                struct pic_ent *e = v[due[(start + k) % n_due]];
                reads++;
                pic->cpu_cursor = e->pr.pid;
                r = reread_cpu(c, &e->pr);
                if (r < 0)
                        break;
                ng_picture_changed(pic, e);
                if (r == 0) {   /* gone since the listing */
                        e->kept = false;
                        pic->stats.procs_gone++;
                        continue;
                }
                e->rec.cpu_read_seq = pic->seq;
        }
        free(due);
        if (r < 0)
                return r;
        pic->stats.cpu_holders = holders;
        pic->stats.cpu_reads = holders - n_due + reads;
        pic->stats.cpu_read_every = 1;
        if (pic->read_budget && holders > pic->read_budget)
                pic->stats.cpu_read_every = (unsigned) ((holders + pic->read_budget - 1) / pic->read_budget);
        c->s->cpu_read_every = pic->stats.cpu_read_every;
        return 0;
}

/* ---- each process's CPU time since the previous snapshot ---- */

/* Thread tid of pr, looked for at index k first: a process's threads are
 * listed in the same order from one read to the next. */
static const struct ng_task *task_of(const struct ng_proc *pr, size_t k, pid_t tid)
{
        if (k < pr->n_tasks && pr->tasks[k].tid == tid)
                return &pr->tasks[k];
        for (size_t i = 0; i < pr->n_tasks; i++)
                if (pr->tasks[i].tid == tid)
                        return &pr->tasks[i];
        return NULL;
}

/* CPU time only grows; a value that went down (a tree edited, a counter
 * reset) counts whole rather than wrapping. Read after window collections
 * of a picture reading by turns, it is scaled to every collections: the
 * same rate weighs the same whether read one poll ago or every polls ago. */
static uint64_t since(uint64_t now, uint64_t then, uint64_t window, unsigned every)
{
        uint64_t d = now >= then ? now - then : now;
        if (window == every)
                return d;
        return (uint64_t) ((double) d * every / (double) window + 0.5);
}

/* Not read by this collection (a picture's turn had not come): its
 * figures are those of its last read, and so are its weights. */
static void keep_weights(struct ng_proc *pr, const struct ng_proc *old)
{
        pr->cpu_weight_ticks = old->cpu_weight_ticks;
        for (size_t k = 0; k < pr->n_tasks; k++) {
                const struct ng_task *ot = task_of(old, k, pr->tasks[k].tid);
                pr->tasks[k].weight_ticks = ot ? ot->weight_ticks : 0;
        }
}

static void weigh(struct ng_proc *pr, const struct ng_proc *old, unsigned every)
{
        uint64_t window = every;
        uint64_t seq = proc_rec_of(pr)->cpu_read_seq, old_seq = proc_rec_of(old)->cpu_read_seq;
        if (seq && old_seq) {
                if (seq == old_seq) {
                        keep_weights(pr, old);
                        return;
                }
                if (seq > old_seq)
                        window = seq - old_seq;
        }
        pr->cpu_weight_ticks = since(pr->stat.utime_ticks + pr->stat.stime_ticks,
                                     old->stat.utime_ticks + old->stat.stime_ticks, window, every);
        for (size_t k = 0; k < pr->n_tasks; k++) {
                struct ng_task *t = &pr->tasks[k];
                const struct ng_task *ot = task_of(old, k, t->tid);
                /* a thread started since: all of its time is new */
                t->weight_ticks = ot ? since(t->ticks, ot->ticks, window, every) : t->ticks;
        }
}

/* Both snapshots hold their processes in pid order: one pass over each. */
void ng_snapshot_cpu_since(struct ng_snapshot *s, const struct ng_snapshot *prev)
{
        unsigned every = s->cpu_read_every ? s->cpu_read_every : 1;
        size_t j = 0;
        for (size_t i = 0; i < s->n_procs; i++) {
                struct ng_proc *pr = s->procs[i];
                /* Without maps a record may be a picture's (shared): its
                 * process is in no price. */
                if (!pr->n_maps)
                        continue;
                while (j < prev->n_procs && prev->procs[j]->pid < pr->pid)
                        j++;
                const struct ng_proc *old = j < prev->n_procs && prev->procs[j]->pid == pr->pid ? prev->procs[j] : NULL;
                /* old == pr: a picture's record handed to both, unchanged
                 * since (not read again): its weights are prev's, kept. A
                 * shared record prev did not hold is new to s: weighed
                 * here, before any later snapshot gets it. */
                if (!old || old == pr || old->stat.starttime_ticks != pr->stat.starttime_ticks)
                        continue;
                weigh(pr, old, every);
        }
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the process picture kept between polls (ng-snapshot.h). A
 * collection through it costs the /proc listing plus reads of what may have
 * changed, instead of five files per process (docs/ARCHITECTURE.md,
 * "Cost tiers").
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "namespaces.h"
#include "parse.h"
#include "picture-internal.h"
#include "snapshot.h"

int ng_picture_new(unsigned full_scan_every, struct ng_picture **ret)
{
        struct ng_picture *pic = calloc(1, sizeof(*pic));
        if (!pic)
                return -ENOMEM;
        pic->full_scan_every = full_scan_every ? full_scan_every : 1;
        *ret = pic;
        return 0;
}

void ng_picture_free(struct ng_picture *pic)
{
        if (!pic)
                return;
        ng_picture_retire_all(pic, pic->v, pic->n);
        ng_proc_gen_unref(pic->gen);
        free(pic->segs);
        ng_proc_events_free(pic->events);
        free(pic->touched.v);
        if (pic->shm_cache)
                pic->free_shm_cache(pic->shm_cache);
        free(pic);
}

void ng_picture_set_full_scan_every(struct ng_picture *pic, unsigned full_scan_every)
{
        pic->full_scan_every = full_scan_every ? full_scan_every : 1;
}

void ng_picture_invalidate(struct ng_picture *pic)
{
        pic->valid = false;
}

void ng_picture_use_events(struct ng_picture *pic, bool use)
{
        if (use) {
                if (!pic->events)
                        pic->events_tried = false;      /* try at the next collection */
                return;
        }
        ng_proc_events_free(pic->events);
        pic->events = NULL;
        pic->events_tried = true;
}

void ng_picture_get_stats(const struct ng_picture *pic, struct ng_picture_stats *ret)
{
        *ret = pic->stats;
}

struct shm_cache *ng_picture_shm_cache(const struct ng_picture *pic)
{
        return pic->shm_cache;
}

void ng_picture_keep_shm_cache(struct ng_picture *pic, struct shm_cache *cache,
                               void (*free_cache)(struct shm_cache *cache))
{
        pic->shm_cache = cache;
        pic->free_shm_cache = free_cache;
}

unsigned ng_picture_full_scan_every(const struct ng_picture *pic)
{
        return pic->full_scan_every;
}

void ng_picture_count_shm(struct ng_picture *pic, unsigned listed, unsigned copied)
{
        pic->stats.shm_listed = listed;
        pic->stats.shm_copied = copied;
}

/* ---- what is handed to the snapshot ---- */

/* e's handed copy, made when there is none: what each snapshot gets while
 * e->pr is unchanged. */
static int handed(struct pic_ent *e, struct ng_proc **ret)
{
        if (!e->handed) {
                struct pic_rec *h = calloc(1, sizeof(*h));
                if (!h)
                        return -ENOMEM;
                int r = ng_proc_copy_own(&e->pr, &h->pr);
                if (r < 0) {
                        free(h);
                        return r;
                }
                h->rec.shared = true;
                e->handed = h;
        }
        *ret = &e->handed->pr;
        return 0;
}

/* ---- change detection ---- */

/* ---- one collection ---- */

/* Whether the known entry old is still the process at its pid: the
 * directory inode is the same, or the start time is. */
static bool same_process(struct collector *c, const struct pic_ent *old, uint64_t ino)
{
        struct ng_pid_stat st;
        if (old->ino == ino)
                return true;
        return ng_collect_read_stat(c, old->pr.pid, &st) >= 0 && st.starttime_ticks == old->pr.stat.starttime_ticks;
}

/* A new entry for pid, read in full (kept false for a kernel thread or a
 * process gone meanwhile); its cgroup list is like's when equal (the
 * entry before it in pid order: siblings share their cgroup). */
static int read_entry(struct collector *c, pid_t pid, const struct pic_ent *like, struct pic_ent **ret)
{
        struct pic_ent *e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        c->s->cost.procs_scanned++;
        int r = ng_collect_read_proc(c, pid, &e->pr);
        if (r > 0 && ng_proc_share(&e->pr, like && like->kept ? &like->pr : NULL) < 0) {
                ng_proc_done(&e->pr);
                r = -ENOMEM;
        }
        if (r < 0) {
                free(e);
                return r;
        }
        e->kept = r > 0;
        e->fresh = true;
        e->mapped = e->pr.n_maps > 0;
        e->holds = ng_proc_maps_segment(&e->pr);
        e->rec.shared = true;
        *ret = e;
        return 0;
}

/* Merges the listing with the picture into nv: known processes moved over,
 * new ones (and every one when full) read. */
static int merge_listing(struct ng_picture *pic, struct collector *c, const struct ng_pid_entry *pids, size_t n,
                         bool full, struct pic_ent **nv, size_t *ret_n)
{
        size_t j = 0, k = 0;
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                while (j < pic->n && pic->v[j]->pr.pid < pids[i].pid) {
                        pic->stats.procs_gone += pic->v[j]->kept;
                        ng_picture_retire(pic, pic->v[j++]);
                }
                struct pic_ent *old = j < pic->n && pic->v[j]->pr.pid == pids[i].pid ? pic->v[j++] : NULL;
                struct pic_ent *e;
                if (old && !full && same_process(c, old, pids[i].ino)) {
                        e = old;
                        e->fresh = false;
                } else {
                        pic->stats.procs_new += !old;
                        ng_picture_retire(pic, old);
                        r = read_entry(c, pids[i].pid, k ? nv[k - 1] : NULL, &e);
                        if (r < 0)
                                break;
                        if (!e->kept)
                                pic->stats.procs_new -= !old;
                }
                e->ino = pids[i].ino;
                nv[k++] = e;
        }
        for (; j < pic->n; j++) {
                pic->stats.procs_gone += pic->v[j]->kept;
                ng_picture_retire(pic, pic->v[j]);
        }
        free(pic->v);
        pic->v = NULL;
        pic->n = 0;
        *ret_n = k;
        return r;
}

/* By pid, then in the order the kernel sent them. */
static int touch_cmp(const void *a, const void *b)
{
        const struct ng_pid_touch *x = a, *y = b;
        if (x->pid != y->pid)
                return (x->pid > y->pid) - (x->pid < y->pid);
        return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Merges what the process events name with the picture into nv: each
 * process named is read again (or dropped when gone), every other one moved
 * over unread. No /proc listing. A process born and gone since the last
 * collection is not looked for. */
static int apply_events(struct ng_picture *pic, struct collector *c, struct ng_pid_touch *touched, size_t n_touched,
                        struct pic_ent **nv, size_t *ret_n)
{
        /* The last event of each pid decides. (No event yet: touched is
         * NULL, which qsort() must not be given even for 0 elements.) */
        if (n_touched > 1)
                qsort(touched, n_touched, sizeof(*touched), touch_cmp);
        size_t j = 0, k = 0;
        int r = 0;
        for (size_t i = 0; i < n_touched && r >= 0; i++) {
                if (i + 1 < n_touched && touched[i + 1].pid == touched[i].pid)
                        continue;
                while (j < pic->n && pic->v[j]->pr.pid < touched[i].pid) {
                        pic->v[j]->fresh = false;
                        nv[k++] = pic->v[j++];
                }
                struct pic_ent *old = j < pic->n && pic->v[j]->pr.pid == touched[i].pid ? pic->v[j++] : NULL, *e;
                if (!old && touched[i].exited)
                        continue;
                r = read_entry(c, touched[i].pid, k ? nv[k - 1] : NULL, &e);
                if (r < 0) {
                        ng_picture_retire(pic, old);
                        break;
                }
                bool gone = !e->kept && e->pr.stat.pid == 0;
                if (old) {
                        pic->stats.procs_gone += old->kept && !e->kept;
                        pic->stats.procs_reread += old->kept && e->kept;
                        e->ino = old->ino;
                        ng_picture_retire(pic, old);
                } else {
                        pic->stats.procs_new += e->kept;
                }
                if (gone)
                        ng_picture_retire(pic, e);
                else
                        nv[k++] = e;
        }
        for (; j < pic->n; j++) {
                pic->v[j]->fresh = false;
                nv[k++] = pic->v[j];
        }
        free(pic->v);
        pic->v = NULL;
        pic->n = 0;
        *ret_n = k;
        return r;
}

/* Takes the counters of a status read again into *e; a process whose CPU
 * or node sets changed is read again in full (the sets are shared), as is
 * one without maps (its record may be a snapshot's, never changed). */
static int take_status(struct ng_picture *pic, struct collector *c, struct pic_ent **e, struct ng_pid_status *st)
{
        struct ng_pid_status *cur = &(*e)->pr.status;
        if (!(*e)->mapped || !ng_idset_equal(&st->cpus_allowed, &cur->cpus_allowed) ||
            !ng_idset_equal(&st->mems_allowed, &cur->mems_allowed) ||
            st->has_cpus_allowed != cur->has_cpus_allowed || st->has_mems_allowed != cur->has_mems_allowed) {
                ng_pid_status_done(st);
                struct pic_ent *n;
                int r = read_entry(c, (*e)->pr.pid, *e, &n);
                if (r < 0)
                        return r;
                n->ino = (*e)->ino;
                ng_picture_retire(pic, *e);
                *e = n;
                return n->kept;
        }
        ng_pid_status_done(st);
        st->cpus_allowed = cur->cpus_allowed;
        st->mems_allowed = cur->mems_allowed;
        *cur = *st;
        ng_picture_changed(pic, *e);
        return 1;
}

/* The status counters of the processes in due (indexes into v, pid
 * order), at most the picture's budget of them, by turns from where the
 * last collection that read them stopped. */
static int reread_counters(struct ng_picture *pic, struct collector *c, struct pic_ent **v, const size_t *due,
                           size_t n_due)
{
        size_t start = 0, budget = pic->read_budget ? pic->read_budget : SIZE_MAX;
        while (start < n_due && v[due[start]]->pr.pid <= pic->counters_cursor)
                start++;
        for (size_t k = 0; k < n_due && k < budget; k++) {
                size_t i = due[(start + k) % n_due];
                struct ng_pid_status st;
                pic->stats.status_reread++;
                pic->counters_cursor = v[i]->pr.pid;
                int r = ng_collect_read_status(c, v[i]->pr.pid, &st);
                if (r > 0)
                        r = take_status(pic, c, &v[i], &st);
                if (r < 0)
                        return r;
                if (r == 0) {   /* gone since the listing */
                        v[i]->kept = false;
                        pic->stats.procs_gone++;
                }
        }
        return 0;
}

/* Rereads what the segment and file changes point at, and when the
 * collection places segments (not on a counters-only poll) the counters
 * that move, by turns. The CPU time of the processes that map a segment is
 * read after, by turns too (picture-cpu.c). */
static int refresh(struct ng_picture *pic, struct collector *c, struct pic_ent **v, size_t n,
                   const pid_t *want, size_t n_want, bool files_changed)
{
        bool counters = c->o.placement != NG_PLACEMENT_COUNTERS;
        size_t *due = counters ? malloc((n + 1) * sizeof(*due)) : NULL, n_due = 0;
        if (counters && !due)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct pic_ent *e = v[i];
                if (!e->kept || e->fresh)
                        continue;
                /* No segment, no counter that moves: only a pid the
                 * segments point at is read again (most processes). */
                if (!e->mapped && !ng_picture_pid_in(want, n_want, e->pr.pid))
                        continue;
                int r = 1;
                bool whole = ng_picture_pid_in(want, n_want, e->pr.pid) ||
                             (files_changed && e->holds);
                if (whole) {
                        struct pic_ent *ne;
                        pic->stats.procs_reread++;
                        r = read_entry(c, e->pr.pid, e, &ne);
                        if (r < 0) {
                                free(due);
                                return r;
                        }
                        ne->ino = e->ino;
                        ne->fresh = false;
                        ne->rec.cpu_read_seq = pic->seq;
                        ng_picture_retire(pic, e);
                        v[i] = ne;
                        r = ne->kept;
                } else if (counters && ng_picture_counters_move(&e->pr, c->o.min_private_bytes)) {
                        due[n_due++] = i;
                }
                if (r == 0) {   /* gone since the listing */
                        v[i]->kept = false;
                        pic->stats.procs_gone++;
                }
        }
        int r = n_due ? reread_counters(pic, c, v, due, n_due) : 0;
        free(due);
        return r;
}

/* s gets a new generation, and of each kept process the picture's record
 * (no maps) or the copy handed while the process is unchanged (maps). */
static int hand_over(struct ng_picture *pic, struct ng_snapshot *s)
{
        if (!(snapshot_rec_of(s)->proc_gen = ng_picture_next_gen(pic)))
                return -ENOMEM;
        size_t kept = 0;
        for (size_t i = 0; i < pic->n; i++)
                kept += pic->v[i]->kept;
        if (!(s->procs = calloc(kept + 1, sizeof(*s->procs))))
                return -ENOMEM;
        for (size_t i = 0; i < pic->n; i++) {
                struct pic_ent *e = pic->v[i];
                if (!e->kept)
                        continue;
                if (!e->mapped) {
                        s->procs[s->n_procs++] = &e->pr;
                        continue;
                }
                int r = handed(e, &s->procs[s->n_procs]);
                if (r < 0)
                        return r;
                s->n_procs++;
        }
        return 0;
}

/* The first collection on the live host listens to process events; a
 * kernel that refuses stays with the listing. */
static void events_start(struct ng_picture *pic, struct collector *c)
{
        if (pic->events_tried || !ng_path_is_live(c->p))
                return;
        pic->events_tried = true;
        int r = ng_proc_events_open(&pic->events);
        pic->events_errno = r < 0 ? -r : 0;
        pic->events_new = r >= 0;
}

/* The processes named by the events since the last collection, in
 * pic->touched: 1, or 0 when the listing must serve (no events, or some
 * lost), <0 on a real error. */
static int events_take(struct ng_picture *pic)
{
        if (!pic->events)
                return 0;
        int r = ng_proc_events_drain(pic->events, &pic->touched);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOBUFS)
                return 0;
        if (r < 0) {    /* the socket broke: back to the listing for good */
                pic->events_errno = -r;
                ng_proc_events_free(pic->events);
                pic->events = NULL;
                return 0;
        }
        return 1;
}

bool ng_pid_witness_quiet(const struct ng_pid_witness *was, const struct ng_pid_witness *now, uint64_t caller)
{
        if (now->threads != was->threads || now->last_pid < was->last_pid || now->own < was->own)
                return false;
        uint64_t handed = now->last_pid - was->last_pid, own = now->own - was->own;
        return handed == own || (caller && now->last_pid == caller && handed == own + 1);
}

/* Whether no process or thread started or ended since the last listing:
 * the same number of threads exists and the kernel handed out no pid but
 * to threads of this process: the readers that join other IPC namespaces
 * (ns-read.c) and the calling thread (numaguardd collects on a thread it
 * starts for each poll, in place of the last poll's, which has ended).
 * An exec() changes neither, as it changes nothing the listing shows
 * either. Reads /proc/loadavg (of a tree too, where it has one) and keeps
 * it for the next collection; false whenever it cannot tell. */
static bool quiet_since_listing(struct ng_picture *pic, struct collector *c, bool full)
{
        bool had = pic->witness_ok;
        bool live = ng_path_is_live(c->p);
        struct ng_pid_witness now = { .own = live ? ng_ns_readers_started() : 0 };
        char *buf;
        pic->witness_ok = false;
        if (ng_collect_read(c, &buf, NULL, "/proc/loadavg") < 0)
                return false;   /* a tree without it, say */
        int r = ng_parse_loadavg(buf, &now.threads, &now.last_pid);
        free(buf);
        if (r < 0)
                return false;
        bool quiet = had && !full && ng_pid_witness_quiet(&pic->witness, &now, live ? (uint64_t) gettid() : 0);
        pic->witness_ok = true;
        pic->witness = now;
        return quiet;
}

/* Every known process moved over unread. */
static int keep_all(struct ng_picture *pic, struct pic_ent ***ret_nv, size_t *ret_n)
{
        struct pic_ent **nv = calloc(pic->n + 1, sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        for (size_t i = 0; i < pic->n; i++) {
                pic->v[i]->fresh = false;
                nv[i] = pic->v[i];
        }
        *ret_n = pic->n;
        free(pic->v);
        pic->v = NULL;
        pic->n = 0;
        *ret_nv = nv;
        return 0;
}

/* Known processes merged with the listing, or with the process events when
 * they can serve (never on a full scan). */
static int merge(struct ng_picture *pic, struct collector *c, bool full, struct pic_ent ***ret_nv, size_t *ret_n)
{
        struct ng_pid_entry *pids;
        size_t n;
        int r = events_take(pic);
        if (r < 0)
                return r;
        pic->stats.events = r > 0 && !full && !pic->events_new;
        pic->events_new = false;
        pic->stats.listing_skipped = false;
        if (pic->stats.events) {
                pic->witness_ok = false;
                struct pic_ent **nv = calloc(pic->n + pic->touched.n + 1, sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                *ret_nv = nv;
                return apply_events(pic, c, pic->touched.v, pic->touched.n, nv, ret_n);
        }
        if (quiet_since_listing(pic, c, full)) {
                pic->stats.listing_skipped = true;
                return keep_all(pic, ret_nv, ret_n);
        }
        r = ng_path_list_pids(c->p, &pids, &n, NG_PROC_DIR);
        if (r == -ENOENT) {
                pids = NULL;
                n = 0;
        } else if (r < 0) {
                return r;
        }
        struct pic_ent **nv = calloc(n + 1, sizeof(*nv));
        r = nv ? merge_listing(pic, c, pids, n, full, nv, ret_n) : -ENOMEM;
        free(pids);
        *ret_nv = nv;
        return r;
}

static int update(struct ng_picture *pic, struct collector *c, bool full)
{
        struct ng_snapshot *s = c->s;
        struct pic_seg *segs = NULL;
        pid_t *want = NULL;
        size_t n_v = 0, n_want = 0;
        struct pic_ent **nv = NULL;
        events_start(pic, c);
        int r = merge(pic, c, full, &nv, &n_v);
        uint64_t sig = c->files_sig;
        if (r >= 0)
                r = ng_picture_diff_segments(pic, s, full, &segs, &want, &n_want);
        if (r >= 0 && !full)
                r = refresh(pic, c, nv, n_v, want, n_want, sig != pic->files_sig);
        if (r >= 0)
                r = ng_picture_read_cpu(pic, c, nv, n_v);
        free(want);
        if (r < 0) {
                ng_picture_retire_all(pic, nv, n_v);
                free(segs);
                return r;
        }
        pic->v = nv;
        pic->n = n_v;
        free(pic->segs);
        pic->segs = segs;
        pic->n_segs = s->n_shm;
        pic->files_sig = sig;
        if (!ng_picture_attachments_match(segs, s->n_shm, nv, n_v, full))
                pic->since_full = pic->full_scan_every;         /* rescan next time */
        return 0;
}

int ng_picture_collect_procs(struct ng_picture *pic, struct collector *c)
{
        bool full = !pic->valid || pic->full_scan_every <= 1 || pic->since_full + 1 >= pic->full_scan_every ||
                    pic->all_namespaces != c->o.all_namespaces;
        pic->all_namespaces = c->o.all_namespaces;
        pic->stats.procs_new = pic->stats.procs_gone = pic->stats.procs_reread = pic->stats.status_reread = 0;
        pic->seq++;
        int r = update(pic, c, full);
        c->current_pid = 0;
        if (r < 0) {
                /* Whatever was merged is gone: start over next time. */
                pic->valid = false;
                return r;
        }
        pic->valid = true;
        if (full)
                pic->since_full = 0;
        else if (pic->since_full < pic->full_scan_every)
                pic->since_full++;
        pic->stats.full = full;
        pic->stats.events_errno = pic->events_errno;
        pic->stats.collections++;
        pic->stats.full_scans += full;
        pic->stats.procs = 0;
        for (size_t i = 0; i < pic->n; i++)
                pic->stats.procs += pic->v[i]->kept;
        return hand_over(pic, c->s);
}

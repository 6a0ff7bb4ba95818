/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A snapshot's queries (a node, a process, a cgroup, a sample, a distance)
 * and what a new snapshot carries over from the previous one. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "collect-internal.h"
#include "ng-snapshot.h"
#include "ns-internal.h"
#include "whole-index.h"
#include "util.h"

const struct ng_node *ng_snapshot_node(const struct ng_snapshot *s, int id)
{
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].id == id)
                        return &s->topo.nodes[i];
        return NULL;
}

const struct ng_proc *ng_snapshot_proc_next(const struct ng_snapshot *s, pid_t pid, size_t *cursor)
{
        size_t i = *cursor;
        if (i >= s->n_procs || s->procs[i]->pid > pid)
                return ng_snapshot_proc(s, pid);        /* not ascending: look it up */
        /* a few steps (the next attacher is near), then a bisection */
        for (size_t k = 0; k < 8 && i < s->n_procs && s->procs[i]->pid < pid; k++)
                i++;
        size_t hi = s->n_procs;
        while (i < hi && s->procs[i]->pid < pid) {
                size_t mid = i + (hi - i) / 2;
                if (s->procs[mid]->pid < pid)
                        i = mid + 1;
                else
                        hi = mid;
        }
        *cursor = i;
        return i < s->n_procs && s->procs[i]->pid == pid ? s->procs[i] : NULL;
}

const struct ng_proc *ng_snapshot_proc(const struct ng_snapshot *s, pid_t pid)
{
        size_t lo = 0, hi = s->n_procs;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->procs[mid]->pid == pid)
                        return s->procs[mid];
                if (s->procs[mid]->pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

const struct ng_container *ng_snapshot_container(const struct ng_snapshot *s, const struct ng_proc *pr)
{
        struct ng_container ct;
        if (!s->n_containers || ng_container_of_cgroups(&pr->cgroup, &ct) < 0)
                return NULL;
        for (size_t i = 0; i < s->n_containers; i++)
                if (!strcmp(s->containers[i].id, ct.id))
                        return &s->containers[i];
        return NULL;
}

int ng_snapshot_hugetlb_memcg(const struct ng_snapshot *s)
{
        assert(s);
        /* every cgroup2 mount is of the one default hierarchy, its flags
         * the same */
        for (size_t i = 0; i < s->n_mounts; i++)
                if (!strcmp(s->mounts[i].fstype, "cgroup2"))
                        return ng_mount_has_option(&s->mounts[i], "memory_hugetlb_accounting") ? 1 : 0;
        return -1;
}

const struct ng_cgroup *ng_snapshot_cgroup(const struct ng_snapshot *s, const char *path)
{
        for (size_t i = 0; i < s->n_cgroups; i++)
                if (!strcmp(s->cgroups[i].path, path))
                        return &s->cgroups[i];
        return NULL;
}

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

int ng_collect_add_sample(struct ng_snapshot *s, const struct ng_sample *smp)
{
        if (ng_grow(&s->samples, NULL, s->n_samples, sizeof(*s->samples), 0) < 0)
                return -ENOMEM;
        s->samples[s->n_samples++] = *smp;
        return 0;
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

int ng_snapshot_own_proc(struct ng_snapshot *s, size_t i)
{
        if (!s->procs[i]->shared)
                return 0;
        struct ng_proc *own = malloc(sizeof(*own));
        int r = own ? ng_picture_proc_copy(s->procs[i], own) : -ENOMEM;
        if (r < 0) {
                free(own);
                return r;
        }
        s->procs[i] = own;
        return 0;
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
        if (pr->cpu_read_seq && old->cpu_read_seq) {
                if (pr->cpu_read_seq == old->cpu_read_seq) {
                        keep_weights(pr, old);
                        return;
                }
                if (pr->cpu_read_seq > old->cpu_read_seq)
                        window = pr->cpu_read_seq - old->cpu_read_seq;
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

const struct ng_sample *ng_snapshot_sample(const struct ng_snapshot *s, pid_t pid, uint64_t start)
{
        for (size_t i = 0; i < s->n_samples; i++)
                if (!s->samples[i].whole && s->samples[i].pid == pid && s->samples[i].start == start)
                        return &s->samples[i];
        return NULL;
}

const struct ng_sample *ng_snapshot_whole_sample_ns(const struct ng_snapshot *s, bool sysv, uint64_t ipc_ns,
                                                    unsigned major, unsigned minor, uint64_t inode)
{
        for (size_t i = 0; i < s->n_samples; i++) {
                const struct ng_sample *w = &s->samples[i];
                /* a SysV segment is (IPC namespace, shmid), and where its
                 * device is known (an attacher's maps line) that device's too */
                bool dev = w->dev_major == major && w->dev_minor == minor;
                if (w->whole && w->sysv == sysv && w->inode == inode &&
                    (sysv ? w->ipc_ns == ipc_ns && (dev || (!major && !minor)) : dev))
                        return w;
        }
        return NULL;
}

const struct ng_sample *ng_snapshot_whole_sample(const struct ng_snapshot *s, bool sysv, unsigned major,
                                                 unsigned minor, uint64_t inode)
{
        return ng_snapshot_whole_sample_ns(s, sysv, s->ipc_ns, major, minor, inode);
}

int ng_snapshot_distance(const struct ng_snapshot *s, int from, int to)
{
        const struct ng_node *a = ng_snapshot_node(s, from);
        if (!a)
                return -1;
        for (size_t i = 0; i < s->topo.n_nodes && i < a->n_distance; i++)
                if (s->topo.nodes[i].id == to)
                        return a->distance[i] > INT32_MAX ? -1 : (int) a->distance[i];
        return -1;
}

const struct ng_hmat_access *ng_snapshot_hmat(const struct ng_snapshot *s, int cpu_node, int mem_node)
{
        const struct ng_node *nd = ng_snapshot_node(s, mem_node);
        if (!nd || cpu_node < 0)
                return NULL;
        /* access1 counts CPUs only, which is what runs a database; kernels
         * before it have access0 alone. */
        const struct ng_hmat_access *a = nd->access[1].present ? &nd->access[1] : &nd->access[0];
        return a->present && ng_bitmap_test(&a->initiators, (unsigned) cpu_node) ? a : NULL;
}

bool ng_snapshot_has_hmat(const struct ng_snapshot *s)
{
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                for (unsigned k = 0; k < NG_HMAT_ACCESS_CLASSES; k++)
                        if (s->topo.nodes[i].access[k].present)
                                return true;
        return false;
}

bool ng_snapshot_same_socket(const struct ng_snapshot *s, int a, int b)
{
        const struct ng_node *x = ng_snapshot_node(s, a), *y = ng_snapshot_node(s, b);
        return x && y && a != b && x->package_id >= 0 && x->package_id == y->package_id;
}

int ng_knobs_release_at_least(const struct ng_knobs *k, unsigned major, unsigned minor)
{
        if (!k || !k->kernel_major)
                return -1;
        return k->kernel_major > major || (k->kernel_major == major && k->kernel_minor >= minor);
}

int ng_snapshot_fastest_tier(const struct ng_snapshot *s, const struct ng_bitmap *nodes)
{
        int best = -1;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (ng_bitmap_test(nodes, (unsigned) nd->id) && nd->tier >= 0 && (best < 0 || nd->tier < best))
                        best = nd->tier;
        }
        return best;
}

bool ng_snapshot_slower_tier(const struct ng_snapshot *s, int node, int tier)
{
        const struct ng_node *nd = ng_snapshot_node(s, node);
        return nd && tier >= 0 && nd->tier > tier;
}

const struct ng_db_settings *ng_snapshot_db_settings(const struct ng_snapshot *s, pid_t pid)
{
        for (size_t i = 0; i < s->n_db_settings; i++)
                if (s->db_settings[i].pid == pid)
                        return &s->db_settings[i];
        return NULL;
}

const struct ng_hugepool *ng_snapshot_pool(const struct ng_snapshot *s, uint64_t page_kib)
{
        for (size_t i = 0; i < s->n_pools; i++)
                if (s->pools[i].page_kib == page_kib)
                        return &s->pools[i];
        return NULL;
}

struct ng_bitmap ng_snapshot_memory_nodes(const struct ng_snapshot *s)
{
        struct ng_bitmap r = {0};
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].has_memory)
                        ng_bitmap_set(&r, (unsigned) s->topo.nodes[i].id);
        return r;
}

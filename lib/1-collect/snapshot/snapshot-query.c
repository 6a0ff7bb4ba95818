/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A snapshot's queries (a node, a process, a cgroup, a sample, a distance).
 * What a new snapshot carries over from the previous one is the placement's
 * (placement/carry-placement.c) and the picture's (picture/picture-cpu.c). */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ng-snapshot.h"
#include "snapshot.h"

struct ng_snapshot *ng_snapshot_alloc(void)
{
        struct snapshot_rec *rec = calloc(1, sizeof(*rec));
        return rec ? &rec->s : NULL;
}

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

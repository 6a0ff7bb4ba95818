/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where each segment's pages sit: the segment's own sample, a kernel count,
 * the hugepage pools, or an attacher's page tables (docs/ARCHITECTURE.md,
 * "Cost tiers"). segments.c builds the list, this file places it. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "units.h"
#include "segments-internal.h"
#include "util.h"
#include "snapshot.h"

/* A file is its device and inode. A tree's copies keep no inode of the
 * host's (0): there, its device and path (one name in two namespaces'
 * /dev/shm is two tmpfs instances, two devices). */
static bool same_file(const struct ng_segment *seg, const struct ng_map *m)
{
        if (m->dev_major != seg->dev_major || m->dev_minor != seg->dev_minor)
                return false;
        if (seg->inode && m->inode)
                return m->inode == seg->inode;
        return !strcmp(m->path, seg->name);
}

/* A SysV segment is its shmid (the inode of its mapping) in the IPC
 * namespace of whoever maps it. */
bool ng_segment_maps(const struct ng_segment *seg, const struct ng_proc *pr, const struct ng_map *m)
{
        switch (seg->kind) {
        case NG_SEG_SYSV:
                return m->kind == NG_MAP_SYSV && m->inode == seg->inode && pr->ipc_ns == seg->ipc_ns;
        case NG_SEG_FILE:
                return m->kind == NG_MAP_FILE_SHARED && same_file(seg, m);
        case NG_SEG_ANON_SHARED:
                return m->kind == NG_MAP_ANON_SHARED && m->inode == seg->inode &&
                       m->dev_major == seg->dev_major && m->dev_minor == seg->dev_minor;
        case NG_SEG_PRIVATE:
                return m->kind == NG_MAP_ANON_PRIVATE && pr->pid == seg->pids[0] && m->start == seg->rep_start;
        }
        return false;
}

bool ng_segment_may_speak(const struct ng_segment *seg, const struct ng_proc *pr)
{
        return ng_speakers_admit(&seg->speakers, &pr->status);
}

bool ng_segment_untrusted_only(const struct ng_segment *seg)
{
        return seg->n_pids > 0 && seg->n_untrusted == seg->n_pids;
}

int ng_node_bytes_add(struct ng_node_bytes **v, size_t *n, int node, uint64_t bytes)
{
        size_t i = 0;
        while (i < *n && (*v)[i].node < node)
                i++;
        if (i < *n && (*v)[i].node == node) {
                (*v)[i].bytes += bytes;
                return 0;
        }
        if (ng_grow(v, NULL, *n, sizeof(**v), 0) < 0)
                return -ENOMEM;
        struct ng_node_bytes *nn = *v;
        memmove(&nn[i + 1], &nn[i], (*n - i) * sizeof(*nn));
        nn[i] = (struct ng_node_bytes) { .node = node, .bytes = bytes };
        (*n)++;
        return 0;
}

static const struct ng_numa_map *numa_map_at(const struct ng_proc *pr, uint64_t start)
{
        for (size_t i = 0; i < pr->n_numa_maps; i++)
                if (pr->numa_maps[i].start == start)
                        return &pr->numa_maps[i];
        return NULL;
}

struct vma_walk {
        uint64_t lo[64], hi[64];
        size_t n;
};

/* A segment attached twice by one process is counted once: a VMA whose file
 * offsets were already seen is a second attach. */
static bool vma_first_time(struct vma_walk *w, const struct ng_map *m)
{
        uint64_t lo = m->offset, hi = m->offset + (m->end - m->start);
        for (size_t k = 0; k < w->n; k++)
                if (lo < w->hi[k] && w->lo[k] < hi)
                        return false;
        if (w->n < 64) {
                w->lo[w->n] = lo;
                w->hi[w->n++] = hi;
        }
        return true;
}

/* Tier 2: sums the representative's numa_maps over the segment's VMAs. */
static int place_exact(struct ng_segment *seg, const struct ng_proc *pr)
{
        struct vma_walk w = {0};
        bool any = false;

        for (size_t j = 0; j < pr->n_maps; j++) {
                const struct ng_map *m = &pr->maps[j];
                if (!ng_segment_maps(seg, pr, m) || !vma_first_time(&w, m))
                        continue;
                const struct ng_numa_map *nm = numa_map_at(pr, m->start);
                if (!nm)
                        continue;
                if (!any) {
                        seg->rep_start = m->start;
                        seg->resident_bytes = 0;
                        any = true;
                }
                if (nm->kernelpagesize_kib)
                        seg->page_kib = nm->kernelpagesize_kib;
                seg->huge |= nm->huge;
                uint64_t page_bytes = ng_kib_bytes_sat(nm->kernelpagesize_kib ? nm->kernelpagesize_kib : 4);
                for (size_t k = 0; k < nm->n_np; k++) {
                        uint64_t bytes = ng_mul_sat(nm->np[k].pages, page_bytes);
                        if (ng_node_bytes_add(&seg->nodes, &seg->n_nodes, nm->np[k].node, bytes) < 0)
                                return -ENOMEM;
                        seg->resident_bytes += bytes;
                }
        }
        if (any) {
                seg->rep_pid = pr->pid;
                seg->method = NG_METHOD_EXACT;
        }
        return any;
}

/* Tier 1: every VMA of the segment in the representative is sampled on
 * its own (mbind(2) or mprotect(2) on part of a segment splits it: Oracle's
 * NUMA support binds parts of the SGA to nodes). Each VMA's shares are
 * scaled to its own resident estimate, the present fraction of its length,
 * before they are added: equal sample counts from a 192 MiB and a 64 MiB
 * VMA must not weigh the same. */
static int place_sampled(const struct ng_snapshot *s, struct ng_segment *seg, const struct ng_proc *pr)
{
        struct vma_walk w = {0};
        uint64_t first = 0;
        bool any = false;
        /* one entry a node, whatever their number (a host may have 1024) */
        struct node_acc { int node; double bytes; };
        _cleanup_free_ struct node_acc *acc = NULL;
        size_t n_acc = 0;

        for (size_t j = 0; j < pr->n_maps; j++) {
                const struct ng_map *m = &pr->maps[j];
                if (!ng_segment_maps(seg, pr, m) || !vma_first_time(&w, m))
                        continue;
                const struct ng_sample *smp = ng_snapshot_sample(s, pr->pid, m->start);
                if (!smp || !smp->asked)
                        continue;
                if (!any)
                        first = m->start;
                any = true;
                for (size_t k = 0; k < smp->n_np && smp->present; k++) {
                        /* len * present / asked resident, np / present of it on the node */
                        double bytes = (double) smp->len * (double) smp->np[k].pages / (double) smp->asked;
                        size_t i = 0;
                        while (i < n_acc && acc[i].node != smp->np[k].node)
                                i++;
                        if (i == n_acc) {
                                if (ng_grow(&acc, NULL, n_acc, sizeof(*acc), 0) < 0)
                                        return -ENOMEM;
                                acc[n_acc].node = smp->np[k].node;
                                acc[n_acc++].bytes = 0;
                        }
                        acc[i].bytes += bytes;
                }
        }
        if (!any)
                return 0;
        seg->resident_bytes = 0;
        for (size_t i = 0; i < n_acc; i++) {
                uint64_t bytes = (uint64_t) acc[i].bytes;
                if (ng_node_bytes_add(&seg->nodes, &seg->n_nodes, acc[i].node, bytes) < 0)
                        return -ENOMEM;
                seg->resident_bytes += bytes;
        }
        seg->rep_pid = pr->pid;
        seg->rep_start = first;
        seg->method = NG_METHOD_SAMPLED;
        return 1;
}

/* Linux 6.18 counts a hugetlb SysV segment's rss in /proc/sysvipc/shm once
 * per base page of every huge page (a 4 MiB SHM_HUGETLB segment shows
 * 2 GiB); 6.1 does not. Undo the factor, and never believe more than the
 * segment's size in whole pages (a 56-byte segment holds one 4 KiB page). */
static void fix_sysv_rss(struct ng_segment *seg)
{
        uint64_t page = ng_kib_bytes_sat(seg->page_kib ? seg->page_kib : 4);
        uint64_t limit = (seg->bytes + page - 1) / page * page;
        if (seg->kind != NG_SEG_SYSV || seg->method != NG_METHOD_COUNTERS || seg->bytes_unknown ||
            seg->resident_bytes <= limit)
                return;
        if (seg->page_kib > 4)
                seg->resident_bytes /= seg->page_kib / 4;
        if (seg->resident_bytes > limit)
                seg->resident_bytes = limit;
}

static int cmp_rep(const void *a, const void *b)
{
        return ng_proc_rep_cmp(*(const struct ng_proc *const *) a, *(const struct ng_proc *const *) b);
}

/* The attachers that may speak for it, in the order collect chose
 * representatives in. */
static const struct ng_proc **candidates(const struct ng_snapshot *s, const struct ng_segment *seg, size_t *ret_n)
{
        const struct ng_proc **v = malloc((seg->n_pids + 1) * sizeof(*v));
        size_t n = 0;
        if (!v)
                return NULL;
        size_t at = 0;
        for (size_t k = 0; k < seg->n_pids; k++) {
                const struct ng_proc *pr = ng_snapshot_proc_next(s, seg->pids[k], &at);
                if (pr && ng_segment_may_speak(seg, pr))
                        v[n++] = pr;
        }
        qsort(v, n, sizeof(*v), cmp_rep);
        *ret_n = n;
        return v;
}

/* numa_maps and move_pages(2) see the pages in the representative's page
 * tables only; the kernel's counter of a SysV segment sees every resident
 * page. Keep the shares, scale them to the counter. */
static int scale_to_counter(struct ng_segment *seg, uint64_t counter)
{
        if (counter <= seg->resident_bytes || seg->resident_bytes == 0)
                return 0;
        uint64_t sum = 0;
        for (size_t i = 0; i < seg->n_nodes; i++) {
                seg->nodes[i].bytes = (uint64_t) ((double) seg->nodes[i].bytes * counter / seg->resident_bytes);
                sum += seg->nodes[i].bytes;
        }
        seg->resident_bytes = sum;
        return 0;
}

/* The sample asked of the segment itself, if tier 1 or 2 reached it. */
static const struct ng_sample *whole_sample(const struct ng_whole_index *ix, const struct ng_segment *seg)
{
        switch (seg->kind) {
        case NG_SEG_SYSV:
                return ng_whole_index_find(ix, true, seg->ipc_ns, seg->dev_major, seg->dev_minor, seg->inode);
        case NG_SEG_FILE:
        case NG_SEG_ANON_SHARED:
                return seg->huge ? NULL : ng_whole_index_find(ix, false, 0, seg->dev_major, seg->dev_minor, seg->inode);
        case NG_SEG_PRIVATE:
                break;
        }
        return NULL;
}

/* Every resident page counts, mapped by a process or not. The resident
 * bytes: the kernel's count when it has one (SysV), else the file's pages
 * now (st_blocks) or the data the sample walked, times the share of them
 * the sample found resident. */
static int place_whole(struct ng_segment *seg, const struct ng_sample *smp, uint64_t counter)
{
        double frac = smp->asked ? (double) smp->present / (double) smp->asked : 0;
        bool counted = seg->resident_source == NG_SOURCE_COUNTER;       /* counter, 0 included */
        uint64_t resident;
        if (counted)
                resident = counter;
        else if (seg->kind == NG_SEG_FILE && seg->allocated_bytes)
                resident = (uint64_t) ((double) seg->allocated_bytes * frac);
        else
                resident = (uint64_t) ((double) smp->len * frac);
        seg->resident_bytes = 0;
        for (size_t k = 0; k < smp->n_np && smp->present; k++) {
                uint64_t bytes = (uint64_t) ((double) resident * (double) smp->np[k].pages / (double) smp->present);
                if (ng_node_bytes_add(&seg->nodes, &seg->n_nodes, smp->np[k].node, bytes) < 0)
                        return -ENOMEM;
                seg->resident_bytes += bytes;
        }
        if (counted)
                seg->resident_bytes = resident;
        else
                seg->resident_source = NG_SOURCE_SEGMENT;
        seg->placement_source = NG_SOURCE_SEGMENT;
        seg->placement_coverage = 1;
        /* a file fragmented past the extents sampled: the rest of its data
         * is taken to sit like what was sampled, and the coverage says so */
        if (smp->unwalked_bytes && seg->allocated_bytes)
                seg->placement_coverage = smp->unwalked_bytes >= seg->allocated_bytes ? 0
                        : 1.0 - (double) smp->unwalked_bytes / (double) seg->allocated_bytes;
        seg->method = smp->exact ? NG_METHOD_EXACT : NG_METHOD_SAMPLED;
        if (!seg->page_kib)
                seg->page_kib = 4;      /* shmem: what was asked is base pages */
        seg->rep_pid = smp->pid;
        seg->rep_start = 0;
        return 1;
}

static int place_all(struct builder *b)
{
        _ng_cleanup_(ng_whole_index_free) struct ng_whole_index ix = { 0 };
        if (ng_whole_index_build(b->s, &ix) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++) {
                struct ng_segment *seg = &b->v[i];
                fix_sysv_rss(seg);
                uint64_t counter = seg->method == NG_METHOD_COUNTERS ? seg->resident_bytes : 0;
                if (seg->method == NG_METHOD_COUNTERS)
                        seg->resident_source = NG_SOURCE_COUNTER;
                const struct ng_sample *w = whole_sample(&ix, seg);
                if (w) {
                        snprintf(seg->policy, sizeof(seg->policy), "%s", w->policy);
                        if (place_whole(seg, w, counter) < 0)
                                return -ENOMEM;
                        continue;
                }
                size_t n;
                const struct ng_proc **cand = candidates(b->s, seg, &n);
                if (!cand)
                        return -ENOMEM;
                int r = 0;
                for (size_t k = 0; k < n && r == 0; k++)
                        r = cand[k]->has_numa_maps ? place_exact(seg, cand[k]) : place_sampled(b->s, seg, cand[k]);
                free(cand);
                if (r < 0)
                        return r;
                /* its attachers' page tables are other users' to fill:
                 * where its pages sit is unknown (AUDIT_INCOMPLETE) */
                if (r == 0 && ng_segment_untrusted_only(seg) && seg->resident_bytes)
                        seg->placement_coverage = 0;
                if (r == 0)
                        continue;
                if (counter && seg->resident_bytes == 0) {
                        /* The attacher maps none of what the kernel counts:
                         * the count stands, where it sits is unknown. */
                        seg->resident_bytes = counter;
                        seg->method = NG_METHOD_COUNTERS;
                        seg->placement_coverage = 0;
                        continue;
                }
                seg->placement_source = NG_SOURCE_ATTACHER;
                if (counter) {
                        seg->placement_coverage = seg->resident_bytes >= counter ? 1 :
                                                  (double) seg->resident_bytes / (double) counter;
                        scale_to_counter(seg, counter);
                } else {
                        seg->resident_source = NG_SOURCE_ATTACHER;
                }
        }
        return 0;
}

/* Pages of a size the nodes' pools hand out (nr - free per node), node
 * order; false when a node's counters are absent or impossible. */
static bool pool_used(const struct ng_snapshot *s, uint64_t page_kib, struct ng_node_bytes *v, size_t *n,
                      uint64_t *total_pages)
{
        *n = 0;
        *total_pages = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                const struct ng_hugepool *pool = NULL;
                for (size_t k = 0; k < nd->n_pools; k++)
                        if (nd->pools[k].page_kib == page_kib)
                                pool = &nd->pools[k];
                if (!pool || pool->free_pages > pool->nr_pages)
                        return false;
                uint64_t used = pool->nr_pages - pool->free_pages;
                if (used)
                        v[(*n)++] = (struct ng_node_bytes) { .node = nd->id, .bytes = used };
                *total_pages += used;
        }
        return true;
}

/*
 * A hugetlb segment's pages no attacher maps cannot be asked of the segment
 * (a fault on a hole would take a page from the pool). When the per-node
 * pools of its page size hand out exactly the pages the segments of that
 * size hold, and it is the only one holding any, the pools' counters are
 * its placement, page for page. Otherwise the attacher's shares stand, with
 * their coverage said.
 */
static int place_from_pools(struct builder *b)
{
        for (size_t i = 0; i < b->n; i++) {
                struct ng_segment *seg = &b->v[i];
                if (!seg->huge || !seg->page_kib || seg->resident_source != NG_SOURCE_COUNTER || !seg->resident_bytes ||
                    seg->placement_coverage >= 0.995)
                        continue;
                uint64_t page = ng_kib_bytes_sat(seg->page_kib), held = 0;
                bool alone = true;
                for (size_t k = 0; k < b->n && alone; k++) {
                        const struct ng_segment *o = &b->v[k];
                        if (!o->huge || o->page_kib != seg->page_kib)
                                continue;
                        if (k != i && (o->resident_bytes || o->resident_source != NG_SOURCE_COUNTER))
                                alone = false;
                        held += o->resident_bytes / page;
                }
                _cleanup_free_ struct ng_node_bytes *used = calloc(b->s->topo.n_nodes + 1, sizeof(*used));
                size_t n;
                uint64_t total;
                if (!used)
                        return -ENOMEM;
                if (!alone || !pool_used(b->s, seg->page_kib, used, &n, &total) || total != held)
                        continue;
                free(seg->nodes);
                seg->nodes = NULL;
                seg->n_nodes = 0;
                for (size_t k = 0; k < n; k++)
                        if (ng_node_bytes_add(&seg->nodes, &seg->n_nodes, used[k].node, ng_mul_sat(used[k].bytes, page)) < 0)
                                return -ENOMEM;
                seg->placement_source = NG_SOURCE_POOL;
                seg->placement_coverage = 1;
                if (seg->method == NG_METHOD_COUNTERS || seg->method == NG_METHOD_NONE)
                        seg->method = NG_METHOD_EXACT;
        }
        return 0;
}

int ng_segments_place(struct builder *b)
{
        int r = place_all(b);
        return r < 0 ? r : place_from_pools(b);
}

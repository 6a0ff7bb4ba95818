/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: a rehearsal of an instance's next start (ng-rehearse.h). The
 * kernel's side, as PostgreSQL meets it: mmap(MAP_HUGETLB) reserves the
 * whole segment from the pool's free and unreserved pages at once (short:
 * ENOMEM, which huge_pages = try turns into 4 KiB pages and on into no
 * start; vm.nr_overcommit_hugepages may make surplus pages for it from free
 * memory); each page is then taken at its first touch from a node the
 * touching task's cpuset and bind policy allow, and none free there is
 * SIGBUS (docs/ARCHITECTURE.md, "Reservations").
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-format.h"
#include "ng-rehearse.h"
#include "ng-reserve.h"
#include "rehearse-internal.h"
#include "units.h"

#define GIGANTIC_KIB (1024u * 1024u)

const char *ng_rehearse_outcome_name(enum ng_rehearse_outcome o)
{
        static const char *const names[NG_REHEARSE_OUTCOME_COUNT_] = {
                [NG_REHEARSE_HUGE] = "hugepages", [NG_REHEARSE_PARTIAL] = "partly-4k",
                [NG_REHEARSE_SMALL] = "4k-fallback", [NG_REHEARSE_OFF] = "4k-by-setting",
                [NG_REHEARSE_NO_START] = "no-start", [NG_REHEARSE_SIGBUS] = "sigbus",
                [NG_REHEARSE_UNKNOWN] = "unknown", [NG_REHEARSE_FAULT_STALL] = "fault-stall",
        };
        return (unsigned) o < NG_REHEARSE_OUTCOME_COUNT_ ? names[o] : "?";
}

int ng_rehearsal_exit_status(const struct ng_rehearsal *r)
{
        switch (r->outcome) {
        case NG_REHEARSE_HUGE:
        case NG_REHEARSE_OFF:
                return r->cyclops ? 1 : 0;
        case NG_REHEARSE_PARTIAL:
        case NG_REHEARSE_SMALL:
                return 1;
        case NG_REHEARSE_NO_START:
        case NG_REHEARSE_SIGBUS:
        case NG_REHEARSE_FAULT_STALL:
                return 2;
        default:
                return 3;
        }
}

/* The hugetlb controller's name of a size: "2MB", "1GB", "64KB". */
static void cgroup_size_name(uint64_t kib, char *buf, size_t size)
{
        if (kib >= 1048576)
                snprintf(buf, size, "%" PRIu64 "GB", kib >> 20);
        else if (kib >= 1024)
                snprintf(buf, size, "%" PRIu64 "MB", kib >> 10);
        else
                snprintf(buf, size, "%" PRIu64 "KB", kib);
}

uint64_t ng_rehearse_default_page_kib(const struct ng_snapshot *s)
{
        uint64_t kib = ng_default_huge_kib(s);
        return kib ? kib : 2048;
}

/* Its own hugetlb pages of the size go back to their nodes' pools when it
 * stops, and its reservation with them. When no other segment of that
 * size exists, every page the pools hand out is its own (an attacher's
 * page tables may show a few of them only: PostgreSQL's postmaster maps
 * little of the buffers its backends filled), and the pools' counters say
 * where they are. */
static void release_own(struct stage *st)
{
        const struct ng_snapshot *s = st->s;
        uint64_t page = ng_kib_bytes_sat(st->r->page_kib), held = 0, total = 0, unfaulted = 0;
        size_t own_segs = 0, other_segs = 0;
        for (size_t i = 0; i < st->a->n_segments; i++) {
                const struct ng_segment *seg = &st->a->segments[i];
                if (!seg->huge || seg->page_kib != st->r->page_kib)
                        continue;
                bool own = false;
                for (size_t k = 0; k < st->in->n_segs && !own; k++)
                        own = st->in->segs[k] == i;
                uint64_t pages = seg->bytes / page + (seg->bytes % page != 0), faulted = seg->resident_bytes / page;
                if (!own) {
                        other_segs++;
                        continue;
                }
                own_segs++;
                held += faulted;
                total += pages;
                unfaulted += pages > faulted ? pages - faulted : 0;
        }
        uint64_t used = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_hugepool *hp = ng_node_pool(&s->topo.nodes[i], st->r->page_kib);
                st->free_after[i] = hp ? hp->free_pages : 0;
                used += hp && hp->nr_pages > hp->free_pages ? hp->nr_pages - hp->free_pages : 0;
        }
        st->own_pages = total;
        st->own_faulted = held;
        if (own_segs && !other_segs) {
                /* Its pages are every page in use, up to its size. */
                uint64_t faulted = used < total ? used : total;
                unfaulted = total - faulted;
                st->own_faulted = faulted;
                for (size_t i = 0; i < s->topo.n_nodes; i++) {
                        const struct ng_hugepool *hp = ng_node_pool(&s->topo.nodes[i], st->r->page_kib);
                        st->free_after[i] = hp ? hp->nr_pages : 0;
                }
        }
        st->resv_after = st->pool->resv_pages > unfaulted ? st->pool->resv_pages - unfaulted : 0;
        if (held == 0 || (own_segs && !other_segs))
                return;
        for (size_t k = 0; k < st->in->n_segs; k++) {
                const struct ng_segment *seg = &st->a->segments[st->in->segs[k]];
                if (!seg->huge || seg->page_kib != st->r->page_kib)
                        continue;
                for (size_t n = 0; n < seg->n_nodes; n++)
                        for (size_t i = 0; i < s->topo.n_nodes; i++)
                                if (s->topo.nodes[i].id == seg->nodes[n].node)
                                        st->free_after[i] += seg->nodes[n].bytes / page;
        }
}

/* Its cgroup's hugetlb limits for its page size, once it has stopped:
 * the pages it may still reserve and fault there (UINT64_MAX: no limit). */
static void cgroup_room(const struct stage *st, uint64_t *ret_rsvd, uint64_t *ret_fault)
{
        const struct ng_cgroup *cg = st->in->cgroup ? ng_snapshot_cgroup(st->s, st->in->cgroup) : NULL;
        uint64_t page = ng_kib_bytes_sat(st->r->page_kib);
        *ret_rsvd = *ret_fault = UINT64_MAX;
        for (size_t i = 0; cg && i < cg->n_hugetlb_limit; i++) {
                const __typeof__(cg->hugetlb_limit[0]) *l = &cg->hugetlb_limit[i];
                if (l->page_kib != st->r->page_kib)
                        continue;
                if (l->rsvd_known && l->rsvd_max_bytes != UINT64_MAX) {
                        uint64_t own = ng_mul_sat(st->own_pages, page);
                        uint64_t now = l->rsvd_current_bytes > own ? l->rsvd_current_bytes - own : 0;
                        *ret_rsvd = l->rsvd_max_bytes > now ? (l->rsvd_max_bytes - now) / page : 0;
                }
                if (l->known && l->max_bytes != UINT64_MAX) {
                        uint64_t own = ng_mul_sat(st->own_faulted, page);
                        uint64_t now = l->current_bytes > own ? l->current_bytes - own : 0;
                        *ret_fault = l->max_bytes > now ? (l->max_bytes - now) / page : 0;
                }
        }
}

struct bytes_txt {
        char s[24];
};

/* "1.5 GiB": bytes as the texts give sizes. */
static struct bytes_txt bytes_h(uint64_t bytes)
{
        struct bytes_txt t;
        ng_format_kib(bytes / 1024, t.s, sizeof(t.s));
        return t;
}

/* Its memory cgroup's room for its pages once it has stopped, where
 * hugetlb faults are charged to it (ng-reserve.h, ng_resv_memcg): 1 when
 * memory.max bounds them (*ret_room the bytes free below it, *ret_most
 * those with its other memory reclaimed, UINT64_MAX when unknown), 0 when
 * nothing bounds them, -1 when the bound is unknown. */
static int memcg_room(const struct stage *st, const struct ng_cgroup **ret_cg, uint64_t *ret_room, uint64_t *ret_most)
{
        if (ng_snapshot_hugetlb_memcg(st->s) != 1)
                return 0;
        const struct ng_cgroup *cg = ng_resv_memcg_cgroup(st->s, st->a, st->in);
        *ret_cg = cg;
        if (!cg || !cg->memory.known)
                return -1;
        if (cg->memory.max_bytes == UINT64_MAX)
                return 0;
        /* its own faulted pages were charged here and go when it stops */
        uint64_t own = ng_mul_sat(st->own_faulted, ng_kib_bytes_sat(st->r->page_kib)), max = cg->memory.max_bytes;
        uint64_t cur = cg->memory.current_bytes > own ? cg->memory.current_bytes - own : 0;
        *ret_room = max > cur ? max - cur : 0;
        *ret_most = UINT64_MAX;
        if (cg->memory.hugetlb_known) {
                uint64_t h = cg->memory.hugetlb_bytes > own ? cg->memory.hugetlb_bytes - own : 0;
                *ret_most = max > h ? max - h : 0;
        }
        return 1;
}

/* The unfaulted pages other instances confined within nodes still need. */
static uint64_t others_within(const struct stage *st, const struct ng_bitmap *nodes)
{
        _cleanup_free_ struct ng_resv_need *needs = NULL;
        size_t n;
        uint64_t sum = 0;
        if (ng_resv_needs(st->s, st->a, NULL, &needs, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                if (needs[i].instance < st->a->n_instances && &st->a->instances[needs[i].instance] == st->in)
                        continue;
                if (needs[i].page_kib == st->r->page_kib && ng_bitmap_subset(&needs[i].nodes, nodes))
                        sum += needs[i].unfaulted_pages;
        }
        return sum;
}

static void node_frees(const struct stage *st, const struct ng_bitmap *nodes, char *buf, size_t size)
{
        buf[0] = '\0';
        for (size_t i = 0; i < st->s->topo.n_nodes; i++)
                if (st->s->topo.nodes[i].has_memory)
                        ng_rehearse_appendf(buf, size, "%snode %d %" PRIu64 "%s", buf[0] ? ", " : "", st->s->topo.nodes[i].id,
                                st->free_after[i], ng_bitmap_test(nodes, (unsigned) st->s->topo.nodes[i].id) ? "" : " (not its)");
}

/* Oracle's use_large_pages = TRUE: as many pages as the kernel reserves
 * (the pool, the nodes of its binding, its cgroup's rsvd limit), the rest
 * of the SGA in 4 KiB pages. true when it is short, its outcome set. */
static bool weigh_part(struct stage *st, uint64_t on_nodes, const char *page, const char *frees, const char *nodes)
{
        struct ng_rehearsal *r = st->r;
        uint64_t rsvd_room, fault_room, cap = r->avail_pages + r->surplus_pages;
        cgroup_room(st, &rsvd_room, &fault_room);
        cap = cap < rsvd_room ? cap : rsvd_room;
        cap = cap < on_nodes + r->surplus_pages ? cap : on_nodes + r->surplus_pages;
        if (cap >= r->pages)
                return false;
        uint64_t made = cap > r->avail_pages ? cap - r->avail_pages : 0;
        unsigned nn = ng_bitmap_count(&r->nodes);
        snprintf(r->fix, sizeof(r->fix), "reserve %" PRIu64 " more %s pages on node%s %s (numaguardctl hugepages "
                 "reserve --size %s)", r->pages - cap, page, nn == 1 ? "" : "s", nodes, page);
        if (cap > fault_room || r->free_on_nodes + made < cap) {
                uint64_t room = fault_room < r->free_on_nodes + made ? fault_room : r->free_on_nodes + made;
                r->outcome = NG_REHEARSE_SIGBUS;
                r->partial_pages = cap;
                snprintf(r->why, sizeof(r->why), "%" PRIu64 " of its %" PRIu64 " %s pages can be reserved, but "
                         "only %" PRIu64 " can be taken at a first touch on node%s %s (%s; the unfaulted "
                         "reservations of the processes confined there and its cgroup's hugetlb.max come first): "
                         "a first touch beyond them fails (SIGBUS)", cap, r->pages, page, room, nn == 1 ? "" : "s",
                         nodes, frees);
                return true;
        }
        r->outcome = cap ? NG_REHEARSE_PARTIAL : NG_REHEARSE_SMALL;
        r->partial_pages = cap;
        snprintf(r->why, sizeof(r->why), "%" PRIu64 " of its %" PRIu64 " %s pages can be reserved (%" PRIu64 " free "
                 "and unreserved once it stops, %" PRIu64 " on node%s %s: %s%s): %s", cap, r->pages, page,
                 r->avail_pages, on_nodes, nn == 1 ? "" : "s", nodes, frees,
                 rsvd_room < r->pages ? "; its cgroup's hugetlb rsvd.max bounds it" : "", st->fallback);
        return true;
}

/* The pages reserved and the nodes they will come from. */
static void weigh(struct stage *st)
{
        struct ng_rehearsal *r = st->r;
        const struct ng_snapshot *s = st->s;
        char page[16], frees[256], nodes[64];
        ng_format_page_size(r->page_kib, page, sizeof(page));
        uint64_t total = 0, on_nodes = 0, mem_kib = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                total += st->free_after[i];
                if (ng_bitmap_test(&r->nodes, (unsigned) nd->id)) {
                        on_nodes += st->free_after[i];
                        if (st->free_after[i])
                                ng_bitmap_set(&r->from_nodes, (unsigned) nd->id);
                        mem_kib += ng_meminfo_bytes(s, nd, "MemFree").v / 1024;
                }
        }
        r->avail_pages = total > st->resv_after ? total - st->resv_after : 0;
        uint64_t theirs = others_within(st, &r->nodes);
        r->free_on_nodes = on_nodes > theirs ? on_nodes - theirs : 0;
        if (r->page_kib < GIGANTIC_KIB && st->pool->overcommit_pages > st->pool->surplus_pages) {
                r->surplus_pages = st->pool->overcommit_pages - st->pool->surplus_pages;
                if (r->surplus_pages > mem_kib / r->page_kib)
                        r->surplus_pages = mem_kib / r->page_kib;
        }
        node_frees(st, &r->nodes, frees, sizeof(frees));
        ng_bitmap_format_list(&r->nodes, nodes, sizeof(nodes));
        uint64_t made = r->pages > r->avail_pages ? r->pages - r->avail_pages : 0;
        bool on = r->setting == NG_HUGE_ON;
        const char *then = on ? st->refuse : st->fallback;
        if (r->setting == NG_HUGE_PARTIAL && weigh_part(st, on_nodes, page, frees, nodes))
                return;
        if (r->pages > r->avail_pages + r->surplus_pages) {
                r->outcome = on ? NG_REHEARSE_NO_START : NG_REHEARSE_SMALL;
                snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages are reserved at once and the pool has %"
                         PRIu64 " free and unreserved once it stops (%s)%s: %s", r->pages, page, r->avail_pages,
                         frees, r->surplus_pages ? ", with the surplus pages vm.nr_overcommit_hugepages allows" : "",
                         then);
                snprintf(r->fix, sizeof(r->fix), "reserve %" PRIu64 " more %s pages on node%s %s (numaguardctl "
                         "hugepages reserve --size %s)", r->pages - r->avail_pages - r->surplus_pages, page,
                         ng_bitmap_count(&r->nodes) == 1 ? "" : "s", nodes, page);
                return;
        }
        uint64_t rsvd_room, fault_room;
        char size[32];
        cgroup_room(st, &rsvd_room, &fault_room);
        cgroup_size_name(r->page_kib, size, sizeof(size));
        if (r->pages > rsvd_room) {
                r->outcome = on ? NG_REHEARSE_NO_START : NG_REHEARSE_SMALL;
                snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages fit the pool, but its cgroup %.100s lets "
                         "it reserve %" PRIu64 " more (hugetlb.%s.rsvd.max): %s", r->pages, page, st->in->cgroup,
                         rsvd_room, size, then);
                snprintf(r->fix, sizeof(r->fix), "raise hugetlb.%.8s.rsvd.max of cgroup %.100s by %" PRIu64 " pages "
                         "(its owner's setting: a container's or pod's hugepage limit)", size, st->in->cgroup,
                         r->pages - rsvd_room);
                return;
        }
        /* The kernel reserves only what the free pages of the nodes the
         * reserving task may use hold, surplus pages made for it
         * included (mm/hugetlb.c, hugetlb_acct_memory: allowed_mems_nr,
         * its cpuset and, since Linux 5.9, its bind policy). */
        if (on_nodes + made < r->pages) {
                r->outcome = on ? NG_REHEARSE_NO_START : NG_REHEARSE_SMALL;
                snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages fit the pool (%" PRIu64 " free and "
                         "unreserved once it stops) but the kernel reserves them only when the nodes it may use "
                         "hold them, and node%s %s hold%s %" PRIu64 " (%s): %s", r->pages, page, r->avail_pages,
                         ng_bitmap_count(&r->nodes) == 1 ? "" : "s", nodes, ng_bitmap_count(&r->nodes) == 1 ? "s" : "",
                         on_nodes, frees, then);
                snprintf(r->fix, sizeof(r->fix), "reserve %" PRIu64 " more %s pages on node%s %s, or start it "
                         "bound to nodes that hold them", r->pages - on_nodes - made, page,
                         ng_bitmap_count(&r->nodes) == 1 ? "" : "s", nodes);
                return;
        }
        if (r->pages > fault_room) {
                r->outcome = NG_REHEARSE_SIGBUS;
                snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages can be reserved, but its cgroup %.100s "
                         "lets it fault %" PRIu64 " of them (hugetlb.%s.max, which does not bound the reservation): "
                         "a first touch beyond them fails (SIGBUS, or a short read where read(2) touches the buffer)",
                         r->pages, page, st->in->cgroup, fault_room, size);
                snprintf(r->fix, sizeof(r->fix), "raise hugetlb.%.8s.max of cgroup %.60s by %" PRIu64 " pages, or "
                         "set hugetlb.%.8s.rsvd.max with it so that a start beyond it falls back instead", size,
                         st->in->cgroup, r->pages - fault_room, size);
                return;
        }
        const struct ng_cgroup *mcg = NULL;
        uint64_t room = 0, most = 0, need = ng_mul_sat(r->pages, ng_kib_bytes_sat(r->page_kib));
        int bound = memcg_room(st, &mcg, &room, &most);
        if (bound > 0 && most != UINT64_MAX && need > most) {
                r->outcome = NG_REHEARSE_FAULT_STALL;
                snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages can be reserved, but are charged at "
                         "first touch to cgroup %.100s (memory_hugetlb_accounting), whose memory.max of %s leaves "
                         "them %s beside its hugetlb, %s short: a touch beyond stalls, the kernel retrying it while "
                         "the charge is refused (VM_FAULT_OOM, not SIGBUS)", r->pages, page, mcg->path,
                         bytes_h(mcg->memory.max_bytes).s, bytes_h(most).s, bytes_h(need - most).s);
                snprintf(r->fix, sizeof(r->fix), "raise memory.max of cgroup %.100s by %s (a unit's MemoryMax=, a "
                         "container's memory limit)", mcg->path, bytes_h(need - most).s);
                return;
        }
        if (r->free_on_nodes + made < r->pages) {
                r->outcome = NG_REHEARSE_SIGBUS;
                snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages can be reserved (%" PRIu64 " free and "
                         "unreserved in all) but node%s %s, the only one%s it may take them from, hold%s %" PRIu64
                         " once the processes confined there take what they reserved (%s): a first touch beyond "
                         "them fails (SIGBUS, or a short read where read(2) touches the buffer)", r->pages, page,
                         r->avail_pages, ng_bitmap_count(&r->nodes) == 1 ? "" : "s", nodes,
                         ng_bitmap_count(&r->nodes) == 1 ? "" : "s", ng_bitmap_count(&r->nodes) == 1 ? "s" : "",
                         r->free_on_nodes, frees);
                snprintf(r->fix, sizeof(r->fix), "reserve %" PRIu64 " more %s pages on node%s %s, or start it "
                         "bound to nodes that hold them", r->pages - r->free_on_nodes - made, page,
                         ng_bitmap_count(&r->nodes) == 1 ? "" : "s", nodes);
                return;
        }
        r->outcome = NG_REHEARSE_HUGE;
        snprintf(r->why, sizeof(r->why), "its %" PRIu64 " %s pages fit the pool (%" PRIu64 " free and unreserved "
                 "once it stops%s) and the %" PRIu64 " free for it on node%s %s (%s)", r->pages, page,
                 r->avail_pages, made ? ", the rest surplus" : "", r->free_on_nodes,
                 ng_bitmap_count(&r->nodes) == 1 ? "" : "s", nodes, frees);
        if (bound > 0 && need > room)
                ng_rehearse_appendf(r->why, sizeof(r->why), "; cgroup %.100s, charged its hugetlb faults, has %s free below "
                        "memory.max: the touches first reclaim %s of its other memory%s", mcg->path,
                        bytes_h(room).s, bytes_h(need - room).s,
                        most == UINT64_MAX ? " (how much of it is hugetlb is unknown)" : "");
        else if (bound < 0)
                ng_rehearse_appendf(r->why, sizeof(r->why), "; its hugetlb faults are charged to its memory cgroup "
                        "(memory_hugetlb_accounting), whose memory.max %s", mcg ? "could not be read" : "is unknown");
}

void ng_rehearse_cyclops(struct stage *st)
{
        struct ng_rehearsal *r = st->r;
        const struct ng_bitmap *from = r->outcome == NG_REHEARSE_HUGE ? &r->from_nodes : &r->nodes;
        if ((r->outcome != NG_REHEARSE_HUGE && r->outcome != NG_REHEARSE_SMALL && r->outcome != NG_REHEARSE_OFF) ||
            ng_bitmap_count(from) != 1 || ng_bitmap_count(&st->in->cpu_nodes) < 2)
                return;
        r->cyclops = true;
        r->cyclops_node = ng_bitmap_next(from, 0);
        ng_rehearse_appendf(r->why, sizeof(r->why), "; every page from node %d while its CPUs span %u nodes", r->cyclops_node,
                ng_bitmap_count(&st->in->cpu_nodes));
        if (!r->fix[0])
                snprintf(r->fix, sizeof(r->fix), "spread its pools or its binding over the nodes of its CPUs "
                         "(numactl --interleave, NUMAPolicy=interleave), or reserve pages on them");
}

int ng_rehearse_unknown(struct ng_rehearsal *r, const char *why)
{
        r->outcome = NG_REHEARSE_UNKNOWN;
        snprintf(r->why, sizeof(r->why), "%s", why);
        return 0;
}

int ng_rehearse_pool(struct stage *st, uint64_t pages)
{
        struct ng_rehearsal *r = st->r;
        st->pool = ng_snapshot_pool(st->s, r->page_kib);
        if (!st->pool || st->pool->unknown) {
                char page[16];
                ng_format_page_size(r->page_kib, page, sizeof(page));
                if (st->pool)
                        return ng_rehearse_unknown(r, "its hugepage pool's counters could not be read");
                r->outcome = r->setting == NG_HUGE_ON ? NG_REHEARSE_NO_START : NG_REHEARSE_SMALL;
                snprintf(r->why, sizeof(r->why), "the host has no pool of %s pages", page);
                return 0;
        }
        r->pages = pages;
        _cleanup_free_ uint64_t *free_after = calloc(st->s->topo.n_nodes + 1, sizeof(*free_after));
        if (!free_after)
                return -ENOMEM;
        st->free_after = free_after;
        release_own(st);
        weigh(st);
        st->free_after = NULL;
        return 0;
}

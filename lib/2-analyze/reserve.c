/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: hugepage reservations against the nodes that can serve them
 * (ng-reserve.h; docs/ARCHITECTURE.md, "Reservations").
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-format.h"
#include "ng-reserve.h"
#include "units.h"
#include "util.h"

/* x86's gigantic pages (1 GiB) never come from the buddy allocator at
 * fault time: no surplus page of that size is ever made. */
#define GIGANTIC_KIB (1024u * 1024u)

static bool cgroup_under(const char *path, const char *prefix, bool *ret_exact)
{
        size_t n = strlen(prefix);
        while (n > 1 && prefix[n - 1] == '/')
                n--;
        if (n == 1 && prefix[0] == '/') {
                *ret_exact = !strcmp(path, "/");
                return true;
        }
        *ret_exact = !strncmp(path, prefix, n) && path[n] == '\0';
        return !strncmp(path, prefix, n) && (path[n] == '/' || path[n] == '\0');
}

/* The cgroup that holds pr's cpuset: its v1 cpuset hierarchy's, else v2's. */
static const char *cpuset_path(const struct ng_proc *pr)
{
        const char *p = ng_pid_cgroup_v1_path(&pr->cgroup, "cpuset");
        return p ? p : ng_pid_cgroup_v2_path(&pr->cgroup);
}

/* The bind policy pr's numa_maps shows on its mapping of seg, if any. */
static bool bind_nodes(const struct ng_proc *pr, const struct ng_segment *seg, struct ng_bitmap *ret)
{
        if (!pr->has_numa_maps)
                return false;
        for (size_t j = 0; j < pr->n_maps; j++) {
                if (!ng_segment_maps(seg, pr, &pr->maps[j]))
                        continue;
                for (size_t k = 0; k < pr->n_numa_maps; k++) {
                        const struct ng_numa_map *nm = &pr->numa_maps[k];
                        if (nm->start == pr->maps[j].start && nm->policy == NG_MPOL_BIND && nm->policy_nodes)
                                return ng_bitmap_parse_list(nm->policy_nodes, ret) >= 0;
                }
        }
        return false;
}

/* Where a first touch by pr of seg may take a page, with chg's cpuset made. */
static struct ng_bitmap allowed(const struct ng_snapshot *s, const struct ng_proc *pr, const struct ng_segment *seg,
                                const struct ng_resv_change *chg)
{
        struct ng_bitmap r = ng_snapshot_memory_nodes(s), b;
        if (pr->status.has_mems_allowed) {
                ng_idset_to_bitmap(&pr->status.mems_allowed, &b);
                ng_bitmap_and(&r, &b);
        }
        const char *cg = chg && chg->cgroup ? cpuset_path(pr) : NULL;
        bool exact;
        if (cg && cgroup_under(cg, chg->cgroup, &exact)) {
                if (exact) {
                        r = ng_snapshot_memory_nodes(s);
                        ng_bitmap_and(&r, &chg->mems);
                } else
                        ng_bitmap_and(&r, &chg->mems);
        }
        if (bind_nodes(pr, seg, &b))
                ng_bitmap_and(&r, &b);
        return r;
}

struct builder {
        struct ng_resv_need *v;
        size_t n;
        size_t *last_seg;       /* per entry: the last segment counted in it */
};

static int entry(struct builder *b, size_t inst, uint64_t page_kib, const struct ng_bitmap *nodes, pid_t pid,
                 size_t *ret)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->v[i].instance == inst && b->v[i].page_kib == page_kib && ng_bitmap_equal(&b->v[i].nodes, nodes)) {
                        *ret = i;
                        return 0;
                }
        if (ng_grow(&b->v, NULL, b->n, sizeof(*b->v), 0) < 0 ||
            ng_grow(&b->last_seg, NULL, b->n, sizeof(*b->last_seg), 0) < 0)
                return -ENOMEM;
        b->v[b->n] = (struct ng_resv_need) { .instance = inst, .page_kib = page_kib, .nodes = *nodes, .pid = pid };
        b->last_seg[b->n] = SIZE_MAX;
        *ret = b->n++;
        return 0;
}

/* Pages of seg in its pool, pages faulted, and whether that is a lower
 * bound; false for a segment with nothing left to fault. */
static bool seg_pages(const struct ng_segment *seg, uint64_t *ret_pages, uint64_t *ret_faulted, bool *ret_at_least)
{
        if (!seg->huge || seg->page_kib <= 4 || seg->bytes_unknown || seg->n_pids == 0)
                return false;
        uint64_t page = ng_kib_bytes_sat(seg->page_kib);
        uint64_t pages = seg->bytes / page + (seg->bytes % page != 0);
        uint64_t faulted = seg->resident_bytes / page;
        if (faulted >= pages)
                return false;
        *ret_pages = pages;
        *ret_faulted = faulted;
        /* The kernel's count (SysV rss), the file's blocks, or the pools'
         * counters see every faulted page; one attacher's page tables only
         * what it touched. */
        *ret_at_least = seg->resident_source != NG_SOURCE_COUNTER && seg->resident_source != NG_SOURCE_SEGMENT &&
                        seg->placement_source != NG_SOURCE_POOL;
        return true;
}

static int add_segment(struct builder *b, const struct ng_snapshot *s, const struct ng_audit *a, size_t inst,
                       size_t seg_idx, const struct ng_resv_change *chg)
{
        const struct ng_segment *seg = &a->segments[seg_idx];
        uint64_t pages, faulted;
        bool at_least;
        if (!seg_pages(seg, &pages, &faulted, &at_least))
                return 0;
        size_t cursor = 0;
        for (size_t k = 0; k < seg->n_pids; k++) {
                const struct ng_proc *pr = ng_snapshot_proc_next(s, seg->pids[k], &cursor);
                if (!pr)
                        continue;
                struct ng_bitmap nodes = allowed(s, pr, seg, chg);
                size_t e;
                if (entry(b, inst, seg->page_kib, &nodes, pr->pid, &e) < 0)
                        return -ENOMEM;
                if (b->last_seg[e] == seg_idx)
                        continue;
                struct ng_resv_need *nd = &b->v[e];
                b->last_seg[e] = seg_idx;
                if (nd->n_segments++ == 0)
                        ng_segment_label(seg, nd->segment, sizeof(nd->segment));
                nd->reserved_pages += pages;
                nd->faulted_pages += faulted;
                nd->unfaulted_pages += pages - faulted;
                nd->faulted_at_least |= at_least;
        }
        return 0;
}

int ng_resv_needs(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_change *chg,
                  struct ng_resv_need **ret, size_t *ret_n)
{
        struct builder b = {0};
        _cleanup_free_ bool *claimed = calloc(a->n_segments + 1, sizeof(*claimed));
        int r = claimed ? 0 : -ENOMEM;
        for (size_t i = 0; i < a->n_instances && r >= 0; i++)
                for (size_t k = 0; k < a->instances[i].n_segs && r >= 0; k++) {
                        claimed[a->instances[i].segs[k]] = true;
                        r = add_segment(&b, s, a, i, a->instances[i].segs[k], chg);
                }
        /* Segments of no instance (smaller than min_segment_size, say)
         * reserve pages too. */
        for (size_t k = 0; k < a->n_segments && r >= 0; k++)
                if (!claimed[k])
                        r = add_segment(&b, s, a, a->n_instances, k, chg);
        free(b.last_seg);
        if (r < 0) {
                free(b.v);
                return r;
        }
        /* The kernel counts every reserved page not yet faulted
         * (resv_hugepages): no need is larger. */
        for (size_t i = 0; i < b.n; i++) {
                const struct ng_hugepool *hp = ng_snapshot_pool(s, b.v[i].page_kib);
                if (hp && !hp->unknown && b.v[i].unfaulted_pages > hp->resv_pages)
                        b.v[i].unfaulted_pages = hp->resv_pages;
        }
        *ret = b.v;
        *ret_n = b.n;
        return 0;
}

static int64_t delta_on(const struct ng_resv_change *chg, uint64_t page_kib, int node)
{
        int64_t d = 0;
        if (!chg || chg->page_kib != page_kib)
                return 0;
        for (size_t i = 0; i < chg->n_delta; i++)
                if (chg->delta[i].node == node)
                        d += chg->delta[i].pages;
        return d;
}

/* Free pages of page_kib on nodes after chg; false when a pool there is unknown. */
static bool free_on(const struct ng_snapshot *s, const struct ng_bitmap *nodes, uint64_t page_kib,
                    const struct ng_resv_change *chg, uint64_t *ret)
{
        uint64_t sum = 0;
        bool known = true;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (!ng_bitmap_test(nodes, (unsigned) nd->id))
                        continue;
                const struct ng_hugepool *hp = ng_node_pool(nd, page_kib);
                if (!hp) {
                        known = false;
                        continue;
                }
                known &= !hp->unknown;
                int64_t f = (int64_t) (hp->free_pages > INT64_MAX ? INT64_MAX : hp->free_pages);
                f += delta_on(chg, page_kib, nd->id);
                sum += f > 0 ? (uint64_t) f : 0;
        }
        *ret = sum;
        return known;
}

/* Surplus pages vm.nr_overcommit_hugepages still allows, as many as the
 * free memory of nodes holds. */
static uint64_t surplus_possible(const struct ng_snapshot *s, const struct ng_bitmap *nodes, uint64_t page_kib)
{
        const struct ng_hugepool *hp = ng_snapshot_pool(s, page_kib);
        if (!hp || hp->unknown || page_kib >= GIGANTIC_KIB || hp->overcommit_pages <= hp->surplus_pages)
                return 0;
        uint64_t room = hp->overcommit_pages - hp->surplus_pages, mem_pages = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (ng_bitmap_test(nodes, (unsigned) nd->id))
                        mem_pages += ng_meminfo_bytes(s, nd, "MemFree").v / 1024 / page_kib;
        }
        return room < mem_pages ? room : mem_pages;
}

void ng_resv_weigh(const struct ng_snapshot *s, const struct ng_resv_need *needs, size_t n,
                   const struct ng_resv_change *chg, struct ng_resv_weighed *ret)
{
        for (size_t i = 0; i < n; i++) {
                const struct ng_resv_need *nd = &needs[i];
                struct ng_resv_weighed *w = &ret[i];
                *w = (struct ng_resv_weighed) { .need = *nd };
                /* Instances whose nodes lie within these draw on the same
                 * free pages; needs of one instance are one demand (its
                 * segments may be counted in several of them). */
                for (size_t j = 0; j < n; j++) {
                        const struct ng_resv_need *o = &needs[j];
                        if (o->page_kib != nd->page_kib || !ng_bitmap_subset(&o->nodes, &nd->nodes))
                                continue;
                        bool counted = false;
                        for (size_t k = 0; k < j && !counted; k++)
                                counted = needs[k].instance == o->instance && needs[k].page_kib == nd->page_kib &&
                                          ng_bitmap_subset(&needs[k].nodes, &nd->nodes);
                        if (!counted) {
                                uint64_t most = 0;
                                for (size_t k = j; k < n; k++)
                                        if (needs[k].instance == o->instance && needs[k].page_kib == nd->page_kib &&
                                            ng_bitmap_subset(&needs[k].nodes, &nd->nodes) && needs[k].unfaulted_pages > most)
                                                most = needs[k].unfaulted_pages;
                                w->demand_pages = ng_add_sat(w->demand_pages, most);
                        }
                }
                bool known = free_on(s, &nd->nodes, nd->page_kib, chg, &w->free_pages);
                w->short_pages = w->demand_pages > w->free_pages ? w->demand_pages - w->free_pages : 0;
                w->state = w->demand_pages == 0 ? NG_RESV_COVERED : !known ? NG_RESV_UNKNOWN
                         : w->short_pages ? NG_RESV_SHORT : NG_RESV_COVERED;
                w->surplus_possible_pages = surplus_possible(s, &nd->nodes, nd->page_kib);
        }
}

static void node_list(const struct ng_snapshot *s, const struct ng_bitmap *nodes, bool inside, uint64_t page_kib,
                      const struct ng_resv_change *chg, char *buf, size_t size)
{
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < s->topo.n_nodes && o < size; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (ng_bitmap_test(nodes, (unsigned) nd->id) != inside || !nd->has_memory)
                        continue;
                const struct ng_hugepool *hp = ng_node_pool(nd, page_kib);
                int64_t f = hp ? (int64_t) (hp->free_pages > INT64_MAX ? INT64_MAX : hp->free_pages) : 0;
                f += delta_on(chg, page_kib, nd->id);
                if (!hp || hp->unknown)
                        o += (size_t) snprintf(buf + o, size - o, "%snode %d unknown", o ? ", " : "", nd->id);
                else
                        o += (size_t) snprintf(buf + o, size - o, "%snode %d %" PRId64, o ? ", " : "", nd->id,
                                               f > 0 ? f : 0);
        }
        if (o >= size && size > 4)
                snprintf(buf + size - 4, 4, "...");
}

static void describe(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_weighed *w,
                     const struct ng_resv_change *chg, char *buf, size_t size)
{
        const struct ng_resv_need *nd = &w->need;
        char page[16], in[256], out[256], extra[96] = "";
        ng_format_page_size(nd->page_kib, page, sizeof(page));
        node_list(s, &nd->nodes, true, nd->page_kib, chg, in, sizeof(in));
        node_list(s, &nd->nodes, false, nd->page_kib, chg, out, sizeof(out));
        if (w->demand_pages > nd->unfaulted_pages)
                snprintf(extra, sizeof(extra), "; with the instances confined within them, %" PRIu64 " pages",
                         w->demand_pages);
        snprintf(buf, size, "instance %s: %" PRIu64 " of %" PRIu64 " reserved %s hugepages of %s%s not yet faulted "
                 "(%s%" PRIu64 " faulted)%s; free %s pages where pid %d may take them: %s%s%s%s",
                 nd->instance < a->n_instances ? a->instances[nd->instance].name : "(none)", nd->unfaulted_pages,
                 nd->reserved_pages, page, nd->segment, nd->n_segments > 1 ? " and others" : "",
                 nd->faulted_at_least ? "at least " : "", nd->faulted_pages, extra, page, (int) nd->pid,
                 in[0] ? in : "no node", out[0] ? " (elsewhere: " : "", out, out[0] ? ")" : "");
}

void ng_resv_describe(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_weighed *w,
                      char *buf, size_t size)
{
        describe(s, a, w, NULL, buf, size);
}

struct worst {
        bool any;
        enum ng_resv_state state;
        uint64_t short_pages;
        size_t at;
};

/* The worst state and shortfall of each (instance, page size). */
static struct worst worst_of(const struct ng_resv_weighed *w, size_t n, size_t inst, uint64_t page_kib)
{
        struct worst r = {0};
        for (size_t i = 0; i < n; i++) {
                if (w[i].need.instance != inst || w[i].need.page_kib != page_kib)
                        continue;
                bool worse = !r.any || w[i].state > r.state || (w[i].state == r.state && w[i].short_pages > r.short_pages);
                if (worse)
                        r = (struct worst) { true, w[i].state, w[i].short_pages, i };
        }
        return r;
}

static void say(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_change *chg,
                struct ng_resv_verdict *v)
{
        char what[400];
        describe(s, a, &v->after, chg, what, sizeof(what));
        const struct ng_resv_need *nd = &v->after.need;
        char page[16], nodes[64];
        ng_format_page_size(nd->page_kib, page, sizeof(page));
        ng_bitmap_format_list(&nd->nodes, nodes, sizeof(nodes));
        if (v->ok)
                snprintf(v->message, sizeof(v->message), "hugepage reservations checked: %s", what);
        else if (v->unknown)
                snprintf(v->message, sizeof(v->message), "hugepage reservations cannot be checked: a pool of node%s "
                         "%s could not be read; %s", ng_bitmap_count(&nd->nodes) == 1 ? "" : "s", nodes, what);
        else
                snprintf(v->message, sizeof(v->message), "it would leave %" PRIu64 " reserved %s hugepage%s not "
                         "yet faulted with %" PRIu64 " free on node%s %s, %" PRIu64 " short: the next first touch "
                         "would die of SIGBUS; %s",
                         v->after.demand_pages, page, v->after.demand_pages == 1 ? "" : "s", v->after.free_pages,
                         ng_bitmap_count(&nd->nodes) == 1 ? "" : "s", nodes[0] ? nodes : "(none)",
                         v->after.short_pages, what);
}

/* Whether chg reaches need: free pages change on its nodes, or its
 * processes' nodes are not what they were. */
static bool touches(const struct ng_resv_change *chg, const struct ng_resv_weighed *before, size_t nb,
                    const struct ng_resv_need *need)
{
        if (!chg)
                return false;
        for (size_t i = 0; i < chg->n_delta; i++)
                if (chg->page_kib == need->page_kib && chg->delta[i].pages &&
                    ng_bitmap_test(&need->nodes, (unsigned) chg->delta[i].node))
                        return true;
        for (size_t i = 0; i < nb; i++)
                if (before[i].need.instance == need->instance && before[i].need.page_kib == need->page_kib &&
                    ng_bitmap_equal(&before[i].need.nodes, &need->nodes))
                        return false;
        return true;
}

int ng_resv_check(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_change *chg,
                  struct ng_resv_verdict *ret)
{
        _cleanup_free_ struct ng_resv_need *before = NULL, *after = NULL;
        _cleanup_free_ struct ng_resv_weighed *wb = NULL, *wa = NULL;
        size_t nb, na;
        *ret = (struct ng_resv_verdict) { .ok = true };
        if (ng_resv_needs(s, a, NULL, &before, &nb) < 0 || ng_resv_needs(s, a, chg, &after, &na) < 0)
                return -ENOMEM;
        wb = calloc(nb + 1, sizeof(*wb));
        wa = calloc(na + 1, sizeof(*wa));
        if (!wb || !wa)
                return -ENOMEM;
        ng_resv_weigh(s, before, nb, NULL, wb);
        ng_resv_weigh(s, after, na, chg, wa);
        bool found = false;
        for (size_t i = 0; i < na; i++) {
                if (wa[i].demand_pages == 0)
                        continue;
                ret->checked = true;
                struct worst b = worst_of(wb, nb, wa[i].need.instance, wa[i].need.page_kib);
                struct worst w = worst_of(wa, na, wa[i].need.instance, wa[i].need.page_kib);
                if (w.at != i)
                        continue;       /* its instance and size are judged by their worst need */
                bool bad = (w.state == NG_RESV_UNKNOWN && touches(chg, wb, nb, &wa[i].need)) ||
                           (w.state == NG_RESV_SHORT && (!b.any || b.state == NG_RESV_COVERED ||
                                                         w.short_pages > b.short_pages));
                if (found && !bad)
                        continue;
                ret->after = wa[i];
                ret->before = b.any ? wb[b.at] : wa[i];
                found = true;
                if (bad) {
                        ret->ok = false;
                        ret->unknown = w.state == NG_RESV_UNKNOWN;
                        break;
                }
        }
        if (ret->checked)
                say(s, a, chg, ret);
        else
                snprintf(ret->message, sizeof(ret->message),
                         "hugepage reservations checked: no instance has reserved hugepages not yet faulted");
        return 0;
}

static const struct ng_cgroup *v2_cgroup_of(const struct ng_snapshot *s, pid_t pid)
{
        const struct ng_proc *pr = pid ? ng_snapshot_proc(s, pid) : NULL;
        const char *path = pr ? ng_pid_cgroup_v2_path(&pr->cgroup) : NULL;
        const struct ng_cgroup *cg = path ? ng_snapshot_cgroup(s, path) : NULL;
        return cg && cg->version == 2 ? cg : NULL;
}

const struct ng_cgroup *ng_resv_memcg_cgroup(const struct ng_snapshot *s, const struct ng_audit *a,
                                             const struct ng_instance *in)
{
        const struct ng_cgroup *cg = v2_cgroup_of(s, in->main_pid);
        for (size_t k = 0; !cg && k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (seg->huge && seg->n_pids)
                        cg = v2_cgroup_of(s, seg->pids[0]);
        }
        return cg;
}

void ng_resv_memcg(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                   struct ng_resv_memcg *ret)
{
        *ret = (struct ng_resv_memcg) { .state = NG_RESV_MEMCG_NONE };
        if (ng_snapshot_hugetlb_memcg(s) != 1)
                return;
        /* unfaulted pages per page size, each capped by the pool's count */
        uint64_t kib[NG_MAX_HUGE_SIZES], pages[NG_MAX_HUGE_SIZES];
        size_t n = 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                uint64_t total, faulted;
                bool at_least;
                if (!seg_pages(seg, &total, &faulted, &at_least))
                        continue;
                size_t i = 0;
                while (i < n && kib[i] != seg->page_kib)
                        i++;
                if (i == n) {
                        if (n == NG_MAX_HUGE_SIZES)
                                continue;
                        kib[n] = seg->page_kib;
                        pages[n++] = 0;
                }
                pages[i] = ng_add_sat(pages[i], total - faulted);
                ret->at_most |= at_least;
                if (ret->n_segments++ == 0)
                        ng_segment_label(seg, ret->segment, sizeof(ret->segment));
        }
        for (size_t i = 0; i < n; i++) {
                const struct ng_hugepool *hp = ng_snapshot_pool(s, kib[i]);
                if (hp && !hp->unknown && pages[i] > hp->resv_pages)
                        pages[i] = hp->resv_pages;
                ret->unfaulted_bytes = ng_add_sat(ret->unfaulted_bytes, ng_mul_sat(pages[i], ng_kib_bytes_sat(kib[i])));
        }
        if (!ret->unfaulted_bytes)
                return;
        ret->cgroup = ng_resv_memcg_cgroup(s, a, in);
        const struct ng_cgroup *cg = ret->cgroup;
        if (!cg || !cg->memory.known) {
                ret->state = NG_RESV_MEMCG_UNKNOWN;
                return;
        }
        uint64_t max = cg->memory.max_bytes;
        if (max == UINT64_MAX)
                return;
        ret->room_bytes = max > cg->memory.current_bytes ? max - cg->memory.current_bytes : 0;
        /* With its hugetlb unknown (a kernel whose memory.stat has no
         * hugetlb line: 6.12 charges hugetlb but does not list it), all of
         * memory.max is the most any reclaim could leave. */
        ret->room_most_known = cg->memory.hugetlb_known;
        ret->room_most_bytes = !ret->room_most_known ? max
                             : max > cg->memory.hugetlb_bytes ? max - cg->memory.hugetlb_bytes : 0;
        ret->state = ret->unfaulted_bytes > ret->room_most_bytes ? NG_RESV_MEMCG_BEYOND
                   : ret->unfaulted_bytes > ret->room_bytes ? NG_RESV_MEMCG_RECLAIM : NG_RESV_MEMCG_ROOM;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `numaguardctl hugepages plan`: demand per node against the pools. */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-owner.h"
#include "ng-plan.h"
#include "units.h"

static uint64_t default_page_kib(const struct ng_snapshot *s)
{
        uint64_t kib = ng_default_huge_kib(s);
        return kib ? kib : 2048;
}

/* Nodes that get the instance's pages: its configured nodes, else the
 * nodes of its CPUs it may allocate on (local), else everything it may use. */
static struct ng_bitmap plan_nodes(const struct ng_snapshot *s, const struct ng_instance *in)
{
        struct ng_bitmap mem_nodes = {0}, b;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].has_memory)
                        ng_bitmap_set(&mem_nodes, (unsigned) s->topo.nodes[i].id);
        if (!ng_bitmap_empty(&in->cfg->nodes)) {
                b = in->cfg->nodes;
        } else {
                b = ng_bitmap_empty(&in->mems) ? mem_nodes : in->mems;
                if (in->cfg->policy == NG_POLICY_LOCAL) {
                        struct ng_bitmap local = b;
                        ng_bitmap_and(&local, &in->cpu_nodes);
                        if (!ng_bitmap_empty(&local))
                                b = local;
                }
                /* Not on a slower memory tier than its CPUs' own, unless
                 * nodes= names it. */
                int tier = ng_snapshot_fastest_tier(s, &in->cpu_nodes);
                for (size_t i = 0; i < s->topo.n_nodes; i++)
                        if (ng_snapshot_slower_tier(s, s->topo.nodes[i].id, tier))
                                ng_bitmap_clear(&b, (unsigned) s->topo.nodes[i].id);
        }
        ng_bitmap_and(&b, &mem_nodes);
        return ng_bitmap_empty(&b) ? mem_nodes : b;
}

static void fill_instance(const struct ng_audit *a, const struct ng_instance *in, uint64_t page_bytes,
                          struct ng_plan_instance *pi)
{
        bool has_file = false, has_hugeable = false;
        snprintf(pi->name, sizeof(pi->name), "%s", in->name);
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (seg->kind == NG_SEG_SYSV || seg->kind == NG_SEG_ANON_SHARED) {
                        pi->bytes += seg->bytes;
                        pi->bytes_unknown |= seg->bytes_unknown;
                        has_hugeable = true;
                } else if (seg->kind == NG_SEG_FILE && !seg->huge)
                        has_file = true;
        }
        if (in->cfg->expected_size_bytes > pi->bytes)
                pi->bytes = in->cfg->expected_size_bytes;
        pi->amm = has_file && !has_hugeable && !in->cfg->expected_size_bytes;
        pi->off = in->cfg->hugepages == NG_HUGEPAGES_OFF;
        if (pi->amm || pi->off || pi->bytes == 0 || pi->bytes_unknown)
                return;
        uint64_t pages = (pi->bytes + page_bytes - 1) / page_bytes;
        uint64_t margin = (uint64_t) ((double) pages * NG_PLAN_MARGIN + 0.999);
        pi->pages = pages + (margin ? margin : 1);
}

static struct ng_plan_node *plan_node(struct ng_plan *p, int id)
{
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].id == id)
                        return &p->nodes[i];
        return NULL;
}

/* Even split; the remainder goes to the lowest nodes. */
static void spread(struct ng_plan *p, const struct ng_plan_instance *pi)
{
        uint64_t n = ng_bitmap_count(&pi->nodes), k = 0;
        if (n == 0)
                return;
        NG_BITMAP_FOREACH(id, &pi->nodes) {
                struct ng_plan_node *pn = plan_node(p, id);
                if (pn)
                        pn->need_pages += pi->pages / n + (k < pi->pages % n ? 1 : 0);
                k++;
        }
}

static void supply_row(const struct ng_snapshot *s, const struct ng_node *nd, uint64_t floor_bytes,
                       uint64_t page_kib, struct ng_plan_node *pn)
{
        pn->id = nd->id;
        ng_node_supply(nd, floor_bytes, page_kib, &pn->supply);
        pn->nr_pages = pn->supply.nr_pages.v;
        pn->free_pages = pn->supply.free_pages.v;
        /* Unknown free memory gives no headroom: nothing is planned on it. */
        pn->headroom_pages = pn->supply.headroom_pages.v;
        const struct ng_boot_pool *bp = ng_boot_pool_find(s->boot_pools, s->n_boot_pools, nd->id, page_kib);
        if (bp) {
                pn->has_boot = true;
                pn->boot_from_file = bp->from_file;
                pn->boot_pages = bp->pages;
                pn->boot_source = bp->source;
                pn->boot_split = bp->split;
                ng_boot_pool_describe(bp, pn->boot_where, sizeof(pn->boot_where));
        }
}

static struct ng_plan *plan_new(const struct ng_snapshot *s, uint64_t floor_bytes, uint64_t page_kib,
                                size_t n_instances)
{
        _ng_cleanup_(ng_plan_freep) struct ng_plan *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->page_kib = page_kib;
        p->instances = calloc(n_instances + 1, sizeof(*p->instances));
        p->nodes = calloc(s->topo.n_nodes + 1, sizeof(*p->nodes));
        if (!p->instances || !p->nodes)
                return NULL;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                supply_row(s, &s->topo.nodes[i], floor_bytes, page_kib, &p->nodes[p->n_nodes++]);
        return ng_steal_ptr(&p);
}

int ng_plan_supply(const struct ng_snapshot *s, uint64_t floor_bytes, uint64_t page_kib, struct ng_plan **ret)
{
        assert(s && ret);
        struct ng_plan *p = plan_new(s, floor_bytes, page_kib, 0);
        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_nodes; i++) {
                p->nodes[i].target_pages = p->nodes[i].nr_pages;
                p->nr_pages += p->nodes[i].nr_pages;
                p->target_pages += p->nodes[i].target_pages;
        }
        *ret = p;
        return 0;
}

int ng_plan_hugepages(const struct ng_snapshot *s, const struct ng_config *cfg, const struct ng_audit *a,
                      struct ng_plan **ret)
{
        assert(s && cfg && a && ret);
        struct ng_plan *p = plan_new(s, cfg->node_free_floor_bytes, default_page_kib(s), a->n_instances);
        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_instance *in = &a->instances[i];
                struct ng_plan_instance *pi = &p->instances[p->n_instances++];
                fill_instance(a, in, ng_kib_bytes_sat(p->page_kib), pi);
                pi->nodes = plan_nodes(s, in);
                spread(p, pi);
                p->need_pages += pi->pages;
                p->need_unknown |= pi->bytes_unknown;
        }
        for (size_t i = 0; i < p->n_nodes; i++) {
                struct ng_plan_node *pn = &p->nodes[i];
                uint64_t in_use = pn->nr_pages - (pn->free_pages < pn->nr_pages ? pn->free_pages : pn->nr_pages);
                /* Pages held by running instances are part of their need;
                 * never plan below what is in use, never shrink. */
                pn->target_pages = pn->need_pages > pn->nr_pages ? pn->need_pages : pn->nr_pages;
                if (pn->target_pages < in_use)
                        pn->target_pages = in_use;
                p->changes |= pn->target_pages > pn->nr_pages;
                p->nr_pages += pn->nr_pages;
                p->target_pages += pn->target_pages;
        }
        *ret = p;
        return 0;
}

void ng_plan_free(struct ng_plan *p)
{
        if (!p)
                return;
        free(p->instances);
        free(p->nodes);
        free(p);
}

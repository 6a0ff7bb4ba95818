/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: what a node can give, as one typed query (docs/ARCHITECTURE.md,
 * "Node supply"): its memory, its free-memory floor (node_free_floor) and
 * its pool of one page size. The hugepage plan, NODE_PRESSURE, every
 * correction and the reports read a node's memory only through here, so
 * that a value nobody could read is unknown everywhere, never 0. A fixed
 * 1 GiB floor refused every correction on nodes under about 1.5 GiB; auto
 * fits the node.
 *
 * The floor applies per memory tier: on a host with several tiers a node
 * of the fastest one is where NUMA balancing in tiering mode promotes hot
 * pages from the slower tiers, only while the node's free memory is above
 * its promo watermark, and where kswapd then reclaims (demotes) down to
 * that mark (mm/vmscan.c pgdat_balanced, Linux 5.18 and later). A pool or
 * a move that took such a node to its high watermark would stop promotion
 * and start demotion: its auto floor is at least the promo watermark.
 * Nodes of slower tiers keep the high watermark; a pool is never planned
 * there unless nodes= names it (plan.c), nor a move (act-rebalance-plan.c).
 */

#include <assert.h>

#include "ng-config.h"
#include "ng-snapshot.h"
#include "units.h"

#define FLOOR_CAP_BYTES (UINT64_C(1) << 30)

static struct ng_known_u64 known(uint64_t v)
{
        return (struct ng_known_u64) { .v = v, .known = true };
}

/* A meminfo field in bytes: unknown without a usable meminfo, without the
 * line, or past what bytes can hold. The only place a meminfo key is
 * looked up by its text after collection (test-layout checks it). */
static struct ng_known_u64 meminfo_field(bool has, const struct ng_meminfo *m, const char *key)
{
        uint64_t kib, bytes;
        if (!has || ng_meminfo_get(m, key, &kib) < 0 || !ng_kib_to_bytes(kib, &bytes))
                return (struct ng_known_u64) {0};
        return known(bytes);
}

static struct ng_known_u64 mem_field(const struct ng_node *nd, const char *key)
{
        return meminfo_field(nd->has_meminfo, &nd->meminfo, key);
}

struct ng_known_u64 ng_meminfo_bytes(const struct ng_snapshot *s, const struct ng_node *nd, const char *key)
{
        assert(s && key);
        return nd ? mem_field(nd, key) : meminfo_field(s->has_meminfo, &s->meminfo, key);
}

uint64_t ng_default_huge_kib(const struct ng_snapshot *s)
{
        struct ng_known_u64 b = ng_meminfo_bytes(s, NULL, "Hugepagesize");
        return b.known ? b.v / 1024 : 0;
}

void ng_host_memory(const struct ng_snapshot *s, struct ng_known_u64 *ret_total, struct ng_known_u64 *ret_free)
{
        assert(s && ret_total && ret_free);
        *ret_total = meminfo_field(s->has_meminfo, &s->meminfo, "MemTotal");
        *ret_free = meminfo_field(s->has_meminfo, &s->meminfo, "MemFree");
}

struct ng_known_u64 ng_nodes_memory_total(const struct ng_snapshot *s)
{
        assert(s);
        struct ng_known_u64 sum = known(0);
        for (size_t i = 0; i < s->topo.n_nodes && sum.known; i++) {
                struct ng_known_u64 t = mem_field(&s->topo.nodes[i], "MemTotal");
                if (!t.known || !ng_add_u64(sum.v, t.v, &sum.v))
                        sum = (struct ng_known_u64) {0};
        }
        return s->topo.n_nodes ? sum : (struct ng_known_u64) {0};
}

bool ng_host_memory_split(const struct ng_snapshot *s, struct ng_known_u64 *ret_nodes, struct ng_known_u64 *ret_host)
{
        assert(s && ret_nodes && ret_host);
        struct ng_known_u64 free_b;
        *ret_nodes = ng_nodes_memory_total(s);
        ng_host_memory(s, ret_host, &free_b);
        if (!ret_nodes->known || !ret_host->known)
                return false;
        uint64_t a = ret_nodes->v, b = ret_host->v, hi = a > b ? a : b, diff = a > b ? a - b : b - a;
        /* diff / hi > NG_MEMTOTAL_TOLERANCE_PCT %, in integers that cannot
         * wrap whatever hi is */
        return diff > hi / 100 * NG_MEMTOTAL_TOLERANCE_PCT + hi % 100 * NG_MEMTOTAL_TOLERANCE_PCT / 100;
}

const struct ng_hugepool *ng_node_pool(const struct ng_node *nd, uint64_t page_kib)
{
        assert(nd);
        for (size_t i = 0; i < nd->n_pools; i++)
                if (nd->pools[i].page_kib == page_kib)
                        return &nd->pools[i];
        return NULL;
}

uint64_t ng_node_free_floor(uint64_t configured_bytes, const struct ng_node *nd)
{
        assert(nd);
        if (configured_bytes != NG_FREE_FLOOR_AUTO)
                return configured_bytes;
        struct ng_known_u64 total = mem_field(nd, "MemTotal");
        if (!total.known)
                return FLOOR_CAP_BYTES;
        uint64_t floor = total.v / 100 * 3, wmark;
        if (ng_mul_u64(nd->high_wmark_pages, 4096, &wmark) && wmark > floor)
                floor = wmark;
        /* The floor per tier: a node of the fastest tier keeps its promo
         * watermark too (set only for such nodes). */
        if (ng_mul_u64(nd->promo_wmark_pages, 4096, &wmark) && wmark > floor)
                floor = wmark;
        return floor < FLOOR_CAP_BYTES ? floor : FLOOR_CAP_BYTES;
}

void ng_node_supply(const struct ng_node *nd, uint64_t floor_bytes, uint64_t page_kib, struct ng_node_supply *ret)
{
        assert(nd && ret);
        struct ng_node_supply v = { .id = nd->id, .page_kib = page_kib };
        v.total_bytes = mem_field(nd, "MemTotal");
        v.free_bytes = mem_field(nd, "MemFree");
        v.floor_bytes = ng_node_free_floor(floor_bytes, nd);
        if (v.free_bytes.known)
                v.avail_bytes = known(v.free_bytes.v > v.floor_bytes ? v.free_bytes.v - v.floor_bytes : 0);
        const struct ng_hugepool *hp = page_kib ? ng_node_pool(nd, page_kib) : NULL;
        v.has_pool = hp != NULL;
        if (hp && !hp->unknown) {
                v.nr_pages = known(hp->nr_pages);
                v.free_pages = known(hp->free_pages < hp->nr_pages ? hp->free_pages : hp->nr_pages);
                v.surplus_pages = known(hp->surplus_pages);
        }
        uint64_t page_bytes;
        if (v.avail_bytes.known && page_kib && ng_kib_to_bytes(page_kib, &page_bytes))
                v.headroom_pages = known(v.avail_bytes.v / page_bytes);
        *ret = v;
}

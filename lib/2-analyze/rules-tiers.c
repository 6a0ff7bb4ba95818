/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rules of memory tiers (docs/ARCHITECTURE.md, "Why it exists"): a
 * database's memory on a slower tier than its CPUs' own memory, memory the
 * kernel may demote there, and tiers that ignore the firmware's figures;
 * and transparent hugepages against what the engine's vendor asks. */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "rules-internal.h"

/* SLOW_TIER: this much of the resident memory on a slower tier. */
#define SLOW_TIER_SHARE 0.10

/* The nodes of tiers slower than tier: *ret_nodes, the slowest in
 * *ret_tier (-1 when none). */
static void slower_nodes(const struct ng_snapshot *s, int tier, struct ng_bitmap *ret_nodes, int *ret_tier)
{
        *ret_tier = -1;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (!ng_snapshot_slower_tier(s, nd->id, tier) || !nd->has_memory)
                        continue;
                ng_bitmap_set(ret_nodes, (unsigned) nd->id);
                if (nd->tier > *ret_tier)
                        *ret_tier = nd->tier;
        }
}

int ng_rule_slow_tier(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        int local = ng_snapshot_fastest_tier(s, &in->cpu_nodes);
        if (s->topo.n_tiers < 2 || local < 0 || in->resident_bytes == 0 ||
            in->resident_bytes < ctx->cfg->min_segment_size_bytes)
                return 0;
        struct ng_bitmap slow = {0};
        uint64_t slow_bytes = 0;
        int slowest = -1;
        for (size_t i = 0; i < in->n_nodes; i++) {
                const struct ng_node *nd = ng_snapshot_node(s, in->nodes[i].node);
                if (!nd || !ng_snapshot_slower_tier(s, nd->id, local) || !in->nodes[i].bytes)
                        continue;
                slow_bytes += in->nodes[i].bytes;
                ng_bitmap_set(&slow, (unsigned) nd->id);
                if (nd->tier > slowest)
                        slowest = nd->tier;
        }
        double share = (double) slow_bytes / (double) in->resident_bytes;
        if (share < SLOW_TIER_SHARE || ng_rules_intended(in, &slow))
                return 0;
        bool one = ng_bitmap_count(&slow) == 1;
        const char *what = ng_rules_memory_noun(in);
        char advice[256];
        snprintf(advice, sizeof(advice), "put the %s on the tier of the instance's CPUs: bind or interleave it over "
                 "their nodes (numaguardctl rebalance), and back it by hugepages, which the kernel never demotes",
                 what);
        return ng_rules_add(ctx, NG_CODE_SLOW_TIER, in, NULL, &slow, share, advice,
                   "%" PRIu64 "%% of %s resident %s (%s) sits on node%s %s in memory tier %d, slower than "
                   "tier %d of the instance's CPU nodes %s%s",
                   ng_rules_pct(share), ng_rules_bytes_h(in->resident_bytes).s, what, ng_rules_bytes_h(slow_bytes).s,
                   one ? "" : "s", ng_rules_list_h(&slow).s, slowest, local, ng_rules_list_h(&in->cpu_nodes).s,
                   ng_rules_latency_h(&in->price).s);
}

/* Resident bytes of the instance's segments that are not hugetlb: the
 * kernel demotes shmem and anonymous pages, never hugetlb pages. */
static uint64_t demotable_bytes(const struct audit_ctx *ctx, const struct ng_instance *in)
{
        uint64_t sum = 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                if (!seg->huge)
                        sum += seg->resident_bytes;
        }
        return sum;
}

static int demotable(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        int local = ng_snapshot_fastest_tier(s, &in->cpu_nodes), slowest;
        struct ng_bitmap below = {0};
        slower_nodes(s, local, &below, &slowest);
        uint64_t bytes = demotable_bytes(ctx, in);
        if (slowest < 0 || bytes == 0 || bytes < ctx->cfg->min_segment_size_bytes)
                return 0;
        bool one = ng_bitmap_count(&below) == 1;
        int nb = s->knobs.numa_balancing;
        const char *what = ng_rules_memory_noun(in);
        char advice[256];
        snprintf(advice, sizeof(advice), "back the %s by hugepages (hugetlb pages are never demoted), or turn "
                 "demotion off: echo false > /sys/kernel/mm/numa/demotion_enabled", what);
        return ng_rules_add(ctx, NG_CODE_SHMEM_DEMOTABLE, in, NULL, &below, (double) bytes, advice,
                   "demotion is on and %s of the instance's resident %s is not in hugepages: under "
                   "memory pressure on node%s %s the kernel may move it to the slower tier on node%s %s%s",
                   ng_rules_bytes_h(bytes).s, what, ng_bitmap_count(&in->cpu_nodes) == 1 ? "" : "s",
                   ng_rules_list_h(&in->cpu_nodes).s, one ? "" : "s",
                   ng_rules_list_h(&below).s,
                   nb == 2 || nb == 3 ? " (NUMA balancing in tiering mode promotes a page back only once it is "
                                        "touched again)" : "");
}

/* THP_NOT_AS_VENDOR: the host's transparent hugepages against what the
 * engine's vendor asks (engine.h). A configured instance is of the engine
 * its main process is of. */
int ng_rule_thp_vendor(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const char *type = in->type;
        if (in->origin == NG_INST_CONFIGURED) {
                const struct ng_proc *pr = ng_snapshot_proc(ctx->s, in->main_pid);
                const struct ng_engine *e = pr ? ng_engine_of_process(pr->name) : NULL;
                type = e ? e->type : NULL;
        }
        const char *want = type ? ng_engine_thp_wanted(type) : NULL, *now = ctx->s->knobs.thp_enabled;
        if (!want || !now[0] || !strcmp(want, now))
                return 0;
        return ng_rules_add(ctx, NG_CODE_THP_NOT_AS_VENDOR, in, NULL, NULL, 0,
                   "set transparent_hugepage=never on the kernel command line (or the tuned profile the vendor "
                   "ships) and back the shared memory by hugetlb pages",
                   "transparent hugepages are \"%s\" (/sys/kernel/mm/transparent_hugepage/enabled) but %s asks for "
                   "\"%s\": khugepaged's collapsing and compaction stall the database's processes",
                   now, type, want);
}

int ng_rule_shmem_demotable(struct audit_ctx *ctx)
{
        if (ctx->s->topo.demotion_enabled != 1 || ctx->s->topo.n_tiers < 2)
                return 0;
        int r = 0;
        for (size_t i = 0; i < ctx->a->n_instances && r >= 0; i++)
                r = demotable(ctx, &ctx->a->instances[i]);
        return r;
}

/* ---- TIERS_IGNORE_HMAT ---- */

/* A CPU-less node this many times slower than the CPUs' own memory (read
 * latency, or read bandwidth that many times lower), per the HMAT, yet in
 * their tier. */
#define TIERS_HMAT_RATIO 1.5

/* The node's HMAT figures from CPUs (access1), else from any initiator;
 * NULL without a read latency and bandwidth. */
static const struct ng_hmat_access *hmat_of(const struct ng_node *nd)
{
        for (int k = 1; k >= 0; k--) {
                const struct ng_hmat_access *a = &nd->access[k];
                if (a->present && a->read_latency_ns > 0 && a->read_bandwidth_mbps > 0)
                        return a;
        }
        return NULL;
}

/* The fastest CPU node of a tier by the HMAT (-1 without one) and its
 * figures. */
static int tier_cpu_best(const struct ng_snapshot *s, int tier, const struct ng_hmat_access **ret)
{
        int best = -1;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                const struct ng_hmat_access *a = hmat_of(nd);
                if (nd->tier != tier || !nd->has_cpu || !nd->has_memory || !a)
                        continue;
                if (best < 0 || a->read_latency_ns < (*ret)->read_latency_ns) {
                        best = nd->id;
                        *ret = a;
                }
        }
        return best;
}

static int tier_ignores_hmat(struct audit_ctx *ctx, int tier)
{
        const struct ng_snapshot *s = ctx->s;
        const struct ng_hmat_access *local = NULL;
        int cpu_node = tier_cpu_best(s, tier, &local);
        if (cpu_node < 0)
                return 0;
        struct ng_bitmap slow = {0};
        double worst = 0;
        int worst_node = -1;
        const struct ng_hmat_access *wa = NULL;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                const struct ng_hmat_access *a = hmat_of(nd);
                if (nd->tier != tier || nd->has_cpu || !nd->has_memory || !a)
                        continue;
                double lat = (double) a->read_latency_ns / (double) local->read_latency_ns;
                double bw = (double) local->read_bandwidth_mbps / (double) a->read_bandwidth_mbps;
                double ratio = lat > bw ? lat : bw;
                if (ratio < TIERS_HMAT_RATIO)
                        continue;
                ng_bitmap_set(&slow, (unsigned) nd->id);
                if (ratio > worst) {
                        worst = ratio;
                        worst_node = nd->id;
                        wa = a;
                }
        }
        if (worst_node < 0)
                return 0;
        char list[128];
        ng_bitmap_format_list(&slow, list, sizeof(list));
        return ng_rules_add(ctx, NG_CODE_TIERS_IGNORE_HMAT, NULL, NULL, &slow, worst,
                            "know that memory on these nodes is slower whatever its tier (numaguard prices it from "
                            "the HMAT); a kernel that places CPU-less nodes by the HMAT, or dax/kmem with a slower "
                            "abstract distance, gives them a tier of their own",
                            "memory tier %d holds node(s) %s beside node %d's own memory, yet the firmware's HMAT "
                            "gives node %d %s ns and %s MB/s against node %d's %s ns and %s MB/s (%s times "
                            "slower): the kernel's tiering treats them as the CPUs' own memory, demotes nothing "
                            "to them and promotes nothing from them; later kernels (Debian 13's 6.12) place such a "
                            "node in a tier of its own from the HMAT",
                            tier, list, cpu_node, worst_node, ng_rules_num_h((double) wa->read_latency_ns).s,
                            ng_rules_num_h((double) wa->read_bandwidth_mbps).s, cpu_node,
                            ng_rules_num_h((double) local->read_latency_ns).s,
                            ng_rules_num_h((double) local->read_bandwidth_mbps).s, ng_rules_num_h(worst).s);
}

int ng_rule_tiers_ignore_hmat(struct audit_ctx *ctx)
{
        int r = 0;
        for (size_t k = 0; k < ctx->s->topo.n_tiers && r >= 0; k++)
                r = tier_ignores_hmat(ctx, ctx->s->topo.tiers[k].id);
        return r;
}

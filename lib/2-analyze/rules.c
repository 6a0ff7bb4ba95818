/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze, part 2: the rules. Each rule reads the snapshot and the
 * instances and appends findings whose message carries the numbers behind
 * it. docs/ARCHITECTURE.md, "Why it exists", gives the facts behind every
 * threshold.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-internal.h"
#include "audit-ns.h"
#include "cleanup.h"
#include "engine.h"
#include "ng-format.h"
#include "units.h"
#include "rules-internal.h"
#include "util.h"

/* NODE_PRESSURE on small nodes: the floor is at most this share of the node. */
#define PRESSURE_NODE_SHARE 0.10

/* ---- memory ---- */

/* Page tables of 4 KiB mappings cost 8 bytes per page per process; one
 * 2 MiB page needs one 8-byte entry instead of 512. */
static int rule_pagetables(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        struct ng_known_u64 total, free_b;
        ng_host_memory(s, &total, &free_b);
        uint64_t total_kib = total.v / 1024, pt_kib = ng_meminfo_bytes(s, NULL, "PageTables").v / 1024;
        if (!total.known || total_kib == 0)
                return 0;
        double limit = ctx->cfg->pagetable_share;
        const char *advice = "back the shared segment with hugepages: page tables shrink about 512-fold";
        for (size_t i = 0; i < ctx->a->n_instances; i++) {
                const struct ng_instance *in = &ctx->a->instances[i];
                double share = (double) in->vm_pte_kib / (double) total_kib;
                if (share < limit)
                        continue;
                int r = ng_rules_add(ctx, NG_CODE_PAGETABLE_BLOAT, in, NULL, NULL, share, advice,
                            "the instance's %zu processes hold %s of page tables (%" PRIu64 "%% of the host's "
                            "%s, /proc/meminfo's MemTotal); with 2M pages the shared part would need about %s",
                            in->n_pids, ng_rules_bytes_h(ng_kib_bytes_sat(in->vm_pte_kib)).s, ng_rules_pct(share),
                            ng_rules_bytes_h(ng_kib_bytes_sat(total_kib)).s,
                            ng_rules_bytes_h(ng_mul_sat(in->vm_pte_kib, 2)).s);
                if (r < 0)
                        return r;
        }
        double share = (double) pt_kib / (double) total_kib;
        if (share < limit)
                return 0;
        return ng_rules_add(ctx, NG_CODE_PAGETABLE_BLOAT, NULL, NULL, NULL, share, advice,
                   "page tables take %s (/proc/meminfo's PageTables), %" PRIu64 "%% of the host's %s (its "
                   "MemTotal; threshold %" PRIu64 "%%)",
                   ng_rules_bytes_h(ng_kib_bytes_sat(pt_kib)).s, ng_rules_pct(share), ng_rules_bytes_h(ng_kib_bytes_sat(total_kib)).s, ng_rules_pct(limit));
}

static int rule_pressure(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                struct ng_node_supply sup;
                ng_node_supply(nd, ctx->cfg->node_free_floor_bytes, 0, &sup);
                /* Unknown memory (AUDIT_INCOMPLETE says why) is no pressure. */
                if (!sup.total_bytes.known || !sup.free_bytes.known || sup.total_bytes.v == 0)
                        continue;
                uint64_t total = sup.total_bytes.v, free_b = sup.free_bytes.v, floor = sup.floor_bytes;
                if (floor > (uint64_t) (total * PRESSURE_NODE_SHARE))
                        floor = (uint64_t) (total * PRESSURE_NODE_SHARE);
                if (free_b >= floor)
                        continue;
                struct ng_bitmap nodes = {0};
                ng_bitmap_set(&nodes, (unsigned) nd->id);
                int r = ng_rules_add_as(ctx, NG_CODE_NODE_PRESSURE, free_b < floor / 4 ? NG_SEV_CRITICAL : NG_SEV_WARNING, NULL,
                            NULL, &nodes, (double) free_b,
                            "find what filled the node (a cyclops segment, a bound instance) and spread it; "
                            "allocations there now fall back to remote nodes or reclaim",
                            "node %d has %s free of its %s (the node's MemTotal), below its floor of %s (shmem %s, "
                            "page tables %s)",
                            nd->id, ng_rules_bytes_h(free_b).s, ng_rules_bytes_h(total).s, ng_rules_bytes_h(floor).s,
                            ng_rules_bytes_h(ng_meminfo_bytes(s, nd, "Shmem").v).s,
                            ng_rules_bytes_h(ng_meminfo_bytes(s, nd, "PageTables").v).s);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int rule_orphans(struct audit_ctx *ctx)
{
        for (size_t i = 0; i < ctx->a->n_segments; i++) {
                const struct ng_segment *seg = &ctx->a->segments[i];
                char label[sizeof(seg->name) + 64];
                ng_segment_label(seg, label, sizeof(label));
                int r = 0;
                if (seg->bytes_unknown)
                        continue;
                if (seg->kind == NG_SEG_SYSV && seg->dest && seg->nattch > 0)
                        r = ng_rules_add_as(ctx, NG_CODE_ORPHAN_SEGMENT, NG_SEV_INFO, NULL, label, NULL, (double) seg->bytes,
                                "the memory is freed when the last process detaches; restart those processes if "
                                "it must go now",
                                "%s (%s) was removed but %" PRIu64 " process%s still attached",
                                label, ng_rules_bytes_h(seg->bytes).s, seg->nattch,
                                seg->nattch == 1 ? " is" : "es are");
                else if (seg->bytes < ctx->cfg->min_segment_size_bytes || seg->kind == NG_SEG_PRIVATE)
                        continue;
                else if (seg->kind == NG_SEG_SYSV && seg->nattch == 0)
                        r = ng_rules_add(ctx, NG_CODE_ORPHAN_SEGMENT, NULL, label, NULL,
                                (double) seg->bytes,
                                "check that no instance will attach it again, then remove it with ipcrm -m "
                                "(ipcrm exits 0 even for a segment that is already gone)",
                                "%s (%s, %s resident) has no process attached",
                                label, ng_rules_bytes_h(seg->bytes).s, ng_rules_bytes_h(seg->resident_bytes).s);
                else if (seg->kind == NG_SEG_FILE && seg->n_pids == 0)
                        r = ng_rules_add(ctx, NG_CODE_ORPHAN_SEGMENT, NULL, label, NULL,
                                (double) seg->bytes,
                                "a file left by an instance that stopped uncleanly: remove it once no instance "
                                "will map it again",
                                "%s (%s) is mapped by no process", label, ng_rules_bytes_h(seg->bytes).s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- host knobs ---- */

static int rule_host(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        int r = 0;
        /* Bit 1 moves pages between nodes; 2 alone (tiering mode) only
         * promotes pages from a slower tier. */
        if (s->topo.n_nodes >= 2 && s->knobs.numa_balancing > 0 && (s->knobs.numa_balancing & 1))
                r = ng_rules_add(ctx, NG_CODE_AUTONUMA_ON, NULL, NULL, NULL, s->knobs.numa_balancing,
                        "database tuning profiles set kernel.numa_balancing=0; place shared memory deliberately",
                        "kernel.numa_balancing=%d: automatic NUMA balancing skips hugetlb mappings and migrates "
                        "4 KiB shared pages toward whichever process touched them last",
                        s->knobs.numa_balancing);
        if (r >= 0 && s->topo.n_nodes >= 2 && s->knobs.zone_reclaim_mode > 0)
                r = ng_rules_add(ctx, NG_CODE_ZONE_RECLAIM_ON, NULL, NULL, NULL,
                        s->knobs.zone_reclaim_mode,
                        "set vm.zone_reclaim_mode = 0 (sysctl.d), the kernel's default: allocate on another node "
                        "before reclaiming",
                        "vm.zone_reclaim_mode=%d: a node short of free memory reclaims its own page cache%s before "
                        "it allocates on another node: stalls for the database and its file cache dropped",
                        s->knobs.zone_reclaim_mode, s->knobs.zone_reclaim_mode & 6 ? " (writing dirty pages or "
                        "swapping, bits 2 and 4)" : "");
        for (size_t i = 0; i < s->n_procs && r >= 0; i++)
                if (!strcmp(s->procs[i]->name, "numad"))
                        r = ng_rules_add(ctx, NG_CODE_NUMAD_RUNNING, NULL, NULL, NULL, s->procs[i]->pid,
                                "exclude database processes from numad (numad -x PID) or stop it",
                                "numad (pid %d) moves whole processes between nodes and drags shared pages "
                                "after them", (int) s->procs[i]->pid);
        return r;
}

/* An instance of an engine that needs the unversioned libnuma.so: by its
 * type, or for a configured instance by its main process. */
static bool needs_libnuma(const struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (ng_engine_needing_libnuma(in->type))
                return true;
        const struct ng_proc *pr = ng_snapshot_proc(ctx->s, in->main_pid);
        const struct ng_engine *e = pr ? ng_engine_of_process(pr->name) : NULL;
        return in->origin == NG_INST_CONFIGURED && e && e->needs_libnuma;
}

/* Oracle dlopen()s the unversioned libnuma.so for _enable_NUMA_support and
 * turns NUMA support off without a word when it is missing. */
static int rule_libnuma(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (ctx->s->libnuma_so != 0 || ctx->s->topo.n_nodes < 2 || !needs_libnuma(ctx, in))
                return 0;
        return ng_rules_add(ctx, NG_CODE_LIBNUMA_MISSING, in, NULL, NULL, 0,
                   "install the development symlink (libnuma-dev / numactl-devel) if the instance sets "
                   "_enable_NUMA_support",
                   "no unversioned libnuma.so on this host: Oracle's NUMA support falls back to off silently");
}

/* A configured instance that matches no process: the database is down or
 * the matcher has a typo. Either way its placement is unknown, not fine. */
static int rule_not_found(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_instance_config *ic = in->cfg;
        if (in->origin != NG_INST_CONFIGURED || in->n_pids > 0 ||
            !(ic->match_comm || ic->match_cmdline || ic->cgroup || ic->pidfile))
                return 0;
        char what[320];
        int n = snprintf(what, sizeof(what), "%s%s%s%s%s%s%s%s", ic->match_comm ? " match_comm=" : "",
                         ic->match_comm ? ic->match_comm : "", ic->match_cmdline ? " match_cmdline=" : "",
                         ic->match_cmdline ? ic->match_cmdline : "", ic->cgroup ? " cgroup=" : "",
                         ic->cgroup ? ic->cgroup : "", ic->pidfile ? " pidfile=" : "",
                         ic->pidfile ? ic->pidfile : "");
        if (n >= (int) sizeof(what))
                strcpy(what + sizeof(what) - 4, "...");
        return ng_rules_add(ctx, NG_CODE_INSTANCE_NOT_FOUND, in, NULL, NULL, 0,
                   "start the database, or correct the matcher (names are matched in full: argv[0] where "
                   "comm is its 15-character cut; see numaguard.conf(5))",
                   "no process matches%s: the instance is down or the matcher is wrong; its placement "
                   "is unknown", what);
}

/* Pages the kernel reports on a node the topology does not list: a tree
 * (or kernel) that disagrees with itself; never dropped silently. */
static int outside_topology(struct audit_ctx *ctx, const struct ng_segment *seg)
{
        for (size_t k = 0; k < seg->n_nodes; k++) {
                if (ng_snapshot_node(ctx->s, seg->nodes[k].node) || !seg->nodes[k].bytes)
                        continue;
                struct ng_bitmap nodes = {0};
                if (seg->nodes[k].node >= 0 && seg->nodes[k].node < NG_BITMAP_BITS)
                        ng_bitmap_set(&nodes, (unsigned) seg->nodes[k].node);
                int r = ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, NULL, seg->name, &nodes,
                            (double) seg->nodes[k].bytes,
                            "compare the node directories with node/online; the placement of this segment is "
                            "not audited against them",
                            "segment %s has %s on node %d, which is not in the topology", seg->name,
                            ng_rules_bytes_h(seg->nodes[k].bytes).s, seg->nodes[k].node);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Attached only by processes that may not speak for it (other users'
 * processes, which may have put a file of their own where the segment
 * was), and not asked of itself: where its pages sit is unknown. */
static int untrusted_only(struct audit_ctx *ctx, const struct ng_segment *seg)
{
        if (!ng_segment_untrusted_only(seg) || seg->placement_source != NG_SOURCE_NONE ||
            (seg->resident_bytes == 0 && seg->resident_source != NG_SOURCE_NONE) ||
            (!seg->bytes_unknown && seg->bytes < ctx->cfg->min_segment_size_bytes))
                return 0;
        char label[sizeof(seg->name) + 64], who[64], pids[80];
        ng_segment_label(seg, label, sizeof(label));
        return ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, NULL, label, NULL,
                            (double) seg->n_untrusted,
                            "its placement is read through a process of root or of its owner: one that maps it, "
                            "or its own file reached through such a process (numaguardctl(1), PLACEMENT)",
                            "%s is attached only by processes of other users than %s (%s): neither their maps "
                            "lines nor their page tables are taken for it, and its placement is unknown", label,
                            ng_segment_speakers_text(seg, who, sizeof(who)),
                            ng_segment_untrusted_text(seg, pids, sizeof(pids)));
}

/* A file that could not be used: a process's (/proc/PID) is the finding
 * of each instance the process is of, or of no instance (other_processes);
 * any other is the host's, which every instance's audit rests on. */
static int problem_finding(struct audit_ctx *ctx, const struct ng_problem *pb)
{
        static const char check[] = "check the file (a broken kernel, a damaged or edited tree); what depends on it "
                                    "is not audited";
        const char *advice = pb->advice[0] ? pb->advice : check;
        bool any = false;
        int r = 0;
        for (size_t i = 0; i < ctx->a->n_instances && pb->pid > 0 && r >= 0; i++) {
                const struct ng_instance *in = &ctx->a->instances[i];
                bool its = false;
                for (size_t k = 0; k < in->n_pids && !its; k++)
                        its = in->pids[k] == pb->pid;
                if (its) {
                        r = ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, in, NULL, NULL, 0, advice,
                                         "%s: %s", pb->path, pb->reason);
                        any = true;
                }
        }
        if (r < 0 || any)
                return r;
        r = ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, NULL, NULL, NULL, 0, advice, "%s: %s",
                         pb->path, pb->reason);
        if (r >= 0)
                ctx->a->findings[ctx->a->n_findings - 1].other_processes = pb->pid > 0;
        return r;
}

/* Files that could not be used and pages outside the topology; the
 * processes whose maps were refused are refusal.c's. */
static int rule_incomplete(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        int r = 0;
        for (size_t i = 0; i < s->n_problems && i < NG_MAX_PROBLEMS && r >= 0; i++)
                r = problem_finding(ctx, &s->problems[i]);
        if (r >= 0 && s->n_problems > NG_MAX_PROBLEMS)
                r = ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, NULL, NULL, NULL,
                        (double) (s->n_problems - NG_MAX_PROBLEMS), "check the files named above",
                        "%zu more files could not be used", s->n_problems - NG_MAX_PROBLEMS);
        for (size_t i = 0; i < ctx->a->n_segments && r >= 0; i++) {
                r = outside_topology(ctx, &ctx->a->segments[i]);
                if (r >= 0)
                        r = untrusted_only(ctx, &ctx->a->segments[i]);
        }
        return r < 0 ? r : ng_rule_refused(ctx);
}

/* The firmware's distance table against what numaguardctl probe measured,
 * or with no probe saved against the firmware's own HMAT. */
static int rule_hidden_hop(struct audit_ctx *ctx)
{
        _cleanup_free_ struct ng_hidden_hop *h = NULL;
        int n = ng_price_hidden_hops(ctx->s, &h), r = 0;
        for (int i = 0; i < n && r >= 0; i++) {
                struct ng_bitmap nodes = {0};
                ng_bitmap_set(&nodes, (unsigned) h[i].cpu_node);
                ng_bitmap_set(&nodes, (unsigned) h[i].near_node);
                ng_bitmap_set(&nodes, (unsigned) h[i].far_node);
                bool hmat = h[i].source == NG_PRICE_HMAT;
                const char *advice = hmat ? "price and place by latencies (the firmware's HMAT, better a probe: "
                                            "numaguardctl probe), not by the distance table"
                                          : "price and place by the measured latencies (numaguardctl probe): bind "
                                            "instances to the nearest nodes by measurement, not by the distance table";
                const char *verb = hmat ? "the firmware's HMAT gives" : "they measure";
                double ratio = h[i].far_ns / h[i].near_ns;
                if (h[i].far_slit == h[i].near_slit)
                        r = ng_rules_add(ctx, NG_CODE_HIDDEN_HOP, NULL, NULL, &nodes, ratio, advice,
                                "from node %d, nodes %d and %d share SLIT distance %d but %s %s ns and %s ns "
                                "(+%" PRIu64 "%%): node %d is a further hop the distance table hides",
                                h[i].cpu_node, h[i].near_node, h[i].far_node, h[i].near_slit, hmat ? verb : "measure",
                                ng_rules_num_h(h[i].near_ns).s, ng_rules_num_h(h[i].far_ns).s, ng_rules_pct(ratio - 1),
                                h[i].far_node);
                else
                        r = ng_rules_add(ctx, NG_CODE_HIDDEN_HOP, NULL, NULL, &nodes, ratio, advice,
                                "from node %d, the SLIT puts node %d (distance %d) nearer than node %d (distance "
                                "%d), but %s %s ns and %s ns (+%" PRIu64 "%%): the distance table has "
                                "the order wrong",
                                h[i].cpu_node, h[i].far_node, h[i].far_slit, h[i].near_node, h[i].near_slit, verb,
                                ng_rules_num_h(h[i].far_ns).s, ng_rules_num_h(h[i].near_ns).s, ng_rules_pct(ratio - 1));
        }
        return n < 0 ? n : r;
}

static int cmp_findings(const void *x, const void *y)
{
        const struct ng_finding *a = x, *b = y;
        if (a->severity != b->severity)
                return a->severity > b->severity ? -1 : 1;
        if (a->code != b->code)
                return a->code < b->code ? -1 : 1;
        int c = strcmp(a->instance, b->instance);
        return c ? c : strcmp(a->segment, b->segment);
}

int ng_audit_rules(struct audit_ctx *ctx)
{
        static int (*const per_instance[])(struct audit_ctx *, const struct ng_instance *) = {
                ng_rule_cyclops, ng_rule_remote, ng_rule_cpuset_drift, ng_rule_not_persistent, ng_rule_fallback, rule_libnuma,
                rule_not_found, ng_rule_slow_tier, ng_rule_thp_vendor, ng_rule_hugepage_not_permitted,
                ng_rule_next_start, ng_rule_segment_policy, ng_rule_policy_persistent,
                ng_rule_interleave_weights, ng_rule_out_of_reach,      /* after cyclops and remote */
        };
        static int (*const host[])(struct audit_ctx *) = {
                ng_rule_shortfall, ng_rule_idle, rule_pagetables, rule_pressure, rule_orphans, rule_host,
                rule_incomplete, ng_rule_hugepage_not_persistent,
                rule_hidden_hop, ng_rule_shmem_demotable, ng_rule_hugepage_overcommit, ng_rule_sigbus_risk,
                ng_rule_tiers_ignore_hmat, ng_rule_ambiguous,
        };
        int r = 0;
        for (size_t i = 0; i < ctx->a->n_instances && r >= 0; i++)
                for (size_t k = 0; k < ELEMENTSOF(per_instance) && r >= 0; k++)
                        r = per_instance[k](ctx, &ctx->a->instances[i]);
        for (size_t k = 0; k < ELEMENTSOF(host) && r >= 0; k++)
                r = host[k](ctx);
        if (r < 0)
                return r;
        if (ctx->a->n_findings > 1)
                qsort(ctx->a->findings, ctx->a->n_findings, sizeof(*ctx->a->findings), cmp_findings);
        return 0;
}

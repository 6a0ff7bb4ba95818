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
#include "ng-format.h"
#include "ng-units.h"

/* REMOTE_MEMORY: resident share on nodes without the instance's CPUs. */
#define REMOTE_SHARE_WARN 0.25
/* NODE_PRESSURE on small nodes: the floor is at most this share of the node. */
#define PRESSURE_NODE_SHARE 0.10

static int add(struct audit_ctx *ctx, enum ng_code code, enum ng_severity sev, const struct ng_instance *in,
               const char *segment, const struct ng_bitmap *nodes, double value, const char *advice,
               const char *fmt, ...) __attribute__((format(printf, 9, 10)));
static int add(struct audit_ctx *ctx, enum ng_code code, enum ng_severity sev, const struct ng_instance *in,
               const char *segment, const struct ng_bitmap *nodes, double value, const char *advice,
               const char *fmt, ...)
{
        struct ng_audit *a = ctx->a;
        if (a->n_findings % 16 == 0) {
                struct ng_finding *nv = realloc(a->findings, (a->n_findings + 16) * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                a->findings = nv;
        }
        struct ng_finding *f = &a->findings[a->n_findings++];
        memset(f, 0, sizeof(*f));
        f->code = code;
        f->severity = sev;
        f->value = value;
        if (in)
                snprintf(f->instance, sizeof(f->instance), "%s", in->name);
        if (segment)
                snprintf(f->segment, sizeof(f->segment), "%s", segment);
        if (nodes)
                f->nodes = *nodes;
        snprintf(f->advice, sizeof(f->advice), "%s", advice);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->message, sizeof(f->message), fmt, ap);
        va_end(ap);
        return 0;
}

/* Short human sizes for messages: "7.4 GiB". */
struct sz {
        char s[24];
};

static struct sz bytes_h(uint64_t bytes)
{
        struct sz r;
        ng_format_kib(bytes / 1024, r.s, sizeof(r.s));
        return r;
}

struct lst {
        char s[128];
};

static struct lst list_h(const struct ng_bitmap *b)
{
        struct lst r;
        if (ng_bitmap_format_list(b, r.s, sizeof(r.s)) >= (int) sizeof(r.s))
                strcpy(r.s + sizeof(r.s) - 4, "...");
        return r;
}

static uint64_t pct(double f)
{
        return (uint64_t) (f * 100 + 0.5);
}

/* "1", "1.5", "3.98": no trailing zeros. */
static struct sz num_h(double v)
{
        struct sz r;
        snprintf(r.s, sizeof(r.s), "%.2f", v);
        char *e = r.s + strlen(r.s);
        while (e > r.s && e[-1] == '0')
                *--e = '\0';
        if (e > r.s && e[-1] == '.')
                e[-1] = '\0';
        return r;
}

struct price_txt {
        char s[200];
};

/* CYCLOPS: mostly bandwidth and contention. */
static struct price_txt bandwidth_h(const struct ng_price *p)
{
        struct price_txt r = { "" };
        if (p->source == NG_PRICE_NONE)
                return r;
        if (p->source == NG_PRICE_MEASURED)
                snprintf(r.s, sizeof(r.s), "; bandwidth capped at %s of %u nodes (%s of %s GB/s read, measured), "
                         "%" PRIu64 "%% of accesses remote",
                         num_h(ng_price_ceiling_nodes(p)).s, p->interleave_nodes,
                         num_h(p->bandwidth_ceiling / 1000).s, num_h(p->interleaved_bandwidth_ceiling / 1000).s,
                         pct(p->remote_access_ratio));
        else
                snprintf(r.s, sizeof(r.s), "; bandwidth capped at %s of %u nodes (from the SLIT), %" PRIu64
                         "%% of accesses remote",
                         num_h(ng_price_ceiling_nodes(p)).s, p->interleave_nodes, pct(p->remote_access_ratio));
        return r;
}

/* REMOTE_MEMORY: mostly latency. */
static struct price_txt latency_h(const struct ng_price *p)
{
        struct price_txt r = { "" };
        double up = ng_price_latency_pct(p);
        if (p->source == NG_PRICE_NONE || up != up)
                return r;
        char tail[96];
        if (p->source == NG_PRICE_MEASURED)
                snprintf(tail, sizeof(tail), "%s vs %s ns, measured", num_h(p->expected_latency).s,
                         num_h(p->local_latency).s);
        else
                snprintf(tail, sizeof(tail), "distance %s vs %s, from the SLIT", num_h(p->expected_latency).s,
                         num_h(p->local_latency).s);
        snprintf(r.s, sizeof(r.s), "; %+.0f %% average memory latency against local (%s)", up, tail);
        return r;
}

static bool single_node(const struct ng_bitmap *b, int node)
{
        return ng_bitmap_count(b) == 1 && ng_bitmap_test(b, (unsigned) node);
}

/* ---- placement ---- */

static int rule_cyclops(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (ctx->s->topo.n_nodes < 2 || in->resident_bytes == 0 ||
            in->resident_bytes < ctx->cfg->min_segment_size_bytes || ng_bitmap_count(&in->cpu_nodes) < 2)
                return 0;
        int top = -1;
        uint64_t top_bytes = 0;
        for (size_t i = 0; i < in->n_nodes; i++)
                if (in->nodes[i].bytes > top_bytes) {
                        top_bytes = in->nodes[i].bytes;
                        top = in->nodes[i].node;
                }
        double share = (double) top_bytes / (double) in->resident_bytes;
        if (top < 0 || share < ctx->cfg->cyclops_fraction)
                return 0;
        /* Deliberately bound to that one node: not a cyclops. */
        if (in->cfg->policy == NG_POLICY_BIND && single_node(&in->cfg->nodes, top))
                return 0;
        struct ng_bitmap nodes = {0};
        ng_bitmap_set(&nodes, (unsigned) top);
        return add(ctx, NG_CODE_CYCLOPS, NG_SEV_WARNING, in, NULL, &nodes, share,
                   "interleave the shared memory over the instance's nodes (start it under numactl "
                   "--interleave, enable the database's NUMA support, or numaguardctl rebalance)",
                   "%" PRIu64 "%% of %s resident shared memory sits on node %d (%s) while the instance's "
                   "CPUs %s span nodes %s%s",
                   pct(share), bytes_h(in->resident_bytes).s, top, bytes_h(top_bytes).s, list_h(&in->cpus).s,
                   list_h(&in->cpu_nodes).s, bandwidth_h(&in->price).s);
}

static bool intended_remote(const struct ng_instance *in, const struct ng_bitmap *remote)
{
        /* An interleave or bind policy that names those nodes is a choice. */
        if (in->cfg->policy == NG_POLICY_LOCAL || ng_bitmap_empty(&in->cfg->nodes))
                return false;
        struct ng_bitmap r = *remote;
        ng_bitmap_and(&r, &in->cfg->nodes);
        return ng_bitmap_equal(&r, remote);
}

static int rule_remote(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        if (s->topo.n_nodes < 2 || ng_bitmap_empty(&in->cpu_nodes) || ng_bitmap_empty(&in->mems))
                return 0;
        struct ng_bitmap local = in->mems, allowed_remote = in->mems, sits_remote = {0};
        ng_bitmap_and(&local, &in->cpu_nodes);
        /* Allowed on CPU-bearing nodes that hold none of its CPUs. Memory-only
         * nodes (CXL tiers) are allowed by default and only count when
         * memory actually sits there. */
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                int id = s->topo.nodes[i].id;
                if (ng_bitmap_test(&in->cpu_nodes, (unsigned) id) || ng_bitmap_empty(&s->topo.nodes[i].cpus))
                        allowed_remote.w[id / 64] &= ~(UINT64_C(1) << (id % 64));
        }
        uint64_t remote_bytes = 0;
        for (size_t i = 0; i < in->n_nodes; i++)
                if (!ng_bitmap_test(&in->cpu_nodes, (unsigned) in->nodes[i].node) && in->nodes[i].bytes) {
                        remote_bytes += in->nodes[i].bytes;
                        ng_bitmap_set(&sits_remote, (unsigned) in->nodes[i].node);
                }
        double share = in->resident_bytes ? (double) remote_bytes / (double) in->resident_bytes : 0;
        const char *advice = "put the instance's memory on the nodes of its CPUs: fix cpuset.mems "
                             "(numaguardctl cpuset apply) or the numactl binding it starts under";

        if (ng_bitmap_empty(&local)) {
                int from = ng_bitmap_next(&in->cpu_nodes, 0), to = ng_bitmap_next(&in->mems, 0);
                return add(ctx, NG_CODE_REMOTE_MEMORY, NG_SEV_CRITICAL, in, NULL, &in->mems, 1.0, advice,
                           "memory is bound to node%s %s but the CPUs %s are on node%s %s (distance %d): every "
                           "access is remote%s",
                           ng_bitmap_count(&in->mems) == 1 ? "" : "s", list_h(&in->mems).s, list_h(&in->cpus).s,
                           ng_bitmap_count(&in->cpu_nodes) == 1 ? "" : "s", list_h(&in->cpu_nodes).s,
                           ng_snapshot_distance(s, from, to), latency_h(&in->price).s);
        }
        if (share >= REMOTE_SHARE_WARN && !intended_remote(in, &sits_remote))
                return add(ctx, NG_CODE_REMOTE_MEMORY, NG_SEV_WARNING, in, NULL, &sits_remote, share, advice,
                           "%" PRIu64 "%% of %s resident shared memory (%s) sits on node%s %s, which hold%s none "
                           "of the instance's CPUs %s (nodes %s)%s",
                           pct(share), bytes_h(in->resident_bytes).s, bytes_h(remote_bytes).s,
                           ng_bitmap_count(&sits_remote) == 1 ? "" : "s", list_h(&sits_remote).s,
                           ng_bitmap_count(&sits_remote) == 1 ? "s" : "", list_h(&in->cpus).s,
                           list_h(&in->cpu_nodes).s, latency_h(&in->price).s);
        if (!ng_bitmap_empty(&allowed_remote) && !intended_remote(in, &allowed_remote))
                return add(ctx, NG_CODE_REMOTE_MEMORY, NG_SEV_WARNING, in, NULL, &allowed_remote, 0, advice,
                           "memory may be allocated on node%s %s (allowed nodes %s), which hold%s none of the "
                           "instance's CPUs %s (nodes %s)",
                           ng_bitmap_count(&allowed_remote) == 1 ? "" : "s", list_h(&allowed_remote).s,
                           list_h(&in->mems).s, ng_bitmap_count(&allowed_remote) == 1 ? "s" : "",
                           list_h(&in->cpus).s, list_h(&in->cpu_nodes).s);
        return 0;
}

static int rule_cpuset_drift(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_instance_config *ic = in->cfg;
        if (in->origin != NG_INST_CONFIGURED || ng_bitmap_empty(&ic->nodes) || in->n_pids == 0)
                return 0;
        const struct ng_cgroup *cg = in->cgroup ? ng_snapshot_cgroup(ctx->s, in->cgroup) : NULL;
        struct ng_bitmap mems = in->mems, cpu_nodes = in->cpu_nodes;
        if (cg && cg->has_cpuset)
                mems = ng_bitmap_empty(&cg->effective_mems) ? cg->mems : cg->effective_mems;
        bool mems_drift = !ng_bitmap_equal(&mems, &ic->nodes);
        /* local and bind also want the CPUs on those nodes. */
        struct ng_bitmap outside = cpu_nodes;
        for (int id = ng_bitmap_next(&ic->nodes, 0); id >= 0; id = ng_bitmap_next(&ic->nodes, id + 1))
                outside.w[id / 64] &= ~(UINT64_C(1) << (id % 64));
        bool cpus_drift = ic->policy != NG_POLICY_INTERLEAVE && !ng_bitmap_empty(&outside);
        if (!mems_drift && !cpus_drift)
                return 0;
        return add(ctx, NG_CODE_CPUSET_DRIFT, NG_SEV_WARNING, in, NULL, &ic->nodes, 0,
                   "set the cgroup's cpuset.mems/cpuset.cpus to the configured nodes (numaguardctl cpuset apply)",
                   "%s%s has memory nodes %s and CPUs on nodes %s; the configured policy %s wants nodes %s",
                   cg ? "cpuset " : "processes", cg ? cg->path : "", list_h(&mems).s, list_h(&cpu_nodes).s,
                   ic->policy == NG_POLICY_BIND ? "bind" : ic->policy == NG_POLICY_INTERLEAVE ? "interleave" : "local",
                   list_h(&ic->nodes).s);
}

/* What the owner writes back for one of the two sets: its declared value,
 * or on systemd "" (the parent's) when the property is unset; false when it
 * leaves the set alone (a cgconfig group without that key). */
static bool owner_restores(const struct ng_owner *ow, bool mems, struct ng_bitmap *ret)
{
        bool has = mems ? ow->has_mems : ow->has_cpus;
        if (!has && ow->kind != NG_OWNER_SYSTEMD)
                return false;
        *ret = has ? (mems ? ow->mems : ow->cpus) : (struct ng_bitmap) {0};
        return true;
}

/* "cpuset.mems 6, its owner restores 0" for the sets that differ. */
static void describe_restore(const struct ng_owner *ow, const struct ng_cgroup *cg, bool mems, char *buf, size_t size)
{
        struct ng_bitmap want;
        const struct ng_bitmap *live = mems ? &cg->mems : &cg->cpus;
        size_t n = strlen(buf);
        if (!owner_restores(ow, mems, &want) || ng_bitmap_equal(&want, live))
                return;
        const char *prop = ow->kind == NG_OWNER_SYSTEMD ? (mems ? "AllowedMemoryNodes=" : "AllowedCPUs=")
                                                        : (mems ? "cpuset.mems = " : "cpuset.cpus = ");
        snprintf(buf + n, size - n, "%scpuset.%s is %s, %s%s%s", n ? "; " : "", mems ? "mems" : "cpus",
                 ng_bitmap_empty(live) ? "empty (the parent's)" : list_h(live).s, prop,
                 ng_bitmap_empty(&want) ? "" : list_h(&want).s, ng_bitmap_empty(&want) ? " (unset: the parent's)" : "");
}

/* The owner puts its own values back (systemd on daemon-reload or a restart
 * of the unit, cgconfig at boot): a live cpuset that differs is undone. */
static int rule_not_persistent(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_owner *ow = in->owner;
        const struct ng_cgroup *cg = in->cgroup ? ng_snapshot_cgroup(ctx->s, in->cgroup) : NULL;
        if (!ow || !cg || !cg->has_cpuset || !ow->known ||
            (ow->kind != NG_OWNER_SYSTEMD && ow->kind != NG_OWNER_CGCONFIG))
                return 0;
        char diff[384] = "";
        describe_restore(ow, cg, true, diff, sizeof(diff));
        describe_restore(ow, cg, false, diff, sizeof(diff));
        if (!diff[0])
                return 0;
        bool sd = ow->kind == NG_OWNER_SYSTEMD;
        return add(ctx, NG_CODE_CPUSET_NOT_PERSISTENT, NG_SEV_WARNING, in, NULL, &cg->mems, 1,
                   sd ? "write through the unit (numaguardctl cpuset apply, or systemctl set-property UNIT "
                        "AllowedCPUs=... AllowedMemoryNodes=...)"
                      : "write the group's values in its cgconfig file too (numaguardctl cpuset apply)",
                   "cpuset %s differs from what its owner %s %s (%s) restores%s: %s", cg->path,
                   sd ? "systemd unit" : "cgconfig group", ow->name, ow->source,
                   sd ? " on daemon-reload or a restart of the unit" : " at boot", diff);
}

/* ---- hugepages ---- */

/* A pool the boot configuration sets otherwise than it is now: a reboot
 * changes it. Pools no boot source mentions (set by sysctl, scripts) are
 * not compared: numaguard cannot tell what boot gives them. */
static int rule_hugepage_not_persistent(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        int r = 0;
        for (size_t i = 0; i < s->topo.n_nodes && r >= 0; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                for (size_t k = 0; k < nd->n_pools && r >= 0; k++) {
                        const struct ng_hugepool *hp = &nd->pools[k];
                        const struct ng_boot_pool *bp = ng_boot_pool_find(s->boot_pools, s->n_boot_pools, nd->id,
                                                                          hp->page_kib);
                        if (!bp || bp->pages == hp->nr_pages)
                                continue;
                        struct ng_bitmap node = {0};
                        ng_bitmap_set(&node, (unsigned) nd->id);
                        char where[128];
                        if (bp->from_file)
                                snprintf(where, sizeof(where), "%s line %u", NG_HUGEPAGES_BOOT_FILE, bp->line);
                        else
                                snprintf(where, sizeof(where), "the kernel command line");
                        r = add(ctx, NG_CODE_HUGEPAGE_NOT_PERSISTENT, NG_SEV_WARNING, NULL, NULL, &node,
                                (double) hp->nr_pages,
                                "record the pools for boot (numaguardctl hugepages apply --persist), or set the "
                                "pool back",
                                "node %d has %" PRIu64 " hugepages of %s; the boot configuration (%s) gives it %"
                                PRIu64 ": a reboot changes the pool",
                                nd->id, hp->nr_pages, bytes_h(hp->page_kib * 1024).s, where, bp->pages);
                }
        }
        return r;
}

static const struct ng_hugepool *default_pool(const struct ng_snapshot *s)
{
        uint64_t kib = s->has_meminfo ? ng_meminfo_value(&s->meminfo, "Hugepagesize") : 0;
        for (size_t i = 0; i < s->n_pools; i++)
                if (s->pools[i].page_kib == (kib ? kib : 2048))
                        return &s->pools[i];
        return s->n_pools ? &s->pools[0] : NULL;
}

static uint64_t pool_available(const struct ng_hugepool *hp)
{
        return hp->free_pages > hp->resv_pages ? hp->free_pages - hp->resv_pages : 0;
}

static bool can_use_hugepages(const struct ng_segment *seg)
{
        /* /dev/shm files (Oracle AMM) cannot be backed by hugetlb pages. */
        return seg->kind == NG_SEG_SYSV || seg->kind == NG_SEG_ANON_SHARED;
}

static bool in_small_pages(const struct ng_segment *seg, uint64_t min_bytes)
{
        return can_use_hugepages(seg) && seg->page_kib == 4 && seg->bytes >= min_bytes;
}

static int rule_fallback(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_hugepool *hp = default_pool(ctx->s);
        bool required = in->cfg->hugepages == NG_HUGEPAGES_REQUIRED;
        if (in->cfg->hugepages == NG_HUGEPAGES_OFF || (!required && (!hp || hp->nr_pages == 0)))
                return 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                if (!in_small_pages(seg, ctx->cfg->min_segment_size_bytes))
                        continue;
                uint64_t page_bytes = ng_kib_bytes_sat(hp ? hp->page_kib : 2048);
                uint64_t need = (seg->bytes + page_bytes - 1) / page_bytes;
                char label[128];
                ng_segment_label(seg, label, sizeof(label));
                int r = add(ctx, NG_CODE_HUGEPAGE_FALLBACK, required ? NG_SEV_CRITICAL : NG_SEV_WARNING, in,
                            label, NULL, (double) seg->bytes,
                            "size the pool to the whole segment plus a margin (numaguardctl hugepages plan) "
                            "and restart the instance; set the database to refuse 4K pages",
                            "%s (%s) sits in 4K pages although the %s pool has %" PRIu64 " pages (%" PRIu64
                            " free, %" PRIu64 " reserved); it needs %" PRIu64 " pages",
                            label, bytes_h(seg->bytes).s, bytes_h(page_bytes).s, hp ? hp->nr_pages : 0,
                            hp ? hp->free_pages : 0, hp ? hp->resv_pages : 0, need);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int rule_idle(struct audit_ctx *ctx)
{
        uint64_t small_bytes = 0, n_small = 0;
        for (size_t i = 0; i < ctx->a->n_segments; i++)
                if (in_small_pages(&ctx->a->segments[i], ctx->cfg->min_segment_size_bytes)) {
                        small_bytes += ctx->a->segments[i].bytes;
                        n_small++;
                }
        if (n_small == 0)
                return 0;
        for (size_t i = 0; i < ctx->s->n_pools; i++) {
                const struct ng_hugepool *hp = &ctx->s->pools[i];
                uint64_t idle = pool_available(hp);
                if (idle == 0)
                        continue;
                int r = add(ctx, NG_CODE_HUGEPAGE_IDLE, NG_SEV_WARNING, NULL, NULL, NULL, (double) idle,
                            "the pool is sized but unused: find why the database fell back to 4K pages "
                            "(pool one page short, permissions, memlock) or release the pages",
                            "%" PRIu64 " of %" PRIu64 " %s hugepages (%s) are free and unreserved while %s of "
                            "shared memory in %" PRIu64 " segment%s sits in 4K pages",
                            idle, hp->nr_pages, bytes_h(ng_kib_bytes_sat(hp->page_kib)).s, bytes_h(ng_kib_bytes_sat(ng_mul_sat(idle, hp->page_kib))).s,
                            bytes_h(small_bytes).s, n_small, n_small == 1 ? "" : "s");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Bytes the instance wants in hugepages and does not have there yet. */
static uint64_t missing_bytes(const struct audit_ctx *ctx, const struct ng_instance *in)
{
        uint64_t want = 0, have = 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                if (seg->page_kib > 4)
                        have += seg->bytes;
                else if (in_small_pages(seg, ctx->cfg->min_segment_size_bytes))
                        want += seg->bytes;
        }
        want += have;
        if (in->cfg->expected_size_bytes > want)
                want = in->cfg->expected_size_bytes;
        return want > have ? want - have : 0;
}

static uint64_t node_free_pages(const struct ng_snapshot *s, const struct ng_bitmap *nodes, uint64_t page_kib)
{
        uint64_t sum = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (!ng_bitmap_test(nodes, (unsigned) nd->id))
                        continue;
                for (size_t k = 0; k < nd->n_pools; k++)
                        if (nd->pools[k].page_kib == page_kib)
                                sum += nd->pools[k].free_pages;
        }
        return sum;
}

/* Demand against supply, globally and on the nodes the instance may use
 * (reservations are global: a big enough pool can still be empty on the
 * instance's nodes, and that ends in SIGBUS). Instances draw on the pool
 * in order, so two instances cannot both count the same free pages. */
static int rule_shortfall(struct audit_ctx *ctx)
{
        const struct ng_hugepool *hp = default_pool(ctx->s);
        uint64_t remaining = hp ? pool_available(hp) : 0, page_bytes = ng_kib_bytes_sat(hp ? hp->page_kib : 2048);
        for (size_t i = 0; i < ctx->a->n_instances; i++) {
                const struct ng_instance *in = &ctx->a->instances[i];
                bool required = in->cfg->hugepages == NG_HUGEPAGES_REQUIRED;
                bool in_play = required || in->cfg->expected_size_bytes || (hp && hp->nr_pages);
                if (in->cfg->hugepages == NG_HUGEPAGES_OFF || !in_play)
                        continue;
                uint64_t need = (missing_bytes(ctx, in) + page_bytes - 1) / page_bytes;
                if (need == 0)
                        continue;
                enum ng_severity sev = required ? NG_SEV_CRITICAL : NG_SEV_WARNING;
                const char *advice = "reserve the missing pages per node (numaguardctl hugepages plan / apply), "
                                     "at boot if the host is fragmented";
                int r = 0;
                if (need > remaining)
                        r = add(ctx, NG_CODE_HUGEPAGE_SHORTFALL, sev, in, NULL, NULL, (double) (need - remaining),
                                advice, "needs %" PRIu64 " more %s pages (%s) but the pool has %" PRIu64
                                " free and unreserved of %" PRIu64,
                                need, bytes_h(page_bytes).s, bytes_h(ng_mul_sat(need, page_bytes)).s, remaining,
                                hp ? hp->nr_pages : 0);
                else {
                        struct ng_bitmap nodes = ng_bitmap_empty(&in->cfg->nodes) ? in->mems : in->cfg->nodes;
                        uint64_t on_nodes = node_free_pages(ctx->s, &nodes, page_bytes / 1024);
                        if (on_nodes < need && !ng_bitmap_empty(&nodes))
                                r = add(ctx, NG_CODE_HUGEPAGE_NODE_SHORTFALL, sev, in, NULL, &nodes,
                                        (double) (need - on_nodes), advice,
                                        "needs %" PRIu64 " %s pages on its node%s %s, which have %" PRIu64
                                        " free; the other %" PRIu64 " free pages are on nodes it may not use",
                                        need, bytes_h(page_bytes).s, ng_bitmap_count(&nodes) == 1 ? "" : "s",
                                        list_h(&nodes).s, on_nodes, remaining - on_nodes);
                }
                if (r < 0)
                        return r;
                remaining -= need < remaining ? need : remaining;
        }
        return 0;
}

/* ---- memory ---- */

/* Page tables of 4 KiB mappings cost 8 bytes per page per process; one
 * 2 MiB page needs one 8-byte entry instead of 512. */
static int rule_pagetables(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        uint64_t total_kib = ng_meminfo_value(&s->meminfo, "MemTotal"), pt_kib = ng_meminfo_value(&s->meminfo, "PageTables");
        if (!s->has_meminfo || total_kib == 0)
                return 0;
        double limit = ctx->cfg->pagetable_share;
        const char *advice = "back the shared segment with hugepages: page tables shrink about 512-fold";
        for (size_t i = 0; i < ctx->a->n_instances; i++) {
                const struct ng_instance *in = &ctx->a->instances[i];
                double share = (double) in->vm_pte_kib / (double) total_kib;
                if (share < limit)
                        continue;
                int r = add(ctx, NG_CODE_PAGETABLE_BLOAT, NG_SEV_WARNING, in, NULL, NULL, share, advice,
                            "the instance's %zu processes hold %s of page tables (%" PRIu64 "%% of memory); with "
                            "2M pages the shared part would need about %s",
                            in->n_pids, bytes_h(ng_kib_bytes_sat(in->vm_pte_kib)).s, pct(share), bytes_h(ng_mul_sat(in->vm_pte_kib, 2)).s);
                if (r < 0)
                        return r;
        }
        double share = (double) pt_kib / (double) total_kib;
        if (share < limit)
                return 0;
        return add(ctx, NG_CODE_PAGETABLE_BLOAT, NG_SEV_WARNING, NULL, NULL, NULL, share, advice,
                   "page tables take %s, %" PRIu64 "%% of %s memory (threshold %" PRIu64 "%%)",
                   bytes_h(ng_kib_bytes_sat(pt_kib)).s, pct(share), bytes_h(ng_kib_bytes_sat(total_kib)).s, pct(limit));
}

static int rule_pressure(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                /* Unknown memory (AUDIT_INCOMPLETE says why) is no pressure. */
                if (!nd->has_meminfo)
                        continue;
                uint64_t total = ng_kib_bytes_sat(ng_meminfo_value(&nd->meminfo, "MemTotal"));
                uint64_t free_b = ng_kib_bytes_sat(ng_meminfo_value(&nd->meminfo, "MemFree"));
                if (total == 0)
                        continue;
                uint64_t floor = ng_node_free_floor(ctx->cfg->node_free_floor_bytes, nd);
                if (floor > (uint64_t) (total * PRESSURE_NODE_SHARE))
                        floor = (uint64_t) (total * PRESSURE_NODE_SHARE);
                if (free_b >= floor)
                        continue;
                struct ng_bitmap nodes = {0};
                ng_bitmap_set(&nodes, (unsigned) nd->id);
                int r = add(ctx, NG_CODE_NODE_PRESSURE, free_b < floor / 4 ? NG_SEV_CRITICAL : NG_SEV_WARNING, NULL,
                            NULL, &nodes, (double) free_b,
                            "find what filled the node (a cyclops segment, a bound instance) and spread it; "
                            "allocations there now fall back to remote nodes or reclaim",
                            "node %d has %s free of %s, below its floor of %s (shmem %s, page tables %s)",
                            nd->id, bytes_h(free_b).s, bytes_h(total).s, bytes_h(floor).s,
                            bytes_h(ng_kib_bytes_sat(ng_meminfo_value(&nd->meminfo, "Shmem"))).s,
                            bytes_h(ng_kib_bytes_sat(ng_meminfo_value(&nd->meminfo, "PageTables"))).s);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int rule_orphans(struct audit_ctx *ctx)
{
        for (size_t i = 0; i < ctx->a->n_segments; i++) {
                const struct ng_segment *seg = &ctx->a->segments[i];
                char label[128];
                ng_segment_label(seg, label, sizeof(label));
                int r = 0;
                if (seg->kind == NG_SEG_SYSV && seg->dest && seg->nattch > 0)
                        r = add(ctx, NG_CODE_ORPHAN_SEGMENT, NG_SEV_INFO, NULL, label, NULL, (double) seg->bytes,
                                "the memory is freed when the last process detaches; restart those processes if "
                                "it must go now",
                                "%s (%s) was removed but %" PRIu64 " process%s still attached",
                                label, bytes_h(seg->bytes).s, seg->nattch,
                                seg->nattch == 1 ? " is" : "es are");
                else if (seg->bytes < ctx->cfg->min_segment_size_bytes || seg->kind == NG_SEG_PRIVATE)
                        continue;
                else if (seg->kind == NG_SEG_SYSV && seg->nattch == 0)
                        r = add(ctx, NG_CODE_ORPHAN_SEGMENT, NG_SEV_WARNING, NULL, label, NULL,
                                (double) seg->bytes,
                                "check that no instance will attach it again, then remove it with ipcrm -m "
                                "(ipcrm exits 0 even for a segment that is already gone)",
                                "%s (%s, %s resident) has no process attached",
                                label, bytes_h(seg->bytes).s, bytes_h(seg->resident_bytes).s);
                else if (seg->kind == NG_SEG_FILE && seg->n_pids == 0)
                        r = add(ctx, NG_CODE_ORPHAN_SEGMENT, NG_SEV_WARNING, NULL, label, NULL,
                                (double) seg->bytes,
                                "a file left by an instance that stopped uncleanly: remove it once no instance "
                                "will map it again",
                                "%s (%s) is mapped by no process", seg->name, bytes_h(seg->bytes).s);
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
        if (s->topo.n_nodes >= 2 && s->knobs.numa_balancing > 0)
                r = add(ctx, NG_CODE_AUTONUMA_ON, NG_SEV_INFO, NULL, NULL, NULL, s->knobs.numa_balancing,
                        "database tuning profiles set kernel.numa_balancing=0; place shared memory deliberately",
                        "kernel.numa_balancing=%d: automatic NUMA balancing skips hugetlb mappings and migrates "
                        "4 KiB shared pages toward whichever process touched them last",
                        s->knobs.numa_balancing);
        for (size_t i = 0; i < s->n_procs && r >= 0; i++)
                if (!strcmp(s->procs[i].name, "numad"))
                        r = add(ctx, NG_CODE_NUMAD_RUNNING, NG_SEV_INFO, NULL, NULL, NULL, s->procs[i].pid,
                                "exclude database processes from numad (numad -x PID) or stop it",
                                "numad (pid %d) moves whole processes between nodes and drags shared pages "
                                "after them", (int) s->procs[i].pid);
        return r;
}

static bool is_oracle(const struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (!strcmp(in->type, "oracle"))
                return true;
        const struct ng_proc *pr = ng_snapshot_proc(ctx->s, in->main_pid);
        return in->origin == NG_INST_CONFIGURED && pr && !strncmp(pr->name, "ora_", 4);
}

/* Oracle dlopen()s the unversioned libnuma.so for _enable_NUMA_support and
 * turns NUMA support off without a word when it is missing. */
static int rule_libnuma(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (ctx->s->libnuma_so != 0 || ctx->s->topo.n_nodes < 2 || !is_oracle(ctx, in))
                return 0;
        return add(ctx, NG_CODE_LIBNUMA_MISSING, NG_SEV_INFO, in, NULL, NULL, 0,
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
        return add(ctx, NG_CODE_INSTANCE_NOT_FOUND, NG_SEV_WARNING, in, NULL, NULL, 0,
                   "start the database, or correct the matcher (names are matched in full: argv[0] where "
                   "comm is its 15-character cut; see numaguard.conf(5))",
                   "no process matches%s: the instance is down or the matcher is wrong; its placement "
                   "is unknown", what);
}

static int cmp_uid(const void *x, const void *y)
{
        uint32_t a = *(const uint32_t *) x, b = *(const uint32_t *) y;
        return a < b ? -1 : a > b;
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
                int r = add(ctx, NG_CODE_AUDIT_INCOMPLETE, NG_SEV_WARNING, NULL, seg->name, &nodes,
                            (double) seg->nodes[k].bytes,
                            "compare the node directories with node/online; the placement of this segment is "
                            "not audited against them",
                            "segment %s has %s on node %d, which is not in the topology", seg->name,
                            bytes_h(seg->nodes[k].bytes).s, seg->nodes[k].node);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Processes whose maps could not be read (another user's, no
 * CAP_SYS_PTRACE): the segments they attach are unknown, so no all-clear. */
static int rule_incomplete(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        uint32_t uids[8];
        size_t n = 0, n_uids = 0, more = 0;
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct ng_proc *pr = &s->procs[i];
                if (!pr->maps_errno)
                        continue;
                n++;
                bool seen = false;
                for (size_t k = 0; k < n_uids; k++)
                        seen |= uids[k] == pr->status.uid;
                if (!seen && n_uids < sizeof(uids) / sizeof(uids[0]))
                        uids[n_uids++] = pr->status.uid;
                else if (!seen)
                        more++;
        }
        int r = 0;
        for (size_t i = 0; i < s->n_problems && i < NG_MAX_PROBLEMS && r >= 0; i++)
                r = add(ctx, NG_CODE_AUDIT_INCOMPLETE, NG_SEV_WARNING, NULL, NULL, NULL, 0,
                        "check the file (a broken kernel, a damaged or edited tree); what depends on it is not "
                        "audited", "%s: %s", s->problems[i].path, s->problems[i].reason);
        if (r >= 0 && s->n_problems > NG_MAX_PROBLEMS)
                r = add(ctx, NG_CODE_AUDIT_INCOMPLETE, NG_SEV_WARNING, NULL, NULL, NULL,
                        (double) (s->n_problems - NG_MAX_PROBLEMS), "check the files named above",
                        "%zu more files could not be used", s->n_problems - NG_MAX_PROBLEMS);
        for (size_t i = 0; i < ctx->a->n_segments && r >= 0; i++)
                r = outside_topology(ctx, &ctx->a->segments[i]);
        if (r < 0 || !n)
                return r;
        qsort(uids, n_uids, sizeof(uids[0]), cmp_uid);
        char who[160] = "";
        size_t w = 0;
        for (size_t k = 0; k < n_uids && w < sizeof(who); k++)
                w += (size_t) snprintf(who + w, sizeof(who) - w, "%s%" PRIu32, k ? ", " : "", uids[k]);
        if (more && w < sizeof(who))
                snprintf(who + w, sizeof(who) - w, " and %zu more", more);
        return add(ctx, NG_CODE_AUDIT_INCOMPLETE, NG_SEV_WARNING, NULL, NULL, NULL, (double) n,
                   "run as root (or with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, as numaguardd's unit does)",
                   "could not read the memory maps of %zu process%s (permission denied), of uid %s: the "
                   "segments they attach and their placement are unknown", n, n == 1 ? "" : "es", who);
}

/* The firmware's distance table against what numaguardctl probe measured. */
static int rule_hidden_hop(struct audit_ctx *ctx)
{
        struct ng_hidden_hop *h;
        int n = ng_price_hidden_hops(ctx->s, &h), r = 0;
        for (int i = 0; i < n && r >= 0; i++) {
                struct ng_bitmap nodes = {0};
                ng_bitmap_set(&nodes, (unsigned) h[i].cpu_node);
                ng_bitmap_set(&nodes, (unsigned) h[i].near_node);
                ng_bitmap_set(&nodes, (unsigned) h[i].far_node);
                const char *advice = "price and place by the measured latencies (numaguardctl probe): bind "
                                     "instances to the nearest nodes by measurement, not by the distance table";
                double ratio = h[i].far_ns / h[i].near_ns;
                if (h[i].far_slit == h[i].near_slit)
                        r = add(ctx, NG_CODE_HIDDEN_HOP, NG_SEV_INFO, NULL, NULL, &nodes, ratio, advice,
                                "from node %d, nodes %d and %d share SLIT distance %d but measure %s ns and %s ns "
                                "(+%" PRIu64 "%%): node %d is a further hop the distance table hides",
                                h[i].cpu_node, h[i].near_node, h[i].far_node, h[i].near_slit,
                                num_h(h[i].near_ns).s, num_h(h[i].far_ns).s, pct(ratio - 1), h[i].far_node);
                else
                        r = add(ctx, NG_CODE_HIDDEN_HOP, NG_SEV_INFO, NULL, NULL, &nodes, ratio, advice,
                                "from node %d, the SLIT puts node %d (distance %d) nearer than node %d (distance "
                                "%d), but they measure %s ns and %s ns (+%" PRIu64 "%%): the distance table has "
                                "the order wrong",
                                h[i].cpu_node, h[i].far_node, h[i].far_slit, h[i].near_node, h[i].near_slit,
                                num_h(h[i].far_ns).s, num_h(h[i].near_ns).s, pct(ratio - 1));
        }
        free(h);
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
                rule_cyclops, rule_remote, rule_cpuset_drift, rule_not_persistent, rule_fallback, rule_libnuma,
                rule_not_found,
        };
        static int (*const host[])(struct audit_ctx *) = {
                rule_shortfall, rule_idle, rule_pagetables, rule_pressure, rule_orphans, rule_host,
                rule_incomplete, rule_hugepage_not_persistent,
                rule_hidden_hop,
        };
        int r = 0;
        for (size_t i = 0; i < ctx->a->n_instances && r >= 0; i++)
                for (size_t k = 0; k < sizeof(per_instance) / sizeof(per_instance[0]) && r >= 0; k++)
                        r = per_instance[k](ctx, &ctx->a->instances[i]);
        for (size_t k = 0; k < sizeof(host) / sizeof(host[0]) && r >= 0; k++)
                r = host[k](ctx);
        if (r < 0)
                return r;
        if (ctx->a->n_findings > 1)
                qsort(ctx->a->findings, ctx->a->n_findings, sizeof(*ctx->a->findings), cmp_findings);
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze, the rules of huge pages: pools that boot sets otherwise, segments
 * that fell back to small pages, idle pools, shortfalls.
 * docs/ARCHITECTURE.md, "Why it exists", gives the facts behind every
 * threshold. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-owner.h"
#include "audit-internal.h"
#include "engine.h"
#include "ng-format.h"
#include "units.h"
#include "rules-internal.h"

/* ---- hugepages ---- */

/* A pool the boot configuration sets otherwise than it is now: a reboot
 * changes it. Pools no boot source mentions (set by a script or a unit of
 * its own) are not compared: numaguard cannot tell what boot gives them.
 * Nodes that share a total the kernel splits (hugepages=N, vm.nr_hugepages)
 * are compared as one sum, the only certain figure. */
static int not_persistent_split(struct audit_ctx *ctx, const struct ng_boot_pool *bp0)
{
        const struct ng_snapshot *s = ctx->s;
        struct ng_bitmap nodes = {0};
        uint64_t live = 0, boot = 0;
        for (size_t i = 0; i < s->n_boot_pools; i++) {
                const struct ng_boot_pool *bp = &s->boot_pools[i];
                if (!bp->split || bp->page_kib != bp0->page_kib)
                        continue;
                if (bp < bp0)
                        return 0;       /* the group's first entry reports it */
                const struct ng_node *nd = ng_snapshot_node(s, bp->node);
                const struct ng_hugepool *hp = nd ? ng_node_pool(nd, bp->page_kib) : NULL;
                if (!hp || hp->unknown)
                        return 0;       /* a pool not read: unknown, not different */
                ng_bitmap_set(&nodes, (unsigned) bp->node);
                live += hp->nr_pages;
                boot += bp->pages;
        }
        if (live == boot)
                return 0;
        char where[256], list[64];
        ng_boot_pool_describe(bp0, where, sizeof(where));
        ng_bitmap_format_list(&nodes, list, sizeof(list));
        return ng_rules_add(ctx, NG_CODE_HUGEPAGE_NOT_PERSISTENT, NULL, NULL, &nodes, (double) live,
                   "record the pools for boot (numaguardctl hugepages apply --persist), or set the pool back",
                   "node%s %s ha%s %" PRIu64 " hugepages of %s; the boot configuration (%s) gives %s %" PRIu64
                   ": a reboot changes the pool",
                   ng_bitmap_count(&nodes) == 1 ? "" : "s", list, ng_bitmap_count(&nodes) == 1 ? "s" : "ve", live,
                   ng_rules_bytes_h(bp0->page_kib * 1024).s, where, ng_bitmap_count(&nodes) == 1 ? "it" : "them", boot);
}

int ng_rule_hugepage_not_persistent(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        int r = 0;
        for (size_t i = 0; i < s->n_boot_pools && r >= 0; i++)
                if (s->boot_pools[i].split)
                        r = not_persistent_split(ctx, &s->boot_pools[i]);
        for (size_t i = 0; i < s->topo.n_nodes && r >= 0; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                for (size_t k = 0; k < nd->n_pools && r >= 0; k++) {
                        const struct ng_hugepool *hp = &nd->pools[k];
                        const struct ng_boot_pool *bp = ng_boot_pool_find(s->boot_pools, s->n_boot_pools, nd->id,
                                                                          hp->page_kib);
                        if (!bp || bp->split || hp->unknown || bp->pages == hp->nr_pages)
                                continue;
                        struct ng_bitmap node = {0};
                        ng_bitmap_set(&node, (unsigned) nd->id);
                        char where[256];
                        ng_boot_pool_describe(bp, where, sizeof(where));
                        r = ng_rules_add(ctx, NG_CODE_HUGEPAGE_NOT_PERSISTENT, NULL, NULL, &node,
                                (double) hp->nr_pages,
                                "record the pools for boot (numaguardctl hugepages apply --persist), or set the "
                                "pool back",
                                "node %d has %" PRIu64 " hugepages of %s; the boot configuration (%s) gives it %"
                                PRIu64 ": a reboot changes the pool",
                                nd->id, hp->nr_pages, ng_rules_bytes_h(hp->page_kib * 1024).s, where, bp->pages);
                }
        }
        return r;
}

static const struct ng_hugepool *default_pool(const struct ng_snapshot *s)
{
        uint64_t kib = ng_default_huge_kib(s);
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
        return can_use_hugepages(seg) && seg->page_kib == 4 && !seg->bytes_unknown && seg->bytes >= min_bytes;
}

int ng_rule_fallback(struct audit_ctx *ctx, const struct ng_instance *in)
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
                int r = ng_rules_add_as(ctx, NG_CODE_HUGEPAGE_FALLBACK, required ? NG_SEV_CRITICAL : NG_SEV_WARNING, in,
                            label, NULL, (double) seg->bytes,
                            "size the pool to the whole segment plus a margin (numaguardctl hugepages plan) "
                            "and restart the instance; set the database to refuse 4K pages",
                            "%s (%s) sits in 4K pages although the %s pool has %" PRIu64 " pages (%" PRIu64
                            " free, %" PRIu64 " reserved); it needs %" PRIu64 " pages",
                            label, ng_rules_bytes_h(seg->bytes).s, ng_rules_bytes_h(page_bytes).s, hp ? hp->nr_pages : 0,
                            hp ? hp->free_pages : 0, hp ? hp->resv_pages : 0, need);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ng_rule_idle(struct audit_ctx *ctx)
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
                int r = ng_rules_add(ctx, NG_CODE_HUGEPAGE_IDLE, NULL, NULL, NULL, (double) idle,
                            "the pool is sized but unused: find why the database fell back to 4K pages "
                            "(pool one page short, permissions, memlock) or release the pages",
                            "%" PRIu64 " of %" PRIu64 " %s hugepages (%s) are free and unreserved while %s of "
                            "shared memory in %" PRIu64 " segment%s sits in 4K pages",
                            idle, hp->nr_pages, ng_rules_bytes_h(ng_kib_bytes_sat(hp->page_kib)).s, ng_rules_bytes_h(ng_kib_bytes_sat(ng_mul_sat(idle, hp->page_kib))).s,
                            ng_rules_bytes_h(small_bytes).s, n_small, n_small == 1 ? "" : "s");
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
int ng_rule_shortfall(struct audit_ctx *ctx)
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
                        r = ng_rules_add_as(ctx, NG_CODE_HUGEPAGE_SHORTFALL, sev, in, NULL, NULL, (double) (need - remaining),
                                advice, "needs %" PRIu64 " more %s pages (%s) but the pool has %" PRIu64
                                " free and unreserved of %" PRIu64,
                                need, ng_rules_bytes_h(page_bytes).s, ng_rules_bytes_h(ng_mul_sat(need, page_bytes)).s, remaining,
                                hp ? hp->nr_pages : 0);
                else {
                        struct ng_bitmap nodes = ng_bitmap_empty(&in->cfg->nodes) ? in->mems : in->cfg->nodes;
                        uint64_t on_nodes = node_free_pages(ctx->s, &nodes, page_bytes / 1024);
                        if (on_nodes < need && !ng_bitmap_empty(&nodes))
                                r = ng_rules_add_as(ctx, NG_CODE_HUGEPAGE_NODE_SHORTFALL, sev, in, NULL, &nodes,
                                        (double) (need - on_nodes), advice,
                                        "needs %" PRIu64 " %s pages on its node%s %s, which have %" PRIu64
                                        " free; the other %" PRIu64 " free pages are on nodes it may not use",
                                        need, ng_rules_bytes_h(page_bytes).s, ng_bitmap_count(&nodes) == 1 ? "" : "s",
                                        ng_rules_list_h(&nodes).s, on_nodes, remaining - on_nodes);
                }
                if (r < 0)
                        return r;
                remaining -= need < remaining ? need : remaining;
        }
        return 0;
}

/* Surplus pages (vm.nr_overcommit_hugepages) cover a pool that was short:
 * taken from free memory at fault time, on whatever node had it, and
 * returned when freed; after a restart on a fragmented host they may not
 * come back (the segment then falls back to 4 KiB pages, or fails). */
int ng_rule_hugepage_overcommit(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        int r = 0;
        for (size_t i = 0; i < s->n_pools && r >= 0; i++) {
                const struct ng_hugepool *hp = &s->pools[i];
                if (hp->overcommit_pages == 0 || hp->surplus_pages == 0)
                        continue;
                struct ng_bitmap nodes = {0};
                for (size_t n = 0; n < s->topo.n_nodes; n++)
                        for (size_t k = 0; k < s->topo.nodes[n].n_pools; k++)
                                if (s->topo.nodes[n].pools[k].page_kib == hp->page_kib &&
                                    s->topo.nodes[n].pools[k].surplus_pages)
                                        ng_bitmap_set(&nodes, (unsigned) s->topo.nodes[n].id);
                uint64_t page_bytes = ng_kib_bytes_sat(hp->page_kib);
                r = ng_rules_add(ctx, NG_CODE_HUGEPAGE_OVERCOMMIT, NULL, NULL, &nodes,
                        (double) hp->surplus_pages,
                        "reserve the pages the instances need in the persistent pool, per node and at boot "
                        "(numaguardctl hugepages plan / apply --persist), and keep vm.nr_overcommit_hugepages = 0",
                        "%" PRIu64 " surplus %s pages (%s) are in use under vm.nr_overcommit_hugepages = %" PRIu64
                        ": the persistent pool of %" PRIu64 " pages was short and the rest came from free memory "
                        "at fault time, on node%s %s; after a restart on a fragmented host they may not come back",
                        hp->surplus_pages, ng_rules_bytes_h(page_bytes).s,
                        ng_rules_bytes_h(ng_mul_sat(hp->surplus_pages, page_bytes)).s, hp->overcommit_pages,
                        hp->nr_pages > hp->surplus_pages ? hp->nr_pages - hp->surplus_pages : 0,
                        ng_bitmap_count(&nodes) == 1 ? "" : "s",
                        ng_bitmap_empty(&nodes) ? "unknown" : ng_rules_list_h(&nodes).s);
        }
        return r;
}

/* ---- the right to a SysV hugepage segment ---- */

enum right { RIGHT_UNKNOWN, RIGHT_NO, RIGHT_YES };

/* Before Linux 5.16 a process without the right could still create a
 * SHM_HUGETLB segment within its memlock limit; since then the kernel
 * refuses it (EPERM) whatever the limit (fs/hugetlbfs/inode.c,
 * hugetlb_file_setup). An unknown kernel is taken as a recent one. */
static bool memlock_grants(const struct ng_knobs *k)
{
        return ng_knobs_release_at_least(k, 5, 16) == 0;
}

/* The kernel's can_do_hugetlb_shm(): CAP_IPC_LOCK, or the group
 * vm.hugetlb_shm_group among the fsgid and the supplementary groups
 * (in_group_p). */
static enum right hugetlb_shm_right(const struct ng_snapshot *s, const struct ng_proc *pr, uint64_t bytes)
{
        const struct ng_pid_status *st = &pr->status;
        int64_t g = s->knobs.hugetlb_shm_group;
        if (g < 0 || !st->has_cap_eff || !st->has_gid)
                return RIGHT_UNKNOWN;
        if (st->cap_eff & (UINT64_C(1) << NG_CAP_IPC_LOCK) || st->fsgid == (uint64_t) g)
                return RIGHT_YES;
        for (size_t i = 0; i < st->n_groups; i++)
                if (st->groups[i] == (uint64_t) g)
                        return RIGHT_YES;
        if (!st->has_groups || st->groups_more)
                return RIGHT_UNKNOWN;
        if (!memlock_grants(&s->knobs))
                return RIGHT_NO;
        if (!pr->has_memlock)
                return RIGHT_UNKNOWN;
        return pr->memlock_soft_bytes >= bytes ? RIGHT_YES : RIGHT_NO;
}

struct sysv_bytes {
        uint64_t all, huge;
};

/* The instance's SysV segments of min_segment_size or more. */
static struct sysv_bytes instance_sysv(const struct audit_ctx *ctx, const struct ng_instance *in)
{
        struct sysv_bytes b = {0};
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                if (seg->kind != NG_SEG_SYSV || seg->bytes_unknown || seg->bytes < ctx->cfg->min_segment_size_bytes)
                        continue;
                b.all += seg->bytes;
                if (seg->page_kib > 4)
                        b.huge += seg->bytes;
        }
        return b;
}

static void no_right_text(const struct ng_snapshot *s, const struct ng_proc *pr, const struct sysv_bytes *b,
                          char *buf, size_t size)
{
        const struct ng_pid_status *st = &pr->status;
        char groups[96] = "", limit[48] = "";
        for (size_t i = 0, o = 0; i < st->n_groups && o < sizeof(groups); i++)
                o += (size_t) snprintf(groups + o, sizeof(groups) - o, "%s%" PRIu32, i ? "," : "", st->groups[i]);
        if (memlock_grants(&s->knobs))
                snprintf(limit, sizeof(limit), " and a memlock limit of %s",
                         ng_rules_bytes_h(pr->memlock_soft_bytes).s);
        snprintf(buf, size, "its main process (pid %d: uid %" PRIu32 ", gid %" PRIu32 ", groups %s) has neither "
                 "CAP_IPC_LOCK nor the group vm.hugetlb_shm_group = %" PRId64 "%s: %s, and the %s of its SysV "
                 "shared memory %s",
                 (int) pr->pid, st->uid, st->fsgid, groups[0] ? groups : "none", s->knobs.hugetlb_shm_group, limit,
                 memlock_grants(&s->knobs) ? "the kernel refuses it SysV SHM_HUGETLB segments"
                                           : "since Linux 5.16 the kernel refuses it SysV SHM_HUGETLB segments "
                                             "whatever its memlock limit",
                 ng_rules_bytes_h(b->all).s,
                 b->huge == 0 ? "sits in 4K pages" : b->huge < b->all ? "sits partly in 4K pages"
                                                   : "are in hugepages now but cannot be created there again");
}

/* HUGEPAGE_NOT_PERMITTED: an instance that uses or is meant to use
 * hugepages (as HUGEPAGE_FALLBACK decides) for SysV shared memory, whose
 * main process may not create SHM_HUGETLB segments; and for the engines
 * that lock their SGA (Oracle), a memlock limit below it. Anonymous
 * MAP_HUGETLB memory (PostgreSQL's default) needs no right. */
int ng_rule_hugepage_not_permitted(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        const struct ng_hugepool *hp = default_pool(s);
        struct sysv_bytes b = instance_sysv(ctx, in);
        bool wants = in->cfg->hugepages == NG_HUGEPAGES_REQUIRED || b.huge || (hp && hp->nr_pages);
        const struct ng_proc *pr = in->main_pid ? ng_snapshot_proc(s, in->main_pid) : NULL;
        if (in->cfg->hugepages == NG_HUGEPAGES_OFF || !b.all || !wants || !pr)
                return 0;
        bool no_right = hugetlb_shm_right(s, pr, b.all) == RIGHT_NO;
        bool short_lock = ng_engine_locks_sga(in->type) && pr->has_memlock && pr->memlock_soft_bytes < b.all;
        if (!no_right && !short_lock)
                return 0;
        char why[400] = "", lock[200] = "";
        if (no_right)
                no_right_text(s, pr, &b, why, sizeof(why));
        if (short_lock)
                snprintf(lock, sizeof(lock), "%sits memlock limit (Max locked memory of pid %d) is %s, below the %s "
                         "of its SGA: %s locks in large pages only what the limit covers", no_right ? "; " : "",
                         (int) pr->pid, ng_rules_bytes_h(pr->memlock_soft_bytes).s, ng_rules_bytes_h(b.all).s, in->type);
        const char *fix = ng_engine_hugetlb_shm_fix(in->type);
        return ng_rules_add(ctx, NG_CODE_HUGEPAGE_NOT_PERMITTED, in, NULL, NULL, (double) b.all,
                   fix ? fix : "add the database user's group to vm.hugetlb_shm_group (sysctl.d) or give its service "
                               "CAP_IPC_LOCK (systemd: AmbientCapabilities=CAP_IPC_LOCK), then restart it",
                   "%s%s", why, lock);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze, the hugepage rules of reservations: HUGEPAGE_SIGBUS_RISK,
 * reserved hugepages not yet faulted that the nodes their processes may
 * use cannot serve (ng-reserve.h); HUGEPAGE_NEXT_START, what the instance's
 * next start gets from the pools (ng-rehearse.h). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cleanup.h"
#include "ng-format.h"
#include "ng-rehearse.h"
#include "ng-reserve.h"
#include "rules-internal.h"

/* The command that grows the pool: on the one node, or over several. */
static void fix_text(const struct ng_snapshot *s, const struct ng_resv_weighed *w, char *buf, size_t size)
{
        const struct ng_resv_need *nd = &w->need;
        char page[16];
        ng_format_page_size(nd->page_kib, page, sizeof(page));
        int only = ng_bitmap_count(&nd->nodes) == 1 ? ng_bitmap_next(&nd->nodes, 0) : -1;
        const struct ng_node *node = only >= 0 ? ng_snapshot_node(s, only) : NULL;
        const struct ng_hugepool *hp = node ? ng_node_pool(node, nd->page_kib) : NULL;
        if (hp)
                snprintf(buf, size, "grow node %d's %s pool by %" PRIu64 " pages (numaguardctl hugepages reserve "
                         "--size %s --node %d --pages %" PRIu64 "), or widen the instance's cpuset.mems to nodes "
                         "with free pages; never narrow it further before the pages are faulted",
                         only, page, w->short_pages, page, only, hp->nr_pages + w->short_pages);
        else
                snprintf(buf, size, "grow the %s pools of nodes %.60s by %" PRIu64 " pages in all (numaguardctl "
                         "hugepages reserve), or widen the instance's cpuset.mems to nodes with free pages", page,
                         ng_rules_list_h(&nd->nodes).s, w->short_pages);
}

static int raise(struct audit_ctx *ctx, const struct ng_resv_weighed *w)
{
        const struct ng_resv_need *nd = &w->need;
        const struct ng_instance *in = &ctx->a->instances[nd->instance];
        char what[700], advice[256], surplus[200] = "";
        ng_resv_describe(ctx->s, ctx->a, w, what, sizeof(what));
        fix_text(ctx->s, w, advice, sizeof(advice));
        bool may = w->surplus_possible_pages >= w->short_pages;
        if (w->surplus_possible_pages)
                snprintf(surplus, sizeof(surplus), "; vm.nr_overcommit_hugepages may still give %" PRIu64
                         " surplus pages from free memory there at fault time, which a fragmented node cannot",
                         w->surplus_possible_pages);
        return ng_rules_add_as(ctx, NG_CODE_HUGEPAGE_SIGBUS_RISK, may ? NG_SEV_WARNING : NG_SEV_CRITICAL, in,
                   nd->segment, &nd->nodes, (double) w->short_pages, advice,
                   "%" PRIu64 " page%s short: the next first touch of a reserved page may die of SIGBUS (%s)%s",
                   w->short_pages, w->short_pages == 1 ? "" : "s", what, surplus);
}

/* HUGEPAGE_SIGBUS_RISK of the memory controller: the hugetlb pages an
 * instance has yet to fault are charged to its memory cgroup, and
 * memory.max does not leave room for them (ng-reserve.h says what the
 * kernel then does: the fault stalls, it is not SIGBUS). */
static int raise_memcg(struct audit_ctx *ctx, const struct ng_instance *in)
{
        struct ng_resv_memcg m;
        ng_resv_memcg(ctx->s, ctx->a, in, &m);
        if (m.state != NG_RESV_MEMCG_RECLAIM && m.state != NG_RESV_MEMCG_BEYOND)
                return 0;
        const struct ng_cgroup *cg = m.cgroup;
        bool beyond = m.state == NG_RESV_MEMCG_BEYOND;
        uint64_t over = m.unfaulted_bytes - (beyond ? m.room_most_bytes : m.room_bytes);
        char hugetlb[64] = "";
        if (cg->memory.hugetlb_known)
                snprintf(hugetlb, sizeof(hugetlb), ", %s of it hugetlb", ng_rules_bytes_h(cg->memory.hugetlb_bytes).s);
        char advice[256];
        snprintf(advice, sizeof(advice), "raise memory.max of cgroup %.80s by at least %s (a unit's MemoryMax=, a "
                 "container's memory limit)", cg->path, ng_rules_bytes_h(over).s);
        return ng_rules_add_as(ctx, NG_CODE_HUGEPAGE_SIGBUS_RISK, beyond ? NG_SEV_CRITICAL : NG_SEV_WARNING, in,
                   m.segment, NULL, (double) over, advice,
                   "%s%s of hugepages not yet faulted (%.60s%s) are charged at first touch to cgroup %.80s "
                   "(memory_hugetlb_accounting), whose memory.max %s leaves %s (it holds %s%s)%s: a touch the "
                   "charge refuses stalls, the kernel retrying the fault (VM_FAULT_OOM, not SIGBUS), and a read(2) "
                   "into it fails", m.at_most ? "at most " : "", ng_rules_bytes_h(m.unfaulted_bytes).s, m.segment,
                   m.n_segments > 1 ? " and others" : "", cg->path, ng_rules_bytes_h(cg->memory.max_bytes).s,
                   ng_rules_bytes_h(m.room_bytes).s, ng_rules_bytes_h(cg->memory.current_bytes).s, hugetlb,
                   beyond && cg->memory.hugetlb_known ? "; more than it can hold beside its hugetlb, whatever else is reclaimed"
                   : beyond ? "; more than all of its memory.max, whatever else is reclaimed (its hugetlb unknown)"
                   : cg->memory.hugetlb_known ? "; only if the charge first reclaims as much of its other memory"
                   : "; only if the charge first reclaims as much of its other memory (its hugetlb unknown)");
}

/* One finding for each instance and page size: its worst need; and one
 * for each instance whose memory cgroup cannot take its unfaulted pages. */
int ng_rule_sigbus_risk(struct audit_ctx *ctx)
{
        _cleanup_free_ struct ng_resv_need *needs = NULL;
        _cleanup_free_ struct ng_resv_weighed *w = NULL;
        size_t n;
        if (ng_resv_needs(ctx->s, ctx->a, NULL, &needs, &n) < 0)
                return -ENOMEM;
        if (n == 0)
                return 0;
        w = calloc(n, sizeof(*w));
        if (!w)
                return -ENOMEM;
        ng_resv_weigh(ctx->s, needs, n, NULL, w);
        for (size_t i = 0; i < n; i++) {
                if (w[i].state != NG_RESV_SHORT || w[i].need.instance >= ctx->a->n_instances)
                        continue;
                bool worst = true;
                for (size_t k = 0; k < n && worst; k++)
                        if (k != i && w[k].state == NG_RESV_SHORT && w[k].need.instance == w[i].need.instance &&
                            w[k].need.page_kib == w[i].need.page_kib &&
                            (w[k].short_pages > w[i].short_pages || (w[k].short_pages == w[i].short_pages && k < i)))
                                worst = false;
                int r = worst ? raise(ctx, &w[i]) : 0;
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ctx->a->n_instances; i++) {
                int r = raise_memcg(ctx, &ctx->a->instances[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* HUGEPAGE_NEXT_START: the next start would not be all in hugepages, or
 * would put them all on one node. A fallback to 4 KiB pages is raised only
 * where the pool of its size holds pages (a host without hugepages is not
 * told so on every poll) or the setting requires them; no start, SIGBUS
 * and a stalled fault always, critical. */
int ng_rule_next_start(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (in->origin == NG_INST_UNCLAIMED || !in->main_pid || !ng_snapshot_db_settings(ctx->s, in->main_pid))
                return 0;
        struct ng_rehearsal r;
        int e = ng_rehearse(ctx->s, ctx->a, in, &r);
        if (e < 0)
                return e;
        const struct ng_hugepool *hp = ng_snapshot_pool(ctx->s, r.page_kib);
        bool pool = hp && hp->nr_pages > 0;
        bool raise_it = r.outcome == NG_REHEARSE_NO_START || r.outcome == NG_REHEARSE_SIGBUS ||
                        r.outcome == NG_REHEARSE_FAULT_STALL ||
                        ((r.outcome == NG_REHEARSE_SMALL || r.outcome == NG_REHEARSE_PARTIAL) &&
                         (pool || r.setting == NG_HUGE_ON)) ||
                        (r.outcome == NG_REHEARSE_HUGE && r.cyclops);
        if (!raise_it)
                return 0;
        bool critical = r.outcome == NG_REHEARSE_NO_START || r.outcome == NG_REHEARSE_SIGBUS ||
                        r.outcome == NG_REHEARSE_FAULT_STALL;
        struct ng_bitmap nodes = r.outcome == NG_REHEARSE_HUGE ? r.from_nodes : r.nodes;
        const char *what = r.outcome == NG_REHEARSE_NO_START ? "would not start"
                         : r.outcome == NG_REHEARSE_SIGBUS ? "would die of SIGBUS at a first touch"
                         : r.outcome == NG_REHEARSE_FAULT_STALL ? "would stall at a first touch its memory cgroup "
                                                                  "cannot charge"
                         : r.outcome == NG_REHEARSE_SMALL ? "would be all in 4 KiB pages"
                         : r.outcome == NG_REHEARSE_PARTIAL ? "would be partly in 4 KiB pages"
                         : "would take every hugepage from one node (cyclops)";
        return ng_rules_add_as(ctx, NG_CODE_HUGEPAGE_NEXT_START, critical ? NG_SEV_CRITICAL : NG_SEV_WARNING, in, NULL,
                   &nodes, (double) r.pages, r.fix[0] ? r.fix : "see numaguardctl rehearse",
                   "its next start %s (%s = %s, %.80s; numaguardctl rehearse): %s", what, r.setting_name,
                   r.setting_value, r.setting_from, r.why);
}

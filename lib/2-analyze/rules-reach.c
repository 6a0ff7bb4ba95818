/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze, OUT_OF_REACH: where the instance's placement calls for
 * numaguardctl rebalance (CYCLOPS, REMOTE_MEMORY), the resident pages of
 * its segments that rebalance cannot move, and why: a SysV segment no
 * process maps cannot be opened, and a hugetlb segment moves only through
 * the page tables of its representative attacher, the one rebalance uses
 * (a hole of numaguard's own mapping would take a page from the pool). A 4 KiB shmem
 * segment is reached through its own file: every page. */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit-internal.h"
#include "rules-internal.h"

static bool called_for(const struct audit_ctx *ctx, const struct ng_instance *in)
{
        for (size_t i = 0; i < ctx->a->n_findings; i++) {
                const struct ng_finding *f = &ctx->a->findings[i];
                if ((f->code == NG_CODE_CYCLOPS || f->code == NG_CODE_REMOTE_MEMORY) && !strcmp(f->instance, in->name))
                        return true;
        }
        return false;
}

/* What of seg's resident bytes rebalance cannot reach, and why. */
static uint64_t out_of_reach(const struct ng_segment *seg, char *why, size_t size)
{
        if (seg->kind == NG_SEG_SYSV && seg->n_pids == 0 && seg->nattch == 0) {
                snprintf(why, size, "no process maps this SysV segment, so nothing can open it");
                return seg->resident_bytes;
        }
        if (!seg->huge || seg->placement_source != NG_SOURCE_ATTACHER || seg->placement_coverage < 0 ||
            seg->placement_coverage >= 1)
                return 0;
        snprintf(why, size, "its hugepages move only through an attacher's page tables, and pid %d's hold "
                 "only part of them", (int) seg->rep_pid);
        return (uint64_t) ((double) seg->resident_bytes * (1.0 - seg->placement_coverage));
}

int ng_rule_out_of_reach(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (!called_for(ctx, in))
                return 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                char why[160];
                uint64_t lost = seg->kind == NG_SEG_PRIVATE ? 0 : out_of_reach(seg, why, sizeof(why));
                if (lost < ctx->cfg->min_segment_size_bytes || lost == 0)
                        continue;
                char label[sizeof(seg->name) + 64];
                ng_segment_label(seg, label, sizeof(label));
                int r = ng_rules_add(ctx, NG_CODE_OUT_OF_REACH, in, label, NULL,
                                     (double) lost, "a restart of the instance places it anew (rehearse it first: "
                                     "numaguardctl rehearse); numaguardctl rebalance moves the rest and says "
                                     "what it left",
                                     "%s of the %s resident in %s are out of rebalance's reach: %s",
                                     ng_rules_bytes_h(lost).s, ng_rules_bytes_h(seg->resident_bytes).s, label, why);
                if (r < 0)
                        return r;
        }
        return 0;
}

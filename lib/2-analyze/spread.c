/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where an instance's shared memory is to be spread, and the policy its
 * segments' new pages are to follow: one answer for the rule that says a
 * segment's policy differs (SEGMENT_POLICY_DRIFT) and for rebalance, which
 * spreads the pages and installs the policy (lib/4-act).
 */

#include <stdio.h>

#include "ng-audit.h"

void ng_instance_spread_nodes(const struct ng_snapshot *s, const struct ng_instance *in, struct ng_bitmap *ret)
{
        const struct ng_instance_config *ic = in->cfg;
        struct ng_bitmap want = {0};
        if (!ng_bitmap_empty(&ic->nodes))
                want = ic->nodes;
        else if (ic->policy == NG_POLICY_LOCAL)
                want = in->cpu_nodes;
        bool all = ng_bitmap_empty(&want);
        int tier = ng_snapshot_fastest_tier(s, &in->cpu_nodes);
        *ret = (struct ng_bitmap) {0};
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (nd->id < 0 || !nd->has_memory || (!all && !ng_bitmap_test(&want, (unsigned) nd->id)) ||
                    ng_snapshot_slower_tier(s, nd->id, tier) ||
                    (!ng_bitmap_empty(&in->mems) && !ng_bitmap_test(&in->mems, (unsigned) nd->id)))
                        continue;
                ng_bitmap_set(ret, (unsigned) nd->id);
        }
}

enum ng_mpol ng_instance_segment_policy(const struct ng_instance *in, const struct ng_bitmap *nodes, char *buf,
                                        size_t size)
{
        char list[80];
        size_t n = 0;
        for (unsigned i = 0; i < NG_BITMAP_BITS; i++)
                n += ng_bitmap_test(nodes, i);
        if (size)
                buf[0] = '\0';
        if (n == 0 || ng_bitmap_format_list(nodes, list, sizeof(list)) < 0)
                return NG_MPOL_DEFAULT;
        enum ng_mpol m = in->cfg->policy == NG_POLICY_BIND         ? NG_MPOL_BIND
                         : in->cfg->policy == NG_POLICY_INTERLEAVE ? NG_MPOL_INTERLEAVE
                         : n > 1                                   ? NG_MPOL_INTERLEAVE
                                                                   : NG_MPOL_PREFERRED;
        snprintf(buf, size, "%s:%s", ng_mpol_name(m), list);
        return m;
}

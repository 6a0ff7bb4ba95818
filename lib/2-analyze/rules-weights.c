/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze, INTERLEAVE_WEIGHTS: an instance that asks weighted interleave
 * (policy = weighted-interleave) gets it in the proportions the host's
 * weights say, which are host-global (/sys/kernel/mm/mempolicy/
 * weighted_interleave/nodeN, 6.9), or not at all on a kernel without it. */

#include <stdio.h>
#include <string.h>

#include "audit-internal.h"
#include "rules-internal.h"

/* "node0 5, node2 2, node4 4" of w over nodes. */
static void format_weights(const struct ng_bitmap *nodes, const unsigned *w, size_t n, char *buf, size_t size)
{
        size_t len = 0;
        buf[0] = '\0';
        for (unsigned i = 0; i < n && len < size; i++)
                if (ng_bitmap_test(nodes, i)) {
                        int k = snprintf(buf + len, size - len, "%snode%u %u", len ? ", " : "", i, w[i]);
                        if (k < 0)
                                break;
                        len += (size_t) k;
                }
}

/* Whether a and b over nodes are in the same ratio. */
static bool same_ratio(const struct ng_bitmap *nodes, const unsigned *a, const unsigned *b, size_t n)
{
        unsigned long long sa = 0, sb = 0;
        for (unsigned i = 0; i < n; i++)
                if (ng_bitmap_test(nodes, i)) {
                        sa += a[i];
                        sb += b[i];
                }
        for (unsigned i = 0; i < n; i++)
                if (ng_bitmap_test(nodes, i) && (unsigned long long) a[i] * sb != (unsigned long long) b[i] * sa)
                        return false;
        return true;
}

int ng_rule_interleave_weights(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        if (in->cfg->policy != NG_POLICY_WEIGHTED_INTERLEAVE || s->topo.n_nodes < 2 || in->n_pids == 0)
                return 0;
        struct ng_bitmap nodes;
        ng_instance_spread_nodes(s, in, &nodes);
        const struct ng_feature_probe *f = &s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE];
        if (f->state != NG_FEATURE_PRESENT)
                return ng_rules_add_as(ctx, NG_CODE_INTERLEAVE_WEIGHTS, NG_SEV_INFO, in, NULL, &nodes, 0,
                                    "a kernel with weighted interleave (6.9 or later) spreads it by bandwidth; "
                                    "until then numaguardctl rebalance interleaves evenly over its fastest tier",
                                    "policy weighted-interleave, but the kernel %s weighted interleave (%s): its "
                                    "shared memory is interleaved evenly over nodes %s of its fastest memory tier "
                                    "instead", f->state == NG_FEATURE_ABSENT ? "has no" : "may not have",
                                    f->detail, ng_rules_list_h(&nodes).s);
        unsigned want[256], host[256];
        const char *src = ng_instance_interleave_weights(s, in, &nodes, want, 256);
        bool known = true;
        for (unsigned i = 0; i < 256; i++) {
                host[i] = 0;
                if (!ng_bitmap_test(&nodes, i))
                        continue;
                const struct ng_node *nd = ng_snapshot_node(s, (int) i);
                host[i] = nd ? nd->interleave_weight : 0;
                known = known && host[i] > 0;
        }
        if (!known || same_ratio(&nodes, want, host, 256))
                return 0;
        char h[256], w[256], fix[512];
        format_weights(&nodes, host, 256, h, sizeof(h));
        format_weights(&nodes, want, 256, w, sizeof(w));
        snprintf(fix, sizeof(fix), "write them to /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (%s); they are "
                 "host-global: every user of weighted interleave follows them", w);
        return ng_rules_add(ctx, NG_CODE_INTERLEAVE_WEIGHTS, in, NULL, &nodes, 0, fix,
                            "the host's weights (%s) spread the new pages of its weighted interleave in another "
                            "ratio than its nodes' bandwidth (%s) calls for: %s", h, src, w);
}

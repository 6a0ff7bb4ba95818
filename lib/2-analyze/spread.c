/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where an instance's shared memory is to be spread, and the policy its
 * segments' new pages are to follow: one answer for the rule that says a
 * segment's policy differs (SEGMENT_POLICY_DRIFT) and for rebalance, which
 * spreads the pages and installs the policy (lib/4-act).
 */

#include <stdio.h>

#include "ng-audit.h"
#include "ng-latency.h"

bool ng_instance_weighted(const struct ng_snapshot *s, const struct ng_instance *in)
{
        return in->cfg->policy == NG_POLICY_WEIGHTED_INTERLEAVE &&
               s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE].state == NG_FEATURE_PRESENT;
}

void ng_instance_spread_nodes(const struct ng_snapshot *s, const struct ng_instance *in, struct ng_bitmap *ret)
{
        const struct ng_instance_config *ic = in->cfg;
        struct ng_bitmap want = {0};
        if (!ng_bitmap_empty(&ic->nodes))
                want = ic->nodes;
        else if (ic->policy == NG_POLICY_LOCAL)
                want = in->cpu_nodes;
        bool all = ng_bitmap_empty(&want);
        /* weighted interleave is what slower memory is for, by its bandwidth */
        int tier = ng_instance_weighted(s, in) ? -1 : ng_snapshot_fastest_tier(s, &in->cpu_nodes);
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

enum ng_mpol ng_instance_segment_policy(const struct ng_snapshot *s, const struct ng_instance *in,
                                        const struct ng_bitmap *nodes, char *buf, size_t size)
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
                         : ng_instance_weighted(s, in) && n > 1    ? NG_MPOL_WEIGHTED_INTERLEAVE
                         : in->cfg->policy != NG_POLICY_LOCAL      ? NG_MPOL_INTERLEAVE
                         : n > 1                                   ? NG_MPOL_INTERLEAVE
                                                                   : NG_MPOL_PREFERRED;
        snprintf(buf, size, "%s:%s", ng_mpol_name(m), list);
        return m;
}

/* The bandwidth from the instance's first CPU node to node: the HMAT's
 * (that CPU node among the node's best initiators), else numaguardctl
 * probe's measured matrix; 0 unknown. */
static double bandwidth(const struct ng_snapshot *s, int cpu_node, int node, bool measured)
{
        if (!measured) {
                const struct ng_hmat_access *h = ng_snapshot_hmat(s, cpu_node, node);
                return h && h->read_bandwidth_mbps > 0 ? (double) h->read_bandwidth_mbps : 0;
        }
        const struct ng_latency *m = s->latency;
        int r = m ? ng_latency_row(m, cpu_node) : -1, c = m ? ng_latency_col(m, node) : -1;
        double bw = r >= 0 && c >= 0 ? m->bandwidth_mbps[(size_t) r * m->n_nodes + (size_t) c] : 0;
        return bw > 0 && bw < 1e12 ? bw : 0;        /* NAN: not measured */
}

static unsigned long gcd(unsigned long a, unsigned long b)
{
        while (b) {
                unsigned long t = a % b;
                a = b;
                b = t;
        }
        return a;
}

const char *ng_instance_interleave_weights(const struct ng_snapshot *s, const struct ng_instance *in,
                                           const struct ng_bitmap *nodes, unsigned *ret, size_t n_ret)
{
        int cpu = -1;
        for (unsigned i = 0; i < NG_BITMAP_BITS && cpu < 0; i++)
                if (ng_bitmap_test(&in->cpu_nodes, i))
                        cpu = (int) i;
        for (size_t i = 0; i < n_ret; i++)
                ret[i] = 0;
        for (int measured = 0; measured < 2 && cpu >= 0; measured++) {
                double max = 0;
                bool all = true;
                for (unsigned i = 0; i < n_ret && i < NG_BITMAP_BITS; i++)
                        if (ng_bitmap_test(nodes, i)) {
                                double bw = bandwidth(s, cpu, (int) i, measured);
                                all = all && bw > 0;
                                max = bw > max ? bw : max;
                        }
                if (!all || max <= 0)
                        continue;
                /* the smallest whole numbers in the ratio of the bandwidths
                 * (in MB/s); when those exceed 100, hundredths of the
                 * fastest, each at least 1 */
                unsigned long g = 0, top = 0;
                for (unsigned i = 0; i < n_ret && i < NG_BITMAP_BITS; i++)
                        if (ng_bitmap_test(nodes, i))
                                g = gcd(g, (unsigned long) (bandwidth(s, cpu, (int) i, measured) + 0.5));
                for (unsigned i = 0; i < n_ret && i < NG_BITMAP_BITS; i++)
                        if (ng_bitmap_test(nodes, i)) {
                                unsigned long w = (unsigned long) (bandwidth(s, cpu, (int) i, measured) + 0.5) / (g ? g : 1);
                                top = w > top ? w : top;
                        }
                for (unsigned i = 0; i < n_ret && i < NG_BITMAP_BITS; i++)
                        if (ng_bitmap_test(nodes, i)) {
                                double bw = bandwidth(s, cpu, (int) i, measured);
                                unsigned long w = (unsigned long) (bw + 0.5) / (g ? g : 1);
                                if (top > 100)
                                        w = (unsigned long) (100.0 * bw / max + 0.5);
                                ret[i] = w < 1 ? 1 : (unsigned) w;
                        }
                return measured ? "measured bandwidth" : "HMAT bandwidth";
        }
        for (unsigned i = 0; i < n_ret && i < NG_BITMAP_BITS; i++)
                ret[i] = ng_bitmap_test(nodes, i) ? 1 : 0;
        return "equal: no bandwidth known";
}

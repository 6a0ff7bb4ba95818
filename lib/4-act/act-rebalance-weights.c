/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's weights of weighted interleave (ng-act-rebalance.h): what
 * the kernel's later faults under an instance's weighted interleave follow,
 * host-global in /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (6.9).
 * Written only with write_interleave_weights = yes, before the move, so
 * that the pages laid out now and those faulted later share one ratio.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "action-internal.h"
#include "ng-act-rebalance.h"
#include "ng-path.h"

int ng_interleave_weights_run(const struct ng_snapshot *s, const struct ng_instance *in,
                              const struct ng_action_ops *ops, const struct ng_path *p, bool dry_run,
                              struct ng_action_result *res)
{
        struct ng_action_ops o;
        if (!s || !in || !p || !res || ng_action_ops_complete(ops, &o) < 0)
                return -EINVAL;
        if (!ng_instance_weighted(s, in))
                return 0;
        struct ng_bitmap nodes;
        unsigned want[256];
        ng_instance_spread_nodes(s, in, &nodes);
        const char *src = ng_instance_interleave_weights(s, in, &nodes, want, 256);
        char list[512] = "";
        size_t len = 0;
        int r = 0;
        for (unsigned i = 0; i < 256 && r >= 0; i++) {
                if (!ng_bitmap_test(&nodes, i))
                        continue;
                const struct ng_node *nd = ng_snapshot_node(s, (int) i);
                len += (size_t) snprintf(list + len, sizeof(list) - len, "%snode%u %u", len ? ", " : "", i, want[i]);
                if (nd && nd->interleave_weight == want[i])
                        continue;
                char path[128], value[16];
                snprintf(path, sizeof(path), NG_SYS_WEIGHTED_INTERLEAVE_DIR "/node%u", i);
                snprintf(value, sizeof(value), "%u", want[i]);
                r = ng_action_write(&o, p, res, dry_run, path, value);
        }
        if (res->n_writes == 0 && r >= 0)
                return 0;
        res->outcome = dry_run ? NG_OUTCOME_DRY_RUN : r < 0 ? ng_outcome_for_errno(r) : NG_OUTCOME_DONE;
        snprintf(res->summary, sizeof(res->summary), "%s the host's weighted-interleave weights %s (%s; host-global)%s%s",
                 dry_run ? "would set" : r < 0 ? "setting" : "set", list, src, r < 0 ? " failed: " : "",
                 r < 0 ? strerror(-r) : "");
        return 1;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rebalance: how many of a window's pages are on each node, from the
 * mover's numa_maps (act-rebalance-mover.c maps the window in a child).
 */

#include <errno.h>
#include <stdint.h>

#include "act-rebalance-run.h"
#include "cleanup.h"
#include "ng-path.h"
#include "parse.h"

/* One way through the mover: the batch is the window's every resident
 * page, its per-node count in the mover's numa_maps (one walk of its page
 * tables in the kernel, where asking each page is a lookup each). Fills
 * counts (node index -> pages) and returns 1 when the window's line counts
 * exactly the n pages of the batch, 0 to ask page by page, -ENOMEM. */
int ng_rebalance_window_counts(const struct run *r, unsigned n, uint64_t *counts)
{
        struct ng_path *path;
        _cleanup_free_ char *buf = NULL;
        if (ng_path_new(NULL, &path) < 0)
                return -ENOMEM;
        int k = ng_path_read(path, &buf, NULL, "/proc/%d/numa_maps", (int) r->pid);
        ng_path_free(path);
        if (k < 0)
                return k == -ENOMEM ? k : 0;
        struct ng_numa_map *m;
        size_t nm;
        if (ng_parse_numa_maps(buf, &m, &nm, NULL) < 0)
                return 0;
        /* the window: the mapping that starts last at or before its first page */
        const struct ng_numa_map *w = NULL;
        for (size_t i = 0; i < nm; i++)
                if (m[i].start <= (uint64_t) (uintptr_t) r->addrs[0] && (!w || m[i].start > w->start))
                        w = &m[i];
        uint64_t sum = 0;
        bool known = w != NULL;
        for (size_t i = 0; i < r->p->n_nodes; i++)
                counts[i] = 0;
        for (size_t j = 0; w && j < w->n_np && known; j++) {
                int ki = ng_rebalance_node_k(r, w->np[j].node);
                known = ki >= 0;
                if (known)
                        counts[ki] += w->np[j].pages;
                sum += w->np[j].pages;
        }
        ng_numa_maps_free(m, nm);
        return known && sum == n;
}


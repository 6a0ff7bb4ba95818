/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: the free-memory floor of a node (node_free_floor), which the
 * hugepage plan, NODE_PRESSURE and every correction keep. A fixed 1 GiB
 * refused every correction on nodes under about 1.5 GiB; auto fits the node.
 */

#include "ng-audit.h"
#include "ng-units.h"

uint64_t ng_node_free_floor(uint64_t configured_bytes, const struct ng_node *nd)
{
        const uint64_t cap = UINT64_C(1) << 30;
        uint64_t total_kib, wmark;
        if (configured_bytes != NG_FREE_FLOOR_AUTO)
                return configured_bytes;
        if (!nd->has_meminfo || ng_meminfo_get(&nd->meminfo, "MemTotal", &total_kib) < 0)
                return cap;
        uint64_t floor = ng_kib_bytes_sat(total_kib) / 100 * 3;
        if (ng_mul_u64(nd->high_wmark_pages, 4096, &wmark) && wmark > floor)
                floor = wmark;
        return floor < cap ? floor : cap;
}

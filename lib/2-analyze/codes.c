/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The names of finding codes and severities: stable, what users script
 * against (append, never rename). */

#include <errno.h>
#include <string.h>

#include "ng-audit.h"

static const char *const code_names[NG_CODE_MAX_] = {
        [NG_CODE_CYCLOPS] = "CYCLOPS",
        [NG_CODE_REMOTE_MEMORY] = "REMOTE_MEMORY",
        [NG_CODE_HUGEPAGE_FALLBACK] = "HUGEPAGE_FALLBACK",
        [NG_CODE_HUGEPAGE_SHORTFALL] = "HUGEPAGE_SHORTFALL",
        [NG_CODE_HUGEPAGE_NODE_SHORTFALL] = "HUGEPAGE_NODE_SHORTFALL",
        [NG_CODE_HUGEPAGE_IDLE] = "HUGEPAGE_IDLE",
        [NG_CODE_PAGETABLE_BLOAT] = "PAGETABLE_BLOAT",
        [NG_CODE_NODE_PRESSURE] = "NODE_PRESSURE",
        [NG_CODE_ORPHAN_SEGMENT] = "ORPHAN_SEGMENT",
        [NG_CODE_CPUSET_DRIFT] = "CPUSET_DRIFT",
        [NG_CODE_AUTONUMA_ON] = "AUTONUMA_ON",
        [NG_CODE_NUMAD_RUNNING] = "NUMAD_RUNNING",
        [NG_CODE_LIBNUMA_MISSING] = "LIBNUMA_MISSING",
        [NG_CODE_INSTANCE_NOT_FOUND] = "INSTANCE_NOT_FOUND",
        [NG_CODE_AUDIT_INCOMPLETE] = "AUDIT_INCOMPLETE",
        [NG_CODE_CPUSET_NOT_PERSISTENT] = "CPUSET_NOT_PERSISTENT",
        [NG_CODE_HUGEPAGE_NOT_PERSISTENT] = "HUGEPAGE_NOT_PERSISTENT",
        [NG_CODE_HIDDEN_HOP] = "HIDDEN_HOP",
        [NG_CODE_SLOW_TIER] = "SLOW_TIER",
        [NG_CODE_SHMEM_DEMOTABLE] = "SHMEM_DEMOTABLE",
        [NG_CODE_ZONE_RECLAIM_ON] = "ZONE_RECLAIM_ON",
        [NG_CODE_HUGEPAGE_OVERCOMMIT] = "HUGEPAGE_OVERCOMMIT",
        [NG_CODE_THP_NOT_AS_VENDOR] = "THP_NOT_AS_VENDOR",
        [NG_CODE_HUGEPAGE_NOT_PERMITTED] = "HUGEPAGE_NOT_PERMITTED",
};

const char *ng_code_name(enum ng_code c)
{
        return (unsigned) c < NG_CODE_MAX_ ? code_names[c] : "UNKNOWN";
}

int ng_code_from_name(const char *name, enum ng_code *ret)
{
        for (int c = 0; c < NG_CODE_MAX_; c++)
                if (!strcmp(code_names[c], name)) {
                        *ret = (enum ng_code) c;
                        return 0;
                }
        return -EINVAL;
}

const char *ng_severity_name(enum ng_severity s)
{
        switch (s) {
        case NG_SEV_INFO: return "info";
        case NG_SEV_WARNING: return "warning";
        case NG_SEV_CRITICAL: return "critical";
        }
        return "unknown";
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of finding codes (ng-codes.h) and the names of severities:
 * stable, what users script against (append, never rename). */

#include <errno.h>
#include <string.h>

#include "ng-codes.h"
#include "ng-snapshot.h"
#include "util.h"

static const struct ng_code_info codes[NG_CODE_MAX_] = {
#define NG_CODE_ROW_(n, msgid, sev, corr)                                                       \
        [NG_CODE_##n] = { .id = NG_CODE_##n, .name = #n, .message_id = msgid, .severity = NG_SEV_##sev, \
                          .correction = NG_CORRECTION_##corr },
        NG_CODES(NG_CODE_ROW_)
#undef NG_CODE_ROW_
};

static const struct {
        enum ng_code code;
        enum ng_severity severity;
        const char *when;
} overrides[] = {
#define NG_CODE_OVERRIDE_(n, sev, w) { NG_CODE_##n, NG_SEV_##sev, w },
        NG_CODE_OVERRIDES(NG_CODE_OVERRIDE_)
#undef NG_CODE_OVERRIDE_
};

bool ng_code_severity_allowed(enum ng_code c, enum ng_severity sev, const char **when)
{
        if (when)
                *when = NULL;
        if ((unsigned) c >= NG_CODE_MAX_)
                return false;
        if (codes[c].severity == sev)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(overrides); i++)
                if (overrides[i].code == c && overrides[i].severity == sev) {
                        if (when)
                                *when = overrides[i].when;
                        return true;
                }
        return false;
}

const struct ng_code_info *ng_code_info(enum ng_code c)
{
        return (unsigned) c < NG_CODE_MAX_ ? &codes[c] : NULL;
}

const char *ng_code_name(enum ng_code c)
{
        return (unsigned) c < NG_CODE_MAX_ ? codes[c].name : "UNKNOWN";
}

int ng_code_from_name(const char *name, enum ng_code *ret)
{
        for (int c = 0; c < NG_CODE_MAX_; c++)
                if (!strcmp(codes[c].name, name)) {
                        *ret = (enum ng_code) c;
                        return 0;
                }
        return -EINVAL;
}

const char *ng_severity_name(enum ng_severity s)
{
        static const char *const names[] = {
                [NG_SEV_INFO] = "info",
                [NG_SEV_WARNING] = "warning",
                [NG_SEV_CRITICAL] = "critical",
        };
        return NG_NAME(names, s, "unknown");
}

/* What a rule reads that not every kernel has (numaguardctl(1), KERNEL
 * FEATURES). */
static const struct {
        enum ng_code code;
        enum ng_feature feature;
        bool needs;             /* absent: the rule cannot raise it */
} code_features[] = {
        { NG_CODE_SLOW_TIER, NG_FEATURE_MEMORY_TIERS, true },
        { NG_CODE_TIERS_IGNORE_HMAT, NG_FEATURE_MEMORY_TIERS, true },
        { NG_CODE_SHMEM_DEMOTABLE, NG_FEATURE_DEMOTION, true },
        { NG_CODE_HUGEPAGE_NOT_PERMITTED, NG_FEATURE_HUGETLB_SHM_GROUP_ONLY, false },
};

int ng_code_kernel_feature(enum ng_code c)
{
        for (size_t i = 0; i < ELEMENTSOF(code_features); i++)
                if (code_features[i].code == c)
                        return (int) code_features[i].feature;
        return -1;
}

bool ng_code_needs_feature(enum ng_code c)
{
        for (size_t i = 0; i < ELEMENTSOF(code_features); i++)
                if (code_features[i].code == c)
                        return code_features[i].needs;
        return false;
}

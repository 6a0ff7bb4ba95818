/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of correction kinds (ng-correction.h). */

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "ng-correction.h"

static const struct ng_correction_kind kinds[NG_CORRECTION_MAX_] = {
#define NG_CORRECTION_ROW_(i, n, msgid) \
        [NG_CORRECTION_##i] = { .id = NG_CORRECTION_##i, .name = n, .message_id = msgid, \
                                .enforce_bit = 1u << NG_CORRECTION_##i },
        NG_CORRECTIONS(NG_CORRECTION_ROW_)
#undef NG_CORRECTION_ROW_
};

const struct ng_correction_kind *ng_correction_kind(enum ng_correction c)
{
        return (unsigned) c < NG_CORRECTION_MAX_ ? &kinds[c] : NULL;
}

const struct ng_correction_kind *ng_correction_by_name(const char *name)
{
        assert(name);
        for (size_t i = 0; i < NG_CORRECTION_MAX_; i++)
                if (strcmp(kinds[i].name, name) == 0)
                        return &kinds[i];
        return NULL;
}

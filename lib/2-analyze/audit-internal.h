/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared between audit.c (instances) and rules.c (findings). Not installed. */

#include "ng-audit.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct audit_ctx {
        const struct ng_snapshot *s;
        const struct ng_config *cfg;
        struct ng_audit *a;
};

/* Evaluates every rule and sorts the findings, most severe first. */
int ng_audit_rules(struct audit_ctx *ctx);

#pragma GCC visibility pop

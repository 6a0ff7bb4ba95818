/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared between audit.c (instances) and rules.c (findings). Not installed. */

#include "ng-audit.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_ns_cluster;

/* A configured instance whose matcher found processes in several clusters
 * (audit-ns.h). */
struct ng_ns_split {
        size_t instance;                /* index into ng_audit.instances */
        struct ng_ns_cluster *v;
        size_t n;
        size_t chosen;                  /* index into v: the instance's */
        int why;                        /* enum ng_ns_choice */
};

struct audit_ctx {
        const struct ng_snapshot *s;
        const struct ng_config *cfg;
        struct ng_audit *a;
        struct ng_ns_split *splits;
        size_t n_splits;
};

/* Evaluates every rule and sorts the findings, most severe first. */
int ng_audit_rules(struct audit_ctx *ctx);

#pragma GCC visibility pop

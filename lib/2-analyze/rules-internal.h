/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the rules: rules-common.c (adding a finding, the texts of the
 * messages), the rules of rules-placement.c, rules-hugepages.c and rules.c,
 * which runs them all. Not installed. */

#include <stdbool.h>
#include <stdint.h>

#include "audit-internal.h"
#include "ng-price.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* Appends a finding with its code's severity (ng-codes.h); 0 or -ENOMEM. */
int ng_rules_add(struct audit_ctx *ctx, enum ng_code code, const struct ng_instance *in, const char *segment,
                 const struct ng_bitmap *nodes, double value, const char *advice, const char *fmt, ...)
        __attribute__((format(printf, 8, 9)));
/* The same with sev, the table's or one of the code's documented
 * overrides (NG_CODE_OVERRIDES); -EINVAL for any other. */
int ng_rules_add_as(struct audit_ctx *ctx, enum ng_code code, enum ng_severity sev, const struct ng_instance *in,
                    const char *segment, const struct ng_bitmap *nodes, double value, const char *advice,
                    const char *fmt, ...) __attribute__((format(printf, 9, 10)));

/* Short human sizes for messages: "7.4 GiB". */
struct sz {
        char s[24];
};

struct lst {
        char s[128];
};

struct price_txt {
        char s[200];
};

struct sz ng_rules_bytes_h(uint64_t bytes);
/* What the instance's segments are: "shared memory", "private memory"
 * (MariaDB's InnoDB buffer pool, a private mapping of the server) or
 * "shared and private memory". */
const char *ng_rules_memory_noun(const struct ng_instance *in);
struct lst ng_rules_list_h(const struct ng_bitmap *b);
/* A share as a rounded percentage. */
uint64_t ng_rules_pct(double f);
/* "1", "1.5", "3.98": no trailing zeros. */
struct sz ng_rules_num_h(double v);
/* "measured", "from the firmware's HMAT", "from the SLIT". */
const char *ng_rules_price_from(const struct ng_price *p);
/* CYCLOPS: mostly bandwidth and contention. */
struct price_txt ng_rules_bandwidth_h(const struct ng_price *p);
struct price_txt ng_rules_latency_h(const struct ng_price *p);
/* b is exactly {node}. */
bool ng_rules_single_node(const struct ng_bitmap *b, int node);
/* Whether every node of a and every other node of b are sub-NUMA clusters
 * of one socket (at least one such pair). */
bool ng_rules_same_socket(const struct ng_snapshot *s, const struct ng_bitmap *a, const struct ng_bitmap *b);
/* "; nodes 0-1 are sub-NUMA clusters of one socket (0): ..." when they
 * are, else "". */
struct price_txt ng_rules_socket_h(const struct ng_snapshot *s, const struct ng_bitmap *a, const struct ng_bitmap *b);

/* The rules of the other files, which rules.c runs. */
/* Whether the instance's configured policy (interleave or bind) names all
 * of nodes: memory there is its choice. */
bool ng_rules_intended(const struct ng_instance *in, const struct ng_bitmap *nodes);

int ng_rule_cyclops(struct audit_ctx *ctx, const struct ng_instance *in);
/* SEGMENT_POLICY_DRIFT: a 4 KiB shmem segment of the instance whose own
 * policy, the one every process's later faults follow, is not the one the
 * instance wants (ng_instance_segment_policy()). */
int ng_rule_segment_policy(struct audit_ctx *ctx, const struct ng_instance *in);
/* POLICY_NOT_PERSISTENT: the instance's policy on its segment, which the
 * next start does not begin under (neither its main process nor its unit
 * has it). */
int ng_rule_policy_persistent(struct audit_ctx *ctx, const struct ng_instance *in);
/* INTERLEAVE_WEIGHTS: policy weighted-interleave on a kernel without it,
 * or with host weights in another ratio than its nodes' bandwidth. */
int ng_rule_interleave_weights(struct audit_ctx *ctx, const struct ng_instance *in);
/* OUT_OF_REACH (rules-reach.c): where CYCLOPS or REMOTE_MEMORY calls for
 * rebalance, the resident pages of a segment it cannot move. */
int ng_rule_out_of_reach(struct audit_ctx *ctx, const struct ng_instance *in);
int ng_rule_remote(struct audit_ctx *ctx, const struct ng_instance *in);
int ng_rule_cpuset_drift(struct audit_ctx *ctx, const struct ng_instance *in);
int ng_rule_not_persistent(struct audit_ctx *ctx, const struct ng_instance *in);
int ng_rule_fallback(struct audit_ctx *ctx, const struct ng_instance *in);
int ng_rule_hugepage_not_persistent(struct audit_ctx *ctx);
int ng_rule_idle(struct audit_ctx *ctx);
int ng_rule_shortfall(struct audit_ctx *ctx);
int ng_rule_hugepage_overcommit(struct audit_ctx *ctx);
int ng_rule_hugepage_not_permitted(struct audit_ctx *ctx, const struct ng_instance *in);
/* rules-reserve.c */
int ng_rule_sigbus_risk(struct audit_ctx *ctx);
int ng_rule_next_start(struct audit_ctx *ctx, const struct ng_instance *in);
/* refusal.c: AUDIT_INCOMPLETE for the processes whose maps were
 * refused, one finding per reason (refusal.h). */
int ng_rule_refused(struct audit_ctx *ctx);
/* rules-tiers.c */
int ng_rule_slow_tier(struct audit_ctx *ctx, const struct ng_instance *in);
/* TIERS_IGNORE_HMAT: the kernel's memory tiers put a CPU-less node the
 * firmware's HMAT gives as much slower in the tier of the CPUs' own memory. */
int ng_rule_tiers_ignore_hmat(struct audit_ctx *ctx);
int ng_rule_shmem_demotable(struct audit_ctx *ctx);
int ng_rule_thp_vendor(struct audit_ctx *ctx, const struct ng_instance *in);

#pragma GCC visibility pop

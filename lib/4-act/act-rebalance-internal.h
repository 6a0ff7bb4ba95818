/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by act-rebalance-plan.c (the plan, pure) and act-rebalance.c (the
 * moves). Not installed. */

#include "ng-act-rebalance.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

int ng_rebalance_node_index(const struct ng_rebalance_plan *p, int node);
/* The node's entry, added (id order) when missing; -1 when full. */
int ng_rebalance_node_index_add(struct ng_rebalance_plan *p, int node);
void ng_rebalance_format_size(uint64_t bytes, char *buf, size_t size);

/* VIA_SEGMENT: the plan's file, opened (ops->open_segment, else as the
 * plan says) and checked to be its device and inode (-ESTALE: another
 * file). An fd, or -errno with *ret_failed_call saying what failed. */
int ng_rebalance_open_segment(const struct ng_rebalance_plan *p, const struct ng_rebalance_ops *ops,
                              const char **ret_failed_call);
/* Installs p->policy on the segment (its shared policy, over its whole
 * file) unless it has it already, recording the write in res (dry_run:
 * recorded only). 1 written (or would be), 0 already so, -errno. */
int ng_rebalance_set_policy(const struct ng_rebalance_plan *p, const struct ng_rebalance_ops *ops, bool dry_run,
                            struct ng_action_result *res);
/* After a run (or a plan with nothing to move): installs the policy when
 * opts->set_policy, and says so in res (summary, write, outcome). */
void ng_rebalance_policy_step(const struct ng_rebalance_plan *p, const struct ng_rebalance_opts *o,
                              const struct ng_rebalance_ops *ops, struct ng_action_result *res);

struct ng_seg_walk_opts;
struct ng_seg_walk_stats;
/* ng_segment_walk() of fd in a child process (act-rebalance-mover.c): the
 * child maps each window and sleeps while o->batch runs here on the pages
 * at its addresses; *ret_pid is its pid meanwhile (for move_pages(2)), 0
 * after. The walk's return, -EIO when the child died, or -errno. */
int ng_rebalance_walk_mover(int fd, const struct ng_seg_walk_opts *o, pid_t *ret_pid, struct ng_seg_walk_stats *ret);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The JSON documents of a correction, for numaguardctl (--json): each
 * kind's plan, and the outcome around it. (numaguardd reports a correction
 * in its journal entry, ng_correction_journal_fields().) Not installed,
 * not exported. root is the --root prefix of the paths shown (NULL: the
 * host); host paths are kept beside them.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "ng-act-cpuset.h"
#include "ng-act-hugepages.h"
#include "ng-act-rebalance.h"
#include "ng-action.h"
#include "ng-correction.h"

#pragma GCC visibility push(hidden)

/* The file a host path names: under root, inside the tree. */
void ng_act_tree_path(const char *root, const char *path, char *buf, size_t size);

/* A plan: NULL on ENOMEM. */
struct json_object *ng_act_cpuset_plan_json(const struct ng_cpuset_plan *plan, const char *root);
struct json_object *ng_act_hugepages_plan_json(const struct ng_act_hugepages *a);
struct json_object *ng_act_rebalance_plan_json(const struct ng_rebalance_plan *p);
/* Where the next start of an instance keeps its policy: unit, dropin and
 * value (null without a unit) and the note. */
struct json_object *ng_act_policy_persist_json(const struct ng_policy_persist *pp);
/* rebalance's one document for an instance (schema 1): the target, dry_run,
 * the host's weights, one entry per segment and where the next start keeps
 * the policy (each array taken over; NULL becomes null), and the exit
 * status. NULL on ENOMEM (the arrays are then put). */
struct json_object *ng_act_rebalance_json(const char *target, bool dry_run, struct json_object *weights,
                                          struct json_object *segments, struct json_object *next_start,
                                          int exit_status);

/* The outcome: ("schema" first when with_schema) the action, target,
 * dry_run, plan (taken over; may be NULL), every write with before / asked
 * / read back, the outcome, summary and the exit status the caller gives
 * it. NULL on ENOMEM. */
struct json_object *ng_act_outcome_json(enum ng_correction kind, const char *target, bool dry_run, const char *root,
                                       struct json_object *plan, const struct ng_action_result *res, int exit_status,
                                       bool with_schema);

#pragma GCC visibility pop

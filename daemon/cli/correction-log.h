/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* How numaguardctl shows and logs a correction (correction-log.c). */

#include <stdbool.h>
#include <stddef.h>

#include "ng-correction.h"

struct ctl_opts;
struct json_object;
struct ng_action_result;

/* Prints every write (or "would write" in a dry run) and the outcome, logs
 * it at NOTICE unless dry-run or --root (the fields of
 * ng_correction_journal_fields; NUMAGUARD_INSTANCE is the target but for
 * hugepages, which correct the host), and returns the exit status:
 * 0 done / no-op / dry run, 1 partial, 2 refused, 3 failed. With --json,
 * instead of the text: one document (schema 1) with the action, its plan
 * (taken over; may be NULL), every write with before / asked / read back,
 * the outcome and exit status; appended to collect instead of printed when
 * collect is not NULL (rebalance: one entry per segment). */
int ctl_action_emit(const struct ctl_opts *o, enum ng_correction kind, const char *target, struct json_object *plan,
                    const struct ng_action_result *res, struct json_object *collect);
/* That entry alone (with "schema" first when with_schema); NULL on ENOMEM. */
struct json_object *ctl_action_json(const struct ctl_opts *o, enum ng_correction kind, const char *target,
                                    struct json_object *plan, const struct ng_action_result *res, bool with_schema);
/* The file a host path names: under --root, inside the tree. */
void ctl_tree_path(const struct ctl_opts *o, const char *path, char *buf, size_t size);

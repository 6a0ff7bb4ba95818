/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the actions of lib/4-act (action.c defines them). Not
 * installed. */

#include "ng-action.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/*
 * Appends a write of kind to res, every other member zero: 0 with *ret
 * pointing at it (valid until the next write is appended); -E2BIG when res
 * holds NG_ACTION_MAX_WRITES already (nothing recorded, res->error left
 * alone); -ENOMEM when there was no room to be had (nothing recorded,
 * res->error set to it unless it held an error already).
 */
int ng_action_result_add(struct ng_action_result *res, enum ng_write_kind kind, struct ng_write **ret);

#pragma GCC visibility pop

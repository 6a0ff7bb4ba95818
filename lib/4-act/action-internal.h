/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the actions of lib/4-act (action.c defines them). Not
 * installed. */

#include <stddef.h>

#include "ng-action.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* Whether the caller's table ops reaches past member: a member it does
 * not reach is NULL to the library. */
#define ng_action_ops_has(ops, member) \
        ((ops)->size >= offsetof(struct ng_action_ops, member) + sizeof((ops)->member))

/*
 * The caller's table ops (NULL: ng_action_ops_default) as the library's own
 * whole table in *ret: the members ops does not reach NULL, then the owner
 * I/O left NULL the defaults (ng_action_ops_fill_owner()). -EINVAL when ops
 * does not reach past userdata, or sets a member this library does not
 * know.
 */
int ng_action_ops_complete(const struct ng_action_ops *ops, struct ng_action_ops *ret);

/* Fills the owner I/O of ops left NULL with the defaults (act-owner.c),
 * each that ops->size reaches. */
void ng_action_ops_fill_owner(struct ng_action_ops *ops);

/*
 * Appends a write of kind to res, every other member zero: 0 with *ret
 * pointing at it (valid until the next write is appended); -E2BIG when res
 * holds NG_ACTION_MAX_WRITES already (nothing recorded, res->error left
 * alone); -ENOMEM when there was no room to be had (nothing recorded,
 * res->error set to it unless it held an error already).
 */
int ng_action_result_add(struct ng_action_result *res, enum ng_write_kind kind, struct ng_write **ret);

#pragma GCC visibility pop

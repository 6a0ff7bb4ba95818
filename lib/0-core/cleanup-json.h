/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Scope-bound cleanup of a JSON object (cleanup.h), for the files that use
 * json-c: _cleanup_json_ struct json_object *o = NULL; puts o when the
 * scope is left. Apart so that cleanup.h does not pull json-c in. */

#include <json-c/json.h>

#include "cleanup.h"

static inline void ng_json_putp(struct json_object **o)
{
        json_object_put(*o);
}

#define _cleanup_json_ _ng_cleanup_(ng_json_putp)

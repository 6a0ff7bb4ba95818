/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A bitmap in JSON, the two ways numaguard's documents write one; for the
 * renderers and the programs, not installed. */

#include <json-c/json.h>

#include "ng-bitmap.h"

#pragma GCC visibility push(hidden)

/* The kernel's list format as a string: "0-3,8". NULL without memory. */
struct json_object *ng_bitmap_json_list(const struct ng_bitmap *b);
/* The members as an array of numbers: [0, 1, 2, 3, 8]. NULL without memory. */
struct json_object *ng_bitmap_json_ids(const struct ng_bitmap *b);

#pragma GCC visibility pop

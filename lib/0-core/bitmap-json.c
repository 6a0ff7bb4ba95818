/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bitmap in JSON (bitmap-json.h). */

#include "bitmap-json.h"

struct json_object *ng_bitmap_json_list(const struct ng_bitmap *b)
{
        char buf[4096];
        ng_bitmap_format_list(b, buf, sizeof(buf));
        return json_object_new_string(buf);
}

struct json_object *ng_bitmap_json_ids(const struct ng_bitmap *b)
{
        struct json_object *arr = json_object_new_array();
        if (!arr)
                return NULL;
        NG_BITMAP_FOREACH(id, b)
                json_object_array_add(arr, json_object_new_int(id));
        return arr;
}

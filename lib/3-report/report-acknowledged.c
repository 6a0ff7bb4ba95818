/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report: the processes unreadable_ok acknowledges (numaguard.conf(5)),
 * whose maps numaguard could not read: never an AUDIT_INCOMPLETE, never
 * silent either. One line of text (audit, status), an array in JSON. */

#include <assert.h>
#include <json-c/json.h>
#include <stdio.h>

#include "ng-audit.h"
#include "ng-report.h"
#include "text.h"

/* Processes the line names; the rest are counted. */
#define SHOWN 8

void ng_report_acknowledged_text(const struct ng_audit *a, FILE *f)
{
        assert(a && f);
        if (!a->n_acknowledged)
                return;
        fprintf(f, "%zu process%s acknowledged unreadable (unreadable_ok):", a->n_acknowledged,
                a->n_acknowledged == 1 ? "" : "es");
        for (size_t i = 0; i < a->n_acknowledged && i < SHOWN; i++) {
                const struct ng_acknowledged *k = &a->acknowledged[i];
                char name[NG_TEXT_SIZE(sizeof(k->name))], by[NG_TEXT_SIZE(256)];
                fprintf(f, "%s pid %d (%s, uid %u, %s)", i ? "," : "", (int) k->pid,
                        ng_text_escape(NG_TEXT_TERM, k->name, name, sizeof(name)), (unsigned) k->uid,
                        ng_text_escape(NG_TEXT_TERM, k->by, by, sizeof(by)));
        }
        if (a->n_acknowledged > SHOWN)
                fprintf(f, " and %zu more", a->n_acknowledged - SHOWN);
        fputc('\n', f);
}

struct json_object *ng_report_acknowledged_json(const struct ng_audit *a)
{
        assert(a);
        struct json_object *arr = json_object_new_array();
        for (size_t i = 0; arr && i < a->n_acknowledged; i++) {
                const struct ng_acknowledged *k = &a->acknowledged[i];
                struct json_object *o = json_object_new_object();
                if (!o)
                        break;
                json_object_object_add(o, "pid", json_object_new_int((int) k->pid));
                json_object_object_add(o, "name", json_object_new_string(k->name));
                json_object_object_add(o, "uid", json_object_new_uint64(k->uid));
                json_object_object_add(o, "by", json_object_new_string(k->by));
                json_object_array_add(arr, o);
        }
        return ng_json_utf8(arr);
}

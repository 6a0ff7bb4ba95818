/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The documents of a correction (act-json.h): its plan, per kind, and its
 * outcome with every write, as `numaguardctl ... --json` prints them. In the
 * library so that numaguardd's status and journal can carry the same ones.
 */

#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "act-json.h"
#include "bitmap-json.h"
#include "cleanup-json.h"
#include "util.h"

void ng_act_tree_path(const char *root, const char *path, char *buf, size_t size)
{
        size_t n = root ? strlen(root) : 0;
        while (n > 0 && root[n - 1] == '/')
                n--;
        snprintf(buf, size, "%.*s%s", (int) n, root ? root : "", path);
}

struct json_object *ng_act_cpuset_plan_json(const struct ng_cpuset_plan *plan, const char *root)
{
        struct json_object *j = json_object_new_object();
        char buf[PATH_MAX + 256];
        if (!j)
                return NULL;
        json_object_object_add(j, "cgroup", json_object_new_string(plan->cgroup));
        ng_act_tree_path(root, plan->dir, buf, sizeof(buf));
        json_object_object_add(j, "dir", json_object_new_string(buf));
        json_object_object_add(j, "cgroup_version", json_object_new_int(plan->version));
        json_object_object_add(j, "cpus_before", ng_bitmap_json_list(&plan->old_cpus));
        json_object_object_add(j, "mems_before", ng_bitmap_json_list(&plan->old_mems));
        json_object_object_add(j, "cpus", ng_bitmap_json_list(&plan->cpus));
        json_object_object_add(j, "mems", ng_bitmap_json_list(&plan->mems));
        json_object_object_add(j, "write_cpus", json_object_new_boolean(plan->write_cpus));
        json_object_object_add(j, "write_mems", json_object_new_boolean(plan->write_mems));
        json_object_object_add(j, "refused", json_object_new_boolean(plan->refused));
        json_object_object_add(j, "reason", json_object_new_string(plan->reason));
        return j;
}

struct json_object *ng_act_hugepages_plan_json(const struct ng_act_hugepages *a)
{
        _cleanup_json_ struct json_object *j = json_object_new_object(), *nodes = json_object_new_array();
        char size[16];
        if (!j || !nodes)
                return NULL;
        ng_hugepage_size_format(a->page_kib, size, sizeof(size));
        json_object_object_add(j, "page_size", json_object_new_string(size));
        json_object_object_add(j, "page_kib", json_object_new_uint64(a->page_kib));
        json_object_object_add(j, "node_free_floor_bytes", json_object_new_uint64(a->floor_bytes));
        for (size_t i = 0; i < a->n_nodes; i++) {
                const struct ng_act_hugepages_node *n = &a->nodes[i];
                struct json_object *no = json_object_new_object();
                json_object_object_add(no, "id", json_object_new_int(n->id));
                json_object_object_add(no, "nr_pages", json_object_new_uint64(n->nr_pages));
                json_object_object_add(no, "free_pages", json_object_new_uint64(n->free_pages));
                json_object_object_add(no, "in_use_pages", json_object_new_uint64(n->in_use_pages));
                json_object_object_add(no, "mem_free_bytes", json_object_new_uint64(n->supply.free_bytes.v));
                json_object_object_add(no, "asked_pages", json_object_new_uint64(n->asked_pages));
                json_object_object_add(no, "target_pages", json_object_new_uint64(n->target_pages));
                json_object_array_add(nodes, no);
        }
        json_object_object_add(j, "nodes", ng_steal_ptr(&nodes));
        json_object_object_add(j, "refused", json_object_new_boolean(a->refused));
        json_object_object_add(j, "note", json_object_new_string(a->note));
        json_object_object_add(j, "reason", json_object_new_string(a->reason));
        return ng_steal_ptr(&j);
}

struct json_object *ng_act_rebalance_plan_json(const struct ng_rebalance_plan *p)
{
        _cleanup_json_ struct json_object *j = json_object_new_object(), *dest = json_object_new_array(),
                                          *nodes = json_object_new_array();
        if (!j || !dest || !nodes)
                return NULL;
        json_object_object_add(j, "segment", json_object_new_string(p->label));
        json_object_object_add(j, "pid", json_object_new_int((int) p->pid));
        json_object_object_add(j, "via", json_object_new_string(ng_rebalance_via_name(p->via)));
        json_object_object_add(j, "path", p->via == NG_REBALANCE_VIA_SEGMENT && p->seg_path[0]
                                                  ? json_object_new_string(p->seg_path) : NULL);
        json_object_object_add(j, "unreachable_pages", json_object_new_uint64(p->unreachable_pages));
        json_object_object_add(j, "unreachable_reason",
                               p->unreachable_why[0] ? json_object_new_string(p->unreachable_why) : NULL);
        json_object_object_add(j, "policy", p->policy_text[0] ? json_object_new_string(p->policy_text) : NULL);
        json_object_object_add(j, "policy_note", p->policy_note[0] ? json_object_new_string(p->policy_note) : NULL);
        json_object_object_add(j, "weights_source",
                               p->weights_source[0] ? json_object_new_string(p->weights_source) : NULL);
        json_object_object_add(j, "page_bytes", json_object_new_uint64(p->page_bytes));
        json_object_object_add(j, "huge", json_object_new_boolean(p->huge));
        json_object_object_add(j, "resident_pages", json_object_new_uint64(p->resident_pages));
        json_object_object_add(j, "move_pages", json_object_new_uint64(p->move_pages));
        for (size_t i = 0; i < p->n_dest; i++)
                json_object_array_add(dest, json_object_new_int(p->dest[i]));
        json_object_object_add(j, "dest", ng_steal_ptr(&dest));
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_rebalance_node *n = &p->nodes[i];
                struct json_object *no = json_object_new_object();
                json_object_object_add(no, "id", json_object_new_int(n->node));
                json_object_object_add(no, "dest", json_object_new_boolean(n->dest));
                json_object_object_add(no, "before_pages", json_object_new_uint64(n->before_pages));
                json_object_object_add(no, "target_pages", json_object_new_uint64(n->target_pages));
                json_object_object_add(no, "in_pages", json_object_new_uint64(n->in_pages));
                json_object_object_add(no, "out_pages", json_object_new_uint64(n->out_pages));
                json_object_object_add(no, "avail_pages", json_object_new_uint64(n->avail_pages));
                json_object_object_add(no, "weight", json_object_new_uint64(n->weight));
                json_object_object_add(no, "moved_in_pages", json_object_new_uint64(n->moved_in_pages));
                json_object_object_add(no, "moved_out_pages", json_object_new_uint64(n->moved_out_pages));
                json_object_array_add(nodes, no);
        }
        json_object_object_add(j, "nodes", ng_steal_ptr(&nodes));
        json_object_object_add(j, "verdict", json_object_new_string(ng_outcome_name(p->verdict)));
        json_object_object_add(j, "reason", json_object_new_string(p->reason));
        return ng_steal_ptr(&j);
}

static struct json_object *string_or_null(const char *s)
{
        return s && s[0] ? json_object_new_string(s) : NULL;
}

static const char *write_kind_name(enum ng_write_kind k)
{
        static const char *const names[] = {
                [NG_WRITE_FILE] = "file",
                [NG_WRITE_UNIT_PROPERTY] = "unit_property",
                [NG_WRITE_CONFIG_LINE] = "config_line",
                [NG_WRITE_SEGMENT_POLICY] = "segment_policy",
        };
        return NG_NAME(names, k, "file");
}

static struct json_object *write_json(const char *root, const struct ng_write *w, bool dry)
{
        struct json_object *j = json_object_new_object();
        char path[PATH_MAX + 256];
        if (!j)
                return NULL;
        /* a unit is no path: under --root, its name as it is */
        if (w->kind == NG_WRITE_UNIT_PROPERTY)
                snprintf(path, sizeof(path), "%s", w->path);
        else
                ng_act_tree_path(root, w->path, path, sizeof(path));
        json_object_object_add(j, "kind", json_object_new_string(write_kind_name(w->kind)));
        json_object_object_add(j, "path", json_object_new_string(path));
        json_object_object_add(j, "host_path", json_object_new_string(w->path));
        json_object_object_add(j, "before", string_or_null(w->before));
        json_object_object_add(j, "asked", json_object_new_string(w->value));
        json_object_object_add(j, "read_back", dry ? NULL : string_or_null(w->after));
        json_object_object_add(j, "written", json_object_new_boolean(!dry && w->error == 0));
        json_object_object_add(j, "error", w->error < 0 ? json_object_new_string(strerror(-w->error)) : NULL);
        return j;
}

struct json_object *ng_act_outcome_json(enum ng_correction kind, const char *target, bool dry_run, const char *root,
                                       struct json_object *plan, const struct ng_action_result *res, int exit_status,
                                       bool with_schema)
{
        bool dry = res->outcome == NG_OUTCOME_DRY_RUN;
        _cleanup_json_ struct json_object *j = json_object_new_object(), *writes = json_object_new_array();
        if (!j || !writes) {
                json_object_put(plan);
                return NULL;
        }
        if (with_schema)
                json_object_object_add(j, "schema", json_object_new_int(1));
        json_object_object_add(j, "action", json_object_new_string(ng_correction_kind(kind)->name));
        json_object_object_add(j, "target", json_object_new_string(target));
        json_object_object_add(j, "dry_run", json_object_new_boolean(dry || dry_run));
        if (plan)
                json_object_object_add(j, "plan", plan);
        for (size_t i = 0; i < res->n_writes; i++)
                json_object_array_add(writes, write_json(root, &res->writes[i], dry));
        json_object_object_add(j, "writes", ng_steal_ptr(&writes));
        json_object_object_add(j, "outcome", json_object_new_string(ng_outcome_name(res->outcome)));
        json_object_object_add(j, "summary", json_object_new_string(res->summary));
        /* The hugepage reservation check: null when there was none. */
        json_object_object_add(j, "hugepage_check", res->check[0] ? json_object_new_string(res->check) : NULL);
        json_object_object_add(j, "hugepage_check_refused", json_object_new_boolean(res->check_refused));
        json_object_object_add(j, "exit_status", json_object_new_int(exit_status));
        return ng_steal_ptr(&j);
}

struct json_object *ng_act_policy_persist_json(const struct ng_policy_persist *pp)
{
        struct json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        bool unit = pp->unit[0] != 0;
        json_object_object_add(o, "unit", unit ? json_object_new_string(pp->unit) : NULL);
        json_object_object_add(o, "dropin", unit ? json_object_new_string(pp->dropin) : NULL);
        json_object_object_add(o, "value", unit ? json_object_new_string(pp->value) : NULL);
        json_object_object_add(o, "note", json_object_new_string(pp->note));
        return o;
}

struct json_object *ng_act_rebalance_json(const char *target, bool dry_run, struct json_object *weights,
                                          struct json_object *segments, struct json_object *next_start,
                                          int exit_status)
{
        struct json_object *j = json_object_new_object();
        if (!j) {
                json_object_put(weights);
                json_object_put(segments);
                json_object_put(next_start);
                return NULL;
        }
        json_object_object_add(j, "schema", json_object_new_int(1));
        json_object_object_add(j, "action", json_object_new_string("rebalance"));
        json_object_object_add(j, "target", json_object_new_string(target));
        json_object_object_add(j, "dry_run", json_object_new_boolean(dry_run));
        json_object_object_add(j, "weights", weights);
        json_object_object_add(j, "segments", segments);
        json_object_object_add(j, "next_start", next_start);
        json_object_object_add(j, "exit_status", json_object_new_int(exit_status));
        return j;
}

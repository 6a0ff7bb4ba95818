/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaguardctl rehearse [INSTANCE]: what each instance's next start gets
 * from the hugepage pools, predicted from the live host (ng-rehearse.h).
 * It reads, never writes: the pools and the databases are left as they are.
 */

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "bitmap-json.h"
#include "cleanup-json.h"
#include "cleanup.h"
#include "cmd-rehearse.h"
#include "common.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-format.h"
#include "ng-rehearse.h"
#include "ng-snapshot.h"
#include "text.h"

static bool rehearsable(const struct ng_instance *in)
{
        return in->origin != NG_INST_UNCLAIMED && in->main_pid > 0;
}

static struct json_object *rehearsal_json(const struct ng_instance *in, const struct ng_rehearsal *r)
{
        struct json_object *j = json_object_new_object();
        if (!j)
                return NULL;
        json_object_object_add(j, "instance", json_object_new_string(in->name));
        json_object_object_add(j, "main_pid", json_object_new_int(in->main_pid));
        json_object_object_add(j, "outcome", json_object_new_string(ng_rehearse_outcome_name(r->outcome)));
        json_object_object_add(j, "cyclops", json_object_new_boolean(r->cyclops));
        json_object_object_add(j, "cyclops_node", r->cyclops ? json_object_new_int(r->cyclops_node) : NULL);
        json_object_object_add(j, "setting", r->setting_name[0] ? json_object_new_string(r->setting_name) : NULL);
        json_object_object_add(j, "setting_value", r->setting_name[0] ? json_object_new_string(r->setting_value) : NULL);
        json_object_object_add(j, "setting_from", r->setting_name[0] ? json_object_new_string(r->setting_from) : NULL);
        json_object_object_add(j, "bytes", r->bytes ? json_object_new_uint64(r->bytes) : NULL);
        json_object_object_add(j, "size_from", r->size_from[0] ? json_object_new_string(r->size_from) : NULL);
        json_object_object_add(j, "page_kib", r->page_kib ? json_object_new_uint64(r->page_kib) : NULL);
        json_object_object_add(j, "pages", json_object_new_uint64(r->pages));
        json_object_object_add(j, "partial_pages", r->outcome == NG_REHEARSE_PARTIAL ?
                               json_object_new_uint64(r->partial_pages) : NULL);
        json_object_object_add(j, "nodes", ng_bitmap_json_list(&r->nodes));
        json_object_object_add(j, "from_nodes", ng_bitmap_json_list(&r->from_nodes));
        json_object_object_add(j, "binding", json_object_new_string(r->binding));
        json_object_object_add(j, "available_pages", json_object_new_uint64(r->avail_pages));
        json_object_object_add(j, "free_on_nodes_pages", json_object_new_uint64(r->free_on_nodes));
        json_object_object_add(j, "surplus_pages", json_object_new_uint64(r->surplus_pages));
        json_object_object_add(j, "why", json_object_new_string(r->why));
        json_object_object_add(j, "fix", r->fix[0] ? json_object_new_string(r->fix) : NULL);
        json_object_object_add(j, "exit_status", json_object_new_int(ng_rehearsal_exit_status(r)));
        return j;
}

static const char *outcome_text(const struct ng_rehearsal *r, char *buf, size_t size)
{
        char nodes[64];
        ng_bitmap_format_list(r->outcome == NG_REHEARSE_HUGE ? &r->from_nodes : &r->nodes, nodes, sizeof(nodes));
        switch (r->outcome) {
        case NG_REHEARSE_HUGE:
                snprintf(buf, size, "all in hugepages, on node%s %s", strchr(nodes, ',') || strchr(nodes, '-') ? "s" : "",
                         nodes);
                break;
        case NG_REHEARSE_PARTIAL:
                snprintf(buf, size, "partly in 4 KiB pages (%llu of %llu hugepages)",
                         (unsigned long long) r->partial_pages, (unsigned long long) r->pages);
                break;
        case NG_REHEARSE_SMALL: snprintf(buf, size, "all in 4 KiB pages (it falls back)"); break;
        case NG_REHEARSE_OFF: snprintf(buf, size, "all in 4 KiB pages, as its setting asks"); break;
        case NG_REHEARSE_NO_START: snprintf(buf, size, "it refuses to start"); break;
        case NG_REHEARSE_SIGBUS: snprintf(buf, size, "it starts, then dies of SIGBUS at a first touch on node%s %s",
                                          strchr(nodes, ',') || strchr(nodes, '-') ? "s" : "", nodes); break;
        case NG_REHEARSE_FAULT_STALL: snprintf(buf, size, "it starts, then stalls at a first touch its memory "
                                               "cgroup cannot charge"); break;
        default: snprintf(buf, size, "cannot tell"); break;
        }
        if (r->cyclops)
                snprintf(buf + strlen(buf), size - strlen(buf), "; cyclops: every page on node %d", r->cyclops_node);
        return buf;
}

static void rehearsal_text(const struct ng_instance *in, const struct ng_rehearsal *r)
{
        char what[160], size[32], page[16];
        _cleanup_free_ char *name = ng_text_dup(NG_TEXT_TERM, in->name), *why = ng_text_dup(NG_TEXT_TERM, r->why),
                            *binding = ng_text_dup(NG_TEXT_TERM, r->binding),
                            *from = ng_text_dup(NG_TEXT_TERM, r->setting_from);
        printf("%s (pid %d): %s\n", name ? name : "?", (int) in->main_pid, outcome_text(r, what, sizeof(what)));
        if (r->setting_name[0])
                printf("  setting:  %s = %s (%s)\n", r->setting_name, r->setting_value, from ? from : "?");
        if (r->bytes) {
                ng_format_kib(r->bytes / 1024, size, sizeof(size));
                ng_format_page_size(r->page_kib ? r->page_kib : 2048, page, sizeof(page));
                _cleanup_free_ char *size_from = ng_text_dup(NG_TEXT_TERM, r->size_from);
                printf("  size:     %s (%s)%s", size, size_from ? size_from : "?", r->pages ? "" : "\n");
                if (r->pages)
                        printf(", %llu pages of %s\n", (unsigned long long) r->pages, page);
        }
        if (r->binding[0])
                printf("  binding:  %s\n", binding ? binding : "?");
        printf("  why:      %s\n", why ? why : "?");
        if (r->fix[0]) {
                _cleanup_free_ char *fix = ng_text_dup(NG_TEXT_TERM, r->fix);
                printf("  fix:      %s\n", fix ? fix : "?");
        }
}

static int rehearse_all(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_audit *a,
                        const struct ng_instance *only)
{
        _cleanup_json_ struct json_object *doc = o->json ? json_object_new_object() : NULL;
        struct json_object *list = o->json ? json_object_new_array() : NULL;
        int worst = NG_EXIT_OK;
        size_t n = 0;
        if (o->json && (!doc || !list))
                return ctl_fail("rehearse", -ENOMEM);
        if (doc) {
                json_object_object_add(doc, "schema", json_object_new_int(1));
                json_object_object_add(doc, "rehearsals", list);
        }
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_instance *in = &a->instances[i];
                if ((only && in != only) || (!only && !rehearsable(in)))
                        continue;
                struct ng_rehearsal r;
                int e = ng_rehearse(s, a, in, &r);
                if (e < 0)
                        return ctl_fail("rehearse", e);
                int st = ng_rehearsal_exit_status(&r);
                worst = st > worst ? st : worst;
                if (list)
                        json_object_array_add(list, rehearsal_json(in, &r));
                else
                        rehearsal_text(in, &r);
                n++;
        }
        if (n == 0 && !o->json)
                printf("no running database instance to rehearse\n");
        if (doc) {
                json_object_object_add(doc, "exit_status", json_object_new_int(worst));
                /* ctl_print_json() puts it. */
                if (ctl_print_json(ng_steal_ptr(&doc), stdout) < 0)
                        return ctl_fail("writing output", -EIO);
        }
        return worst;
}

int ctl_rehearse(const struct ctl_opts *o)
{
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
        _ng_cleanup_(ng_audit_freep) struct ng_audit *a = NULL;
        const struct ng_instance *in = NULL;
        /* The main process's numa_maps: the policy it starts under. */
        struct ctl_opts exact = *o;
        exact.exact = true;
        int r;
        if (o->n_args > 0)
                r = ctl_audit_instance(&exact, o->args[0], &cfg, &s, &a, &in);
        else {
                if (ctl_load_config(o, &cfg) < 0)
                        return NG_EXIT_UNKNOWN;
                r = ctl_collect_for_audit(&exact, cfg, &s);
                if (r < 0)
                        return ctl_fail_read(o, r);
                r = ng_audit_run(s, cfg, &a);
                if (r < 0)
                        return ctl_fail("auditing", r);
        }
        if (r != 0)
                return r;
        return rehearse_all(o, s, a, in);
}

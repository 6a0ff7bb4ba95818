/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Renders the hugepage plan: table, sysfs writes, sysctl and boot forms. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ng-owner.h"
#include "ng-plan.h"
#include "ng-report.h"
#include "text.h"

static void nr_path(uint64_t page_kib, int node, char *buf, size_t size)
{
        snprintf(buf, size, NG_SYS_NODE_DIR "/node%d/hugepages/hugepages-%" PRIu64 "kB/nr_hugepages", node, page_kib);
}

/* "hugepagesz=2M hugepages=0:N,1:M" (per-node form, Linux 5.11+). */
void ng_plan_boot_line(const struct ng_plan *p, char *buf, size_t size)
{
        char l[32];
        ng_format_page_size(p->page_kib, l, sizeof(l));
        size_t o = (size_t) snprintf(buf, size, "hugepagesz=%s hugepages=", l);
        for (size_t i = 0; i < p->n_nodes && o < size; i++)
                o += (size_t) snprintf(buf + o, size - o, "%s%d:%" PRIu64, i ? "," : "", p->nodes[i].id,
                                       p->nodes[i].target_pages);
}

/* What the boot configuration will give each node's pool. */
static void print_boot(const struct ng_plan *p, FILE *f)
{
        bool any = false;
        for (size_t i = 0; i < p->n_nodes; i++)
                any |= p->nodes[i].has_boot;
        if (!any) {
                fprintf(f, "at boot: no pool of this size is set by the kernel command line, sysctl.d or %s "
                        "(numaguardctl hugepages apply --persist); pools made now do not survive a reboot unless "
                        "something else (a script, a unit) makes them\n", NG_HUGEPAGES_BOOT_FILE);
                return;
        }
        fprintf(f, "at boot (the kernel command line, then sysctl.d, then %s):\n", NG_HUGEPAGES_BOOT_FILE);
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_plan_node *pn = &p->nodes[i];
                if (!pn->has_boot)
                        fprintf(f, "  node %d: not set at boot\n", pn->id);
                else
                        fprintf(f, "  node %d: %s%" PRIu64 " pages (%s)%s\n", pn->id, pn->boot_split ? "about " : "",
                                pn->boot_pages, pn->boot_where,
                                pn->boot_pages < pn->target_pages ? ", fewer than the target" : "");
        }
}

int ng_report_plan_text(const struct ng_plan *p, FILE *f)
{
        assert(p && f);
        char l[32], boot[1024], sz[24];
        ng_format_page_size(p->page_kib, l, sizeof(l));
        fprintf(f, "hugepage plan for %s pages (margin %d%%, at least one page per instance)\n\n", l,
                (int) (NG_PLAN_MARGIN * 100));
        if (p->n_instances == 0)
                fprintf(f, "no instance found: nothing needs hugepages\n");
        for (size_t i = 0; i < p->n_instances; i++) {
                const struct ng_plan_instance *pi = &p->instances[i];
                char nodes[128], name[NG_TEXT_SIZE(sizeof(pi->name))];
                ng_bitmap_format_list(&pi->nodes, nodes, sizeof(nodes));
                ng_format_kib(pi->bytes / 1024, sz, sizeof(sz));
                ng_text_escape(NG_TEXT_TERM, pi->name, name, sizeof(name));
                if (pi->amm)
                        fprintf(f, "  %-32s AMM (/dev/shm files) cannot use hugepages: switch to ASMM (SGA_TARGET) "
                                "to use them\n", name);
                else if (pi->off)
                        fprintf(f, "  %-32s hugepages = off\n", name);
                else
                        fprintf(f, "  %-32s %10s -> %6" PRIu64 " pages on node%s %s\n", name, sz, pi->pages,
                                ng_bitmap_count(&pi->nodes) == 1 ? "" : "s", nodes);
        }
        fprintf(f, "\nnode      need   total    free  target  change\n");
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_plan_node *pn = &p->nodes[i];
                int64_t delta = (int64_t) pn->target_pages - (int64_t) pn->nr_pages;
                fprintf(f, "%4d  %8" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %+7" PRId64 "%s\n", pn->id,
                        pn->need_pages, pn->nr_pages, pn->free_pages, pn->target_pages, delta,
                        (uint64_t) (delta > 0 ? delta : 0) > pn->headroom_pages
                                ? "  (more than the node's free memory above its floor: reserve at boot)" : "");
        }
        if (!p->changes) {
                fprintf(f, "\nthe pools already hold what the instances need\n");
                print_boot(p, f);
                return ferror(f) ? -EIO : 0;
        }
        fprintf(f, "\nper-node writes (numaguardctl hugepages apply, or by hand):\n");
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_plan_node *pn = &p->nodes[i];
                if (pn->target_pages <= pn->nr_pages)
                        continue;
                char path[256];
                nr_path(p->page_kib, pn->id, path, sizeof(path));
                fprintf(f, "  echo %" PRIu64 " > %s\n", pn->target_pages, path);
        }
        fprintf(f, "\nglobal form (the kernel picks the nodes): sysctl -w vm.nr_hugepages=%" PRIu64 "\n",
                p->target_pages);
        ng_plan_boot_line(p, boot, sizeof(boot));
        fprintf(f, "boot form (kernel command line): %s\n", boot);
        print_boot(p, f);
        return ferror(f) ? -EIO : 0;
}

struct json_object *ng_report_plan_json(const struct ng_plan *p)
{
        struct json_object *o = json_object_new_object(), *insts = json_object_new_array(),
                           *nodes = json_object_new_array(), *writes = json_object_new_array();
        char boot[1024];
        json_object_object_add(o, "schema", json_object_new_int(NG_JSON_SCHEMA));
        json_object_object_add(o, "page_kib", json_object_new_uint64(p->page_kib));
        json_object_object_add(o, "margin", json_object_new_double(NG_PLAN_MARGIN));
        for (size_t i = 0; i < p->n_instances; i++) {
                const struct ng_plan_instance *pi = &p->instances[i];
                struct json_object *io = json_object_new_object(), *ids = json_object_new_array();
                json_object_object_add(io, "instance", json_object_new_string(pi->name));
                json_object_object_add(io, "bytes", json_object_new_uint64(pi->bytes));
                json_object_object_add(io, "pages", json_object_new_uint64(pi->pages));
                NG_BITMAP_FOREACH(id, &pi->nodes)
                        json_object_array_add(ids, json_object_new_int(id));
                json_object_object_add(io, "nodes", ids);
                json_object_object_add(io, "amm", json_object_new_boolean(pi->amm));
                json_object_object_add(io, "hugepages_off", json_object_new_boolean(pi->off));
                json_object_array_add(insts, io);
        }
        json_object_object_add(o, "instances", insts);
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_plan_node *pn = &p->nodes[i];
                struct json_object *no = json_object_new_object();
                json_object_object_add(no, "id", json_object_new_int(pn->id));
                json_object_object_add(no, "need", json_object_new_uint64(pn->need_pages));
                json_object_object_add(no, "total", json_object_new_uint64(pn->nr_pages));
                json_object_object_add(no, "free", json_object_new_uint64(pn->free_pages));
                json_object_object_add(no, "target", json_object_new_uint64(pn->target_pages));
                json_object_object_add(no, "headroom", json_object_new_uint64(pn->headroom_pages));
                json_object_object_add(no, "boot_pages", pn->has_boot ? json_object_new_uint64(pn->boot_pages) : NULL);
                static const char *const kinds[] = { [NG_BOOT_CMDLINE] = "cmdline",
                                                     [NG_BOOT_CMDLINE_SYSCTL] = "cmdline-sysctl",
                                                     [NG_BOOT_SYSCTL] = "sysctl", [NG_BOOT_TMPFILES] = "tmpfiles" };
                json_object_object_add(no, "boot_source",
                                       pn->has_boot ? json_object_new_string(kinds[pn->boot_source]) : NULL);
                json_object_object_add(no, "boot_split", json_object_new_boolean(pn->has_boot && pn->boot_split));
                json_object_object_add(no, "boot_where",
                                       pn->has_boot ? json_object_new_string(pn->boot_where) : NULL);
                json_object_array_add(nodes, no);
                if (pn->target_pages <= pn->nr_pages)
                        continue;
                char path[256];
                nr_path(p->page_kib, pn->id, path, sizeof(path));
                struct json_object *w = json_object_new_object();
                json_object_object_add(w, "path", json_object_new_string(path));
                json_object_object_add(w, "value", json_object_new_uint64(pn->target_pages));
                json_object_array_add(writes, w);
        }
        json_object_object_add(o, "nodes", nodes);
        json_object_object_add(o, "writes", writes);
        json_object_object_add(o, "changes", json_object_new_boolean(p->changes));
        json_object_object_add(o, "sysctl_nr_hugepages", json_object_new_uint64(p->target_pages));
        ng_plan_boot_line(p, boot, sizeof(boot));
        json_object_object_add(o, "boot", json_object_new_string(boot));
        return ng_json_utf8(o);
}

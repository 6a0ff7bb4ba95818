/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: where a rehearsed start may take its hugepages from
 * (rehearse-internal.h): the memory nodes of the cgroup it starts in, as
 * the cgroup's owner restores them, narrowed by a bind policy its main
 * process runs under.
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ng-owner.h"
#include "ng-format.h"
#include "rehearse-internal.h"

void ng_rehearse_appendf(char *buf, size_t size, const char *fmt, ...)
{
        size_t l = strlen(buf);
        if (l + 1 >= size)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + l, size - l, fmt, ap);
        va_end(ap);
}

/* The cgroup's memory nodes as the next start gets them: what its owner
 * writes back when it starts the instance again, else what it holds now. */
static void cgroup_binding(const struct stage *st, struct ng_bitmap *nodes)
{
        struct ng_rehearsal *r = st->r;
        const struct ng_cgroup *cg = st->in->cgroup ? ng_snapshot_cgroup(st->s, st->in->cgroup) : NULL;
        char list[64];
        if (!cg || !cg->has_cpuset) {
                /* No cpuset cgroup read: the one it runs in now, which a
                 * start from the same place inherits. */
                const struct ng_proc *pr = ng_snapshot_proc(st->s, st->in->main_pid);
                struct ng_bitmap m;
                if (pr && pr->status.has_mems_allowed) {
                        ng_idset_to_bitmap(&pr->status.mems_allowed, &m);
                        ng_bitmap_and(nodes, &m);
                        ng_bitmap_format_list(&m, list, sizeof(list));
                        snprintf(r->binding, sizeof(r->binding), "its cpuset's memory nodes %s (Mems_allowed_list)",
                                 list);
                } else
                        snprintf(r->binding, sizeof(r->binding), "no cpuset of its own");
                return;
        }
        const struct ng_owner *ow = &cg->owner;
        bool restores = ow->known && (ow->kind == NG_OWNER_SYSTEMD || ow->kind == NG_OWNER_DOCKER ||
                                      ow->kind == NG_OWNER_PODMAN || ow->kind == NG_OWNER_CGCONFIG);
        if (restores && ow->has_mems) {
                ng_bitmap_and(nodes, &ow->mems);
                ng_bitmap_format_list(&ow->mems, list, sizeof(list));
                snprintf(r->binding, sizeof(r->binding), "cpuset.mems %s as %s %.100s restores it", list,
                         ng_owner_kind_name(ow->kind), ow->name);
        } else if (restores && ow->kind != NG_OWNER_CGCONFIG) {
                snprintf(r->binding, sizeof(r->binding), "every node: %s %.100s sets no memory nodes",
                         ng_owner_kind_name(ow->kind), ow->name);
        } else {
                const struct ng_bitmap *m = ng_bitmap_empty(&cg->effective_mems) ? &cg->mems : &cg->effective_mems;
                ng_bitmap_and(nodes, m);
                ng_bitmap_format_list(m, list, sizeof(list));
                snprintf(r->binding, sizeof(r->binding), "cpuset.mems %s of cgroup %.100s, kept across a restart", list,
                         cg->path);
        }
}

/* A bind policy the main process runs under (numactl --membind, systemd's
 * NUMAPolicy=bind), as its numa_maps shows it on the segment. */
static void policy_binding(const struct stage *st, const struct ng_segment *seg, struct ng_bitmap *nodes)
{
        struct ng_rehearsal *r = st->r;
        const struct ng_proc *pr = ng_snapshot_proc(st->s, st->in->main_pid);
        const struct ng_db_settings *cfg = ng_snapshot_db_settings(st->s, st->in->main_pid);
        if (cfg && cfg->policy_known) {
                struct ng_bitmap b;
                if (cfg->policy == NG_MPOL_BIND && ng_bitmap_parse_list(cfg->policy_nodes, &b) >= 0) {
                        ng_bitmap_and(nodes, &b);
                        ng_rehearse_appendf(r->binding, sizeof(r->binding), "; policy bind:%s", cfg->policy_nodes);
                } else if (cfg->policy != NG_MPOL_DEFAULT)
                        ng_rehearse_appendf(r->binding, sizeof(r->binding), "; policy %s%s%s (no bound)",
                                ng_mpol_name((enum ng_mpol) cfg->policy), cfg->policy_nodes[0] ? ":" : "",
                                cfg->policy_nodes);
                return;
        }
        if (!pr || !pr->has_numa_maps) {
                ng_rehearse_appendf(r->binding, sizeof(r->binding), "; its memory policy unknown (numa_maps not read)");
                return;
        }
        for (size_t j = 0; seg && j < pr->n_maps; j++) {
                if (!ng_segment_maps(seg, pr, &pr->maps[j]))
                        continue;
                for (size_t k = 0; k < pr->n_numa_maps; k++) {
                        const struct ng_numa_map *nm = &pr->numa_maps[k];
                        struct ng_bitmap b;
                        if (nm->start != pr->maps[j].start)
                                continue;
                        if (nm->policy == NG_MPOL_BIND && nm->policy_nodes &&
                            ng_bitmap_parse_list(nm->policy_nodes, &b) >= 0) {
                                ng_bitmap_and(nodes, &b);
                                ng_rehearse_appendf(r->binding, sizeof(r->binding), "; policy bind:%s", nm->policy_nodes);
                        } else if (nm->policy != NG_MPOL_DEFAULT)
                                ng_rehearse_appendf(r->binding, sizeof(r->binding), "; policy %s%s%s (no bound)",
                                        ng_mpol_name(nm->policy), nm->policy_nodes && *nm->policy_nodes ? ":" : "",
                                        nm->policy_nodes ? nm->policy_nodes : "");
                        return;
                }
        }
}

void ng_rehearse_binding(const struct stage *st, const struct ng_segment *seg)
{
        st->r->nodes = ng_snapshot_memory_nodes(st->s);
        cgroup_binding(st, &st->r->nodes);
        policy_binding(st, seg, &st->r->nodes);
}

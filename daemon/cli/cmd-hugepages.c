/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numaguardctl hugepages reserve|apply`: size the hugepage pools per node,
 * dry-run first, checked against each node's free-memory floor, read back,
 * compacted and retried when the kernel grants fewer (lib/4-act/act-hugepages.c).
 */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act-json.h"
#include "cleanup.h"
#include "cmd-hugepages.h"
#include "common.h"
#include "correction-log.h"
#include "ng-act-hugepages.h"
#include "ng-action.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-plan.h"
#include "ng-snapshot.h"

static int fail_read(const struct ctl_opts *o, int r)
{
        return o->root ? ctl_fail_read(o, r) : ctl_fail("reading the host", r);
}

/* The sizes this host has pools of ("2M, 1G"). */
static void host_sizes(const struct ng_snapshot *s, char *buf, size_t size)
{
        const struct ng_hugepool *pools = s->pools;
        size_t n = s->n_pools;
        if (n == 0 && s->topo.n_nodes > 0) {
                pools = s->topo.nodes[0].pools;
                n = s->topo.nodes[0].n_pools;
        }
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                char one[16];
                ng_hugepage_size_format(pools[i].page_kib, one, sizeof(one));
                size_t len = strlen(buf);
                snprintf(buf + len, size - len, "%s%s", i ? ", " : "", one);
        }
        if (!buf[0])
                snprintf(buf, size, "none");
}

static bool host_has_size(const struct ng_snapshot *s, uint64_t kib)
{
        for (size_t i = 0; i < s->n_pools; i++)
                if (s->pools[i].page_kib == kib)
                        return true;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                for (size_t k = 0; k < s->topo.nodes[i].n_pools; k++)
                        if (s->topo.nodes[i].pools[k].page_kib == kib)
                                return true;
        return false;
}

/* Carries the plan out through the path layer (--root writes into the
 * tree) and reports it; returns the exit status. */
static int run_and_report(const struct ctl_opts *o, const struct ng_act_hugepages *a, const char *target)
{
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        _ng_cleanup_(ng_path_freep) struct ng_path *p = NULL;
        int r = ng_action_result_new(&res);
        if (r >= 0)
                r = ng_path_new(o->root, &p);
        if (r >= 0)
                r = ng_act_hugepages_run(a, p, &ng_action_ops_default, o->dry_run, res);
        /* Boot gets the targets even when the kernel granted fewer now:
         * a freshly booted kernel has the unfragmented memory. */
        if (r >= 0 && o->persist && res->outcome != NG_OUTCOME_REFUSED && res->outcome != NG_OUTCOME_TRANSIENT &&
            res->outcome != NG_OUTCOME_PERMANENT)
                r = ng_act_hugepages_persist(a, p, &ng_action_ops_default, o->dry_run, res);
        if (r < 0 && r != -E2BIG)
                r = ctl_fail("hugepages", r);
        else
                r = ctl_action_emit(o, NG_CORRECTION_HUGEPAGES, target, o->json ? ng_act_hugepages_plan_json(a) : NULL, res, NULL);
        return r;
}

/* A node that is not online or has no memory: the request is refused as
 * a safety check refuses (exit 2, numaguardctl(1)), not failed as an
 * unreadable host. Returns 0, or the exit status of the refusal. */
static int check_node(const struct ctl_opts *o, const struct ng_snapshot *s, const char *target)
{
        if (o->node < 0)
                return 0;
        const struct ng_node *nd = ng_snapshot_node(s, o->node);
        char online[256];
        if (nd && nd->has_memory)
                return 0;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        int r = ng_action_result_new(&res);
        if (r < 0)
                return ctl_fail("hugepages", r);
        ng_bitmap_format_list(&s->topo.online, online, sizeof(online));
        res->outcome = NG_OUTCOME_REFUSED;
        if (!nd)
                snprintf(res->summary, sizeof(res->summary), "--node %d: no such node online (online: %s)", o->node,
                         online[0] ? online : "none");
        else
                snprintf(res->summary, sizeof(res->summary), "--node %d: the node has no memory", o->node);
        return ctl_action_emit(o, NG_CORRECTION_HUGEPAGES, target, NULL, res, NULL);
}

static int reserve_with(const struct ctl_opts *o, const struct ng_config *cfg, const struct ng_snapshot *s,
                        uint64_t page_kib)
{
        char sizes[64], size[16], target[64];
        ng_hugepage_size_format(page_kib, size, sizeof(size));
        if (!host_has_size(s, page_kib)) {
                host_sizes(s, sizes, sizeof(sizes));
                fprintf(stderr, "numaguardctl: --size %s: this host has no %s hugepages (sizes: %s)\n", o->size, size,
                        sizes);
                return NG_EXIT_UNKNOWN;
        }
        if (o->node >= 0)
                snprintf(target, sizeof(target), "%s node %d", size, o->node);
        else
                snprintf(target, sizeof(target), "%s all nodes", size);
        int r = check_node(o, s, target);
        if (r != 0)
                return r;
        _ng_cleanup_(ng_act_hugepages_freep) struct ng_act_hugepages *a = NULL;
        _ng_cleanup_(ng_audit_freep) struct ng_audit *au = NULL;
        r = ng_act_hugepages_plan_reserve(s, cfg->node_free_floor_bytes, page_kib, (uint64_t) o->pages, o->node, &a);
        if (r == -EOPNOTSUPP) {
                fprintf(stderr, "numaguardctl: a node in scope has no %s pool\n", size);
                return NG_EXIT_UNKNOWN;
        }
        /* A shrink may take the free pages an instance's reservation needs. */
        if (r >= 0)
                r = ng_audit_run(s, cfg, &au);
        if (r >= 0)
                r = ng_act_hugepages_check(s, au, a);
        if (r < 0)
                return ctl_fail("planning the reservation", r);
        return run_and_report(o, a, target);
}

int ctl_hugepages_reserve(const struct ctl_opts *o)
{
        uint64_t page_kib;
        if (ng_hugepage_size_parse(o->size, &page_kib) < 0)
                return ctl_usage_error(o->command, "--size '%s': not a page size (2M, 1G, 2048kB, ...)", o->size);
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        return r < 0 ? fail_read(o, r) : reserve_with(o, cfg, s, page_kib);
}

static int apply_with(const struct ctl_opts *o, const struct ng_config *cfg, const struct ng_snapshot *s)
{
        _ng_cleanup_(ng_audit_freep) struct ng_audit *au = NULL;
        _ng_cleanup_(ng_plan_freep) struct ng_plan *p = NULL;
        _ng_cleanup_(ng_act_hugepages_freep) struct ng_act_hugepages *a = NULL;
        char size[16], target[64];
        int r = ng_audit_run(s, cfg, &au);
        if (r >= 0)
                r = ng_plan_hugepages(s, cfg, au, &p);
        if (r >= 0)
                r = ng_act_hugepages_plan_apply(s, cfg->node_free_floor_bytes, p, &a);
        if (r >= 0)
                r = ng_act_hugepages_check(s, au, a);
        if (r < 0)
                r = ctl_fail("planning", r);
        else {
                ng_hugepage_size_format(p->page_kib, size, sizeof(size));
                snprintf(target, sizeof(target), "%s plan", size);
                r = run_and_report(o, a, target);
        }
        return r;
}

int ctl_hugepages_apply(const struct ctl_opts *o)
{
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        return r < 0 ? fail_read(o, r) : apply_with(o, cfg, s);
}

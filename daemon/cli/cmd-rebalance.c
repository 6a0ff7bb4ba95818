/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaguardctl rebalance INSTANCE [--dry-run]: spread the instance's shared
 * segments over its nodes (lib/4-act/act-rebalance.c says how each kind of
 * segment is reached: its own file, or a hugetlb segment's attacher). Per segment: plan from the audit, exact
 * count, supply check, then the move (or, with --dry-run, what would move
 * where), each reported and logged through ctl_action_emit().
 *
 * NUMAGUARD_REBALANCE_RATE (a size per second, "64M" by default, "0" for
 * no limit) sets the migration rate limit.
 */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act-json.h"
#include "cleanup.h"
#include "cmd-rebalance.h"
#include "common.h"
#include "correction-log.h"
#include "ng-act-rebalance.h"
#include "ng-action.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-format.h"
#include "ng-kernel.h"
#include "ng-path.h"
#include "ng-report.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "parse.h"
#include "term.h"
#include "text.h"

/* The representative must still map every range where the plan found it:
 * moving through a remapped address would move someone else's pages. */
static int still_mapped(void *userdata, const struct ng_rebalance_plan *p)
{
        const struct ng_path *path = userdata;
        char *buf;
        int r = ng_path_read(path, &buf, NULL, NG_PROC_DIR "/%d/maps", (int) p->pid);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        struct ng_map *m;
        size_t n;
        r = ng_parse_maps(buf, 0, &m, &n, NULL);
        free(buf);
        if (r < 0)
                return r;
        for (size_t k = 0; k < p->n_ranges && r >= 0; k++) {
                bool found = false;
                for (size_t j = 0; j < n && !found; j++)
                        found = m[j].shared && m[j].start == p->ranges[k].start && m[j].end == p->ranges[k].end;
                if (!found)
                        r = -EAGAIN;
        }
        ng_maps_free(m, n);
        return r;
}

static int rate_from_env(uint64_t *ret)
{
        const char *v = getenv("NUMAGUARD_REBALANCE_RATE");
        if (!v || !*v)
                return 0;
        if (ng_parse_size_bytes(v, ret) < 0) {
                fprintf(stderr, "numaguardctl: NUMAGUARD_REBALANCE_RATE=%s is not a size per second\n", v);
                return -EINVAL;
        }
        return 0;
}

static void print_plan(const struct ng_rebalance_plan *p)
{
        char dest[128] = "", sz[24], label[NG_TEXT_SIZE(sizeof(p->label))];
        size_t len = 0;
        for (size_t i = 0; i < p->n_dest && len < sizeof(dest); i++)
                len += (size_t) snprintf(dest + len, sizeof(dest) - len, "%s%d", i ? "," : "", p->dest[i]);
        ng_format_kib(p->page_bytes / 1024, sz, sizeof(sz));
        if (p->via == NG_REBALANCE_VIA_SEGMENT) {
                char path[NG_TEXT_SIZE(sizeof(p->seg_path))];
                printf("%s: %" PRIu64 " resident pages of %s, every one, through the segment's own file (%s), "
                       "spread over nodes %s\n", ng_text_escape(NG_TEXT_TERM, p->label, label, sizeof(label)),
                       p->resident_pages, sz, ng_text_escape(NG_TEXT_TERM, p->seg_path, path, sizeof(path)), dest);
        } else
                printf("%s: %" PRIu64 " resident pages of %s through the page tables of pid %d, spread over nodes %s\n",
                       ng_text_escape(NG_TEXT_TERM, p->label, label, sizeof(label)), p->resident_pages, sz,
                       (int) p->pid, dest);
        if (p->unreachable_pages)
                printf("  %" PRIu64 " resident pages out of reach: %s\n", p->unreachable_pages, p->unreachable_why);
        printf("  %-6s %10s %10s %10s %10s %12s\n", "node", "before", "target", "move", "moved", "can take");
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_rebalance_node *n = &p->nodes[i];
                char mv[24], done[24];
                snprintf(mv, sizeof(mv), "%s%" PRIu64, n->in_pages ? "+" : n->out_pages ? "-" : "",
                         n->in_pages ? n->in_pages : n->out_pages);
                snprintf(done, sizeof(done), "%s%" PRIu64, n->moved_in_pages ? "+" : n->moved_out_pages ? "-" : "",
                         n->moved_in_pages ? n->moved_in_pages : n->moved_out_pages);
                printf("  %-6d %10" PRIu64 " %10" PRIu64 " %10s %10s %12" PRIu64 "%s\n", n->node, n->before_pages,
                       n->target_pages, mv, done, n->avail_pages, n->dest ? "" : "  (not a destination)");
        }
        if (p->move_pages)
                printf("  page i of an over-target node goes to node [%s][i mod %zu], or the next one still short\n",
                       dest, p->n_dest);
}

/* One segment: plan, count, move (or not), report. Returns the exit status. */
static int rebalance_segment(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_config *cfg,
                             const struct ng_audit *a, const struct ng_instance *in, const struct ng_segment *seg, uint64_t rate,
                             struct json_object *collect)
{
        _cleanup_free_ struct ng_rebalance_plan *p = calloc(1, sizeof(*p));
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        _ng_cleanup_(ng_path_freep) struct ng_path *path = NULL;
        int r = p ? ng_action_result_new(&res) : -ENOMEM;
        if (r >= 0)
                r = ng_rebalance_plan_segment(s, cfg, in, seg, p);
        if (r >= 0)
                r = ng_rebalance_plan_check(s, a, p);
        if (r >= 0 && !o->root)
                r = ng_path_new(NULL, &path);
        if (r >= 0) {
                struct ng_rebalance_opts opts = ng_rebalance_opts_for(p);
                opts.dry_run = o->dry_run;
                opts.rate_bytes_per_sec = rate;
                opts.set_policy = true;         /* the explicit command: new pages follow the instance */
                struct ng_rebalance_ops ops = ng_rebalance_ops_default;
                ops.verify = still_mapped;
                ops.userdata = path;
                if (o->root) {  /* a captured tree: the plan on its numbers, nothing counted */
                        res->outcome = p->verdict;
                        snprintf(res->summary, sizeof(res->summary), "%s: %s", p->label,
                                 p->verdict == NG_OUTCOME_DRY_RUN ? "would move pages (estimated from the tree)"
                                                                  : p->reason);
                } else {
                        char what[sizeof(p->label) + 32];
                        snprintf(what, sizeof(what), "%s %s", o->dry_run ? "counting pages of" : "moving pages of",
                                 p->label);
                        struct ctl_progress *prog = ctl_progress_start(o->term, what);
                        r = ng_rebalance_run(p, &opts, &ops, NULL, res);
                        ctl_progress_stop(prog);
                }
        }
        if (r >= 0) {
                if (p->n_dest > 0 && p->resident_pages > 0 && !o->json)
                        print_plan(p);
                /* A dry run changes and logs nothing, also when nothing would move. */
                if (o->dry_run && res->outcome == NG_OUTCOME_NOOP) {
                        res->outcome = NG_OUTCOME_DRY_RUN;
                        char was[sizeof(res->summary)];
                        memcpy(was, res->summary, sizeof(was));
                        snprintf(res->summary, sizeof(res->summary), "nothing would move: %.480s", was);
                }
                r = ctl_action_emit(o, NG_CORRECTION_REBALANCE, in->name, o->json ? ng_act_rebalance_plan_json(p) : NULL, res, collect);
        } else
                r = ctl_fail("rebalance", r);
        return r;
}

/* The next start keeps it: for a database in a systemd service, numaguard's
 * drop-in with the policy the segments were given (ng_policy_persist_run);
 * otherwise the summary says how to start it. Under --root, the plan on
 * the tree's unit files (a dry run). */
static int persist_policy(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_audit *a,
                          const struct ng_instance *in, struct json_object *collect)
{
        _cleanup_free_ struct ng_policy_persist *pp = calloc(1, sizeof(*pp));
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        _ng_cleanup_(ng_path_freep) struct ng_path *path = NULL;
        int r = pp ? ng_action_result_new(&res) : -ENOMEM;
        if (r >= 0)
                r = ng_policy_persist_plan(s, a, in, pp);
        if (r >= 0 && !pp->unit[0] && !pp->note[0])     /* no policy to keep */
                return NG_EXIT_OK;
        if (r >= 0)
                r = ng_path_new(o->root, &path);
        if (r >= 0)
                r = ng_policy_persist_run(pp, NULL, path, o->dry_run || o->root, res);
        struct json_object *plan = NULL;
        if (r >= 0 && o->json)
                plan = ng_act_policy_persist_json(pp);
        if (r >= 0 && !pp->unit[0]) {
                /* nothing written: said, not logged as a correction */
                if (o->json)
                        json_object_array_add(collect, ctl_action_json(o, NG_CORRECTION_REBALANCE, in->name, plan, res,
                                                                       false));
                else {
                        char name[NG_TEXT_SIZE(sizeof(in->name))];
                        printf("rebalance %s: %s\n", ng_text_escape(NG_TEXT_TERM, in->name, name, sizeof(name)),
                               res->summary);
                }
                r = NG_EXIT_OK;
        } else if (r >= 0)
                r = ctl_action_emit(o, NG_CORRECTION_REBALANCE, in->name, plan, res, collect);
        else
                r = ctl_fail("rebalance", r);
        return r;
}

/* write_interleave_weights = yes: the host's weights of weighted
 * interleave first, so that the pages moved now and those faulted later
 * share one ratio. */
static int write_weights(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_config *cfg,
                         const struct ng_instance *in, struct json_object *collect)
{
        if (!cfg->write_interleave_weights)
                return NG_EXIT_OK;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        _ng_cleanup_(ng_path_freep) struct ng_path *path = NULL;
        int r = ng_action_result_new(&res);
        if (r >= 0)
                r = ng_path_new(o->root, &path);
        if (r >= 0)
                r = ng_interleave_weights_run(s, in, NULL, path, o->dry_run || o->root, res);
        if (r > 0)
                r = ctl_action_emit(o, NG_CORRECTION_REBALANCE, in->name, NULL, res, collect);
        else if (r < 0)
                r = ctl_fail("rebalance", r);
        return r;
}

/* An entry of the instance with no segment's: outcome and summary alone. */
static int emit_alone(const struct ctl_opts *o, const struct ng_instance *in, enum ng_outcome outcome,
                      const char *summary, struct json_object *collect)
{
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        int r = ng_action_result_new(&res);
        if (r < 0)
                return ctl_fail("rebalance", r);
        res->outcome = outcome;
        snprintf(res->summary, sizeof(res->summary), "%s", summary);
        return ctl_action_emit(o, NG_CORRECTION_REBALANCE, in->name, NULL, res, collect);
}

/* With --json, one document: the instance and one entry per segment. */
static int rebalance_instance(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_config *cfg,
                              const struct ng_audit *a, const struct ng_instance *in, uint64_t rate)
{
        int worst = NG_EXIT_OK;
        size_t done = 0;
        struct json_object *segs = o->json ? json_object_new_array() : NULL;
        if (o->json && !segs)
                return ctl_fail("rebalance", -ENOMEM);
        /* the host's weights, every segment, then where the next start is recorded */
        struct json_object *weights = o->json ? json_object_new_array() : NULL;
        worst = write_weights(o, s, cfg, in, weights);  /* failed: the pages still move by the bandwidth */
        for (size_t i = 0; i < in->n_segs; i++) {
                const struct ng_segment *seg = &a->segments[in->segs[i]];
                if (seg->kind == NG_SEG_PRIVATE)
                        continue;
                int r = rebalance_segment(o, s, cfg, a, in, seg, rate, segs);
                worst = r > worst ? r : worst;
                done++;
        }
        struct json_object *next = o->json ? json_object_new_array() : NULL;
        if (done > 0 && worst <= NG_EXIT_WARNING) {
                int r = persist_policy(o, s, a, in, next);
                worst = r > worst ? r : worst;
        }
        if (done == 0 && in->n_pids == 0) {
                /* Nothing of it runs: not "nothing to do", which would
                 * tell a script the instance is fine. */
                char why[sizeof(in->name) + 128];
                snprintf(why, sizeof(why), "instance %s was not found: no process matches it "
                         "(INSTANCE_NOT_FOUND), so it has no shared segment to rebalance", in->name);
                worst = emit_alone(o, in, NG_OUTCOME_REFUSED, why, segs);
        } else if (done == 0)
                worst = emit_alone(o, in, o->dry_run ? NG_OUTCOME_DRY_RUN : NG_OUTCOME_NOOP,
                                   "no shared segment to rebalance", segs);
        if (!o->json)
                return worst;
        struct json_object *j = ng_act_rebalance_json(in->name, o->dry_run, weights, segs, next, worst);
        if (!j)
                return ctl_fail("rebalance", -ENOMEM);
        return ctl_print_json(j, stdout) < 0 ? ctl_fail("writing output", -EIO) : worst;
}

int ctl_rebalance(const struct ctl_opts *o)
{
        uint64_t rate = NG_REBALANCE_OPTS_DEFAULT.rate_bytes_per_sec;
        if (o->root && !o->dry_run)
                return ctl_usage_error(o->command, "moves pages of live processes: --root only with --dry-run");
        if (rate_from_env(&rate) < 0)
                return NG_EXIT_UNKNOWN;
        struct ng_config *cfg;
        struct ng_snapshot *s;
        struct ng_audit *a;
        const struct ng_instance *in;
        int r = ctl_audit_instance(o, o->args[0], &cfg, &s, &a, &in);
        if (r != 0)
                return r;
        r = rebalance_instance(o, s, cfg, a, in, rate);
        ctl_audit_done(cfg, s, a);
        return r;
}

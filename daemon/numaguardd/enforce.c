/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Enforce mode: the daemon carries out the corrections an instance's
 * enforce= allows when its findings call for them -- cpuset on
 * CPUSET_DRIFT/REMOTE_MEMORY/CPUSET_NOT_PERSISTENT (through the cpuset's
 * owner, as numaguardctl cpuset apply: the unit's properties over sd-bus,
 * the cgconfig group's file, then the live files), hugepages on
 * HUGEPAGE_SHORTFALL/HUGEPAGE_NODE_SHORTFALL (live pools only: the boot
 * configuration is the administrator's, see numaguardd(8)), rebalance on
 * CYCLOPS (the correction column of the codes' table, ng-codes.h). Each
 * (instance, kind) acts at most once per cooldown; transient errors are
 * retried on later polls up to ENFORCE_MAX_TRANSIENT times, a permanent
 * error marks the target unmanaged with one warning. Every attempt is logged at NOTICE with the
 * action's MESSAGE_ID.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "enforce.h"
#include "log.h"
#include "manager.h"
#include "ng-act-cpuset.h"
#include "ng-act-hugepages.h"
#include "ng-act-rebalance.h"
#include "ng-action.h"
#include "ng-audit.h"
#include "ng-codes.h"
#include "ng-config.h"
#include "ng-correction.h"
#include "ng-path.h"
#include "ng-plan.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "sink.h"
#include "util.h"

static bool called_for(const struct ng_audit *a, const struct ng_instance *in, enum ng_correction k)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (!strcmp(a->findings[i].instance, in->name) &&
                    ng_code_info(a->findings[i].code)->correction == (int) k)
                        return true;
        return false;
}

static struct enforce_entry *entry(struct enforce_table *t, const char *instance, enum ng_correction k)
{
        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].kind == k && !strcmp(t->v[i].instance, instance))
                        return &t->v[i];
        if (ng_grow(&t->v, NULL, t->n, sizeof(*t->v), 0) < 0)
                return NULL;
        struct enforce_entry *e = &t->v[t->n++];
        *e = (struct enforce_entry) { .kind = k };
        snprintf(e->instance, sizeof(e->instance), "%s", instance);
        return e;
}

static int do_cpuset(struct manager *m, const struct ng_snapshot *s, const struct ng_audit *a,
                     const struct ng_instance *in, struct ng_action_result *res)
{
        const struct ng_action_ops *ops = &ng_action_ops_default;
        struct ng_cpuset_bounds parent;
        struct ng_cpuset_plan plan;
        bool have_parent = ng_cpuset_parent_read(m->path, ops, s, in, &parent) >= 0;
        int r = ng_cpuset_plan(s, in, have_parent ? &parent : NULL, &plan);
        if (r >= 0)
                r = ng_cpuset_plan_check(s, a, &plan);
        return r < 0 ? r : ng_cpuset_apply(m->path, ops, &plan, false, res);
}

static int do_hugepages(struct manager *m, const struct ng_snapshot *s, const struct ng_audit *a,
                        struct ng_action_result *res)
{
        _ng_cleanup_(ng_plan_freep) struct ng_plan *plan = NULL;
        _ng_cleanup_(ng_act_hugepages_freep) struct ng_act_hugepages *act = NULL;
        int r = ng_plan_hugepages(s, m->config, a, &plan);
        if (r >= 0)
                r = ng_act_hugepages_plan_apply(s, m->config->node_free_floor_bytes, plan, &act);
        if (r >= 0)
                r = ng_act_hugepages_check(s, a, act);
        if (r >= 0)
                r = ng_act_hugepages_run(act, m->path, &ng_action_ops_default, false, res);
        /* Live pools only: recording them for boot rewrites the host's boot
         * configuration, which stays the administrator's call. */
        if (r >= 0 && (res->outcome == NG_OUTCOME_DONE || res->outcome == NG_OUTCOME_PARTIAL)) {
                size_t l = strlen(res->summary);
                snprintf(res->summary + l, sizeof(res->summary) - l,
                         "; live only, not recorded for boot (numaguardctl hugepages apply --persist records it)");
        }
        return r;
}

/* Every segment of the instance that can move; the worst outcome wins and
 * the summaries are joined. Trees (--root) have no process to move. */
static int do_rebalance(struct manager *m, const struct ng_snapshot *s, const struct ng_audit *a,
                        const struct ng_instance *in, struct ng_action_result *res)
{
        if (!ng_path_is_live(m->path)) {
                res->outcome = NG_OUTCOME_REFUSED;
                snprintf(res->summary, sizeof(res->summary), "pages of a captured tree cannot move");
                return 0;
        }
        _cleanup_free_ struct ng_rebalance_plan *plan = calloc(1, sizeof(*plan));
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *one = NULL;
        int r = plan ? ng_action_result_new(&one) : -ENOMEM;
        res->outcome = NG_OUTCOME_NOOP;
        for (size_t k = 0; k < in->n_segs && r >= 0; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (seg->kind == NG_SEG_PRIVATE)
                        continue;
                ng_action_result_reset(one);
                r = ng_rebalance_plan_segment(s, m->config, in, seg, plan);
                struct ng_rebalance_opts opts = ng_rebalance_opts_for(plan);
                opts.set_policy = true;         /* enforce = rebalance: new pages follow the instance */
                if (r >= 0)
                        r = ng_rebalance_plan_check(s, a, plan);
                if (r >= 0)
                        r = ng_rebalance_run(plan, &opts, &ng_rebalance_ops_default, NULL, one);
                if (r < 0 || one->outcome == NG_OUTCOME_NOOP)
                        continue;
                /* DONE < PARTIAL < REFUSED < TRANSIENT < PERMANENT */
                if (res->outcome == NG_OUTCOME_NOOP || one->outcome > res->outcome)
                        res->outcome = one->outcome;
                size_t l = strlen(res->summary);
                snprintf(res->summary + l, sizeof(res->summary) - l, "%s%s", l ? "; " : "", one->summary);
                if (!res->error)
                        res->error = one->error;
        }
        if (r >= 0 && res->summary[0] == '\0')
                snprintf(res->summary, sizeof(res->summary), "nothing to move");
        return r;
}

static void settle(struct manager *m, struct enforce_entry *e, const struct ng_action_result *res)
{
        bool give_up = res->outcome == NG_OUTCOME_PERMANENT ||
                       (res->outcome == NG_OUTCOME_TRANSIENT && ++e->transient >= ENFORCE_MAX_TRANSIENT);
        if (res->outcome != NG_OUTCOME_TRANSIENT && res->outcome != NG_OUTCOME_PERMANENT)
                e->transient = 0;
        if (!give_up)
                return;
        e->unmanaged = true;
        m->enforce.failures++;
        log_warning("%s of %s failed (%s); the target is unmanaged until numaguardd restarts",
                    ng_correction_kind(e->kind)->name, e->instance, res->summary);
}

void enforce_run(struct manager *m, const struct ng_snapshot *s, const struct ng_audit *a)
{
        if (m->config->mode != NG_MODE_ENFORCE)
                return;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct ng_action_result *res = NULL;
        int r = ng_action_result_new(&res);
        if (r < 0) {
                log_error_errno(r, "Enforcing, ignoring");
                return;
        }
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_instance *in = &a->instances[i];
                if (in->origin != NG_INST_CONFIGURED || !in->cfg->enforce)
                        continue;
                for (int k = 0; k < NG_CORRECTION_MAX_; k++) {
                        if (!(in->cfg->enforce & ng_correction_kind((enum ng_correction) k)->enforce_bit) || !called_for(a, in, (enum ng_correction) k))
                                continue;
                        struct enforce_entry *e = entry(&m->enforce, in->name, (enum ng_correction) k);
                        if (!e || e->unmanaged || (e->last_usec && now - e->last_usec < m->config->cooldown_usec))
                                continue;
                        e->last_usec = now;
                        ng_action_result_reset(res);
                        r = k == NG_CORRECTION_CPUSET ? do_cpuset(m, s, a, in, res)
                              : k == NG_CORRECTION_HUGEPAGES ? do_hugepages(m, s, a, res)
                              : do_rebalance(m, s, a, in, res);
                        if (r < 0) {
                                log_error_errno(r, "Planning %s of %s, ignoring", ng_correction_kind((enum ng_correction) k)->name, in->name);
                                continue;
                        }
                        m->enforce.actions++;
                        if ((unsigned) res->outcome <= NG_OUTCOME_PERMANENT)
                                m->enforce.outcomes[k][res->outcome]++;
                        m->enforce.check_refused[k] += res->check_refused;
                        sink_action(&m->sink, (enum ng_correction) k, in->name, res);
                        settle(m, e, res);
                }
        }
        ng_action_result_free(res);
}

void enforce_table_free(struct enforce_table *t)
{
        free(t->v);
        *t = (struct enforce_table) {0};
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaguardctl cpuset apply INSTANCE [--dry-run]: the instance cgroup's
 * cpuset.mems / cpuset.cpus set to what its policy wants (ng-act-cpuset.h).
 * This is the administrator's explicit request, so it does not look at the
 * instance's enforce= bits: those gate what numaguardd does on its own.
 */

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "act-json.h"
#include "cleanup.h"
#include "cmd-cpuset.h"
#include "common.h"
#include "correction-log.h"
#include "ng-act-cpuset.h"
#include "ng-action.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-snapshot.h"

/* Plans against what the parent cgroup allows, read now, and carries it out. */
static int apply(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_audit *a,
                 const struct ng_instance *in)
{
        struct ng_path *p;
        int r = ng_path_new(o->root, &p);
        if (r < 0)
                return ctl_fail("path", r);
        const struct ng_action_ops *ops = &ng_action_ops_default;
        struct ng_cpuset_bounds parent;
        bool have_parent = ng_cpuset_parent_read(p, ops, s, in, &parent) >= 0;
        struct ng_cpuset_plan plan;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        r = ng_cpuset_plan(s, in, have_parent ? &parent : NULL, &plan);
        if (r >= 0)
                r = ng_cpuset_plan_check(s, a, &plan);
        if (r >= 0)
                r = ng_action_result_new(&res);
        if (r >= 0)
                r = ng_cpuset_apply(p, ops, &plan, o->dry_run, res);
        ng_path_free(p);
        if (r < 0)
                return ctl_fail("cpuset apply", r);
        r = ctl_action_emit(o, NG_CORRECTION_CPUSET, in->name, o->json ? ng_act_cpuset_plan_json(&plan, o->root) : NULL, res, NULL);
        if (fflush(stdout) != 0)
                return ctl_fail("writing output", -EIO);
        return r;
}

int ctl_cpuset(const struct ctl_opts *o)
{
        struct ng_config *cfg;
        struct ng_snapshot *s;
        struct ng_audit *a;
        const struct ng_instance *in;
        int r = ctl_audit_instance(o, o->args[0], &cfg, &s, &a, &in);
        if (r != 0)
                return r;
        r = apply(o, s, a, in);
        ctl_audit_done(cfg, s, a);
        return r;
}

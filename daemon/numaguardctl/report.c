/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reporting commands: audit, topology, segments, hugepages plan. */

#include <errno.h>
#include <stdio.h>

#include "ctl.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-plan.h"
#include "ng-report.h"

static int load(const struct ctl_opts *o, bool procs, struct ng_snapshot **ret)
{
        struct ng_path *p;
        int r = ng_path_new(o->root, &p);
        if (r < 0)
                return r;
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.skip_procs = !procs;
        if (o->exact)
                co.placement = NG_PLACEMENT_EXACT;
        r = ng_snapshot_collect(p, &co, ret);
        ng_path_free(p);
        return r;
}

int ctl_topology(const struct ctl_opts *o)
{
        struct ng_snapshot *s;
        int r = load(o, false, &s);
        if (r < 0)
                return ctl_fail_read(o, r);
        r = ctl_render_topology(s, o->json, stdout);
        ng_snapshot_free(s);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r < 0 ? ctl_fail("writing output", r) : NG_EXIT_OK;
}

int ctl_segments(const struct ctl_opts *o)
{
        struct ng_snapshot *s;
        int r = load(o, true, &s);
        if (r < 0)
                return ctl_fail_read(o, r);
        r = ctl_render_segments(s, o->json, stdout);
        ng_snapshot_free(s);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r < 0 ? ctl_fail("listing segments", r) : NG_EXIT_OK;
}

int ctl_audit(const struct ctl_opts *o)
{
        struct ng_config *cfg;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        struct ng_snapshot *s = NULL;
        struct ng_audit *a = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        if (r < 0)
                r = ctl_fail_read(o, r);
        else if ((r = ng_audit_run(s, cfg, &a)) < 0)
                r = ctl_fail("auditing", r);
        else {
                r = o->json ? ctl_print_json(ng_report_audit_json(s, a), stdout)
                           : ng_report_audit_text_flags(s, a, o->verbose ? NG_REPORT_VERBOSE : 0, stdout);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
                r = r < 0 ? ctl_fail("writing output", r) : ng_audit_exit_status(a);
        }
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        return r;
}

int ctl_hugepages_plan(const struct ctl_opts *o)
{
        struct ng_config *cfg;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        struct ng_snapshot *s = NULL;
        struct ng_audit *a = NULL;
        struct ng_plan *p = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        if (r < 0)
                r = ctl_fail_read(o, r);
        else if ((r = ng_audit_run(s, cfg, &a)) < 0 || (r = ng_plan_hugepages(s, cfg, a, &p)) < 0)
                r = ctl_fail("planning", r);
        else {
                r = o->json ? ctl_print_json(ng_report_plan_json(p), stdout) : ng_report_plan_text(p, stdout);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
                r = r < 0 ? ctl_fail("writing output", r) : (p->changes ? NG_EXIT_WARNING : NG_EXIT_OK);
        }
        ng_plan_free(p);
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        return r;
}

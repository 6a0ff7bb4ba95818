/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reporting commands: audit, topology, segments, hugepages plan. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cmd-report.h"
#include "common.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-plan.h"
#include "ng-report.h"
#include "ng-snapshot.h"
#include "text.h"

static bool named(const struct ctl_opts *o, const char *name)
{
        for (size_t i = 0; i < o->n_instances; i++)
                if (strcmp(o->instances[i], name) == 0)
                        return true;
        return false;
}

/* Whether the audit knows name: an instance, or one a finding names (a
 * configured instance that matches no process has only its finding). */
static bool known(const struct ng_audit *a, const char *name)
{
        if (ng_audit_instance(a, name))
                return true;
        for (size_t i = 0; i < a->n_findings; i++)
                if (strcmp(a->findings[i].instance, name) == 0)
                        return true;
        return false;
}

static int unknown_instance(const struct ng_audit *a, const char *name)
{
        char e[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)];
        fprintf(stderr, "numaguardctl: audit: no instance '%s'; known instances:",
                ng_text_escape(NG_TEXT_TERM, name, e, sizeof(e)));
        for (size_t i = 0; i < a->n_instances; i++)
                fprintf(stderr, " %s", ng_text_escape(NG_TEXT_TERM, a->instances[i].name, e, sizeof(e)));
        fprintf(stderr, "%s\n", a->n_instances ? "" : " (none)");
        return NG_EXIT_UNKNOWN;
}

/* The arrays of a view (its instances' segment lists included). */
static void view_free(struct ng_audit *v)
{
        for (size_t i = 0; v->instances && i < v->n_instances; i++)
                free(v->instances[i].segs);
        free(v->instances);
        free(v->segments);
        free(v->findings);
}

/* The segments of the view's instances, renumbered; map: old index ->
 * new + 1 (0: not kept). */
static int view_segments(const struct ng_audit *a, struct ng_audit *v)
{
        _cleanup_free_ size_t *map = calloc(a->n_segments + 1, sizeof(*map));
        v->segments = calloc(a->n_segments + 1, sizeof(*v->segments));
        if (!map || !v->segments)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_instances; i++) {
                struct ng_instance *in = &v->instances[i];
                size_t *segs = calloc(in->n_segs + 1, sizeof(*segs));
                if (!segs) {
                        for (size_t j = i; j < v->n_instances; j++)
                                v->instances[j].segs = NULL;    /* still a's */
                        return -ENOMEM;
                }
                for (size_t k = 0; k < in->n_segs; k++) {
                        size_t old = in->segs[k];
                        if (!map[old]) {
                                v->segments[v->n_segments] = a->segments[old];
                                map[old] = ++v->n_segments;
                        }
                        segs[k] = map[old] - 1;
                }
                in->segs = segs;
        }
        return 0;
}

/*
 * audit --instance: the audit as if only the named instances existed, as a
 * shallow copy (what it points to stays a's): their segments, their
 * findings and the host-wide ones that bear on one of them
 * (ng_finding_bears_on(): what they use, the host files their audit rests
 * on), never one about other processes, nor those unreadable_ok
 * acknowledges.
 */
static int audit_view(const struct ctl_opts *o, const struct ng_audit *a, struct ng_audit *v)
{
        *v = *a;
        v->instances = calloc(a->n_instances + 1, sizeof(*v->instances));
        v->findings = calloc(a->n_findings + 1, sizeof(*v->findings));
        v->segments = NULL;
        v->n_instances = v->n_findings = v->n_segments = 0;
        v->acknowledged = NULL;
        v->n_acknowledged = 0;
        if (!v->instances || !v->findings)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_instances; i++)
                if (named(o, a->instances[i].name))
                        v->instances[v->n_instances++] = a->instances[i];
        int r = view_segments(a, v);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *fd = &a->findings[i];
                bool keep = fd->instance[0] && named(o, fd->instance);
                for (size_t k = 0; k < v->n_instances && !keep && !fd->instance[0]; k++)
                        keep = ng_finding_bears_on(v, fd, &v->instances[k]);
                if (keep)
                        v->findings[v->n_findings++] = *fd;
        }
        return 0;
}

static int print_audit(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_audit *a)
{
        int r = o->json ? ctl_print_json(ng_report_audit_json(s, a), stdout)
                        : ng_report_audit_text_flags(s, a, o->verbose ? NG_REPORT_VERBOSE : 0, stdout);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r < 0 ? ctl_fail("writing output", r) : ng_audit_exit_status(a);
}

static int report_audit(const struct ctl_opts *o, const struct ng_snapshot *s, const struct ng_audit *a)
{
        if (o->n_instances == 0)
                return print_audit(o, s, a);
        for (size_t i = 0; i < o->n_instances; i++)
                if (!known(a, o->instances[i]))
                        return unknown_instance(a, o->instances[i]);
        struct ng_audit v;
        int r = audit_view(o, a, &v);
        r = r < 0 ? ctl_fail("auditing", r) : print_audit(o, s, &v);
        view_free(&v);
        return r;
}

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
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
        _ng_cleanup_(ng_audit_freep) struct ng_audit *a = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        if (r < 0)
                r = ctl_fail_read(o, r);
        else if ((r = ng_audit_run(s, cfg, &a)) < 0)
                r = ctl_fail("auditing", r);
        else
                r = report_audit(o, s, a);
        return r;
}

int ctl_hugepages_plan(const struct ctl_opts *o)
{
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
        _ng_cleanup_(ng_audit_freep) struct ng_audit *a = NULL;
        _ng_cleanup_(ng_plan_freep) struct ng_plan *p = NULL;
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
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpuset apply: an instance cgroup's cpuset.mems / cpuset.cpus set to what
 * its policy wants (targets and ordering: ng-act-cpuset.h).
 *
 * Why not libcgroup: cgroup_modify_cgroup() writes every value set on a
 * controller in one call, in its own order, and finds the hierarchy from the
 * live host's mount table. The order of the writes is the whole point here
 * (widen, then narrow, each read back before the next), --root and the unit
 * tests need the root prefix, and failures are injected through the ops
 * table; none of that can pass through libcgroup. The writes go through the
 * path layer instead: the same open/write/close on the cgroupfs file that
 * libcgroup would do, on the directory the snapshot found from
 * /proc/self/mountinfo (v1 cpuset hierarchy or the cgroup2 mount).
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act-cpuset-internal.h"
#include "action-internal.h"
#include "act-docker-internal.h"
#include "cleanup.h"
#include "owner.h"

/* ---- executing ---- */

struct step {
        const char *file;       /* "cpuset.mems" or "cpuset.cpus" */
        struct ng_bitmap value;
};

struct exec {
        const struct ng_path *p;
        const struct ng_action_ops *ops;
        const struct ng_cpuset_plan *plan;
        bool dry_run;
        struct ng_action_result *res;
        struct ng_bitmap cur_cpus, cur_mems;    /* read just before writing */
        struct ng_bitmap now_cpus, now_mems;    /* after the writes that took */
        struct step steps[4];
        size_t n_steps, n_done;
};

static void add_step(struct exec *x, const char *file, const struct ng_bitmap *value)
{
        x->steps[x->n_steps++] = (struct step) { .file = file, .value = *value };
}

/* Widen (mems, cpus), then narrow (cpus, then mems so memory moves last).
 * A widening step is left out when the union is already the current value
 * (a pure narrowing) or the target (a pure widening). */
static void plan_steps(struct exec *x)
{
        const struct ng_cpuset_plan *pl = x->plan;
        bool do_mems = pl->write_mems && !ng_bitmap_equal(&x->cur_mems, &pl->mems);
        bool do_cpus = pl->write_cpus && !ng_bitmap_equal(&x->cur_cpus, &pl->cpus);
        struct ng_bitmap um = x->cur_mems, uc = x->cur_cpus;
        ng_bitmap_or(&um, &pl->mems);
        ng_bitmap_or(&uc, &pl->cpus);
        if (do_mems && !ng_bitmap_equal(&um, &x->cur_mems) && !ng_bitmap_equal(&um, &pl->mems))
                add_step(x, "cpuset.mems", &um);
        if (do_cpus && !ng_bitmap_equal(&uc, &x->cur_cpus) && !ng_bitmap_equal(&uc, &pl->cpus))
                add_step(x, "cpuset.cpus", &uc);
        if (do_cpus)
                add_step(x, "cpuset.cpus", &pl->cpus);
        if (do_mems)
                add_step(x, "cpuset.mems", &pl->mems);
}

static void summarize(struct ng_action_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void summarize(struct ng_action_result *res, const char *fmt, ...)
{
        size_t n = strlen(res->summary);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->summary + n, sizeof(res->summary) - n, fmt, ap);
        va_end(ap);
}

/* "cgroup v2 /oracle: cpuset.mems 3 -> 0, cpuset.cpus 0 unchanged (policy local)" */
static void describe_change(struct exec *x)
{
        const struct ng_cpuset_plan *pl = x->plan;
        bool m = pl->write_mems && !ng_bitmap_equal(&x->cur_mems, &pl->mems);
        bool c = pl->write_cpus && !ng_bitmap_equal(&x->cur_cpus, &pl->cpus);
        summarize(x->res, "cgroup v%d %s: cpuset.mems %s", pl->version, pl->cgroup, ng_cpuset_list_s(&x->cur_mems).s);
        if (m)
                summarize(x->res, " -> %s", ng_cpuset_list_s(&pl->mems).s);
        summarize(x->res, "%s, cpuset.cpus %s", m ? "" : " unchanged", ng_cpuset_list_s(&x->cur_cpus).s);
        if (c)
                summarize(x->res, " -> %s", ng_cpuset_list_s(&pl->cpus).s);
        summarize(x->res, "%s (policy %s)", c ? "" : " unchanged", ng_config_policy_name(pl->policy));
}

/* What happens to memory already allocated when mems change. */
static void describe_memory(struct exec *x)
{
        const struct ng_cpuset_plan *pl = x->plan;
        if (!pl->write_mems || ng_bitmap_equal(&x->cur_mems, &pl->mems))
                return;
        if (pl->version == 2 && pl->memory_migrate == 0)
                summarize(x->res, "; cgroup v2 before Linux 5.15 moves no page on a cpuset.mems write: pages already "
                          "allocated stay where they are, only new allocations go to node(s) %s "
                          "(numaguardctl rebalance moves them)", ng_cpuset_list_s(&pl->mems).s);
        else if (pl->version == 2)
                summarize(x->res, "; the kernel migrates the tasks' memory on the cpuset.mems write (%s: "
                          "costly, and pages it cannot move stay where they are)",
                          pl->memory_migrate == 1 ? "cgroup v2 since Linux 5.15" : "if it is Linux 5.15 or later");
        else if (pl->memory_migrate == 1)
                summarize(x->res, "; cpuset.memory_migrate=1: the kernel moves the tasks' pages to node(s) %s",
                          ng_cpuset_list_s(&pl->mems).s);
        else
                summarize(x->res, "; cpuset.memory_migrate=%s: pages already allocated stay where they are, only new "
                          "allocations go to node(s) %s (set cpuset.memory_migrate=1 to move them)",
                          pl->memory_migrate == 0 ? "0" : "unknown", ng_cpuset_list_s(&pl->mems).s);
}

/* 0: written and read back as written (or recorded, in a dry run); 1: it
 * reads back otherwise (outcome and summary set); < 0: the write's -errno. */
static int do_step(struct exec *x, const struct step *st)
{
        char path[PATH_MAX], value[256];
        if (snprintf(path, sizeof(path), "%s/%s", x->plan->dir, st->file) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        ng_bitmap_format_list(&st->value, value, sizeof(value));
        int r = ng_action_write(x->ops, x->p, x->res, x->dry_run, path, value);
        if (r < 0 || x->dry_run)
                return r;
        /* The kernel prints its own form ("0,1" reads back "0-1"): compare sets. */
        struct ng_bitmap back;
        const char *after = x->res->writes[x->res->n_writes - 1].after;
        if (ng_bitmap_parse_list(after, &back) < 0 || !ng_bitmap_equal(&back, &st->value)) {
                x->res->outcome = x->n_done > 0 ? NG_OUTCOME_PARTIAL : NG_OUTCOME_PERMANENT;
                summarize(x->res, "%s reads back as '%s' after writing %s; ", path, after, value);
                return 1;
        }
        *(strcmp(st->file, "cpuset.mems") ? &x->now_cpus : &x->now_mems) = st->value;
        x->n_done++;
        return 0;
}

static void describe_failure(struct exec *x, int r, const struct step *st)
{
        const struct ng_cpuset_plan *pl = x->plan;
        if (r < 0) {
                x->res->outcome = ng_outcome_for_errno(r);
                summarize(x->res, "writing %s to %s/%s failed: %s; ", ng_cpuset_list_s(&st->value).s, pl->dir, st->file,
                          strerror(-r));
        }
        summarize(x->res, "%s: cgroup v%d %s has cpuset.mems %s, cpuset.cpus %s (wanted mems %s, cpus %s, policy %s)",
                  x->n_done > 0 ? "some writes took, the cpuset is left valid" : "nothing changed", pl->version,
                  pl->cgroup, ng_cpuset_list_s(&x->now_mems).s, ng_cpuset_list_s(&x->now_cpus).s, ng_cpuset_list_s(&pl->mems).s,
                  ng_cpuset_list_s(&pl->cpus).s, ng_config_policy_name(pl->policy));
}

static void run_steps(struct exec *x)
{
        for (size_t i = 0; i < x->n_steps; i++) {
                int r = do_step(x, &x->steps[i]);
                if (r != 0) {
                        describe_failure(x, r, &x->steps[i]);
                        return;
                }
        }
        x->res->outcome = x->dry_run ? NG_OUTCOME_DRY_RUN : NG_OUTCOME_DONE;
        if (x->dry_run)
                summarize(x->res, "would set ");
        describe_change(x);
        describe_memory(x);
}

/* ---- through the owner ---- */

/* Whether the owner would put back another value than the target for one
 * set. An inherited (empty) live set whose target is what it already has
 * is left to inherit: pinning it would change what it means. */
static bool owner_needs(const struct ng_cpuset_plan *pl, bool mems)
{
        const struct ng_owner *ow = &pl->owner;
        const struct ng_bitmap *target = mems ? &pl->mems : &pl->cpus;
        bool write = mems ? pl->write_mems : pl->write_cpus;
        bool inherited = mems ? pl->mems_inherited : pl->cpus_inherited;
        bool has = mems ? ow->has_mems : ow->has_cpus;
        const struct ng_bitmap *declared = mems ? &ow->mems : &ow->cpus;
        if (write)
                return !has || !ng_bitmap_equal(declared, target);
        if (ow->kind == NG_OWNER_SYSTEMD || (ow->kind == NG_OWNER_DOCKER && !ow->known))
                return inherited ? has : !has || !ng_bitmap_equal(declared, target);
        return has && !ng_bitmap_equal(declared, target);
}

static void unit_prop(char *buf, size_t size, const char *prop, bool has, const struct ng_bitmap *set)
{
        char l[200] = "";
        if (has)
                ng_bitmap_format_list(set, l, sizeof(l));
        snprintf(buf, size, "%s=%s", prop, l);
}

/* 0, also when res is full (not recorded), or -ENOMEM. */
static int record_unit(struct ng_action_result *res, const struct ng_cpuset_plan *pl, bool mems)
{
        const char *prop = mems ? "AllowedMemoryNodes" : "AllowedCPUs";
        struct ng_write *w;
        int r = ng_action_result_add(res, NG_WRITE_UNIT_PROPERTY, &w);
        if (r < 0)
                return r == -E2BIG ? 0 : r;
        snprintf(w->path, sizeof(w->path), "%s", pl->owner.name);
        unit_prop(w->value, sizeof(w->value), prop, true, mems ? &pl->mems : &pl->cpus);
        unit_prop(w->before, sizeof(w->before), prop, mems ? pl->owner.has_mems : pl->owner.has_cpus,
                  mems ? &pl->owner.mems : &pl->owner.cpus);
        return 0;
}

/* systemd applies the properties to the cgroup from its event loop, after
 * the call returned: read until the files show the targets (bounded). */
static int wait_live(struct exec *x)
{
        int r = 0;
        for (int i = 0; i < 50; i++) {
                r = ng_cpuset_read_current(x->p, x->ops, x->plan, false, &x->now_cpus);
                if (r >= 0)
                        r = ng_cpuset_read_current(x->p, x->ops, x->plan, true, &x->now_mems);
                if (r >= 0 && ng_bitmap_equal(&x->now_cpus, &x->plan->cpus) &&
                    ng_bitmap_equal(&x->now_mems, &x->plan->mems))
                        return 1;
                x->ops->sleep_usec(x->ops->userdata, 100000);
        }
        return r;
}

static void apply_systemd(struct exec *x, const struct ng_action_ops *ops)
{
        const struct ng_cpuset_plan *pl = x->plan;
        bool c = owner_needs(pl, false), m = owner_needs(pl, true);
        int r = c ? record_unit(x->res, pl, false) : 0;
        if (r >= 0 && m)
                r = record_unit(x->res, pl, true);
        if (r < 0) {
                x->res->outcome = ng_outcome_for_errno(r);
                summarize(x->res, "recording the properties of systemd unit %s failed: %s; nothing changed",
                          pl->owner.name, strerror(-r));
                return;
        }
        if (x->dry_run) {
                x->res->outcome = NG_OUTCOME_DRY_RUN;
                summarize(x->res, "would set the properties on systemd unit %s (at runtime and persistently, as "
                          "systemctl set-property), which sets ", pl->owner.name);
                describe_change(x);
                describe_memory(x);
                return;
        }
        r = ops->set_unit_cpuset(ops->userdata, x->p, pl->owner.name, pl->dir, c ? &pl->cpus : NULL,
                                 m ? &pl->mems : NULL);
        if (r < 0) {
                x->res->outcome = ng_outcome_for_errno(r);
                x->res->error = r;
                summarize(x->res, "setting the properties of systemd unit %s failed: %s; nothing changed",
                          pl->owner.name, strerror(-r));
                return;
        }
        struct ng_unit_cpuset back = {0};
        int rb = ops->get_unit_cpuset(ops->userdata, x->p, pl->owner.name, pl->cgroup, &back);
        for (size_t i = 0; i < x->res->n_writes; i++) {
                struct ng_write *w = &x->res->writes[i];
                bool wm = strstr(w->value, "AllowedMemoryNodes") != NULL;
                if (w->kind == NG_WRITE_UNIT_PROPERTY && rb >= 0)
                        unit_prop(w->after, sizeof(w->after), wm ? "AllowedMemoryNodes" : "AllowedCPUs",
                                  wm ? back.has_mems : back.has_cpus, wm ? &back.mems : &back.cpus);
        }
        bool unit_ok = rb >= 0 && (!c || ng_bitmap_equal(&back.cpus, &pl->cpus)) &&
                       (!m || ng_bitmap_equal(&back.mems, &pl->mems));
        int live = wait_live(x);
        x->res->outcome = unit_ok && live > 0 ? NG_OUTCOME_DONE : NG_OUTCOME_PARTIAL;
        if (!unit_ok)
                summarize(x->res, "systemd unit %s reads back otherwise (%s); ", pl->owner.name,
                          rb < 0 ? strerror(-rb) : "properties differ");
        if (live <= 0)
                summarize(x->res, "the cgroup does not show the targets yet (%s); ",
                          live < 0 ? strerror(-live) : "cpuset.cpus/cpuset.mems differ");
        summarize(x->res, "systemd unit %s set, persistently: ", pl->owner.name);
        describe_change(x);
        describe_memory(x);
}

/* Docker saves the values with the container and applies them: asked
 * through its API, then the cgroup read back. */
static void apply_docker(struct exec *x, const struct ng_action_ops *ops)
{
        const struct ng_cpuset_plan *pl = x->plan;
        /* Docker applies what it is given to the cgroup too: every set to
         * change, live or saved. */
        bool c = pl->write_cpus || owner_needs(pl, false), m = pl->write_mems || owner_needs(pl, true);
        char body[600] = "";
        ng_docker_update_body(c ? &pl->cpus : NULL, m ? &pl->mems : NULL, body, sizeof(body));
        if (x->dry_run) {
                x->res->outcome = NG_OUTCOME_DRY_RUN;
                summarize(x->res, "would update docker container %s (POST /containers/%.12s/update %s, saved with "
                          "the container), which sets ", pl->owner.name, pl->owner.id, body);
                describe_change(x);
                return;
        }
        int r = ops->docker_update(ops->userdata, x->p, pl->owner.id, c ? &pl->cpus : NULL, m ? &pl->mems : NULL);
        if (r < 0) {
                x->res->outcome = ng_outcome_for_errno(r);
                x->res->error = r;
                summarize(x->res, "updating docker container %s failed: %s; nothing changed", pl->owner.name,
                          strerror(-r));
                return;
        }
        int live = wait_live(x);
        x->res->outcome = live > 0 ? NG_OUTCOME_DONE : NG_OUTCOME_PARTIAL;
        if (live <= 0)
                summarize(x->res, "the cgroup does not show the targets yet (%s); ",
                          live < 0 ? strerror(-live) : "cpuset.cpus/cpuset.mems differ");
        summarize(x->res, "docker container %s updated and saved: ", pl->owner.name);
        describe_change(x);
}

/* The file parsed back: the group holds the targets. */
static int verify_cgconfig(struct exec *x, const struct ng_action_ops *ops, bool c, bool m)
{
        const struct ng_cpuset_plan *pl = x->plan;
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ struct ng_cgconfig_group *g = NULL;
        size_t n = 0;
        int r = ops->read_text(ops->userdata, x->p, pl->owner.source, &text);
        if (r >= 0)
                r = ng_parse_cgconfig(text, &g, &n, NULL);
        const struct ng_cgconfig_group *found = NULL;
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (!strcmp(g[i].name, pl->owner.name))
                        found = &g[i];
        struct ng_bitmap bc = {0}, bm = {0};
        bool ok = found && (!c || (found->cpus.present && ng_bitmap_parse_list(found->cpus.value, &bc) >= 0 &&
                                   ng_bitmap_equal(&bc, &pl->cpus))) &&
                  (!m || (found->mems.present && ng_bitmap_parse_list(found->mems.value, &bm) >= 0 &&
                          ng_bitmap_equal(&bm, &pl->mems)));
        /* parsed back as written: the line is what it reads */
        for (size_t i = 0; i < x->res->n_writes && ok; i++) {
                struct ng_write *w = &x->res->writes[i];
                if (w->kind == NG_WRITE_CONFIG_LINE)
                        memcpy(w->after, w->value, sizeof(w->after));
        }
        if (ok)
                return 0;
        x->res->outcome = NG_OUTCOME_PERMANENT;
        x->res->error = r < 0 ? r : -EIO;
        summarize(x->res, "%s reads back without the new values of group %s (%s); the live cpuset was not "
                  "touched", pl->owner.source, pl->owner.name, r < 0 ? strerror(-r) : "values differ");
        return -EIO;
}

/* The group's values in its file, then the live writes. */
static void apply_cgconfig(struct exec *x, const struct ng_action_ops *ops)
{
        const struct ng_cpuset_plan *pl = x->plan;
        const char *file = pl->owner.source;
        bool c = owner_needs(pl, false), m = owner_needs(pl, true);
        _cleanup_free_ char *text = NULL, *edited = NULL;
        int r = 0;
        if (c || m) {
                r = ops->read_text(ops->userdata, x->p, file, &text);
                if (r >= 0)
                        r = ng_cgconfig_edit(text, file, pl->owner.name, c ? &pl->cpus : NULL, m ? &pl->mems : NULL,
                                             x->res, &edited);
                if (r >= 0 && !x->dry_run)
                        r = ops->replace_file(ops->userdata, x->p, file, edited);
        }
        if (r < 0) {
                x->res->outcome = r == -ENOENT || r == -ENODATA || r == -EINVAL ? NG_OUTCOME_REFUSED
                                                                               : ng_outcome_for_errno(r);
                x->res->error = r;
                summarize(x->res, "cannot write group %s in %s: %s; nothing changed", pl->owner.name, file,
                          r == -ENODATA ? "it has no cpuset block" : r == -EINVAL ? "it does not parse" : strerror(-r));
                return;
        }
        if ((c || m) && !x->dry_run)
                r = verify_cgconfig(x, ops, c, m);
        if (r < 0)
                return;
        summarize(x->res, "%scgconfig group %s in %s%s; ", x->dry_run ? "would write " : "wrote ", pl->owner.name,
                  file, c || m ? "" : " (already as wanted)");
        if (x->n_steps == 0) {
                x->res->outcome = x->dry_run ? NG_OUTCOME_DRY_RUN : NG_OUTCOME_DONE;
                summarize(x->res, "live cpuset already as wanted: ");
                describe_change(x);
                return;
        }
        run_steps(x);
}

int ng_cpuset_apply(const struct ng_path *p, const struct ng_action_ops *ops_in, const struct ng_cpuset_plan *plan,
                    bool dry_run, struct ng_action_result *res)
{
        struct ng_action_ops o;
        if (!ops_in || !plan || !res || ng_action_ops_complete(ops_in, &o) < 0)
                return -EINVAL;
        const struct ng_action_ops *ops = &o;
        ng_action_result_reset(res);
        snprintf(res->check, sizeof(res->check), "%s", plan->check);
        res->check_refused = plan->check_refused;
        if (plan->refused) {
                res->outcome = NG_OUTCOME_REFUSED;
                snprintf(res->summary, sizeof(res->summary), "%.*s", (int) sizeof(res->summary) - 1, plan->reason);
                return 0;
        }
        struct exec x = { .p = p, .ops = ops, .plan = plan, .dry_run = dry_run, .res = res };
        int r = ng_cpuset_read_current(p, ops, plan, false, &x.cur_cpus);
        if (r >= 0)
                r = ng_cpuset_read_current(p, ops, plan, true, &x.cur_mems);
        if (r < 0) {
                res->outcome = ng_outcome_for_errno(r);
                res->error = r;
                summarize(res, "cannot read the cpuset of %s (%s): %s", plan->cgroup, plan->dir, strerror(-r));
                return 0;
        }
        x.now_cpus = x.cur_cpus;
        x.now_mems = x.cur_mems;
        plan_steps(&x);
        const struct ng_owner *ow = &plan->owner;
        bool owner_ok = (ow->kind != NG_OWNER_SYSTEMD && ow->kind != NG_OWNER_CGCONFIG && ow->kind != NG_OWNER_DOCKER) ||
                        (!owner_needs(plan, false) && !owner_needs(plan, true));
        if (x.n_steps == 0 && owner_ok) {
                res->outcome = NG_OUTCOME_NOOP;
                summarize(res, "already as wanted: ");
                describe_change(&x);
                return 0;
        }
        if (ow->kind == NG_OWNER_SYSTEMD)
                apply_systemd(&x, ops);
        else if (ow->kind == NG_OWNER_CGCONFIG)
                apply_cgconfig(&x, ops);
        else if (ow->kind == NG_OWNER_DOCKER)
                apply_docker(&x, ops);
        else if (ow->kind == NG_OWNER_PODMAN) {
                run_steps(&x);
                if (res->outcome == NG_OUTCOME_DONE || res->outcome == NG_OUTCOME_DRY_RUN)
                        summarize(res, "; not saved with podman container %s (Podman 4.3's update changes the "
                                  "cgroup only): it lasts until the container restarts (CPUSET_NOT_PERSISTENT); "
                                  "recreate it with --cpuset-cpus/--cpuset-mems to keep it", ow->name);
        } else {
                run_steps(&x);
                if (res->outcome == NG_OUTCOME_DONE || res->outcome == NG_OUTCOME_DRY_RUN)
                        summarize(res, "; no owner persists it (no systemd unit, no cgconfig group): it lasts until "
                                  "the cgroup is removed or the host reboots");
        }
        return 0;
}

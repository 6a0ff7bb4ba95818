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

#include "ng-act-cpuset.h"

/* A formatted list; longer than a struct ng_write value can hold is refused. */
struct list_str {
        char s[256];
};

static struct list_str list_s(const struct ng_bitmap *b)
{
        struct list_str l;
        if (ng_bitmap_format_list(b, l.s, sizeof(l.s)) >= (int) sizeof(l.s))
                snprintf(l.s + sizeof(l.s) - 4, 4, "...");
        if (!l.s[0])
                snprintf(l.s, sizeof(l.s), "(none)");
        return l;
}

static bool list_fits(const struct ng_bitmap *b)
{
        char buf[256];
        return ng_bitmap_format_list(b, buf, sizeof(buf)) < (int) sizeof(buf);
}

static bool subset(const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                if (a->w[i] & ~b->w[i])
                        return false;
        return true;
}

static struct ng_bitmap minus(const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        struct ng_bitmap r;
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                r.w[i] = a->w[i] & ~b->w[i];
        return r;
}

static const char *policy_name(enum ng_policy p)
{
        switch (p) {
        case NG_POLICY_LOCAL: return "local";
        case NG_POLICY_INTERLEAVE: return "interleave";
        case NG_POLICY_BIND: return "bind";
        }
        return "?";
}

static const char *eff_cpus_file(int version)
{
        return version == 1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective";
}

static const char *eff_mems_file(int version)
{
        return version == 1 ? "cpuset.effective_mems" : "cpuset.mems.effective";
}

/* ---- planning ---- */

static struct ng_bitmap memory_nodes(const struct ng_snapshot *s)
{
        struct ng_bitmap r = {0};
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].has_memory)
                        ng_bitmap_set(&r, (unsigned) s->topo.nodes[i].id);
        return r;
}

static struct ng_bitmap cpus_of_nodes(const struct ng_snapshot *s, const struct ng_bitmap *nodes)
{
        struct ng_bitmap r = {0};
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (!nodes || ng_bitmap_test(nodes, (unsigned) s->topo.nodes[i].id))
                        ng_bitmap_or(&r, &s->topo.nodes[i].cpus);
        return r;
}

static struct ng_bitmap nodes_of_cpus(const struct ng_snapshot *s, const struct ng_bitmap *cpus)
{
        struct ng_bitmap r = {0};
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (ng_bitmap_intersects(&s->topo.nodes[i].cpus, cpus))
                        ng_bitmap_set(&r, (unsigned) s->topo.nodes[i].id);
        return r;
}

static int refuse(struct ng_cpuset_plan *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct ng_cpuset_plan *pl, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(pl->reason, sizeof(pl->reason), fmt, ap);
        va_end(ap);
        pl->refused = true;
        return 0;
}

/* local without nodes=: the memory nodes among the nodes of its CPUs. */
static int target_local(const struct ng_snapshot *s, const struct ng_instance *in, struct ng_cpuset_plan *pl)
{
        struct ng_bitmap nodes = ng_bitmap_empty(&in->cpu_nodes) ? nodes_of_cpus(s, &pl->old_cpus) : in->cpu_nodes;
        struct ng_bitmap mem = memory_nodes(s);
        pl->mems = nodes;
        ng_bitmap_and(&pl->mems, &mem);
        pl->cpus = pl->old_cpus;
        if (ng_bitmap_empty(&pl->mems))
                return refuse(pl, "policy local: the instance's CPUs are on node(s) %s, none of which has memory; "
                              "set nodes= for it", list_s(&nodes).s);
        return 0;
}

/* local or bind with nodes=: memory there, and CPUs there too when those
 * nodes have any (a memory-only node, e.g. CXL, keeps the CPUs as they are). */
static void target_bind(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_cpuset_bounds *parent,
                        struct ng_cpuset_plan *pl)
{
        struct ng_bitmap node_cpus = cpus_of_nodes(s, &in->cfg->nodes);
        pl->mems = in->cfg->nodes;
        pl->cpus = pl->old_cpus;
        if (ng_bitmap_empty(&node_cpus))
                return;
        ng_bitmap_and(&pl->cpus, &node_cpus);
        if (!ng_bitmap_empty(&pl->cpus))
                return;
        /* None of its CPUs there: those the parent allows, or (none allowed)
         * all of them, which validate() then refuses naming the parent. */
        pl->cpus = node_cpus;
        ng_bitmap_and(&pl->cpus, &parent->cpus);
        if (ng_bitmap_empty(&pl->cpus))
                pl->cpus = node_cpus;
}

static int targets(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_cpuset_bounds *parent,
                   struct ng_cpuset_plan *pl)
{
        const struct ng_instance_config *ic = in->cfg;
        bool has_nodes = !ng_bitmap_empty(&ic->nodes);
        switch (ic->policy) {
        case NG_POLICY_LOCAL:
                if (!has_nodes)
                        return target_local(s, in, pl);
                target_bind(s, in, parent, pl);
                return 0;
        case NG_POLICY_BIND:
                if (!has_nodes)
                        return refuse(pl, "policy bind without nodes=: nothing to bind to");
                target_bind(s, in, parent, pl);
                return 0;
        case NG_POLICY_INTERLEAVE:
                pl->cpus = pl->old_cpus;
                if (has_nodes)
                        pl->mems = ic->nodes;
                else {
                        pl->mems = memory_nodes(s);
                        ng_bitmap_and(&pl->mems, &parent->mems);
                }
                return 0;
        }
        return refuse(pl, "unknown policy");
}

/* Checks the targets against the topology and the parent. */
static int validate(const struct ng_snapshot *s, const struct ng_cpuset_bounds *parent, struct ng_cpuset_plan *pl)
{
        struct ng_bitmap mem = memory_nodes(s), online = cpus_of_nodes(s, NULL);
        if (ng_bitmap_empty(&pl->mems))
                return refuse(pl, "cpuset.mems would be empty");
        if (ng_bitmap_empty(&pl->cpus))
                return refuse(pl, "cpuset.cpus would be empty");
        struct ng_bitmap bad = minus(&pl->mems, &mem);
        if (!ng_bitmap_empty(&bad))
                return refuse(pl, "node(s) %s have no memory (or are not online): cpuset.mems %s refused",
                              list_s(&bad).s, list_s(&pl->mems).s);
        bad = minus(&pl->cpus, &online);
        if (!ng_bitmap_empty(&bad))
                return refuse(pl, "CPU(s) %s are not online on any node: cpuset.cpus %s refused",
                              list_s(&bad).s, list_s(&pl->cpus).s);
        if (!subset(&pl->mems, &parent->mems))
                return refuse(pl, "the parent cgroup allows mems %s only; target %s is outside it",
                              list_s(&parent->mems).s, list_s(&pl->mems).s);
        if (!subset(&pl->cpus, &parent->cpus))
                return refuse(pl, "the parent cgroup allows cpus %s only; target %s is outside it",
                              list_s(&parent->cpus).s, list_s(&pl->cpus).s);
        if (!list_fits(&pl->mems) || !list_fits(&pl->cpus))
                return refuse(pl, "target list too long to write");
        return 0;
}

static bool is_root_cgroup(const char *path)
{
        return !path || !path[0] || !strcmp(path, "/");
}

int ng_cpuset_plan(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_cpuset_bounds *parent,
                   struct ng_cpuset_plan *ret)
{
        if (!s || !in || !in->cfg || !ret)
                return -EINVAL;
        struct ng_cpuset_plan pl = { .policy = in->cfg->policy, .memory_migrate = -1 };
        snprintf(pl.instance, sizeof(pl.instance), "%s", in->name);
        const struct ng_cgroup *cg = in->cgroup ? ng_snapshot_cgroup(s, in->cgroup) : NULL;
        if (is_root_cgroup(in->cgroup))
                refuse(&pl, "instance %s has no cpuset cgroup of its own%s: the root cpuset is never rewritten",
                       in->name, in->cgroup ? " (it runs in the root cgroup)" : "");
        else if (!cg)
                refuse(&pl, "cgroup %s of instance %s was not found", in->cgroup, in->name);
        else if (!cg->has_cpuset)
                refuse(&pl, "the cpuset controller is not enabled for %s (cgroup v2: add +cpuset to the parent's "
                       "cgroup.subtree_control)", cg->path);
        if (cg) {
                snprintf(pl.cgroup, sizeof(pl.cgroup), "%s", cg->path);
                snprintf(pl.dir, sizeof(pl.dir), "%s", cg->dir);
                pl.version = cg->version;
                pl.memory_migrate = cg->version == 1 ? cg->memory_migrate : -1;
                /* v2: an empty cpuset.cpus/mems means "the parent's": what is in effect. */
                pl.old_cpus = ng_bitmap_empty(&cg->cpus) ? cg->effective_cpus : cg->cpus;
                pl.old_mems = ng_bitmap_empty(&cg->mems) ? cg->effective_mems : cg->mems;
                pl.cpus_inherited = cg->version == 2 && ng_bitmap_empty(&cg->cpus);
                pl.mems_inherited = cg->version == 2 && ng_bitmap_empty(&cg->mems);
                pl.owner = cg->owner;
                if (!pl.refused && cg->owner.kind == NG_OWNER_UNKNOWN)
                        refuse(&pl, "the owner of cpuset %s cannot be told (%s), so a fix could be silently undone: "
                               "repair that, then retry", cg->path, cg->owner.error);
        }
        if (!pl.refused && !parent)
                refuse(&pl, "what the parent of %s allows is unknown", pl.cgroup);
        if (!pl.refused && targets(s, in, parent, &pl) >= 0 && !pl.refused)
                validate(s, parent, &pl);
        pl.write_cpus = !pl.refused && !ng_bitmap_equal(&pl.cpus, &pl.old_cpus);
        pl.write_mems = !pl.refused && !ng_bitmap_equal(&pl.mems, &pl.old_mems);
        memcpy(ret, &pl, sizeof(pl));
        return 0;
}

/* ---- reading ---- */

static int read_list(const struct ng_path *p, const struct ng_action_ops *ops, const char *dir, const char *file,
                     struct ng_bitmap *ret)
{
        char path[PATH_MAX], buf[4096];
        if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        int r = ops->read(ops->userdata, p, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        return ng_bitmap_parse_list(buf, ret);
}

int ng_cpuset_parent_read(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_snapshot *s,
                          const struct ng_instance *in, struct ng_cpuset_bounds *ret)
{
        if (!ops || !s || !in || !ret || is_root_cgroup(in->cgroup))
                return -EINVAL;
        const struct ng_cgroup *cg = ng_snapshot_cgroup(s, in->cgroup);
        const char *slash = cg ? strrchr(cg->dir, '/') : NULL;
        if (!slash || slash == cg->dir)
                return -EINVAL;
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%.*s", (int) (slash - cg->dir), cg->dir);
        /* v1 checks a child against the parent's configured sets
         * (validate_change); v2 against what is in effect. */
        struct ng_cpuset_bounds b;
        int r = read_list(p, ops, dir, cg->version == 1 ? "cpuset.cpus" : eff_cpus_file(2), &b.cpus);
        if (r >= 0)
                r = read_list(p, ops, dir, cg->version == 1 ? "cpuset.mems" : eff_mems_file(2), &b.mems);
        if (r < 0)
                return r;
        *ret = b;
        return 0;
}

/* The value in effect: the file, or on v2 when it is empty, the effective one. */
static int read_current(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_cpuset_plan *plan,
                        bool mems, struct ng_bitmap *ret)
{
        int r = read_list(p, ops, plan->dir, mems ? "cpuset.mems" : "cpuset.cpus", ret);
        if (r >= 0 && ng_bitmap_empty(ret))
                r = read_list(p, ops, plan->dir, mems ? eff_mems_file(plan->version) : eff_cpus_file(plan->version), ret);
        return r;
}

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
        summarize(x->res, "cgroup v%d %s: cpuset.mems %s", pl->version, pl->cgroup, list_s(&x->cur_mems).s);
        if (m)
                summarize(x->res, " -> %s", list_s(&pl->mems).s);
        summarize(x->res, "%s, cpuset.cpus %s", m ? "" : " unchanged", list_s(&x->cur_cpus).s);
        if (c)
                summarize(x->res, " -> %s", list_s(&pl->cpus).s);
        summarize(x->res, "%s (policy %s)", c ? "" : " unchanged", policy_name(pl->policy));
}

/* What happens to memory already allocated when mems change. */
static void describe_memory(struct exec *x)
{
        const struct ng_cpuset_plan *pl = x->plan;
        if (!pl->write_mems || ng_bitmap_equal(&x->cur_mems, &pl->mems))
                return;
        if (pl->version == 2)
                summarize(x->res, "; the kernel migrates the tasks' memory on the cpuset.mems write (Linux >= 5.15: "
                          "costly, and pages it cannot move stay where they are)");
        else if (pl->memory_migrate == 1)
                summarize(x->res, "; cpuset.memory_migrate=1: the kernel moves the tasks' pages to node(s) %s",
                          list_s(&pl->mems).s);
        else
                summarize(x->res, "; cpuset.memory_migrate=%s: pages already allocated stay where they are, only new "
                          "allocations go to node(s) %s (set cpuset.memory_migrate=1 to move them)",
                          pl->memory_migrate == 0 ? "0" : "unknown", list_s(&pl->mems).s);
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
                summarize(x->res, "writing %s to %s/%s failed: %s; ", list_s(&st->value).s, pl->dir, st->file,
                          strerror(-r));
        }
        summarize(x->res, "%s: cgroup v%d %s has cpuset.mems %s, cpuset.cpus %s (wanted mems %s, cpus %s, policy %s)",
                  x->n_done > 0 ? "some writes took, the cpuset is left valid" : "nothing changed", pl->version,
                  pl->cgroup, list_s(&x->now_mems).s, list_s(&x->now_cpus).s, list_s(&pl->mems).s,
                  list_s(&pl->cpus).s, policy_name(pl->policy));
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
        if (ow->kind == NG_OWNER_SYSTEMD)
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

static void record_unit(struct ng_action_result *res, const struct ng_cpuset_plan *pl, bool mems)
{
        if (res->n_writes >= NG_ACTION_MAX_WRITES)
                return;
        const char *prop = mems ? "AllowedMemoryNodes" : "AllowedCPUs";
        struct ng_write *w = &res->writes[res->n_writes++];
        *w = (struct ng_write) { .kind = NG_WRITE_UNIT_PROPERTY };
        snprintf(w->path, sizeof(w->path), "%s", pl->owner.name);
        unit_prop(w->value, sizeof(w->value), prop, true, mems ? &pl->mems : &pl->cpus);
        unit_prop(w->before, sizeof(w->before), prop, mems ? pl->owner.has_mems : pl->owner.has_cpus,
                  mems ? &pl->owner.mems : &pl->owner.cpus);
}

/* systemd applies the properties to the cgroup from its event loop, after
 * the call returned: read until the files show the targets (bounded). */
static int wait_live(struct exec *x)
{
        int r = 0;
        for (int i = 0; i < 50; i++) {
                r = read_current(x->p, x->ops, x->plan, false, &x->now_cpus);
                if (r >= 0)
                        r = read_current(x->p, x->ops, x->plan, true, &x->now_mems);
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
        if (c)
                record_unit(x->res, pl, false);
        if (m)
                record_unit(x->res, pl, true);
        if (x->dry_run) {
                x->res->outcome = NG_OUTCOME_DRY_RUN;
                summarize(x->res, "would set the properties on systemd unit %s (at runtime and persistently, as "
                          "systemctl set-property), which sets ", pl->owner.name);
                describe_change(x);
                describe_memory(x);
                return;
        }
        int r = ops->set_unit_cpuset(ops->userdata, x->p, pl->owner.name, pl->dir, c ? &pl->cpus : NULL,
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

/* The file parsed back: the group holds the targets. */
static int verify_cgconfig(struct exec *x, const struct ng_action_ops *ops, bool c, bool m)
{
        const struct ng_cpuset_plan *pl = x->plan;
        char *text = NULL;
        struct ng_cgconfig_group *g = NULL;
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
        free(g);
        free(text);
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
        char *text = NULL, *edited = NULL;
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
                free(text);
                free(edited);
                return;
        }
        if ((c || m) && !x->dry_run)
                r = verify_cgconfig(x, ops, c, m);
        free(text);
        free(edited);
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

int ng_cpuset_apply(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_cpuset_plan *plan,
                    bool dry_run, struct ng_action_result *res)
{
        if (!ops || !plan || !res)
                return -EINVAL;
        memset(res, 0, sizeof(*res));
        if (plan->refused) {
                res->outcome = NG_OUTCOME_REFUSED;
                snprintf(res->summary, sizeof(res->summary), "%.*s", (int) sizeof(res->summary) - 1, plan->reason);
                return 0;
        }
        struct exec x = { .p = p, .ops = ops, .plan = plan, .dry_run = dry_run, .res = res };
        int r = read_current(p, ops, plan, false, &x.cur_cpus);
        if (r >= 0)
                r = read_current(p, ops, plan, true, &x.cur_mems);
        if (r < 0) {
                res->outcome = ng_outcome_for_errno(r);
                res->error = r;
                summarize(res, "cannot read the cpuset of %s (%s): %s", plan->cgroup, plan->dir, strerror(-r));
                return 0;
        }
        x.now_cpus = x.cur_cpus;
        x.now_mems = x.cur_mems;
        plan_steps(&x);
        struct ng_action_ops o = *ops;
        ng_action_ops_fill_owner(&o);
        const struct ng_owner *ow = &plan->owner;
        bool owner_ok = (ow->kind != NG_OWNER_SYSTEMD && ow->kind != NG_OWNER_CGCONFIG) ||
                        (!owner_needs(plan, false) && !owner_needs(plan, true));
        if (x.n_steps == 0 && owner_ok) {
                res->outcome = NG_OUTCOME_NOOP;
                summarize(res, "already as wanted: ");
                describe_change(&x);
                return 0;
        }
        if (ow->kind == NG_OWNER_SYSTEMD)
                apply_systemd(&x, &o);
        else if (ow->kind == NG_OWNER_CGCONFIG)
                apply_cgconfig(&x, &o);
        else {
                run_steps(&x);
                if (res->outcome == NG_OUTCOME_DONE || res->outcome == NG_OUTCOME_DRY_RUN)
                        summarize(res, "; no owner persists it (no systemd unit, no cgconfig group): it lasts until "
                                  "the cgroup is removed or the host reboots");
        }
        return 0;
}

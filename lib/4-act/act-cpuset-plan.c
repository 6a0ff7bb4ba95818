/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cpuset plan: what an instance cgroup's cpuset.mems / cpuset.cpus should be
 * for its policy (targets and ordering: ng-act-cpuset.h), checked against
 * the parent's bounds, and the reading of the values in effect.
 * act-cpuset.c applies the plan.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act-cpuset-internal.h"
#include "action-internal.h"
#include "ng-reserve.h"

struct list_str ng_cpuset_list_s(const struct ng_bitmap *b)
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

static struct ng_bitmap minus(const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        struct ng_bitmap r;
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                r.w[i] = a->w[i] & ~b->w[i];
        return r;
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
        struct ng_bitmap mem = ng_snapshot_memory_nodes(s);
        pl->mems = nodes;
        ng_bitmap_and(&pl->mems, &mem);
        pl->cpus = pl->old_cpus;
        if (ng_bitmap_empty(&pl->mems))
                return refuse(pl, "policy local: the instance's CPUs are on node(s) %s, none of which has memory; "
                              "set nodes= for it", ng_cpuset_list_s(&nodes).s);
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
        case NG_POLICY_WEIGHTED_INTERLEAVE:
                pl->cpus = pl->old_cpus;
                if (has_nodes)
                        pl->mems = ic->nodes;
                else {
                        pl->mems = ng_snapshot_memory_nodes(s);
                        ng_bitmap_and(&pl->mems, &parent->mems);
                }
                return 0;
        }
        return refuse(pl, "unknown policy");
}

/* Checks the targets against the topology and the parent. */
static int validate(const struct ng_snapshot *s, const struct ng_cpuset_bounds *parent, struct ng_cpuset_plan *pl)
{
        struct ng_bitmap mem = ng_snapshot_memory_nodes(s), online = cpus_of_nodes(s, NULL);
        if (ng_bitmap_empty(&pl->mems))
                return refuse(pl, "cpuset.mems would be empty");
        if (ng_bitmap_empty(&pl->cpus))
                return refuse(pl, "cpuset.cpus would be empty");
        struct ng_bitmap bad = minus(&pl->mems, &mem);
        if (!ng_bitmap_empty(&bad))
                return refuse(pl, "node(s) %s have no memory (or are not online): cpuset.mems %s refused",
                              ng_cpuset_list_s(&bad).s, ng_cpuset_list_s(&pl->mems).s);
        bad = minus(&pl->cpus, &online);
        if (!ng_bitmap_empty(&bad))
                return refuse(pl, "CPU(s) %s are not online on any node: cpuset.cpus %s refused",
                              ng_cpuset_list_s(&bad).s, ng_cpuset_list_s(&pl->cpus).s);
        if (!ng_bitmap_subset(&pl->mems, &parent->mems))
                return refuse(pl, "the parent cgroup allows mems %s only; target %s is outside it",
                              ng_cpuset_list_s(&parent->mems).s, ng_cpuset_list_s(&pl->mems).s);
        if (!ng_bitmap_subset(&pl->cpus, &parent->cpus))
                return refuse(pl, "the parent cgroup allows cpus %s only; target %s is outside it",
                              ng_cpuset_list_s(&parent->cpus).s, ng_cpuset_list_s(&pl->cpus).s);
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
        /* No cgroup known: say why (not running, or unreadable) rather
         * than blame the root cpuset, where nothing of it runs either. */
        if (!in->cgroup && in->n_pids == 0 && in->cfg->cgroup)
                refuse(&pl, "cgroup %s of instance %s was not found: no process of the instance runs in it "
                       "(INSTANCE_NOT_FOUND), so there is no cpuset to correct", in->cfg->cgroup, in->name);
        else if (!in->cgroup && in->n_pids == 0)
                refuse(&pl, "instance %s was not found: no process matches it (INSTANCE_NOT_FOUND), so there is no "
                       "cgroup to correct", in->name);
        else if (!in->cgroup)
                refuse(&pl, "the cpuset cgroup of instance %s is unknown: /proc/%d/cgroup could not be read",
                       in->name, (int) in->main_pid);
        else if (is_root_cgroup(in->cgroup))
                refuse(&pl, "instance %s has no cpuset cgroup of its own (it runs in the root cgroup): the root "
                       "cpuset is never rewritten", in->name);
        else if (!cg)
                refuse(&pl, "cgroup %s of instance %s was not found", in->cgroup, in->name);
        else if (cg->gone)
                refuse(&pl, "cgroup %s of instance %s went away while numaguard read it (the instance stopped, "
                       "restarted or moved): nothing to correct there; audit again", cg->path, in->name);
        else if (!cg->has_cpuset)
                refuse(&pl, "the cpuset controller is not enabled for %s (cgroup v2: add +cpuset to the parent's "
                       "cgroup.subtree_control)", cg->path);
        if (cg) {
                snprintf(pl.cgroup, sizeof(pl.cgroup), "%s", cg->path);
                snprintf(pl.dir, sizeof(pl.dir), "%s", cg->dir);
                pl.version = cg->version;
                /* cgroup v2 moves a cpuset's pages on a cpuset.mems write
                 * since Linux 5.15 (before, only new allocations follow);
                 * nothing but the release says so */
                pl.memory_migrate = cg->version == 1 ? cg->memory_migrate : ng_knobs_release_at_least(&s->knobs, 5, 15);
                /* v2: an empty cpuset.cpus/mems means "the parent's": what is in effect. */
                pl.old_cpus = ng_bitmap_empty(&cg->cpus) ? cg->effective_cpus : cg->cpus;
                pl.old_mems = ng_bitmap_empty(&cg->mems) ? cg->effective_mems : cg->mems;
                pl.cpus_inherited = cg->version == 2 && ng_bitmap_empty(&cg->cpus);
                pl.mems_inherited = cg->version == 2 && ng_bitmap_empty(&cg->mems);
                pl.owner = cg->owner;
                if (!pl.refused && cg->owner.kind == NG_OWNER_UNKNOWN)
                        refuse(&pl, "the owner of cpuset %s cannot be told (%s), so a fix could be silently undone: "
                               "repair that, then retry", cg->path, cg->owner.error);
                /* cgconfigparser mounts v1 cpuset from that file: on a
                 * kernel without v1 cpuset it fails and creates nothing, so
                 * writing the group's line would persist nothing. */
                const struct ng_feature_probe *v1 = &s->topo.features[NG_FEATURE_CGROUP_V1_CPUSET];
                if (!pl.refused && cg->owner.kind == NG_OWNER_CGCONFIG && cg->owner.v1_mount &&
                    v1->state == NG_FEATURE_ABSENT)
                        refuse(&pl, "cgconfig group %s cannot work on this kernel: %s mounts a v1 cpuset hierarchy "
                               "and the kernel has none (kernel feature cgroup_v1_cpuset absent: %s), so "
                               "cgconfigparser fails at boot and creates no group; move the cpuset to a systemd "
                               "unit (AllowedCPUs=, AllowedMemoryNodes=) or drop the v1 mount section (libcgroup 2 "
                               "and later use the v2 hierarchy), then retry", cg->owner.name,
                               cg->owner.v1_mount_file, v1->detail);
                /* A pod's cpuset is the kubelet's to set: a live write is
                 * undone when the container restarts (CPUSET_NOT_PERSISTENT). */
                if (!pl.refused && cg->owner.kind == NG_OWNER_KUBELET)
                        refuse(&pl, "cpuset %s belongs to pod %s, whose cpuset the kubelet sets: configure it to align "
                               "the pod (cpuManagerPolicy static, memoryManagerPolicy Static, topologyManagerPolicy "
                               "single-numa-node, a Guaranteed pod with integer CPUs)", cg->path, cg->owner.name);
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

int ng_cpuset_parent_read(const struct ng_path *p, const struct ng_action_ops *ops_in, const struct ng_snapshot *s,
                          const struct ng_instance *in, struct ng_cpuset_bounds *ret)
{
        struct ng_action_ops o;
        if (!ops_in || !s || !in || !ret || is_root_cgroup(in->cgroup) || ng_action_ops_complete(ops_in, &o) < 0)
                return -EINVAL;
        const struct ng_action_ops *ops = &o;
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
int ng_cpuset_read_current(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_cpuset_plan *plan,
                        bool mems, struct ng_bitmap *ret)
{
        int r = read_list(p, ops, plan->dir, mems ? "cpuset.mems" : "cpuset.cpus", ret);
        if (r >= 0 && ng_bitmap_empty(ret))
                r = read_list(p, ops, plan->dir, mems ? eff_mems_file(plan->version) : eff_cpus_file(plan->version), ret);
        return r;
}

int ng_cpuset_plan_check(const struct ng_snapshot *s, const struct ng_audit *a, struct ng_cpuset_plan *plan)
{
        if (!s || !a || !plan)
                return -EINVAL;
        plan->check[0] = '\0';
        if (plan->refused || !plan->write_mems)
                return 0;
        struct ng_resv_change chg = { .cgroup = plan->cgroup, .mems = plan->mems };
        struct ng_resv_verdict v;
        int r = ng_resv_check(s, a, &chg, &v);
        if (r < 0)
                return r;
        snprintf(plan->check, sizeof(plan->check), "%s", v.message);
        if (v.ok)
                return 0;
        plan->refused = plan->check_refused = true;
        snprintf(plan->reason, sizeof(plan->reason), "cpuset.mems %s: %s", ng_cpuset_list_s(&plan->mems).s,
                 v.message);
        return 0;
}

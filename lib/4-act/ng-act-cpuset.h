/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * act-cpuset: rewrite an instance cgroup's cpuset.mems / cpuset.cpus to
 * match its configured policy, on cgroup v1 and v2.
 *
 * Targets (ng_cpuset_plan), "nodes" being the instance's configured nodes=:
 *
 *   policy      nodes=   cpuset.mems                     cpuset.cpus
 *   local       unset    nodes of its CPUs (in->cpu_nodes)  unchanged
 *                        that have memory
 *   local|bind  set      nodes                           its CPUs on those nodes; when
 *                                                        it has none there, all CPUs of
 *                                                        those nodes the parent allows;
 *                                                        unchanged when the nodes have
 *                                                        no CPUs (memory-only nodes)
 *   interleave  set      nodes                           unchanged
 *   interleave  unset    every node with memory the      unchanged
 *                        parent allows
 *
 * This is what the CPUSET_DRIFT finding asks for. The plan is refused
 * (outcome REFUSED, with the reason) when the instance has no cpuset cgroup
 * or runs in the root cgroup (the root cpuset is never rewritten), the
 * cpuset controller is not enabled for it, a target would be empty, a
 * target node has no memory, or the parent's sets (v2:
 * cpuset.{cpus,mems}.effective, v1: cpuset.{cpus,mems}) do not contain the
 * targets.
 *
 * Execution widens, then narrows: first the union of the current and the
 * target value (mems, then cpus), then the target itself (cpus, then mems:
 * memory moves last, once the CPUs are in place), so no write ever leaves
 * either set empty or outside what the tasks already had. Every write is
 * read back and compared as a set (the kernel prints "0,1" as "0-1").
 *
 * Through the owner (ng-owner.h), so that the fix lasts:
 *
 *   systemd   the unit's AllowedCPUs=/AllowedMemoryNodes= set at runtime and
 *             persistently (SetUnitProperties over sd-bus, as `systemctl
 *             set-property` does); systemd writes the cgroup itself, read
 *             back until it shows the targets. A property is set when it
 *             changes, or when the unit would restore another value than
 *             the target on daemon-reload or restart.
 *   cgconfig  the group's cpuset.cpus/cpuset.mems values edited in place in
 *             its file (everything else, comments included, kept as it
 *             was; a missing key added to the group's cpuset block), the
 *             file replaced atomically and parsed back, then the live
 *             writes above.
 *   none      the live writes above; the summary says the fix lasts only
 *             until the cgroup is removed or the host reboots.
 *   unknown   refused: a fix its owner may silently undo is no fix.
 *
 * --dry-run records each change as a write (ng-action.h): the unit
 * property ("AllowedMemoryNodes=0", before "AllowedMemoryNodes=6"), the
 * file line ("/etc/cgconfig.conf:15", the old and the new line), the live
 * files.
 *
 * Memory: on v1 the kernel moves pages already allocated only with
 * cpuset.memory_migrate=1; it is honoured as configured, never changed, and
 * the summary says what it means. On v2 the kernel migrates the tasks'
 * memory on every cpuset.mems write (Linux >= 5.15): costly, and pages it
 * cannot move stay where they are.
 */

#include <stdbool.h>

#include "ng-action.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a parent cgroup lets its child use. */
struct ng_cpuset_bounds {
        struct ng_bitmap cpus, mems;
};

struct ng_cpuset_plan {
        char instance[NG_INSTANCE_NAME_MAX + 1];
        char cgroup[NG_PATH_MAX];       /* "/oracle" as /proc/<pid>/cgroup shows it */
        char dir[NG_PATH_MAX];          /* host path of its directory */
        int version;                    /* 1 or 2 */
        /* Whether the kernel moves the tasks' pages already allocated on a
         * cpuset.mems write: v1, the cgroup's cpuset.memory_migrate; v2,
         * 1 since Linux 5.15 (it always does), 0 before; -1 unknown. */
        int memory_migrate;
        enum ng_policy policy;
        struct ng_bitmap old_cpus, old_mems;    /* in effect when planned */
        struct ng_bitmap cpus, mems;            /* targets */
        bool write_cpus, write_mems;            /* the set differs from its target */
        bool refused;
        char reason[NG_PATH_MAX + 512]; /* why refused */
        bool cpus_inherited, mems_inherited;    /* v2 file empty: the parent's */
        struct ng_owner owner;          /* the write goes through it */
        /* ng_cpuset_plan_check(): the hugepage reservation check of the new
         * cpuset.mems, "" when not made. */
        char check[768];
        bool check_refused;
};

/*
 * Reads what the parent of the instance's cpuset cgroup allows (v2:
 * cpuset.cpus.effective / cpuset.mems.effective, v1: cpuset.cpus /
 * cpuset.mems) through ops. -EINVAL when in has no cpuset cgroup or it is
 * the root, else 0 or the read's -errno. *ret untouched on failure.
 */
int ng_cpuset_parent_read(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_snapshot *s,
                          const struct ng_instance *in, struct ng_cpuset_bounds *ret);

/*
 * Pure: the targets for in (table above), checked against the topology and
 * parent (NULL: unknown, which refuses). Returns 0 with *ret filled, a
 * refusal included (ret->refused, ret->reason), or -EINVAL for bad
 * arguments (*ret untouched).
 */
int ng_cpuset_plan(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_cpuset_bounds *parent,
                   struct ng_cpuset_plan *ret);

/*
 * The hugepage reservation gate (ng-reserve.h) of a plan that changes
 * cpuset.mems: the processes of its cgroup take their unfaulted reserved
 * hugepages from the new nodes only, so a plan that would leave a
 * reservation without the free pages to serve it (or one already short
 * shorter) is refused, with the instance, pages reserved, faulted, free
 * per node and the nodes short in plan->reason. plan->check says what was
 * weighed either way. Pure. 0 or -ENOMEM.
 */
int ng_cpuset_plan_check(const struct ng_snapshot *s, const struct ng_audit *a, struct ng_cpuset_plan *plan);

/*
 * Carries out plan through ops: reads the current values again, widens,
 * narrows, reads back. Outcomes: REFUSED (plan refused), NOOP (already
 * there), DRY_RUN (writes recorded, nothing written), DONE, TRANSIENT or
 * PERMANENT (ng_outcome_for_errno of the first failed write; the summary
 * says what the cpuset was left at), PARTIAL (a read back differs from what
 * was written after an earlier write took; PERMANENT when none took).
 * Returns 0 whenever *res says what happened, -EINVAL for bad arguments.
 */
int ng_cpuset_apply(const struct ng_path *p, const struct ng_action_ops *ops, const struct ng_cpuset_plan *plan,
                    bool dry_run, struct ng_action_result *res);

#ifdef __cplusplus
}
#endif

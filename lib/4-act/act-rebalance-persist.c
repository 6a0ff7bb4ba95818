/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The next start keeps it (ng-act-rebalance.h): the policy rebalance gives
 * an instance's segments, recorded where the database is started. A
 * segment's own policy dies with the segment; systemd applies a service's
 * NUMAPolicy=/NUMAMask= to every process it starts (set_mempolicy(2) before
 * exec), and the database's processes inherit it, so the next segment
 * follows it from its first page. Written as numaguard's own drop-in in
 * /etc/systemd/system/UNIT.d (never the unit file itself), then the
 * manager reloads, and what it loaded is read back.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "action-internal.h"
#include "ng-act-cpuset.h"
#include "ng-act-rebalance.h"
#include "ng-dbconf.h"
#include "ng-owner.h"

static void describe(bool has_policy, int mode, bool has_mask, const struct ng_bitmap *mask, char *buf, size_t size)
{
        char list[96] = "";
        if (has_mask)
                ng_bitmap_format_list(mask, list, sizeof(list));
        const char *name = has_policy ? ng_unit_numa_policy_name(mode) : NULL;
        snprintf(buf, size, "NUMAPolicy=%s NUMAMask=%s", name ? name : "", list);
}

static bool has_hugetlb(const struct ng_audit *a, const struct ng_instance *in)
{
        for (size_t k = 0; k < in->n_segs; k++)
                if (a->segments[in->segs[k]].huge)
                        return true;
        return false;
}

int ng_policy_persist_plan(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                           struct ng_policy_persist *ret)
{
        *ret = (struct ng_policy_persist) {0};
        struct ng_bitmap nodes;
        char want[96], list[96];
        ng_instance_spread_nodes(s, in, &nodes);
        enum ng_mpol mode = ng_instance_segment_policy(s, in, &nodes, want, sizeof(want));
        const char *name = ng_unit_numa_policy_name((int) mode);
        ng_bitmap_format_list(&nodes, list, sizeof(list));
        const struct ng_db_settings *db = in->main_pid ? ng_snapshot_db_settings(s, in->main_pid) : NULL;
        const struct ng_proc *main = in->main_pid ? ng_snapshot_proc(s, in->main_pid) : NULL;
        if (mode == NG_MPOL_DEFAULT)
                return 0;
        if (!db || !main) {
                snprintf(ret->note, sizeof(ret->note), "how its next start begins is not known (its main "
                         "process's settings were not read): start it under the policy %s", want);
                return 0;
        }
        const char *opt = ng_mpol_numactl_option(mode);
        if (!db->unit[0] || !name) {
                snprintf(ret->note, sizeof(ret->note), "its next start is not recorded (%s): start it under "
                         "numactl --%s=%s", !db->unit[0] ? in->container ? "a container" : "no systemd service"
                                                        : "systemd has no NUMAPolicy= for weighted interleave",
                         opt, list);
                return 0;
        }
        if (mode == NG_MPOL_BIND && has_hugetlb(a, in)) {
                snprintf(ret->note, sizeof(ret->note), "not recorded in %s: a bind policy at its start would "
                         "confine its hugepage faults to nodes %s (numaguardctl rehearse says what that start "
                         "would get)", db->unit, list);
                return 0;
        }
        snprintf(ret->unit, sizeof(ret->unit), "%s", db->unit);
        const char *cg = ng_pid_cgroup_v2_path(&main->cgroup);
        if (!cg || !*cg)
                cg = ng_pid_cgroup_v1_path(&main->cgroup, "name=systemd");
        snprintf(ret->cgroup, sizeof(ret->cgroup), "%s", cg ? cg : "");
        ret->mode = (int) mode;
        ret->mask = nodes;
        snprintf(ret->dropin, sizeof(ret->dropin), "/etc/systemd/system/%s.d/" NG_POLICY_DROPIN_NAME, db->unit);
        snprintf(ret->value, sizeof(ret->value), "NUMAPolicy=%s NUMAMask=%s", name, list);
        struct ng_bitmap was = {0};
        (void) ng_bitmap_parse_list(db->unit_mask, &was);
        describe(db->unit_has_policy, db->unit_policy, db->unit_mask[0], &was, ret->before, sizeof(ret->before));
        if (db->unit_known && !strcmp(ret->before, ret->value)) {
                snprintf(ret->note, sizeof(ret->note), "its next start keeps it: %s sets %s already", db->unit,
                         ret->value);
                ret->unit[0] = '\0';
                return 0;
        }
        return 1;
}

int ng_policy_persist_run(const struct ng_policy_persist *pp, const struct ng_action_ops *ops_in,
                          const struct ng_path *p, bool dry_run, struct ng_action_result *res)
{
        struct ng_action_ops ops;
        if (!pp || !p || !res || ng_action_ops_complete(ops_in, &ops) < 0)
                return -EINVAL;
        if (!pp->unit[0]) {
                res->outcome = dry_run ? NG_OUTCOME_DRY_RUN : NG_OUTCOME_NOOP;
                snprintf(res->summary, sizeof(res->summary), "%s", pp->note);
                return 0;
        }
        struct ng_write *w;
        int r = ng_action_result_add(res, NG_WRITE_UNIT_PROPERTY, &w);
        if (r < 0) {
                res->outcome = ng_outcome_for_errno(r);
                if (!res->error)
                        res->error = r;
                snprintf(res->summary, sizeof(res->summary), "its next start: recording %s in %.300s failed: %s",
                         pp->value, pp->dropin, strerror(-r));
                return 0;
        }
        snprintf(w->path, sizeof(w->path), "%s", pp->unit);
        snprintf(w->value, sizeof(w->value), "%s", pp->value);
        snprintf(w->before, sizeof(w->before), "%s", pp->before);
        if (dry_run) {
                res->outcome = NG_OUTCOME_DRY_RUN;
                snprintf(res->summary, sizeof(res->summary), "its next start: would write %.300s (%s), then "
                         "daemon-reload", pp->dropin, pp->value);
                return 0;
        }
        char text[512], list[96];
        ng_bitmap_format_list(&pp->mask, list, sizeof(list));
        snprintf(text, sizeof(text), "# Written by numaguardctl rebalance: the memory policy this service's\n"
                 "# processes start under, so that its shared memory is placed as numaguard\n"
                 "# placed it from the first page of the next start.\n[Service]\nNUMAPolicy=%s\nNUMAMask=%s\n",
                 ng_unit_numa_policy_name(pp->mode), list);
        r = ops.replace_file(ops.userdata, p, pp->dropin, text);
        if (r >= 0)
                r = ops.reload_units(ops.userdata, p);
        struct ng_unit_cpuset back = {0};
        if (r >= 0)
                r = ops.get_unit_cpuset(ops.userdata, p, pp->unit, pp->cgroup, &back);
        if (r >= 0) {
                describe(back.has_numa_policy, back.numa_policy, back.has_numa_mask, &back.numa_mask, w->after,
                         sizeof(w->after));
                if (strcmp(w->after, pp->value))
                        r = -EIO;       /* the manager did not load it (an older systemd, a masking drop-in) */
        }
        w->error = r < 0 ? r : 0;
        res->error = w->error;
        res->outcome = r < 0 ? ng_outcome_for_errno(r) : NG_OUTCOME_DONE;
        if (r < 0) {
                snprintf(res->summary, sizeof(res->summary), "its next start: recording %s in %.300s failed: %s",
                         pp->value, pp->dropin, strerror(-r));
                size_t l = strlen(res->summary);
                if (w->after[0])
                        snprintf(res->summary + l, sizeof(res->summary) - l, "; the manager has %s", w->after);
        } else
                snprintf(res->summary, sizeof(res->summary), "its next start keeps it: wrote %.300s (%s), reloaded, "
                         "read back", pp->dropin, pp->value);
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze, the rules of placement: one node serving everything, remote
 * memory, a cpuset that drifted or that its owner does not keep.
 * docs/ARCHITECTURE.md, "Why it exists", gives the facts behind every
 * threshold. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-owner.h"
#include "audit-internal.h"
#include "ng-format.h"
#include "units.h"
#include "rules-internal.h"

/* REMOTE_MEMORY: resident share on nodes without the instance's CPUs. */
#define REMOTE_SHARE_WARN 0.25

/* ---- placement ---- */

int ng_rule_cyclops(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (ctx->s->topo.n_nodes < 2 || in->resident_bytes == 0 ||
            in->resident_bytes < ctx->cfg->min_segment_size_bytes || ng_bitmap_count(&in->cpu_nodes) < 2)
                return 0;
        int top = -1;
        uint64_t top_bytes = 0;
        for (size_t i = 0; i < in->n_nodes; i++)
                if (in->nodes[i].bytes > top_bytes) {
                        top_bytes = in->nodes[i].bytes;
                        top = in->nodes[i].node;
                }
        double share = (double) top_bytes / (double) in->resident_bytes;
        if (top < 0 || share < ctx->cfg->cyclops_fraction)
                return 0;
        /* Deliberately bound to that one node: not a cyclops. */
        if (in->cfg->policy == NG_POLICY_BIND && ng_rules_single_node(&in->cfg->nodes, top))
                return 0;
        struct ng_bitmap nodes = {0};
        ng_bitmap_set(&nodes, (unsigned) top);
        const char *what = ng_rules_memory_noun(in);
        char advice[256];
        snprintf(advice, sizeof(advice), "interleave the %s over the instance's nodes (start it under numactl "
                 "--interleave, enable the database's NUMA support, or numaguardctl rebalance)", what);
        return ng_rules_add(ctx, NG_CODE_CYCLOPS, in, NULL, &nodes, share, advice,
                   "%" PRIu64 "%% of %s resident %s sits on node %d (%s) while the instance's "
                   "CPUs %s span nodes %s%s%s",
                   ng_rules_pct(share), ng_rules_bytes_h(in->resident_bytes).s, what, top, ng_rules_bytes_h(top_bytes).s, ng_rules_list_h(&in->cpus).s,
                   ng_rules_list_h(&in->cpu_nodes).s, ng_rules_bandwidth_h(&in->price).s,
                   ng_rules_socket_h(ctx->s, &nodes, &in->cpu_nodes).s);
}

/* A segment with no policy of its own leaves each new page where the
 * process that first touches it runs: what policy local means (no
 * finding), and for interleave or bind a gap a restart or the next buffers
 * open (info). Another policy than the instance's is someone's choice
 * against it (warning). Known only of the live segment (ng-segments.h). */
int ng_rule_segment_policy(struct audit_ctx *ctx, const struct ng_instance *in)
{
        if (ctx->s->topo.n_nodes < 2)
                return 0;
        struct ng_bitmap spread;
        char want[96];
        ng_instance_spread_nodes(ctx->s, in, &spread);
        if (ng_instance_segment_policy(ctx->s, in, &spread, want, sizeof(want)) == NG_MPOL_DEFAULT)
                return 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                bool none = !strcmp(seg->policy, "default");
                if (seg->kind == NG_SEG_PRIVATE || seg->huge || !seg->policy[0] || !strcmp(seg->policy, want) ||
                    seg->bytes < ctx->cfg->min_segment_size_bytes || (none && in->cfg->policy == NG_POLICY_LOCAL))
                        continue;
                char label[sizeof(seg->name) + 64];
                ng_segment_label(seg, label, sizeof(label));
                int r = ng_rules_add_as(ctx, NG_CODE_SEGMENT_POLICY_DRIFT, none ? NG_SEV_INFO : NG_SEV_WARNING, in, label,
                                     &spread, 0, "numaguardctl rebalance installs the instance's policy on the "
                                     "segment itself (enforce = rebalance does so on its own); it lasts as long as "
                                     "the segment",
                                     "%s: its new pages follow %s%s; the instance's policy is %s", label,
                                     seg->policy, none ? " (no policy of its own: each page lands on the node of "
                                     "the process that first touches it)" : "", want);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* "interleave:0-3" as the start options that give it: systemd's
 * NUMAPolicy= name and numactl's option. */
static void start_options(enum ng_mpol mode, const struct ng_bitmap *nodes, char *unit, size_t usize, char *numactl,
                          size_t nsize)
{
        char list[128];
        ng_bitmap_format_list(nodes, list, sizeof(list));
        const char *opt = ng_mpol_numactl_option(mode);
        const char *name = ng_unit_numa_policy_name((int) mode);
        if (name)
                snprintf(unit, usize, "NUMAPolicy=%s and NUMAMask=%s", name, list);
        else    /* systemd has no NUMAPolicy= for weighted interleave */
                snprintf(unit, usize, "ExecStart= under numactl --%s=%s (systemd has no NUMAPolicy= for it)", opt,
                         list);
        snprintf(numactl, nsize, "numactl --%s=%s", opt, list);
}

/* POLICY_NOT_PERSISTENT: a 4 KiB shmem segment carries the instance's
 * policy (numaguardctl rebalance installed it) but the policy dies with the
 * segment: the main process runs under another one and its unit, when it
 * has one, records none, so the next start places its pages by first touch
 * again. Known where the next start's settings are read (ng-dbconf.h:
 * PostgreSQL). */
int ng_rule_policy_persistent(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_db_settings *db = in->main_pid ? ng_snapshot_db_settings(ctx->s, in->main_pid) : NULL;
        if (ctx->s->topo.n_nodes < 2 || !db || !db->policy_known)
                return 0;
        struct ng_bitmap spread;
        char want[96], start[96], label[512 + 64] = "";
        ng_instance_spread_nodes(ctx->s, in, &spread);
        enum ng_mpol mode = ng_instance_segment_policy(ctx->s, in, &spread, want, sizeof(want));
        if (mode == NG_MPOL_DEFAULT)
                return 0;
        for (size_t k = 0; k < in->n_segs && !label[0]; k++) {
                const struct ng_segment *seg = &ctx->a->segments[in->segs[k]];
                if (seg->kind != NG_SEG_PRIVATE && !seg->huge && !strcmp(seg->policy, want))
                        ng_segment_label(seg, label, sizeof(label));
        }
        snprintf(start, sizeof(start), "%s%s%s", ng_mpol_name((enum ng_mpol) db->policy), db->policy_nodes[0] ? ":" : "",
                 db->policy_nodes);
        char list[128];
        ng_bitmap_format_list(&spread, list, sizeof(list));
        bool unit_keeps = db->unit_known && db->unit_has_policy && db->unit_policy == (int) mode &&
                          !strcmp(db->unit_mask, list);
        if (!label[0] || !strcmp(start, want) || unit_keeps)
                return 0;
        char unit_opt[320], numactl[160], advice[1024], where[384];
        start_options(mode, &spread, unit_opt, sizeof(unit_opt), numactl, sizeof(numactl));
        if (db->unit[0]) {
                snprintf(advice, sizeof(advice), "numaguardctl rebalance %s records it in %s (a drop-in with %s, "
                         "then daemon-reload); or write that drop-in yourself", in->name, db->unit, unit_opt);
                snprintf(where, sizeof(where), "; its unit %s %s", db->unit,
                         !db->unit_known ? "could not be read" : db->unit_has_policy ? "sets another NUMAPolicy="
                                                                                      : "sets no NUMAPolicy=");
        } else {
                snprintf(advice, sizeof(advice), "start it under %s%s (numaguard does not write how a %s is "
                         "started)", numactl, in->container ? " in the container's entrypoint: container runtimes "
                         "have no memory-policy option" : "", in->container ? "container" : "hand-started instance");
                snprintf(where, sizeof(where), "; it runs in %s", in->container ? "a container" : "no systemd service");
        }
        return ng_rules_add(ctx, NG_CODE_POLICY_NOT_PERSISTENT, in, label, &spread, 0, advice,
                            "%s follows %s, but that dies with the segment: the main process (pid %d) started under "
                            "%s%s, so the next start places its shared memory by first touch again", label, want,
                            (int) in->main_pid, start, where);
}

bool ng_rules_intended(const struct ng_instance *in, const struct ng_bitmap *remote)
{
        /* An interleave or bind policy that names those nodes is a choice. */
        if (in->cfg->policy == NG_POLICY_LOCAL || ng_bitmap_empty(&in->cfg->nodes))
                return false;
        struct ng_bitmap r = *remote;
        ng_bitmap_and(&r, &in->cfg->nodes);
        return ng_bitmap_equal(&r, remote);
}

int ng_rule_remote(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        if (s->topo.n_nodes < 2 || ng_bitmap_empty(&in->cpu_nodes) || ng_bitmap_empty(&in->mems))
                return 0;
        struct ng_bitmap local = in->mems, allowed_remote = in->mems, sits_remote = {0};
        ng_bitmap_and(&local, &in->cpu_nodes);
        /* Allowed on CPU-bearing nodes that hold none of its CPUs. Memory-only
         * nodes (CXL tiers) are allowed by default and only count when
         * memory actually sits there. */
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                int id = s->topo.nodes[i].id;
                if (ng_bitmap_test(&in->cpu_nodes, (unsigned) id) || ng_bitmap_empty(&s->topo.nodes[i].cpus))
                        ng_bitmap_clear(&allowed_remote, (unsigned) id);
        }
        uint64_t remote_bytes = 0;
        for (size_t i = 0; i < in->n_nodes; i++)
                if (!ng_bitmap_test(&in->cpu_nodes, (unsigned) in->nodes[i].node) && in->nodes[i].bytes) {
                        remote_bytes += in->nodes[i].bytes;
                        ng_bitmap_set(&sits_remote, (unsigned) in->nodes[i].node);
                }
        double share = in->resident_bytes ? (double) remote_bytes / (double) in->resident_bytes : 0;
        const char *advice = "put the instance's memory on the nodes of its CPUs: fix cpuset.mems "
                             "(numaguardctl cpuset apply) or the numactl binding it starts under";

        if (ng_bitmap_empty(&local)) {
                int from = ng_bitmap_next(&in->cpu_nodes, 0), to = ng_bitmap_next(&in->mems, 0);
                /* Sub-NUMA clusters of the CPUs' own socket: a hop inside
                 * it, not across sockets. */
                bool socket = ng_rules_same_socket(s, &in->cpu_nodes, &in->mems);
                int d = ng_snapshot_distance(s, from, to);
                char dist[32] = "distance unknown";
                if (d >= 0)
                        snprintf(dist, sizeof(dist), "distance %d", d);
                return ng_rules_add_as(ctx, NG_CODE_REMOTE_MEMORY, socket ? NG_SEV_WARNING : NG_SEV_CRITICAL, in, NULL,
                           &in->mems, 1.0, advice,
                           "memory is bound to node%s %s but the CPUs %s are on node%s %s (%s): every "
                           "access is remote%s%s",
                           ng_bitmap_count(&in->mems) == 1 ? "" : "s", ng_rules_list_h(&in->mems).s, ng_rules_list_h(&in->cpus).s,
                           ng_bitmap_count(&in->cpu_nodes) == 1 ? "" : "s", ng_rules_list_h(&in->cpu_nodes).s,
                           dist, ng_rules_latency_h(&in->price).s,
                           ng_rules_socket_h(s, &in->cpu_nodes, &in->mems).s);
        }
        if (share >= REMOTE_SHARE_WARN && !ng_rules_intended(in, &sits_remote))
                return ng_rules_add(ctx, NG_CODE_REMOTE_MEMORY, in, NULL, &sits_remote, share, advice,
                           "%" PRIu64 "%% of %s resident %s (%s) sits on node%s %s, which hold%s none "
                           "of the instance's CPUs %s (nodes %s)%s%s",
                           ng_rules_pct(share), ng_rules_bytes_h(in->resident_bytes).s, ng_rules_memory_noun(in),
                           ng_rules_bytes_h(remote_bytes).s,
                           ng_bitmap_count(&sits_remote) == 1 ? "" : "s", ng_rules_list_h(&sits_remote).s,
                           ng_bitmap_count(&sits_remote) == 1 ? "s" : "", ng_rules_list_h(&in->cpus).s,
                           ng_rules_list_h(&in->cpu_nodes).s, ng_rules_latency_h(&in->price).s,
                           ng_rules_socket_h(s, &in->cpu_nodes, &sits_remote).s);
        if (!ng_bitmap_empty(&allowed_remote) && !ng_rules_intended(in, &allowed_remote))
                return ng_rules_add(ctx, NG_CODE_REMOTE_MEMORY, in, NULL, &allowed_remote, 0, advice,
                           "memory may be allocated on node%s %s (allowed nodes %s), which hold%s none of the "
                           "instance's CPUs %s (nodes %s)",
                           ng_bitmap_count(&allowed_remote) == 1 ? "" : "s", ng_rules_list_h(&allowed_remote).s,
                           ng_rules_list_h(&in->mems).s, ng_bitmap_count(&allowed_remote) == 1 ? "s" : "",
                           ng_rules_list_h(&in->cpus).s, ng_rules_list_h(&in->cpu_nodes).s);
        return 0;
}

int ng_rule_cpuset_drift(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_instance_config *ic = in->cfg;
        if (in->origin != NG_INST_CONFIGURED || ng_bitmap_empty(&ic->nodes) || in->n_pids == 0)
                return 0;
        const struct ng_cgroup *cg = in->cgroup ? ng_snapshot_cgroup(ctx->s, in->cgroup) : NULL;
        struct ng_bitmap mems = in->mems, cpu_nodes = in->cpu_nodes;
        if (cg && cg->has_cpuset)
                mems = ng_bitmap_empty(&cg->effective_mems) ? cg->mems : cg->effective_mems;
        bool mems_drift = !ng_bitmap_equal(&mems, &ic->nodes);
        /* local and bind also want the CPUs on those nodes. */
        struct ng_bitmap outside = cpu_nodes;
        for (int id = ng_bitmap_next(&ic->nodes, 0); id >= 0; id = ng_bitmap_next(&ic->nodes, id + 1))
                ng_bitmap_clear(&outside, (unsigned) id);
        bool cpus_drift = ic->policy != NG_POLICY_INTERLEAVE && ic->policy != NG_POLICY_WEIGHTED_INTERLEAVE &&
                          !ng_bitmap_empty(&outside);
        if (!mems_drift && !cpus_drift)
                return 0;
        return ng_rules_add(ctx, NG_CODE_CPUSET_DRIFT, in, NULL, &ic->nodes, 0,
                   "set the cgroup's cpuset.mems/cpuset.cpus to the configured nodes (numaguardctl cpuset apply)",
                   "%s%s has memory nodes %s and CPUs on nodes %s; the configured policy %s wants nodes %s",
                   cg ? "cpuset " : "processes", cg ? cg->path : "", ng_rules_list_h(&mems).s, ng_rules_list_h(&cpu_nodes).s,
                   ng_config_policy_name(ic->policy),
                   ng_rules_list_h(&ic->nodes).s);
}

/* What the owner writes back for one of the two sets: its declared value,
 * or on systemd "" (the parent's) when the property is unset; false when it
 * leaves the set alone (a cgconfig group without that key). */
static bool owner_restores(const struct ng_owner *ow, bool mems, struct ng_bitmap *ret)
{
        bool has = mems ? ow->has_mems : ow->has_cpus;
        if (!has && ow->kind != NG_OWNER_SYSTEMD)
                return false;
        *ret = has ? (mems ? ow->mems : ow->cpus) : (struct ng_bitmap) {0};
        return true;
}

/* "cpuset.mems 6, its owner restores 0" for the sets that differ. */
static void describe_restore(const struct ng_owner *ow, const struct ng_cgroup *cg, bool mems, char *buf, size_t size)
{
        struct ng_bitmap want;
        const struct ng_bitmap *live = mems ? &cg->mems : &cg->cpus;
        size_t n = strlen(buf);
        if (!owner_restores(ow, mems, &want) || ng_bitmap_equal(&want, live))
                return;
        const char *prop = ow->kind == NG_OWNER_SYSTEMD ? (mems ? "AllowedMemoryNodes=" : "AllowedCPUs=")
                           : ow->kind == NG_OWNER_CGCONFIG ? (mems ? "cpuset.mems = " : "cpuset.cpus = ")
                           : (mems ? "saved cpuset-mems " : "saved cpuset-cpus ");
        snprintf(buf + n, size - n, "%scpuset.%s is %s, %s%s%s", n ? "; " : "", mems ? "mems" : "cpus",
                 ng_bitmap_empty(live) ? "empty (the parent's)" : ng_rules_list_h(live).s, prop,
                 ng_bitmap_empty(&want) ? "" : ng_rules_list_h(&want).s, ng_bitmap_empty(&want) ? " (unset: the parent's)" : "");
}

/* A pod's cpuset is the kubelet's: one that puts CPUs and memory on
 * different nodes is fixed through the kubelet's settings, or not at all
 * (a live write lasts until the container restarts; the CPU Manager's
 * reconcile puts cpuset.cpus back sooner). */
static int kubelet_not_aligned(struct audit_ctx *ctx, const struct ng_instance *in, const struct ng_cgroup *cg)
{
        const struct ng_bitmap *mems = ng_bitmap_empty(&cg->effective_mems) ? &cg->mems : &cg->effective_mems;
        if (ng_bitmap_empty(mems) || ng_bitmap_empty(&in->cpu_nodes) || ng_bitmap_equal(mems, &in->cpu_nodes))
                return 0;
        const char *qos = in->owner->source;
        return ng_rules_add(ctx, NG_CODE_CPUSET_NOT_PERSISTENT, in, NULL, mems, 1,
                   "let the kubelet align it: cpuManagerPolicy static, memoryManagerPolicy Static and "
                   "topologyManagerPolicy single-numa-node in its configuration, and a Guaranteed pod (integer CPU "
                   "requests equal to limits, memory requests equal to limits)",
                   "cpuset %s of pod %s (%s QoS) is the kubelet's: CPUs on node%s %s, memory on node%s %s; a live "
                   "change is undone when the container restarts", cg->path, in->owner->name, qos[0] ? qos : "unknown",
                   ng_bitmap_count(&in->cpu_nodes) == 1 ? "" : "s", ng_rules_list_h(&in->cpu_nodes).s,
                   ng_bitmap_count(mems) == 1 ? "" : "s", ng_rules_list_h(mems).s);
}

/* What a container's runtime puts back when it starts it again. */
static int container_not_persistent(struct audit_ctx *ctx, const struct ng_instance *in, const struct ng_cgroup *cg,
                                    const char *diff)
{
        const struct ng_owner *ow = in->owner;
        bool docker = ow->kind == NG_OWNER_DOCKER;
        return ng_rules_add(ctx, NG_CODE_CPUSET_NOT_PERSISTENT, in, NULL, &cg->mems, 1,
                   docker ? "save it with the container: docker update --cpuset-cpus=... --cpuset-mems=... "
                            "(Docker's POST /containers/{id}/update)"
                          : "Podman 4.3's podman update changes the cgroup only: recreate the container with "
                            "--cpuset-cpus=... --cpuset-mems=... (podman create/run) to keep it",
                   "cpuset %s differs from what %s container %s restores when it starts (%s): %s", cg->path,
                   docker ? "docker" : "podman", ow->name, ow->source, diff);
}

/* The owner puts its own values back (systemd on daemon-reload or a restart
 * of the unit, cgconfig at boot, a container's runtime when it starts it):
 * a live cpuset that differs is undone. */
int ng_rule_not_persistent(struct audit_ctx *ctx, const struct ng_instance *in)
{
        const struct ng_owner *ow = in->owner;
        const struct ng_cgroup *cg = in->cgroup ? ng_snapshot_cgroup(ctx->s, in->cgroup) : NULL;
        if (ow && cg && cg->has_cpuset && ow->kind == NG_OWNER_KUBELET)
                return kubelet_not_aligned(ctx, in, cg);
        if (!ow || !cg || !cg->has_cpuset || !ow->known || ow->kind == NG_OWNER_NONE || ow->kind == NG_OWNER_UNKNOWN)
                return 0;
        const struct ng_feature_probe *v1 = &ctx->s->topo.features[NG_FEATURE_CGROUP_V1_CPUSET];
        if (ow->kind == NG_OWNER_CGCONFIG && ow->v1_mount && v1->state == NG_FEATURE_ABSENT)
                return ng_rules_add(ctx, NG_CODE_CPUSET_NOT_PERSISTENT, in, NULL, &cg->mems, 1,
                           "move the cpuset to a systemd unit (AllowedCPUs=, AllowedMemoryNodes=), or drop the v1 "
                           "mount section (libcgroup 2 and later use the v2 hierarchy)",
                           "cpuset %s's owner, cgconfig group %s, cannot work on this kernel: %s mounts a v1 cpuset "
                           "hierarchy and the kernel has none (kernel feature cgroup_v1_cpuset absent), so "
                           "cgconfigparser fails at boot and re-creates nothing: the live cpuset lasts until the "
                           "cgroup is removed or the host reboots", cg->path, ow->name, ow->v1_mount_file);
        char diff[384] = "";
        describe_restore(ow, cg, true, diff, sizeof(diff));
        describe_restore(ow, cg, false, diff, sizeof(diff));
        if (!diff[0])
                return 0;
        if (ow->kind == NG_OWNER_DOCKER || ow->kind == NG_OWNER_PODMAN)
                return container_not_persistent(ctx, in, cg, diff);
        bool sd = ow->kind == NG_OWNER_SYSTEMD;
        return ng_rules_add(ctx, NG_CODE_CPUSET_NOT_PERSISTENT, in, NULL, &cg->mems, 1,
                   sd ? "write through the unit (numaguardctl cpuset apply, or systemctl set-property UNIT "
                        "AllowedCPUs=... AllowedMemoryNodes=...)"
                      : "write the group's values in its cgconfig file too (numaguardctl cpuset apply)",
                   "cpuset %s differs from what its owner %s %s (%s) restores%s: %s", cg->path,
                   sd ? "systemd unit" : "cgconfig group", ow->name, ow->source,
                   sd ? " on daemon-reload or a restart of the unit" : " at boot", diff);
}

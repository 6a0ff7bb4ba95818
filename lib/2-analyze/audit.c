/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze, part 1: instances (configured, discovered, unclaimed) and what
 * belongs to them. The rules live in rules.c. Pure: no I/O.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-internal.h"
#include "audit-ns.h"
#include "cleanup.h"
#include "engine.h"
#include "util.h"

/* ---- process sets ---- */

static int pids_add(struct ng_instance *in, pid_t pid)
{
        /* pid order, so a lookup is a bisection: an unclaimed segment
         * brings thousands of attachers, in order (appended). */
        size_t lo = 0, hi = in->n_pids;
        if (hi && in->pids[hi - 1] < pid)
                lo = hi;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (in->pids[mid] == pid)
                        return 0;
                if (in->pids[mid] < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (ng_grow(&in->pids, NULL, in->n_pids, sizeof(*in->pids), 0) < 0)
                return -ENOMEM;
        size_t i = lo;
        memmove(in->pids + i + 1, in->pids + i, (in->n_pids - i) * sizeof(*in->pids));
        in->pids[i] = pid;
        in->n_pids++;
        return 0;
}

static bool has_pid(const struct ng_instance *in, pid_t pid)
{
        size_t lo = 0, hi = in->n_pids;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (in->pids[mid] == pid)
                        return true;
                if (in->pids[mid] < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

static struct ng_instance *new_instance(struct audit_ctx *ctx, const char *name, enum ng_instance_origin origin,
                                        const char *type, const struct ng_instance_config *cfg)
{
        struct ng_audit *a = ctx->a;
        if (ng_grow(&a->instances, NULL, a->n_instances, sizeof(*a->instances), 0) < 0)
                return NULL;
        struct ng_instance *in = &a->instances[a->n_instances++];
        memset(in, 0, sizeof(*in));
        /* Discovered names may collide (two postmasters without -D): suffix. */
        snprintf(in->name, sizeof(in->name), "%s", name);
        for (unsigned k = 2; ng_audit_instance(a, in->name) != in && k < 1000; k++)
                snprintf(in->name, sizeof(in->name), "%.56s#%u", name, k);
        in->origin = origin;
        in->type = type;
        in->cfg = cfg;
        return in;
}

/* ---- configured instances ---- */

static bool cgroup_under(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);
        while (n > 1 && prefix[n - 1] == '/')
                n--;
        if (n == 1 && prefix[0] == '/')
                return true;
        return !strncmp(path, prefix, n) && (path[n] == '/' || path[n] == '\0');
}

static bool proc_in_cgroup(const struct ng_proc *pr, const char *cg)
{
        for (size_t i = 0; i < pr->cgroup.n; i++)
                if (cgroup_under(pr->cgroup.e[i].path, cg))
                        return true;
        return false;
}

static pid_t pidfile_pid(const struct ng_snapshot *s, const char *path)
{
        for (size_t i = 0; i < s->n_pidfiles; i++)
                if (!strcmp(s->pidfiles[i].path, path))
                        return s->pidfiles[i].pid;
        return 0;
}

/* True if pid is ancestor or one of its descendants (bounded walk up). */
static bool descends_from(const struct ng_snapshot *s, const struct ng_proc *pr, pid_t ancestor)
{
        for (int depth = 0; pr && depth < 64; depth++) {
                if (pr->pid == ancestor)
                        return true;
                if (pr->stat.ppid <= 1)
                        return false;
                pr = ng_snapshot_proc(s, pr->stat.ppid);
        }
        return false;
}

static bool has_process_matcher(const struct ng_instance_config *ic)
{
        return ic->match_comm || ic->match_cmdline || ic->cgroup || ic->pidfile || ic->container;
}

static bool proc_matches(const struct ng_snapshot *s, const struct ng_instance_config *ic, const struct ng_proc *pr)
{
        if (ic->match_comm && fnmatch(ic->match_comm, pr->name, 0) != 0)
                return false;
        if (ic->match_cmdline && fnmatch(ic->match_cmdline, pr->cmdline ? pr->cmdline : "", 0) != 0)
                return false;
        if (ic->cgroup && !proc_in_cgroup(pr, ic->cgroup))
                return false;
        const struct ng_container *ct = ic->container ? ng_snapshot_container(s, pr) : NULL;
        if (ic->container && (!ct || fnmatch(ic->container, ct->name, 0) != 0))
                return false;
        if (ic->pidfile) {
                pid_t main = pidfile_pid(s, ic->pidfile);
                if (main <= 0 || !descends_from(s, pr, main))
                        return false;
        }
        return true;
}

/* The processes its matchers find, of one cluster (PID and IPC
 * namespace) unless span_namespaces = yes (audit-ns.h). */
static int add_configured(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        for (size_t i = 0; i < ctx->cfg->n_instances; i++) {
                const struct ng_instance_config *ic = &ctx->cfg->instances[i];
                struct ng_instance *in = new_instance(ctx, ic->name, NG_INST_CONFIGURED, "configured", ic);
                if (!in)
                        return -ENOMEM;
                if (ic->pidfile)
                        in->main_pid = pidfile_pid(s, ic->pidfile);
                for (size_t k = 0; k < s->n_procs && has_process_matcher(ic); k++)
                        if (proc_matches(s, ic, s->procs[k]) && pids_add(in, s->procs[k]->pid) < 0)
                                return -ENOMEM;
                int r = ng_ns_take_cluster(ctx, in, in->main_pid);
                if (r < 0)
                        return r;
                if (!in->main_pid && in->n_pids)
                        in->main_pid = in->pids[0];
        }
        return 0;
}

/* Whether a configured instance holds the process: then no discovered
 * instance does (configured ones come first). */
static bool held(const struct audit_ctx *ctx, pid_t pid)
{
        for (size_t i = 0; i < ctx->a->n_instances && ctx->a->instances[i].origin == NG_INST_CONFIGURED; i++)
                if (has_pid(&ctx->a->instances[i], pid))
                        return true;
        return false;
}

/* ---- discovery ---- */

/* The value of "-D DIR", "-DDIR", "--datadir=DIR" or "--datadir DIR". */
static bool cmdline_arg(const char *cmdline, const char *shortopt, const char *longopt, char *buf, size_t size)
{
        const char *p = cmdline;
        while (p && *p) {
                while (*p == ' ')
                        p++;
                const char *end = strchr(p, ' ');
                size_t len = end ? (size_t) (end - p) : strlen(p);
                const char *val = NULL;
                size_t sl = strlen(shortopt), ll = strlen(longopt);
                if (len == sl && !strncmp(p, shortopt, sl) && end)
                        val = end + 1;
                else if (len > sl && !strncmp(p, shortopt, sl) && sl == 2)
                        val = p + sl;
                else if (len > ll + 1 && !strncmp(p, longopt, ll) && p[ll] == '=')
                        val = p + ll + 1;
                else if (len == ll && !strncmp(p, longopt, ll) && end)
                        val = end + 1;
                if (val) {
                        size_t vl = strcspn(val, " ");
                        snprintf(buf, size, "%.*s", (int) (vl < size ? vl : size - 1), val);
                        return vl > 0;
                }
                p = end;
        }
        return false;
}

/* The SID of a background process (Oracle's ora_dbw0_FIN_PROD: FIN_PROD,
 * asm_pmon_+ASM: +ASM): prefix, a name without '_', then the SID, which may
 * itself hold '_'. NULL when name is not of that shape. */
static const char *process_sid(const char *name, const char *prefix)
{
        size_t pl = strlen(prefix);
        if (strncmp(name, prefix, pl))
                return NULL;
        const char *us = strchr(name + pl, '_');
        return us && us > name + pl && us[1] ? us + 1 : NULL;
}

/* A dedicated server shows as <prefix><SID> in argv[0] (Oracle's
 * "oracle<SID> (LOCAL=NO)") while its comm is the prefix, the prefix and
 * more (Oracle 12c and later: "oracle_<pid>_<sid>") or the cut
 * "<prefix><SID>": judge by the first word of argv[0]. */
static bool is_dedicated_server(const struct ng_proc *pr, const char *prefix, const char *sid)
{
        const char *a = pr->cmdline ? pr->cmdline : pr->name;
        size_t pl = strlen(prefix), n = strlen(sid);
        return !strncmp(pr->stat.comm, prefix, pl) && !strncmp(a, prefix, pl) && !strncmp(a + pl, sid, n) &&
               (a[pl + n] == '\0' || a[pl + n] == ' ');
}

/* Names are the full ones (ng_proc.name), so SIDs longer than the 15
 * characters of comm, several instances and ASM (asm_pmon_+ASM) come out
 * whole and distinct. Background processes are <member_prefix><name>_<SID>;
 * dedicated servers are <dedicated_prefix><SID>. */
/* Containers run the same SIDs and data directories side by side: an
 * instance in one is "<name>@<container>" (its name, else its pod's, else
 * its id), and only the processes of its container are its own. */
static void container_suffix(const struct ng_container *ct, char *buf, size_t size)
{
        if (!ct)
                buf[0] = '\0';
        else
                snprintf(buf, size, "@%.40s", ct->name[0] ? ct->name : ct->pod[0] ? ct->pod : ct->id);
}

static int discover_by_sid(struct audit_ctx *ctx, const struct ng_engine *e, const struct ng_proc *main)
{
        const struct ng_snapshot *s = ctx->s;
        const char *sid = process_sid(main->name, e->member_prefix);
        const struct ng_container *ct = ng_snapshot_container(s, main);
        char name[NG_INSTANCE_NAME_MAX + 1], at[48];
        container_suffix(ct, at, sizeof(at));
        snprintf(name, sizeof(name), "%s:%.*s%s", e->name, (int) (sizeof(name) - 2 - strlen(e->name) - strlen(at)),
                 sid, at);
        struct ng_instance *in = new_instance(ctx, name, NG_INST_DISCOVERED, e->type, &ctx->a->default_cfg);
        if (!in)
                return -ENOMEM;
        in->main_pid = main->pid;
        for (size_t k = 0; k < s->n_procs; k++) {
                const struct ng_proc *pr = s->procs[k];
                const char *psid = process_sid(pr->name, e->member_prefix);
                bool mine = (psid && !strcmp(psid, sid)) ||
                            (e->dedicated_prefix && is_dedicated_server(pr, e->dedicated_prefix, sid));
                if (mine && pr->status.uid == main->status.uid && ng_snapshot_container(s, pr) == ct &&
                    !held(ctx, pr->pid) && pids_add(in, pr->pid) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The main process of a family (for a nested one, the process whose parent
 * is not of the family); its children of the family join the instance. */
static int discover_by_family(struct audit_ctx *ctx, const struct ng_engine *e, const struct ng_proc *main)
{
        const struct ng_snapshot *s = ctx->s;
        char dir[256], name[NG_INSTANCE_NAME_MAX + 1], at[48];
        container_suffix(ng_snapshot_container(s, main), at, sizeof(at));
        int room = (int) (sizeof(name) - 2 - strlen(e->name) - strlen(at));
        if (cmdline_arg(main->cmdline, e->dir_shortopt, e->dir_longopt, dir, sizeof(dir)))
                snprintf(name, sizeof(name), "%s:%.*s%s", e->name, room < 50 ? room : 50, dir, at);
        else
                snprintf(name, sizeof(name), "%s:%d%s", e->name, (int) main->pid, at);
        struct ng_instance *in = new_instance(ctx, name, NG_INST_DISCOVERED, e->type, &ctx->a->default_cfg);
        if (!in)
                return -ENOMEM;
        in->main_pid = main->pid;
        for (size_t k = 0; k < s->n_procs; k++) {
                const struct ng_proc *pr = s->procs[k];
                if ((pr->pid == main->pid || (pr->stat.ppid == main->pid && ng_engine_in_family(e, pr->name))) &&
                    !held(ctx, pr->pid) && pids_add(in, pr->pid) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Whether pr is the main process of an instance of e. */
static bool is_main_process(const struct ng_engine *e, const struct ng_proc *pr, const struct ng_proc *parent)
{
        if (e->main_prefix) {
                size_t n = strlen(e->main_prefix);
                if (strncmp(pr->name, e->main_prefix, n) || !pr->name[n])
                        return false;
                return !(parent && !strcmp(parent->name, pr->name));    /* not a fork of its parent */
        }
        return ng_engine_in_family(e, pr->name) && !(e->nested && parent && ng_engine_in_family(e, parent->name));
}

static int discover(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;

        /* A main process is one of its engine's processes: the engines'
         * names do not overlap, so only that engine is asked. One a
         * configured instance holds makes no discovered instance, and
         * those it holds are in none. */
        for (size_t k = 0; k < s->n_procs; k++) {
                const struct ng_proc *pr = s->procs[k];
                const struct ng_engine *e = ng_engine_of_process(pr->name);
                if (!e || !is_main_process(e, pr, ng_snapshot_proc(s, pr->stat.ppid)) || held(ctx, pr->pid))
                        continue;
                int r = e->main_prefix ? discover_by_sid(ctx, e, pr) : discover_by_family(ctx, e, pr);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- what each instance holds ---- */

static int segs_add(struct ng_instance *in, size_t idx)
{
        for (size_t i = 0; i < in->n_segs; i++)
                if (in->segs[i] == idx)
                        return 0;
        if (ng_grow(&in->segs, NULL, in->n_segs, sizeof(*in->segs), 0) < 0)
                return -ENOMEM;
        in->segs[in->n_segs++] = idx;
        return 0;
}

static bool seg_belongs(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_segment *seg)
{
        /* its owner's SysV segments and /dev/shm (or hugetlbfs) files,
         * attached or not, in its namespaces */
        if ((seg->kind == NG_SEG_SYSV || seg->kind == NG_SEG_FILE) && in->cfg->shm_owner_uid != NG_UID_UNSET &&
            seg->uid == in->cfg->shm_owner_uid && ng_ns_segment_in(s, in, seg))
                return true;
        for (size_t k = 0; k < seg->n_pids; k++)
                if (has_pid(in, seg->pids[k]))
                        return true;
        return false;
}

static const char *cpuset_cgroup_of(const struct ng_snapshot *s, const struct ng_proc *pr)
{
        for (size_t i = 0; i < pr->cgroup.n; i++) {
                const struct ng_cgroup *cg = ng_snapshot_cgroup(s, pr->cgroup.e[i].path);
                if (cg && (cg->version == 2 ? pr->cgroup.e[i].hierarchy_id == 0
                                            : strstr(pr->cgroup.e[i].controllers, "cpuset") != NULL))
                        return cg->path;
        }
        return NULL;
}

/* Whether an instance (with configured_only, a configured one: they come
 * first) holds the segment. */
static bool claimed(const struct ng_audit *a, size_t seg_idx, bool configured_only)
{
        for (size_t i = 0; i < a->n_instances; i++) {
                if (configured_only && a->instances[i].origin != NG_INST_CONFIGURED)
                        break;
                for (size_t k = 0; k < a->instances[i].n_segs; k++)
                        if (a->instances[i].segs[k] == seg_idx)
                                return true;
        }
        return false;
}

static int fill_instance(struct audit_ctx *ctx, struct ng_instance *in)
{
        const struct ng_snapshot *s = ctx->s;
        size_t at = 0;
        for (size_t k = 0; k < in->n_pids; k++) {
                const struct ng_proc *pr = ng_snapshot_proc_next(s, in->pids[k], &at);
                if (!pr)
                        continue;
                if (pr->status.has_cpus_allowed)
                        ng_bitmap_or_idset(&in->cpus, &pr->status.cpus_allowed);
                if (pr->status.has_mems_allowed)
                        ng_bitmap_or_idset(&in->mems, &pr->status.mems_allowed);
                in->vm_pte_kib += pr->status.vm_pte_kib;
                in->hugetlb_kib += pr->status.hugetlb_kib;
                in->rss_shmem_kib += pr->status.rss_shmem_kib;
                /* what it maps is unknown: so are the instance's sizes */
                if (pr->maps_errno)
                        in->shared_unknown = in->resident_unknown = true;
        }
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (ng_bitmap_intersects(&s->topo.nodes[i].cpus, &in->cpus))
                        ng_bitmap_set(&in->cpu_nodes, (unsigned) s->topo.nodes[i].id);
        const struct ng_proc *main = ng_snapshot_proc(s, in->main_pid);
        if (main) {
                in->cgroup = cpuset_cgroup_of(s, main);
                in->container = ng_snapshot_container(s, main);
        }
        const struct ng_cgroup *cg = in->cgroup ? ng_snapshot_cgroup(s, in->cgroup) : NULL;
        /* The root cpuset is never rewritten: nobody's to name. */
        in->owner = cg && strcmp(cg->path, "/") ? &cg->owner : NULL;

        for (size_t i = 0; i < ctx->a->n_segments; i++) {
                const struct ng_segment *seg = &ctx->a->segments[i];
                /* a segment a configured instance holds is in no discovered one */
                if (!seg_belongs(s, in, seg) || (in->origin == NG_INST_DISCOVERED && claimed(ctx->a, i, true)))
                        continue;
                if (segs_add(in, i) < 0)
                        return -ENOMEM;
                in->shared_bytes += seg->bytes;
                if (seg->kind == NG_SEG_PRIVATE)
                        in->private_bytes += seg->bytes;
                in->shared_unknown |= seg->bytes_unknown;
                in->resident_bytes += seg->resident_bytes;
                for (size_t k = 0; k < seg->n_nodes; k++)
                        if (ng_node_bytes_add(&in->nodes, &in->n_nodes, seg->nodes[k].node, seg->nodes[k].bytes) < 0)
                                return -ENOMEM;
        }
        return 0;
}

/* Large segments nobody claims are audited as pseudo-instances of their own
 * attachers, so a cyclops still shows up on a host with no config. */
static int add_unclaimed(struct audit_ctx *ctx)
{
        struct ng_audit *a = ctx->a;
        size_t n_claiming = a->n_instances;
        for (size_t i = 0; i < a->n_segments; i++) {
                const struct ng_segment *seg = &a->segments[i];
                if (seg->n_pids == 0 || seg->kind == NG_SEG_PRIVATE ||
                    (seg->bytes < ctx->cfg->min_segment_size_bytes && !seg->bytes_unknown) || claimed(a, i, false))
                        continue;
                char name[NG_INSTANCE_NAME_MAX + 1];
                /* another namespace's shmid or name may be the host's too */
                if (seg->kind == NG_SEG_SYSV && seg->other_ns)
                        snprintf(name, sizeof(name), "unclaimed:ipc-%" PRIu64 ":shmid-%" PRId32, seg->ipc_ns,
                                 seg->shmid);
                else if (seg->kind == NG_SEG_SYSV)
                        snprintf(name, sizeof(name), "unclaimed:shmid-%" PRId32, seg->shmid);
                else if (seg->other_ns)
                        snprintf(name, sizeof(name), "unclaimed:mnt-%" PRIu64 ":%.30s", seg->mnt_ns, seg->name);
                else
                        snprintf(name, sizeof(name), "unclaimed:%.53s", seg->name);
                struct ng_instance *in = new_instance(ctx, name, NG_INST_UNCLAIMED, "unclaimed", &a->default_cfg);
                if (!in)
                        return -ENOMEM;
                for (size_t k = 0; k < seg->n_pids; k++)
                        if (pids_add(in, seg->pids[k]) < 0)
                                return -ENOMEM;
                in->main_pid = seg->pids[0];
                /* Only this segment: its attachers may map others we claimed. */
                int r = fill_instance(ctx, in);
                if (r < 0)
                        return r;
                in->n_segs = 0;
                in->shared_bytes = in->private_bytes = in->resident_bytes = 0;
                free(in->nodes);
                in->nodes = NULL;
                in->n_nodes = 0;
                if (segs_add(in, i) < 0)
                        return -ENOMEM;
                in->shared_bytes = seg->bytes;
                in->shared_unknown = seg->bytes_unknown;
                in->resident_bytes = seg->resident_bytes;
                for (size_t k = 0; k < seg->n_nodes; k++)
                        if (ng_node_bytes_add(&in->nodes, &in->n_nodes, seg->nodes[k].node, seg->nodes[k].bytes) < 0)
                                return -ENOMEM;
        }
        (void) n_claiming;
        return 0;
}

/* ---- entry points ---- */

static void default_instance_cfg(struct ng_instance_config *ic)
{
        memset(ic, 0, sizeof(*ic));
        ic->shm_owner_uid = NG_UID_UNSET;
        ic->policy = NG_POLICY_LOCAL;
        ic->hugepages = NG_HUGEPAGES_PREFERRED;
}

/* What today's placement costs against interleaving (ng-price.h). */
static int price_instance(struct audit_ctx *ctx, struct ng_instance *in)
{
        _cleanup_free_ struct ng_node_share *cpu = NULL;
        size_t n;
        bool measured;
        int r = ng_price_cpu_share(ctx->s, in->pids, in->n_pids, &in->cpu_nodes, &cpu, &n, &measured);
        if (r < 0)
                return r;
        r = ng_price_compute(ctx->s, &in->cpu_nodes, cpu, n, in->nodes, in->n_nodes, &in->price);
        in->price.cpu_share_measured = measured;
        return r;
}

int ng_audit_run(const struct ng_snapshot *s, const struct ng_config *cfg, struct ng_audit **ret)
{
        assert(s && cfg && ret);
        _ng_cleanup_(ng_audit_freep) struct ng_audit *a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        default_instance_cfg(&a->default_cfg);
        a->min_segment_bytes = cfg->min_segment_size_bytes;
        struct audit_ctx ctx = { .s = s, .cfg = cfg, .a = a };

        int r = ng_segments_build(s, &a->segments, &a->n_segments);
        if (r >= 0)
                r = add_configured(&ctx);
        /* the engines' instances no configured one holds */
        if (r >= 0 && cfg->autodiscover)
                r = discover(&ctx);
        for (size_t i = 0; i < a->n_instances && r >= 0; i++)
                r = fill_instance(&ctx, &a->instances[i]);
        if (r >= 0)
                r = add_unclaimed(&ctx);
        for (size_t i = 0; i < a->n_instances && r >= 0; i++)
                r = price_instance(&ctx, &a->instances[i]);
        if (r >= 0)
                r = ng_audit_rules(&ctx);
        ng_ns_splits_free(&ctx);
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&a);
        return 0;
}

void ng_audit_free(struct ng_audit *a)
{
        if (!a)
                return;
        ng_segments_free(a->segments, a->n_segments);
        for (size_t i = 0; i < a->n_instances; i++) {
                free(a->instances[i].pids);
                free(a->instances[i].segs);
                free(a->instances[i].nodes);
                ng_price_done(&a->instances[i].price);
        }
        free(a->instances);
        free(a->findings);
        for (size_t i = 0; i < a->n_acknowledged; i++)
                free(a->acknowledged[i].by);
        free(a->acknowledged);
        free(a);
}

int ng_audit_exit_status(const struct ng_audit *a)
{
        int worst = 0;
        for (size_t i = 0; i < a->n_findings; i++) {
                int v = a->findings[i].severity == NG_SEV_CRITICAL ? 2 : a->findings[i].severity == NG_SEV_WARNING ? 1 : 0;
                if (v > worst)
                        worst = v;
        }
        return worst;
}

const struct ng_instance *ng_audit_instance(const struct ng_audit *a, const char *name)
{
        for (size_t i = 0; i < a->n_instances; i++)
                if (!strcmp(a->instances[i].name, name))
                        return &a->instances[i];
        return NULL;
}

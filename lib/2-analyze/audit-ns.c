/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: a configured instance is one cluster of processes, one PID and
 * one IPC namespace (audit-ns.h). Pure: no I/O.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-ns.h"
#include "cleanup.h"
#include "rules-internal.h"
#include "util.h"

static bool same_key(const struct ng_ns_cluster *c, uint64_t pid_ns, uint64_t ipc_ns)
{
        return c->pid_ns == pid_ns && c->ipc_ns == ipc_ns;
}

int ng_ns_clusters(const struct ng_snapshot *s, const pid_t *pids, size_t n, struct ng_ns_cluster **ret,
                   size_t *ret_n)
{
        _cleanup_free_ struct ng_ns_cluster *v = NULL;
        size_t nv = 0, at = 0;
        for (size_t k = 0; k < n; k++) {
                const struct ng_proc *pr = ng_snapshot_proc_next(s, pids[k], &at);
                uint64_t pid_ns = pr ? pr->pid_ns : 0, ipc_ns = pr ? pr->ipc_ns : 0;
                size_t i = 0;
                while (i < nv && !same_key(&v[i], pid_ns, ipc_ns))
                        i++;
                if (i == nv) {
                        /* pids ascend: a cluster's first pid is its lowest */
                        if (ng_grow(&v, NULL, nv, sizeof(*v), 0) < 0)
                                return -ENOMEM;
                        v[nv++] = (struct ng_ns_cluster) { .pid_ns = pid_ns, .ipc_ns = ipc_ns, .main_pid = pids[k] };
                }
                v[i].n_pids++;
        }
        *ret = ng_steal_ptr(&v);
        *ret_n = nv;
        return 0;
}

size_t ng_ns_cluster_choose(const struct ng_snapshot *s, const struct ng_ns_cluster *v, size_t n,
                            pid_t pidfile_pid, enum ng_ns_choice *ret_why)
{
        const struct ng_proc *main = pidfile_pid > 0 ? ng_snapshot_proc(s, pidfile_pid) : NULL;
        for (size_t i = 0; main && i < n; i++)
                if (same_key(&v[i], main->pid_ns, main->ipc_ns)) {
                        *ret_why = NG_NS_PIDFILE;
                        return i;
                }
        for (size_t i = 0; i < n; i++)
                if (same_key(&v[i], s->pid_ns, s->ipc_ns)) {
                        *ret_why = NG_NS_OWN;
                        return i;
                }
        /* by main pid: the first of equals has the lowest */
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
                if (v[i].n_pids > v[best].n_pids)
                        best = i;
        *ret_why = NG_NS_LARGEST;
        return best;
}

int ng_ns_take_cluster(struct audit_ctx *ctx, struct ng_instance *in, pid_t pidfile_pid)
{
        const struct ng_snapshot *s = ctx->s;
        _cleanup_free_ struct ng_ns_cluster *v = NULL;
        size_t n;
        int r = ng_ns_clusters(s, in->pids, in->n_pids, &v, &n);
        if (r < 0)
                return r;
        if (n == 1) {
                in->pid_ns = v[0].pid_ns;
                in->ipc_ns = v[0].ipc_ns;
        }
        if (n <= 1 || in->cfg->span_namespaces)
                return 0;
        enum ng_ns_choice why;
        size_t c = ng_ns_cluster_choose(s, v, n, pidfile_pid, &why);
        size_t k = 0, at = 0;
        for (size_t i = 0; i < in->n_pids; i++) {
                const struct ng_proc *pr = ng_snapshot_proc_next(s, in->pids[i], &at);
                if (same_key(&v[c], pr ? pr->pid_ns : 0, pr ? pr->ipc_ns : 0))
                        in->pids[k++] = in->pids[i];
        }
        in->n_pids = k;
        in->pid_ns = v[c].pid_ns;
        in->ipc_ns = v[c].ipc_ns;
        if (ng_grow(&ctx->splits, NULL, ctx->n_splits, sizeof(*ctx->splits), 0) < 0)
                return -ENOMEM;
        ctx->splits[ctx->n_splits++] = (struct ng_ns_split) {
                .instance = (size_t) (in - ctx->a->instances), .v = ng_steal_ptr(&v), .n = n, .chosen = c,
                .why = (int) why };
        return 0;
}

bool ng_ns_segment_in(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_segment *seg)
{
        if (in->cfg->span_namespaces || in->n_pids == 0)
                return true;
        if (seg->kind == NG_SEG_SYSV)
                return seg->ipc_ns == in->ipc_ns;
        const struct ng_proc *main = ng_snapshot_proc(s, in->main_pid);
        return !main || seg->kind != NG_SEG_FILE || seg->mnt_ns == main->mnt_ns;
}

void ng_ns_splits_free(struct audit_ctx *ctx)
{
        for (size_t i = 0; i < ctx->n_splits; i++)
                free(ctx->splits[i].v);
        free(ctx->splits);
        ctx->splits = NULL;
        ctx->n_splits = 0;
}

/* ---- INSTANCE_AMBIGUOUS ---- */

/* Appends to buf (size) at *at; false once it no longer fits (buf keeps
 * what fitted before). */
static bool append(char *buf, size_t size, size_t *at, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = *at < size ? vsnprintf(buf + *at, size - *at, fmt, ap) : -1;
        va_end(ap);
        if (n < 0 || (size_t) n >= size - *at) {
                buf[*at < size ? *at : size - 1] = '\0';
                return false;
        }
        *at += (size_t) n;
        return true;
}

static void matchers_h(const struct ng_instance_config *ic, char *buf, size_t size)
{
        size_t at = 0;
        buf[0] = '\0';
        const struct {
                const char *key, *value;
        } m[] = {
                { "match_comm", ic->match_comm }, { "match_cmdline", ic->match_cmdline }, { "cgroup", ic->cgroup },
                { "container", ic->container }, { "pidfile", ic->pidfile },
        };
        for (size_t i = 0; i < ELEMENTSOF(m); i++)
                if (m[i].value && !append(buf, size, &at, "%s%s=%.80s", at ? " " : "", m[i].key, m[i].value))
                        return;
}

static void ns_h(uint64_t ns, char *buf, size_t size)
{
        if (ns)
                snprintf(buf, size, "%" PRIu64, ns);
        else
                snprintf(buf, size, "unknown");
}

static bool cluster_h(const struct ng_snapshot *s, const struct ng_ns_cluster *c, char *buf, size_t size, size_t *at)
{
        char p[24], i[24], where[200] = "";
        ns_h(c->pid_ns, p, sizeof(p));
        ns_h(c->ipc_ns, i, sizeof(i));
        const struct ng_proc *pr = ng_snapshot_proc(s, c->main_pid);
        const struct ng_container *ct = pr ? ng_snapshot_container(s, pr) : NULL;
        if (ct)
                snprintf(where, sizeof(where), ", %s container %.80s", ct->runtime[0] ? ct->runtime : "a",
                         ct->name[0] ? ct->name : ct->pod[0] ? ct->pod : ct->id);
        return append(buf, size, at, "PID namespace %s, IPC namespace %s (main pid %d, %zu process%s%s)", p, i,
                      (int) c->main_pid, c->n_pids, c->n_pids == 1 ? "" : "es", where);
}

static int ambiguous(struct audit_ctx *ctx, const struct ng_ns_split *sp)
{
        static const char *const whys[] = {
                [NG_NS_PIDFILE] = "that holds its pidfile's process",
                [NG_NS_OWN] = "in numaguard's own namespaces (the host's)",
                [NG_NS_LARGEST] = "with the most processes",
        };
        const struct ng_instance *in = &ctx->a->instances[sp->instance];
        char what[200], msg[sizeof(((struct ng_finding *) NULL)->message)], one[240];
        size_t at = 0, shown = 0, others = sp->n - 1;
        matchers_h(in->cfg, what, sizeof(what));
        (void) (append(msg, sizeof(msg), &at, "%s matches processes in %zu clusters of PID and IPC namespaces; "
                       "the instance is the one %s: ", what, sp->n, whys[sp->why]) &&
                cluster_h(ctx->s, &sp->v[sp->chosen], msg, sizeof(msg), &at));
        for (size_t i = 0; i < sp->n; i++) {
                if (i == sp->chosen)
                        continue;
                size_t o = 0;
                (void) cluster_h(ctx->s, &sp->v[i], one, sizeof(one), &o);
                const char *sep = shown ? "; " : "; not ";
                /* room for the count of those left out, unless it is the last */
                size_t reserve = shown + 1 < others ? 24 : 0;
                if (at + strlen(sep) + o + reserve >= sizeof(msg)) {
                        (void) append(msg, sizeof(msg), &at, "; and %zu more", others - shown);
                        break;
                }
                (void) append(msg, sizeof(msg), &at, "%s%s", sep, one);
                shown++;
        }
        return ng_rules_add(ctx, NG_CODE_INSTANCE_AMBIGUOUS, in, NULL, NULL, (double) sp->n,
                            "narrow the matcher to one database (container =, cgroup =, pidfile =) and give each its "
                            "own [instance] section, or set span_namespaces = yes to make them one instance",
                            "%s", msg);
}

int ng_rule_ambiguous(struct audit_ctx *ctx)
{
        int r = 0;
        for (size_t i = 0; i < ctx->n_splits && r >= 0; i++)
                r = ambiguous(ctx, &ctx->splits[i]);
        return r;
}

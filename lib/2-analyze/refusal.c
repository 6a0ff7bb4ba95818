/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze: why numaguard could not read a process's maps (refusal.h),
 * and the AUDIT_INCOMPLETE findings that name those processes, one per
 * reason for each instance's and one per reason for the rest, with the
 * advice that fits it; the rest unreadable_ok names are acknowledged
 * instead (counted and shown, ng_audit.acknowledged). */

#include <errno.h>
#include <inttypes.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refusal.h"
#include "text.h"
#include "util.h"
#include "rules-internal.h"

static const char *const cap_names[] = {
        "cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid", "cap_kill",
        "cap_setgid", "cap_setuid", "cap_setpcap", "cap_linux_immutable", "cap_net_bind_service",
        "cap_net_broadcast", "cap_net_admin", "cap_net_raw", "cap_ipc_lock", "cap_ipc_owner", "cap_sys_module",
        "cap_sys_rawio", "cap_sys_chroot", "cap_sys_ptrace", "cap_sys_pacct", "cap_sys_admin", "cap_sys_boot",
        "cap_sys_nice", "cap_sys_resource", "cap_sys_time", "cap_sys_tty_config", "cap_mknod", "cap_lease",
        "cap_audit_write", "cap_audit_control", "cap_setfcap", "cap_mac_override", "cap_mac_admin", "cap_syslog",
        "cap_wake_alarm", "cap_block_suspend", "cap_audit_read", "cap_perfmon", "cap_bpf",
        "cap_checkpoint_restore",
};

void ng_caps_format(uint64_t caps, char *buf, size_t size)
{
        size_t w = 0;
        buf[0] = '\0';
        for (unsigned i = 0; i < 64 && w < size; i++) {
                if (!(caps & (UINT64_C(1) << i)))
                        continue;
                int n = i < ELEMENTSOF(cap_names)
                                ? snprintf(buf + w, size - w, "%s%s", w ? ", " : "", cap_names[i])
                                : snprintf(buf + w, size - w, "%scap_%u", w ? ", " : "", i);
                w += n > 0 ? (size_t) n : 0;
        }
}

bool ng_lsm_checks_ptrace(const char *lsm)
{
        static const char *const checking[] = { "selinux", "apparmor", "smack", "tomoyo", "bpf", "landlock" };
        for (const char *p = lsm; *p; ) {
                size_t n = strcspn(p, ",");
                for (size_t k = 0; k < ELEMENTSOF(checking); k++)
                        if (strlen(checking[k]) == n && !strncmp(p, checking[k], n))
                                return true;
                p += n + (p[n] == ',');
        }
        return false;
}

/* The initial user namespace maps every uid to itself: "0 0 4294967295". */
static bool initial_userns(const char *uid_map)
{
        unsigned long long a, b, n;
        int end = 0;
        return sscanf(uid_map, " %llu %llu %llu %n", &a, &b, &n, &end) == 3 && !uid_map[end] && a == 0 && b == 0 &&
               n == UINT32_MAX;
}

/* A label that says the process is confined ("unconfined", SELinux's
 * unconfined domains and the kernel's own say nothing). */
static bool confining_label(const char *label)
{
        return label[0] && strcmp(label, "unconfined") && !strstr(label, ":unconfined_t:") &&
               strcmp(label, "kernel");
}

struct ng_refusal_why ng_refusal_decide(const struct ng_self_creds *self, const struct ng_proc *pr)
{
        struct ng_refusal_why w = { .kind = NG_REFUSAL_UNKNOWN };
        if (!self->known) {
                w.kind = NG_REFUSAL_TREE;
                return w;
        }
        if (self->has_cap_eff && pr->status.has_cap_prm)
                w.missing_caps = pr->status.cap_prm & ~self->cap_eff;
        /* an unknown set counts as holding it: never "lacks" without a fact */
        bool ptrace = !self->has_cap_eff || (self->cap_eff & (UINT64_C(1) << NG_CAP_SYS_PTRACE));
        bool same_user = pr->status.euid == self->euid;
        if (!ptrace && self->euid != 0 && !same_user)
                w.kind = NG_REFUSAL_NOT_ROOT;
        else if (!ptrace && (!same_user || w.missing_caps))
                w.kind = NG_REFUSAL_NO_PTRACE;
        else if (pr->userns_other == 1 && !initial_userns(self->uid_map))
                w.kind = NG_REFUSAL_USERNS;
        else if (w.missing_caps)
                w.kind = NG_REFUSAL_CAPS;
        else if (confining_label(pr->lsm_label) || ng_lsm_checks_ptrace(self->lsm))
                w.kind = NG_REFUSAL_LSM;
        return w;
}

static void modules_h(const struct ng_self_creds *self, char *buf, size_t size)
{
        if (self->lsm[0])
                snprintf(buf, size, "active: %s", self->lsm);
        else
                snprintf(buf, size, "the active ones are unknown: securityfs is not mounted");
}

void ng_refusal_explain(enum ng_refusal kind, const struct ng_self_creds *self, uint64_t missing,
                        const char *label, char *reason, size_t rsize, char *advice, size_t asize)
{
        char caps[200], mods[160], who[32];
        ng_caps_format(missing, caps, sizeof(caps));
        modules_h(self, mods, sizeof(mods));
        if (self->euid == 0)
                snprintf(who, sizeof(who), "root");
        else
                snprintf(who, sizeof(who), "uid %" PRIu32, self->euid);
        switch (kind) {
        case NG_REFUSAL_NOT_ROOT:
                snprintf(reason, rsize, "numaguard runs as %s, not root, without CAP_SYS_PTRACE", who);
                snprintf(advice, asize, "run as root (or with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, as numaguardd's "
                         "unit does)");
                break;
        case NG_REFUSAL_NO_PTRACE:
                snprintf(reason, rsize, "numaguard runs as %s without CAP_SYS_PTRACE in its effective set, over "
                         "processes of other users%s%s%s", who, missing ? " or holding capabilities it lacks (" : "",
                         caps, missing ? ")" : "");
                snprintf(advice, asize, "give numaguard CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (its unit's "
                         "AmbientCapabilities=, not dropped from its bounding set): %s alone is not enough", who);
                break;
        case NG_REFUSAL_USERNS:
                snprintf(reason, rsize, "they run in another user namespace (their uid_map differs from numaguard's), "
                         "and numaguard is not in the host's initial one: its capabilities do not reach them");
                snprintf(advice, asize, "run numaguard in the host's initial user namespace, not inside a container");
                break;
        case NG_REFUSAL_CAPS:
                snprintf(reason, rsize, "they hold capabilities numaguard lacks (%s): the kernel then asks for "
                         "CAP_SYS_PTRACE, which numaguard holds, and a security module refused it (%s)", caps, mods);
                snprintf(advice, asize, "run numaguard with every capability they hold (%s is missing from its "
                         "effective set: dropped from its bounding set?), or allow it ptrace read access in the "
                         "security module's policy", caps);
                break;
        case NG_REFUSAL_LSM:
                snprintf(reason, rsize, "numaguard runs as %s with CAP_SYS_PTRACE and every capability they hold: "
                         "a security module refused it (%s%s%s)", who, mods, label[0] ? "; label " : "", label);
                snprintf(advice, asize, "allow numaguard ptrace read access to them in the security module's policy "
                         "(the kernel's audit log names the denial)");
                break;
        case NG_REFUSAL_TREE:
                snprintf(reason, rsize, "the tree does not say why (the credentials it was captured with are not in "
                         "it)");
                snprintf(advice, asize, "capture the tree again with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (as root), "
                         "or audit the live host");
                break;
        default:
                snprintf(reason, rsize, "numaguard runs as %s with CAP_SYS_PTRACE, in their user namespace as far as "
                         "it can tell and with every capability they hold: nothing it can read says why (security "
                         "modules: %s)", who, mods);
                snprintf(advice, asize, "look for the denial in the kernel's audit log");
                break;
        }
}

static int cmp_uid(const void *x, const void *y)
{
        uint32_t a = *(const uint32_t *) x, b = *(const uint32_t *) y;
        return a < b ? -1 : a > b;
}

/* At most max bytes of name, cut between whole characters. */
static int name_cut(const char *name, size_t max)
{
        size_t at = 0, len = strlen(name);
        while (at < len) {
                uint32_t cp;
                size_t n = ng_utf8_char(name + at, len - at, &cp);
                n = n ? n : 1;
                if (at + n > max)
                        break;
                at += n;
        }
        return (int) at;
}

#define SHOWN_PROCS 4
#define NAME_MAX_SHOWN 32

static int cmp_pid(const void *x, const void *y)
{
        pid_t a = *(const pid_t *) x, b = *(const pid_t *) y;
        return a < b ? -1 : a > b;
}

/* The pids of every instance, sorted: whether a process is one of an
 * instance's is a bisection, not a walk over thousands of instances. */
struct claimed {
        pid_t *pids;
        size_t n;
};

static bool claimed_has(const struct claimed *c, pid_t pid)
{
        return c->n && bsearch(&pid, c->pids, c->n, sizeof(pid), cmp_pid);
}

static int claimed_build(const struct ng_audit *a, struct claimed *ret)
{
        size_t n = 0;
        for (size_t i = 0; i < a->n_instances; i++)
                n += a->instances[i].n_pids;
        *ret = (struct claimed) { .pids = malloc((n ? n : 1) * sizeof(pid_t)) };
        if (!ret->pids)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_instances; i++)
                for (size_t k = 0; k < a->instances[i].n_pids; k++)
                        ret->pids[ret->n++] = a->instances[i].pids[k];
        qsort(ret->pids, ret->n, sizeof(pid_t), cmp_pid);
        return 0;
}

static int cmp_acknowledged(const void *x, const void *y)
{
        const struct ng_acknowledged *a = x, *b = y;
        return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static bool acknowledged(const struct ng_audit *a, pid_t pid)
{
        struct ng_acknowledged key = { .pid = pid };
        return a->n_acknowledged &&
               bsearch(&key, a->acknowledged, a->n_acknowledged, sizeof(key), cmp_acknowledged);
}

/* The next refused process a finding of in is about, from *at on: in's
 * (its pids, in pid order), or with in NULL one of no instance that
 * unreadable_ok does not name; NULL after the last. */
static const struct ng_proc *next_refused(const struct audit_ctx *ctx, const struct ng_instance *in,
                                          const struct claimed *c, size_t *at, size_t *cursor)
{
        const struct ng_snapshot *s = ctx->s;
        while (in ? *at < in->n_pids : *at < s->n_procs) {
                const struct ng_proc *pr = in ? ng_snapshot_proc_next(s, in->pids[*at], cursor) : s->procs[*at];
                (*at)++;
                if (pr && pr->maps_errno &&
                    (in || (!claimed_has(c, pr->pid) && !acknowledged(ctx->a, pr->pid))))
                        return pr;
        }
        return NULL;
}

/* One finding for the processes refused for one reason, those of instance
 * in (NULL: of no instance): how many, of which users, the first few by
 * pid and name, and why. */
static int refused_finding(struct audit_ctx *ctx, enum ng_refusal kind, const struct ng_instance *in,
                           const struct claimed *cl)
{
        const struct ng_snapshot *s = ctx->s;
        uint32_t uids[8];
        size_t n = 0, n_uids = 0, more_uids = 0, w = 0, at = 0, cursor = 0;
        uint64_t missing = 0;
        const char *label = "";
        char procs[SHOWN_PROCS * (NAME_MAX_SHOWN + 32)] = "";
        for (const struct ng_proc *pr; (pr = next_refused(ctx, in, cl, &at, &cursor));) {
                struct ng_refusal_why why = ng_refusal_decide(&s->self, pr);
                if (why.kind != kind)
                        continue;
                if (n < SHOWN_PROCS)
                        w += (size_t) snprintf(procs + w, sizeof(procs) - w, "%s%d (%.*s)", n ? ", " : "",
                                               (int) pr->pid, name_cut(pr->name, NAME_MAX_SHOWN), pr->name);
                n++;
                missing |= why.missing_caps;
                if (!label[0] && confining_label(pr->lsm_label))
                        label = pr->lsm_label;
                bool seen = false;
                for (size_t k = 0; k < n_uids; k++)
                        seen |= uids[k] == pr->status.uid;
                if (!seen && n_uids < ELEMENTSOF(uids))
                        uids[n_uids++] = pr->status.uid;
                else if (!seen)
                        more_uids++;
        }
        if (!n)
                return 0;
        if (n > SHOWN_PROCS)
                snprintf(procs + w, sizeof(procs) - w, " and %zu more", n - SHOWN_PROCS);
        qsort(uids, n_uids, sizeof(uids[0]), cmp_uid);
        char who[100] = "";
        size_t u = 0;
        for (size_t k = 0; k < n_uids && u < sizeof(who); k++)
                u += (size_t) snprintf(who + u, sizeof(who) - u, "%s%" PRIu32, k ? ", " : "", uids[k]);
        if (more_uids && u < sizeof(who))
                snprintf(who + u, sizeof(who) - u, " and %zu more", more_uids);
        char reason[320], advice[sizeof(ctx->a->findings[0].advice)];
        ng_refusal_explain(kind, &s->self, missing, label, reason, sizeof(reason), advice, sizeof(advice));
        int r = ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, in, NULL, NULL, (double) n, advice,
                             "could not read the memory maps of %zu process%s %sof uid %s (permission denied: the "
                             "segments they attach and their placement are unknown), pid%s %s: %s", n,
                             n == 1 ? "" : "es", in ? "of the instance, " : "", who, n == 1 ? "" : "s", procs,
                             reason);
        if (r >= 0 && !in)
                ctx->a->findings[ctx->a->n_findings - 1].other_processes = true;
        return r;
}

/* The entry of list (unreadable_ok) that names pr, as *ret and *ret_len:
 * "init" for process 1, or a cgroup path pr's cgroup is or is under in any
 * hierarchy (only root moves a process into a cgroup, unless it delegated
 * it; a process's name is its user's choice, and /proc/PID/exe is refused
 * wherever the maps are). */
static bool named_by(const char *list, const struct ng_proc *pr, const char **ret, size_t *ret_len)
{
        for (const char *p = list; *p; p += *p == ',') {
                size_t len = strcspn(p, ",");
                bool match = len == 4 && !strncmp(p, "init", 4) && pr->pid == 1;
                for (size_t i = 0; i < pr->cgroup.n && !match && p[0] == '/'; i++) {
                        const char *cg = pr->cgroup.e[i].path;
                        match = cg && !strncmp(cg, p, len) && (cg[len] == '/' || cg[len] == '\0');
                }
                if (match) {
                        *ret = p;
                        *ret_len = len;
                        return true;
                }
                p += len;
        }
        return false;
}

/* The refused processes of no instance unreadable_ok names, into
 * a->acknowledged: counted and shown, no finding. */
static int acknowledge(struct audit_ctx *ctx, const struct claimed *cl)
{
        const struct ng_snapshot *s = ctx->s;
        struct ng_audit *a = ctx->a;
        const char *list = ctx->cfg->unreadable_ok ? ctx->cfg->unreadable_ok : "";
        for (size_t i = 0; i < s->n_procs && list[0]; i++) {
                const struct ng_proc *pr = s->procs[i];
                const char *by;
                size_t len;
                if (!pr->maps_errno || claimed_has(cl, pr->pid) || !named_by(list, pr, &by, &len))
                        continue;
                if (ng_grow(&a->acknowledged, NULL, a->n_acknowledged, sizeof(*a->acknowledged), 0) < 0)
                        return -ENOMEM;
                struct ng_acknowledged *k = &a->acknowledged[a->n_acknowledged];
                *k = (struct ng_acknowledged) { .pid = pr->pid, .uid = pr->status.uid, .by = strndup(by, len) };
                if (!k->by)
                        return -ENOMEM;
                snprintf(k->name, sizeof(k->name), "%s", pr->name);
                a->n_acknowledged++;
        }
        if (a->n_acknowledged > 1)
                qsort(a->acknowledged, a->n_acknowledged, sizeof(*a->acknowledged), cmp_acknowledged);
        return 0;
}

int ng_rule_refused(struct audit_ctx *ctx)
{
        const struct ng_snapshot *s = ctx->s;
        bool any = false;
        for (size_t i = 0; i < s->n_procs && !any; i++)
                any = s->procs[i]->maps_errno != 0;
        if (!any)
                return 0;
        struct claimed cl;
        int r = claimed_build(ctx->a, &cl);
        if (r >= 0)
                r = acknowledge(ctx, &cl);
        for (size_t i = 0; i < ctx->a->n_instances && r >= 0; i++) {
                const struct ng_instance *in = &ctx->a->instances[i];
                size_t at = 0, cursor = 0;
                if (!next_refused(ctx, in, &cl, &at, &cursor))
                        continue;       /* none of its processes refused */
                for (enum ng_refusal k = 0; k < NG_REFUSAL_COUNT_ && r >= 0; k++)
                        r = refused_finding(ctx, k, in, &cl);
        }
        for (enum ng_refusal k = 0; k < NG_REFUSAL_COUNT_ && r >= 0; k++)
                r = refused_finding(ctx, k, NULL, &cl);
        free(cl.pids);
        return r;
}

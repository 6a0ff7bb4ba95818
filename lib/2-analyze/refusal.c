/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze: why numaguard could not read a process's maps (refusal.h),
 * and the AUDIT_INCOMPLETE findings that name those processes, one per
 * reason, with the advice that fits it. */

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

/* Whether pid is a process of an instance (whose pids are in pid order). */
static bool of_instance(const struct ng_audit *a, pid_t pid)
{
        for (size_t i = 0; i < a->n_instances; i++)
                if (a->instances[i].n_pids &&
                    bsearch(&pid, a->instances[i].pids, a->instances[i].n_pids, sizeof(pid), cmp_pid))
                        return true;
        return false;
}

/* One finding for the processes refused for one reason: how many, of which
 * users, the first few by pid and name (an instance's first: those are
 * the ones whose sizes went unknown), and why. */
static int refused_finding(struct audit_ctx *ctx, enum ng_refusal kind)
{
        const struct ng_snapshot *s = ctx->s;
        uint32_t uids[8];
        size_t n = 0, shown = 0, n_uids = 0, more_uids = 0, w = 0;
        uint64_t missing = 0;
        const char *label = "";
        char procs[SHOWN_PROCS * (NAME_MAX_SHOWN + 32)] = "";
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < s->n_procs; i++) {
                        const struct ng_proc *pr = s->procs[i];
                        if (!pr->maps_errno)
                                continue;
                        struct ng_refusal_why why = ng_refusal_decide(&s->self, pr);
                        if (why.kind != kind)
                                continue;
                        if (shown < SHOWN_PROCS && of_instance(ctx->a, pr->pid) == !pass) {
                                w += (size_t) snprintf(procs + w, sizeof(procs) - w, "%s%d (%.*s)", shown ? ", " : "",
                                                       (int) pr->pid, name_cut(pr->name, NAME_MAX_SHOWN), pr->name);
                                shown++;
                        }
                        if (pass)
                                continue;
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
        return ng_rules_add(ctx, NG_CODE_AUDIT_INCOMPLETE, NG_SEV_WARNING, NULL, NULL, NULL, (double) n, advice,
                            "could not read the memory maps of %zu process%s of uid %s (permission denied: the "
                            "segments they attach and their placement are unknown), pid%s %s: %s", n,
                            n == 1 ? "" : "es", who, n == 1 ? "" : "s", procs, reason);
}

int ng_rule_refused(struct audit_ctx *ctx)
{
        int r = 0;
        for (enum ng_refusal k = 0; k < NG_REFUSAL_COUNT_ && r >= 0; k++)
                r = refused_finding(ctx, k);
        return r;
}

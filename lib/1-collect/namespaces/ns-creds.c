/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: why the kernel refused numaguard a process's maps. The ptrace
 * access check that guards /proc/PID/maps (PTRACE_MODE_READ_FSCREDS)
 * weighs numaguard's own credentials, the process's capabilities and user
 * namespace, and the security modules; numaguard reads what of those it
 * can (docs/ARCHITECTURE.md, "Namespaces") and the audit names the reason
 * (refusal.h). Under --root the same files of the tree answer: a
 * snapshot records numaguard's own /proc/self/status, uid_map and the
 * security modules as it read them, so the tree says why as the live host
 * did; a tree without them leaves self unknown ("the tree does not say
 * why").
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "parse.h"
#include "ns-internal.h"

/* A small text file into buf, its trailing newlines cut; "" when
 * unreadable. Control characters never reach a message: the renderers
 * escape it (text.h). */
static void read_small(struct collector *c, char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void read_small(struct collector *c, char *buf, size_t size, const char *fmt, ...)
{
        _cleanup_free_ char *text = NULL;
        va_list ap;
        buf[0] = '\0';
        va_start(ap, fmt);
        int r = ng_collect_vread(c, &text, NULL, fmt, ap);
        va_end(ap);
        if (r < 0)
                return;
        snprintf(buf, size, "%s", text);
        /* attr/current ends in a NUL on some modules, lsm and uid_map in a newline */
        size_t n = strlen(buf);
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = '\0';
}

void ng_collect_own_creds(struct collector *c)
{
        struct ng_self_creds *self = &c->s->self;
        memset(self, 0, sizeof(*self));
        _cleanup_free_ char *buf = NULL;
        struct ng_pid_status st;
        if (ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/self/status") < 0)
                return;
        int r = ng_parse_pid_status(buf, &st);
        if (r < 0)
                return;
        self->known = true;
        self->euid = st.euid;
        self->has_cap_eff = st.has_cap_eff;
        self->cap_eff = st.cap_eff;
        ng_pid_status_done(&st);
        read_small(c, self->uid_map, sizeof(self->uid_map), NG_PROC_DIR "/self/uid_map");
        read_small(c, self->lsm, sizeof(self->lsm), "/sys/kernel/security/lsm");
}

void ng_collect_refusal(struct collector *c, struct ng_proc *pr)
{
        const struct ng_self_creds *self = &c->s->self;
        pr->userns_other = -1;
        pr->lsm_label[0] = '\0';
        /* Without CAP_SYS_PTRACE, refused another user's process or one
         * holding capabilities numaguard lacks: that alone says why
         * (refusal.h), and such a run is refused most processes of the
         * host: no read more for each. */
        bool ptrace = !self->has_cap_eff || (self->cap_eff & (UINT64_C(1) << NG_CAP_SYS_PTRACE));
        bool lacks = self->has_cap_eff && pr->status.has_cap_prm && (pr->status.cap_prm & ~self->cap_eff);
        if (!self->known || (!ptrace && (self->euid != pr->status.euid || lacks)))
                return;
        char map[sizeof(self->uid_map)];
        read_small(c, map, sizeof(map), NG_PROC_DIR "/%d/uid_map", (int) pr->pid);
        if (map[0] && self->uid_map[0])
                pr->userns_other = strcmp(map, self->uid_map) != 0;
        read_small(c, pr->lsm_label, sizeof(pr->lsm_label), NG_PROC_DIR "/%d/attr/current", (int) pr->pid);
}

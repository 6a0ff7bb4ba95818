/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Why the kernel refused numaguard a process's maps, decided from what
 * numaguard can read (collected into ng_snapshot.self and each refused
 * ng_proc): reading /proc/PID/maps is a ptrace access check in read mode
 * with the reader's file-system credentials, which passes when
 *   - numaguard is the process's user (or holds CAP_SYS_PTRACE over its
 *     user namespace), and
 *   - the capability module agrees: the process's permitted capabilities
 *     are a subset of numaguard's effective ones in the same user
 *     namespace, or numaguard holds CAP_SYS_PTRACE there, and
 *   - no other security module (SELinux, AppArmor, Smack, a BPF program,
 *     Landlock) denies it.
 * Yama's ptrace_scope is no reason: it governs attaching, not reading.
 * Pure: no I/O. Internal to the library: not installed.
 */

#include <stddef.h>
#include <stdint.h>

#include "ng-snapshot.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

enum ng_refusal {
        /* not root, without CAP_SYS_PTRACE, another user's process */
        NG_REFUSAL_NOT_ROOT,
        /* root (or the process's own user) without CAP_SYS_PTRACE in its
         * effective set, over another user's process or one holding
         * capabilities numaguard lacks */
        NG_REFUSAL_NO_PTRACE,
        /* the process runs in another user namespace, and numaguard is not
         * in the host's initial one */
        NG_REFUSAL_USERNS,
        /* the process holds capabilities numaguard lacks: the kernel then
         * asks for numaguard's CAP_SYS_PTRACE, which it holds, and a
         * security module refused it */
        NG_REFUSAL_CAPS,
        /* a security module: the process has a label, or one that checks
         * ptrace access is active */
        NG_REFUSAL_LSM,
        /* a captured tree: the credentials numaguard had are not in it */
        NG_REFUSAL_TREE,
        /* nothing numaguard can read explains it */
        NG_REFUSAL_UNKNOWN,
        NG_REFUSAL_COUNT_
};

struct ng_refusal_why {
        enum ng_refusal kind;
        /* the process's permitted capabilities numaguard's effective set
         * lacks (0 when either set is unknown) */
        uint64_t missing_caps;
};

struct ng_refusal_why ng_refusal_decide(const struct ng_self_creds *self, const struct ng_proc *pr);

/* The reason in words (the end of an AUDIT_INCOMPLETE message) and the
 * advice that fits it; missing: the capabilities the processes hold that
 * numaguard lacks, label: a security label of one of them ("" none). */
void ng_refusal_explain(enum ng_refusal kind, const struct ng_self_creds *self, uint64_t missing,
                        const char *label, char *reason, size_t rsize, char *advice, size_t asize);

/* "cap_sys_ptrace, cap_sys_resource" (the kernel's names, "cap_N" past
 * the known ones) into buf; "" for none. */
void ng_caps_format(uint64_t caps, char *buf, size_t size);

/* Whether the security modules of lsm (/sys/kernel/security/lsm) include
 * one that checks ptrace access (SELinux, AppArmor, Smack, TOMOYO, BPF,
 * Landlock); false when lsm is "". */
bool ng_lsm_checks_ptrace(const char *lsm);

#pragma GCC visibility pop

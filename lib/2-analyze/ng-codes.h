/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The finding codes, in one table, as the correction kinds are
 * (ng-correction.h): the name (what users script against), the journald
 * MESSAGE_ID of the raised alert (systemd/numaguard.catalog explains each),
 * the severity a rule raises it with unless it escalates or lowers it, and
 * the correction enforce= carries out on it. ng_code_name(), numaguardd's
 * alerts and enforce mode, and the catalog test all read it.
 */

#include <stdbool.h>

#include "ng-correction.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ng_severity {
        NG_SEV_INFO = 0,
        NG_SEV_WARNING,
        NG_SEV_CRITICAL,
};

/* The correction column of a code enforce never acts on. */
#define NG_CORRECTION_NONE (-1)

/* X(NAME, MESSAGE_ID, severity, correction). Stable (docs/ARCHITECTURE.md,
 * "Contracts"): append, never rename, renumber or change an ID. */
#define NG_CODES(X)                                                                      \
        X(CYCLOPS, "e87985b89b7c4cf1ab08905f0454e2fd", WARNING, REBALANCE)               \
        X(REMOTE_MEMORY, "79ccaaafc6aa46298776c1244f12a769", WARNING, CPUSET)            \
        X(HUGEPAGE_FALLBACK, "90cb7dbdfd594a4082296182ea82d398", WARNING, NONE)          \
        X(HUGEPAGE_SHORTFALL, "b084643e82de4701b4e5713563f1c9a8", WARNING, HUGEPAGES)    \
        X(HUGEPAGE_NODE_SHORTFALL, "93c90a6ba5a14e94b9020dcb3f7e94f7", WARNING, HUGEPAGES) \
        X(HUGEPAGE_IDLE, "a1e27ff5491a4486880b807c46857ea8", WARNING, NONE)              \
        X(PAGETABLE_BLOAT, "9304ab91ca9846a5aa03ef7bfd282150", WARNING, NONE)            \
        X(NODE_PRESSURE, "3e8203b5373c472fac13b6961a2ec8ca", WARNING, NONE)              \
        X(ORPHAN_SEGMENT, "e4934ffc968747508fed6c8ab40c72d4", WARNING, NONE)             \
        X(CPUSET_DRIFT, "feb20f7df32449c0b87b728bc1624787", WARNING, CPUSET)             \
        X(AUTONUMA_ON, "9844c614606c4271964d6921f464597e", INFO, NONE)                   \
        X(NUMAD_RUNNING, "0fc85e5733d74d91bc0bec6830106384", INFO, NONE)                 \
        X(LIBNUMA_MISSING, "10b071139e9845a58640d90a21fbedba", INFO, NONE)               \
        X(INSTANCE_NOT_FOUND, "5211ced7c9bf4144842505538d98fb45", WARNING, NONE)         \
        X(AUDIT_INCOMPLETE, "6879fca9347a4ea1b58dd51be68857e5", WARNING, NONE)           \
        X(CPUSET_NOT_PERSISTENT, "5d0a3c3e8f7b4f5f9a2b61c4e7d09a13", WARNING, CPUSET)    \
        X(HUGEPAGE_NOT_PERSISTENT, "c2f14b7e0a6d4e9b8f3a5d1c6b7e2f48", WARNING, NONE)    \
        X(HIDDEN_HOP, "232501fe3ed44822b0b7050fee235986", INFO, NONE)                    \
        X(SLOW_TIER, "7d3e9a61c4b84f0e9c2a5b17e8f36d42", WARNING, NONE)                  \
        X(SHMEM_DEMOTABLE, "e15b8c0d2a7f4396b4d1c9e0f7a26b83", WARNING, NONE)            \
        X(ZONE_RECLAIM_ON, "3a6f2c9e8b1d4f07a5e4c3b2d1f09e68", WARNING, NONE)            \
        X(HUGEPAGE_OVERCOMMIT, "b7c41e0f93d24a68815e2d6c0af3b915", WARNING, NONE)        \
        X(THP_NOT_AS_VENDOR, "5e9d27b4a0c64f13b8e6f1a2c7d04b59", WARNING, NONE)        \
        X(HUGEPAGE_NOT_PERMITTED, "046861b6e6e94a7db037874237fe9c18", WARNING, NONE)     \
        X(HUGEPAGE_SIGBUS_RISK, "3399a8dd86b84003b75528f930dbbbde", CRITICAL, NONE)      \
        X(HUGEPAGE_NEXT_START, "747fe1de60694c0a87056d1e1b692e94", WARNING, NONE)     \
        X(TIERS_IGNORE_HMAT, "8432d89bb5324259ae5846aa908b0490", INFO, NONE)            \
        X(SEGMENT_POLICY_DRIFT, "6b1f0c4e9d2a47e3a58c0e7d3f91b264", WARNING, REBALANCE) \
        X(POLICY_NOT_PERSISTENT, "ce177948adbf4c4484f7bd61dc2fda39", WARNING, NONE)      \
        X(INTERLEAVE_WEIGHTS, "9e548d39fd4c4386aa4fbd07d68aadc1", WARNING, NONE)        \
        X(OUT_OF_REACH, "aa8c0e9baea94c9abaf9c70b54b72fe4", INFO, NONE)                   \
        X(INSTANCE_AMBIGUOUS, "3c1803ff717ddf126522d7535023fa88", WARNING, NONE)

/* X(NAME, severity, when): the documented overrides of the table's
 * severity, the only other severities a rule raises a code with
 * (ng_rules_add_as() refuses any else). README.md and numaguardctl(1) list
 * them; the docs test checks they agree. */
#define NG_CODE_OVERRIDES(X)                                                                            \
        X(REMOTE_MEMORY, CRITICAL, "memory bound to nodes of another socket than the instance's CPUs")  \
        X(HUGEPAGE_FALLBACK, CRITICAL, "the instance's hugepages = required")                           \
        X(HUGEPAGE_SHORTFALL, CRITICAL, "the instance's hugepages = required")                          \
        X(HUGEPAGE_NODE_SHORTFALL, CRITICAL, "the instance's hugepages = required")                     \
        X(NODE_PRESSURE, CRITICAL, "a node's free memory below a quarter of its floor")                 \
        X(ORPHAN_SEGMENT, INFO, "a removed SysV segment still attached: freed at the last detach")     \
        X(HUGEPAGE_SIGBUS_RISK, WARNING, "surplus pages may still cover it, or reclaim in the memory cgroup") \
        X(HUGEPAGE_NEXT_START, CRITICAL, "the next start would not start, die of SIGBUS or stall")      \
        X(SEGMENT_POLICY_DRIFT, INFO, "the segment has no policy of its own (default)")                 \
        X(INTERLEAVE_WEIGHTS, INFO, "the kernel lacks weighted interleave (6.9)")

enum ng_code {
#define NG_CODE_ENUM_(name, msgid, sev, corr) NG_CODE_##name,
        NG_CODES(NG_CODE_ENUM_)
#undef NG_CODE_ENUM_
        NG_CODE_MAX_
};

struct ng_code_info {
        enum ng_code id;
        const char *name;               /* "CYCLOPS" */
        const char *message_id;         /* 32 hex digits, of the raised alert */
        enum ng_severity severity;      /* unless one of its overrides applies */
        int correction;                 /* enum ng_correction enforce= carries out, NG_CORRECTION_NONE */
};

/* The table entry of c; NULL when c is out of range. */
const struct ng_code_info *ng_code_info(enum ng_code c);
/* "UNKNOWN" when c is out of range. */
const char *ng_code_name(enum ng_code c);
/* -EINVAL for an unknown name. */
int ng_code_from_name(const char *name, enum ng_code *ret);
const char *ng_severity_name(enum ng_severity s);
/* sev is code c's severity in the table or one of its overrides
 * (NG_CODE_OVERRIDES); when is the override's condition, NULL for the
 * table's own. */
bool ng_code_severity_allowed(enum ng_code c, enum ng_severity sev, const char **when);

/* The kernel feature (enum ng_feature of ng-snapshot.h) code c's rule
 * depends on, -1 for none: the rule cannot raise c where the feature is
 * absent (ng_code_needs_feature() true), or follows what the feature says
 * (HUGEPAGE_NOT_PERMITTED: which rule grants SHM_HUGETLB). */
int ng_code_kernel_feature(enum ng_code c);
bool ng_code_needs_feature(enum ng_code c);

#ifdef __cplusplus
}
#endif

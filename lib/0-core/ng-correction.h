/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The kinds of correction numaguard carries out, in one table: the name
 * (enforce= in numaguard.conf, the numaguardctl command, NUMAGUARD_ACTION in
 * the journal), the journald MESSAGE_ID (systemd/numaguard.catalog explains
 * each) and the enforce= bit. numaguardctl, numaguardd, the configuration
 * and the catalog test all read it; the journal fields of a correction are
 * built in one place too (ng_correction_journal_fields, ng-action.h).
 */

#ifdef __cplusplus
extern "C" {
#endif

/* Never change an ID: journal catalogs and users' filters rely on them. */
#define NG_MSGID_ACTION_CPUSET "1db6e8201fed4d01a1af1cbfb367160e"
#define NG_MSGID_ACTION_HUGEPAGES "02e90a77f6674a8fafd45cfe1377e279"
#define NG_MSGID_ACTION_REBALANCE "09817b20990749faa060d721c40eaf1a"

/* X(ID, name, MESSAGE_ID), in enforce= bit order: append only. */
#define NG_CORRECTIONS(X)                                               \
        X(CPUSET, "cpuset", NG_MSGID_ACTION_CPUSET)                     \
        X(HUGEPAGES, "hugepages", NG_MSGID_ACTION_HUGEPAGES)            \
        X(REBALANCE, "rebalance", NG_MSGID_ACTION_REBALANCE)

enum ng_correction {
#define NG_CORRECTION_ENUM_(id, name, msgid) NG_CORRECTION_##id,
        NG_CORRECTIONS(NG_CORRECTION_ENUM_)
#undef NG_CORRECTION_ENUM_
        NG_CORRECTION_MAX_
};

struct ng_correction_kind {
        enum ng_correction id;
        const char *name;               /* "cpuset", "hugepages", "rebalance" */
        const char *message_id;         /* 32 hex digits */
        unsigned enforce_bit;           /* NG_ENFORCE_* (1u << id) */
};

/* The table entry of c; NULL when c is out of range. */
const struct ng_correction_kind *ng_correction_kind(enum ng_correction c);
/* The entry named name; NULL when there is none. */
const struct ng_correction_kind *ng_correction_by_name(const char *name);

/* Where journald listens; without it both programs log to syslog. */
#define NG_JOURNAL_SOCKET "/run/systemd/journal/socket"

#ifdef __cplusplus
}
#endif

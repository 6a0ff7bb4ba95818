/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * act: corrections planned from an audit and carried out through the path
 * layer (so --root runs them against a copy of a tree), each dry-run first,
 * read back after every write, with partial success as its own outcome.
 * Library code never logs: callers log the result (NOTICE, one MESSAGE_ID
 * per action kind).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-correction.h"
#include "ng-owner.h"
#include "ng-path.h"

#ifdef __cplusplus
extern "C" {
#endif


enum ng_outcome {
        NG_OUTCOME_DRY_RUN,     /* planned and shown, nothing written */
        NG_OUTCOME_NOOP,        /* already as wanted */
        NG_OUTCOME_DONE,        /* written and read back as wanted */
        NG_OUTCOME_PARTIAL,     /* some of it took (a hugepage grant short of the ask) */
        NG_OUTCOME_REFUSED,     /* a safety check said no (floor, supply): the reason says why */
        NG_OUTCOME_TRANSIENT,   /* EBUSY, EAGAIN, ENOMEM, EINTR: retry later, bounded */
        NG_OUTCOME_PERMANENT,   /* EACCES, EPERM, EROFS, EINVAL, ...: mark the target unmanaged */
};

const char *ng_outcome_name(enum ng_outcome o);
/* True for errors worth retrying later: EBUSY, EAGAIN, ENOMEM, EINTR. */
bool ng_errno_transient(int err);
/* NG_OUTCOME_TRANSIENT or NG_OUTCOME_PERMANENT for a -errno. */
enum ng_outcome ng_outcome_for_errno(int r);

/* What a write goes to. */
enum ng_write_kind {
        NG_WRITE_FILE = 0,      /* a kernel file: path, value */
        NG_WRITE_UNIT_PROPERTY, /* path: the unit; value, before, after: "AllowedMemoryNodes=0" */
        NG_WRITE_CONFIG_LINE,   /* path: "FILE:LINE"; value, before, after: the whole line */
        NG_WRITE_SEGMENT_POLICY,        /* path: the segment; value, before, after: "interleave:0-3" */
};

/* One write of an action, as shown by --dry-run and logged after. */
struct ng_write {
        enum ng_write_kind kind;
        char path[NG_PATH_MAX]; /* host path ("/sys/fs/cgroup/oracle/cpuset.mems") */
        char value[256];        /* what is (or would be) written */
        char before[256];       /* what the file held before */
        char after[256];        /* read back after writing ("" in dry-run) */
        int error;              /* 0 or -errno of the write */
};

/* The most writes one result holds: a correction that would record more
 * gets -E2BIG from ng_action_write() (nothing recorded; each action says
 * what it does then), so a runaway one cannot grow it without bound. */
#define NG_ACTION_MAX_WRITES 64

/*
 * What one correction did. Allocated by ng_action_result_new() (empty),
 * freed by ng_action_result_free(); never copied by value or cleared by
 * hand (it owns writes): ng_action_result_reset() empties it, and the
 * actions that fill one from scratch (ng_cpuset_apply(),
 * ng_act_hugepages_run(), ng_rebalance_run()) reset it first.
 */
struct ng_action_result {
        enum ng_outcome outcome;
        char summary[512];      /* one line with the numbers ("asked 64, granted 40 on node 2") */
        struct ng_write *writes;        /* n_writes of them, in order (NULL: none yet) */
        size_t n_writes;        /* at most NG_ACTION_MAX_WRITES */
        int error;              /* the first -errno, 0 if none; -ENOMEM when a write could not be recorded */
        /* The hugepage reservation check (ng-reserve.h) of a correction
         * that narrows where an instance may take hugepages or changes the
         * free pages of a pool: what it weighed, with the numbers; "" when
         * the correction has nothing a reservation depends on. check_refused:
         * that check refused it. */
        char check[768];
        bool check_refused;
        size_t writes_allocated;        /* the library's: room in writes */
};

/* 0 with *ret an empty result, or -ENOMEM. */
int ng_action_result_new(struct ng_action_result **ret);
/* Frees res and its writes; NULL is fine. Returns NULL. */
struct ng_action_result *ng_action_result_free(struct ng_action_result *res);
/* Empties res as ng_action_result_new() makes it (every member zero, no
 * write), keeping the room it has for writes. */
void ng_action_result_reset(struct ng_action_result *res);

/* For __attribute__((cleanup(ng_action_result_freep))) struct ng_action_result *res = NULL;
 * (the programs' _ng_cleanup_, cleanup.h). */
static inline void ng_action_result_freep(struct ng_action_result **res)
{
        ng_action_result_free(*res);
}

/*
 * I/O of the actions, swappable so tests inject EBUSY, partial grants or
 * EACCES (docs/ARCHITECTURE.md, "Corrections"). Paths are host paths; the default ops go
 * through the path layer (root prefix honoured).
 *
 * A table built by hand sets size to sizeof(struct ng_action_ops), so that
 * members added later leave it working: the library reads no member past
 * size (to it such a member is NULL: the default), refuses a table whose
 * size does not reach past userdata (-EINVAL, from every function that
 * takes ops), and refuses one that sets a member it does not know (size
 * past its own struct, that member not NULL: -EINVAL).
 */
struct ng_action_ops {
        size_t size;
        int (*write)(void *userdata, const struct ng_path *p, const char *path, const char *value);
        /* Reads a small file into buf (NUL-terminated, trailing newline kept). */
        int (*read)(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size);
        void (*sleep_usec)(void *userdata, uint64_t usec);
        void *userdata;
        /* The owners of a cpuset (ng-act-cpuset.h); NULL: the default.
         * Sets a unit's AllowedCPUs= (cpus) and AllowedMemoryNodes= (mems),
         * NULL leaving one alone, at runtime and persistently; reads them
         * back. */
        int (*set_unit_cpuset)(void *userdata, const struct ng_path *p, const char *unit, const char *cgroup_dir,
                               const struct ng_bitmap *cpus, const struct ng_bitmap *mems);
        int (*get_unit_cpuset)(void *userdata, const struct ng_path *p, const char *unit, const char *cgroup_path,
                               struct ng_unit_cpuset *ret);
        /* Reads a whole text file (malloc'd); replaces one atomically. */
        int (*read_text)(void *userdata, const struct ng_path *p, const char *path, char **ret);
        int (*replace_file)(void *userdata, const struct ng_path *p, const char *path, const char *content);
        /* A Docker container's CpusetCpus (cpus) and CpusetMems (mems),
         * NULL leaving one alone, through Docker's API (POST
         * /containers/{id}/update: applied to its cgroup and saved with the
         * container). */
        int (*docker_update)(void *userdata, const struct ng_path *p, const char *id, const struct ng_bitmap *cpus,
                             const struct ng_bitmap *mems);
        /* Has the service manager load the unit files again (systemctl
         * daemon-reload: the manager's Reload over sd-bus, answered once the
         * reload is done); a tree has no manager: nothing to do. */
        int (*reload_units)(void *userdata, const struct ng_path *p);
};

extern const struct ng_action_ops ng_action_ops_default;

/* Helpers for action implementations: record a write in the result, do it
 * unless dry_run, read it back. Returns 0 or the write's -errno. */
int ng_action_write(const struct ng_action_ops *ops, const struct ng_path *p, struct ng_action_result *res,
                    bool dry_run, const char *path, const char *value);

/* Receives one journal field of an entry, in order; a name may repeat
 * (NUMAGUARD_WRITE). */
typedef void (*ng_journal_field_fn)(void *userdata, const char *name, const char *value);

/*
 * The journal entry of one correction, the same whichever program ran it:
 * MESSAGE ("cpuset db: done: ..."), MESSAGE_ID, PRIORITY (NOTICE),
 * SYSLOG_IDENTIFIER (identifier), NUMAGUARD_EVENT=action, NUMAGUARD_ACTION,
 * NUMAGUARD_INSTANCE (when instance is not NULL), NUMAGUARD_TARGET,
 * NUMAGUARD_OUTCOME, NUMAGUARD_CHECK (the hugepage reservation check, when
 * there was one), NUMAGUARD_WRITES (their count) and one NUMAGUARD_WRITE
 * ("path=value (read back after)") for each of the first max_writes writes.
 * Every @FIELD@ of the kind's catalog entry is among them (a unit test
 * checks).
 */
void ng_correction_journal_fields(enum ng_correction c, const char *identifier, const char *instance,
                                  const char *target, const struct ng_action_result *res, size_t max_writes,
                                  ng_journal_field_fn fn, void *userdata);

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * numaguard.conf: an inih file with one [global] section and any number of
 * [instance NAME] sections. Every key, its range and its default are listed in
 * one table in config.c; conf/numaguard.conf documents them and a unit test
 * checks that the sample equals the compiled defaults.
 *
 * Loading never touches an existing config: it builds a new struct and the
 * caller swaps on success (SIGHUP reload keeps the old config on error).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ng-bitmap.h"
#include "ng-correction.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NG_CONFIG_DEFAULT_PATH "/etc/numaguard/numaguard.conf"

/* [instance NAME]: NAME is 1..63 characters of [A-Za-z0-9_.-]. */
#define NG_INSTANCE_NAME_MAX 63

/* shm_owner not set. (uid_t)-1 is never a real owner: chown(2) reserves it. */
#define NG_UID_UNSET ((uid_t)-1)

enum ng_mode {
        NG_MODE_AUDIT,
        NG_MODE_ENFORCE,
};

enum ng_policy {
        NG_POLICY_LOCAL,      /* segment on the node(s) of the instance's CPUs */
        NG_POLICY_INTERLEAVE, /* spread evenly over nodes= (all nodes if unset) */
        NG_POLICY_BIND,       /* entirely on nodes= (required) */
        /* spread over nodes= (all nodes if unset), slower tiers included,
         * in proportion to each node's bandwidth (MPOL_WEIGHTED_INTERLEAVE,
         * 6.9); plain interleave over the fast tier where the kernel lacks it */
        NG_POLICY_WEIGHTED_INTERLEAVE,
};

enum ng_hugepages_req {
        NG_HUGEPAGES_PREFERRED, /* fallback to 4 KiB pages is a warning */
        NG_HUGEPAGES_REQUIRED,  /* fallback is critical */
        NG_HUGEPAGES_OFF,       /* no hugepage findings for this instance */
};

/* Bits of ng_instance_config.enforce: which corrections may run
 * (ng-correction.h has the table). */
enum {
#define NG_ENFORCE_BIT_(id, name, msgid) NG_ENFORCE_##id = 1u << NG_CORRECTION_##id,
        NG_CORRECTIONS(NG_ENFORCE_BIT_)
#undef NG_ENFORCE_BIT_
};

/* "local", "interleave", "bind", "weighted-interleave". */
const char *ng_config_policy_name(enum ng_policy p);

struct ng_instance_config {
        char name[NG_INSTANCE_NAME_MAX + 1];
        unsigned line; /* line of the [instance NAME] header */
        /* Matchers; NULL / NG_UID_UNSET when not set, at least one is set. */
        char *match_comm;    /* fnmatch(3) glob on /proc/<pid>/comm */
        char *match_cmdline; /* fnmatch(3) glob on the space-joined cmdline */
        char *pidfile;       /* absolute path */
        char *cgroup;        /* as /proc/<pid>/cgroup shows it, "/oracle" */
        char *container;     /* fnmatch(3) glob on the name of the process's container */
        uid_t shm_owner_uid; /* owner of its SysV segments and /dev/shm files, names resolved at load */
        /* The matched processes may sit in several PID or IPC namespaces
         * (the host's and containers'): one instance of all of them. No
         * (default): the instance is one cluster of them (ng-audit.h). */
        bool span_namespaces;
        /* Expectations and corrections. */
        enum ng_policy policy;
        struct ng_bitmap nodes; /* empty = unset */
        enum ng_hugepages_req hugepages;
        uint64_t expected_size_bytes; /* 0 = unknown */
        unsigned enforce;             /* NG_ENFORCE_* bits, 0 = audit only */
};

/* node_free_floor = auto: each node's own (see ng_node_free_floor()). */
#define NG_FREE_FLOOR_AUTO UINT64_MAX

struct ng_config {
        uint64_t interval_usec;
        double cyclops_fraction;
        double pagetable_share;
        uint64_t node_free_floor_bytes; /* NG_FREE_FLOOR_AUTO: per node (ng_node_free_floor) */
        uint64_t min_segment_size_bytes;
        unsigned sample_every;  /* polls between tier-1 samplings */
        unsigned sample_pages;  /* pages asked per tier-1 sampling */
        unsigned full_scan_every;       /* polls between reads of every process */
        unsigned attacher_read_budget;  /* segment holders a poll rereads by turns, 0 = all */
        uint64_t stuck_after_usec;      /* a poll reading nothing this long is reported */
        /* Find the instances of the engines no [instance] section holds. */
        bool autodiscover;
        enum ng_mode mode;
        uint64_t cooldown_usec;
        char *socket_path;  /* never NULL */
        char *metrics_file; /* never NULL, "" = disabled */
        char *status_group; /* never NULL, "" = root only */
        /* numaguardctl rebalance of an instance with policy
         * weighted-interleave writes the host's weights its bandwidth calls
         * for (host-global); no: reported only (INTERLEAVE_WEIGHTS). */
        bool write_interleave_weights;
        /* unreadable_ok: the processes the DBA knows numaguard may not
         * read, a comma list of "init" (process 1) and cgroup paths as
         * /proc/PID/cgroup shows them (a process in one or below it), no
         * blanks, no trailing '/'; never NULL, "" none. Their refused maps
         * are counted and shown, not AUDIT_INCOMPLETE. */
        char *unreadable_ok;
        struct ng_instance_config *instances;
        size_t n_instances;
};

/*
 * Receives each diagnostic of a load: level is LOG_WARNING (unknown key or
 * section, suspicious value; the load goes on) or LOG_ERR (the load fails).
 * msg is one line without trailing newline; file and msg are only valid
 * during the call. line is 0 when msg is about the file as a whole (then
 * msg starts with "is": "is a FIFO, not a regular file; not read").
 */
typedef void (*ng_config_diag_fn)(void *userdata, int level, const char *file, unsigned line,
                                  const char *msg);

/* Returns 0 or -ENOMEM. */
int ng_config_new_default(struct ng_config **ret);

/*
 * Loads path and then its drop-ins (ng_config_dropins(): PATH.d/NAME.conf in
 * name order) into a new config. A drop-in adds instances and sets [global]
 * keys over the earlier files' values; an instance defined twice, in one
 * file or two, is an error naming both places. A missing path with
 * drop-ins means the defaults under the drop-ins. Returns 0, -EINVAL when the content has
 * errors or path is not a regular file (each reported through diag, which
 * may be NULL; anything but a regular file is refused without being read
 * or blocking on it), -ENOMEM, or the
 * -errno of opening/reading the file (-ENOENT: the caller decides whether a
 * missing file means defaults; no diagnostic is emitted for I/O errors).
 * *ret is set only on success.
 */
int ng_config_load(const char *path, ng_config_diag_fn diag, void *userdata, struct ng_config **ret);

/* Same as ng_config_load(), and a warning at the line of every nodes = that
 * names a node outside host_nodes (the host's online nodes; NULL: no such
 * check). */
int ng_config_load_checked(const char *path, const struct ng_bitmap *host_nodes, ng_config_diag_fn diag,
                           void *userdata, struct ng_config **ret);

/* The drop-ins of path: PATH.d/NAME.conf, NAME not starting with '.', sorted
 * by name in byte order, as paths; none when PATH.d does not exist. Returns 0
 * or -errno of listing the directory. Free with ng_config_dropins_free(). */
int ng_config_dropins(const char *path, char ***ret_paths, size_t *ret_n);
void ng_config_dropins_free(char **paths, size_t n);

/* Same as ng_config_load() on text held in memory; name is used in diagnostics. */
int ng_config_load_string(const char *text, const char *name, ng_config_diag_fn diag,
                          void *userdata, struct ng_config **ret);

void ng_config_free(struct ng_config *c);
/* For _ng_cleanup_(ng_config_freep) (cleanup.h, not installed). */
static inline void ng_config_freep(struct ng_config **c)
{
        ng_config_free(*c);
}

/* Writes the effective config in ini form; loading it back gives the same
 * config. Returns 0 or -EIO. */
int ng_config_dump(const struct ng_config *c, FILE *f);

/* "1024", "64K", "512M", "8G", "1T" (binary units, case-insensitive, optional
 * "B"/"iB"). Returns 0 or -EINVAL (also on overflow); *ret untouched then. */
int ng_parse_size_bytes(const char *s, uint64_t *ret);

/* "30" (seconds), "250us", "500ms", "10s", "1m"/"1min", "1h", "1d". Returns 0
 * or -EINVAL (also on overflow); *ret untouched then. */
int ng_parse_duration_usec(const char *s, uint64_t *ret);

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who restores a cpuset or a boot-time hugepage pool, as the rest of the
 * library uses it: collect fills each cgroup's owner and the boot pools of
 * a snapshot; the stages after it (act: a cpuset's owner rewritten, a boot
 * pool made persistent) read and edit cgconfig.conf's groups, a unit's
 * cpuset from the manager and from its files, numaguard's boot pools file.
 * Not installed, not exported; what only owners/ shares is in
 * owner-internal.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-owner.h"

struct ng_path;
struct ng_snapshot;

#pragma GCC visibility push(hidden)

/* ---- collection ---- */

/* Fills the owner of every cgroup of s (ng_snapshot_collect() calls it, with
 * the path that counts its reads into the snapshot's cost). Returns 0 or
 * -ENOMEM; what cannot be read is recorded in the owner. */
int ng_owners_collect(const struct ng_path *p, struct ng_snapshot *s);
/* Fills s->boot_pools with what boot gives every node, per size that any
 * source sets: the kernel command line (NG_PROC_DIR/cmdline), sysctl.d, then
 * NG_HUGEPAGES_BOOT_FILE, applied in that order (ng_snapshot_collect()
 * calls it). A per-node command line form gives 0 to the nodes it does not
 * list; a total is split as the kernel splits it (split set). 0 or
 * -ENOMEM. */
int ng_boot_pools_collect(const struct ng_path *p, struct ng_snapshot *s);

/* ---- libcgroup's cgconfig.conf (cgconfig.conf(5)) ---- */

struct ng_cgconfig_value {
        bool present;
        size_t start, end;      /* the value's bytes in the file, quotes included */
        unsigned line;
        char value[256];        /* unquoted */
};

struct ng_cgconfig_group {
        char name[256];         /* "oracle", "db/oracle" */
        unsigned line;          /* of its "group" keyword */
        bool has_cpuset;        /* has a cpuset { } block */
        size_t cpuset_close;    /* offset of that block's '}' */
        unsigned cpuset_close_line;
        struct ng_cgconfig_value cpus, mems;    /* cpuset.cpus, cpuset.mems */
};

/*
 * Parses cgconfig.conf text: "group NAME { CONTROLLER { KEY = VALUE; ... }
 * perm { ... } }" with '#' comments, quoted or bare names and values; the
 * other top-level blocks (mount, template, default, namespace) are skipped.
 * Returns 0 with the groups (malloc'd; possibly none) or -EINVAL with
 * *ret_error_line set to the line that does not parse, -E2BIG, -ENOMEM.
 */
int ng_parse_cgconfig(const char *buf, struct ng_cgconfig_group **ret, size_t *ret_n, unsigned *ret_error_line);
/* 1 when a top-level "mount { CONTROLLER = PATH; }" of cgconfig text
 * mounts controller as a v1 hierarchy, 0 when not, -EINVAL when the text
 * is not libcgroup's syntax. */
int ng_cgconfig_mounts(const char *buf, const char *controller);

/* ---- systemd units ---- */

/* "system.slice/oracle-db.service" -> "oracle-db.service"; -EINVAL when the
 * cgroup is not a unit's own (service or scope) cgroup. */
int ng_unit_from_cgroup(const char *cgroup_path, char *buf, size_t size);
/* A connection to the service manager (an sd_bus *): for root its private
 * socket, as systemctl uses, else the system bus. 0 or -errno. */
int ng_systemd_bus_open(void **ret);
/* sd-bus interface of a unit's cgroup properties ("...systemd1.Service",
 * "...systemd1.Scope"). */
const char *ng_unit_bus_interface(const char *unit);
/* Live host: the unit's AllowedCPUs/AllowedMemoryNodes from the manager on
 * bus (an sd_bus *), checked to be the unit whose ControlGroup is
 * cgroup_path (-ESRCH otherwise). Returns 0 or -errno; *ret untouched on
 * failure. */
int ng_unit_bus_read(void *bus, const char *unit, const char *cgroup_path, struct ng_unit_cpuset *ret);
/* What the unit files say (the unit, or its template, first found on the
 * search path, then every drop-in in name order, a name in a higher
 * directory masking the same name below). source (may be NULL) gets the
 * unit file's path. Returns 0, -ENOENT when no file mentions the unit. */
int ng_unit_files_read(const struct ng_path *p, const char *unit, struct ng_unit_cpuset *ret, char *source,
                       size_t size);

/* The "w .../nodeN/hugepages/hugepages-SIZEkB/nr_hugepages - - - - PAGES"
 * lines of a tmpfiles.d file; other lines are skipped. Appends (from_file
 * set). Returns 0, -ENOMEM, -E2BIG. */
int ng_parse_hugepages_tmpfiles(const char *text, struct ng_boot_pool **pools, size_t *n);

#pragma GCC visibility pop

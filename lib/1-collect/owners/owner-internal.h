/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The owners' parsers and readers: cgconfig.conf, unit files and the
 * manager's properties, the boot-time hugepage settings (kernel command
 * line, sysctl.d, numaguard's tmpfiles.d file). Shared by collect, plan and
 * act; not installed, not exported. The types they fill that the public API
 * uses stay in ng-owner.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-owner.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

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

/* ---- systemd unit files ---- */

/*
 * Applies the AllowedCPUs=/AllowedMemoryNodes= assignments of one unit file
 * or drop-in to acc, as systemd does: assignments add up, an empty one
 * resets; lists may use blanks or commas. Lines that do not parse are
 * skipped (systemd logs and ignores them too). Returns 0 or -EINVAL when buf
 * is NULL.
 */
int ng_parse_unit_cpuset(const char *buf, struct ng_unit_cpuset *acc);

/* "system.slice/oracle-db.service" -> "oracle-db.service"; -EINVAL when the
 * cgroup is not a unit's own (service or scope) cgroup. */
int ng_unit_from_cgroup(const char *cgroup_path, char *buf, size_t size);

/* ---- collection ---- */

struct ng_path;
struct ng_snapshot;

/* Fills the owner of every cgroup of s (ng_snapshot_collect() calls it, with
 * the path that counts its reads into the snapshot's cost). Returns 0 or
 * -ENOMEM; what cannot be read is recorded in the owner. */
int ng_owners_collect(const struct ng_path *p, struct ng_snapshot *s);
struct ng_cgroup;
/* owner-container.c: the owner of a container's cgroup (docker, podman,
 * kubelet; unknown for another runtime's). false when cg is no container's. */
bool ng_container_owner(const struct ng_path *p, const struct ng_snapshot *s, const struct ng_cgroup *cg,
                        struct ng_owner *ret);

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

/* ---- hugepage pools at boot ---- */

/* Whether page size kib is among the n sizes of v. */
static inline bool ng_kib_listed(const uint64_t *v, size_t n, uint64_t kib)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] == kib)
                        return true;
        return false;
}

/*
 * The kernel command line's pools: the per-node form "hugepagesz=2M
 * hugepages=0:512,1:512" (Linux >= 5.7; a "hugepages=" applies to the
 * "hugepagesz=" before it, or to the default size: "default_hugepagesz=",
 * else default_kib) one entry per node; the global form "hugepages=N" and
 * "sysctl.vm.nr_hugepages=N" (the default size) one NG_BOOT_ALL_NODES
 * entry each. Appends to *pools and *n. Returns 0, -ENOMEM, -E2BIG.
 */
int ng_parse_hugepages_cmdline(const char *cmdline, uint64_t default_kib, struct ng_boot_pool **pools, size_t *n);
/* The "w .../nodeN/hugepages/hugepages-SIZEkB/nr_hugepages - - - - PAGES"
 * lines of a tmpfiles.d file; other lines are skipped. Appends (from_file
 * set). Returns 0, -ENOMEM, -E2BIG. */
int ng_parse_hugepages_tmpfiles(const char *text, struct ng_boot_pool **pools, size_t *n);
/* The last assignment of vm.nr_hugepages (or vm.nr_hugepages_mempolicy,
 * the same under systemd-sysctl's default policy) in a sysctl.d(5) file:
 * "key = value", '.' or '/' between the key's parts, a leading '-' (errors
 * ignored) allowed, comments from '#' or ';'. A value that is not a
 * number is skipped (the kernel refuses the write). Returns 1 with
 * *ret_pages and *ret_line, 0 when the file sets neither, -EINVAL. */
int ng_parse_sysctl_hugepages(const char *text, uint64_t *ret_pages, unsigned *ret_line);

/* sysctl.d directories, highest precedence first (sysctl.d(5)); a file name
 * in a higher one masks the same name below, and all files apply in name
 * order. /etc/sysctl.conf applies as 99-sysctl.conf (the link Debian's
 * procps and systemd's own tmpfiles put there) when no file has that name. */
#define NG_SYSCTL_DIRS { "/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", \
                         "/lib/sysctl.d" }
#define NG_SYSCTL_CONF "/etc/sysctl.conf"
/* Fills s->boot_pools with what boot gives every node, per size that any
 * source sets: the kernel command line (NG_PROC_DIR/cmdline), sysctl.d, then
 * NG_HUGEPAGES_BOOT_FILE, applied in that order (ng_snapshot_collect()
 * calls it). A per-node command line form gives 0 to the nodes it does not
 * list; a total is split as the kernel splits it (split set). 0 or
 * -ENOMEM. */
int ng_boot_pools_collect(const struct ng_path *p, struct ng_snapshot *s);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The owners' parsers and readers: cgconfig.conf, unit files and the
 * manager's properties, the boot-time hugepage settings (kernel command
 * line, sysctl.d, numaguard's tmpfiles.d file). Shared by collect, plan and
 * act; not installed, not exported. The types they fill that the public API
 * uses stay in ng-owner.h; what the later stages use is owner-lookup.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-owner.h"
#include "owner-lookup.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

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

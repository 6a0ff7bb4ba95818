/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the files of owners/: the parsers of unit files, the kernel
 * command line and sysctl.d, a container's owner. Not installed, not
 * exported; the rest of the library uses owner.h, and the types the public
 * API uses are in ng-owner.h and ng-snapshot.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-owner.h"
#include "owner.h"

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

/* ---- collection ---- */

struct ng_path;
struct ng_snapshot;

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

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The owner of a cpuset cgroup: whoever puts its own values back.
 *
 *   systemd   a unit's cgroup on cgroup v2 (".../NAME.service", ".scope"):
 *             systemd writes cpuset.cpus/cpuset.mems from AllowedCPUs=/
 *             AllowedMemoryNodes= (empty when unset: the parent's) on
 *             daemon-reload and on every start of the unit.
 *   cgconfig  a group declared in libcgroup's /etc/cgconfig.conf or
 *             /etc/cgconfig.d/NAME.conf: cgconfigparser (the cgconfig
 *             service) re-creates it with the declared values at boot.
 *   none      nobody: a live value lasts until reboot.
 *   docker    a Docker container's cgroup: Docker recreates it from the
 *             container's HostConfig (CpusetCpus, CpusetMems; empty: the
 *             parent's) when the container starts; `docker update` (POST
 *             /containers/{id}/update) changes both and saves them.
 *   podman    a Podman container's: Podman recreates it from the
 *             container's OCI spec (linux.resources.cpu); Podman 4.3's
 *             update changes the cgroup only, not what it saves.
 *   kubelet   a container of a Kubernetes pod: the kubelet (its CPU and
 *             Memory Managers, through the runtime) decides its cpuset.
 *
 * What the owner restores comes, on the live host, from the manager over
 * sd-bus (the unit's AllowedCPUs/AllowedMemoryNodes properties), else from
 * the files it reads: unit files with their drop-ins, and the cgconfig
 * files (all read through the path layer, so --root and snapshots see them).
 *
 * What a snapshot holds of owners and boot pools (struct ng_owner, struct
 * ng_boot_pool) is defined in ng-snapshot.h, which this header includes.
 */

#include <stdbool.h>
#include <stddef.h>

#include "ng-bitmap.h"
#include "ng-path.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NG_CGCONFIG_FILE "/etc/cgconfig.conf"
#define NG_CGCONFIG_DIR "/etc/cgconfig.d"
/* systemd's unit search path, highest priority first (systemd.unit(5));
 * /etc/systemd/system.control is where `systemctl set-property` persists. */
#define NG_SYSTEMD_UNIT_DIRS { "/etc/systemd/system.control", "/run/systemd/system.control", \
                               "/run/systemd/transient", "/etc/systemd/system", "/run/systemd/system", \
                               "/usr/lib/systemd/system", "/lib/systemd/system" }

const char *ng_owner_kind_name(enum ng_owner_kind k);

/* ---- systemd unit files ---- */

struct ng_unit_cpuset {
        bool has_cpus, has_mems;
        struct ng_bitmap cpus, mems;
        /* NUMAPolicy= (systemd 243+: the memory policy its processes start
         * under, as set_mempolicy(2) mode: 0 default, 1 preferred, 2 bind,
         * 3 interleave, 4 local) and NUMAMask= (its nodes); has_*: set. */
        bool has_numa_policy, has_numa_mask;
        int numa_policy;
        struct ng_bitmap numa_mask;
};


/* ---- hugepage pools at boot ---- */

/* The boot-time form numaguard owns (`hugepages apply --persist`): one
 * tmpfiles.d "w" line per node and size, applied by systemd-tmpfiles-setup
 * early in boot, after the kernel command line's pools. */
#define NG_HUGEPAGES_BOOT_FILE "/etc/tmpfiles.d/numaguard-hugepages.conf"

/* The pool a node of that size gets at boot: the file's line over the
 * command line's; NULL when neither says. */
const struct ng_boot_pool *ng_boot_pool_find(const struct ng_boot_pool *pools, size_t n, int node, uint64_t page_kib);
/* Says where bp comes from, e.g. "the kernel command line",
 * "/etc/sysctl.d/80-hugepages.conf line 2: vm.nr_hugepages = 512, split by
 * the kernel". */
void ng_boot_pool_describe(const struct ng_boot_pool *bp, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

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
 */

#include <stdbool.h>
#include <stddef.h>

#include "ng-bitmap.h"
#include "ng-path.h"

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

enum ng_owner_kind {
        NG_OWNER_NONE = 0,
        NG_OWNER_SYSTEMD,
        NG_OWNER_CGCONFIG,
        NG_OWNER_UNKNOWN,       /* its declaration could not be read: error says why */
        NG_OWNER_DOCKER,
        NG_OWNER_PODMAN,
        NG_OWNER_KUBELET,
};

const char *ng_owner_kind_name(enum ng_owner_kind k);

struct ng_owner {
        enum ng_owner_kind kind;
        char name[256];         /* unit ("oracle-db.service"), group ("oracle"), container or pod */
        char id[65];            /* docker, podman: the container's id */
        char source[NG_PATH_MAX]; /* cgconfig file; unit: "systemd" (sd-bus) or the unit file */
        bool known;             /* what it restores is known (below) */
        /* What the owner writes back: set when it declares the value; on
         * systemd an unset property restores "" (the parent's). */
        bool has_cpus, has_mems;
        struct ng_bitmap cpus, mems;
        unsigned cpus_line, mems_line;  /* cgconfig: line of each value, 0 if absent */
        /* cgconfig: a file cgconfigparser reads mounts a v1 cpuset hierarchy
         * ("mount { cpuset = PATH; }"), which needs the kernel's v1 cpuset
         * (kernel feature cgroup_v1_cpuset): without it cgconfigparser fails
         * and creates no group. Its path in v1_mount_file. */
        bool v1_mount;
        char v1_mount_file[NG_PATH_MAX];
        char error[NG_PATH_MAX + 512]; /* NG_OWNER_UNKNOWN: "FILE:LINE: what" */
};

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

/* systemd's name of a NUMAPolicy= mode ("interleave"), NULL for none. */
const char *ng_unit_numa_policy_name(int mode);

/* ---- hugepage pools at boot ---- */

/* The boot-time form numaguard owns (`hugepages apply --persist`): one
 * tmpfiles.d "w" line per node and size, applied by systemd-tmpfiles-setup
 * early in boot, after the kernel command line's pools. */
#define NG_HUGEPAGES_BOOT_FILE "/etc/tmpfiles.d/numaguard-hugepages.conf"

/* Where a boot pool comes from, in the order boot applies them: the kernel
 * sets its pools while it starts, runs the sysctl.* parameters of its
 * command line before init, systemd-sysctl.service applies sysctl.d, and
 * systemd-tmpfiles-setup.service numaguard's file (it starts after the
 * local file systems are mounted, systemd-sysctl right after the kernel
 * modules are loaded). */
enum ng_boot_source {
        NG_BOOT_CMDLINE,        /* "hugepages=" on the kernel command line */
        NG_BOOT_CMDLINE_SYSCTL, /* "sysctl.vm.nr_hugepages=" on it */
        NG_BOOT_SYSCTL,         /* vm.nr_hugepages in a sysctl.d file */
        NG_BOOT_TMPFILES,       /* NG_HUGEPAGES_BOOT_FILE */
};

/* node of a total the kernel spreads over the nodes with memory */
#define NG_BOOT_ALL_NODES (-1)

struct ng_boot_pool {
        int node;               /* or NG_BOOT_ALL_NODES, as parsed */
        uint64_t page_kib;
        uint64_t pages;
        bool from_file;         /* NG_HUGEPAGES_BOOT_FILE, else the kernel command line */
        unsigned line;          /* its line in the file */
        enum ng_boot_source source;
        /* A node's share of a total (hugepages=N, vm.nr_hugepages): the kernel
         * hands the pages out round robin over the nodes with memory, so
         * pages is this node's expected share and only the sum over the
         * split nodes is certain. */
        bool split;
        uint64_t setting;       /* the total as written (split, or NG_BOOT_ALL_NODES) */
        char file[128];         /* NG_BOOT_SYSCTL: the file, as inside the root */
};

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

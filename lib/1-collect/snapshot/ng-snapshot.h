/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * collect: the host read into one snapshot. Nothing here analyses; the
 * snapshot is immutable once ng_snapshot_collect() returns.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-bitmap.h"
#include "ng-kernel.h"
#include "ng-path.h"
#include "ng-sample.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NG_MAX_HUGE_SIZES 4

struct ng_hugepool {
        uint64_t page_kib;
        uint64_t nr_pages, free_pages, surplus_pages;
        /* /sys/kernel/mm/hugepages only: */
        uint64_t resv_pages, overcommit_pages;
        /* A counter of the pool is missing, not a number or cannot be true
         * (a problem of the snapshot says which): the pool exists, its
         * counters are unknown and read 0. */
        bool unknown;
};

/* ---- hugepage pools at boot (ng-owner.h: the files they are read from) ---- */

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

struct ng_node {
        int id;
        struct ng_bitmap cpus;
        bool has_cpu, has_memory, has_normal_memory;
        uint64_t *distance;     /* distance[i] to topo.nodes[i] (online nodes, id order) */
        size_t n_distance;
        bool has_meminfo;
        struct ng_meminfo meminfo;
        struct ng_hugepool pools[NG_MAX_HUGE_SIZES];    /* ascending page size */
        size_t n_pools;
        /* The kernel's high watermark: the "high" of the node's zones in
         * /proc/zoneinfo, summed, in base (4 KiB) pages; 0 when unknown. */
        uint64_t high_wmark_pages;
        /* Its "promo" watermarks summed the same way, kept only for a node
         * of the fastest of two or more memory tiers (the node pages are
         * promoted into, which ng_node_free_floor() keeps above it); 0
         * otherwise or unknown. */
        uint64_t promo_wmark_pages;
        /* The firmware's HMAT for this node's memory: access[0] (any
         * initiator) and access[1] (CPU initiators); present false when
         * the kernel exports none. */
        struct ng_hmat_access access[NG_HMAT_ACCESS_CLASSES];
        struct ng_mem_cache caches[NG_MAX_MEM_CACHES];  /* level order */
        size_t n_caches;
        /* The physical_package_id of its CPUs (the socket; sub-NUMA
         * clusters of one socket share it), -1 without CPUs or unknown. */
        int package_id;
        /* The memory tier holding it (memory_tierN: a higher N is slower
         * memory), -1 when the kernel has no tiers or none lists it. */
        int tier;
        /* Its weight in weighted interleave (/sys/kernel/mm/mempolicy/
         * weighted_interleave/nodeN, 1-255: pages a round of the
         * interleave puts here; 6.9), 0 unknown or absent. Host-global. */
        unsigned interleave_weight;
};

/* A value read from the host: known false when what it comes from is
 * missing or cannot be true; then v is 0 and means nothing (never zero). */
struct ng_known_u64 {
        uint64_t v;
        bool known;
};

/* What one node can give (ng_node_supply()): its memory, the floor kept
 * free on it, and its hugepage pool of one size. */
struct ng_node_supply {
        int id;
        struct ng_known_u64 total_bytes, free_bytes;    /* MemTotal, MemFree */
        uint64_t floor_bytes;           /* its node_free_floor (ng_node_free_floor()) */
        struct ng_known_u64 avail_bytes;        /* free above the floor, 0 at or below it */
        uint64_t page_kib;              /* the pool asked about */
        bool has_pool;                  /* the node has a pool of page_kib pages */
        struct ng_known_u64 nr_pages, free_pages, surplus_pages;        /* free at most nr */
        struct ng_known_u64 headroom_pages;     /* pages avail_bytes could still give */
};

/* /sys/devices/virtual/memory_tiering/memory_tierN (Linux >= 6.1). */
struct ng_memory_tier {
        int id;                 /* N: abstract distance / chunk, higher is slower */
        struct ng_bitmap nodes; /* its nodelist */
};
#define NG_MAX_MEMORY_TIERS 8

/* What the running kernel offers that numaguard reads or relies on. Each
 * is probed (a file, a directory, a mount option the kernel accepts, an
 * ioctl it answers), never inferred from the release, except where the
 * kernel shows nothing (NG_FEATURE_HUGETLB_SHM_GROUP_ONLY): vendor kernels
 * backport. numaguardctl topology prints them (numaguardctl(1), KERNEL
 * FEATURES). */
enum ng_feature {
        NG_FEATURE_CGROUP_V1_CPUSET,    /* a v1 hierarchy may bind cpuset (off in 6.12's CONFIG_CPUSETS_V1=n) */
        NG_FEATURE_CGROUP_V2_CPUSET,    /* cpuset among the v2 root's cgroup.controllers */
        NG_FEATURE_MEMORY_TIERS,        /* /sys/devices/virtual/memory_tiering (6.1) */
        NG_FEATURE_DEMOTION,            /* /sys/kernel/mm/numa/demotion_enabled */
        NG_FEATURE_WEIGHTED_INTERLEAVE, /* /sys/kernel/mm/mempolicy/weighted_interleave (6.9) */
        NG_FEATURE_SHMEM_THP_SIZES,     /* transparent_hugepage/hugepages-<size>kB/shmem_enabled (6.11) */
        NG_FEATURE_DAMON,               /* /sys/kernel/mm/damon/admin */
        NG_FEATURE_PROMO_WMARK,         /* the "promo" watermark in /proc/zoneinfo */
        NG_FEATURE_PROCMAP_QUERY,       /* the PROCMAP_QUERY ioctl on /proc/PID/maps (6.11) */
        NG_FEATURE_HUGETLB_SHM_GROUP_ONLY, /* only vm.hugetlb_shm_group grants SHM_HUGETLB, no memlock limit (5.16) */
        NG_FEATURE_MAX_
};

enum ng_feature_state {
        NG_FEATURE_UNKNOWN = 0,         /* the probe could not tell (detail: why) */
        NG_FEATURE_ABSENT,
        NG_FEATURE_PRESENT,
};

struct ng_feature_probe {
        enum ng_feature_state state;
        char detail[192];               /* what the probe saw, or why it could not tell */
};

/* "cgroup_v1_cpuset", ... (NULL out of range); "present", "absent",
 * "unknown". */
const char *ng_feature_name(enum ng_feature f);
const char *ng_feature_state_name(enum ng_feature_state st);

struct ng_topology {
        bool numa_sysfs;        /* /sys/devices/system/node exists */
        struct ng_bitmap online, possible, has_cpu, has_memory, has_normal_memory;
        struct ng_bitmap cpus_online;
        struct ng_node *nodes;  /* online nodes in id order */
        size_t n_nodes;
        struct ng_memory_tier tiers[NG_MAX_MEMORY_TIERS];       /* ascending id */
        size_t n_tiers;
        /* /sys/kernel/mm/numa/demotion_enabled: 1 on, 0 off, -1 absent. */
        int demotion_enabled;
        struct ng_feature_probe features[NG_FEATURE_MAX_];
};

#define NG_MAX_THP_SIZES 16

/* What the kernel's transparent hugepage settings for shmem say
 * (/sys/kernel/mm/transparent_hugepage). */
struct ng_shmem_thp {
        /* The directory could not be listed because it does not exist:
         * a kernel without transparent hugepages. */
        bool no_thp;
        enum ng_shmem_huge top;         /* shmem_enabled; UNKNOWN when not read */
        /* hugepages-<N>kB/shmem_enabled of each size that has one
         * (ascending; Linux 6.11), UNKNOWN where it does not parse. */
        struct {
                uint64_t page_kib;
                enum ng_shmem_huge setting;
        } sizes[NG_MAX_THP_SIZES];
        size_t n_sizes;
        /* The PMD size, in KiB: hpage_pmd_size, else the largest of the
         * sizes above; 0 unknown. */
        uint64_t pmd_kib;
};

struct ng_knobs {
        int numa_balancing;     /* -1 when absent */
        int64_t nr_hugepages;   /* /proc/sys/vm/nr_hugepages, -1 when absent */
        char thp_enabled[16];   /* "always", "madvise", "never", "" when absent */
        int zone_reclaim_mode;  /* /proc/sys/vm/zone_reclaim_mode, -1 when absent */
        /* /proc/sys/vm/hugetlb_shm_group: the group whose members may
         * create SysV SHM_HUGETLB segments; -1 when absent. */
        int64_t hugetlb_shm_group;
        /* /proc/sys/kernel/osrelease: its major and minor, 0 unknown. */
        unsigned kernel_major, kernel_minor;
        struct ng_shmem_thp shmem_thp;
};

enum ng_shm_file_kind {
        NG_SHM_FILE_TMPFS,      /* /dev/shm and other tmpfs */
        NG_SHM_FILE_HUGETLBFS,
};

struct ng_shm_file {
        char *path;             /* absolute, as the processes of its mount namespace see it */
        enum ng_shm_file_kind kind;
        uint64_t size_bytes;
        uint64_t page_kib;      /* 4 for tmpfs, the mount's pagesize for hugetlbfs */
        unsigned dev_major, dev_minor;  /* of its mount, to match maps entries */
        uint64_t inode;                 /* with the device, the file's identity */
        uint64_t allocated_bytes;       /* its pages, resident or swapped (st_blocks) */
        /* The mount namespace it was found in (the inode of
         * /proc/PID/ns/mnt), 0 unknown; and a process of that namespace
         * through whose /proc/PID/root it was reached, 0: numaguard's own. */
        uint64_t mnt_ns;
        pid_t ns_pid;
        /* Its owner (shm_owner claims an instance's files by it); 0 where
         * unknown: a tree kept no record of it. */
        uint32_t uid;
        /* A tmpfs file: its mount's huge= option (mountinfo's super
         * options; NEVER where it shows none), which decides whether the
         * kernel may give the file transparent hugepages. */
        enum ng_shmem_huge huge;
};

/* What a /dev/shm or hugetlbfs mount holds beyond its files listed in
 * ng_snapshot.files, one entry a mount scanned. Anyone may fill /dev/shm:
 * its files under the collection's min_file_bytes that no process maps are
 * counted here, not listed; and one collection looks at no more than
 * NG_SHM_MAX_EXAMINED entries in all, the rest only counted (a problem of
 * the snapshot names the mount and the uid owning most of its files). */
struct ng_shm_unlisted {
        char *mountpoint;       /* as its mount namespace sees it */
        uint64_t mnt_ns;        /* as ng_shm_file.mnt_ns */
        unsigned dev_major, dev_minor;
        uint64_t small_files;   /* under min_file_bytes, mapped by no process */
        uint64_t small_bytes, small_allocated_bytes;    /* their sizes, their pages (st_blocks) */
        uint64_t unexamined;    /* entries past the bound: not looked at */
};
#define NG_SHM_MAX_EXAMINED 100000

/* A container a watched process runs in, from its cgroup path (runtime,
 * id, pod) and its runtime's own files (names). "" where unknown. */
struct ng_container {
        char runtime[16];       /* "docker", "podman", "containerd", "cri-o"; "" unknown */
        char id[65];            /* the runtime's id of the container (64 hex digits) */
        char name[128];         /* the name the runtime knows it by */
        /* Kubernetes, where the cgroup path says so: the pod's UID and QoS
         * class ("guaranteed", "burstable", "besteffort"); its name and
         * namespace from the runtime's annotations. */
        char pod_uid[40];
        char qos[16];
        char pod[128];
        char pod_namespace[64];
};

/* The owner of a cpuset cgroup: whoever puts its own values back, and
 * what it restores (ng-owner.h says what each kind restores, and when). */
enum ng_owner_kind {
        NG_OWNER_NONE = 0,
        NG_OWNER_SYSTEMD,
        NG_OWNER_CGCONFIG,
        NG_OWNER_UNKNOWN,       /* its declaration could not be read: error says why */
        NG_OWNER_DOCKER,
        NG_OWNER_PODMAN,
        NG_OWNER_KUBELET,
};

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

struct ng_cgroup {
        char *path;             /* as /proc/<pid>/cgroup shows it: "/oracle" */
        int version;            /* 1 or 2: where the cpuset controller lives */
        char *dir;              /* host path of the cgroup's directory */
        bool has_cpuset;
        /* Its directory was not there when read on the live host: the
         * cgroup went away meanwhile (its processes exited or moved). */
        bool gone;
        struct ng_bitmap cpus, mems, effective_cpus, effective_mems;
        int memory_migrate;     /* v1 only; -1 when absent */
        struct ng_numa_stat_line *memory_numa_stat;
        size_t n_memory_numa_stat;
        /* v2 hugetlb.<size>.numa_stat, one per page size the host has */
        struct {
                uint64_t page_kib;
                struct ng_numa_stat_line *lines;
                size_t n;
        } hugetlb_numa_stat[NG_MAX_HUGE_SIZES];
        size_t n_hugetlb_numa_stat;
        /* v2 hugetlb limits of this cgroup (not its ancestors'), one per
         * page size the host has: hugetlb.<size>.max bounds what its tasks
         * fault (beyond it a fault is SIGBUS), .rsvd.max what they reserve
         * (beyond it mmap fails); in bytes, UINT64_MAX for "max"; with
         * .current and .rsvd.current. known/rsvd_known false: not read. */
        struct {
                uint64_t page_kib;
                bool known, rsvd_known;
                uint64_t max_bytes, current_bytes, rsvd_max_bytes, rsvd_current_bytes;
        } hugetlb_limit[NG_MAX_HUGE_SIZES];
        size_t n_hugetlb_limit;
        /* Its v2 memory controller (not its ancestors'), read only where
         * hugetlb pages are charged to it (ng_snapshot_hugetlb_memcg()):
         * memory.max in bytes (UINT64_MAX for "max"), memory.current, and,
         * under a limit, memory.stat's hugetlb (what of current is
         * hugetlb). known false: not read or unreadable (then nothing of it
         * is known); hugetlb_known false: no such line or not read. */
        struct {
                bool known, hugetlb_known;
                uint64_t max_bytes, current_bytes, hugetlb_bytes;
        } memory;
        struct ng_owner owner;  /* who restores its cpuset (ng-owner.h) */
};

/* The kernel keeps TASK_COMM_LEN - 1 characters of a command name. */
#define NG_COMM_MAX 15

/* One thread of a process, from /proc/<pid>/task/<tid>/stat. */
struct ng_task {
        pid_t tid;
        int processor;          /* the CPU it last ran on, -1 unknown */
        uint64_t ticks;         /* its utime + stime */
        /* CPU time that weighs processor in an instance's price: all of
         * ticks in one collection, since the previous poll after
         * ng_snapshot_cpu_since(). */
        uint64_t weight_ticks;
};

struct ng_proc {
        /* What an audit looks at in every process comes first, so that a
         * pass over thousands of records reads one cache line of each. */
        pid_t pid;
        /* EACCES or EPERM when its maps could not be read (another user's
         * process without CAP_SYS_PTRACE): its segments are unknown. */
        int maps_errno;
        struct ng_map *maps;
        size_t n_maps;
        struct ng_pid_cgroup cgroup;
        /* The name users know the process by (ng_proc_set_name). */
        char name[128];
        struct ng_pid_stat stat;
        struct ng_pid_status status;
        char *cmdline;
        bool has_numa_maps;
        struct ng_numa_map *numa_maps;
        size_t n_numa_maps;
        /* CPU time that weighs its last CPU in an instance's price: all of
         * it in one collection, since the previous poll after
         * ng_snapshot_cpu_since(). Used when tasks is empty. */
        uint64_t cpu_weight_ticks;
        /* Its threads, read for processes that map a segment (a database's,
         * whose threads run on many nodes: MariaDB is one process); empty
         * for the others and where task/ cannot be read. */
        struct ng_task *tasks;
        size_t n_tasks;
        /* Its IPC, mount and PID namespaces (the inodes of
         * /proc/PID/ns/ipc, ns/mnt and ns/pid), read for the processes that
         * map a segment or run a database, and for every process when
         * ng_collect_opts.all_namespaces; else, and where unreadable,
         * numaguard's own. 0 unknown. */
        uint64_t ipc_ns, mnt_ns, pid_ns;
        /* Its "Max locked memory" soft limit (/proc/PID/limits), in bytes,
         * UINT64_MAX unlimited; read only for the main processes of the
         * engines that lock their shared memory (engine.h). */
        bool has_memlock;
        uint64_t memlock_soft_bytes;
        /* Where its maps were refused (maps_errno) on a live host, what
         * else says why besides its status (uid, CapPrm) and numaguard's
         * own credentials (ng_snapshot.self), read only where those do not
         * already say it: whether it runs in another user namespace than
         * numaguard (1: its uid_map differs from numaguard's; 0: the same
         * map; -1 unknown) and its security module label (attr/current;
         * "" none or unknown). */
        int userns_other;
        char lsm_label[64];
        /* Lines of its maps that do not parse (capped at UINT32_MAX) and
         * the number of the first: what they held is unknown, and a
         * segment it maps may be missing from maps. */
        uint32_t maps_bad_lines, maps_bad_line;
};

/* numaguard's own credentials, from /proc/self/status on a live host,
 * with the security modules the kernel runs: what decides whether it may
 * read other processes' maps (ptrace access mode). known false in a
 * snapshot of a tree. */
#define NG_CAP_DAC_READ_SEARCH 2       /* capability numbers (linux/capability.h) */
#define NG_CAP_SYS_PTRACE 19
struct ng_self_creds {
        bool known;
        uint32_t euid;
        bool has_cap_eff;
        uint64_t cap_eff;
        char uid_map[256];      /* /proc/self/uid_map, "" unknown */
        char lsm[128];          /* /sys/kernel/security/lsm, "" unknown (securityfs not mounted) */
};

struct ng_collect_cost {
        uint64_t wall_usec, cpu_usec;
        uint64_t files_read, bytes_read;
        uint64_t procs_scanned, numa_maps_read;
        uint64_t pages_sampled;
};

enum ng_placement {
        /* Sampled on the live host, exact from a tree (--root). */
        NG_PLACEMENT_AUTO = 0,
        /* Tier 0 only: counters, no placement per node. */
        NG_PLACEMENT_COUNTERS,
        /* Tier 1: move_pages(2) on sample_pages addresses of one attached
         * process per segment (live host only). */
        NG_PLACEMENT_SAMPLED,
        /* Tier 2: numa_maps of one attached process per segment (see
         * ng_proc_rep_cmp). Never one read per attacher. */
        NG_PLACEMENT_EXACT,
        /* Tier 2 from files only: what a captured tree can reproduce
         * (numaguardctl snapshot). One attacher's numa_maps per segment;
         * the segments themselves are not asked, since their answers are
         * no file. */
        NG_PLACEMENT_EXACT_FILES,
};

struct ng_pidfile {
        char *path;
        pid_t pid;              /* 0 when absent or unreadable */
};

struct ng_picture;
struct ng_latency;       /* ng-latency.h */

struct ng_collect_opts {
        enum ng_placement placement;
        unsigned sample_pages;          /* tier 1 K */
        uint64_t min_private_bytes;     /* private anon mappings kept from maps */
        /* /dev/shm and hugetlbfs files under this size that no process
         * maps are counted (ng_snapshot.unlisted), not listed; 0 lists
         * every file. */
        uint64_t min_file_bytes;
        /* Owners whose files are listed whatever their size: a configured
         * instance's shm_owner claims them (ng_collect_for_config()). */
        const uint32_t *claimed_uids;
        size_t n_claimed_uids;
        /* fnmatch(3) globs of the processes whose large private mappings
         * count as segments (InnoDB's buffer pool); NULL: the processes of
         * the engines with a private_heap (engine.h). */
        const char *const *private_comms;
        size_t n_private_comms;
        bool skip_procs;                /* topology only */
        const char *const *pidfiles;    /* read into ng_snapshot.pidfiles */
        size_t n_pidfiles;
        /* Read the namespaces of every process, not only of those that map
         * a segment or run a database: configured instances group their
         * processes by namespace (ng_collect_for_config() sets it when the
         * configuration has an [instance]). */
        bool all_namespaces;
        /* The processes kept between collections (ng_picture_new): only
         * what may have changed is read. NULL reads every process. */
        struct ng_picture *picture;
        /* Called before every file read and move_pages(2) call with the
         * process concerned (0: a host file), from the collecting thread:
         * tells a watcher that the collection moves, and on whom it waits
         * when it does not. */
        void (*progress)(void *userdata, pid_t pid);
        void *progress_data;
};

#define NG_COLLECT_OPTS_DEFAULT ((struct ng_collect_opts) { \
        .placement = NG_PLACEMENT_AUTO, .sample_pages = 4096, .min_private_bytes = 64u << 20, \
        .min_file_bytes = 64u << 20 })

/* ---- what a database asks of hugepages at its next start, read from
 * its own configuration (ng-dbconf.h: which files) ---- */

/* A database's setting for hugepages: PostgreSQL huge_pages (off, on, try),
 * Oracle use_large_pages (FALSE, ONLY, TRUE, AUTO), MariaDB large_pages. */
enum ng_huge_setting {
        NG_HUGE_UNSET = 0,      /* not set: the engine's default */
        NG_HUGE_OFF,
        NG_HUGE_ON,             /* hugepages or no start (PostgreSQL on, Oracle ONLY) */
        NG_HUGE_TRY,            /* hugepages, else 4 KiB pages (PostgreSQL try, MariaDB) */
        NG_HUGE_PARTIAL,        /* as many as the pool has, the rest in 4 KiB (Oracle TRUE) */
        NG_HUGE_SETTING_COUNT_
};

/* Whose configuration the settings are: the reader that filled them. */
enum ng_db_conf_kind {
        NG_DB_CONF_POSTGRESQL = 0,
        NG_DB_CONF_MARIADB,     /* MariaDB's (or MySQL's) option files and command line */
        NG_DB_CONF_ORACLE,      /* an Oracle instance's parameter file */
        NG_DB_CONF_KIND_COUNT_
};

struct ng_db_settings {
        pid_t pid;                      /* the main process they were read for */
        /* 0, or -errno of the first file that could not be read (the
         * settings then hold what was read before it, and are unknown). */
        int error;
        char error_path[256];
        enum ng_huge_setting huge_pages;
        char huge_pages_from[160];      /* "FILE:LINE", "command line", "" unset */
        bool shm_sysv;                  /* PostgreSQL shared_memory_type = sysv */
        uint64_t huge_page_size_kib;    /* huge_page_size; 0: the system's default */
        uint64_t shared_buffers_bytes;  /* 0 when not set */
        unsigned files;                 /* configuration files read */
        /* The memory policy the main process runs under (numactl, systemd's
         * NUMAPolicy=), from the first line of its numa_maps: what a start
         * from the same place gets. policy_known false: not read. */
        bool policy_known;
        int policy;                     /* enum ng_mpol (ng-kernel.h) */
        char policy_nodes[64];          /* "1", "0-3"; "" none */
        /* The systemd service it runs in (its cgroup "/A.slice/NAME.service",
         * every parent a slice), "" none; unit_known: its unit files were
         * read. What they say of the memory policy its next start begins
         * under: NUMAPolicy= (unit_has_policy, a set_mempolicy(2) mode) and
         * NUMAMask= ("0-3", "" none). */
        char unit[256];
        bool unit_known, unit_has_policy;
        int unit_policy;
        char unit_mask[64];
        enum ng_db_conf_kind kind;
        /* The setting in the engine's own words where they are not
         * PostgreSQL's: "ON", "ONLY", "AUTO_ONLY"; "" unset or PostgreSQL. */
        char huge_pages_word[16];
        /* Oracle use_large_pages AUTO or AUTO_ONLY: the instance asks the
         * kernel for the pages it lacks at its start (it raises
         * vm.nr_hugepages itself). */
        bool huge_auto;
        /* What its next start sizes its memory in hugepages by, where the
         * configuration says it: MariaDB's innodb_buffer_pool_size (or
         * innodb_buffer_pool_size_max, which newer servers map whole),
         * Oracle's sga_max_size or sga_target. 0 when not set. */
        uint64_t size_bytes;
        char size_from[160];            /* "NAME in FILE:LINE", "NAME on the command line" */
        /* Oracle memory_target or memory_max_target (automatic memory
         * management: its SGA in /dev/shm files, never in hugepages), 0
         * when not set. */
        uint64_t amm_bytes;
        char amm_from[160];
        /* Why its next start cannot be told though its files were read
         * (an spfile in ASM, a setting in a section only a server version
         * numaguard cannot tell reads), "" none. */
        char unknown[256];
};

/* A file numaguard read and could not use: what it holds cannot be true,
 * or it is missing where the rest of the tree says it must exist. What
 * depends on it is unknown (never 0), and the audit says so. */
struct ng_problem {
        char path[256];         /* as read, root prefix included */
        char reason[256];
        char advice[192];       /* what to do about it; "" when it is to check the file */
        /* The process a /proc/PID file is of; 0 for a file of the host
         * (what every instance's audit rests on). */
        pid_t pid;
};
#define NG_MAX_PROBLEMS 16

/* Made by the library only (ng_snapshot_collect, ng_collect_for_config),
 * freed with ng_snapshot_free(): it carries more than this part, and so does
 * each of its process records. */
struct ng_snapshot {
        uint64_t taken_usec;    /* CLOCK_REALTIME */
        char root[4096];        /* "" for the live host */
        struct ng_topology topo;
        bool has_meminfo;
        struct ng_meminfo meminfo;
        struct ng_hugepool pools[NG_MAX_HUGE_SIZES];    /* global, ascending size */
        size_t n_pools;
        struct ng_knobs knobs;
        /* What the boot configuration gives each node's hugepage pools
         * (ng-owner.h); a node and size it does not mention are absent. */
        struct ng_boot_pool *boot_pools;
        size_t n_boot_pools;
        bool has_sysvipc;
        struct ng_shm_seg *shm;
        size_t n_shm;
        struct ng_mount *mounts;
        size_t n_mounts;
        struct ng_shm_file *files;
        size_t n_files;
        /* What the mounts of those files hold unlisted, and the size under
         * which a file nobody maps is counted there (the collection's
         * min_file_bytes). */
        struct ng_shm_unlisted *unlisted;
        size_t n_unlisted;
        uint64_t min_file_bytes;
        /* User processes, pid order, one record each. In a snapshot made
         * through a picture (ng_collect_opts.picture), the record of a
         * process with no maps (n_maps 0: most of a host's processes) is
         * the picture's own, shared with its other snapshots and never
         * modified: treat every record as read-only. */
        struct ng_proc **procs;
        size_t n_procs;
        struct ng_cgroup *cgroups;
        size_t n_cgroups;
        struct ng_pidfile *pidfiles;
        size_t n_pidfiles;
        /* Unversioned libnuma.so, which Oracle dlopen()s for its NUMA
         * support: 1 found, 0 absent, -1 not looked for (no Oracle). */
        int libnuma_so;
        enum ng_placement placement;    /* what was done: SAMPLED, EXACT or COUNTERS */
        struct ng_sample *samples;      /* tier 1 results, one per sampled VMA */
        size_t n_samples;
        struct ng_collect_cost cost;
        struct ng_problem problems[NG_MAX_PROBLEMS];
        size_t n_problems;      /* all of them; the first NG_MAX_PROBLEMS kept */
        /* What numaguardctl probe measured (NULL when never saved or not
         * usable: then latency_error says why, naming the file): ng-latency.h. */
        struct ng_latency *latency;
        char latency_error[256];
        /* Collected through a picture that reads the CPU time of at most
         * its budget of segment holders a collection: every holder is read
         * at least once in this many collections (1: each one every time;
         * 0 outside a picture). ng_snapshot_cpu_since() weighs CPU time
         * over that many polls. */
        unsigned cpu_read_every;
        /* numaguard's own IPC, mount and PID namespaces (/proc/self/ns),
         * 0 unknown (a tree taken before they were read). */
        uint64_t ipc_ns, mnt_ns, pid_ns;
        /* The containers of the processes whose namespaces were read. */
        struct ng_container *containers;
        size_t n_containers;
        /* numaguard's own credentials when it collected (live host). */
        struct ng_self_creds self;
        /* What each database main process's configuration asks of
         * hugepages at its next start (ng-dbconf.h), pid order. */
        struct ng_db_settings *db_settings;
        size_t n_db_settings;
};

/* Returns 0 or -errno; a missing feature is recorded as absent, a process
 * that vanishes mid-read is dropped. -ENOENT for a root prefix holding
 * neither proc/ nor sys/. */
int ng_snapshot_collect(const struct ng_path *p, const struct ng_collect_opts *opts,
                        struct ng_snapshot **ret);
void ng_snapshot_free(struct ng_snapshot *s);
/* For _ng_cleanup_(ng_snapshot_freep) (cleanup.h, not installed). */
static inline void ng_snapshot_freep(struct ng_snapshot **s)
{
        ng_snapshot_free(*s);
}

const struct ng_node *ng_snapshot_node(const struct ng_snapshot *s, int id);
const struct ng_proc *ng_snapshot_proc(const struct ng_snapshot *s, pid_t pid);
/* The configuration read for main process pid, or NULL. */
const struct ng_db_settings *ng_snapshot_db_settings(const struct ng_snapshot *s, pid_t pid);
/* The node's pool of page_kib pages, or NULL. */
const struct ng_hugepool *ng_node_pool(const struct ng_node *nd, uint64_t page_kib);
/* The host's pool of page_kib pages (/sys/kernel/mm/hugepages), or NULL. */
const struct ng_hugepool *ng_snapshot_pool(const struct ng_snapshot *s, uint64_t page_kib);
/* The online nodes that have memory (ng_node.has_memory). */
struct ng_bitmap ng_snapshot_memory_nodes(const struct ng_snapshot *s);
/* The free-memory floor of a node: configured_bytes, or for
 * NG_FREE_FLOOR_AUTO (ng-config.h) the largest of the node's high
 * watermark, its promo watermark when it is in the fastest of several
 * memory tiers (promo_wmark_pages), and 3 % of its MemTotal, at most 1 GiB
 * (1 GiB when MemTotal is unknown). */
uint64_t ng_node_free_floor(uint64_t configured_bytes, const struct ng_node *nd);
/* What nd can give: its memory, its floor from floor_bytes (as
 * ng_node_free_floor()) and its pool of page_kib pages (0: none asked).
 * Every value says whether it is known. */
void ng_node_supply(const struct ng_node *nd, uint64_t floor_bytes, uint64_t page_kib, struct ng_node_supply *ret);
/* Line key of nd's meminfo (the host's /proc/meminfo when nd is NULL) in
 * bytes: unknown without a usable meminfo, without the line, or past what
 * bytes can hold. What every reader outside collection asks. */
struct ng_known_u64 ng_meminfo_bytes(const struct ng_snapshot *s, const struct ng_node *nd, const char *key);
/* The default hugepage size (/proc/meminfo's Hugepagesize) in KiB, 0 when
 * unknown. */
uint64_t ng_default_huge_kib(const struct ng_snapshot *s);
/* The host's memory (/proc/meminfo) as ng_node_supply() gives a node's:
 * MemTotal and MemFree in bytes, each known or not. */
void ng_host_memory(const struct ng_snapshot *s, struct ng_known_u64 *ret_total, struct ng_known_u64 *ret_free);
/* The sum of the nodes' MemTotal in bytes: unknown when a node's is, or
 * without nodes. */
struct ng_known_u64 ng_nodes_memory_total(const struct ng_snapshot *s);
/* Both counts of the kernel's managed pages agree on a host whose nodes
 * show all its memory; a virtual machine or a balloon driver can leave the
 * nodes with a fraction of what /proc/meminfo counts. This much apart (of
 * the larger) they are said to differ. */
#define NG_MEMTOTAL_TOLERANCE_PCT 2
/* Whether the nodes' MemTotal sum (*ret_nodes) and /proc/meminfo's
 * (*ret_host) differ by more than NG_MEMTOTAL_TOLERANCE_PCT % of the
 * larger; false when either is unknown. */
bool ng_host_memory_split(const struct ng_snapshot *s, struct ng_known_u64 *ret_nodes, struct ng_known_u64 *ret_host);
/* The same for a caller looking pids up in ascending order: *cursor (0 to
 * begin) is where the last one was, the search goes on from there (a
 * lookup of thousands of attachers costs a walk, not a bisection each). */
const struct ng_proc *ng_snapshot_proc_next(const struct ng_snapshot *s, pid_t pid, size_t *cursor);

/* Sets pr->name from pr->stat.comm and pr->cmdline: the kernel cuts comm
 * (and status: Name) to 15 characters, databases put the whole name in
 * argv[0] (ora_pmon_FINPROD01, oracleFINPROD01 (LOCAL=NO)). When comm is 15
 * characters long and the first word of argv[0], after its last '/', starts
 * with comm, that word is the name; otherwise comm is. */
void ng_proc_set_name(struct ng_proc *pr);
const struct ng_cgroup *ng_snapshot_cgroup(const struct ng_snapshot *s, const char *path);
/* Whether hugetlb pages are charged to the memory cgroup of the task that
 * faults them (Linux 6.6: the cgroup2 mount option
 * memory_hugetlb_accounting, which mountinfo shows in the super options):
 * 1 yes, 0 no (cgroup2 is mounted without it), -1 unknown (no cgroup2
 * mount in numaguard's mountinfo, or it was not read). */
int ng_snapshot_hugetlb_memcg(const struct ng_snapshot *s);
/* The container pr runs in (one of s->containers), or NULL. */
const struct ng_container *ng_snapshot_container(const struct ng_snapshot *s, const struct ng_proc *pr);
/* What a cgroup path says of a container: runtime, id, pod UID and QoS
 * class (cgroup v2 and v1, the systemd and cgroupfs drivers of Docker,
 * Podman, containerd and CRI-O, the kubelet's kubepods tree). 0, or
 * -ENOENT when it names no container. */
int ng_container_from_cgroup(const char *path, struct ng_container *ret);
/* Node distance, or -1 when unknown. */
/*
 * Carries tier-0 page sizes and tier-1 samples of prev over to s (a
 * counters-only collection) for every mapping that is still the same: same
 * pid with the same start time (no pid reuse), same start and end. Between
 * two samplings an unchanged segment keeps its last placement. Returns the
 * number of samples carried, or -ENOMEM.
 */
int ng_snapshot_carry_placement(struct ng_snapshot *s, const struct ng_snapshot *prev);

/* Each process's and each of its threads' CPU time since prev (same pid
 * and start time; a thread new since prev counts whole), for prices
 * weighted by the last poll's CPU time: for the processes with maps, the
 * ones a price weighs. The others keep their whole CPU time. Through a
 * picture that reads CPU time by turns (s->cpu_read_every above 1): the
 * CPU time since the process's own previous read, scaled to
 * cpu_read_every polls (a process read one poll ago and one read
 * cpu_read_every polls ago weigh alike at the same rate), and a process
 * not read this collection keeps its weights of prev. */
void ng_snapshot_cpu_since(struct ng_snapshot *s, const struct ng_snapshot *prev);

/* Order in which attached processes serve as a segment's representative:
 * the one with the most shared memory mapped (RssShmem + HugetlbPages, tier
 * 0) first, since numa_maps and move_pages(2) see only the pages in the
 * representative's own page tables; then the lowest pid. */
int ng_proc_rep_cmp(const struct ng_proc *a, const struct ng_proc *b);

/*
 * Whose processes may speak for a segment: a process's maps line of it,
 * its /proc/PID/map_files link and its page tables (numa_maps,
 * move_pages(2)) are taken for the segment only when its real and
 * effective uid are both root or one of the segment's owners: a SysV
 * segment's owner and creator (uid and cuid of its row of
 * /proc/sysvipc/shm), a /dev/shm or hugetlbfs file's owner. Such a process
 * cannot be driven by another unprivileged user; any other attacher (a
 * user allowed to attach a segment of mode 0644) may detach it and map a
 * file of its own at the same address, named like it. Without a known
 * owner (a SysV segment with no row, or one that does not parse; a file
 * of a tree that kept no owner, uid 0) root's processes alone. Anonymous
 * shared and private memory have no owner to tell processes by (only the
 * process that made it and its children map it): anyone.
 */
struct ng_speakers {
        bool anyone;
        size_t n;
        uint32_t uid[2];
};
void ng_speakers_of_sysv(const struct ng_snapshot *s, uint64_t ipc_ns, int32_t shmid, struct ng_speakers *ret);
/* The same of a row of /proc/sysvipc/shm, of a file of s->files. */
void ng_speakers_of_shm_row(const struct ng_shm_seg *sh, struct ng_speakers *ret);
void ng_speakers_of_shm_file(const struct ng_shm_file *f, struct ng_speakers *ret);
/* A file by device and inode; where an inode is 0 (a tree's copy), by
 * device and path. */
void ng_speakers_of_file(const struct ng_snapshot *s, unsigned major, unsigned minor, uint64_t inode,
                         const char *path, struct ng_speakers *ret);
/* Of the segment mapping m of pr maps (a shared file no segment: root's). */
void ng_speakers_of_map(const struct ng_snapshot *s, const struct ng_proc *pr, const struct ng_map *m,
                        struct ng_speakers *ret);
/* Whether a process of these credentials (status uid and euid) may speak. */
bool ng_speakers_admit(const struct ng_speakers *sp, const struct ng_pid_status *st);
/* Whether pr may speak for the segment its mapping m maps. */
bool ng_snapshot_may_speak(const struct ng_snapshot *s, const struct ng_proc *pr, const struct ng_map *m);

/* The tier-1 sample of the VMA at start in pid, or NULL. */
const struct ng_sample *ng_snapshot_sample(const struct ng_snapshot *s, pid_t pid, uint64_t start);
/* The sample asked of a segment itself (ng_sample.whole): a SysV segment
 * by its shmid (inode; the device is not compared) in numaguard's own IPC
 * namespace, a file or anonymous shared segment by device and inode. NULL
 * if none. */
const struct ng_sample *ng_snapshot_whole_sample(const struct ng_snapshot *s, bool sysv, unsigned major,
                                                 unsigned minor, uint64_t inode);
/* The same with a SysV segment's IPC namespace (ipc_ns) compared too: a
 * shmid names a segment only within its namespace; and for SysV its device
 * too where major:minor is known (not 0:0), so that a sample of another
 * file whose inode happens to equal the shmid is never taken for it. */
const struct ng_sample *ng_snapshot_whole_sample_ns(const struct ng_snapshot *s, bool sysv, uint64_t ipc_ns,
                                                    unsigned major, unsigned minor, uint64_t inode);
int ng_snapshot_distance(const struct ng_snapshot *s, int from, int to);
/* The HMAT access class of mem_node's memory (access1, else access0) when
 * cpu_node is among its best initiators; NULL otherwise: the firmware's
 * figure for that pair is not exported, so unknown. */
const struct ng_hmat_access *ng_snapshot_hmat(const struct ng_snapshot *s, int cpu_node, int mem_node);
/* Whether nodes a and b (a != b) hold CPUs of one socket: sub-NUMA
 * clusters of it (Intel SNC, AMD NPS). */
bool ng_snapshot_same_socket(const struct ng_snapshot *s, int a, int b);
/* Whether the kernel's release (/proc/sys/kernel/osrelease) is major.minor
 * or later: 1 or 0, -1 when the release is unknown. Only for what no file
 * shows (a semantic that changed in a release). */
int ng_knobs_release_at_least(const struct ng_knobs *k, unsigned major, unsigned minor);

/* The fastest memory tier (lowest id) among nodes, -1 when the kernel
 * has no tiers or names none of them. */
int ng_snapshot_fastest_tier(const struct ng_snapshot *s, const struct ng_bitmap *nodes);
/* Whether node sits in a tier slower than tier (both known). */
bool ng_snapshot_slower_tier(const struct ng_snapshot *s, int node, int tier);
/* Whether any node exports an HMAT access class. */
bool ng_snapshot_has_hmat(const struct ng_snapshot *s);

struct ng_config;
/* Collects what an audit under cfg needs (pidfiles, sampling size, the
 * processes whose private heaps count) with the given placement tier. */
int ng_collect_for_config(const struct ng_path *p, const struct ng_config *cfg, enum ng_placement placement,
                          struct ng_snapshot **ret);
/* The same with placement, picture and progress taken from base. */
int ng_collect_for_config_opts(const struct ng_path *p, const struct ng_config *cfg,
                               const struct ng_collect_opts *base, struct ng_snapshot **ret);

/*
 * The process picture a daemon keeps between polls (docs/ARCHITECTURE.md,
 * "Cost tiers": a poll reads only what changed). A collection through a picture learns
 * which processes are new from the kernel's process events (the proc
 * connector: live host, CAP_NET_ADMIN, initial namespaces), or else by
 * listing /proc (pids and the inodes of their directories, no file read),
 * and reads:
 *   - new processes in full (stat, status, cmdline, cgroup, maps): with
 *     events, every process born, exec()ed, renamed or given another uid
 *     since the last collection (an exited one is dropped); with the
 *     listing, a new pid, and a known pid whose directory inode changed
 *     when its start time did too (pid reuse);
 *   - the last attacher (lpid) and creator of every SysV segment whose
 *     nattch, lpid, atime or dtime changed, or that is new;
 *   - the maps of every process already mapping a segment when the
 *     /dev/shm and hugetlbfs file list changed;
 *   - on collections that place segments (placement other than
 *     NG_PLACEMENT_COUNTERS: numaguardd's sampling polls), the status
 *     counters (RssShmem, VmPTE) of processes mapping a small-page segment
 *     of at least min_private_bytes, at most the read budget of them by
 *     turns (ng_picture_set_read_budget); never of processes whose shared
 *     memory is all hugetlb (its placement and counters need no
 *     per-process read);
 *   - the stat of the processes that map a segment and of their threads
 *     (CPU time), at most the read budget of them by turns.
 * Processes that vanished from the listing are dropped. Every
 * full_scan_every-th collection (the first one too) reads every process and
 * bounds what an incremental one can miss: a process that maps a segment
 * later while another attach hides it, a process that exec()s into a
 * database, counters of hugetlb attachers.
 */
struct ng_picture_stats {
        bool full;                      /* the last collection read every process */
        /* The last collection learnt which processes were born, exec()ed,
         * renamed or exited from the kernel's process events, without
         * listing /proc (live host; the listing serves when events are not
         * delivered, were lost, and on full scans). */
        bool events;
        int events_errno;               /* why events are not used: EPERM, ... (0: they are, or a tree) */
        /* Without events: the last collection found in /proc/loadavg that
         * no process or thread had started or ended since the one before
         * (the calling thread aside), so the /proc listing could only have
         * said what the picture holds, and it was not read. */
        bool listing_skipped;
        uint64_t procs;                 /* user processes held */
        uint64_t procs_new, procs_gone, procs_reread, status_reread;
        uint64_t collections, full_scans;
        /* Processes that map a segment, whose CPU time prices weigh; how
         * many of them the last collection read the stat and threads of
         * (new or changed ones, and the turn of the others); every one is
         * read at least once in cpu_read_every collections. */
        uint64_t cpu_holders, cpu_reads;
        unsigned cpu_read_every;
        /* The /dev/shm and hugetlbfs mounts the last collection listed,
         * and those it took from their last listing instead (live host:
         * nothing changed there since, and the files it lists stat()ed
         * again). */
        unsigned shm_listed, shm_copied;
};
int ng_picture_new(unsigned full_scan_every, struct ng_picture **ret);
void ng_picture_free(struct ng_picture *pic);
/* 1 makes every collection a full one. */
void ng_picture_set_full_scan_every(struct ng_picture *pic, unsigned full_scan_every);
/* The next collection reads every process. */
void ng_picture_invalidate(struct ng_picture *pic);
/* false: list /proc even where the kernel's process events are delivered
 * (to compare both ways); true (the default): use them where they are. */
void ng_picture_use_events(struct ng_picture *pic, bool use);
void ng_picture_get_stats(const struct ng_picture *pic, struct ng_picture_stats *ret);
/* At most budget processes that map a segment and are not new have their
 * stat and their threads' read by an incremental collection, by turns in
 * pid order, so that each is read at least every ceil(holders / budget)
 * collections; and on collections that place segments, the status
 * counters of at most budget of them, by turns likewise
 * (docs/ARCHITECTURE.md, "Cost tiers"). 0: every one, every collection
 * (the default). */
void ng_picture_set_read_budget(struct ng_picture *pic, unsigned budget);

#ifdef __cplusplus
}
#endif

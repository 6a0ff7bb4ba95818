/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * act: rebalance -- move a cyclops segment's resident pages so that they
 * spread over the instance's nodes, with move_pages(2) and MPOL_MF_MOVE_ALL:
 * every resident page of a 4 KiB shmem segment (SysV, /dev/shm, anonymous
 * shared memory) through a mapping of numaguard's own of the segment's
 * file, mapped by a process or not; a hugetlb segment's through the page
 * tables of the representative attached process.
 *
 * Two steps, like every correction: ng_rebalance_plan_segment() is pure
 * (snapshot + config -> targets per node and a supply check on the
 * snapshot's numbers), ng_rebalance_run() counts the pages exactly (a
 * query-only move_pages pass), re-checks supply, and unless dry_run moves
 * them in bounded, rate-limited batches and reads every batch back.
 *
 * Never allocates a page of the segment and never writes to it: see
 * act-rebalance.c for how each kind of segment is reached.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-action.h"
#include "ng-audit.h"
#include "ng-sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Linux's MAX_NUMNODES at its largest (NODES_SHIFT 10): every node of any
 * host, so that a spread reaches all of them. */
#define NG_REBALANCE_MAX_NODES 1024
#define NG_REBALANCE_MAX_RANGES 16

/* One VMA of the segment in the representative: [start, end) maps the
 * segment from byte offset onwards. */
struct ng_rebalance_range {
        uint64_t start, end, offset;
};

struct ng_rebalance_node {
        int node;
        bool dest;                      /* one of the nodes the pages spread over */
        uint64_t before_pages;          /* resident pages of the segment here (planner: estimate) */
        uint64_t target_pages;          /* its share after the move */
        uint64_t in_pages, out_pages;   /* to move here / away from here */
        uint64_t avail_pages;           /* what it can take: free memory above the floor,
                                         * or free hugepages of the segment's size */
        uint64_t moved_in_pages, moved_out_pages;       /* done by ng_rebalance_run() */
        /* Weighted interleave (policy weighted-interleave where the kernel
         * has it): its share, ng_instance_interleave_weights(); 0 for
         * every node: equal shares. */
        unsigned weight;
};

/* How a run reaches the segment's pages. */
enum ng_rebalance_via {
        /* Its file, mapped by numaguard a window at a time: every resident
         * page (4 KiB shmem). */
        NG_REBALANCE_VIA_SEGMENT,
        /* pid's page tables: the pages it maps (hugetlb, where a hole of our
         * own mapping cannot be told from a page). */
        NG_REBALANCE_VIA_ATTACHER,
};

const char *ng_rebalance_via_name(enum ng_rebalance_via v);     /* "segment", "attacher" */

struct ng_rebalance_plan {
        char label[128];                /* "shmid 5 (key 0x0052e2c1)" */
        pid_t pid;                      /* whose page tables reach the pages (VIA_ATTACHER), or
                                         * whose map_files reached the file (VIA_SEGMENT; 0: its path) */
        uint64_t page_bytes;
        bool huge;
        struct ng_rebalance_range ranges[NG_REBALANCE_MAX_RANGES];
        size_t n_ranges;
        int dest[NG_REBALANCE_MAX_NODES];       /* interleave order (node ids ascending) */
        size_t n_dest;
        struct ng_rebalance_node nodes[NG_REBALANCE_MAX_NODES]; /* nodes with memory, id order */
        size_t n_nodes;
        uint64_t resident_pages, move_pages;
        uint64_t huge_free_pages;       /* hugetlb: the size's global free - reserved */
        /* NG_OUTCOME_DRY_RUN: go ahead (nothing done yet); NG_OUTCOME_NOOP:
         * nothing to move; NG_OUTCOME_REFUSED: reason says why. */
        enum ng_outcome verdict;
        char reason[360];
        /* ng_rebalance_plan_check(): the hugepage reservation check of a
         * hugetlb move, "" when not made; check_refused: it refused. */
        char check[768];
        bool check_refused;
        enum ng_rebalance_via via;
        /* VIA_SEGMENT: the file opened, and its identity (checked on the
         * descriptor before anything is asked of it). seg_follow: a
         * /proc/PID/map_files link, followed; else a path refused when any
         * component is a symbolic link, resolved inside the mount namespace
         * of seg_root_pid (0: numaguard's own). */
        char seg_path[256];
        bool seg_follow;
        /* SysV through map_files: the name its maps line gives the file
         * ("/SYSV0052e2c1 (deleted)"), checked too (ng_segment_named: a
         * memfd may have the same device and inode); "" not checked. */
        char seg_name[64];
        pid_t seg_root_pid;
        unsigned dev_major, dev_minor;
        uint64_t inode;
        /* The kernel's count of the whole segment's resident pages (from the
         * audit: /proc/sysvipc/shm rss, the file's own pages), 0 unknown:
         * what VIA_ATTACHER cannot reach is this less what it counted. */
        uint64_t known_resident_pages;
        /* Resident pages no run of this plan reaches, and why ("" none):
         * the run is PARTIAL at best, never DONE or NOOP. */
        uint64_t unreachable_pages;
        char unreachable_why[200];
        /* The policy the segment's new pages are to follow, installed on
         * the segment itself (its shared policy: mbind(2) on numaguard's
         * mapping, which every attacher's later faults follow) when
         * opts->set_policy: interleave over dest (the instance's policy
         * interleave, or local over CPUs on several nodes), bind to dest
         * (bind), prefer dest[0] (local on one node). NG_MPOL_DEFAULT:
         * none, policy_note says why (a hugetlb segment has no shared
         * policy). policy_text: "interleave:0-3", as numa_maps shows it. */
        enum ng_mpol policy;
        char policy_text[96];
        char policy_note[160];
        /* Where the nodes' weights came from ("HMAT bandwidth"), "" for
         * equal shares. */
        char weights_source[48];
};

/*
 * The hugepage reservation gate (ng-reserve.h) of a hugetlb plan: each page
 * moved takes a free page of its destination and frees one where it was,
 * which an instance confined to the destination (its cpuset, a bind
 * policy) may need for the reserved pages it has not faulted yet. Refuses
 * (verdict REFUSED, reason with the numbers) a move that would leave a
 * reservation without the free pages to serve it, or one already short
 * shorter. Pure. 0 or -ENOMEM.
 */
int ng_rebalance_plan_check(const struct ng_snapshot *s, const struct ng_audit *a, struct ng_rebalance_plan *plan);

/*
 * Plans seg of instance in: the nodes its pages spread over (the instance's
 * nodes= when set; else its CPUs' nodes for policy local, every node with
 * memory for interleave; never a node without memory), the target per node,
 * and whether the destinations can take the incoming pages (MemFree above
 * node_free_floor for 4 KiB pages; the node's free hugepages of that size,
 * and the global free minus reserved, for hugetlb -- 1 GiB pages exist only
 * in the pool, and 2 MiB ones are taken from it too rather than from the
 * buddy allocator). Pure. Returns 0 (verdict in *ret) or -EINVAL.
 */
int ng_rebalance_plan_segment(const struct ng_snapshot *s, const struct ng_config *cfg,
                              const struct ng_instance *in, const struct ng_segment *seg,
                              struct ng_rebalance_plan *ret);

/* Recomputes targets, in/out and move_pages from before_pages and checks the
 * supply again; sets verdict and reason. Used by the planner and by
 * ng_rebalance_run() after its exact count. */
void ng_rebalance_replan(struct ng_rebalance_plan *p);

/* Formats "node0 -6144, node1 +2048, ..." from in/out (moved: the done
 * counts instead). Returns buf. */
const char *ng_rebalance_format_moves(const struct ng_rebalance_plan *p, bool moved, char *buf, size_t size);

struct ng_rebalance_ops {
        ng_move_pages_fn move_pages;    /* NULL: move_pages(2) */
        /* VIA_SEGMENT: opens p's file read-only (NULL: seg_path as the plan
         * says); its device and inode are checked against the plan's. An
         * fd or -errno. */
        int (*open_segment)(void *userdata, const struct ng_rebalance_plan *p);
        /* The segment's shared policy (opts->set_policy): NULL, the
         * kernel's mbind(2) and get_mempolicy(2) with MPOL_F_ADDR. */
        long (*mbind)(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                      unsigned long maxnode, unsigned flags);
        long (*get_mempolicy)(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr,
                              unsigned long flags);
        void (*sleep_usec)(void *userdata, uint64_t usec);
        uint64_t (*now_usec)(void *userdata);   /* monotonic */
        /* Optional, VIA_ATTACHER: called before the first batch and then
         * every NG_REBALANCE_VERIFY_EVERY batches: 0 while p->pid still maps
         * p->ranges, else -errno (the run stops: TRANSIENT). */
        int (*verify)(void *userdata, const struct ng_rebalance_plan *p);
        void *userdata;
};

#define NG_REBALANCE_VERIFY_EVERY 64

extern const struct ng_rebalance_ops ng_rebalance_ops_default;

struct ng_rebalance_opts {
        unsigned batch_pages;           /* addresses per move_pages(2) call */
        uint64_t rate_bytes_per_sec;    /* migration rate limit, 0 = none */
        unsigned retries;               /* further attempts for busy pages of a batch */
        bool dry_run;                   /* count and plan only */
        /* Then install plan->policy on the segment (VIA_SEGMENT): the
         * explicit command and enforce = rebalance; shown by a dry run. */
        bool set_policy;
};

/* 512 pages a call (the kernel isolates and migrates them as one list
 * under the target's mmap lock: keep it short), 64 MiB/s (migration copies
 * every byte and briefly unmaps each page from every attached process). */
#define NG_REBALANCE_OPTS_DEFAULT ((struct ng_rebalance_opts) { \
        .batch_pages = 512, .rate_bytes_per_sec = UINT64_C(64) << 20, .retries = 1 })

/* The defaults for plan p: NG_REBALANCE_OPTS_DEFAULT through an attacher,
 * whose mmap lock each call holds; through numaguard's own mapping
 * (VIA_SEGMENT) a window's resident pages (16,384) a call, since only
 * numaguard's own mmap lock is held and each move_pages(2) call first
 * drains the page caches of every CPU (lru_cache_disable()): fewer, larger
 * calls move the same pages in half the time. */
struct ng_rebalance_opts ng_rebalance_opts_for(const struct ng_rebalance_plan *p);

struct ng_rebalance_stats {
        uint64_t scanned_pages;         /* addresses asked about */
        uint64_t windows;               /* VIA_SEGMENT: windows of the file mapped */
        uint64_t not_resident_pages;    /* -ENOENT/-EFAULT: left alone, never faulted in */
        uint64_t moved_pages;
        uint64_t busy_pages;            /* still not moved after the retries */
        uint64_t move_calls, batches;
        uint64_t slept_usec, elapsed_usec;
};

/*
 * Carries out plan (its verdict must be DRY_RUN, else the verdict is copied
 * to res): exact count, supply re-check, then moves unless opts->dry_run.
 * plan is updated (exact before/target/in/out, moved counts). res gets the
 * outcome: DRY_RUN, NOOP, DONE, PARTIAL (some pages busy), REFUSED,
 * TRANSIENT (process gone: ESRCH; ENOMEM, EAGAIN, every page busy) or
 * PERMANENT (EPERM without CAP_SYS_NICE, EACCES, EINVAL). Returns 0, or
 * -EINVAL for a bad plan or options, -ENOMEM.
 */
int ng_rebalance_run(struct ng_rebalance_plan *plan, const struct ng_rebalance_opts *opts,
                     const struct ng_rebalance_ops *ops, struct ng_rebalance_stats *ret_stats,
                     struct ng_action_result *res);

/* ---- the host's weights of weighted interleave ---- */

/* For an instance under weighted interleave (ng_instance_weighted()):
 * writes each of its nodes' weight that differs from what its bandwidth
 * calls for (ng_instance_interleave_weights()) through ops (NULL: the
 * default), one file write each, read back; res gets DONE, DRY_RUN or the
 * error's outcome and a summary. 1 with something written (or to write),
 * 0 with nothing to do (res untouched), -EINVAL. */
int ng_interleave_weights_run(const struct ng_snapshot *s, const struct ng_instance *in,
                              const struct ng_action_ops *ops, const struct ng_path *p, bool dry_run,
                              struct ng_action_result *res);

/* ---- the next start keeps it ---- */

/* numaguard's drop-in in a unit's directory of /etc/systemd/system. */
#define NG_POLICY_DROPIN_NAME "60-numaguard-numa-policy.conf"

/*
 * Where the policy an instance's segments are given is recorded so that
 * its next start begins under it: for a database in a systemd service, a
 * drop-in with NUMAPolicy= and NUMAMask= (systemd 243+), which the manager
 * applies with set_mempolicy(2) to the processes it starts, whose children
 * inherit it. A container or an instance started by hand is not written:
 * note says how to start it.
 */
struct ng_policy_persist {
        char unit[256];         /* "" : nothing to write (note says why) */
        char cgroup[NG_PATH_MAX];       /* the unit's, as the manager reports it */
        int mode;               /* NUMAPolicy=: a set_mempolicy(2) mode */
        struct ng_bitmap mask;  /* NUMAMask= */
        char dropin[NG_PATH_MAX];
        char value[128];        /* "NUMAPolicy=interleave NUMAMask=0-3" */
        char before[128];       /* what the unit files say now */
        char note[512];
};

/* Plans it for instance in (what ng_instance_segment_policy() gives its
 * 4 KiB shmem segments): 1 with a unit to write, 0 with note set when
 * there is nothing to write (no policy, already recorded, no service, a
 * bind that would confine hugepage faults), -ENOMEM. Pure. */
int ng_policy_persist_plan(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                           struct ng_policy_persist *ret);

/* Writes the drop-in through ops (replace_file), has the manager reload
 * the units and reads NUMAPolicy/NUMAMask back (get_unit_cpuset): res
 * gets one unit_property write and DONE, DRY_RUN (nothing written),
 * NOOP, or PERMANENT/TRANSIENT with the error. 0 or -EINVAL. */
int ng_policy_persist_run(const struct ng_policy_persist *pp, const struct ng_action_ops *ops,
                          const struct ng_path *p, bool dry_run, struct ng_action_result *res);

#ifdef __cplusplus
}
#endif

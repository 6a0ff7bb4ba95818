/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Hugepage reservations against the nodes that can serve them
 * (docs/ARCHITECTURE.md, "Reservations"). A hugetlb segment is reserved
 * whole when it is made, but each page is taken from a pool only at its
 * first touch, and from a node the faulting task's cpuset and bind policy
 * allow (mm/hugetlb.c: the dequeue honours cpuset_zone_allowed with
 * __GFP_HARDWALL). A reservation is a global count: when the free pages of
 * the pool sit on nodes the task may not use, that touch dies of SIGBUS.
 *
 * A need is what one set of faulting tasks still has to take: the
 * unfaulted pages of the segments of one page size that processes with one
 * allowed node set map, against the free pages of those nodes. Pure: a
 * const snapshot and audit in, no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ng_resv_need {
        /* index into ng_audit.instances; n_instances for segments of no
         * instance (their reservations count, no finding is about them) */
        size_t instance;
        uint64_t page_kib;
        /* Its hugetlb segments of page_kib pages that processes with this
         * node set map: their size in pages, the pages already faulted,
         * and the rest (capped by the pool's resv_hugepages, the kernel's
         * own count of every reserved page not yet faulted). */
        uint64_t reserved_pages, faulted_pages, unfaulted_pages;
        /* faulted_pages is a lower bound (an attacher's page tables, not
         * the segment's own count). */
        bool faulted_at_least;
        size_t n_segments;
        char segment[128];              /* the first of them, as messages name it */
        /* Where a first touch may take a page: the cpuset's Mems_allowed of
         * the process, narrowed by a bind policy on the segment; and one
         * process with that set. */
        struct ng_bitmap nodes;
        pid_t pid;
};

/* Free pages of a size on one node, and whether its pool could be read. */
struct ng_resv_node {
        int node;
        uint64_t free_pages;
        bool known;
};

/* One node's change of free pages. */
struct ng_resv_delta {
        int node;
        int64_t pages;
};

/* A change a correction is about to make, checked before it is written. */
struct ng_resv_change {
        /* The processes of this cpuset cgroup (as /proc/PID/cgroup shows it)
         * and of the cgroups below it get mems as their cpuset.mems (below
         * it: their own, intersected with mems). NULL: none. */
        const char *cgroup;
        struct ng_bitmap mems;
        /* The free pages of page_kib pages change by delta[i].pages on node
         * delta[i].node (a pool grown or shrunk; pages moved in or out). */
        uint64_t page_kib;
        const struct ng_resv_delta *delta;
        size_t n_delta;
};

enum ng_resv_state {
        NG_RESV_COVERED,        /* the free pages on its nodes cover every need drawing on them */
        NG_RESV_SHORT,          /* they do not: a first touch may die of SIGBUS */
        NG_RESV_UNKNOWN,        /* a pool on its nodes could not be read */
};

/* A need weighed: the needs of every instance whose nodes lie within this
 * one's draw on the same free pages (two instances cannot both count
 * them). */
struct ng_resv_weighed {
        struct ng_resv_need need;
        enum ng_resv_state state;
        uint64_t demand_pages;          /* this need and those within its nodes */
        uint64_t free_pages;            /* on its nodes */
        uint64_t short_pages;           /* demand beyond free, 0 when covered */
        /* vm.nr_overcommit_hugepages may still give this many surplus pages
         * at fault time, from free memory on its nodes (never 1 GiB pages;
         * a fragmented node cannot). */
        uint64_t surplus_possible_pages;
};

struct ng_resv_verdict {
        bool checked;                   /* some instance has unfaulted hugepages */
        bool ok;                        /* the change makes no need short, nor a short one shorter */
        bool unknown;                   /* refused because a pool could not be read */
        struct ng_resv_weighed before, after;   /* the need the verdict is about */
        char message[768];              /* with the numbers, whether ok or not */
};

/* Every need of the audit's instances, instance order, with the cpuset
 * change of chg made (NULL: as they are). *ret malloc'd (NULL when none).
 * 0 or -ENOMEM. */
int ng_resv_needs(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_change *chg,
                  struct ng_resv_need **ret, size_t *ret_n);

/* The needs weighed against the free pages as chg's deltas would leave
 * them (NULL: as they are): ret[i] for needs[i]. */
void ng_resv_weigh(const struct ng_snapshot *s, const struct ng_resv_need *needs, size_t n,
                   const struct ng_resv_change *chg, struct ng_resv_weighed *ret);

/*
 * Whether chg makes a satisfiable reservation unsatisfiable, or an
 * unsatisfiable one worse: ret->ok false, with the instance, page size,
 * pages reserved, faulted and free per node and the nodes short in
 * ret->message. A need whose pools cannot be read refuses (ret->unknown).
 * With no unfaulted reservation anywhere ret->checked is false and ok is
 * true. 0 or -ENOMEM.
 */
int ng_resv_check(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_change *chg,
                  struct ng_resv_verdict *ret);

/* "instance db: 4 of 8 reserved 2 MiB hugepages not yet faulted; nodes 1:
 * 0 free (node 0: 4)": a need and where the free pages are. */
void ng_resv_describe(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_resv_weighed *w,
                      char *buf, size_t size);

/*
 * The memory controller's bound on an instance's hugetlb faults. Since
 * Linux 6.6, with the cgroup2 mount option memory_hugetlb_accounting, a
 * hugetlb page is charged to the memory cgroup of the task that faults it
 * (not when it is reserved), and memory.max bounds it like any other page
 * (mm/hugetlb.c, alloc_hugetlb_folio: mem_cgroup_hugetlb_try_charge with
 * __GFP_RETRY_MAYFAIL, Linux 6.12). The charge first reclaims the cgroup's
 * other memory; when that cannot make room it fails with -ENOMEM, without
 * the OOM killer (__GFP_RETRY_MAYFAIL), and hugetlb_no_page() turns the
 * error into VM_FAULT_OOM (vmf_error), not VM_FAULT_SIGBUS as an empty
 * pool does: pagefault_out_of_memory() finds no OOM to wait for and lets
 * the task retry the fault, again and again while the cgroup stays at its
 * limit (the kernel logs "Huh VM_FAULT_OOM leaked out to the #PF handler.
 * Retrying PF"). The process stalls at that touch, it does not die (the
 * cgroup v2 documentation says SIGBUS; the code says otherwise); a fault
 * taken for the kernel (read(2) into the buffer, mlock) fails instead,
 * EFAULT or ENOMEM. Only memory.max of the instance's own cgroup is read,
 * not its ancestors'.
 */
enum ng_resv_memcg_state {
        NG_RESV_MEMCG_NONE,     /* not charged (no such option), no limit, or nothing left to fault */
        NG_RESV_MEMCG_ROOM,     /* the limit leaves room for every page still to fault */
        NG_RESV_MEMCG_RECLAIM,  /* only if the cgroup's other memory is reclaimed first */
        NG_RESV_MEMCG_BEYOND,   /* not even then: hugetlb alone would pass memory.max */
        NG_RESV_MEMCG_UNKNOWN,  /* charged, but the cgroup's memory files were not read */
};

struct ng_resv_memcg {
        enum ng_resv_memcg_state state;
        const struct ng_cgroup *cgroup; /* its memory cgroup (v2), NULL when unknown */
        /* Its hugetlb segments' pages not yet faulted, all sizes, in bytes
         * (capped per size by the pool's resv_hugepages); at_most when a
         * segment's faulted count is a lower bound. */
        uint64_t unfaulted_bytes;
        bool at_most;
        size_t n_segments;
        char segment[128];              /* the first of them, as messages name it */
        /* memory.max - memory.current: what the charge finds free without
         * reclaim; memory.max - hugetlb: what it could find with every
         * other page of the cgroup reclaimed; room_most_known false when
         * memory.stat has no hugetlb line, and room_most_bytes then all of
         * memory.max. */
        uint64_t room_bytes, room_most_bytes;
        bool room_most_known;
};

/* The memory cgroup whose memory.max bounds in's hugetlb faults: that of
 * its main process (else of the first process of its hugetlb segments) on
 * cgroup v2, NULL when the snapshot read none. */
const struct ng_cgroup *ng_resv_memcg_cgroup(const struct ng_snapshot *s, const struct ng_audit *a,
                                             const struct ng_instance *in);
/* in's unfaulted hugetlb pages against its memory cgroup's limit. */
void ng_resv_memcg(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                   struct ng_resv_memcg *ret);

#ifdef __cplusplus
}
#endif

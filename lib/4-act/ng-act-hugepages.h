/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Hugepage pools per node (`numaguardctl hugepages reserve|apply`): a pure
 * planner turns a request (or `hugepages plan`) into a target per node,
 * checked against supply; the executor writes each node's nr_hugepages,
 * reads it back and, when the kernel grants fewer (fragmented memory, its
 * watermarks), compacts and retries a bounded number of times with backoff.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-action.h"
#include "ng-path.h"
#include "ng-plan.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Retries after a short grant, each after a compaction and a sleep of
 * 100 ms, 200 ms, 400 ms, ... (about 3 s per node in all). */
#define NG_ACT_HP_RETRIES 5
#define NG_ACT_HP_BACKOFF_USEC (100u * 1000u)

struct ng_act_hugepages_node {
        int id;
        uint64_t nr_pages, free_pages;  /* the pool now */
        uint64_t in_use_pages;          /* nr - free: never shrunk below */
        /* The plan's row (ng_plan_node.supply): its memory above its floor
         * (growth refused when unknown) and its pool. */
        struct ng_node_supply supply;
        bool pool_unknown;              /* its pool's counters are unknown: any request refused */
        bool asked;                     /* the request names this node */
        uint64_t asked_pages;           /* what the request wanted */
        uint64_t target_pages;          /* what will be written (asked, raised to in use) */
};

struct ng_act_hugepages {
        uint64_t page_kib;
        uint64_t floor_bytes;           /* node_free_floor as configured (NG_FREE_FLOOR_AUTO: per node) */
        struct ng_act_hugepages_node *nodes;    /* nodes in scope, id order */
        size_t n_nodes;
        bool refused;                   /* a node would drop below its floor, or see unknown */
        bool unknown;                   /* refused on what could not be read (a pool, free memory, a size) */
        char note[512];                 /* how the targets came about (spread, clamps) */
        char reason[512];               /* why refused, with the numbers */
        /* ng_act_hugepages_check(): the hugepage reservation check of the
         * pools it shrinks, "" when not made; check_refused: it refused. */
        char check[768];
        bool check_refused;
};

/*
 * The hugepage reservation gate (ng-reserve.h): a pool shrunk on a node
 * takes free pages that an instance confined to that node (its cpuset, a
 * bind policy) may still need for the reserved pages it has not faulted;
 * the kernel only keeps the global count whole. Refuses the plan (refused,
 * reason with the numbers) when a shrink would leave a reservation without
 * the free pages to serve it, or one already short shorter. Growth is not
 * counted (the kernel may grant less). Pure. 0 or -ENOMEM.
 */
struct ng_audit;
int ng_act_hugepages_check(const struct ng_snapshot *s, const struct ng_audit *audit, struct ng_act_hugepages *a);

/*
 * `reserve --size --pages [--node]`: with node >= 0, that node's pool of
 * page_kib pages should hold pages; with node < 0, pages in total, spread
 * evenly over the nodes with memory (the remainder to the lowest ids). A
 * target below the pages in use is raised to them (and noted); growth that
 * would leave a node with less MemFree than floor_bytes refuses the whole
 * action (ret->refused, ret->reason). Returns 0, -ENXIO (node not online or
 * without memory, or no node with memory), -EOPNOTSUPP (no pool of that size
 * on a node in scope) or -ENOMEM. Pure.
 */
int ng_act_hugepages_plan_reserve(const struct ng_snapshot *s, uint64_t floor_bytes, uint64_t page_kib,
                                  uint64_t pages, int node, struct ng_act_hugepages **ret);
/* `apply`: the targets of `hugepages plan`, with the same checks. */
int ng_act_hugepages_plan_apply(const struct ng_snapshot *s, uint64_t floor_bytes, const struct ng_plan *p,
                                struct ng_act_hugepages **ret);
void ng_act_hugepages_free(struct ng_act_hugepages *a);
/* For _ng_cleanup_(ng_act_hugepages_freep) (cleanup.h, not installed). */
static inline void ng_act_hugepages_freep(struct ng_act_hugepages **a)
{
        ng_act_hugepages_free(*a);
}

/*
 * Carries the plan out (or, with dry_run, only records what it would
 * write): REFUSED without a write when the plan is refused; NOOP when no
 * node changes; DONE when every node reads back its target; PARTIAL with
 * "asked X, granted Y on node N after K retries" and the boot line to use
 * instead; TRANSIENT or PERMANENT on the first failed write (later nodes are
 * not written). Returns 0, -E2BIG when res could not hold the writes, or
 * -EINVAL for an ops table it cannot take (struct ng_action_ops).
 */
int ng_act_hugepages_run(const struct ng_act_hugepages *a, const struct ng_path *p, const struct ng_action_ops *ops,
                         bool dry_run, struct ng_action_result *res);

/* "2M", "1G", "2048kB", "2048k", "1GB", "1gib" -> KiB. 0 or -EINVAL. */
int ng_hugepage_size_parse(const char *s, uint64_t *ret_kib);
/* 2048 -> "2M", 1048576 -> "1G", 64 -> "64K": the kernel's hugepagesz= form. */
void ng_hugepage_size_format(uint64_t kib, char *buf, size_t size);

/*
 * `--persist`: records the plan's targets in the boot-time form numaguard
 * owns, NG_HUGEPAGES_BOOT_FILE (tmpfiles.d "w" lines to each node's
 * nr_hugepages, written by systemd-tmpfiles-setup early in boot): the
 * file's lines for other nodes and sizes are kept, each changed line is a
 * write (NG_WRITE_CONFIG_LINE) in res, the file is replaced atomically (made
 * on first use) and read back. The summary gets the kernel command-line form
 * of the file's pools of that size, the better form for 1 GiB pages (only a
 * freshly booted kernel reliably finds contiguous gigabytes). With dry_run
 * nothing is written. Returns 0 whenever res says what happened (a failure
 * sets res->outcome and res->error), -EINVAL for bad arguments.
 */
int ng_act_hugepages_persist(const struct ng_act_hugepages *a, const struct ng_path *p,
                             const struct ng_action_ops *ops, bool dry_run, struct ng_action_result *res);

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The hugepage plan: what pool, per node, the instances need (each split by
 * its policy and nodes, with a margin), against what exists. Pure.
 */

#include "ng-audit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pages added on top of each instance's need: 2 %, at least one page. */
#define NG_PLAN_MARGIN 0.02

struct ng_plan_instance {
        char name[NG_INSTANCE_NAME_MAX + 1];
        uint64_t bytes;         /* shared memory it wants in hugepages */
        bool bytes_unknown;     /* a segment's size is unknown: no pages planned */
        uint64_t pages;         /* with the margin */
        struct ng_bitmap nodes; /* where its pages go */
        bool amm;               /* /dev/shm only (Oracle AMM): cannot use hugepages */
        bool off;               /* hugepages = off */
};

struct ng_plan_node {
        int id;
        uint64_t need_pages;    /* the instances' share on this node */
        /* What the node can give (ng_node_supply()): its memory above its
         * floor and its pool of the plan's page size, each known or not. */
        struct ng_node_supply supply;
        uint64_t nr_pages, free_pages;  /* supply's, 0 when unknown */
        uint64_t target_pages;  /* never below what is in use; nr_pages when the pool is unknown */
        uint64_t headroom_pages;/* supply's headroom, 0 when unknown */
        bool has_boot;          /* the boot configuration sets this pool (ng-owner.h) */
        bool boot_from_file;    /* numaguard's tmpfiles.d file, else the kernel command line */
        uint64_t boot_pages;    /* what it gives at boot */
        enum ng_boot_source boot_source;
        bool boot_split;        /* a share of a total the kernel splits: only the sum is certain */
        char boot_where[256];   /* ng_boot_pool_describe() */
};

struct ng_plan {
        uint64_t page_kib;
        struct ng_plan_instance *instances;
        size_t n_instances;
        struct ng_plan_node *nodes;
        size_t n_nodes;
        uint64_t need_pages, nr_pages, target_pages;
        bool changes;           /* some node must grow */
        /* A segment of an instance has a size nobody could read (a
         * problem of the snapshot says why): its need is unknown, and no
         * correction is planned on it. */
        bool need_unknown;
};

int ng_plan_hugepages(const struct ng_snapshot *s, const struct ng_config *cfg, const struct ng_audit *a,
                      struct ng_plan **ret);
/* The node rows alone, for page_kib pages (no instance): what
 * `hugepages reserve` checks its request against. */
int ng_plan_supply(const struct ng_snapshot *s, uint64_t floor_bytes, uint64_t page_kib, struct ng_plan **ret);
void ng_plan_free(struct ng_plan *p);
/* For _ng_cleanup_(ng_plan_freep) (cleanup.h, not installed). */
static inline void ng_plan_freep(struct ng_plan **p)
{
        ng_plan_free(*p);
}

#ifdef __cplusplus
}
#endif

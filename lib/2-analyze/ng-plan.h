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
        uint64_t pages;         /* with the margin */
        struct ng_bitmap nodes; /* where its pages go */
        bool amm;               /* /dev/shm only (Oracle AMM): cannot use hugepages */
        bool off;               /* hugepages = off */
};

struct ng_plan_node {
        int id;
        uint64_t need_pages;    /* the instances' share on this node */
        uint64_t nr_pages, free_pages;
        uint64_t target_pages;  /* never below what is in use */
        uint64_t headroom_pages;/* pages its free memory above the floor could still give */
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
};

int ng_plan_hugepages(const struct ng_snapshot *s, const struct ng_config *cfg, const struct ng_audit *a,
                      struct ng_plan **ret);
void ng_plan_free(struct ng_plan *p);

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A rehearsal of an instance's next start (docs/ARCHITECTURE.md,
 * "Rehearsal"): what its shared memory will get from the hugepage pools as
 * the host is now, predicted from the live pools per node, the binding it
 * will start under (its cgroup's memory nodes as their owner restores them,
 * a bind policy it runs under), and its own configuration as the next
 * start reads it (ng-dbconf.h), with its own pages given back to the pools
 * when it stops. Pure: a const snapshot and audit in, no I/O; it changes
 * nothing on the host.
 */

#include <stdbool.h>
#include <stdint.h>

#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ng_rehearse_outcome {
        NG_REHEARSE_HUGE,       /* all in hugepages, from nodes */
        NG_REHEARSE_PARTIAL,    /* partly in 4 KiB pages (Oracle use_large_pages = TRUE) */
        NG_REHEARSE_SMALL,      /* all in 4 KiB pages: the pool cannot hold it and the setting falls back */
        NG_REHEARSE_OFF,        /* all in 4 KiB pages, as its setting asks */
        NG_REHEARSE_NO_START,   /* the setting requires hugepages the pool cannot hold: no start */
        NG_REHEARSE_SIGBUS,     /* it starts, and a first touch dies of SIGBUS on nodes */
        NG_REHEARSE_UNKNOWN,    /* cannot tell: why says what is missing */
        /* it starts, and a first touch stalls: its memory cgroup, which
         * hugetlb faults are charged to (memory_hugetlb_accounting),
         * cannot take the pages (ng-reserve.h, ng_resv_memcg) */
        NG_REHEARSE_FAULT_STALL,
        NG_REHEARSE_OUTCOME_COUNT_
};

/* "hugepages", "partly-4k", "4k-fallback", "4k-by-setting", "no-start",
 * "sigbus", "unknown", "fault-stall": what users script against. */
const char *ng_rehearse_outcome_name(enum ng_rehearse_outcome o);

struct ng_rehearsal {
        enum ng_rehearse_outcome outcome;
        /* Its pages will all sit on one node while its CPUs span several. */
        bool cyclops;
        int cyclops_node;
        enum ng_huge_setting setting;   /* as configured (ng-dbconf.h) */
        char setting_name[32];          /* "huge_pages", "large_pages", "use_large_pages" */
        char setting_value[16];         /* "try", "ON", "ONLY" (the engine's default when unset) */
        char setting_from[160];         /* "FILE:LINE", "command line", "the default" */
        uint64_t bytes;                 /* its shared memory at the next start */
        char size_from[160];            /* "its running segment", "innodb_buffer_pool_size, FILE:LINE" */
        uint64_t page_kib;              /* the hugepage size it asks for */
        uint64_t pages;                 /* hugepages that holds */
        /* partly-4k: the pages of it that are hugepages (Oracle TRUE takes
         * what the kernel reserves, the rest in 4 KiB pages); 0 otherwise. */
        uint64_t partial_pages;
        /* Where its pages may come from: its cgroup's memory nodes as the
         * next start gets them, narrowed by a bind policy. */
        struct ng_bitmap nodes;
        char binding[256];
        /* The pool of page_kib once it has stopped: free and unreserved in
         * all, free on its nodes after the needs of the instances confined
         * within them, surplus pages vm.nr_overcommit_hugepages allows. */
        uint64_t avail_pages, free_on_nodes, surplus_pages;
        struct ng_bitmap from_nodes;    /* the nodes with free pages it will take them from */
        char why[768];                  /* the reasoning, with the numbers */
        char fix[256];                  /* the one change that fixes it, "" when nothing to fix */
};

/*
 * Rehearses in's next start. PostgreSQL (shared_memory_type mmap or sysv,
 * huge_pages off/on/try, huge_page_size), sized by its running main
 * segment; MariaDB and MySQL (large_pages), sized by
 * innodb_buffer_pool_size; Oracle (use_large_pages TRUE, ONLY, FALSE,
 * AUTO, AUTO_ONLY; memory_target), sized by its running SGA segments or
 * its SGA settings. Other engines, an instance whose configuration could
 * not be read or has nothing to size it by are UNKNOWN with the reason.
 * 0, -EINVAL for bad arguments, -ENOMEM.
 */
int ng_rehearse(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                struct ng_rehearsal *ret);

/* 0 for hugepages or what the setting asks, 1 for a fallback, a partial or
 * a cyclops start, 2 for no start, SIGBUS or a stalled fault, 3 unknown. */
int ng_rehearsal_exit_status(const struct ng_rehearsal *r);

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by rehearse.c (the pools and the kernel's side of a start),
 * rehearse-bind.c (the nodes a start may take pages from) and
 * rehearse-engines.c (what MariaDB and Oracle ask at their start). Not
 * installed. */

#include "ng-rehearse.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* What one rehearsal works with: the pool of its size as it will be once
 * the instance has stopped. */
struct stage {
        const struct ng_snapshot *s;
        const struct ng_audit *a;
        const struct ng_instance *in;
        struct ng_rehearsal *r;
        const struct ng_hugepool *pool;         /* global, of r->page_kib */
        uint64_t *free_after;                   /* per topo node index */
        uint64_t resv_after;
        uint64_t own_pages, own_faulted;        /* its segments of the size, pages and faulted */
        /* What the engine does when its reservation fails, in words:
         * setting ON ("PostgreSQL refuses to start (...)") and otherwise
         * ("PostgreSQL falls back to 4 KiB pages"). */
        const char *refuse, *fallback;
};

void ng_rehearse_appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sets st->r->nodes and binding: the memory nodes of the cgroup its next
 * start runs in, narrowed by a bind policy its main process runs under
 * (as its settings or its numa_maps on seg show it; seg may be NULL). */
void ng_rehearse_binding(const struct stage *st, const struct ng_segment *seg);

/* The pool of st->r->page_kib as the start meets it, for pages pages:
 * sets the outcome (hugepages, a fallback or a part, no start, SIGBUS)
 * and its reasoning; no pool of that size is a fallback or no start, one
 * whose counters are unknown is unknown. 0 or -ENOMEM. */
int ng_rehearse_pool(struct stage *st, uint64_t pages);

/* Marks a start whose pages all come from one node while its CPUs span
 * several (cyclops). */
void ng_rehearse_cyclops(struct stage *st);

/* Unknown, why said. 0. */
int ng_rehearse_unknown(struct ng_rehearsal *r, const char *why);

/* The hugepage size the host's kernel uses by default (Hugepagesize). */
uint64_t ng_rehearse_default_page_kib(const struct ng_snapshot *s);

/* MariaDB's (or MySQL's) next start: its buffer pool by large_pages, each
 * of the host's page sizes tried from the largest. 0 or -ENOMEM. */
int ng_rehearse_mariadb(struct stage *st, const struct ng_db_settings *cfg);
/* An Oracle instance's next start: its SGA by use_large_pages. */
int ng_rehearse_oracle(struct stage *st, const struct ng_db_settings *cfg);

#pragma GCC visibility pop

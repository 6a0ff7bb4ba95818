/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * analyze: const snapshot + const config -> instances, segments, findings.
 * Pure: no I/O, no globals. Unit tests build snapshots as literals.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-codes.h"
#include "ng-config.h"
#include "ng-price.h"
#include "ng-segments.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ng_finding {
        enum ng_code code;
        enum ng_severity severity;
        char instance[NG_INSTANCE_NAME_MAX + 1];        /* "" for host-wide findings */
        char segment[128];      /* "" when not about one segment */
        struct ng_bitmap nodes; /* the nodes it is about */
        char message[512];      /* one line, with the numbers behind it */
        char advice[256];       /* what to do */
        double value;           /* the measured number (fraction, bytes, pages) */
        /* The container of the instance it is about; all "" when none. */
        struct ng_container container;
        /* Host-wide and about processes of no instance only (their maps or
         * a file of theirs could not be read): it bears on no instance
         * (ng_finding_bears_on()). */
        bool other_processes;
};

/* A process whose maps numaguard could not read and that unreadable_ok
 * (numaguard.conf(5)) names: counted and shown, not AUDIT_INCOMPLETE. */
struct ng_acknowledged {
        pid_t pid;
        uint32_t uid;
        char name[128];         /* as ng_proc.name */
        char *by;               /* the entry that names it: "init" or a cgroup path */
};

enum ng_instance_origin {
        NG_INST_CONFIGURED,     /* an [instance NAME] section */
        NG_INST_DISCOVERED,     /* found by itself: Oracle, PostgreSQL, MariaDB/MySQL, SAP HANA */
        NG_INST_UNCLAIMED,      /* a large segment no instance claims */
};

struct ng_instance {
        char name[NG_INSTANCE_NAME_MAX + 1];
        enum ng_instance_origin origin;
        const char *type;       /* an engine's (engine.h), "configured" or "unclaimed" */
        const struct ng_instance_config *cfg;   /* effective settings; never NULL */
        pid_t main_pid;         /* 0 when none */
        pid_t *pids;            /* pid order */
        size_t n_pids;
        struct ng_bitmap cpus;          /* union of Cpus_allowed_list */
        struct ng_bitmap mems;          /* union of Mems_allowed_list */
        struct ng_bitmap cpu_nodes;     /* nodes holding any of cpus */
        const char *cgroup;             /* cpuset cgroup of main_pid, NULL if unknown */
        const struct ng_owner *owner;   /* that cgroup's owner, NULL when no cgroup */
        size_t *segs;                   /* indices into ng_audit.segments */
        size_t n_segs;
        uint64_t shared_bytes, resident_bytes;
        /* The size of its shared memory is unknown: a segment's size could
         * not be read, or a process of it has maps nobody could read
         * (shared_bytes then counts only what is known). */
        bool shared_unknown;
        struct ng_node_bytes *nodes;    /* resident shared bytes per node, node order */
        size_t n_nodes;
        uint64_t vm_pte_kib, hugetlb_kib, rss_shmem_kib;
        struct ng_price price;          /* of today's placement; source NONE when nothing to price */
        /* The container main_pid runs in (one of the snapshot's), NULL
         * when none. */
        const struct ng_container *container;
        /* Its resident memory is unknown: a process of it has maps nobody
         * could read (resident_bytes and nodes count only what is known). */
        bool resident_unknown;
        /* Of shared_bytes, the size of its private segments: large private
         * mappings of its processes (InnoDB's buffer pool), not shared
         * memory at all. */
        uint64_t private_bytes;
        /* The PID and IPC namespaces of its processes, one cluster of
         * them: a configured instance whose matcher finds processes in
         * several takes one (INSTANCE_AMBIGUOUS names them) unless
         * span_namespaces = yes. 0 when unknown, when it has no process,
         * or when it spans several. */
        uint64_t pid_ns, ipc_ns;
};

struct ng_audit {
        struct ng_segment *segments;
        size_t n_segments;
        struct ng_instance *instances;
        size_t n_instances;
        struct ng_finding *findings;    /* most severe first */
        size_t n_findings;
        /* The refused processes unreadable_ok names (never a process of an
         * instance), pid order. */
        struct ng_acknowledged *acknowledged;
        size_t n_acknowledged;
        struct ng_instance_config default_cfg;  /* settings of discovered instances */
        uint64_t min_segment_bytes;     /* min_segment_size: smaller segments of an instance are summed up */
};

int ng_audit_run(const struct ng_snapshot *s, const struct ng_config *cfg, struct ng_audit **ret);
void ng_audit_free(struct ng_audit *a);
/* For _ng_cleanup_(ng_audit_freep) (cleanup.h, not installed). */
static inline void ng_audit_freep(struct ng_audit **a)
{
        ng_audit_free(*a);
}

/* 0 none above info, 1 warning, 2 critical (numaguardctl audit's exit status). */
int ng_audit_exit_status(const struct ng_audit *a);
const struct ng_instance *ng_audit_instance(const struct ng_audit *a, const char *name);

/* Whether finding f bears on instance in of audit a (numaguardctl audit
 * --instance; in's segments index a->segments): a finding of in itself;
 * a host-wide one about one of in's segments; about a node in uses (its
 * shared memory is there, its CPUs, or its nodes=), for HUGEPAGE_OVERCOMMIT
 * and HUGEPAGE_NOT_PERSISTENT only where it has hugetlb memory;
 * AUTONUMA_ON where it has a segment in 4 KiB pages; ZONE_RECLAIM_ON and
 * NUMAD_RUNNING always; AUDIT_INCOMPLETE about a host file (not about
 * processes of no instance, other_processes). Never another instance's,
 * nor the host's page tables (PAGETABLE_BLOAT) or an idle pool
 * (HUGEPAGE_IDLE). */
bool ng_finding_bears_on(const struct ng_audit *a, const struct ng_finding *f, const struct ng_instance *in);

/* The nodes a correction spreads the instance's shared memory over:
 * nodes= when set, else its CPUs' nodes (policy local) or every node; only
 * nodes with memory, never a node of a slower memory tier than its CPUs'
 * own (a correction does not make memory slower), never one outside its
 * processes' Mems_allowed (its cpuset). */
void ng_instance_spread_nodes(const struct ng_snapshot *s, const struct ng_instance *in, struct ng_bitmap *ret);
/* The policy the pages a 4 KiB shmem segment of the instance gains later
 * are to follow, over nodes (ng_instance_spread_nodes()): interleave
 * (policy interleave, or local over several nodes), weighted interleave
 * (weighted-interleave where the kernel has it; interleave where not),
 * bind (bind), prefer (local on one node); its text as numa_maps writes it ("interleave:0-3")
 * in buf. NG_MPOL_DEFAULT and "" for no nodes. */
enum ng_mpol ng_instance_segment_policy(const struct ng_snapshot *s, const struct ng_instance *in,
                                        const struct ng_bitmap *nodes, char *buf, size_t size);
/* Whether the instance asks policy weighted-interleave and the kernel has
 * it (NG_FEATURE_WEIGHTED_INTERLEAVE): its policy is then weighted
 * interleave over nodes, slower tiers included. */
bool ng_instance_weighted(const struct ng_snapshot *s, const struct ng_instance *in);
/* The weights weighted interleave over nodes wants for the instance: each
 * node's read bandwidth from the instance's first CPU node (the HMAT's,
 * else numaguardctl probe's), in the smallest whole numbers of that ratio
 * (hundredths of the fastest where those exceed 100, at least 1), by node
 * id in ret[0..n_ret);
 * 0 for nodes not in nodes; 1 each when no bandwidth is known for all of
 * them. Returns where they came from ("HMAT bandwidth", "measured
 * bandwidth", "equal: no bandwidth known"). */
const char *ng_instance_interleave_weights(const struct ng_snapshot *s, const struct ng_instance *in,
                                           const struct ng_bitmap *nodes, unsigned *ret, size_t n_ret);

#ifdef __cplusplus
}
#endif

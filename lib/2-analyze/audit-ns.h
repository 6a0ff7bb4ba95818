/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * analyze: the clusters a configured instance's matcher finds. A cluster is
 * the processes of one PID namespace and one IPC namespace: a database of
 * the host's and one in a container both answer one match_comm, yet they
 * are two databases, with two cgroups and two sets of segments. An
 * instance takes one cluster unless span_namespaces = yes, and the audit
 * names every cluster its matcher found (INSTANCE_AMBIGUOUS). Pure: no I/O.
 * Internal to the library: not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit-internal.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_ns_cluster {
        uint64_t pid_ns, ipc_ns;        /* 0 unknown (a tree taken before they were read) */
        pid_t main_pid;                 /* its lowest pid */
        size_t n_pids;
};

/* How the instance's cluster was chosen, in this order. */
enum ng_ns_choice {
        NG_NS_PIDFILE,  /* the one holding the process its pidfile names */
        NG_NS_OWN,      /* the one in numaguard's own PID and IPC namespaces (the host's) */
        NG_NS_LARGEST,  /* the one with the most processes; of equals, the lowest main pid */
};

/* The clusters of pids (ascending, each a process of s), by main pid. 0 or
 * -ENOMEM; *ret is NULL when n is 0. */
int ng_ns_clusters(const struct ng_snapshot *s, const pid_t *pids, size_t n, struct ng_ns_cluster **ret,
                   size_t *ret_n);

/* The cluster an instance takes (index into v[0..n), n > 0): the one holding
 * pidfile_pid (0: no pidfile), else numaguard's own, else the largest. */
size_t ng_ns_cluster_choose(const struct ng_snapshot *s, const struct ng_ns_cluster *v, size_t n,
                            pid_t pidfile_pid, enum ng_ns_choice *ret_why);

/* A configured instance whose processes (in->pids, matched) fall into
 * several clusters keeps only the chosen one's, unless its section sets
 * span_namespaces; sets in->pid_ns and in->ipc_ns; what was found is kept
 * in ctx for INSTANCE_AMBIGUOUS. 0 or -ENOMEM. */
int ng_ns_take_cluster(struct audit_ctx *ctx, struct ng_instance *in, pid_t pidfile_pid);

/* Whether a segment the instance's shm_owner names lives in the
 * instance's namespaces: a SysV segment in the IPC namespace of its
 * cluster, a file in the mount namespace of its main process. Always true
 * for an instance that spans namespaces or has no process. */
bool ng_ns_segment_in(const struct ng_snapshot *s, const struct ng_instance *in, const struct ng_segment *seg);

/* INSTANCE_AMBIGUOUS for each instance whose matcher found several
 * clusters. */
int ng_rule_ambiguous(struct audit_ctx *ctx);

void ng_ns_splits_free(struct audit_ctx *ctx);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The measured node-to-node matrices (numaguardctl probe) and their file,
 * /var/lib/numaguard/latency.json:
 *
 *   {"schema": 1, "measured_at": "2026-11-23T16:40:00Z",
 *    "nodes": [0, 1, 2],          columns: memory nodes
 *    "cpu_nodes": [0, 1],         rows: CPU nodes (memory-only nodes are columns only)
 *    "latency_ns": [[...], ...], "bandwidth_mbps": [[...], ...]}
 *
 * A cell is a number from 0.001 up, or null (not measured). bandwidth is in
 * MB/s (10^6 bytes per second). The file is untrusted input: the parser
 * checks every number and every shape and says what is wrong.
 */

#include <stdbool.h>
#include <stddef.h>

#include "ng-path.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NG_STATE_DIR "/var/lib/numaguard"
#define NG_LATENCY_FILE NG_STATE_DIR "/latency.json"
#define NG_LATENCY_SCHEMA 1
/* Node ids above this are refused (the kernel's MAX_NUMNODES is 1024). */
#define NG_LATENCY_MAX_NODE 1023
/* Anything beyond these is not a measurement: 1 s per load, 100 TB/s. */
#define NG_LATENCY_MAX_NS 1e9
#define NG_LATENCY_MAX_MBPS 1e8

struct ng_latency {
        char measured_at[32];   /* ISO 8601, UTC */
        int *nodes;             /* memory nodes (columns), ascending */
        size_t n_nodes;
        int *cpu_nodes;         /* CPU nodes (rows), ascending, a subset of nodes */
        size_t n_cpu_nodes;
        double *latency_ns;     /* [row * n_nodes + column], NAN when not measured */
        double *bandwidth_mbps; /* same shape */
        unsigned *pages_verified;       /* per column: pages move_pages(2) found on the node; 0 unknown */
        /* Same shape: how far the probe's runs of a cell lay apart, the
         * largest over the smallest (1: they agree; at most
         * NG_LATENCY_MAX_SPREAD); NAN when not measured or not known (a
         * file of 0.1.0). */
        double *latency_spread;
        double *bandwidth_spread;
};

/* A spread beyond this is written as this (runs of 0 give no ratio). */
#define NG_LATENCY_MAX_SPREAD 1e6

/* An n_cpu x n_mem matrix with every cell NAN. Returns NULL on ENOMEM. */
struct ng_latency *ng_latency_new(size_t n_cpu_nodes, size_t n_nodes);
void ng_latency_free(struct ng_latency *m);
/* For _ng_cleanup_(ng_latency_freep) (cleanup.h, not installed). */
static inline void ng_latency_freep(struct ng_latency **m)
{
        ng_latency_free(*m);
}

/* Column / row index of a node, or -1. */
int ng_latency_col(const struct ng_latency *m, int node);
int ng_latency_row(const struct ng_latency *m, int cpu_node);
/* The cell for (CPU node, memory node), NAN when absent or not measured. */
double ng_latency_ns(const struct ng_latency *m, int cpu_node, int mem_node);
double ng_latency_bandwidth_mbps(const struct ng_latency *m, int cpu_node, int mem_node);

/*
 * Parses the file's text. Returns 0, -ENOMEM, or -EINVAL with a reason in
 * err (e.g. "latency_ns row 1 has 3 cells, expected 4").
 */
int ng_latency_parse(const char *buf, size_t len, struct ng_latency **ret, char *err, size_t err_size);
struct json_object;
/* The file's object (json-c), NULL on ENOMEM. */
struct json_object *ng_latency_json(const struct ng_latency *m);
/* The file's text, pretty-printed with a trailing newline; malloc'd. */
int ng_latency_format(const struct ng_latency *m, char **ret);

/*
 * Reads NG_LATENCY_FILE under the path's root. Returns 0, -ENOENT when no
 * probe was saved, -EINVAL (reason in err) for a file that is not a matrix.
 */
int ng_latency_read(const struct ng_path *p, struct ng_latency **ret, char *err, size_t err_size);
/* Writes it under root ("" or NULL: the host), creating NG_STATE_DIR
 * (0755) and replacing the file atomically (0644). Returns 0 or -errno. */
int ng_latency_write(const char *root, const struct ng_latency *m);
/* Whether ng_latency_write(root, ...) can write: makes NG_STATE_DIR as it
 * would and creates and removes its temporary file there. 0 or -errno. */
int ng_latency_check_writable(const char *root);

#ifdef __cplusplus
}
#endif

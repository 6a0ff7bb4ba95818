/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* report: render a snapshot (and later, findings) as text or JSON. */

#include <json-c/json.h>
#include <stdio.h>

#include "ng-format.h"
#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of every JSON document numaguard prints ("schema" field). */
#define NG_JSON_SCHEMA 1

enum ng_distance_class {
        NG_DIST_LOCAL,
        NG_DIST_NEAR,
        NG_DIST_FAR,
};

/* local: the node's own distance; near: at most halfway from local to the
 * largest distance on the host (10 vs 12-16 vs 21-32); far: beyond. */
enum ng_distance_class ng_distance_class(const struct ng_snapshot *s, int from, int to);
const char *ng_distance_class_name(enum ng_distance_class c);

int ng_report_topology_text(const struct ng_snapshot *s, FILE *f);
/* When the nodes' MemTotal sum and /proc/meminfo's differ
 * (ng_host_memory_split()): one line saying so, with both and which figures
 * rest on which, into buf; NULL when they agree or either is unknown. */
const char *ng_report_memory_note(const struct ng_snapshot *s, char *buf, size_t size);
/* Returns a new JSON object or NULL on allocation failure. */
struct json_object *ng_report_topology_json(const struct ng_snapshot *s);
/* The measured latency and bandwidth matrices beside the SLIT. */
int ng_report_latency_text(const struct ng_snapshot *s, const struct ng_latency *m, FILE *f);

struct ng_segment;
struct ng_node_bytes;
/* One bar row per node of the host ("N0 ████ 98%  7.4 GiB"), part of whole. */
void ng_report_node_bars(const struct ng_snapshot *s, const struct ng_node_bytes *nb, size_t n, uint64_t whole,
                         const char *indent, FILE *f);
/* [{"id": N, "bytes": B}, ...] */
struct json_object *ng_node_bytes_json(const struct ng_node_bytes *nb, size_t n);
int ng_report_segments_text(const struct ng_snapshot *s, const struct ng_segment *v, size_t n, FILE *f);
struct json_object *ng_segment_json(const struct ng_segment *seg);
/* How the segment's placement and resident bytes were measured, as the
 * text outputs say it: "sampled over the segment's own pages via pid 812",
 * "exact from pid 812's page tables, which map 40% of it; resident by the
 * kernel's count". */
const char *ng_report_placement_how(const struct ng_segment *seg, char *buf, size_t size);
/* {"schema", "segments": [ng_segment_json() of each], "unlisted_files":
 * ng_report_unlisted_json()} */
struct json_object *ng_report_segments_json(const struct ng_snapshot *s, const struct ng_segment *v, size_t n);
/* What the /dev/shm and hugetlbfs mounts hold that is not listed as
 * segments (ng_snapshot.unlisted): the files under min_file_bytes that no
 * process maps, counted, and the entries past the bound a collection
 * examines; a line each, nothing for a mount with neither. */
void ng_report_unlisted_text(const struct ng_snapshot *s, FILE *f);
/* [{"mountpoint", "mnt_ns", "small_under_bytes", "small_files",
 * "small_bytes", "small_allocated_bytes", "unexamined"}, ...], the mounts
 * with either. */
struct json_object *ng_report_unlisted_json(const struct ng_snapshot *s);

struct ng_audit;
struct ng_finding;
int ng_report_audit_text(const struct ng_snapshot *s, const struct ng_audit *a, FILE *f);
/* Every segment on its own line, with its bars: no Oracle AMM SGA line, no
 * summed-up small segments. */
#define NG_REPORT_VERBOSE 1u
int ng_report_audit_text_flags(const struct ng_snapshot *s, const struct ng_audit *a, unsigned flags, FILE *f);
struct json_object *ng_finding_json(const struct ng_finding *fd);
/* The audit document: schema, topology, instances (with their segments),
 * segments, findings, summary, cost. */
struct json_object *ng_report_audit_json(const struct ng_snapshot *s, const struct ng_audit *a);

/* The processes unreadable_ok acknowledges (ng_audit.acknowledged): "N
 * processes acknowledged unreadable (unreadable_ok): pid P (NAME, uid U,
 * ENTRY), ..." on one line, nothing when none; and as an array of {"pid",
 * "name", "uid", "by"}. */
void ng_report_acknowledged_text(const struct ng_audit *a, FILE *f);
struct json_object *ng_report_acknowledged_json(const struct ng_audit *a);

struct ng_plan;
void ng_plan_boot_line(const struct ng_plan *p, char *buf, size_t size);
int ng_report_plan_text(const struct ng_plan *p, FILE *f);
struct json_object *ng_report_plan_json(const struct ng_plan *p);

#ifdef __cplusplus
}
#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `numaguardctl audit`: instances, their segments per node, findings. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "ng-owner.h"
#include "cleanup.h"
#include "ng-audit.h"
#include "engine.h"
#include "ng-report.h"
#include "text.h"
#include "units.h"
#include "util.h"
#include "bitmap-json.h"
#include "report-internal.h"

static const char *origin_name(enum ng_instance_origin o)
{
        static const char *const names[] = {
                [NG_INST_CONFIGURED] = "configured",
                [NG_INST_DISCOVERED] = "discovered",
                [NG_INST_UNCLAIMED] = "unclaimed",
        };
        return NG_NAME(names, o, "unknown");
}

static void count_severities(const struct ng_audit *a, size_t counts[3])
{
        counts[0] = counts[1] = counts[2] = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                counts[a->findings[i].severity]++;
}

/* One line: what today's placement costs against interleaving. */
static void print_price(const struct ng_price *p, FILE *f)
{
        if (p->source == NG_PRICE_NONE)
                return;
        static const char *const from[] = {
                [NG_PRICE_MEASURED] = "measured",
                [NG_PRICE_HMAT] = "from the firmware's HMAT, no probe saved",
                [NG_PRICE_SLIT] = "from the SLIT, no probe saved",
        };
        bool m = p->source == NG_PRICE_MEASURED || p->source == NG_PRICE_HMAT;
        fprintf(f, "  price (%s): CPU time on node", from[p->source]);
        for (size_t i = 0; i < p->n_cpu_share; i++)
                fprintf(f, "%s %d %.0f%%", i ? "," : "", p->cpu_share[i].node, p->cpu_share[i].share * 100);
        fprintf(f, "%s; %.0f%% of accesses remote\n", p->cpu_share_measured ? "" : " (no CPU time yet: even)",
                p->remote_access_ratio * 100);
        fprintf(f, "    average %s %.4g%s (local %.4g, interleaved %.4g: %+.0f%% against local); ",
                m ? "latency" : "distance", p->expected_latency, m ? " ns" : "", p->local_latency,
                p->interleaved_latency, ng_price_latency_pct(p));
        if (m)
                fprintf(f, "read bandwidth ceiling %.1f GB/s (interleaved %.1f: %.2g of %u nodes)\n",
                        p->bandwidth_ceiling / 1000, p->interleaved_bandwidth_ceiling / 1000, ng_price_ceiling_nodes(p),
                        p->interleave_nodes);
        else
                fprintf(f, "bandwidth ceiling %.2g of %u nodes\n", ng_price_ceiling_nodes(p), p->interleave_nodes);
}

/* The engine whose shared memory granules this segment is (Oracle AMM
 * keeps the SGA as hundreds to thousands of files in /dev/shm), or NULL:
 * they are one logical segment, shown as one. */
static const struct ng_engine *granule_engine(const struct ng_segment *seg)
{
        return seg->kind == NG_SEG_FILE && !seg->huge ? ng_engine_of_granule(seg->name) : NULL;
}

static bool is_granule(const struct ng_segment *seg)
{
        return granule_engine(seg) != NULL;
}

/* Segments of a claimed instance below min_segment_size (PostgreSQL's
 * dynamic shared memory, a few KiB each) are summed up in one line. */
static bool is_small(const struct ng_audit *a, const struct ng_segment *seg)
{
        return seg->bytes < a->min_segment_bytes && !is_granule(seg);
}

/* A group of an instance's segments as one: sizes, methods, bytes per node. */
struct group {
        size_t n;
        uint64_t bytes, resident_bytes;
        enum ng_method method;
        bool mixed;
        struct ng_node_bytes *nodes;
        size_t n_nodes;
        uint64_t page_kib;
};

static int group_of(const struct ng_audit *a, const struct ng_instance *in,
                    bool (*member)(const struct ng_audit *, const struct ng_segment *), struct group *g)
{
        memset(g, 0, sizeof(*g));
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (!member(a, seg))
                        continue;
                if (g->n++ == 0) {
                        g->method = seg->method;
                        g->page_kib = seg->page_kib;
                }
                g->mixed |= seg->method != g->method;
                g->bytes = ng_add_u64(g->bytes, seg->bytes, &g->bytes) ? g->bytes : UINT64_MAX;
                g->resident_bytes = ng_add_u64(g->resident_bytes, seg->resident_bytes, &g->resident_bytes)
                                            ? g->resident_bytes : UINT64_MAX;
                for (size_t j = 0; j < seg->n_nodes; j++)
                        if (ng_node_bytes_add(&g->nodes, &g->n_nodes, seg->nodes[j].node, seg->nodes[j].bytes) < 0)
                                return -ENOMEM;
        }
        return 0;
}

static bool granule_member(const struct ng_audit *a, const struct ng_segment *seg)
{
        (void) a;
        return is_granule(seg);
}

/* What the instance's granules are called ("Oracle AMM SGA"). */
static const char *granules_label(const struct ng_audit *a, const struct ng_instance *in)
{
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_engine *e = granule_engine(&a->segments[in->segs[k]]);
                if (e)
                        return e->granules_label;
        }
        return "";
}

static void print_segment(const struct ng_snapshot *s, const struct ng_segment *seg, FILE *f)
{
        char sz[24], name[NG_TEXT_SIZE(sizeof(seg->name))];
        ng_format_bytes_or(seg->bytes, seg->bytes_unknown, "size unknown", sz, sizeof(sz));
        ng_text_escape(NG_TEXT_TERM, seg->name, name, sizeof(name));
        if (seg->kind == NG_SEG_PRIVATE)
                fprintf(f, "  private mapping %s at 0x%" PRIx64 " of pid %d: %s", name, seg->rep_start,
                        seg->n_pids ? (int) seg->pids[0] : 0, sz);
        else
                fprintf(f, "  %s %s: %s", ng_seg_kind_name(seg->kind), name, sz);
        if (seg->page_kib) {
                char pg[16];
                ng_format_page_size(seg->page_kib, pg, sizeof(pg));
                fprintf(f, " in %s pages", pg);
        }
        char how[320];
        fprintf(f, ", placement %s\n", ng_report_placement_how(seg, how, sizeof(how)));
        if (seg->method == NG_METHOD_SAMPLED || seg->method == NG_METHOD_EXACT)
                ng_report_node_bars(s, seg->nodes, seg->n_nodes, seg->resident_bytes, "    ", f);
}

static int print_groups(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                        FILE *f)
{
        struct group g;
        char sz[24], res[24], min[24];
        int r = group_of(a, in, granule_member, &g);
        if (r >= 0 && g.n > 0) {
                ng_format_kib(g.bytes / 1024, sz, sizeof(sz));
                ng_format_kib(g.resident_bytes / 1024, res, sizeof(res));
                fprintf(f, "  %s: %zu file%s in /dev/shm, %s, %s resident, placement %s "
                        "(--verbose lists the files)\n", granules_label(a, in), g.n, g.n == 1 ? "" : "s", sz, res,
                        g.mixed ? "mixed" : ng_method_name(g.method));
                if (g.n_nodes)
                        ng_report_node_bars(s, g.nodes, g.n_nodes, g.resident_bytes, "    ", f);
        }
        free(g.nodes);
        if (r < 0)
                return r;
        r = group_of(a, in, is_small, &g);
        if (r >= 0 && g.n > 0) {
                ng_format_kib(g.bytes / 1024, sz, sizeof(sz));
                ng_format_kib(a->min_segment_bytes / 1024, min, sizeof(min));
                fprintf(f, "  %zu small segment%s (each under %s): %s in all (--verbose lists them)\n", g.n,
                        g.n == 1 ? "" : "s", min, sz);
        }
        free(g.nodes);
        return r;
}

/* Where the placement of the resident bytes came from: the segments' own
 * pages (every resident page counts), or what attachers happen to map. */
static void print_resident_sources(const struct ng_audit *a, const struct ng_instance *in, FILE *f)
{
        static const struct { enum ng_source src; const char *text; } parts[] = {
                { NG_SOURCE_SEGMENT, "from the segments' own pages" },
                { NG_SOURCE_ATTACHER, "from attachers' page tables" },
                { NG_SOURCE_NONE, "unknown" },
        };
        uint64_t by[NG_SOURCE_COUNT_];
        ng_segments_resident_by_source(a->segments, in->segs, in->n_segs, by);
        bool first = true;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                uint64_t b = by[parts[i].src];
                if (!b)
                        continue;
                char h[24];
                ng_format_kib(b / 1024, h, sizeof(h));
                fprintf(f, "%s%s %s", first ? " (placement of " : ", ", h, parts[i].text);
                first = false;
        }
        if (!first)
                fputc(')', f);
}

/* "shared memory 8 GiB, 7.2 GiB resident"; private segments (MariaDB's
 * InnoDB buffer pool, a private mapping of the server) are no shared
 * memory: "private memory 160 MiB (the InnoDB buffer pool and ...)" beside
 * or instead of it. */
static void print_sizes(const struct ng_instance *in, const char *sh, const char *res, FILE *f)
{
        char shared[24], priv[24];
        const char *label = ng_engine_private_label(in->type);
        if (in->private_bytes == 0)
                return (void) fprintf(f, "  shared memory %s, %s resident", sh, res);
        bool any = in->shared_unknown || in->shared_bytes > in->private_bytes;
        ng_format_bytes_or(in->shared_bytes - in->private_bytes, in->shared_unknown, "of unknown size", shared,
                           sizeof(shared));
        ng_format_kib(in->private_bytes / 1024, priv, sizeof(priv));
        fprintf(f, "  %s%s%sprivate memory %s (%s), %s resident", any ? "shared memory " : "", any ? shared : "",
                any ? ", " : "", priv, label ? label : "large private mappings", res);
}

static void print_instance(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                           bool verbose, FILE *f)
{
        char cpus[128], cpu_nodes[128], mems[128], sh[24], res[24], pte[24], name[NG_TEXT_SIZE(sizeof(in->name))];
        _cleanup_free_ char *cgroup = in->cgroup ? ng_text_dup(NG_TEXT_TERM, in->cgroup) : NULL;
        ng_bitmap_format_list(&in->cpus, cpus, sizeof(cpus));
        ng_bitmap_format_list(&in->cpu_nodes, cpu_nodes, sizeof(cpu_nodes));
        ng_bitmap_format_list(&in->mems, mems, sizeof(mems));
        ng_format_bytes_or(in->shared_bytes, in->shared_unknown, "of unknown size", sh, sizeof(sh));
        ng_format_bytes_or(in->resident_bytes, in->resident_unknown, "unknown", res, sizeof(res));
        ng_format_kib(in->vm_pte_kib, pte, sizeof(pte));
        fprintf(f, "\ninstance %s (%s, %s, %zu process%s", ng_text_escape(NG_TEXT_TERM, in->name, name, sizeof(name)),
                in->type, origin_name(in->origin), in->n_pids,
                in->n_pids == 1 ? "" : "es");
        if (in->main_pid)
                fprintf(f, ", main pid %d", (int) in->main_pid);
        fprintf(f, ")\n  CPUs %s (node%s %s), memory allowed on node%s %s%s%s\n", cpus[0] ? cpus : "-",
                ng_bitmap_count(&in->cpu_nodes) == 1 ? "" : "s", cpu_nodes[0] ? cpu_nodes : "-",
                ng_bitmap_count(&in->mems) == 1 ? "" : "s", mems[0] ? mems : "-", in->cgroup ? ", cpuset " : "",
                !in->cgroup ? "" : cgroup ? cgroup : "(out of memory)");
        if (in->container)
                ng_report_container_text(in->container, f);
        if (in->owner)
                ng_report_owner_text(in->owner, f);
        print_sizes(in, sh, res, f);
        print_resident_sources(a, in, f);
        fprintf(f, "; page tables %s\n", pte);
        /* An unclaimed pseudo-instance is its one segment: never grouped. */
        bool group = !verbose && in->origin != NG_INST_UNCLAIMED;
        print_price(&in->price, f);
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (!group || (!is_granule(seg) && !is_small(a, seg)))
                        print_segment(s, seg, f);
        }
        if (group && print_groups(s, a, in, f) < 0)
                fprintf(f, "  (out of memory summing up the small segments)\n");
}

/* A finding's instance, segment and message carry names: escaped. */
static void print_not_evaluated(const struct ng_snapshot *s, FILE *f);

static void print_finding(const struct ng_finding *fd, FILE *f)
{
        char inst[NG_TEXT_SIZE(sizeof(fd->instance))], seg[NG_TEXT_SIZE(sizeof(fd->segment))],
                msg[NG_TEXT_SIZE(sizeof(fd->message))], adv[NG_TEXT_SIZE(sizeof(fd->advice))];
        fprintf(f, "%-8s %s", ng_severity_name(fd->severity), ng_code_name(fd->code));
        if (fd->instance[0])
                fprintf(f, " [%s]", ng_text_escape(NG_TEXT_TERM, fd->instance, inst, sizeof(inst)));
        if (fd->segment[0])
                fprintf(f, " %s", ng_text_escape(NG_TEXT_TERM, fd->segment, seg, sizeof(seg)));
        fprintf(f, "\n         %s\n         -> %s\n", ng_text_escape(NG_TEXT_TERM, fd->message, msg, sizeof(msg)),
                ng_text_escape(NG_TEXT_TERM, fd->advice, adv, sizeof(adv)));
}

int ng_report_audit_text(const struct ng_snapshot *s, const struct ng_audit *a, FILE *f)
{
        return ng_report_audit_text_flags(s, a, 0, f);
}

int ng_report_audit_text_flags(const struct ng_snapshot *s, const struct ng_audit *a, unsigned flags, FILE *f)
{
        assert(s && a && f);
        size_t c[3];
        count_severities(a, c);
        fprintf(f, "numaguard audit%s%s: %zu node%s, %zu instance%s, %zu segment%s; %zu critical, %zu warning%s, "
                "%zu info\n", s->root[0] ? " of " : "", s->root, s->topo.n_nodes, s->topo.n_nodes == 1 ? "" : "s",
                a->n_instances, a->n_instances == 1 ? "" : "s", a->n_segments, a->n_segments == 1 ? "" : "s",
                c[NG_SEV_CRITICAL], c[NG_SEV_WARNING], c[NG_SEV_WARNING] == 1 ? "" : "s", c[NG_SEV_INFO]);
        if (s->latency_error[0])
                fprintf(f, "latency matrix not usable, prices from the SLIT: %s\n", s->latency_error);
        char note[512];
        if (ng_report_memory_note(s, note, sizeof(note)))
                fprintf(f, "%s\n", note);
        for (size_t i = 0; i < a->n_instances; i++)
                print_instance(s, a, &a->instances[i], flags & NG_REPORT_VERBOSE, f);
        if (a->n_instances == 0)
                fprintf(f, "\nno database instance found\n");
        bool unlisted = false;
        for (size_t i = 0; i < s->n_unlisted; i++)
                unlisted |= s->unlisted[i].small_files || s->unlisted[i].unexamined;
        if (unlisted) {
                fputc('\n', f);
                ng_report_unlisted_text(s, f);
        }
        fprintf(f, "\n%s\n", a->n_findings ? "findings:" : "no findings");
        for (size_t i = 0; i < a->n_findings; i++)
                print_finding(&a->findings[i], f);
        if (a->n_acknowledged)
                fputc('\n', f);
        ng_report_acknowledged_text(a, f);
        print_not_evaluated(s, f);
        return ferror(f) ? -EIO : 0;
}

/* {"count", "bytes", "resident_bytes", "nodes", "names"}, or null when the
 * instance has none. */
static struct json_object *group_json(const struct ng_audit *a, const struct ng_instance *in,
                                      bool (*member)(const struct ng_audit *, const struct ng_segment *))
{
        struct group g;
        if (group_of(a, in, member, &g) < 0 || g.n == 0) {
                free(g.nodes);
                return NULL;
        }
        struct json_object *o = json_object_new_object(), *names = json_object_new_array();
        json_object_object_add(o, "count", json_object_new_uint64(g.n));
        json_object_object_add(o, "bytes", json_object_new_uint64(g.bytes));
        json_object_object_add(o, "resident_bytes", json_object_new_uint64(g.resident_bytes));
        json_object_object_add(o, "nodes", ng_node_bytes_json(g.nodes, g.n_nodes));
        for (size_t k = 0; k < in->n_segs; k++)
                if (member(a, &a->segments[in->segs[k]]))
                        json_object_array_add(names, json_object_new_string(a->segments[in->segs[k]].name));
        json_object_object_add(o, "names", names);
        free(g.nodes);
        return o;
}

static struct json_object *num_json(double v)
{
        return isnan(v) || isinf(v) ? NULL : json_object_new_double(v);
}

/* The price fields of an instance (numaguardctl(1), JSON OUTPUT). */
static void price_json(struct json_object *o, const struct ng_price *p)
{
        /* In ns and MB/s from a probe or the HMAT; SLIT units are no ns. */
        bool m = p->source == NG_PRICE_MEASURED || p->source == NG_PRICE_HMAT, any = p->source != NG_PRICE_NONE;
        struct json_object *cpu = json_object_new_array();
        for (size_t i = 0; i < p->n_cpu_share; i++) {
                struct json_object *e = json_object_new_object();
                json_object_object_add(e, "node", json_object_new_int(p->cpu_share[i].node));
                json_object_object_add(e, "share", json_object_new_double(p->cpu_share[i].share));
                json_object_array_add(cpu, e);
        }
        json_object_object_add(o, "price_source", json_object_new_string(ng_price_source_name(p->source)));
        json_object_object_add(o, "cpu_share_by_node", cpu);
        json_object_object_add(o, "cpu_share_measured", json_object_new_boolean(p->cpu_share_measured));
        json_object_object_add(o, "remote_access_ratio", any ? num_json(p->remote_access_ratio) : NULL);
        json_object_object_add(o, "expected_latency_ns", m ? num_json(p->expected_latency) : NULL);
        json_object_object_add(o, "interleaved_latency_ns", m ? num_json(p->interleaved_latency) : NULL);
        json_object_object_add(o, "local_latency_ns", m ? num_json(p->local_latency) : NULL);
        json_object_object_add(o, "bandwidth_ceiling_mbps", m ? num_json(p->bandwidth_ceiling) : NULL);
        json_object_object_add(o, "interleaved_bandwidth_ceiling_mbps",
                               m ? num_json(p->interleaved_bandwidth_ceiling) : NULL);
        json_object_object_add(o, "latency_vs_local", any ? num_json(p->expected_latency / p->local_latency) : NULL);
        json_object_object_add(o, "bandwidth_ceiling_nodes", any ? num_json(ng_price_ceiling_nodes(p)) : NULL);
        json_object_object_add(o, "interleave_nodes", json_object_new_int((int) p->interleave_nodes));
}

static struct json_object *instance_json(const struct ng_audit *a, const struct ng_instance *in)
{
        struct json_object *o = json_object_new_object(), *pids = json_object_new_array(),
                           *segs = json_object_new_array();
        json_object_object_add(o, "name", json_object_new_string(in->name));
        json_object_object_add(o, "type", json_object_new_string(in->type));
        json_object_object_add(o, "origin", json_object_new_string(origin_name(in->origin)));
        json_object_object_add(o, "main_pid", json_object_new_int(in->main_pid));
        for (size_t k = 0; k < in->n_pids; k++)
                json_object_array_add(pids, json_object_new_int(in->pids[k]));
        json_object_object_add(o, "pids", pids);
        json_object_object_add(o, "cpus", ng_bitmap_json_list(&in->cpus));
        json_object_object_add(o, "cpu_nodes", ng_bitmap_json_list(&in->cpu_nodes));
        json_object_object_add(o, "mems", ng_bitmap_json_list(&in->mems));
        json_object_object_add(o, "cgroup", in->cgroup ? json_object_new_string(in->cgroup) : NULL);
        if (in->container)
                json_object_object_add(o, "container", ng_report_container_json(in->container));
        json_object_object_add(o, "cpuset_owner",
                               json_object_new_string(ng_owner_kind_name(in->owner ? in->owner->kind : NG_OWNER_NONE)));
        json_object_object_add(o, "cpuset_owner_name", in->owner && in->owner->name[0] ?
                                                               json_object_new_string(in->owner->name) : NULL);
        json_object_object_add(o, "shared_bytes", in->shared_unknown ? NULL : json_object_new_uint64(in->shared_bytes));
        json_object_object_add(o, "resident_bytes",
                               in->resident_unknown ? NULL : json_object_new_uint64(in->resident_bytes));
        uint64_t by[NG_SOURCE_COUNT_];
        struct json_object *src = json_object_new_object();
        ng_segments_resident_by_source(a->segments, in->segs, in->n_segs, by);
        for (enum ng_source k = NG_SOURCE_NONE; k < NG_SOURCE_COUNT_; k++)
                if (k != NG_SOURCE_COUNTER)     /* a counter places nothing */
                        json_object_object_add(src, ng_source_name(k), json_object_new_uint64(by[k]));
        json_object_object_add(o, "resident_bytes_by_placement_source", src);
        json_object_object_add(o, "page_tables_kib", json_object_new_uint64(in->vm_pte_kib));
        json_object_object_add(o, "hugetlb_kib", json_object_new_uint64(in->hugetlb_kib));
        json_object_object_add(o, "nodes", ng_node_bytes_json(in->nodes, in->n_nodes));
        price_json(o, &in->price);
        for (size_t k = 0; k < in->n_segs; k++)
                json_object_array_add(segs, ng_segment_json(&a->segments[in->segs[k]]));
        json_object_object_add(o, "segments", segs);
        if (in->origin != NG_INST_UNCLAIMED) {
                json_object_object_add(o, "amm_sga", group_json(a, in, granule_member));
                json_object_object_add(o, "small_segments", group_json(a, in, is_small));
        }
        return o;
}

struct json_object *ng_finding_json(const struct ng_finding *fd)
{
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "code", json_object_new_string(ng_code_name(fd->code)));
        json_object_object_add(o, "severity", json_object_new_string(ng_severity_name(fd->severity)));
        json_object_object_add(o, "instance", json_object_new_string(fd->instance));
        json_object_object_add(o, "segment", json_object_new_string(fd->segment));
        json_object_object_add(o, "nodes", ng_bitmap_json_ids(&fd->nodes));
        json_object_object_add(o, "message", json_object_new_string(fd->message));
        json_object_object_add(o, "advice", json_object_new_string(fd->advice));
        json_object_object_add(o, "value", json_object_new_double(fd->value));
        int feat = ng_code_kernel_feature(fd->code);
        json_object_object_add(o, "kernel_feature", feat < 0 ? NULL : json_object_new_string(ng_feature_name(feat)));
        return ng_json_utf8(o);
}

/* The feature this kernel lacks that code c's rule needs, -1 for none. */
static int missing_feature(const struct ng_snapshot *s, enum ng_code c)
{
        int feat = ng_code_kernel_feature(c);
        return feat >= 0 && ng_code_needs_feature(c) && s->topo.features[feat].state == NG_FEATURE_ABSENT ? feat : -1;
}

/* The codes whose rule needs a kernel feature this kernel does not have. */
static struct json_object *not_evaluated_json(const struct ng_snapshot *s)
{
        struct json_object *arr = json_object_new_array();
        for (int c = 0; c < NG_CODE_MAX_; c++) {
                int feat = missing_feature(s, c);
                if (feat < 0)
                        continue;
                struct json_object *e = json_object_new_object();
                json_object_object_add(e, "code", json_object_new_string(ng_code_name(c)));
                json_object_object_add(e, "kernel_feature", json_object_new_string(ng_feature_name(feat)));
                json_object_array_add(arr, e);
        }
        return arr;
}

static void print_not_evaluated(const struct ng_snapshot *s, FILE *f)
{
        bool any = false;
        for (int c = 0; c < NG_CODE_MAX_; c++) {
                int feat = missing_feature(s, c);
                if (feat < 0)
                        continue;
                fprintf(f, "%s%s (kernel feature %s absent)", any ? ", " : "\nnot raised on this kernel: ",
                        ng_code_name(c), ng_feature_name(feat));
                any = true;
        }
        if (any)
                fputc('\n', f);
}

static struct json_object *cost_json(const struct ng_snapshot *s)
{
        static const char *const placement[] = { "auto", "counters", "sampled", "exact" };
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "placement", json_object_new_string(placement[s->placement]));
        json_object_object_add(o, "wall_usec", json_object_new_uint64(s->cost.wall_usec));
        json_object_object_add(o, "cpu_usec", json_object_new_uint64(s->cost.cpu_usec));
        json_object_object_add(o, "files_read", json_object_new_uint64(s->cost.files_read));
        json_object_object_add(o, "bytes_read", json_object_new_uint64(s->cost.bytes_read));
        json_object_object_add(o, "procs_scanned", json_object_new_uint64(s->cost.procs_scanned));
        json_object_object_add(o, "numa_maps_read", json_object_new_uint64(s->cost.numa_maps_read));
        json_object_object_add(o, "pages_sampled", json_object_new_uint64(s->cost.pages_sampled));
        return o;
}

struct json_object *ng_report_audit_json(const struct ng_snapshot *s, const struct ng_audit *a)
{
        struct json_object *o = json_object_new_object(), *insts = json_object_new_array(),
                           *segs = json_object_new_array(), *finds = json_object_new_array(),
                           *summary = json_object_new_object();
        size_t c[3];
        json_object_object_add(o, "schema", json_object_new_int(NG_JSON_SCHEMA));
        json_object_object_add(o, "topology", ng_report_topology_json(s));
        for (size_t i = 0; i < a->n_instances; i++)
                json_object_array_add(insts, instance_json(a, &a->instances[i]));
        json_object_object_add(o, "instances", insts);
        for (size_t i = 0; i < a->n_segments; i++)
                if (a->segments[i].kind != NG_SEG_PRIVATE)
                        json_object_array_add(segs, ng_segment_json(&a->segments[i]));
        json_object_object_add(o, "segments", segs);
        json_object_object_add(o, "unlisted_files", ng_report_unlisted_json(s));
        for (size_t i = 0; i < a->n_findings; i++)
                json_object_array_add(finds, ng_finding_json(&a->findings[i]));
        json_object_object_add(o, "findings", finds);
        json_object_object_add(o, "acknowledged_unreadable", ng_report_acknowledged_json(a));
        count_severities(a, c);
        json_object_object_add(summary, "critical", json_object_new_int((int) c[NG_SEV_CRITICAL]));
        json_object_object_add(summary, "warning", json_object_new_int((int) c[NG_SEV_WARNING]));
        json_object_object_add(summary, "info", json_object_new_int((int) c[NG_SEV_INFO]));
        json_object_object_add(summary, "exit_status", json_object_new_int(ng_audit_exit_status(a)));
        json_object_object_add(summary, "acknowledged_unreadable", json_object_new_uint64(a->n_acknowledged));
        json_object_object_add(summary, "not_evaluated", not_evaluated_json(s));
        json_object_object_add(o, "summary", summary);
        json_object_object_add(o, "cost", cost_json(s));
        return ng_json_utf8(o);
}

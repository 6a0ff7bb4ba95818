/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `numaguardctl topology`: nodes, CPUs, memory, hugepage pools, distances. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ng-latency.h"
#include "ng-report.h"
#include "text.h"
#include "util.h"
#include "bitmap-json.h"
#include "cleanup-json.h"

static void max_distances(const struct ng_snapshot *s, uint64_t *ret_local, uint64_t *ret_max)
{
        uint64_t local = 10, max = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                for (size_t j = 0; j < nd->n_distance; j++) {
                        if (j == i)
                                local = nd->distance[j];
                        else if (nd->distance[j] > max)
                                max = nd->distance[j];
                }
        }
        *ret_local = local;
        *ret_max = max;
}

enum ng_distance_class ng_distance_class(const struct ng_snapshot *s, int from, int to)
{
        int d = ng_snapshot_distance(s, from, to);
        uint64_t local, max;
        max_distances(s, &local, &max);
        if (from == to || d < 0 || (uint64_t) d <= local)
                return NG_DIST_LOCAL;
        return (uint64_t) d <= local + (max - local) / 2 ? NG_DIST_NEAR : NG_DIST_FAR;
}

const char *ng_distance_class_name(enum ng_distance_class c)
{
        static const char *const names[] = {
                [NG_DIST_LOCAL] = "local",
                [NG_DIST_NEAR] = "near",
                [NG_DIST_FAR] = "far",
        };
        return NG_NAME(names, c, "unknown");
}

/* The union of page sizes over the host, ascending. */
static size_t page_sizes(const struct ng_snapshot *s, uint64_t *sizes)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n_pools; i++)
                sizes[n++] = s->pools[i].page_kib;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                for (size_t j = 0; j < s->topo.nodes[i].n_pools; j++) {
                        uint64_t kib = s->topo.nodes[i].pools[j].page_kib;
                        size_t k = 0;
                        while (k < n && sizes[k] != kib)
                                k++;
                        if (k == n && n < NG_MAX_HUGE_SIZES)
                                sizes[n++] = kib;
                }
        return n;
}

static void format_known_kib(struct ng_known_u64 bytes, char *buf, size_t size)
{
        if (bytes.known)
                ng_format_kib(bytes.v / 1024, buf, size);
        else
                snprintf(buf, size, "unknown");
}

static void print_node_rows(const struct ng_snapshot *s, FILE *f, const uint64_t *sizes, size_t n_sizes)
{
        fprintf(f, "node  %-14s %10s %10s", "cpus", "memory", "free");
        for (size_t k = 0; k < n_sizes; k++) {
                char l[32];
                ng_format_page_size(sizes[k], l, sizeof(l));
                fprintf(f, " %4s pages total/free/surplus", l);
        }
        fputc('\n', f);
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                char cpus[64], tot[24], fr[24];
                if (ng_bitmap_format_list(&nd->cpus, cpus, sizeof(cpus)) >= (int) sizeof(cpus))
                        strcpy(cpus + sizeof(cpus) - 4, "...");
                struct ng_node_supply sup;
                ng_node_supply(nd, 0, 0, &sup);
                format_known_kib(sup.total_bytes, tot, sizeof(tot));
                format_known_kib(sup.free_bytes, fr, sizeof(fr));
                fprintf(f, "%4d  %-14s %10s %10s", nd->id, ng_bitmap_empty(&nd->cpus) ? "- (memory only)" : cpus, tot, fr);
                for (size_t k = 0; k < n_sizes; k++) {
                        const struct ng_hugepool *hp = ng_node_pool(nd, sizes[k]);
                        char pool[72] = "-";
                        if (hp && hp->unknown)
                                snprintf(pool, sizeof(pool), "unknown");
                        else if (hp)
                                snprintf(pool, sizeof(pool), "%" PRIu64 "/%" PRIu64 "/%" PRIu64, hp->nr_pages,
                                         hp->free_pages, hp->surplus_pages);
                        fprintf(f, " %25s", pool);
                }
                fputc('\n', f);
        }
}

/* ShmemHugePages of each node (shmem in PMD-size transparent hugepages;
 * ShmemPmdMapped of it mapped by PMD), one line: nodes with none are
 * summed up, nodes whose meminfo lacks the line are unknown. */
static void print_shmem_thp(const struct ng_snapshot *s, FILE *f)
{
        char list[512] = "", unknown[128] = "";
        size_t o = 0, u = 0, zero = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                struct ng_known_u64 hb = ng_meminfo_bytes(s, nd, "ShmemHugePages");
                struct ng_known_u64 mb = ng_meminfo_bytes(s, nd, "ShmemPmdMapped");
                uint64_t huge = hb.v / 1024;
                if (!hb.known) {
                        if (u < sizeof(unknown)) {
                                int n = snprintf(unknown + u, sizeof(unknown) - u, "%s%d", u ? "," : "", nd->id);
                                u += n > 0 ? (size_t) n : 0;
                        }
                        continue;
                }
                if (!huge) {
                        zero++;
                        continue;
                }
                char h[24], m[24] = "unknown";
                ng_format_kib(huge, h, sizeof(h));
                if (mb.known)
                        ng_format_kib(mb.v / 1024, m, sizeof(m));
                if (o < sizeof(list)) {
                        int n = snprintf(list + o, sizeof(list) - o, "%snode %d %s (%s PMD-mapped)", o ? ", " : "",
                                         nd->id, h, m);
                        o += n > 0 ? (size_t) n : 0;
                }
        }
        if (!s->topo.n_nodes)
                return;
        if (o >= sizeof(list))
                strcpy(list + sizeof(list) - 4, "...");
        if (u >= sizeof(unknown))
                strcpy(unknown + sizeof(unknown) - 4, "...");
        fprintf(f, "shmem in transparent hugepages (ShmemHugePages): %s%s%s%s%s%s\n", list, u && o ? "; " : "",
                u ? "unknown on node" : "", u ? (strchr(unknown, ',') ? "s " : " ") : "", u ? unknown : "",
                !zero ? "" : o || u ? "; none on the others" : "none on any node");
}

static void print_distances(const struct ng_snapshot *s, FILE *f)
{
        fprintf(f, "\nnode distances:\nnode ");
        for (size_t j = 0; j < s->topo.n_nodes; j++)
                fprintf(f, " %3d", s->topo.nodes[j].id);
        fputc('\n', f);
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                fprintf(f, "%3d: ", nd->id);
                for (size_t j = 0; j < s->topo.n_nodes; j++) {
                        if (j < nd->n_distance)
                                fprintf(f, " %3" PRIu64, nd->distance[j]);
                        else
                                fprintf(f, " %3s", "?");
                }
                fputc('\n', f);
        }
        /* One line per class with the distinct distances in it. */
        for (int c = NG_DIST_LOCAL; c <= NG_DIST_FAR; c++) {
                uint64_t seen[16];
                size_t n = 0;
                for (size_t i = 0; i < s->topo.n_nodes; i++)
                        for (size_t j = 0; j < s->topo.n_nodes && j < s->topo.nodes[i].n_distance; j++) {
                                uint64_t d = s->topo.nodes[i].distance[j];
                                if ((int) ng_distance_class(s, s->topo.nodes[i].id, s->topo.nodes[j].id) != c)
                                        continue;
                                size_t k = 0;
                                while (k < n && seen[k] != d)
                                        k++;
                                if (k == n && n < 16)
                                        seen[n++] = d;
                        }
                if (n == 0)
                        continue;
                fprintf(f, "%s %s", c == NG_DIST_LOCAL ? "distance classes:" : ";", ng_distance_class_name(c));
                for (size_t k = 0; k < n; k++)
                        fprintf(f, "%s%" PRIu64, k ? "," : " ", seen[k]);
        }
        fputc('\n', f);
}

/* Sockets split into nodes (sub-NUMA clustering), one line for all. */
static void print_sockets(const struct ng_snapshot *s, FILE *f)
{
        bool any = false;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                struct ng_bitmap same = {0};
                bool first = true;
                for (size_t j = 0; j < s->topo.n_nodes; j++) {
                        const struct ng_node *o = &s->topo.nodes[j];
                        if (nd->package_id < 0 || o->package_id != nd->package_id)
                                continue;
                        first = first && j >= i;
                        ng_bitmap_set(&same, (unsigned) o->id);
                }
                if (!first || ng_bitmap_count(&same) < 2)
                        continue;
                char l[128];
                ng_bitmap_format_list(&same, l, sizeof(l));
                fprintf(f, "%s socket %d: nodes %s", any ? ";" : "sub-NUMA clusters:", nd->package_id, l);
                any = true;
        }
        if (any)
                fputc('\n', f);
}

static void print_tiers(const struct ng_snapshot *s, FILE *f)
{
        if (s->topo.n_tiers == 0)
                return;
        fprintf(f, "memory tiers (a higher tier is slower memory):");
        for (size_t k = 0; k < s->topo.n_tiers; k++) {
                char l[128];
                ng_bitmap_format_list(&s->topo.tiers[k].nodes, l, sizeof(l));
                fprintf(f, "%s tier %d: nodes %s", k ? ";" : "", s->topo.tiers[k].id, l);
        }
        fprintf(f, "; demotion to a slower tier %s\n", s->topo.demotion_enabled < 0 ? "unknown"
                : s->topo.demotion_enabled ? "on" : "off");
}

/* "300" or "-" for a figure the firmware did not give. */
static const char *figure(int64_t v, char *buf, size_t size)
{
        if (v < 0)
                return "-";
        snprintf(buf, size, "%" PRId64, v);
        return buf;
}

static const char *cache_word(int64_t v, const char *const *words, size_t n)
{
        return v >= 0 && (uint64_t) v < n ? words[v] : "unknown";
}

static void print_caches(const struct ng_node *nd, FILE *f)
{
        static const char *const indexing[] = { "direct-mapped", "indexed", "other indexing" };
        static const char *const policy[] = { "write-back", "write-through", "other write policy" };
        for (size_t k = 0; k < nd->n_caches; k++) {
                const struct ng_mem_cache *mc = &nd->caches[k];
                char size[24] = "unknown", line[24];
                if (mc->size_bytes >= 0)
                        ng_format_kib((uint64_t) mc->size_bytes / 1024, size, sizeof(size));
                fprintf(f, "memory-side cache of node %d, level %u: %s, line %s bytes, %s, %s\n", nd->id, mc->level,
                        size, figure(mc->line_size_bytes, line, sizeof(line)), cache_word(mc->indexing, indexing, 3),
                        cache_word(mc->write_policy, policy, 3));
        }
}

/* "0->2 20, 1->2 21": the SLIT distance from each initiator. */
static void initiator_slit(const struct ng_snapshot *s, const struct ng_hmat_access *a, int node, char *buf,
                           size_t size)
{
        size_t o = 0;
        buf[0] = '\0';
        NG_BITMAP_FOREACH(id, &a->initiators) {
                int d = ng_snapshot_distance(s, id, node), n;
                if (d >= 0)
                        n = snprintf(buf + o, size - o, "%s%d->%d %d", o ? ", " : "", id, node, d);
                else
                        n = snprintf(buf + o, size - o, "%s%d->%d ?", o ? ", " : "", id, node);
                if (n < 0 || (size_t) n >= size - o) {
                        strcpy(buf + size - 4, "...");
                        return;
                }
                o += (size_t) n;
        }
        if (o == 0)
                snprintf(buf, size, "-");
}

/* The firmware's HMAT beside the SLIT: each memory node's figures from its
 * best initiators, the only ones the kernel exports. */
static void print_hmat(const struct ng_snapshot *s, FILE *f)
{
        if (!ng_snapshot_has_hmat(s))
                return;
        fprintf(f, "\nfirmware HMAT, from each memory node's best initiators (access1: CPUs; access0: any), "
                "beside the SLIT:\n");
        fprintf(f, "node  access  %-12s %12s %12s %14s %14s  %s\n", "initiators", "read ns", "write ns",
                "read MB/s", "write MB/s", "SLIT");
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                for (unsigned k = 0; k < NG_HMAT_ACCESS_CLASSES; k++) {
                        const struct ng_hmat_access *a = &nd->access[k];
                        if (!a->present)
                                continue;
                        char init[64], b[4][24], slit[64] = "";
                        if (ng_bitmap_format_list(&a->initiators, init, sizeof(init)) >= (int) sizeof(init))
                                strcpy(init + sizeof(init) - 4, "...");
                        initiator_slit(s, a, nd->id, slit, sizeof(slit));
                        fprintf(f, "%4d  %6u  %-12s %12s %12s %14s %14s  %s\n", nd->id, k,
                                ng_bitmap_empty(&a->initiators) ? "-" : init, figure(a->read_latency_ns, b[0], sizeof(b[0])),
                                figure(a->write_latency_ns, b[1], sizeof(b[1])),
                                figure(a->read_bandwidth_mbps, b[2], sizeof(b[2])),
                                figure(a->write_bandwidth_mbps, b[3], sizeof(b[3])), slit);
                }
        }
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                print_caches(&s->topo.nodes[i], f);
}

static void print_matrix(const struct ng_snapshot *s, const struct ng_latency *m, bool bw, FILE *f)
{
        fprintf(f, "%s, beside the SLIT distance (rows: CPU node, columns: memory node)\n",
                bw ? "read bandwidth in MB/s" : "latency in ns");
        fprintf(f, "%8s", "");
        for (size_t c = 0; c < m->n_nodes; c++)
                fprintf(f, " %14d", m->nodes[c]);
        fputc('\n', f);
        for (size_t r = 0; r < m->n_cpu_nodes; r++) {
                fprintf(f, "%8d", m->cpu_nodes[r]);
                for (size_t c = 0; c < m->n_nodes; c++) {
                        double v = (bw ? m->bandwidth_mbps : m->latency_ns)[r * m->n_nodes + c];
                        int d = ng_snapshot_distance(s, m->cpu_nodes[r], m->nodes[c]);
                        char cell[48], slit[16] = "(?)";
                        if (d >= 0)
                                snprintf(slit, sizeof(slit), "(%d)", d);
                        if (isnan(v))
                                snprintf(cell, sizeof(cell), "- %s", slit);
                        else
                                snprintf(cell, sizeof(cell), bw ? "%.0f %s" : "%.1f %s", v, slit);
                        fprintf(f, " %14s", cell);
                }
                fputc('\n', f);
        }
}

int ng_report_latency_text(const struct ng_snapshot *s, const struct ng_latency *m, FILE *f)
{
        print_matrix(s, m, false, f);
        fputc('\n', f);
        print_matrix(s, m, true, f);
        return ferror(f) ? -EIO : 0;
}

/* What the kernel offers, as probed (numaguardctl(1), KERNEL FEATURES). */
static void print_features(const struct ng_snapshot *s, FILE *f)
{
        fprintf(f, "\nkernel features (probed):\n");
        for (int i = 0; i < NG_FEATURE_MAX_; i++) {
                const struct ng_feature_probe *fp = &s->topo.features[i];
                fprintf(f, "  %-23s %-8s %s\n", ng_feature_name(i), ng_feature_state_name(fp->state),
                        fp->detail[0] ? fp->detail : "not probed");
        }
}

const char *ng_report_memory_note(const struct ng_snapshot *s, char *buf, size_t size)
{
        assert(s && buf);
        struct ng_known_u64 nodes, host;
        if (!ng_host_memory_split(s, &nodes, &host))
                return NULL;
        char n[24], h[24];
        ng_format_kib(nodes.v / 1024, n, sizeof(n));
        ng_format_kib(host.v / 1024, h, sizeof(h));
        snprintf(buf, size, "memory: the nodes' MemTotal add up to %s, %.0f%% of /proc/meminfo's MemTotal of %s: "
                 "the nodes do not show the host's memory as it counts it (a virtual machine, a balloon driver); a "
                 "node's figures are of its own MemTotal, the host's of /proc/meminfo's", n,
                 (double) nodes.v * 100 / (double) host.v, h);
        return buf;
}

int ng_report_topology_text(const struct ng_snapshot *s, FILE *f)
{
        assert(s && f);
        char online[256], cpus[256];
        uint64_t sizes[NG_MAX_HUGE_SIZES];
        size_t n_sizes = page_sizes(s, sizes);

        ng_bitmap_format_list(&s->topo.online, online, sizeof(online));
        ng_bitmap_format_list(&s->topo.cpus_online, cpus, sizeof(cpus));
        fprintf(f, "%zu node%s online (%s), %u CPU%s online (%s)%s\n", s->topo.n_nodes,
                s->topo.n_nodes == 1 ? "" : "s", online, ng_bitmap_count(&s->topo.cpus_online),
                ng_bitmap_count(&s->topo.cpus_online) == 1 ? "" : "s", cpus,
                s->topo.numa_sysfs ? "" : " [kernel without NUMA sysfs]");
        print_node_rows(s, f, sizes, n_sizes);
        print_shmem_thp(s, f);
        char note[512];
        if (ng_report_memory_note(s, note, sizeof(note)))
                fprintf(f, "%s\n", note);
        print_distances(s, f);
        print_sockets(s, f);
        print_tiers(s, f);
        print_hmat(s, f);
        if (s->latency) {
                fprintf(f, "\nmeasured by numaguardctl probe at %s:\n", s->latency->measured_at);
                ng_report_latency_text(s, s->latency, f);
        } else if (s->latency_error[0])
                fprintf(f, "\nlatency matrix not usable: %s\n", s->latency_error);

        for (size_t i = 0; i < s->n_pools; i++) {
                const struct ng_hugepool *hp = &s->pools[i];
                char l[32];
                ng_format_page_size(hp->page_kib, l, sizeof(l));
                if (hp->unknown)
                        fprintf(f, "%s%s hugepages: unknown\n", i ? "" : "\n", l);
                else
                        fprintf(f, "%s %s hugepages: total %" PRIu64 ", free %" PRIu64 ", reserved %" PRIu64
                                ", surplus %" PRIu64 ", overcommit %" PRIu64 "\n", i ? "" : "\n", l, hp->nr_pages,
                                hp->free_pages, hp->resv_pages, hp->surplus_pages, hp->overcommit_pages);
        }
        print_features(s, f);
        return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

static struct json_object *json_u64(uint64_t v)
{
        return json_object_new_uint64(v);
}

/* A pool's counter: null when the pool is unknown. */
static struct json_object *json_count(const struct ng_hugepool *hp, uint64_t v)
{
        return hp->unknown ? NULL : json_u64(v);
}

static struct json_object *pool_json(const struct ng_hugepool *hp, bool global)
{
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "page_kib", json_u64(hp->page_kib));
        json_object_object_add(o, "total", json_count(hp, hp->nr_pages));
        json_object_object_add(o, "free", json_count(hp, hp->free_pages));
        json_object_object_add(o, "surplus", json_count(hp, hp->surplus_pages));
        if (global) {
                json_object_object_add(o, "reserved", json_count(hp, hp->resv_pages));
                json_object_object_add(o, "overcommit", json_count(hp, hp->overcommit_pages));
        }
        return o;
}

/* A meminfo field in KiB: null when unknown (no usable meminfo, or no such
 * line). */
static struct json_object *json_meminfo(const struct ng_snapshot *s, const struct ng_node *nd, const char *key)
{
        struct ng_known_u64 b = ng_meminfo_bytes(s, nd, key);
        return b.known ? json_u64(b.v / 1024) : NULL;
}

/* A figure in JSON: null when the firmware did not give it. */
static struct json_object *json_figure(int64_t v)
{
        return v < 0 ? NULL : json_object_new_int64(v);
}

/* "hmat": {"access0": {...}, "access1": {...}, "memory_side_caches": [...]},
 * only for a node the kernel exports some of it for. */
static struct json_object *hmat_json(const struct ng_node *nd)
{
        struct json_object *o = json_object_new_object();
        for (unsigned k = 0; k < NG_HMAT_ACCESS_CLASSES; k++) {
                const struct ng_hmat_access *a = &nd->access[k];
                char key[16];
                snprintf(key, sizeof(key), "access%u", k);
                if (!a->present) {
                        json_object_object_add(o, key, NULL);
                        continue;
                }
                struct json_object *e = json_object_new_object();
                json_object_object_add(e, "initiators", ng_bitmap_json_list(&a->initiators));
                json_object_object_add(e, "read_latency_ns", json_figure(a->read_latency_ns));
                json_object_object_add(e, "write_latency_ns", json_figure(a->write_latency_ns));
                json_object_object_add(e, "read_bandwidth_mbps", json_figure(a->read_bandwidth_mbps));
                json_object_object_add(e, "write_bandwidth_mbps", json_figure(a->write_bandwidth_mbps));
                json_object_object_add(o, key, e);
        }
        struct json_object *caches = json_object_new_array();
        for (size_t k = 0; k < nd->n_caches; k++) {
                const struct ng_mem_cache *mc = &nd->caches[k];
                struct json_object *e = json_object_new_object();
                json_object_object_add(e, "level", json_object_new_int((int) mc->level));
                json_object_object_add(e, "size_bytes", json_figure(mc->size_bytes));
                json_object_object_add(e, "line_size_bytes", json_figure(mc->line_size_bytes));
                json_object_object_add(e, "indexing", json_figure(mc->indexing));
                json_object_object_add(e, "write_policy", json_figure(mc->write_policy));
                json_object_array_add(caches, e);
        }
        json_object_object_add(o, "memory_side_caches", caches);
        return o;
}

static struct json_object *node_json(const struct ng_snapshot *s, const struct ng_node *nd)
{
        struct json_object *o = json_object_new_object(), *pools = json_object_new_array(),
                           *dist = json_object_new_array(), *cls = json_object_new_array();
        json_object_object_add(o, "id", json_object_new_int(nd->id));
        json_object_object_add(o, "cpus", ng_bitmap_json_list(&nd->cpus));
        json_object_object_add(o, "cpu_count", json_object_new_int((int) ng_bitmap_count(&nd->cpus)));
        json_object_object_add(o, "memory_only", json_object_new_boolean(ng_bitmap_empty(&nd->cpus)));
        json_object_object_add(o, "has_memory", json_object_new_boolean(nd->has_memory));
        struct ng_node_supply sup;
        ng_node_supply(nd, 0, 0, &sup);
        json_object_object_add(o, "mem_total_kib", sup.total_bytes.known ? json_u64(sup.total_bytes.v / 1024) : NULL);
        json_object_object_add(o, "mem_free_kib", sup.free_bytes.known ? json_u64(sup.free_bytes.v / 1024) : NULL);
        static const struct {
                const char *json, *key;
        } mem[] = {
                { "mem_used_kib", "MemUsed" }, { "file_pages_kib", "FilePages" }, { "shmem_kib", "Shmem" },
                { "page_tables_kib", "PageTables" }, { "anon_huge_kib", "AnonHugePages" },
                { "shmem_huge_kib", "ShmemHugePages" }, { "shmem_pmd_mapped_kib", "ShmemPmdMapped" },
        };
        for (size_t i = 0; i < ELEMENTSOF(mem); i++)
                json_object_object_add(o, mem[i].json, json_meminfo(s, nd, mem[i].key));
        for (size_t i = 0; i < nd->n_pools; i++)
                json_object_array_add(pools, pool_json(&nd->pools[i], false));
        json_object_object_add(o, "hugepages", pools);
        for (size_t j = 0; j < nd->n_distance; j++) {
                json_object_array_add(dist, json_u64(nd->distance[j]));
                if (j < s->topo.n_nodes)
                        json_object_array_add(cls, json_object_new_string(
                                ng_distance_class_name(ng_distance_class(s, nd->id, s->topo.nodes[j].id))));
        }
        json_object_object_add(o, "distances", dist);
        json_object_object_add(o, "distance_classes", cls);
        json_object_object_add(o, "package_id", nd->package_id >= 0 ? json_object_new_int(nd->package_id) : NULL);
        json_object_object_add(o, "memory_tier", nd->tier >= 0 ? json_object_new_int(nd->tier) : NULL);
        if (nd->access[0].present || nd->access[1].present || nd->n_caches)
                json_object_object_add(o, "hmat", hmat_json(nd));
        return o;
}

struct json_object *ng_report_topology_json(const struct ng_snapshot *s)
{
        _cleanup_json_ struct json_object *o = json_object_new_object(), *nodes = json_object_new_array(),
                                          *pools = json_object_new_array();
        if (!o || !nodes || !pools)
                return NULL;
        json_object_object_add(o, "schema", json_object_new_int(NG_JSON_SCHEMA));
        json_object_object_add(o, "numa_sysfs", json_object_new_boolean(s->topo.numa_sysfs));
        json_object_object_add(o, "nodes_online", ng_bitmap_json_list(&s->topo.online));
        json_object_object_add(o, "nodes_possible", ng_bitmap_json_list(&s->topo.possible));
        json_object_object_add(o, "cpus_online", ng_bitmap_json_list(&s->topo.cpus_online));
        struct ng_known_u64 total, free_b;
        ng_host_memory(s, &total, &free_b);
        json_object_object_add(o, "mem_total_kib", total.known ? json_u64(total.v / 1024) : NULL);
        json_object_object_add(o, "mem_free_kib", free_b.known ? json_u64(free_b.v / 1024) : NULL);
        struct ng_known_u64 nodes_total, host_total;
        bool split = ng_host_memory_split(s, &nodes_total, &host_total);
        json_object_object_add(o, "nodes_mem_total_kib", nodes_total.known ? json_u64(nodes_total.v / 1024) : NULL);
        json_object_object_add(o, "mem_totals_differ", nodes_total.known && host_total.known ?
                               json_object_new_boolean(split) : NULL);
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                json_object_array_add(nodes, node_json(s, &s->topo.nodes[i]));
        json_object_object_add(o, "nodes", ng_steal_ptr(&nodes));
        for (size_t i = 0; i < s->n_pools; i++)
                json_object_array_add(pools, pool_json(&s->pools[i], true));
        json_object_object_add(o, "hugepages", ng_steal_ptr(&pools));
        struct json_object *tiers = json_object_new_array();
        for (size_t k = 0; k < s->topo.n_tiers; k++) {
                struct json_object *e = json_object_new_object();
                json_object_object_add(e, "id", json_object_new_int(s->topo.tiers[k].id));
                json_object_object_add(e, "nodes", ng_bitmap_json_list(&s->topo.tiers[k].nodes));
                json_object_array_add(tiers, e);
        }
        json_object_object_add(o, "memory_tiers", tiers);
        json_object_object_add(o, "demotion_enabled", s->topo.demotion_enabled < 0 ? NULL
                               : json_object_new_boolean(s->topo.demotion_enabled));
        struct json_object *features = json_object_new_object();
        for (int i = 0; i < NG_FEATURE_MAX_; i++) {
                struct json_object *e = json_object_new_object();
                json_object_object_add(e, "state",
                                       json_object_new_string(ng_feature_state_name(s->topo.features[i].state)));
                json_object_object_add(e, "detail", json_object_new_string(s->topo.features[i].detail));
                json_object_object_add(features, ng_feature_name(i), e);
        }
        json_object_object_add(o, "kernel_features", features);
        /* Only when numaguardctl probe saved one (or tried to). */
        if (s->latency)
                json_object_object_add(o, "latency", ng_latency_json(s->latency));
        if (s->latency_error[0])
                json_object_object_add(o, "latency_error", json_object_new_string(s->latency_error));
        return ng_json_utf8(ng_steal_ptr(&o));
}

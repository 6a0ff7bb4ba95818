/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: the nodes, their memory, CPUs, distances and huge page pools,
 * and the kernel's NUMA knobs. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "host-internal.h"
#include "parse.h"
#include "ng-snapshot.h"
#include "units.h"
#include "util.h"

static int pool_cmp(const void *a, const void *b)
{
        const struct ng_hugepool *x = a, *y = b;
        return (x->page_kib > y->page_kib) - (x->page_kib < y->page_kib);
}

/* One counter of a pool: 1 read, 0 absent (where that may be), -1 missing
 * or not a number, with a problem naming the file. */
static int read_counter(struct collector *c, const char *dir, const char *name, const char *file, bool must,
                        uint64_t *ret)
{
        char path[256], *buf;
        snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file);
        int r = ng_collect_read(c, &buf, NULL, "%s", path);
        if (r == -ENOENT && !must)
                return 0;
        if (r < 0) {
                ng_collect_problem(c, path, "%s: the %s pool is unknown", r == -ENOENT ? "missing" : strerror(-r),
                                   name);
                return -1;
        }
        r = ng_parse_u64_full(buf, ret);
        if (r < 0) {
                char shown[24];
                snprintf(shown, sizeof(shown), "%.*s", (int) strcspn(buf, "\n"), buf);
                ng_collect_problem(c, path, "\"%s\" is not a count of pages: the %s pool is unknown", shown, name);
        }
        free(buf);
        return r < 0 ? -1 : 1;
}

/* A pool whose counters cannot all be read stays, unknown: it exists, and
 * a correction must say it cannot size it rather than that it is absent. */
static void read_pool(struct collector *c, const char *dir, const char *name, bool global, struct ng_hugepool *hp)
{
        bool bad = read_counter(c, dir, name, "nr_hugepages", true, &hp->nr_pages) < 0;
        bad |= read_counter(c, dir, name, "free_hugepages", true, &hp->free_pages) < 0;
        bad |= read_counter(c, dir, name, "surplus_hugepages", false, &hp->surplus_pages) < 0;
        if (global) {
                bad |= read_counter(c, dir, name, "resv_hugepages", false, &hp->resv_pages) < 0;
                bad |= read_counter(c, dir, name, "nr_overcommit_hugepages", false, &hp->overcommit_pages) < 0;
        }
        uint64_t bytes, all;
        if (!bad && (!ng_add_u64(hp->nr_pages, hp->surplus_pages, &all) || !ng_units_bytes(all, hp->page_kib, &bytes) ||
                     hp->free_pages > all)) {
                char path[192];
                snprintf(path, sizeof(path), "%s/%s", dir, name);
                ng_collect_problem(c, path, "nr_hugepages %" PRIu64 ", free %" PRIu64 ", surplus %" PRIu64
                        " of %" PRIu64 " kB cannot be true: the pool is unknown", hp->nr_pages,
                        hp->free_pages, hp->surplus_pages, hp->page_kib);
                bad = true;
        }
        if (bad)
                *hp = (struct ng_hugepool) { .page_kib = hp->page_kib, .unknown = true };
}

/* Reads every hugepages-<size>kB directory under dir into pools. */
static int read_pools(struct collector *c, const char *dir, bool global,
                      struct ng_hugepool *pools, size_t *ret_n)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n = 0, k = 0;
        int r = ng_path_list(c->p, &names, &n, "%s", dir);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n && k < NG_MAX_HUGE_SIZES; i++) {
                struct ng_hugepool hp = {0};
                if (ng_parse_hugepages_dirname(names[i], &hp.page_kib) < 0)
                        continue;
                read_pool(c, dir, names[i], global, &hp);
                pools[k++] = hp;
        }
        qsort(pools, k, sizeof(*pools), pool_cmp);
        *ret_n = k;
        return 0;
}

/* The kernel prints a node's distance to every online node, 10 to itself
 * and 10 to 255 (unreachable) to the others (a u8, from the firmware's
 * SLIT): any other row is unknown as a whole, never read in part. */
static bool distances_plausible(struct collector *c, int id, int r, const uint64_t *row, size_t n,
                                const struct ng_topology *t)
{
        char path[128];
        snprintf(path, sizeof(path), NG_SYS_NODE_DIR "/node%d/distance", id);
        size_t want = ng_bitmap_count(&t->online);
        if (r < 0) {
                ng_collect_problem(c, path, "a value is not a number (distances are 10 to 255): the distances from "
                                   "node %d are unknown", id);
                return false;
        }
        if (n != want) {
                ng_collect_problem(c, path, "not %zu distances (one per online node): the distances from node %d "
                                   "are unknown", want, id);
                return false;
        }
        for (size_t j = 0; j < n; j++)
                if (row[j] < 10 || row[j] > 255) {
                        ng_collect_problem(c, path, "distance %" PRIu64 " cannot be true (10 to 255): the distances "
                                           "from node %d are unknown", row[j], id);
                        return false;
                }
        return true;
}

static int read_node(struct collector *c, struct ng_node *nd, const struct ng_topology *t)
{
        char path[128], *buf;
        int r;

        nd->has_cpu = ng_bitmap_test(&t->has_cpu, (unsigned) nd->id);
        nd->has_memory = ng_bitmap_test(&t->has_memory, (unsigned) nd->id);
        nd->has_normal_memory = ng_bitmap_test(&t->has_normal_memory, (unsigned) nd->id);

        snprintf(path, sizeof(path), NG_SYS_NODE_DIR "/node%d/cpulist", nd->id);
        r = ng_collect_read_list(c, &nd->cpus, path);
        if (r < 0)
                return r;

        if (ng_collect_read(c, &buf, NULL, NG_SYS_NODE_DIR "/node%d/distance", nd->id) >= 0) {
                uint64_t row[1024];
                size_t n = 0;
                r = ng_parse_u64_row(buf, row, 1024, &n);
                free(buf);
                if (!distances_plausible(c, nd->id, r, row, n, t))
                        n = 0;
                if (n > 0) {
                        nd->distance = malloc(n * sizeof(*nd->distance));
                        if (!nd->distance)
                                return -ENOMEM;
                        memcpy(nd->distance, row, n * sizeof(*row));
                        nd->n_distance = n;
                }
        }

        /* Every online node has one; without it the node's memory is
         * unknown, never 0. */
        ng_collect_read_meminfo(c, &nd->meminfo, &nd->has_meminfo, true, NG_SYS_NODE_DIR "/node%d/meminfo", nd->id);

        r = ng_collect_node_hmat(c, nd);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), NG_SYS_NODE_DIR "/node%d/hugepages", nd->id);
        return read_pools(c, path, false, nd->pools, &nd->n_pools);
}

/* A kernel without NUMA sysfs is one node holding every CPU and all memory. */
static int synthesize_node0(struct collector *c, struct ng_topology *t)
{
        t->nodes = calloc(1, sizeof(*t->nodes));
        if (!t->nodes)
                return -ENOMEM;
        t->n_nodes = 1;
        ng_bitmap_set(&t->online, 0);
        ng_bitmap_set(&t->possible, 0);
        ng_bitmap_set(&t->has_memory, 0);
        ng_bitmap_set(&t->has_normal_memory, 0);
        if (!ng_bitmap_empty(&t->cpus_online))
                ng_bitmap_set(&t->has_cpu, 0);
        struct ng_node *nd = &t->nodes[0];
        nd->cpus = t->cpus_online;
        nd->has_cpu = !ng_bitmap_empty(&t->cpus_online);
        nd->has_memory = nd->has_normal_memory = true;
        nd->package_id = nd->tier = -1;
        t->demotion_enabled = -1;
        nd->distance = malloc(sizeof(*nd->distance));
        if (!nd->distance)
                return -ENOMEM;
        nd->distance[0] = 10;
        nd->n_distance = 1;
        nd->has_meminfo = c->s->has_meminfo;
        nd->meminfo = c->s->meminfo;
        memcpy(nd->pools, c->s->pools, sizeof(nd->pools));
        nd->n_pools = c->s->n_pools;
        return 0;
}

static int nodes_from_dirs(struct collector *c, struct ng_bitmap *ret)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        int r = ng_path_list(c->p, &names, &n, NG_SYS_NODE_DIR);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n; i++) {
                char *end;
                if (strncmp(names[i], "node", 4) || !names[i][4])
                        continue;
                unsigned long id = strtoul(names[i] + 4, &end, 10);
                if (!*end && id < NG_BITMAP_BITS)
                        ng_bitmap_set(ret, (unsigned) id);
        }
        return 0;
}

int ng_collect_topology(struct collector *c)
{
        struct ng_topology *t = &c->s->topo;
        int r = ng_collect_read_list(c, &t->cpus_online, NG_SYS_CPU_DIR "/online");
        if (r < 0)
                return r;

        char *buf;
        r = ng_collect_read(c, &buf, NULL, NG_SYS_NODE_DIR "/online");
        if (r < 0 && r != -ENOENT)
                return r;
        bool missing = r == -ENOENT;
        if (r >= 0) {
                r = ng_bitmap_parse_list(buf, &t->online);
                free(buf);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || ng_bitmap_empty(&t->online)) {
                        ng_collect_problem(c, NG_SYS_NODE_DIR "/online", "not a list of node ids: nodes taken from the "
                                "node directories");
                        memset(&t->online, 0, sizeof(t->online));
                }
        }
        /* A tree that lost node/online but has nodeN directories is not a
         * one-node host: take the nodes from the directories, and say so. */
        if (ng_bitmap_empty(&t->online)) {
                r = nodes_from_dirs(c, &t->online);
                if (r < 0)
                        return r;
                if (ng_bitmap_empty(&t->online))
                        return synthesize_node0(c, t);
                if (missing)
                        ng_collect_problem(c, NG_SYS_NODE_DIR "/online", "missing while node directories exist: nodes "
                                "taken from them");
        }
        t->numa_sysfs = true;

        static const struct {
                const char *file;
                size_t offset;
        } lists[] = {
                { NG_SYS_NODE_DIR "/possible", offsetof(struct ng_topology, possible) },
                { NG_SYS_NODE_DIR "/has_cpu", offsetof(struct ng_topology, has_cpu) },
                { NG_SYS_NODE_DIR "/has_memory", offsetof(struct ng_topology, has_memory) },
                { NG_SYS_NODE_DIR "/has_normal_memory", offsetof(struct ng_topology, has_normal_memory) },
        };
        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                r = ng_collect_read_list(c, (struct ng_bitmap *) ((char *) t + lists[i].offset), lists[i].file);
                if (r < 0)
                        return r;
        }

        size_t n = ng_bitmap_count(&t->online);
        if (n == 0)
                return -EINVAL;
        t->nodes = calloc(n, sizeof(*t->nodes));
        if (!t->nodes)
                return -ENOMEM;
        NG_BITMAP_FOREACH(id, &t->online) {
                struct ng_node *nd = &t->nodes[t->n_nodes++];
                nd->id = id;
                r = read_node(c, nd, t);
                if (r < 0)
                        return r;
        }
        r = ng_collect_tiers(c);
        if (r < 0)
                return r;
        /* Watermarks for node_free_floor = auto; absent is fine (old trees). */
        buf = NULL;
        if (ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/zoneinfo") >= 0) {
                for (size_t i = 0; i < t->n_nodes; i++) {
                        uint64_t pages;
                        if (ng_parse_zoneinfo_high(buf, t->nodes[i].id, &pages) >= 0 &&
                            pages <= NG_PLAUSIBLE_MAX_KIB / 4)
                                t->nodes[i].high_wmark_pages = pages;
                        if (t->n_tiers >= 2 && t->nodes[i].tier == t->tiers[0].id &&
                            ng_parse_zoneinfo_promo(buf, t->nodes[i].id, &pages) >= 0 &&
                            pages <= NG_PLAUSIBLE_MAX_KIB / 4)
                                t->nodes[i].promo_wmark_pages = pages;
                }
        }
        ng_collect_features_zoneinfo(t, buf);
        free(buf);
        return 0;
}

int ng_collect_memory(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        ng_collect_read_meminfo(c, &s->meminfo, &s->has_meminfo, false, NG_PROC_DIR "/meminfo");
        return read_pools(c, NG_SYS_HUGEPAGES_DIR, true, s->pools, &s->n_pools);
}

void ng_collect_knobs(struct collector *c)
{
        struct ng_knobs *k = &c->s->knobs;
        uint64_t v;
        char *buf;

        k->numa_balancing = ng_path_read_u64(c->reads, &v, NG_PROC_DIR "/sys/kernel/numa_balancing") >= 0
                ? (int) (v > 255 ? 255 : v) : -1;
        k->nr_hugepages = ng_path_read_u64(c->reads, &v, NG_PROC_DIR "/sys/vm/nr_hugepages") >= 0
                ? (int64_t) (v > INT64_MAX ? INT64_MAX : v) : -1;
        k->zone_reclaim_mode = ng_path_read_u64(c->reads, &v, NG_PROC_DIR "/sys/vm/zone_reclaim_mode") >= 0
                ? (int) (v > 255 ? 255 : v) : -1;
        k->hugetlb_shm_group = ng_path_read_u64(c->reads, &v, NG_PROC_DIR "/sys/vm/hugetlb_shm_group") >= 0
                ? (int64_t) (v > UINT32_MAX ? -1 : (int64_t) v) : -1;
        if (ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/sys/kernel/osrelease") >= 0) {
                const char *p = buf;
                uint64_t major, minor;
                if (ng_parse_u64(&p, &major) == 0 && *p++ == '.' && ng_parse_u64(&p, &minor) == 0 &&
                    major < 1000 && minor < 1000) {
                        k->kernel_major = (unsigned) major;
                        k->kernel_minor = (unsigned) minor;
                }
                free(buf);
        }
        if (ng_collect_read(c, &buf, NULL, NG_SYS_THP_ENABLED) >= 0) {
                if (ng_parse_bracketed_choice(buf, k->thp_enabled, sizeof(k->thp_enabled)) < 0)
                        k->thp_enabled[0] = '\0';
                free(buf);
        }
}

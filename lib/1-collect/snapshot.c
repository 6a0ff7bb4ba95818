/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: read the host through the path layer into one snapshot. */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "collect-internal.h"
#include "ng-latency.h"
#include "ng-snapshot.h"
#include "ng-units.h"
#include "ng-sample.h"
#include "ng-parse.h"

/* Bounds against hostile or absurd trees. */
#define MAX_SHM_FILES 100000
#define MAX_SHM_DIR_DEPTH 4

static uint64_t now_usec(clockid_t clk)
{
        struct timespec ts;
        clock_gettime(clk, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* Every read goes through ng_collect_vread() so that the snapshot can say
 * what it cost. */
static int vrd(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
static int vrd(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
{
        return ng_collect_vread(c, ret_buf, ret_len, fmt, ap);
}
static int rd(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int rd(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vrd(c, ret_buf, ret_len, fmt, ap);
        va_end(ap);
        return r;
}

static void problem(struct collector *c, const char *path, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void problem(struct collector *c, const char *path, const char *fmt, ...)
{
        struct ng_snapshot *s = c->s;
        if (s->n_problems++ >= NG_MAX_PROBLEMS)
                return;
        struct ng_problem *pb = &s->problems[s->n_problems - 1];
        /* A long root is cut from its start: the kernel path matters most. */
        size_t rl = strlen(s->root), keep = sizeof(pb->path) / 2;
        const char *root = rl > keep ? s->root + rl - keep : s->root;
        int n = snprintf(pb->path, sizeof(pb->path), "%.*s%s", (int) strnlen(root, keep), root, path);
        if (n >= (int) sizeof(pb->path))
                strcpy(pb->path + sizeof(pb->path) - 4, "...");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(pb->reason, sizeof(pb->reason), fmt, ap);
        va_end(ap);
}

/* Reads a list file ("0-3"); an absent file leaves *ret empty, one that
 * does not parse too, with a problem naming it. */
static int rd_list(struct collector *c, struct ng_bitmap *ret, const char *path)
{
        char *buf;
        int r = rd(c, &buf, NULL, "%s", path);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        struct ng_bitmap b = {0};
        r = ng_bitmap_parse_list(buf, &b);
        free(buf);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                problem(c, path, "not a list of ids (%s)", strerror(-r));
                return 0;
        }
        *ret = b;
        return 0;
}

/* Fields of a meminfo that are parts of MemTotal. */
static bool part_of_total(const char *key)
{
        static const char *const keys[] = { "MemFree", "MemUsed", "MemAvailable", "FilePages", "Shmem",
                                            "PageTables", "AnonPages", "Mapped", "Active", "Inactive",
                                            "Slab", "KernelStack" };
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (!strcmp(key, keys[i]))
                        return true;
        return false;
}

/* A meminfo that cannot be true is unknown as a whole: a MemFree of 2^64-1
 * kB would otherwise plan hugepages on memory the node does not have. */
static bool meminfo_plausible(struct collector *c, const char *path, const struct ng_meminfo *m)
{
        uint64_t total;
        if (ng_meminfo_get(m, "MemTotal", &total) < 0) {
                problem(c, path, "no MemTotal line: the memory is unknown");
                return false;
        }
        for (size_t i = 0; i < m->n; i++) {
                const struct ng_meminfo_field *f = &m->f[i];
                if (!f->kib)
                        continue;
                if (f->value > NG_PLAUSIBLE_MAX_KIB) {
                        problem(c, path, "%s %" PRIu64 " kB is more than any machine holds (4 PiB): the memory "
                                "is unknown", f->key, f->value);
                        return false;
                }
                if (part_of_total(f->key) && f->value > total) {
                        problem(c, path, "%s %" PRIu64 " kB exceeds MemTotal %" PRIu64 " kB: the memory is "
                                "unknown", f->key, f->value, total);
                        return false;
                }
        }
        return true;
}

/* Reads a meminfo; has set when it exists, parses and can be true. */
static void rd_meminfo(struct collector *c, struct ng_meminfo *m, bool *has, bool must_exist, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void rd_meminfo(struct collector *c, struct ng_meminfo *m, bool *has, bool must_exist, const char *fmt, ...)
{
        char path[128], *buf;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        *has = false;
        int r = rd(c, &buf, NULL, "%s", path);
        if (r < 0) {
                if (r != -ENOENT || must_exist)
                        problem(c, path, "%s: the memory is unknown",
                                r == -ENOENT ? "missing" : strerror(-r));
                return;
        }
        r = ng_parse_meminfo(buf, m);
        free(buf);
        if (r < 0)
                problem(c, path, "no meminfo line parses: the memory is unknown");
        else
                *has = meminfo_plausible(c, path, m);
}

static int rd_u64(struct collector *c, uint64_t *ret, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int rd_u64(struct collector *c, uint64_t *ret, const char *fmt, ...)
{
        char *buf;
        va_list ap;
        va_start(ap, fmt);
        int r = vrd(c, &buf, NULL, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = ng_parse_u64_full(buf, ret);
        free(buf);
        return r;
}

static int pool_cmp(const void *a, const void *b)
{
        const struct ng_hugepool *x = a, *y = b;
        return (x->page_kib > y->page_kib) - (x->page_kib < y->page_kib);
}

/* Reads every hugepages-<size>kB directory under dir into pools. */
static int read_pools(struct collector *c, const char *dir, bool global,
                      struct ng_hugepool *pools, size_t *ret_n)
{
        char **names;
        size_t n = 0, k = 0;
        int r = ng_path_list(c->p, &names, &n, "%s", dir);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n && k < NG_MAX_HUGE_SIZES; i++) {
                struct ng_hugepool hp = {0};
                if (ng_parse_hugepages_dirname(names[i], &hp.page_kib) < 0)
                        continue;
                if (rd_u64(c, &hp.nr_pages, "%s/%s/nr_hugepages", dir, names[i]) < 0)
                        continue;
                rd_u64(c, &hp.free_pages, "%s/%s/free_hugepages", dir, names[i]);
                rd_u64(c, &hp.surplus_pages, "%s/%s/surplus_hugepages", dir, names[i]);
                if (global) {
                        rd_u64(c, &hp.resv_pages, "%s/%s/resv_hugepages", dir, names[i]);
                        rd_u64(c, &hp.overcommit_pages, "%s/%s/nr_overcommit_hugepages", dir, names[i]);
                }
                uint64_t bytes, all;
                if (!ng_add_u64(hp.nr_pages, hp.surplus_pages, &all) || !ng_units_bytes(all, hp.page_kib, &bytes) ||
                    hp.free_pages > all) {
                        char path[192];
                        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                        problem(c, path, "nr_hugepages %" PRIu64 ", free %" PRIu64 ", surplus %" PRIu64
                                " of %" PRIu64 " kB cannot be true: the pool is unknown", hp.nr_pages,
                                hp.free_pages, hp.surplus_pages, hp.page_kib);
                        continue;
                }
                pools[k++] = hp;
        }
        ng_strv_free(names);
        qsort(pools, k, sizeof(*pools), pool_cmp);
        *ret_n = k;
        return 0;
}

static int read_node(struct collector *c, struct ng_node *nd, const struct ng_topology *t)
{
        char path[128], *buf;
        int r;

        nd->has_cpu = ng_bitmap_test(&t->has_cpu, (unsigned) nd->id);
        nd->has_memory = ng_bitmap_test(&t->has_memory, (unsigned) nd->id);
        nd->has_normal_memory = ng_bitmap_test(&t->has_normal_memory, (unsigned) nd->id);

        snprintf(path, sizeof(path), NG_SYS_NODE_DIR "/node%d/cpulist", nd->id);
        r = rd_list(c, &nd->cpus, path);
        if (r < 0)
                return r;

        if (rd(c, &buf, NULL, NG_SYS_NODE_DIR "/node%d/distance", nd->id) >= 0) {
                uint64_t row[1024];
                size_t n = 0;
                r = ng_parse_u64_row(buf, row, 1024, &n);
                free(buf);
                if (r >= 0 && n > 0) {
                        nd->distance = malloc(n * sizeof(*nd->distance));
                        if (!nd->distance)
                                return -ENOMEM;
                        memcpy(nd->distance, row, n * sizeof(*row));
                        nd->n_distance = n;
                }
        }

        /* Every online node has one; without it the node's memory is
         * unknown, never 0. */
        rd_meminfo(c, &nd->meminfo, &nd->has_meminfo, true, NG_SYS_NODE_DIR "/node%d/meminfo", nd->id);

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
        char **names;
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
        ng_strv_free(names);
        return 0;
}

static int collect_topology(struct collector *c)
{
        struct ng_topology *t = &c->s->topo;
        int r = rd_list(c, &t->cpus_online, NG_SYS_CPU_DIR "/online");
        if (r < 0)
                return r;

        char *buf;
        r = rd(c, &buf, NULL, NG_SYS_NODE_DIR "/online");
        if (r < 0 && r != -ENOENT)
                return r;
        bool missing = r == -ENOENT;
        if (r >= 0) {
                r = ng_bitmap_parse_list(buf, &t->online);
                free(buf);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || ng_bitmap_empty(&t->online)) {
                        problem(c, NG_SYS_NODE_DIR "/online", "not a list of node ids: nodes taken from the "
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
                        problem(c, NG_SYS_NODE_DIR "/online", "missing while node directories exist: nodes "
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
        for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
                r = rd_list(c, (struct ng_bitmap *) ((char *) t + lists[i].offset), lists[i].file);
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
        /* Watermarks for node_free_floor = auto; absent is fine (old trees). */
        if (rd(c, &buf, NULL, NG_PROC_DIR "/zoneinfo") >= 0) {
                for (size_t i = 0; i < t->n_nodes; i++) {
                        uint64_t pages;
                        if (ng_parse_zoneinfo_high(buf, t->nodes[i].id, &pages) >= 0 &&
                            pages <= NG_PLAUSIBLE_MAX_KIB / 4)
                                t->nodes[i].high_wmark_pages = pages;
                }
                free(buf);
        }
        return 0;
}

static int collect_memory(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        rd_meminfo(c, &s->meminfo, &s->has_meminfo, false, NG_PROC_DIR "/meminfo");
        return read_pools(c, NG_SYS_HUGEPAGES_DIR, true, s->pools, &s->n_pools);
}

static void collect_knobs(struct collector *c)
{
        struct ng_knobs *k = &c->s->knobs;
        uint64_t v;
        char *buf;

        k->numa_balancing = rd_u64(c, &v, NG_PROC_DIR "/sys/kernel/numa_balancing") >= 0
                ? (int) (v > 255 ? 255 : v) : -1;
        k->nr_hugepages = rd_u64(c, &v, NG_PROC_DIR "/sys/vm/nr_hugepages") >= 0
                ? (int64_t) (v > INT64_MAX ? INT64_MAX : v) : -1;
        if (rd(c, &buf, NULL, NG_SYS_THP_ENABLED) >= 0) {
                if (ng_parse_bracketed_choice(buf, k->thp_enabled, sizeof(k->thp_enabled)) < 0)
                        k->thp_enabled[0] = '\0';
                free(buf);
        }
}

static int collect_sysvipc(struct collector *c)
{
        char *buf;
        int r = rd(c, &buf, NULL, NG_PROC_DIR "/sysvipc/shm");
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ng_parse_sysvipc_shm(buf, &c->s->shm, &c->s->n_shm);
        free(buf);
        if (r < 0)
                return r;
        c->s->has_sysvipc = true;
        return 0;
}

static int collect_mounts(struct collector *c)
{
        char *buf;
        int r = rd(c, &buf, NULL, NG_PROC_DIR "/self/mountinfo");
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ng_parse_mountinfo(buf, &c->s->mounts, &c->s->n_mounts);
        free(buf);
        return r;
}

/* ---- /dev/shm and hugetlbfs files ---- */

static uint64_t hugetlbfs_page_kib(const struct ng_mount *m, const struct ng_snapshot *s)
{
        char v[32];
        uint64_t kib = 0;
        if (ng_mount_option_value(m, "pagesize", v, sizeof(v)) >= 0) {
                const char *q = v;
                if (ng_parse_u64(&q, &kib) >= 0) {
                        switch (*q) {
                        case 'G': case 'g': kib <<= 20; break;
                        case 'M': case 'm': kib <<= 10; break;
                        case 'K': case 'k': break;
                        default: kib >>= 10; break;     /* bytes */
                        }
                }
        }
        if (kib == 0 && s->has_meminfo)
                kib = ng_meminfo_value(&s->meminfo, "Hugepagesize");
        return kib;
}

static int add_file(struct collector *c, const char *path, uint64_t size, const struct ng_mount *m,
                    enum ng_shm_file_kind kind, uint64_t page_kib)
{
        struct ng_snapshot *s = c->s;
        if (s->n_files >= MAX_SHM_FILES)
                return -E2BIG;
        if (s->n_files % 64 == 0) {
                struct ng_shm_file *nf = realloc(s->files, (s->n_files + 64) * sizeof(*nf));
                if (!nf)
                        return -ENOMEM;
                s->files = nf;
        }
        char *dup = strdup(path);
        if (!dup)
                return -ENOMEM;
        s->files[s->n_files++] = (struct ng_shm_file) {
                .path = dup, .kind = kind, .size_bytes = size, .page_kib = page_kib,
                .dev_major = m->major, .dev_minor = m->minor,
        };
        return 0;
}

static int scan_files(struct collector *c, const char *dir, const struct ng_mount *m,
                      enum ng_shm_file_kind kind, uint64_t page_kib, int depth)
{
        char **names;
        size_t n;
        int r = ng_path_list(c->p, &names, &n, "%s", dir);
        if (r < 0)
                return r == -ENOENT || r == -EACCES ? 0 : r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                char path[4096];
                if (snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", names[i]) >= (int) sizeof(path))
                        continue;
                uint64_t size;
                int k = ng_path_file_size(c->p, &size, "%s", path);
                if (k >= 0)
                        r = add_file(c, path, size, m, kind, page_kib);
                else if (k == -EINVAL && depth < MAX_SHM_DIR_DEPTH)
                        r = scan_files(c, path, m, kind, page_kib, depth + 1);
        }
        ng_strv_free(names);
        return r;
}

/* Files in /dev/shm (Oracle AMM granules, PostgreSQL DSM) and on every
 * hugetlbfs mount. Only names and sizes: contents are never read. */
/* A mount stacked on the same mountpoint later in mountinfo hides this one
 * (containers mount a fresh /dev/shm over the host's): its files are not
 * the ones processes map, and scanning both would make every file an
 * orphan once. */
static bool shadowed(const struct ng_snapshot *s, size_t i)
{
        for (size_t k = i + 1; k < s->n_mounts; k++)
                if (!strcmp(s->mounts[k].mountpoint, s->mounts[i].mountpoint))
                        return true;
        return false;
}

static int collect_files(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct ng_mount *m = &s->mounts[i];
                int r = 0;
                if (shadowed(s, i))
                        continue;
                if (!strcmp(m->fstype, "hugetlbfs"))
                        r = scan_files(c, m->mountpoint, m, NG_SHM_FILE_HUGETLBFS, hugetlbfs_page_kib(m, s), 0);
                else if (!strcmp(m->fstype, "tmpfs") && !strcmp(m->mountpoint, NG_DEV_SHM_DIR))
                        r = scan_files(c, m->mountpoint, m, NG_SHM_FILE_TMPFS, 4, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- processes ---- */

static int collect_procs(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        if (c->o.picture)
                return ng_picture_collect_procs(c->o.picture, c);
        struct ng_pid_entry *pids;
        size_t n, cap = 0;
        int r = ng_path_list_pids(c->p, &pids, &n, NG_PROC_DIR);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                struct ng_proc pr;
                s->cost.procs_scanned++;
                r = ng_collect_read_proc(c, pids[i].pid, &pr);
                if (r > 0 && (r = ng_collect_add_proc(s, &cap, &pr)) < 0)
                        ng_proc_done(&pr);
        }
        free(pids);
        c->current_pid = 0;
        return r < 0 ? r : 0;
}


struct seg_id {
        unsigned major, minor;
        uint64_t inode;
        pid_t private_pid;      /* private mappings belong to one process */
};

static struct seg_id map_id(const struct ng_proc *pr, const struct ng_map *m)
{
        return (struct seg_id) {
                .major = m->dev_major, .minor = m->dev_minor, .inode = m->inode,
                .private_pid = m->kind == NG_MAP_ANON_PRIVATE ? pr->pid : 0,
        };
}

static bool id_seen(const struct seg_id *ids, size_t n, struct seg_id id)
{
        for (size_t i = 0; i < n; i++)
                if (!memcmp(&ids[i], &id, sizeof(id)))
                        return true;
        return false;
}

struct id_set {
        struct seg_id *v;
        size_t n, cap;
};

static int id_set_add(struct id_set *set, struct seg_id id)
{
        if (set->n == set->cap) {
                size_t ncap = set->cap ? set->cap * 2 : 32;
                struct seg_id *nv = realloc(set->v, ncap * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                set->v = nv;
                set->cap = ncap;
        }
        set->v[set->n++] = id;
        return 0;
}

int ng_proc_rep_cmp(const struct ng_proc *a, const struct ng_proc *b)
{
        uint64_t x = a->status.rss_shmem_kib + a->status.hugetlb_kib, y = b->status.rss_shmem_kib + b->status.hugetlb_kib;
        if (x != y)
                return x > y ? -1 : 1;
        return (a->pid > b->pid) - (a->pid < b->pid);
}

static int rep_cmp_ptr(const void *a, const void *b)
{
        return ng_proc_rep_cmp(*(struct ng_proc *const *) a, *(struct ng_proc *const *) b);
}

/*
 * Calls fn once for the representative of every segment: the first attacher
 * in ng_proc_rep_cmp() order for which fn succeeds (> 0). fn returning 0
 * means "not this one" (gone, not readable): the next attacher serves.
 */
static int for_each_representative(struct collector *c,
                                   int (*fn)(struct collector *c, struct ng_proc *pr, const struct id_set *seen))
{
        struct ng_snapshot *s = c->s;
        struct id_set seen = {0};
        int r = 0;
        struct ng_proc **order = malloc((s->n_procs + 1) * sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_procs; i++)
                order[i] = &s->procs[i];
        qsort(order, s->n_procs, sizeof(*order), rep_cmp_ptr);

        for (size_t i = 0; i < s->n_procs && r >= 0; i++) {
                struct ng_proc *pr = order[i];
                bool needed = false;
                for (size_t j = 0; j < pr->n_maps && !needed; j++)
                        needed = ng_map_is_segment(&pr->maps[j]) && !id_seen(seen.v, seen.n, map_id(pr, &pr->maps[j]));
                if (!needed)
                        continue;
                /* move_pages(2) reads no file: say whom we wait on first. */
                c->current_pid = pr->pid;
                if (c->o.progress)
                        c->o.progress(c->o.progress_data, pr->pid);
                r = fn(c, pr, &seen);
                if (r <= 0)
                        continue;
                r = 0;
                for (size_t j = 0; j < pr->n_maps && r >= 0; j++) {
                        struct seg_id id = map_id(pr, &pr->maps[j]);
                        if (ng_map_is_segment(&pr->maps[j]) && !id_seen(seen.v, seen.n, id))
                                r = id_set_add(&seen, id);
                }
        }
        free(order);
        free(seen.v);
        c->current_pid = 0;
        return r;
}

/* Tier 2: the representative's numa_maps (a page-table walk of the whole
 * process: never one read per attached process, that stalls databases). */
static int read_numa_maps(struct collector *c, struct ng_proc *pr, const struct id_set *seen)
{
        (void) seen;    /* one read covers every mapping of the process */
        char *buf;
        if (rd(c, &buf, NULL, NG_PROC_DIR "/%d/numa_maps", pr->pid) < 0)
                return 0;
        c->s->cost.numa_maps_read++;
        int r = ng_parse_numa_maps(buf, &pr->numa_maps, &pr->n_numa_maps);
        free(buf);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        /* Page counts whose bytes overflow or exceed any machine: the
         * placement of this process's segments is unknown. */
        for (size_t i = 0; i < pr->n_numa_maps; i++) {
                const struct ng_numa_map *nm = &pr->numa_maps[i];
                uint64_t sum = 0, bytes;
                for (size_t k = 0; k < nm->n_np; k++) {
                        if (ng_add_u64(sum, nm->np[k].pages, &sum) &&
                            ng_units_bytes(sum, nm->kernelpagesize_kib ? nm->kernelpagesize_kib : 4, &bytes))
                                continue;
                        char path[64];
                        snprintf(path, sizeof(path), NG_PROC_DIR "/%d/numa_maps", (int) pr->pid);
                        problem(c, path, "N%d=%" PRIu64 " pages at %" PRIx64 " is more memory than any machine "
                                "holds: this process's placement is unknown", nm->np[k].node, nm->np[k].pages,
                                nm->start);
                        ng_numa_maps_free(pr->numa_maps, pr->n_numa_maps);
                        pr->numa_maps = NULL;
                        pr->n_numa_maps = 0;
                        return 0;
                }
        }
        pr->has_numa_maps = true;
        return 1;
}

/* Tier 0: page size of every segment mapping of the representative, from
 * st_blksize of its map_files link (hugetlbfs reports the huge page size). */
static int read_page_sizes(struct collector *c, struct ng_proc *pr, const struct id_set *seen)
{
        bool any = false;
        for (size_t j = 0; j < pr->n_maps; j++) {
                struct ng_map *m = &pr->maps[j];
                uint64_t bytes;
                if (!ng_map_is_segment(m) || id_seen(seen->v, seen->n, map_id(pr, m)))
                        continue;
                if (ng_path_blksize(c->p, &bytes, NG_PROC_DIR "/%d/map_files/%" PRIx64 "-%" PRIx64,
                                    pr->pid, m->start, m->end) < 0)
                        continue;
                m->page_kib = bytes / 1024;
                any = true;
        }
        return any;
}

static int add_sample(struct ng_snapshot *s, const struct ng_sample *smp)
{
        if (s->n_samples % 32 == 0) {
                struct ng_sample *nv = realloc(s->samples, (s->n_samples + 32) * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                s->samples = nv;
        }
        s->samples[s->n_samples++] = *smp;
        return 0;
}

/* Tier 1: move_pages(2) on sample_pages addresses of each VMA of the
 * segments no earlier representative covered: never a segment twice. */
static int sample_proc(struct collector *c, struct ng_proc *pr, const struct id_set *seen)
{
        bool any = false;
        for (size_t j = 0; j < pr->n_maps; j++) {
                const struct ng_map *m = &pr->maps[j];
                struct ng_sample smp;
                if (!ng_map_is_segment(m) || id_seen(seen->v, seen->n, map_id(pr, m)))
                        continue;
                int r = ng_sample_range(pr->pid, m->start, m->end - m->start, m->page_kib * 1024,
                                        c->o.sample_pages, NULL, &smp);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return any;     /* gone or not permitted: keep what we have */
                c->s->cost.pages_sampled += smp.asked;
                r = add_sample(c->s, &smp);
                if (r < 0) {
                        ng_sample_done(&smp);
                        return r;
                }
                any = true;
        }
        return any;
}

static int collect_placement(struct collector *c)
{
        enum ng_placement pl = c->o.placement;
        bool live = ng_path_is_live(c->p);
        if (pl == NG_PLACEMENT_AUTO || (pl == NG_PLACEMENT_SAMPLED && !live))
                pl = live ? NG_PLACEMENT_SAMPLED : NG_PLACEMENT_EXACT;
        c->s->placement = pl;
        if (c->o.sample_pages == 0)
                c->o.sample_pages = 4096;
        /* Exact placement carries kernelpagesize_kB; probing map_files too
         * would give the live host facts a --root replay cannot have. */
        int r = pl == NG_PLACEMENT_SAMPLED ? for_each_representative(c, read_page_sizes) : 0;
        if (r < 0)
                return r;
        switch (pl) {
        case NG_PLACEMENT_SAMPLED:
                return for_each_representative(c, sample_proc);
        case NG_PLACEMENT_EXACT:
                return for_each_representative(c, read_numa_maps);
        default:
                return 0;
        }
}

/* Only where Oracle runs: the check stats files outside /proc and /sys. */
static void collect_libnuma(struct collector *c)
{
        static const char *const paths[] = NG_LIBNUMA_PATHS;
        struct ng_snapshot *s = c->s;
        s->libnuma_so = -1;
        for (size_t i = 0; i < s->n_procs && s->libnuma_so < 0; i++)
                if (!strncmp(s->procs[i].name, "ora_", 4) || !strncmp(s->procs[i].name, "asm_", 4))
                        s->libnuma_so = 0;
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && s->libnuma_so == 0; i++) {
                uint64_t size;
                if (ng_path_file_size(c->p, &size, "%s", paths[i]) >= 0)
                        s->libnuma_so = 1;
        }
}

static int collect_pidfiles(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        if (c->o.n_pidfiles == 0)
                return 0;
        s->pidfiles = calloc(c->o.n_pidfiles, sizeof(*s->pidfiles));
        if (!s->pidfiles)
                return -ENOMEM;
        for (size_t i = 0; i < c->o.n_pidfiles; i++) {
                struct ng_pidfile *pf = &s->pidfiles[s->n_pidfiles++];
                char *buf;
                uint64_t v;
                if (!(pf->path = strdup(c->o.pidfiles[i])))
                        return -ENOMEM;
                if (rd(c, &buf, NULL, "%s", pf->path) < 0)
                        continue;
                /* PostgreSQL's postmaster.pid holds more lines after the pid. */
                char *nl = strchr(buf, '\n');
                if (nl)
                        *nl = '\0';
                if (ng_parse_u64_full(buf, &v) >= 0 && v > 0 && v <= INT32_MAX)
                        pf->pid = (pid_t) v;
                free(buf);
        }
        return 0;
}

/* ---- cgroups ---- */

/* The hierarchy that holds the cpuset controller: v1 if bound there, else
 * the cgroup2 mount. */
static const struct ng_mount *cpuset_mount(const struct ng_snapshot *s, int *ret_version)
{
        const struct ng_mount *v2 = NULL;
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct ng_mount *m = &s->mounts[i];
                if (!strcmp(m->fstype, "cgroup") && ng_mount_has_option(m, "cpuset")) {
                        *ret_version = 1;
                        return m;
                }
                if (!strcmp(m->fstype, "cgroup2") && !v2)
                        v2 = m;
        }
        *ret_version = 2;
        return v2;
}

static int cgroup_dir(const struct ng_mount *m, const char *path, char **ret)
{
        /* Inside a cgroup namespace the mount root is a sub-path. */
        size_t rl = strlen(m->root);
        if (strcmp(m->root, "/") && !strncmp(path, m->root, rl) && (path[rl] == '/' || !path[rl]))
                path += rl;
        if (!strcmp(path, "/"))
                path = "";
        return asprintf(ret, "%s%s", m->mountpoint, path) < 0 ? -ENOMEM : 0;
}

static void read_cgroup_files(struct collector *c, struct ng_cgroup *cg)
{
        static const char *const v1[] = { "cpuset.cpus", "cpuset.mems", "cpuset.effective_cpus", "cpuset.effective_mems" };
        static const char *const v2[] = { "cpuset.cpus", "cpuset.mems", "cpuset.cpus.effective", "cpuset.mems.effective" };
        struct ng_bitmap *dst[] = { &cg->cpus, &cg->mems, &cg->effective_cpus, &cg->effective_mems };
        const char *const *names = cg->version == 1 ? v1 : v2;
        char *buf;

        for (size_t i = 0; i < 4; i++) {
                if (rd(c, &buf, NULL, "%s/%s", cg->dir, names[i]) < 0)
                        continue;
                if (ng_bitmap_parse_list(buf, dst[i]) >= 0 && i >= 2)
                        cg->has_cpuset = true;
                free(buf);
        }
        uint64_t v;
        cg->memory_migrate = cg->version == 1 &&
                rd_u64(c, &v, "%s/%s", cg->dir, "cpuset.memory_migrate") >= 0 ? (int) (v != 0) : -1;
        if (cg->version == 2 && rd(c, &buf, NULL, "%s/memory.numa_stat", cg->dir) >= 0) {
                if (ng_parse_numa_stat(buf, &cg->memory_numa_stat, &cg->n_memory_numa_stat) < 0)
                        cg->n_memory_numa_stat = 0;
                free(buf);
        }
        /* The hugetlb controller names sizes "2MB", "1GB", "64KB". */
        for (size_t i = 0; cg->version == 2 && i < c->s->n_pools; i++) {
                uint64_t kib = c->s->pools[i].page_kib;
                const char *unit = kib >= 1048576 ? "GB" : kib >= 1024 ? "MB" : "KB";
                uint64_t n = kib >= 1048576 ? kib >> 20 : kib >= 1024 ? kib >> 10 : kib;
                if (rd(c, &buf, NULL, "%s/hugetlb.%" PRIu64 "%s.numa_stat", cg->dir, n, unit) < 0)
                        continue;
                size_t k = cg->n_hugetlb_numa_stat;
                if (ng_parse_numa_stat(buf, &cg->hugetlb_numa_stat[k].lines, &cg->hugetlb_numa_stat[k].n) >= 0) {
                        cg->hugetlb_numa_stat[k].page_kib = kib;
                        cg->n_hugetlb_numa_stat++;
                }
                free(buf);
        }
}

static int collect_cgroups(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        int version;
        const struct ng_mount *m = cpuset_mount(s, &version);
        if (!m)
                return 0;
        const struct ng_cgroup_entry *last = NULL;
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct ng_pid_cgroup *pc = &s->procs[i].cgroup;
                /* Records of a picture share equal cgroup lists: one look each. */
                if (pc->e && pc->e == last)
                        continue;
                last = pc->e;
                const char *path = version == 1 ? ng_pid_cgroup_v1_path(pc, "cpuset") : ng_pid_cgroup_v2_path(pc);
                if (!path || ng_snapshot_cgroup(s, path))
                        continue;
                if (s->n_cgroups % 16 == 0) {
                        struct ng_cgroup *ncg = realloc(s->cgroups, (s->n_cgroups + 16) * sizeof(*ncg));
                        if (!ncg)
                                return -ENOMEM;
                        s->cgroups = ncg;
                }
                struct ng_cgroup *cg = &s->cgroups[s->n_cgroups];
                *cg = (struct ng_cgroup) { .version = version, .memory_migrate = -1 };
                if (!(cg->path = strdup(path)) || cgroup_dir(m, path, &cg->dir) < 0) {
                        free(cg->path);
                        return -ENOMEM;
                }
                s->n_cgroups++;
                read_cgroup_files(c, cg);
        }
        return 0;
}

/* The matrices numaguardctl probe saved: absent is normal, a broken file
 * is kept as a reason and prices fall back to the SLIT. */
static int collect_latency(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        char err[160] = "";
        int r = ng_latency_read(c->p, &s->latency, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -ENOENT)
                snprintf(s->latency_error, sizeof(s->latency_error), "%s: %s", NG_LATENCY_FILE,
                         r == -EINVAL ? err : strerror(-r));
        return 0;
}

/* ---- entry points ---- */

static bool tree_has_dir(const struct ng_path *p, const char *dir)
{
        char path[4096];
        struct stat st;
        return ng_path_resolve(p, path, sizeof(path), "%s", dir) >= 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ng_snapshot_collect(const struct ng_path *p, const struct ng_collect_opts *opts,
                        struct ng_snapshot **ret)
{
        /* A root with neither proc/ nor sys/ is no host tree: say so rather
         * than audit an empty machine. */
        if (!ng_path_is_live(p) && !tree_has_dir(p, NG_PROC_DIR) && !tree_has_dir(p, NG_SYS_DIR))
                return -ENOENT;
        struct ng_snapshot *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        struct collector c = { .p = p, .o = opts ? *opts : NG_COLLECT_OPTS_DEFAULT, .s = s };
        uint64_t t0 = now_usec(CLOCK_MONOTONIC), c0 = now_usec(CLOCK_THREAD_CPUTIME_ID);

        s->taken_usec = now_usec(CLOCK_REALTIME);
        s->libnuma_so = -1;
        snprintf(s->root, sizeof(s->root), "%s", ng_path_root(p));
        int r = collect_memory(&c);
        if (r >= 0)
                r = collect_topology(&c);
        if (r >= 0)
                r = ng_boot_pools_collect(p, s);
        if (r >= 0)
                r = collect_latency(&c);
        if (r >= 0 && !c.o.skip_procs) {
                collect_knobs(&c);
                r = collect_sysvipc(&c);
                if (r >= 0)
                        r = collect_mounts(&c);
                if (r >= 0)
                        r = collect_files(&c);
                if (r >= 0)
                        r = collect_procs(&c);
                if (r >= 0)
                        r = collect_cgroups(&c);
                if (r >= 0)
                        r = ng_owners_collect(p, s);
                if (r >= 0)
                        r = collect_placement(&c);
                if (r >= 0)
                        r = collect_pidfiles(&c);
                collect_libnuma(&c);
        }
        if (r < 0) {
                ng_snapshot_free(s);
                return r;
        }
        s->cost.wall_usec = now_usec(CLOCK_MONOTONIC) - t0;
        s->cost.cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - c0;
        *ret = s;
        return 0;
}

void ng_snapshot_free(struct ng_snapshot *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                free(s->topo.nodes[i].distance);
        free(s->topo.nodes);
        free(s->shm);
        ng_mounts_free(s->mounts, s->n_mounts);
        for (size_t i = 0; i < s->n_files; i++)
                free(s->files[i].path);
        free(s->files);
        for (size_t i = 0; i < s->n_procs; i++)
                ng_proc_done(&s->procs[i]);
        free(s->procs);
        for (size_t i = 0; i < s->n_cgroups; i++) {
                free(s->cgroups[i].path);
                free(s->cgroups[i].dir);
                ng_numa_stat_free(s->cgroups[i].memory_numa_stat, s->cgroups[i].n_memory_numa_stat);
                for (size_t k = 0; k < s->cgroups[i].n_hugetlb_numa_stat; k++)
                        ng_numa_stat_free(s->cgroups[i].hugetlb_numa_stat[k].lines, s->cgroups[i].hugetlb_numa_stat[k].n);
        }
        free(s->cgroups);
        free(s->boot_pools);
        for (size_t i = 0; i < s->n_pidfiles; i++)
                free(s->pidfiles[i].path);
        free(s->pidfiles);
        for (size_t i = 0; i < s->n_samples; i++)
                ng_sample_done(&s->samples[i]);
        free(s->samples);
        ng_latency_free(s->latency);
        free(s);
}

const struct ng_node *ng_snapshot_node(const struct ng_snapshot *s, int id)
{
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].id == id)
                        return &s->topo.nodes[i];
        return NULL;
}

const struct ng_proc *ng_snapshot_proc(const struct ng_snapshot *s, pid_t pid)
{
        size_t lo = 0, hi = s->n_procs;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->procs[mid].pid == pid)
                        return &s->procs[mid];
                if (s->procs[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

const struct ng_cgroup *ng_snapshot_cgroup(const struct ng_snapshot *s, const char *path)
{
        for (size_t i = 0; i < s->n_cgroups; i++)
                if (!strcmp(s->cgroups[i].path, path))
                        return &s->cgroups[i];
        return NULL;
}

static const struct ng_map *same_map(const struct ng_proc *pr, uint64_t start, uint64_t end)
{
        for (size_t j = 0; j < pr->n_maps; j++)
                if (pr->maps[j].start == start && pr->maps[j].end == end)
                        return &pr->maps[j];
        return NULL;
}

int ng_snapshot_carry_placement(struct ng_snapshot *s, const struct ng_snapshot *prev)
{
        int carried = 0;
        for (size_t i = 0; i < s->n_procs; i++) {
                struct ng_proc *pr = &s->procs[i];
                if (!pr->n_maps)
                        continue;
                const struct ng_proc *old = ng_snapshot_proc(prev, pr->pid);
                if (!old || old->stat.starttime_ticks != pr->stat.starttime_ticks)
                        continue;
                for (size_t j = 0; j < pr->n_maps; j++) {
                        struct ng_map *m = &pr->maps[j];
                        const struct ng_map *om = same_map(old, m->start, m->end);
                        if (!om || !ng_map_is_segment(m) || om->kind != m->kind || om->inode != m->inode)
                                continue;
                        if (!m->page_kib)
                                m->page_kib = om->page_kib;
                        const struct ng_sample *os = ng_snapshot_sample(prev, pr->pid, m->start);
                        if (!os || ng_snapshot_sample(s, pr->pid, m->start))
                                continue;
                        struct ng_sample copy = *os;
                        copy.np = malloc((os->n_np + 1) * sizeof(*copy.np));
                        if (!copy.np)
                                return -ENOMEM;
                        if (os->n_np)   /* a sample with nothing resident has no np */
                                memcpy(copy.np, os->np, os->n_np * sizeof(*copy.np));
                        if (add_sample(s, &copy) < 0) {
                                free(copy.np);
                                return -ENOMEM;
                        }
                        carried++;
                }
        }
        return carried;
}

void ng_snapshot_cpu_since(struct ng_snapshot *s, const struct ng_snapshot *prev)
{
        for (size_t i = 0; i < s->n_procs; i++) {
                struct ng_proc *pr = &s->procs[i];
                const struct ng_proc *old = ng_snapshot_proc(prev, pr->pid);
                uint64_t now = pr->stat.utime_ticks + pr->stat.stime_ticks;
                if (old && old->stat.starttime_ticks == pr->stat.starttime_ticks)
                        pr->cpu_weight_ticks = now - (old->stat.utime_ticks + old->stat.stime_ticks);
                /* (unsigned wrap is impossible: CPU time only grows) */
                if (pr->cpu_weight_ticks > now)
                        pr->cpu_weight_ticks = now;
        }
}

const struct ng_sample *ng_snapshot_sample(const struct ng_snapshot *s, pid_t pid, uint64_t start)
{
        for (size_t i = 0; i < s->n_samples; i++)
                if (s->samples[i].pid == pid && s->samples[i].start == start)
                        return &s->samples[i];
        return NULL;
}

int ng_snapshot_distance(const struct ng_snapshot *s, int from, int to)
{
        const struct ng_node *a = ng_snapshot_node(s, from);
        if (!a)
                return -1;
        for (size_t i = 0; i < s->topo.n_nodes && i < a->n_distance; i++)
                if (s->topo.nodes[i].id == to)
                        return a->distance[i] > INT32_MAX ? -1 : (int) a->distance[i];
        return -1;
}

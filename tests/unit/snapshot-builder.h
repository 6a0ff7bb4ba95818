/* Builds literal snapshots for the analysis tests: every field malloc'd the
 * way ng_snapshot_collect() does, so ng_snapshot_free() releases them. */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "ng-test.h"
#include "ng-snapshot.h"
#include "proc.h"
#include "snapshot.h"

static inline void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size);
        ck_assert_ptr_nonnull(p);
        return p;
}

static inline void bm(struct ng_bitmap *b, const char *list)
{
        ck_assert_int_eq(ng_bitmap_parse_list(list, b), 0);
}

static inline void idset(struct ng_idset *set, const char *list)
{
        struct ng_bitmap *b = calloc(1, sizeof(*b));
        ck_assert_ptr_nonnull(b);
        bm(b, list);
        ng_idset_done(set);
        ck_assert_int_eq(ng_idset_from_bitmap(b, set), 0);
        free(b);
}

static inline void mi_set(struct ng_meminfo *m, const char *key, uint64_t value)
{
        for (size_t i = 0; i < m->n; i++)
                if (!strcmp(m->f[i].key, key)) {
                        m->f[i].value = value;
                        return;
                }
        ck_assert_uint_lt(m->n, NG_MEMINFO_MAX_FIELDS);
        snprintf(m->f[m->n].key, sizeof(m->f[m->n].key), "%s", key);
        m->f[m->n].value = value;
        m->f[m->n++].kib = true;
}

/* n nodes, cpus_per_node CPUs each (0 = memory-only after the first
 * node_with_cpus nodes), distance 10 local / dist remote, mem_kib each. */
static inline struct ng_snapshot *snap_new(int n, int cpus_per_node, int nodes_with_cpus, uint64_t dist, uint64_t mem_kib)
{
        struct ng_snapshot *s = ng_snapshot_alloc();
        ck_assert_ptr_nonnull(s);
        s->topo.numa_sysfs = true;
        s->topo.nodes = xcalloc((size_t) n, sizeof(*s->topo.nodes));
        s->topo.n_nodes = (size_t) n;
        s->has_meminfo = true;
        mi_set(&s->meminfo, "MemTotal", mem_kib * (uint64_t) n);
        mi_set(&s->meminfo, "MemFree", mem_kib * (uint64_t) n / 2);
        mi_set(&s->meminfo, "PageTables", 1024);
        mi_set(&s->meminfo, "Hugepagesize", 2048);
        s->knobs.numa_balancing = 0;
        s->knobs.zone_reclaim_mode = -1;
        s->knobs.hugetlb_shm_group = -1;
        s->topo.demotion_enabled = -1;
        s->libnuma_so = -1;
        s->placement = NG_PLACEMENT_EXACT;
        int cpu = 0;
        for (int i = 0; i < n; i++) {
                struct ng_node *nd = &s->topo.nodes[i];
                nd->id = i;
                /* One socket per node with CPUs, no memory tiers. */
                nd->package_id = i < nodes_with_cpus ? i : -1;
                nd->tier = -1;
                ng_bitmap_set(&s->topo.online, (unsigned) i);
                if (i < nodes_with_cpus)
                        for (int c = 0; c < cpus_per_node; c++) {
                                ng_bitmap_set(&nd->cpus, (unsigned) cpu);
                                ng_bitmap_set(&s->topo.cpus_online, (unsigned) cpu++);
                        }
                nd->distance = xcalloc((size_t) n, sizeof(*nd->distance));
                nd->n_distance = (size_t) n;
                for (int j = 0; j < n; j++)
                        nd->distance[j] = i == j ? 10 : dist;
                nd->has_meminfo = nd->has_memory = true;
                mi_set(&nd->meminfo, "MemTotal", mem_kib);
                mi_set(&nd->meminfo, "MemFree", mem_kib / 2);
        }
        return s;
}

/* The firmware's HMAT for node's memory, access class k: read and write
 * latency lat_ns, bandwidth mbps (NG_HMAT_UNKNOWN: not given) from the
 * best initiators in the list. */
static inline void snap_hmat(struct ng_snapshot *s, int node, unsigned k, const char *initiators, int64_t lat_ns,
                             int64_t mbps)
{
        struct ng_hmat_access *a = &s->topo.nodes[node].access[k];
        *a = (struct ng_hmat_access) { .present = true, .read_latency_ns = lat_ns, .write_latency_ns = lat_ns,
                .read_bandwidth_mbps = mbps, .write_bandwidth_mbps = mbps };
        bm(&a->initiators, initiators);
}

/* Memory tier id holding the nodes in list (appended; ids ascending). */
static inline void snap_tier(struct ng_snapshot *s, int id, const char *list)
{
        struct ng_memory_tier *mt = &s->topo.tiers[s->topo.n_tiers++];
        mt->id = id;
        bm(&mt->nodes, list);
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (ng_bitmap_test(&mt->nodes, (unsigned) s->topo.nodes[i].id))
                        s->topo.nodes[i].tier = id;
}

/* Global and per-node pools of page_kib: nr/free per node each. */
static inline void snap_pool(struct ng_snapshot *s, uint64_t page_kib, uint64_t nr_per_node, uint64_t free_per_node,
                             uint64_t resv)
{
        struct ng_hugepool *g = &s->pools[s->n_pools++];
        *g = (struct ng_hugepool) { .page_kib = page_kib, .resv_pages = resv };
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                struct ng_node *nd = &s->topo.nodes[i];
                nd->pools[nd->n_pools++] = (struct ng_hugepool) {
                        .page_kib = page_kib, .nr_pages = nr_per_node, .free_pages = free_per_node };
                g->nr_pages += nr_per_node;
                g->free_pages += free_per_node;
        }
}

static inline struct ng_proc *snap_proc(struct ng_snapshot *s, pid_t pid, pid_t ppid, const char *comm,
                                        const char *cpus, const char *mems)
{
        s->procs = realloc(s->procs, (s->n_procs + 1) * sizeof(*s->procs));
        ck_assert_ptr_nonnull(s->procs);
        struct ng_proc *pr = ng_proc_alloc();
        ck_assert_ptr_nonnull(pr);
        s->procs[s->n_procs++] = pr;
        pr->pid = pid;
        pr->stat.pid = pid;
        pr->stat.ppid = ppid;
        /* comm as the kernel keeps it, the whole name in argv[0]. */
        snprintf(pr->stat.comm, sizeof(pr->stat.comm), "%.*s", NG_COMM_MAX, comm);
        pr->cmdline = strdup(comm);
        ng_proc_set_name(pr);
        pr->status.has_cpus_allowed = pr->status.has_mems_allowed = true;
        idset(&pr->status.cpus_allowed, cpus);
        idset(&pr->status.mems_allowed, mems);
        return pr;
}

static inline void snap_shm(struct ng_snapshot *s, int32_t shmid, uint64_t bytes, uint64_t nattch, uint32_t perms)
{
        s->shm = realloc(s->shm, (s->n_shm + 1) * sizeof(*s->shm));
        ck_assert_ptr_nonnull(s->shm);
        s->shm[s->n_shm++] = (struct ng_shm_seg) {
                .key = 0x1000 + shmid, .shmid = shmid, .perms = 0600 | perms, .size_bytes = bytes,
                .nattch = nattch, .rss_bytes = bytes, .has_rss = true };
        s->has_sysvipc = true;
}

/* Maps SysV shmid into pr at start, with numa_maps pages per node given as
 * pairs {node, pages} (page_kib each); n_pairs == 0: no numa_maps line. */
static inline void snap_map_sysv(struct ng_proc *pr, int32_t shmid, uint64_t start, uint64_t bytes, uint64_t page_kib,
                                 const struct ng_node_pages *pairs, size_t n_pairs)
{
        pr->maps = realloc(pr->maps, (pr->n_maps + 1) * sizeof(*pr->maps));
        ck_assert_ptr_nonnull(pr->maps);
        pr->maps[pr->n_maps++] = (struct ng_map) {
                .start = start, .end = start + bytes, .read = true, .write = true, .shared = true,
                .dev_minor = page_kib > 4 ? 15 : 1, .inode = (uint64_t) shmid, .path = strdup("/SYSV00000000"),
                .deleted = true, .kind = NG_MAP_SYSV, .sysv_key = 0x1000 + shmid };
        if (n_pairs == 0)
                return;
        pr->numa_maps = realloc(pr->numa_maps, (pr->n_numa_maps + 1) * sizeof(*pr->numa_maps));
        ck_assert_ptr_nonnull(pr->numa_maps);
        struct ng_numa_map *nm = &pr->numa_maps[pr->n_numa_maps++];
        memset(nm, 0, sizeof(*nm));
        nm->start = start;
        nm->policy_nodes = strdup("");
        nm->file = strdup("/SYSV00000000\\040(deleted)");
        nm->huge = page_kib > 4;
        nm->kernelpagesize_kib = page_kib;
        nm->np = xcalloc(n_pairs, sizeof(*nm->np));
        memcpy(nm->np, pairs, n_pairs * sizeof(*pairs));
        nm->n_np = n_pairs;
        pr->has_numa_maps = true;
}

/* pr runs in the cgroup v2 path (its one "0::" entry). */
static inline void snap_proc_cgroup(struct ng_proc *pr, const char *path)
{
        pr->cgroup.e = xcalloc(1, sizeof(*pr->cgroup.e));
        pr->cgroup.n = 1;
        pr->cgroup.e[0] = (struct ng_cgroup_entry) { .hierarchy_id = 0, .controllers = strdup(""), .path = strdup(path) };
}

/* A cgroup v2 cpuset cgroup at path (/sys/fs/cgroup + path) with cpus and
 * mems; its processes join it with snap_proc_cgroup(). */
static inline struct ng_cgroup *snap_cgroup(struct ng_snapshot *s, const char *path, const char *cpus,
                                            const char *mems)
{
        s->cgroups = realloc(s->cgroups, (s->n_cgroups + 1) * sizeof(*s->cgroups));
        ck_assert_ptr_nonnull(s->cgroups);
        struct ng_cgroup *cg = &s->cgroups[s->n_cgroups++];
        char dir[256];
        memset(cg, 0, sizeof(*cg));
        snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", path);
        cg->path = strdup(path);
        cg->dir = strdup(dir);
        cg->version = 2;
        cg->has_cpuset = true;
        cg->memory_migrate = -1;
        bm(&cg->cpus, cpus);
        bm(&cg->effective_cpus, cpus);
        bm(&cg->mems, mems);
        bm(&cg->effective_mems, mems);
        return cg;
}

/* The cgroup2 mount at /sys/fs/cgroup, its super options as mountinfo
 * shows them ("rw,nsdelegate,memory_hugetlb_accounting"). */
static inline void snap_cgroup2_mount(struct ng_snapshot *s, const char *super_options)
{
        s->mounts = realloc(s->mounts, (s->n_mounts + 1) * sizeof(*s->mounts));
        ck_assert_ptr_nonnull(s->mounts);
        s->mounts[s->n_mounts++] = (struct ng_mount) {
                .id = 40, .parent_id = 32, .root = strdup("/"), .mountpoint = strdup("/sys/fs/cgroup"),
                .mount_options = strdup("rw,relatime"), .fstype = strdup("cgroup2"), .source = strdup("cgroup2"),
                .super_options = strdup(super_options),
        };
}

/* cg's memory controller: memory.max (UINT64_MAX "max"), memory.current,
 * memory.stat's hugetlb (UINT64_MAX: no such line). */
static inline void snap_cgroup_memory(struct ng_cgroup *cg, uint64_t max, uint64_t current, uint64_t hugetlb)
{
        cg->memory.known = true;
        cg->memory.max_bytes = max;
        cg->memory.current_bytes = current;
        cg->memory.hugetlb_known = hugetlb != UINT64_MAX;
        cg->memory.hugetlb_bytes = hugetlb != UINT64_MAX ? hugetlb : 0;
}

/* The collector and the segment builder against the committed snapshot trees
 * (tests/fixtures/trees/, captured in real NUMA guests by
 * tests/fixtures/capture-trees; see its README.md), plus synthetic broken
 * trees made in a temporary directory: collect must succeed or fail cleanly,
 * never crash or block. */

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-audit.h"
#include "ng-config.h"
#include "ng-report.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "ng-test.h"

#define TREES NG_FIXTURES "/trees/"

static struct ng_snapshot *load_opts(const char *root, const struct ng_collect_opts *o)
{
        struct ng_path *p = NULL;
        struct ng_snapshot *s = NULL;
        ck_assert_int_eq(ng_path_new(root, &p), 0);
        int r = ng_snapshot_collect(p, o, &s);
        ck_assert_msg(r == 0, "collecting %s: %s", root, strerror(-r));
        ng_path_free(p);
        return s;
}

static struct ng_snapshot *load(const char *tree)
{
        char root[512];
        snprintf(root, sizeof(root), TREES "%s", tree);
        struct stat st;
        ck_assert_msg(stat(root, &st) == 0, "fixture tree %s missing (tests/fixtures/capture-trees)", root);
        return load_opts(root, NULL);
}

static void ids_are(const struct ng_snapshot *s, const int *ids, size_t n)
{
        ck_assert_uint_eq(s->topo.n_nodes, n);
        for (size_t i = 0; i < n; i++) {
                ck_assert_int_eq(s->topo.nodes[i].id, ids[i]);
                ck_assert(ng_bitmap_test(&s->topo.online, (unsigned) ids[i]));
                ck_assert_ptr_eq(ng_snapshot_node(s, ids[i]), &s->topo.nodes[i]);
        }
        ck_assert_uint_eq(ng_bitmap_count(&s->topo.online), n);
}

static void cpus_are(const struct ng_snapshot *s, int node, const char *list)
{
        const struct ng_node *nd = ng_snapshot_node(s, node);
        ck_assert_ptr_nonnull(nd);
        char buf[256];
        ng_bitmap_format_list(&nd->cpus, buf, sizeof(buf));
        ck_assert_msg(!strcmp(buf, list), "node %d cpus '%s', expected '%s'", node, buf, list);
}

static const struct ng_hugepool *pool(const struct ng_node *nd, uint64_t page_kib)
{
        for (size_t i = 0; i < nd->n_pools; i++)
                if (nd->pools[i].page_kib == page_kib)
                        return &nd->pools[i];
        return NULL;
}

/* ---- segments ---- */

struct segs {
        struct ng_segment *v;
        size_t n;
};

static struct segs build(const struct ng_snapshot *s)
{
        struct segs g = {0};
        ck_assert_int_eq(ng_segments_build(s, &g.v, &g.n), 0);
        return g;
}

static const struct ng_segment *sysv(const struct segs *g, int32_t shmid)
{
        for (size_t i = 0; i < g->n; i++)
                if (g->v[i].kind == NG_SEG_SYSV && g->v[i].shmid == shmid)
                        return &g->v[i];
        ck_abort_msg("no SysV segment with shmid %d", shmid);
        return NULL;
}

static const struct ng_segment *named(const struct segs *g, enum ng_seg_kind kind, const char *name)
{
        for (size_t i = 0; i < g->n; i++)
                if (g->v[i].kind == kind && !strcmp(g->v[i].name, name))
                        return &g->v[i];
        ck_abort_msg("no %s segment named %s", ng_seg_kind_name(kind), name);
        return NULL;
}

/* Everything of seg (bytes, resident, page size) on one node, exactly. */
static void all_on(const struct ng_segment *seg, int node, uint64_t mib, uint64_t page_kib)
{
        ck_assert_msg(seg->method == NG_METHOD_EXACT, "%s: placement %s, expected exact", seg->name,
                      ng_method_name(seg->method));
        ck_assert_uint_eq(seg->bytes, mib << 20);
        ck_assert_uint_eq(seg->resident_bytes, mib << 20);
        ck_assert_uint_eq(seg->page_kib, page_kib);
        ck_assert_uint_eq(ng_segment_node_bytes(seg, node), mib << 20);
        ck_assert_uint_eq(seg->n_nodes, 1);
        ck_assert_int_eq(seg->nodes[0].node, node);
        ck_assert_int_ne(seg->rep_pid, 0);
}

/* Interleaved over n_nodes nodes: each holds 1/n of it, within one page. */
static void interleaved(const struct ng_segment *seg, const struct ng_snapshot *s, uint64_t mib)
{
        ck_assert_int_eq(seg->method, NG_METHOD_EXACT);
        ck_assert_uint_eq(seg->bytes, mib << 20);
        ck_assert_uint_eq(seg->resident_bytes, mib << 20);
        ck_assert_uint_eq(seg->n_nodes, s->topo.n_nodes);
        uint64_t share = (mib << 20) / s->topo.n_nodes, sum = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                uint64_t b = ng_segment_node_bytes(seg, s->topo.nodes[i].id);
                ck_assert_msg(b + 4096 >= share && b <= share + 4096, "%s: node %d holds %llu, expected ~%llu",
                              seg->name, s->topo.nodes[i].id, (unsigned long long) b, (unsigned long long) share);
                sum += b;
        }
        ck_assert_uint_eq(sum, mib << 20);
}

/* ---- the 4-node guests (cgroup v2 and v1) ---- */

static void check_guest4(const char *tree, int cg_version)
{
        struct ng_snapshot *s = load(tree);
        static const int ids[] = { 0, 1, 2, 3 };
        ids_are(s, ids, 4);
        ck_assert(s->topo.numa_sysfs);
        for (int n = 0; n < 4; n++) {
                char l[8];
                snprintf(l, sizeof(l), "%d", n);
                cpus_are(s, n, l);
                for (int m = 0; m < 4; m++)
                        ck_assert_int_eq(ng_snapshot_distance(s, n, m), n == m ? 10 : 21);
                const struct ng_node *nd = ng_snapshot_node(s, n);
                ck_assert(nd->has_cpu && nd->has_memory && nd->has_meminfo);
                ck_assert_uint_gt(ng_meminfo_value(&nd->meminfo, "MemTotal"), 400u * 1024);
                const struct ng_hugepool *hp = pool(nd, 2048);
                ck_assert_ptr_nonnull(hp);
                /* 2 pages reserved per node, 8 on node 1 with 4 in use */
                ck_assert_uint_eq(hp->nr_pages, n == 1 ? 8 : 2);
                ck_assert_uint_eq(hp->free_pages, n == 1 ? 4 : 2);
        }
        ck_assert(s->has_sysvipc);

        struct segs g = build(s);
        all_on(sysv(&g, 0), 3, 8, 4);                   /* --membind=3 */
        interleaved(sysv(&g, 1), s, 16);                /* --interleave=all */
        const struct ng_segment *h = sysv(&g, 2);       /* SHM_HUGETLB, --membind=1 */
        all_on(h, 1, 8, 2048);
        ck_assert(h->huge);
        const struct ng_segment *c = sysv(&g, 3);       /* in the cpuset cgroup */
        all_on(c, 3, 8, 4);
        all_on(named(&g, NG_SEG_FILE, "/dev/shm/ora_ORCL_granule_1"), 2, 4, 4);
        interleaved(named(&g, NG_SEG_ANON_SHARED, "/dev/zero (deleted)"), s, 8);
        for (size_t i = 0; i < g.n; i++)
                ck_assert_uint_eq(g.v[i].nattch, 2);    /* the workload and its child */

        /* The cgroup: cpus of node 0, memory on node 3. */
        const struct ng_cgroup *cg = ng_snapshot_cgroup(s, "/oracle");
        ck_assert_ptr_nonnull(cg);
        ck_assert_int_eq(cg->version, cg_version);
        ck_assert(cg->has_cpuset);
        char cpus[64], mems[64], ecpus[64], emems[64];
        ng_bitmap_format_list(&cg->cpus, cpus, sizeof(cpus));
        ng_bitmap_format_list(&cg->mems, mems, sizeof(mems));
        ng_bitmap_format_list(&cg->effective_cpus, ecpus, sizeof(ecpus));
        ng_bitmap_format_list(&cg->effective_mems, emems, sizeof(emems));
        ck_assert_str_eq(cpus, "0");
        ck_assert_str_eq(mems, "3");
        ck_assert_str_eq(ecpus, "0");
        ck_assert_str_eq(emems, "3");
        ck_assert_str_eq(cg->dir, cg_version == 2 ? "/sys/fs/cgroup/oracle" : "/sys/fs/cgroup/cpuset/oracle");
        if (cg_version == 1)
                ck_assert_int_eq(cg->memory_migrate, 0);
        else
                ck_assert_int_eq(cg->memory_migrate, -1);
        /* Its processes are the attachers of the cgroup's segment, and
         * their status says what the kernel confined them to. */
        ck_assert_uint_eq(c->n_pids, 2);
        for (size_t i = 0; i < c->n_pids; i++) {
                const struct ng_proc *pr = ng_snapshot_proc(s, c->pids[i]);
                ck_assert_ptr_nonnull(pr);
                const char *path = cg_version == 2 ? ng_pid_cgroup_v2_path(&pr->cgroup)
                                                   : ng_pid_cgroup_v1_path(&pr->cgroup, "cpuset");
                ck_assert_ptr_nonnull(path);
                ck_assert_str_eq(path, "/oracle");
        }
        /* ... and nobody else is in it. */
        for (size_t i = 0; i < g.n; i++) {
                if (&g.v[i] == c)
                        continue;
                for (size_t k = 0; k < g.v[i].n_pids; k++) {
                        const struct ng_proc *pr = ng_snapshot_proc(s, g.v[i].pids[k]);
                        const char *path = cg_version == 2 ? ng_pid_cgroup_v2_path(&pr->cgroup)
                                                           : ng_pid_cgroup_v1_path(&pr->cgroup, "cpuset");
                        ck_assert(path && strcmp(path, "/oracle"));
                }
        }
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);
}

START_TEST(test_guest4_v2)
{
        check_guest4("guest4-v2", 2);
}
END_TEST

START_TEST(test_guest4_v1)
{
        check_guest4("guest4-v1", 1);
}
END_TEST

/* Who owns a /dev/shm file in a tree: the snapshot's record
 * (numaguard/shm-owners-MAJOR-MINOR), never the copy's owner, which is
 * whoever unpacked the tree; a line that is not "UID /PATH" is left out.
 * shm_owner then claims the file for its instance, as a SysV segment. */
START_TEST(test_shm_file_owner_from_the_record)
{
        struct ng_snapshot *s = load("guest4-v2");
        const char *name = "/dev/shm/ora_ORCL_granule_1";
        for (size_t i = 0; i < s->n_files; i++)
                ck_assert_uint_eq(s->files[i].uid, 0);  /* no record: unknown */
        ng_snapshot_free(s);

        char dir[] = "/tmp/ng-test-owners.XXXXXX", cmd[1024], rec[600];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s/t'", TREES "guest4-v2", dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(rec, sizeof(rec), "%s/t/numaguard/shm-owners-0-30", dir);
        FILE *f = fopen(rec, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "garbage\n7 relative/path\n99999999999 %s\n54321 %s\n-1 %s", name, name, name);
        fclose(f);
        snprintf(rec, sizeof(rec), "%s/t", dir);
        s = load_opts(rec, NULL);
        bool seen = false;
        for (size_t i = 0; i < s->n_files; i++) {
                if (strcmp(s->files[i].path, name))
                        continue;
                ck_assert_uint_eq(s->files[i].uid, 54321);
                seen = true;
        }
        ck_assert(seen);
        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_load_string("[instance ORCL]\nshm_owner = 54321\n", "t.conf", NULL, NULL, &cfg), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        const struct ng_instance *in = ng_audit_instance(a, "ORCL");
        ck_assert_ptr_nonnull(in);
        bool claimed = false;
        for (size_t k = 0; k < in->n_segs; k++)
                claimed |= a->segments[in->segs[k]].kind == NG_SEG_FILE && !strcmp(a->segments[in->segs[k]].name, name);
        ck_assert(claimed);
        ng_audit_free(a);
        ng_config_free(cfg);
        ng_snapshot_free(s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static void write_file(const char *dir, const char *rel, const char *text)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        FILE *f = fopen(path, "w");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static const struct ng_problem *problem_of(const struct ng_snapshot *s, const char *path_end)
{
        size_t n = strlen(path_end);
        for (size_t i = 0; i < s->n_problems && i < NG_MAX_PROBLEMS; i++) {
                size_t l = strlen(s->problems[i].path);
                if (l >= n && !strcmp(s->problems[i].path + l - n, path_end))
                        return &s->problems[i];
        }
        return NULL;
}

/* What a snapshot keeps of a /dev/shm file (numaguard/shm-files-MAJOR-
 * MINOR): the tree's copies are empty, the sizes, allocated bytes and
 * owners come from the record, names escaped there (a newline). A copy
 * without a line is none of the live host's (another name of a file it
 * kept); a line without a copy, and what the snapshot could not take
 * (numaguard/incomplete), are problems that name the file. */
START_TEST(test_shm_files_from_the_record)
{
        char dir[] = "/tmp/ng-test-files.XXXXXX", cmd[1024], t[600];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s/t'", TREES "guest4-v2", dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(t, sizeof(t), "%s/t", dir);
        write_file(t, "dev/shm/ora_ORCL_granule_1", "");
        write_file(t, "dev/shm/new\nline", "");
        write_file(t, "dev/shm/other-name", "");
        write_file(t, "numaguard/shm-files-0-30",
                   "54321 1073741824 8192 /dev/shm/ora_ORCL_granule_1\n"
                   "garbage\n"
                   "7 9223372036854775807 0 /dev/shm/new\\x0aline\n"
                   "8 4096 4096 /dev/shm/lost\\x09name\n");
        write_file(t, "numaguard/incomplete", "/dev/shm/caf\\xc3\\xa9\tnot in this snapshot: staging it failed "
                   "(File name too long)\nno-path\n");
        struct ng_snapshot *s = load_opts(t, NULL);
        ck_assert_uint_eq(s->n_files, 2);
        for (size_t i = 0; i < s->n_files; i++) {
                const struct ng_shm_file *f = &s->files[i];
                if (!strcmp(f->path, "/dev/shm/ora_ORCL_granule_1")) {
                        ck_assert_uint_eq(f->size_bytes, 1073741824);
                        ck_assert_uint_eq(f->allocated_bytes, 8192);
                        ck_assert_uint_eq(f->uid, 54321);
                } else {
                        ck_assert_str_eq(f->path, "/dev/shm/new\nline");
                        ck_assert_uint_eq(f->size_bytes, INT64_MAX);
                        ck_assert_uint_eq(f->allocated_bytes, 0);
                        ck_assert_uint_eq(f->uid, 7);
                }
        }
        const struct ng_problem *pb = problem_of(s, "/dev/shm/lost\tname");
        ck_assert_ptr_nonnull(pb);
        ck_assert_msg(strstr(pb->reason, "not in the tree") != NULL, "%s", pb->reason);
        pb = problem_of(s, "/dev/shm/caf\xc3\xa9");
        ck_assert_ptr_nonnull(pb);
        ck_assert_str_eq(pb->reason, "not in this snapshot: staging it failed (File name too long)");
        pb = problem_of(s, "/numaguard/incomplete");
        ck_assert_ptr_nonnull(pb);
        ck_assert_str_eq(pb->reason, "a line that names no file: not in this snapshot");
        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_load_string("", "t.conf", NULL, NULL, &cfg), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        size_t incomplete = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                incomplete += a->findings[i].code == NG_CODE_AUDIT_INCOMPLETE &&
                              strstr(a->findings[i].message, "not in this snapshot: staging it failed") != NULL;
        ck_assert_uint_eq(incomplete, 1);
        ng_audit_free(a);
        ng_config_free(cfg);
        ng_snapshot_free(s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Topology only (what `numaguardctl topology` collects) is the same. */
START_TEST(test_guest4_skip_procs)
{
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.skip_procs = true;
        struct ng_snapshot *s = load_opts(TREES "guest4-v2", &o);
        ck_assert_uint_eq(s->topo.n_nodes, 4);
        ck_assert_uint_eq(s->n_procs, 0);
        ck_assert_uint_eq(s->n_shm, 0);
        ck_assert_int_eq(ng_snapshot_distance(s, 3, 0), 21);
        ng_snapshot_free(s);
}
END_TEST

/* ---- 8 nodes, near pairs at 12, far at 22 ---- */

START_TEST(test_guest8_asym)
{
        struct ng_snapshot *s = load("guest8-asym");
        static const int ids[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
        ids_are(s, ids, 8);
        for (int a = 0; a < 8; a++) {
                const struct ng_node *nd = ng_snapshot_node(s, a);
                ck_assert_uint_eq(nd->n_distance, 8);
                for (int b = 0; b < 8; b++) {
                        int want = a == b ? 10 : (a / 2 == b / 2 ? 12 : 22);
                        ck_assert_msg(ng_snapshot_distance(s, a, b) == want, "distance %d->%d is %d, expected %d",
                                      a, b, ng_snapshot_distance(s, a, b), want);
                        enum ng_distance_class c = ng_distance_class(s, a, b);
                        enum ng_distance_class wc = a == b ? NG_DIST_LOCAL : (want == 12 ? NG_DIST_NEAR : NG_DIST_FAR);
                        ck_assert_msg(c == wc, "class %d->%d is %s, expected %s", a, b, ng_distance_class_name(c),
                                      ng_distance_class_name(wc));
                }
        }
        ck_assert_str_eq(ng_distance_class_name(ng_distance_class(s, 0, 1)), "near");
        ck_assert_str_eq(ng_distance_class_name(ng_distance_class(s, 1, 2)), "far");
        ck_assert_int_eq(ng_snapshot_distance(s, 0, 8), -1);    /* no node 8 */

        struct segs g = build(s);
        all_on(sysv(&g, 0), 6, 4, 4);
        interleaved(sysv(&g, 1), s, 16);
        all_on(sysv(&g, 2), 5, 4, 2048);
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);
}
END_TEST

/* ---- 4 nodes, 2 CPUs: nodes 2 and 3 have memory only ---- */

START_TEST(test_guest_memonly)
{
        struct ng_snapshot *s = load("guest-memonly");
        static const int ids[] = { 0, 1, 2, 3 };
        ids_are(s, ids, 4);
        cpus_are(s, 0, "0");
        cpus_are(s, 1, "1");
        cpus_are(s, 2, "");
        cpus_are(s, 3, "");
        for (int n = 0; n < 4; n++) {
                const struct ng_node *nd = ng_snapshot_node(s, n);
                ck_assert(nd->has_memory);
                ck_assert(nd->has_cpu == (n < 2));
                ck_assert(ng_bitmap_empty(&nd->cpus) == (n >= 2));
        }
        ck_assert_uint_eq(ng_bitmap_count(&s->topo.cpus_online), 2);

        struct segs g = build(s);
        all_on(sysv(&g, 0), 3, 4, 4);
        all_on(sysv(&g, 1), 3, 4, 2048);
        all_on(named(&g, NG_SEG_FILE, "/dev/shm/PostgreSQL.1804289383"), 2, 4, 4);
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);
}
END_TEST

/* ---- the firmware's HMAT, sub-NUMA clusters, a memory tier ---- */

static void hmat_is(const struct ng_node *nd, unsigned k, const char *initiators, int64_t ns, int64_t mbps)
{
        const struct ng_hmat_access *a = &nd->access[k];
        struct ng_bitmap want = {0};
        ck_assert_int_eq(ng_bitmap_parse_list(initiators, &want), 0);
        ck_assert_msg(a->present, "node %d access%u missing", nd->id, k);
        ck_assert(ng_bitmap_equal(&a->initiators, &want));
        ck_assert_int_eq(a->read_latency_ns, ns);
        ck_assert_int_eq(a->write_latency_ns, ns);
        ck_assert_int_eq(a->read_bandwidth_mbps, mbps);
        ck_assert_int_eq(a->write_bandwidth_mbps, mbps);
}

START_TEST(test_guest_hmat)
{
        struct ng_snapshot *s = load("guest-hmat");
        static const int ids[] = { 0, 1, 2, 3 };
        ids_are(s, ids, 4);
        static const struct { const char *init; int64_t ns, mbps; int package; } want[] = {
                { "0", 100, 20000, 0 }, { "1", 100, 20000, 0 }, { "0", 300, 8000, -1 }, { "0", 150, 16000, -1 },
        };
        for (int n = 0; n < 4; n++) {
                const struct ng_node *nd = ng_snapshot_node(s, n);
                for (unsigned k = 0; k < NG_HMAT_ACCESS_CLASSES; k++)
                        hmat_is(nd, k, want[n].init, want[n].ns, want[n].mbps);
                ck_assert_int_eq(nd->package_id, want[n].package);
                ck_assert_int_eq(nd->tier, 4);
                ck_assert_uint_eq(nd->n_caches, n == 2 ? 1 : 0);
        }
        const struct ng_mem_cache *mc = &ng_snapshot_node(s, 2)->caches[0];
        ck_assert_uint_eq(mc->level, 1);
        ck_assert_int_eq(mc->size_bytes, 64 << 20);
        ck_assert_int_eq(mc->line_size_bytes, 64);
        ck_assert_int_eq(mc->indexing, 0);
        ck_assert_int_eq(mc->write_policy, 0);
        ck_assert_ptr_nonnull(ng_snapshot_hmat(s, 0, 2));
        ck_assert_ptr_null(ng_snapshot_hmat(s, 1, 2));
        ck_assert(ng_snapshot_same_socket(s, 0, 1));
        ck_assert(!ng_snapshot_same_socket(s, 0, 2));
        ck_assert_uint_eq(s->topo.n_tiers, 1);
        ck_assert_int_eq(s->topo.tiers[0].id, 4);
        ck_assert_uint_eq(ng_bitmap_count(&s->topo.tiers[0].nodes), 4);
        ck_assert_int_eq(s->topo.demotion_enabled, 0);
        ck_assert_uint_eq(s->n_problems, 0);

        struct segs g = build(s);
        all_on(sysv(&g, 0), 2, 32, 4);
        all_on(sysv(&g, 1), 1, 32, 4);
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);

        /* A tree from before HMAT, tiers and sockets were read: unknown. */
        s = load("guest-memonly");
        ck_assert(!ng_snapshot_has_hmat(s));
        ck_assert_int_eq(ng_snapshot_node(s, 0)->package_id, -1);
        ck_assert_int_eq(ng_snapshot_node(s, 0)->tier, -1);
        ck_assert_uint_eq(s->topo.n_tiers, 0);
        ck_assert_int_eq(s->topo.demotion_enabled, -1);
        ng_snapshot_free(s);
}
END_TEST

/* ---- 2 nodes x 2 GiB, a 1 GiB pool on node 1, in use ---- */

START_TEST(test_guest_1g)
{
        struct ng_snapshot *s = load("guest-1g");
        static const int ids[] = { 0, 1 };
        ids_are(s, ids, 2);
        const struct ng_hugepool *g0 = pool(ng_snapshot_node(s, 0), 1048576);
        const struct ng_hugepool *g1 = pool(ng_snapshot_node(s, 1), 1048576);
        ck_assert_ptr_nonnull(g0);
        ck_assert_ptr_nonnull(g1);
        ck_assert_uint_eq(g0->nr_pages, 0);
        ck_assert_uint_eq(g1->nr_pages, 1);
        ck_assert_uint_eq(g1->free_pages, 0);           /* the 1 GiB segment */
        for (int n = 0; n < 2; n++) {
                const struct ng_hugepool *m = pool(ng_snapshot_node(s, n), 2048);
                ck_assert_ptr_nonnull(m);
                ck_assert_uint_eq(m->nr_pages, 16);
                ck_assert_uint_eq(m->free_pages, n == 0 ? 12 : 16);
        }
        /* global pools, ascending page size */
        ck_assert_uint_eq(s->n_pools, 2);
        ck_assert_uint_eq(s->pools[0].page_kib, 2048);
        ck_assert_uint_eq(s->pools[0].nr_pages, 32);
        ck_assert_uint_eq(s->pools[1].page_kib, 1048576);
        ck_assert_uint_eq(s->pools[1].nr_pages, 1);

        struct segs g = build(s);
        const struct ng_segment *big = sysv(&g, 0);
        all_on(big, 1, 1024, 1048576);
        ck_assert(big->huge);
        all_on(sysv(&g, 1), 0, 8, 2048);
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);
}
END_TEST

/* ---- 64 nodes ---- */

START_TEST(test_guest64)
{
        struct stat st;
        ck_assert_msg(stat(TREES "guest64", &st) == 0, "fixture tree guest64 missing");
        struct ng_snapshot *s = load("guest64");
        ck_assert_uint_eq(s->topo.n_nodes, 64);
        for (int n = 0; n < 64; n++) {
                ck_assert_int_eq(s->topo.nodes[n].id, n);
                ck_assert_uint_eq(s->topo.nodes[n].n_distance, 64);
                ck_assert_int_eq(ng_snapshot_distance(s, n, 63 - n), n == 63 - n ? 10 : 21);
                ck_assert(ng_bitmap_empty(&s->topo.nodes[n].cpus) == (n >= 4));
        }
        struct segs g = build(s);
        /* --interleave=all over 64 nodes of 64 MiB: node 0 (where the
         * kernel lives) had no free page, the kernel fell back to node 1
         * for its share; every other node holds exactly 1/64. */
        const struct ng_segment *il = sysv(&g, 0);
        ck_assert_int_eq(il->method, NG_METHOD_EXACT);
        ck_assert_uint_eq(il->resident_bytes, 16u << 20);
        ck_assert_uint_eq(ng_segment_node_bytes(il, 0), 0);
        ck_assert_uint_eq(ng_segment_node_bytes(il, 1), 512u << 10);
        for (int n = 2; n < 64; n++)
                ck_assert_uint_eq(ng_segment_node_bytes(il, n), 256u << 10);
        ck_assert_uint_eq(il->n_nodes, 63);
        all_on(sysv(&g, 1), 63, 4, 4);
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);
}
END_TEST

/* ---- this host, pruned to the workload's processes ---- */

START_TEST(test_host)
{
        struct ng_snapshot *s = load("host");
        ck_assert_uint_ge(s->topo.n_nodes, 1);
        ck_assert_uint_eq(s->n_procs, 2);               /* the workload and its child */
        struct segs g = build(s);
        const struct ng_segment *w = NULL;
        for (size_t i = 0; i < g.n; i++)
                if (g.v[i].kind == NG_SEG_SYSV && g.v[i].n_pids == 2)
                        w = &g.v[i];
        ck_assert_ptr_nonnull(w);
        all_on(w, s->topo.nodes[0].id, 4, 4);
        ng_segments_free(g.v, g.n);
        ng_snapshot_free(s);
}
END_TEST

/* ---- synthetic broken trees ---- */

static char tmpl[] = "/tmp/ng-test-snapshot.XXXXXX";
static const char *troot;

static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", troot, rel);
        for (char *q = path + strlen(troot) + 1; (q = strchr(q, '/')); q++) {
                *q = '\0';
                mkdir(path, 0755);
                *q = '/';
        }
        FILE *f = fopen(path, "we");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fclose(f);
}

static void rm_tree(void)
{
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", troot);
        ck_assert_int_eq(system(cmd), 0);
}

static void mk_tree(void)
{
        strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
        troot = mkdtemp(tmpl);
        ck_assert_ptr_nonnull(troot);
}

/* ---- node ids with a gap ----
 * Linux never onlines a node with neither CPU nor memory at boot, so a gap
 * comes from offlining: derived from the real 4-node capture as the kernel
 * shows it once node 1 (CPU 1 and its memory) went offline -- node1/ gone,
 * the lists without 1, each distance row one column shorter (rows list the
 * online nodes), possible unchanged. */
START_TEST(test_node_id_gap)
{
        char cmd[512], path[512];
        mk_tree();
        snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s' && rm -rf '%s/sys/devices/system/node/node1'",
                 TREES "guest4-v2", troot, troot);
        ck_assert_int_eq(system(cmd), 0);
        static const char *const lists[] = { "online", "has_cpu", "has_memory", "has_normal_memory" };
        for (size_t i = 0; i < 4; i++) {
                snprintf(path, sizeof(path), "sys/devices/system/node/%s", lists[i]);
                put(path, "0,2-3\n");
        }
        put("sys/devices/system/cpu/online", "0,2-3\n");
        put("sys/devices/system/node/node0/distance", "10 21 21\n");
        put("sys/devices/system/node/node2/distance", "21 10 21\n");
        put("sys/devices/system/node/node3/distance", "21 21 10\n");

        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.skip_procs = true;
        struct ng_snapshot *s = load_opts(troot, &o);
        static const int ids[] = { 0, 2, 3 };
        ids_are(s, ids, 3);
        ck_assert_ptr_null(ng_snapshot_node(s, 1));
        ck_assert(ng_bitmap_test(&s->topo.possible, 1));
        ck_assert_int_eq(ng_snapshot_distance(s, 0, 2), 21);
        ck_assert_int_eq(ng_snapshot_distance(s, 0, 3), 21);
        ck_assert_int_eq(ng_snapshot_distance(s, 2, 2), 10);
        ck_assert_int_eq(ng_snapshot_distance(s, 0, 1), -1);
        cpus_are(s, 0, "0");
        cpus_are(s, 3, "3");
        ck_assert_uint_eq(ng_bitmap_count(&s->topo.cpus_online), 3);
        /* the report names the real ids, not positions */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(ng_report_topology_text(s, f), 0);
        fclose(f);
        ck_assert_msg(strstr(buf, "3 nodes online (0,2-3)") && strstr(buf, "\n   3  3 "), "%s", buf);
        free(buf);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* cgroup v2 hugetlb.<size>.numa_stat: the real file of a 4-node guest
 * (tests/fixtures/text) placed in the captured /oracle cgroup. */
START_TEST(test_cgroup_hugetlb_numa_stat)
{
        char cmd[512];
        mk_tree();
        snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s' && cp '%s' '%s/sys/fs/cgroup/oracle/hugetlb.2MB.numa_stat'",
                 TREES "guest4-v2", troot, NG_FIXTURES "/text/guest4-cgroup-v2-hugetlb.2MB.numa_stat", troot);
        ck_assert_int_eq(system(cmd), 0);
        struct ng_snapshot *s = load_opts(troot, NULL);
        const struct ng_cgroup *cg = ng_snapshot_cgroup(s, "/oracle");
        ck_assert_ptr_nonnull(cg);
        ck_assert_uint_eq(cg->n_hugetlb_numa_stat, 1);
        ck_assert_uint_eq(cg->hugetlb_numa_stat[0].page_kib, 2048);
        ck_assert_uint_eq(cg->hugetlb_numa_stat[0].n, 1);
        const struct ng_numa_stat_line *l = &cg->hugetlb_numa_stat[0].lines[0];
        ck_assert_str_eq(l->key, "total");
        ck_assert_uint_eq(l->total, 16777216);
        ck_assert_uint_eq(l->n_np, 4);
        ck_assert_int_eq(l->np[1].node, 1);
        ck_assert_uint_eq(l->np[1].pages, 10485760);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* A minimal sane 2-node tree. */
static void base_tree(void)
{
        mk_tree();
        put("proc/meminfo", "MemTotal:        2048000 kB\nMemFree:         1024000 kB\nHugepagesize:       2048 kB\n");
        put("sys/devices/system/cpu/online", "0-1\n");
        put("sys/devices/system/node/online", "0-1\n");
        put("sys/devices/system/node/possible", "0-1\n");
        put("sys/devices/system/node/has_cpu", "0-1\n");
        put("sys/devices/system/node/has_memory", "0-1\n");
        put("sys/devices/system/node/has_normal_memory", "0-1\n");
        for (int n = 0; n < 2; n++) {
                char rel[128];
                snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/cpulist", n);
                put(rel, "%d\n", n);
                snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/distance", n);
                put(rel, n ? "21 10\n" : "10 21\n");
                snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/meminfo", n);
                put(rel, "Node %d MemTotal:       1024000 kB\nNode %d MemFree:         512000 kB\n", n, n);
                snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages", n);
                put(rel, "4\n");
                snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/hugepages/hugepages-2048kB/free_hugepages", n);
                put(rel, "4\n");
        }
}

/* collect: 0 with a snapshot, or a clean -errno. Returns r. */
static int try_collect(struct ng_snapshot **ret)
{
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(troot, &p), 0);
        struct ng_snapshot *s = NULL;
        int r = ng_snapshot_collect(p, NULL, &s);
        ng_path_free(p);
        if (r < 0) {
                ck_assert_ptr_null(s);
                ck_assert_int_gt(-r, 0);
        } else {
                ck_assert_ptr_nonnull(s);
                /* whatever came out must be usable */
                struct segs g = build(s);
                FILE *devnull = fopen("/dev/null", "we");
                ck_assert_int_eq(ng_report_topology_text(s, devnull), 0);
                ck_assert_int_eq(ng_report_segments_text(s, g.v, g.n, devnull), 0);
                fclose(devnull);
                struct json_object *j = ng_report_topology_json(s);
                ck_assert_ptr_nonnull(j);
                json_object_put(j);
                ng_segments_free(g.v, g.n);
        }
        if (ret)
                *ret = s;
        else
                ng_snapshot_free(s);
        return r;
}

START_TEST(test_broken_base_sane)
{
        base_tree();
        struct ng_snapshot *s;
        ck_assert_int_eq(try_collect(&s), 0);
        static const int ids[] = { 0, 1 };
        ids_are(s, ids, 2);
        ck_assert_int_eq(ng_snapshot_distance(s, 1, 0), 21);
        ck_assert_uint_eq(pool(ng_snapshot_node(s, 1), 2048)->nr_pages, 4);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* No /sys/devices/system/node: one synthesized node 0 with every CPU. */
START_TEST(test_broken_no_node_dir)
{
        mk_tree();
        put("proc/meminfo", "MemTotal:        2048000 kB\nMemFree:         1024000 kB\n");
        put("sys/devices/system/cpu/online", "0-3\n");
        struct ng_snapshot *s;
        ck_assert_int_eq(try_collect(&s), 0);
        ck_assert(!s->topo.numa_sysfs);
        static const int ids[] = { 0 };
        ids_are(s, ids, 1);
        cpus_are(s, 0, "0-3");
        ck_assert_int_eq(ng_snapshot_distance(s, 0, 0), 10);
        ck_assert_uint_eq(ng_meminfo_value(&s->topo.nodes[0].meminfo, "MemTotal"), 2048000);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* A truncated distance row: fewer entries than nodes, or none at all. */
START_TEST(test_broken_truncated_distance)
{
        base_tree();
        put("sys/devices/system/node/node0/distance", "10");
        put("sys/devices/system/node/node1/distance", "%s", "");
        struct ng_snapshot *s;
        if (try_collect(&s) == 0) {
                ck_assert_uint_eq(s->topo.n_nodes, 2);
                /* a row is unknown as a whole, never read in part */
                ck_assert_int_eq(ng_snapshot_distance(s, 0, 0), -1);
                ck_assert_int_eq(ng_snapshot_distance(s, 0, 1), -1);
                ck_assert_uint_ge(s->n_problems, 2);
                ck_assert_int_eq(ng_snapshot_distance(s, 1, 0), -1);
                ng_snapshot_free(s);
        }
        put("sys/devices/system/node/node0/distance", "10 2");        /* cut mid-number */
        put("sys/devices/system/node/node1/distance", "21 10 21 21 21\n"); /* too long */
        try_collect(NULL);
        put("sys/devices/system/node/node0/distance", "ten twenty-one\n");
        try_collect(NULL);
        rm_tree();
}
END_TEST

START_TEST(test_broken_garbage_hugepages)
{
        base_tree();
        put("sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "lots\n");
        put("sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages", "-1\n");
        put("sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages", "99999999999999999999999\n");
        put("sys/devices/system/node/node1/hugepages/hugepages-banana/nr_hugepages", "1\n");
        put("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "\n");
        put("proc/sys/vm/nr_hugepages", "0x10\n");
        struct ng_snapshot *s;
        if (try_collect(&s) == 0) {
                ck_assert_uint_eq(s->topo.n_nodes, 2);
                /* the garbage pool is not taken at face value */
                const struct ng_hugepool *hp = pool(ng_snapshot_node(s, 0), 2048);
                ck_assert(hp == NULL || hp->nr_pages == 0);
                ng_snapshot_free(s);
        }
        rm_tree();
}
END_TEST

/* Processes: missing status, empty stat, garbage maps, numa_maps without maps. */
START_TEST(test_broken_procs)
{
        base_tree();
        put("proc/sysvipc/shm", "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n"
            "         0          7   600               4194304   100   100      1     0     0     0     0 1700000000          0 1700000000               4194304                     0\n");
        put("proc/100/stat", "100 (wl) S 1 100 100 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
        put("proc/100/cmdline", "wl");       /* no status file */
        put("proc/100/maps", "7f0000000000-7f0000400000 rw-s 00000000 00:01 7                          /SYSV00000000 (deleted)\n");
        put("proc/101/stat", "%s", "");
        put("proc/101/status", "Name:\twl\n");
        put("proc/102/stat", "102 (wl) S 1 102 102 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
        put("proc/102/status", "Name:\twl\nTgid:\t102\nPid:\t102\nPPid:\t1\nUid:\t0\t0\t0\t0\n");
        put("proc/102/maps", "garbage\n\n-\n7f0000000000-7f0000400000 rw-s zz 00:01 7 /SYSV00000000 (deleted)\n");
        put("proc/102/numa_maps", "7f0000000000 default file=/SYSV00000000\\040(deleted) dirty=1024 N0=1024 kernelpagesize_kB=4\n");
        put("proc/103/stat", "103 (wl) S 1 103 103 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
        put("proc/103/status", "Name:\twl\nTgid:\t103\nPid:\t103\nPPid:\t1\nUid:\t0\t0\t0\t0\n");
        put("proc/103/maps", "7f0000000000-7f0000400000 rw-s 00000000 00:01 7                          /SYSV00000000 (deleted)\n");
        put("proc/103/numa_maps", "7f0000000000 default file=/SYSV00000000\\040(deleted) dirty=1024 N1=512 N7=512 N-1=3 Nx=2 kernelpagesize_kB=4\n");
        put("proc/notapid/stat", "x");
        struct ng_snapshot *s;
        if (try_collect(&s) == 0) {
                ck_assert_ptr_null(ng_snapshot_proc(s, 100));  /* no status: dropped */
                ck_assert_ptr_null(ng_snapshot_proc(s, 101));
                ng_snapshot_free(s);
        }
        rm_tree();
}
END_TEST

/* A FIFO (or a directory) where a kernel file should be: the path layer
 * refuses non-regular files, so nothing blocks. */
START_TEST(test_broken_fifo)
{
        base_tree();
        char path[1024];
        snprintf(path, sizeof(path), "%s/proc/meminfo", troot);
        unlink(path);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        snprintf(path, sizeof(path), "%s/sys/devices/system/node/node1/meminfo", troot);
        unlink(path);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        snprintf(path, sizeof(path), "%s/sys/devices/system/node/node0/distance", troot);
        unlink(path);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        struct ng_snapshot *s;
        if (try_collect(&s) == 0) {
                ck_assert(!s->has_meminfo);
                ck_assert(!ng_snapshot_node(s, 1)->has_meminfo);
                ck_assert(ng_snapshot_node(s, 0)->has_meminfo);
                ng_snapshot_free(s);
        }
        /* the path layer itself */
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(troot, &p), 0);
        char *buf = NULL;
        ck_assert_int_eq(ng_path_read(p, &buf, NULL, "/proc/meminfo"), -EINVAL);
        ck_assert_ptr_null(buf);
        uint64_t size;
        ck_assert_int_eq(ng_path_file_size(p, &size, "/proc/meminfo"), -EINVAL);
        ng_path_free(p);

        /* a FIFO as node/online: refusing it may fail the whole collect, cleanly */
        snprintf(path, sizeof(path), "%s/sys/devices/system/node/online", troot);
        unlink(path);
        ck_assert_int_eq(mkfifo(path, 0644), 0);
        try_collect(NULL);
        rm_tree();
}
END_TEST

/* An empty online list, a node list naming nodes that have no directory. */
START_TEST(test_broken_node_lists)
{
        base_tree();
        put("sys/devices/system/node/online", "\n");
        try_collect(NULL);
        put("sys/devices/system/node/online", "0-1,5,1000\n");
        struct ng_snapshot *s;
        if (try_collect(&s) == 0) {
                ck_assert_uint_ge(s->topo.n_nodes, 2);
                ng_snapshot_free(s);
        }
        put("sys/devices/system/node/online", "1-0\n");
        try_collect(NULL);
        put("sys/devices/system/node/online", "0-99999999\n");
        try_collect(NULL);
        rm_tree();
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("snapshot");
        TCase *tc = tcase_create("trees");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_guest4_v2);
        tcase_add_test(tc, test_guest4_v1);
        tcase_add_test(tc, test_shm_file_owner_from_the_record);
        tcase_add_test(tc, test_shm_files_from_the_record);
        tcase_add_test(tc, test_guest4_skip_procs);
        tcase_add_test(tc, test_guest8_asym);
        tcase_add_test(tc, test_guest_memonly);
        tcase_add_test(tc, test_guest_hmat);
        tcase_add_test(tc, test_guest_1g);
        tcase_add_test(tc, test_node_id_gap);
        tcase_add_test(tc, test_cgroup_hugetlb_numa_stat);
        tcase_add_test(tc, test_guest64);
        tcase_add_test(tc, test_host);
        suite_add_tcase(s, tc);
        tc = tcase_create("broken");
        tcase_set_timeout(tc, 10);     /* a blocked read on a FIFO would hang */
        tcase_add_test(tc, test_broken_base_sane);
        tcase_add_test(tc, test_broken_no_node_dir);
        tcase_add_test(tc, test_broken_truncated_distance);
        tcase_add_test(tc, test_broken_garbage_hugepages);
        tcase_add_test(tc, test_broken_procs);
        tcase_add_test(tc, test_broken_fifo);
        tcase_add_test(tc, test_broken_node_lists);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(suite());
}

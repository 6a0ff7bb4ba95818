/* hugepages reserve/apply: the planner on literal snapshots (spread, floor
 * refusal with the numbers, never below the pages in use), the executor
 * against a copy of a fixture tree (the exact bytes written per node), and
 * a fake kernel through the ops table (short grants -> compaction, bounded
 * retries with backoff, PARTIAL; EBUSY -> TRANSIENT; EACCES -> PERMANENT). */

#include <inttypes.h>
#include <limits.h>
#include <unistd.h>

#include "cleanup.h"
#include "snapshot-builder.h"
#include "ng-act-hugepages.h"

#define GiB (UINT64_C(1) << 30)
#define NODE_DIR "/sys/devices/system/node"
#define NR(n) NODE_DIR "/node" #n "/hugepages/hugepages-2048kB/nr_hugepages"

/* ------------------------------------------------------------ planner */

static struct ng_act_hugepages *reserve(const struct ng_snapshot *s, uint64_t floor, uint64_t pages, int node)
{
        struct ng_act_hugepages *a;
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, floor, 2048, pages, node, &a), 0);
        return a;
}

START_TEST(size_parse_and_format)
{
        uint64_t kib;
        ck_assert_int_eq(ng_hugepage_size_parse("2M", &kib), 0);
        ck_assert_uint_eq(kib, 2048);
        ck_assert_int_eq(ng_hugepage_size_parse("1G", &kib), 0);
        ck_assert_uint_eq(kib, 1048576);
        ck_assert_int_eq(ng_hugepage_size_parse("2048kB", &kib), 0);
        ck_assert_uint_eq(kib, 2048);
        ck_assert_int_eq(ng_hugepage_size_parse("1gib", &kib), 0);
        ck_assert_uint_eq(kib, 1048576);
        ck_assert_int_eq(ng_hugepage_size_parse("2", &kib), -EINVAL);
        ck_assert_int_eq(ng_hugepage_size_parse("2T", &kib), -EINVAL);
        ck_assert_int_eq(ng_hugepage_size_parse("-2M", &kib), -EINVAL);
        ck_assert_int_eq(ng_hugepage_size_parse("0M", &kib), -EINVAL);
        ck_assert_int_eq(ng_hugepage_size_parse("", &kib), -EINVAL);
        char b[16];
        ng_hugepage_size_format(2048, b, sizeof(b));
        ck_assert_str_eq(b, "2M");
        ng_hugepage_size_format(1048576, b, sizeof(b));
        ck_assert_str_eq(b, "1G");
        ng_hugepage_size_format(64, b, sizeof(b));
        ck_assert_str_eq(b, "64K");
}
END_TEST

START_TEST(spread_over_nodes_with_memory)
{
        /* 10 pages over nodes 0-2 (node 3 has no memory): 4, 3, 3. */
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        s->topo.nodes[3].has_memory = false;
        struct ng_act_hugepages *a = reserve(s, GiB, 10, -1);
        ck_assert(!a->refused);
        ck_assert_uint_eq(a->n_nodes, 4);
        ck_assert_uint_eq(a->nodes[0].target_pages, 4);
        ck_assert_uint_eq(a->nodes[1].target_pages, 3);
        ck_assert_uint_eq(a->nodes[2].target_pages, 3);
        ck_assert_uint_eq(a->nodes[3].target_pages, 0);
        ck_assert_str_eq(a->note, "10 pages spread evenly over the nodes with memory 0-2 (3 each, one more on the lowest)");
        ng_act_hugepages_free(a);

        /* --node: only that node changes; a node without memory is refused
         * by the planner as -ENXIO, an unknown node too. */
        a = reserve(s, GiB, 64, 2);
        ck_assert_uint_eq(a->nodes[2].target_pages, 64);
        ck_assert_uint_eq(a->nodes[0].target_pages, 0);
        ck_assert_str_eq(a->note, "");
        ng_act_hugepages_free(a);
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 2048, 8, 3, &a), -ENXIO);
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 2048, 8, 9, &a), -ENXIO);
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 1048576, 8, 1, &a), -EOPNOTSUPP);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(floor_refuses_with_the_numbers)
{
        /* 16 GiB nodes with 8 GiB MemFree; floor 7.5 GiB leaves 512 MiB =
         * 256 pages of room per node. */
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        s->topo.nodes[1].pools[0].nr_pages = 10;
        s->topo.nodes[1].pools[0].free_pages = 10;
        uint64_t floor = 7 * GiB + GiB / 2;
        struct ng_act_hugepages *a = reserve(s, floor, 266, 1);       /* 256 more: exactly fits */
        ck_assert(!a->refused);
        ng_act_hugepages_free(a);
        a = reserve(s, floor, 267, 1);
        ck_assert(a->refused);
        ck_assert_str_eq(a->reason, "node 1: 257 more 2M pages need 514 MiB, MemFree is 8192 MiB, floor 7680 MiB");
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_act_hugepages_run(a, NULL, &ng_action_ops_default, false, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_REFUSED);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert_str_eq(res->summary, "2M pages: would push a node below its free-memory floor: node 1: 257 more 2M "
                         "pages need 514 MiB, MemFree is 8192 MiB, floor 7680 MiB");
        ng_act_hugepages_free(a);

        /* Spread: every node that would cross its floor is named. */
        a = reserve(s, floor, 4 * 300, -1);
        ck_assert(a->refused);
        ck_assert_str_eq(a->reason, "node 0: 300 more 2M pages need 600 MiB, MemFree is 8192 MiB, floor 7680 MiB; "
                         "node 1: 290 more 2M pages need 580 MiB, MemFree is 8192 MiB, floor 7680 MiB; "
                         "node 2: 300 more 2M pages need 600 MiB, MemFree is 8192 MiB, floor 7680 MiB; "
                         "node 3: 300 more 2M pages need 600 MiB, MemFree is 8192 MiB, floor 7680 MiB");
        ng_act_hugepages_free(a);

        /* Shrinking never needs memory: no refusal even with a huge floor. */
        a = reserve(s, 1024 * 1024 * GiB, 2, 1);
        ck_assert(!a->refused);
        ck_assert_uint_eq(a->nodes[1].target_pages, 2);
        ng_act_hugepages_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(never_below_in_use)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        s->topo.nodes[0].pools[0].nr_pages = 100;
        s->topo.nodes[0].pools[0].free_pages = 60;
        struct ng_act_hugepages *a = reserve(s, GiB, 10, 0);
        ck_assert(!a->refused);
        ck_assert_uint_eq(a->nodes[0].in_use_pages, 40);
        ck_assert_uint_eq(a->nodes[0].asked_pages, 10);
        ck_assert_uint_eq(a->nodes[0].target_pages, 40);
        ck_assert_str_eq(a->note, "node 0: 40 pages in use, kept 40 instead of 10");
        ng_act_hugepages_free(a);

        /* Above the pages in use: shrunk as asked. */
        a = reserve(s, GiB, 50, 0);
        ck_assert_uint_eq(a->nodes[0].target_pages, 50);
        ng_act_hugepages_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(apply_takes_the_plan)
{
        struct ng_snapshot *s = snap_new(3, 1, 3, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        s->topo.nodes[1].pools[0].nr_pages = 5;
        /* the rows carry the supply; the action reads nothing else */
        struct ng_plan *rows;
        ck_assert_int_eq(ng_plan_supply(s, GiB, 2048, &rows), 0);
        ck_assert_uint_eq(rows->n_nodes, 3);
        ck_assert(rows->nodes[1].supply.nr_pages.known);
        ck_assert_uint_eq(rows->nodes[1].supply.nr_pages.v, 5);
        ck_assert(rows->nodes[1].supply.free_bytes.known);
        const uint64_t need[3] = { 262, 0, 261 };
        for (size_t i = 0; i < 3; i++) {
                rows->nodes[i].need_pages = need[i];
                rows->nodes[i].target_pages = need[i] > rows->nodes[i].nr_pages ? need[i] : rows->nodes[i].nr_pages;
        }
        struct ng_plan p = *rows;
        p.need_pages = 523;
        p.changes = true;
        struct ng_act_hugepages *a;
        ck_assert_int_eq(ng_act_hugepages_plan_apply(s, GiB, &p, &a), 0);
        ck_assert(!a->refused);
        ck_assert_uint_eq(a->nodes[0].target_pages, 262);
        ck_assert_uint_eq(a->nodes[1].target_pages, 5);
        ck_assert_uint_eq(a->nodes[2].target_pages, 261);
        ck_assert_str_eq(a->note, "targets of hugepages plan: 523 pages needed, 5 in the pools");
        ng_act_hugepages_free(a);

        ng_plan_free(rows);

        /* 8 GiB free, floor 7.9 GiB (the rows' own): 262 pages do not fit. */
        ck_assert_int_eq(ng_plan_supply(s, 8 * GiB - 100 * (1u << 20), 2048, &rows), 0);
        ck_assert_uint_eq(rows->nodes[0].supply.floor_bytes, 8 * GiB - 100 * (1u << 20));
        rows->nodes[0].need_pages = rows->nodes[0].target_pages = 262;
        ck_assert_int_eq(ng_act_hugepages_plan_apply(s, 8 * GiB - 100 * (1u << 20), rows, &a), 0);
        ck_assert(a->refused);
        ck_assert_ptr_nonnull(strstr(a->reason, "node 0: 262 more 2M pages need 524 MiB, MemFree is 8192 MiB, floor 8092 MiB"));
        ng_act_hugepages_free(a);

        /* A pool nobody could read is never sized: refused, not "no pool". */
        s->topo.nodes[2].pools[0].unknown = true;
        ng_plan_free(rows);
        ck_assert_int_eq(ng_plan_supply(s, GiB, 2048, &rows), 0);
        ck_assert(rows->nodes[2].supply.has_pool && !rows->nodes[2].supply.nr_pages.known);
        rows->nodes[2].need_pages = rows->nodes[2].target_pages = 261;
        ck_assert_int_eq(ng_act_hugepages_plan_apply(s, GiB, rows, &a), 0);
        ck_assert(a->refused);
        ck_assert_ptr_nonnull(strstr(a->reason, "node 2: its 2M pool is unknown"));
        ng_act_hugepages_free(a);
        ng_plan_free(rows);
        ng_snapshot_free(s);
}
END_TEST

/* ------------------------------------------------- against a tree copy */

static char tree[PATH_MAX];

static void tree_setup(void)
{
        char tmpl[] = "/tmp/ng-test-hp.XXXXXX", cmd[PATH_MAX + 256];
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        snprintf(tree, sizeof(tree), "%s/t", tmpl);
        snprintf(cmd, sizeof(cmd), "cp -a " NG_FIXTURES "/trees/guest4-v2 %s", tree);
        ck_assert_int_eq(system(cmd), 0);
}

static void tree_teardown(void)
{
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof(cmd), "rm -rf %.*s", (int) (strlen(tree) - 2), tree);
        ck_assert_int_eq(system(cmd), 0);
}

static char *tree_file(const char *rel)
{
        char path[PATH_MAX * 2];
        snprintf(path, sizeof(path), "%s%s", tree, rel);
        return ng_test_read(path, NULL);
}

static void tree_create(const char *rel)
{
        char path[PATH_MAX * 2];
        snprintf(path, sizeof(path), "%s%s", tree, rel);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fclose(f);
}

static struct ng_path *tree_path(void)
{
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        return p;
}

static struct ng_snapshot *tree_snapshot(struct ng_path *p)
{
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.skip_procs = true;
        struct ng_snapshot *s;
        ck_assert_int_eq(ng_snapshot_collect(p, &co, &s), 0);
        return s;
}

/* A fake kernel: records every write and sleep; nr_hugepages writes fail
 * with err, or succeed and read back grants[attempt] (the last one repeated). */
struct fake {
        char paths[32][PATH_MAX];
        char values[32][32];
        size_t n_writes, n_nr_writes;
        uint64_t sleeps[16];
        size_t n_sleeps;
        const uint64_t *grants;
        size_t n_grants;
        int err;
};

static bool is_nr(const char *path)
{
        return strstr(path, "/nr_hugepages") != NULL;
}

static int fake_write(void *userdata, const struct ng_path *p, const char *path, const char *value)
{
        struct fake *f = userdata;
        (void) p;
        ck_assert_uint_lt(f->n_writes, 32);
        snprintf(f->paths[f->n_writes], sizeof(f->paths[0]), "%s", path);
        snprintf(f->values[f->n_writes++], sizeof(f->values[0]), "%s", value);
        if (!is_nr(path))
                return 0;
        f->n_nr_writes++;
        return f->err;
}

static int fake_read(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size)
{
        struct fake *f = userdata;
        if (!is_nr(path) || f->n_nr_writes == 0 || f->err)
                return ng_action_ops_default.read(NULL, p, path, buf, size);
        size_t i = f->n_nr_writes - 1 < f->n_grants ? f->n_nr_writes - 1 : f->n_grants - 1;
        snprintf(buf, size, "%" PRIu64 "\n", f->grants[i]);
        return 0;
}

static void fake_sleep(void *userdata, uint64_t usec)
{
        struct fake *f = userdata;
        ck_assert_uint_lt(f->n_sleeps, 16);
        f->sleeps[f->n_sleeps++] = usec;
}

static struct ng_action_ops fake_ops(struct fake *f)
{
        return (struct ng_action_ops) { .size = sizeof(struct ng_action_ops), .write = fake_write, .read = fake_read,
                                        .sleep_usec = fake_sleep, .userdata = f };
}

/* The snapshot of the copy, a plan for it, and the result of running it. */
static struct ng_action_result *run_on_tree(const struct ng_action_ops *ops, bool dry_run, uint64_t pages, int node)
{
        struct ng_path *p = tree_path();
        struct ng_snapshot *s = tree_snapshot(p);
        struct ng_act_hugepages *a;
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 2048, pages, node, &a), 0);
        ck_assert(!a->refused);
        struct ng_action_result *res;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_act_hugepages_run(a, p, ops, dry_run, res), 0);
        ng_act_hugepages_free(a);
        ng_snapshot_free(s);
        ng_path_free(p);
        return res;
}

START_TEST(writes_the_node_and_reads_back)
{
        /* guest4-v2: 2M pools 2, 8, 2, 2 pages on nodes 0-3. */
        struct ng_action_result *res = run_on_tree(&ng_action_ops_default, false, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(res->n_writes, 1);
        ck_assert_str_eq(res->writes[0].path, NR(2));
        ck_assert_str_eq(res->writes[0].value, "64");
        ck_assert_str_eq(res->writes[0].before, "2");
        ck_assert_str_eq(res->writes[0].after, "64");
        ck_assert_str_eq(res->summary, "2M pages: node 2 2 -> 64");
        char *b = tree_file(NR(2));
        ck_assert_str_eq(b, "64");      /* the exact bytes: no newline, nothing else */
        free(b);
        b = tree_file(NR(1));
        ck_assert_str_eq(b, "8\n");     /* untouched */
        free(b);
        b = tree_file(NR(3));
        ck_assert_str_eq(b, "2\n");
        free(b);
        ng_action_result_free(res);

        /* Asked again: already there. */
        res = run_on_tree(&ng_action_ops_default, false, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_NOOP);
        ck_assert_uint_eq(res->n_writes, 0);
        ng_action_result_free(res);
}
END_TEST

START_TEST(spread_writes_each_node)
{
        /* 16 pages over 4 nodes: 4 each; node 1 (8 pages, 4 free) shrinks to 4. */
        struct fake f = {0};
        struct ng_action_ops ops = fake_ops(&f);
        static const uint64_t four[] = { 4 };
        f.grants = four;
        f.n_grants = 1;
        struct ng_action_result *res = run_on_tree(&ops, false, 16, -1);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(f.n_writes, 4);
        for (int n = 0; n < 4; n++) {
                char want[PATH_MAX];
                snprintf(want, sizeof(want), NODE_DIR "/node%d/hugepages/hugepages-2048kB/nr_hugepages", n);
                ck_assert_str_eq(f.paths[n], want);
                ck_assert_str_eq(f.values[n], "4");
        }
        ck_assert_uint_eq(f.n_sleeps, 0);
        ck_assert_ptr_nonnull(strstr(res->summary, "16 pages spread evenly over the nodes with memory 0-3 (4 each)"));
        ng_action_result_free(res);
}
END_TEST

START_TEST(dry_run_writes_nothing)
{
        struct fake f = {0};
        struct ng_action_ops ops = fake_ops(&f);
        struct ng_action_result *res = run_on_tree(&ops, true, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(f.n_writes, 0);
        ck_assert_uint_eq(res->n_writes, 1);
        ck_assert_str_eq(res->writes[0].path, NR(2));
        ck_assert_str_eq(res->writes[0].value, "64");
        ck_assert_str_eq(res->writes[0].before, "2");
        ck_assert_str_eq(res->writes[0].after, "");
        ck_assert_str_eq(res->summary, "2M pages: would set node 2 to 64 (now 2)");
        ng_action_result_free(res);
        char *b = tree_file(NR(2));
        ck_assert_str_eq(b, "2\n");
        free(b);
}
END_TEST

START_TEST(short_grant_compacts_and_retries_with_backoff)
{
        /* The kernel gives 40, then 45, 50 and no more: 5 retries, each
         * after a compaction of node 2 and a doubling sleep, then PARTIAL. */
        tree_create("/sys/devices/system/node/node2/compact");
        struct fake f = {0};
        struct ng_action_ops ops = fake_ops(&f);
        static const uint64_t grants[] = { 40, 45, 50 };
        f.grants = grants;
        f.n_grants = 3;
        struct ng_action_result *res = run_on_tree(&ops, false, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_PARTIAL);
        ck_assert_uint_eq(f.n_writes, 1 + 2 * NG_ACT_HP_RETRIES);
        ck_assert_str_eq(f.paths[0], NR(2));
        for (size_t k = 0; k < NG_ACT_HP_RETRIES; k++) {
                ck_assert_str_eq(f.paths[1 + 2 * k], NODE_DIR "/node2/compact");
                ck_assert_str_eq(f.values[1 + 2 * k], "1");
                ck_assert_str_eq(f.paths[2 + 2 * k], NR(2));
                ck_assert_str_eq(f.values[2 + 2 * k], "64");
        }
        static const uint64_t backoff[] = { 100000, 200000, 400000, 800000, 1600000 };
        ck_assert_uint_eq(f.n_sleeps, 5);
        for (size_t k = 0; k < 5; k++)
                ck_assert_uint_eq(f.sleeps[k], backoff[k]);
        /* Shown: the pool write (read back 50) and the first compaction. */
        ck_assert_uint_eq(res->n_writes, 2);
        ck_assert_str_eq(res->writes[0].after, "50");
        ck_assert_str_eq(res->writes[1].path, NODE_DIR "/node2/compact");
        ck_assert_str_eq(res->summary, "2M pages: asked 64, granted 50 on node 2 after 5 retries (no more free 2M blocks "
                         "after compaction: reserve at boot with hugepagesz=2M hugepages=0:2,1:8,2:64,3:2)");
        ng_action_result_free(res);
}
END_TEST

START_TEST(retry_stops_once_granted)
{
        /* No node compact file: the global compact_memory instead. */
        tree_create("/proc/sys/vm/compact_memory");
        struct fake f = {0};
        struct ng_action_ops ops = fake_ops(&f);
        static const uint64_t grants[] = { 30, 60, 64 };
        f.grants = grants;
        f.n_grants = 3;
        struct ng_action_result *res = run_on_tree(&ops, false, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(f.n_writes, 5);
        ck_assert_str_eq(f.paths[1], "/proc/sys/vm/compact_memory");
        ck_assert_str_eq(f.paths[3], "/proc/sys/vm/compact_memory");
        ck_assert_uint_eq(f.n_sleeps, 2);
        ck_assert_uint_eq(f.sleeps[0], 100000);
        ck_assert_uint_eq(f.sleeps[1], 200000);
        ck_assert_str_eq(res->writes[0].after, "64");
        ck_assert_str_eq(res->summary, "2M pages: node 2 2 -> 64 after compaction");
        ng_action_result_free(res);
}
END_TEST

START_TEST(no_compaction_file_still_retries)
{
        struct fake f = {0};
        struct ng_action_ops ops = fake_ops(&f);
        static const uint64_t grants[] = { 10 };
        f.grants = grants;
        f.n_grants = 1;
        struct ng_action_result *res = run_on_tree(&ops, false, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_PARTIAL);
        ck_assert_uint_eq(f.n_writes, 1 + NG_ACT_HP_RETRIES);
        ck_assert_uint_eq(f.n_sleeps, NG_ACT_HP_RETRIES);
        ck_assert_ptr_nonnull(strstr(res->summary, "asked 64, granted 10 on node 2 after 5 retries"));
        ng_action_result_free(res);
}
END_TEST

START_TEST(ebusy_is_transient_eacces_permanent)
{
        struct fake f = { .err = -EBUSY };
        struct ng_action_ops ops = fake_ops(&f);
        struct ng_action_result *res = run_on_tree(&ops, false, 16, -1);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_TRANSIENT);
        ck_assert_int_eq(res->error, -EBUSY);
        ck_assert_uint_eq(f.n_writes, 1);       /* the first node failed: no more writes */
        ck_assert_uint_eq(f.n_sleeps, 0);
        ck_assert_int_eq(res->writes[0].error, -EBUSY);
        ck_assert_ptr_nonnull(strstr(res->summary, "writing 4 to node 0 failed: Device or resource busy (transient, retry later)"));
        ng_action_result_free(res);

        f = (struct fake) { .err = -EACCES };
        res = run_on_tree(&ops, false, 64, 2);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_PERMANENT);
        ck_assert_int_eq(res->error, -EACCES);
        ck_assert_uint_eq(f.n_writes, 1);
        ck_assert_ptr_nonnull(strstr(res->summary, "writing 64 to node 2 failed: Permission denied (permanent)"));
        ng_action_result_free(res);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("act-hugepages");
        TCase *tc = tcase_create("plan");
        tcase_add_test(tc, size_parse_and_format);
        tcase_add_test(tc, spread_over_nodes_with_memory);
        tcase_add_test(tc, floor_refuses_with_the_numbers);
        tcase_add_test(tc, never_below_in_use);
        tcase_add_test(tc, apply_takes_the_plan);
        suite_add_tcase(s, tc);
        tc = tcase_create("run");
        tcase_add_checked_fixture(tc, tree_setup, tree_teardown);
        tcase_add_test(tc, writes_the_node_and_reads_back);
        tcase_add_test(tc, spread_writes_each_node);
        tcase_add_test(tc, dry_run_writes_nothing);
        tcase_add_test(tc, short_grant_compacts_and_retries_with_backoff);
        tcase_add_test(tc, retry_stops_once_granted);
        tcase_add_test(tc, no_compaction_file_still_retries);
        tcase_add_test(tc, ebusy_is_transient_eacces_permanent);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* The hugepage plan on literal snapshots: split by policy and nodes, the
 * margin, never below the pages in use, AMM named, boot line. */

#include "snapshot-builder.h"
#include "ng-config.h"
#include "ng-plan.h"
#include "ng-report.h"

#define GiB (UINT64_C(1) << 30)

static struct ng_plan *plan(const struct ng_snapshot *s, const char *conf_text, struct ng_audit **ret_a,
                            struct ng_config **ret_c)
{
        ck_assert_int_eq(ng_config_load_string(conf_text, "t.conf", NULL, NULL, ret_c), 0);
        ck_assert_int_eq(ng_audit_run(s, *ret_c, ret_a), 0);
        struct ng_plan *p;
        ck_assert_int_eq(ng_plan_hugepages(s, *ret_c, *ret_a, &p), 0);
        return p;
}

static void done(struct ng_plan *p, struct ng_audit *a, struct ng_config *c)
{
        ng_plan_free(p);
        ng_audit_free(a);
        ng_config_free(c);
}

START_TEST(interleave_over_configured_nodes)
{
        /* 1 GiB = 512 pages + 2 % (11 pages) = 523, over nodes 0-1. */
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        snap_shm(s, 7, GiB, 1, 0);
        struct ng_node_pages pl[] = { { 0, 262144 } };
        snap_map_sysv(snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-3", "0-3"), 7, 0x7f0000000000, GiB, 4, pl, 1);
        struct ng_audit *a;
        struct ng_config *c;
        struct ng_plan *p = plan(s, "[instance ORCL]\nmatch_comm = ora_*\npolicy = interleave\nnodes = 0-1\n", &a, &c);
        ck_assert_uint_eq(p->page_kib, 2048);
        ck_assert_uint_eq(p->n_instances, 1);
        ck_assert_uint_eq(p->instances[0].pages, 523);
        ck_assert_uint_eq(p->nodes[0].target_pages, 262);
        ck_assert_uint_eq(p->nodes[1].target_pages, 261);
        ck_assert_uint_eq(p->nodes[2].target_pages, 0);
        ck_assert(p->changes);
        char boot[256];
        ng_plan_boot_line(p, boot, sizeof(boot));
        ck_assert_str_eq(boot, "hugepagesz=2M hugepages=0:262,1:261,2:0,3:0");
        done(p, a, c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(no_pool_on_a_slower_tier_unless_told)
{
        /* CPUs everywhere but node 3, a dax/kmem node of tier 5: an
         * interleaved instance gets its pools on nodes 0-2 only. */
        struct ng_snapshot *s = snap_new(4, 1, 3, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        snap_tier(s, 4, "0-2");
        snap_tier(s, 5, "3");
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-2", "0-3");
        struct ng_audit *a;
        struct ng_config *c;
        struct ng_plan *p = plan(s, "[instance ORCL]\nmatch_comm = ora_*\npolicy = interleave\nexpected_size = 600M\n",
                                 &a, &c);
        ck_assert_uint_eq(p->instances[0].pages, 306);
        ck_assert_uint_eq(ng_bitmap_count(&p->instances[0].nodes), 3);
        ck_assert(!ng_bitmap_test(&p->instances[0].nodes, 3));
        ck_assert_uint_eq(p->nodes[3].target_pages, 0);
        ck_assert_uint_eq(p->nodes[0].target_pages, 102);
        done(p, a, c);

        /* nodes= names it: told to. */
        p = plan(s, "[instance ORCL]\nmatch_comm = ora_*\npolicy = interleave\nnodes = 0,3\nexpected_size = 600M\n",
                 &a, &c);
        ck_assert_uint_eq(p->nodes[3].target_pages, 153);
        done(p, a, c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(floor_per_tier)
{
        /* Nodes 0-1 of tier 4 with CPUs, node 2 a tier-22 dax/kmem node,
         * 1 GiB each and 512 MiB free. Node 0's promo watermark (40000
         * pages, 156.25 MiB) is above 3 % of it: its floor; node 2, a
         * slower tier, keeps 3 %. */
        struct ng_snapshot *s = snap_new(3, 1, 2, 21, GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        snap_tier(s, 4, "0-1");
        snap_tier(s, 22, "2");
        for (int i = 0; i < 3; i++)
                s->topo.nodes[i].high_wmark_pages = 1000;
        s->topo.nodes[0].promo_wmark_pages = 40000;
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-2");
        struct ng_audit *a;
        struct ng_config *c;
        struct ng_plan *p = plan(s, "[instance ORCL]\nmatch_comm = ora_*\npolicy = interleave\nnodes = 0,2\n"
                                 "expected_size = 600M\n", &a, &c);
        ck_assert_uint_eq(p->nodes[0].supply.floor_bytes, 40000 * 4096);
        ck_assert_uint_eq(p->nodes[1].supply.floor_bytes, GiB / 100 * 3);
        ck_assert_uint_eq(p->nodes[2].supply.floor_bytes, GiB / 100 * 3);
        /* (512 MiB - 156.25 MiB) / 2 MiB, (512 MiB - 3 %) / 2 MiB */
        ck_assert_uint_eq(p->nodes[0].headroom_pages, 177);
        ck_assert_uint_eq(p->nodes[2].headroom_pages, 240);
        /* Told to use node 2, the plan does, within its own floor. */
        ck_assert_uint_eq(p->nodes[2].target_pages, 153);
        done(p, a, c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(local_follows_cpus_and_never_shrinks)
{
        /* expected_size 512 MiB, CPUs on node 2: 256 + 6 pages there; node 3
         * already holds 100 pages, 40 in use: kept. */
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        s->topo.nodes[3].pools[0].nr_pages = 100;
        s->topo.nodes[3].pools[0].free_pages = 60;
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "2", "0-3");
        struct ng_audit *a;
        struct ng_config *c;
        struct ng_plan *p = plan(s, "[instance ORCL]\nmatch_comm = ora_*\nexpected_size = 512M\n", &a, &c);
        ck_assert_uint_eq(p->instances[0].pages, 262);
        ck_assert(ng_bitmap_test(&p->instances[0].nodes, 2) && ng_bitmap_count(&p->instances[0].nodes) == 1);
        ck_assert_uint_eq(p->nodes[2].target_pages, 262);
        ck_assert_uint_eq(p->nodes[3].target_pages, 100);
        done(p, a, c);

        /* Already there: no change. */
        s->topo.nodes[2].pools[0].nr_pages = 300;
        p = plan(s, "[instance ORCL]\nmatch_comm = ora_*\nexpected_size = 512M\n", &a, &c);
        ck_assert(!p->changes);
        done(p, a, c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(amm_and_off_need_nothing)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        s->files = xcalloc(1, sizeof(*s->files));
        s->files[0] = (struct ng_shm_file) { .path = strdup("/dev/shm/ora_ORCL_1"), .size_bytes = GiB, .page_kib = 4 };
        s->n_files = 1;
        struct ng_proc *pr = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        pr->maps = xcalloc(1, sizeof(*pr->maps));
        pr->maps[0] = (struct ng_map) { .start = 0x7f0000000000, .end = 0x7f0000000000 + GiB, .shared = true,
                                        .path = strdup("/dev/shm/ora_ORCL_1"), .kind = NG_MAP_FILE_SHARED };
        pr->n_maps = 1;
        snap_proc(s, 200, 1, "ora_pmon_TEST", "0-1", "0-1");
        struct ng_audit *a;
        struct ng_config *c;
        struct ng_plan *p = plan(s, "[instance ORCL]\nmatch_comm = ora_*_ORCL\n"
                                    "[instance TEST]\nmatch_comm = ora_*_TEST\nexpected_size = 1G\nhugepages = off\n", &a, &c);
        ck_assert_uint_eq(p->n_instances, 2);
        ck_assert(p->instances[0].amm);
        ck_assert_uint_eq(p->instances[0].pages, 0);
        ck_assert(p->instances[1].off);
        ck_assert_uint_eq(p->instances[1].pages, 0);
        ck_assert(!p->changes);
        done(p, a, c);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("plan");
        TCase *tc = tcase_create("plan");
        tcase_add_test(tc, interleave_over_configured_nodes);
        tcase_add_test(tc, no_pool_on_a_slower_tier_unless_told);
        tcase_add_test(tc, floor_per_tier);
        tcase_add_test(tc, local_follows_cpus_and_never_shrinks);
        tcase_add_test(tc, amm_and_off_need_nothing);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

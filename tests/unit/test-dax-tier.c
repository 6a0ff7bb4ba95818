/* The collector, the audit and the hugepage plan on the tree guest-dax-tier
 * (tests/fixtures/trees/README.md): a 6.1 guest whose node 3 is persistent
 * memory onlined as system RAM through dax/kmem, which the kernel put in
 * memory tier 22. Every expected value is read by hand from the tree's own
 * files (memory_tierN/nodelist, node3/accessN, sysvipc/shm,
 * 326/numa_maps and status), not from numaguard's outputs. */

#include <sys/stat.h>

#include "ng-audit.h"
#include "ng-config.h"
#include "ng-plan.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "ng-test.h"

#define TREE NG_FIXTURES "/trees/guest-dax-tier"

static struct ng_snapshot *load(void)
{
        struct stat st;
        ck_assert_msg(stat(TREE, &st) == 0, "fixture tree %s missing", TREE);
        struct ng_path *p = NULL;
        struct ng_snapshot *s = NULL;
        ck_assert_int_eq(ng_path_new(TREE, &p), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, NULL, &s), 0);
        ng_path_free(p);
        return s;
}

static const struct ng_finding *find(const struct ng_audit *a, enum ng_code code, const char *instance)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == code && !strcmp(a->findings[i].instance, instance))
                        return &a->findings[i];
        return NULL;
}

START_TEST(collector)
{
        struct ng_snapshot *s = load();
        ck_assert_uint_eq(s->topo.n_nodes, 5);
        /* memory_tier4: 0-2,4; memory_tier22: 3 */
        ck_assert_uint_eq(s->topo.n_tiers, 2);
        ck_assert_int_eq(s->topo.tiers[0].id, 4);
        ck_assert_int_eq(s->topo.tiers[1].id, 22);
        for (int n = 0; n < 5; n++)
                ck_assert_int_eq(ng_snapshot_node(s, n)->tier, n == 3 ? 22 : 4);
        ck_assert_int_eq(s->topo.demotion_enabled, 0);
        /* node3/access0 and access1: initiator node 0, 400 ns, 5000 MB/s */
        const struct ng_node *nd = ng_snapshot_node(s, 3);
        for (unsigned k = 0; k < NG_HMAT_ACCESS_CLASSES; k++) {
                ck_assert(nd->access[k].present);
                ck_assert(ng_bitmap_test(&nd->access[k].initiators, 0));
                ck_assert_uint_eq(ng_bitmap_count(&nd->access[k].initiators), 1);
                ck_assert_int_eq(nd->access[k].read_latency_ns, 400);
                ck_assert_int_eq(nd->access[k].read_bandwidth_mbps, 5000);
        }
        /* 128 MiB onlined: one memory block (Node 3 MemTotal 131072 kB) */
        struct ng_node_supply sup;
        ng_node_supply(nd, NG_FREE_FLOOR_AUTO, 0, &sup);
        ck_assert(sup.total_bytes.known);
        ck_assert_uint_eq(sup.total_bytes.v, UINT64_C(131072) * 1024);
        /* 6.1's zoneinfo has no promo watermark: the floor keeps the high one */
        for (int n = 0; n < 5; n++)
                ck_assert_uint_eq(ng_snapshot_node(s, n)->promo_wmark_pages, 0);
        ck_assert_int_eq(s->knobs.hugetlb_shm_group, 0);
        ck_assert_uint_eq(s->knobs.kernel_major, 6);
        ck_assert_uint_eq(s->knobs.kernel_minor, 1);
        /* pid 326 is root: CapEff 000001ffffffffff, no supplementary group */
        const struct ng_proc *pr = ng_snapshot_proc(s, 326);
        ck_assert_ptr_nonnull(pr);
        ck_assert(pr->status.has_cap_eff && pr->status.cap_eff == UINT64_C(0x000001ffffffffff));
        ck_assert(pr->status.has_groups && pr->status.n_groups == 0);
        ck_assert_uint_eq(s->n_problems, 0);

        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        const struct ng_segment *seg = NULL;
        for (size_t i = 0; i < n; i++)
                if (v[i].kind == NG_SEG_SYSV && v[i].shmid == 2)
                        seg = &v[i];
        ck_assert_ptr_nonnull(seg);
        ck_assert_uint_eq(seg->bytes, 32u << 20);
        ck_assert_uint_eq(ng_segment_node_bytes(seg, 3), 32u << 20);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(audit_and_plan)
{
        struct ng_snapshot *s = load();
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string("[global]\nmin_segment_size = 1M\n", "t.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_finding *f = find(a, NG_CODE_SLOW_TIER, "unclaimed:shmid-2");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(ng_bitmap_test(&f->nodes, 3) && ng_bitmap_count(&f->nodes) == 1);
        /* 400 against 100 ns: +300 %, from the HMAT */
        ck_assert_str_eq(f->message, "100% of 32 MiB resident shared memory (32 MiB) sits on node 3 in memory tier 22, "
                         "slower than tier 4 of the instance's CPU nodes 0; +300 % average memory latency against "
                         "local (400 vs 100 ns, from the firmware's HMAT)");
        /* demotion off: nothing demotable; root may create hugetlb segments
         * and there is no pool: nothing not permitted */
        ck_assert_ptr_null(find(a, NG_CODE_SHMEM_DEMOTABLE, "unclaimed:shmid-2"));
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED, "unclaimed:shmid-2"));
        ng_audit_free(a);
        ng_config_free(c);

        /* An interleaved instance of the workload (Mems_allowed_list 0-4):
         * no pool on node 3 unless nodes= names it. */
        static const char *const confs[] = {
                "[instance DB]\nmatch_comm = ng-shm-*\npolicy = interleave\nexpected_size = 64M\n",
                "[instance DB]\nmatch_comm = ng-shm-*\npolicy = interleave\nnodes = 0,3\nexpected_size = 64M\n",
        };
        for (int k = 0; k < 2; k++) {
                ck_assert_int_eq(ng_config_load_string(confs[k], "t.conf", NULL, NULL, &c), 0);
                ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
                struct ng_plan *p;
                ck_assert_int_eq(ng_plan_hugepages(s, c, a, &p), 0);
                const struct ng_plan_instance *pi = NULL;
                for (size_t i = 0; i < p->n_instances; i++)
                        if (!strcmp(p->instances[i].name, "DB"))
                                pi = &p->instances[i];
                ck_assert_ptr_nonnull(pi);
                ck_assert_uint_eq(pi->pages, 33);       /* 32 pages + 2 % margin, at least one */
                ck_assert_int_eq(ng_bitmap_test(&pi->nodes, 3), k == 1);
                ck_assert_uint_eq(ng_bitmap_count(&pi->nodes), k == 0 ? 4 : 2);
                ng_plan_free(p);
                ng_audit_free(a);
                ng_config_free(c);
        }
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("dax-tier");
        TCase *tc = tcase_create("guest-dax-tier");
        tcase_add_test(tc, collector);
        tcase_add_test(tc, audit_and_plan);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

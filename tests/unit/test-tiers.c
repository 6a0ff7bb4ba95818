/* Memory tiers and sub-NUMA clusters on literal snapshots: SLOW_TIER,
 * SHMEM_DEMOTABLE, CYCLOPS and REMOTE_MEMORY naming a hop that stays
 * inside one socket; the host's NUMA knobs (ZONE_RECLAIM_ON, AUTONUMA_ON
 * in tiering mode). */

#include "snapshot-builder.h"
#include "ng-audit.h"
#include "ng-config.h"

static struct ng_audit *audit(const struct ng_snapshot *s)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string("[global]\nmin_segment_size = 1M\n[instance ORCL]\nmatch_comm = ora_*\n",
                                               "t.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        ng_config_free(c);
        return a;
}

static const struct ng_finding *find(const struct ng_audit *a, enum ng_code code)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == code)
                        return &a->findings[i];
        return NULL;
}

/* ORCL: two processes on the given CPU of each, 1 GiB SysV in page_kib
 * pages all on mem_node. */
static void add_instance(struct ng_snapshot *s, const char *cpus, const char *mems, int on_cpu, int mem_node,
                         uint64_t page_kib)
{
        struct ng_node_pages pl = { mem_node, (1u << 20) / page_kib };
        snap_shm(s, 7, 1ull << 30, 2, 0);
        for (int i = 0; i < 2; i++) {
                struct ng_proc *p = snap_proc(s, 100 + i, 1, i ? "ora_dbw0_ORCL" : "ora_pmon_ORCL", cpus, mems);
                snap_map_sysv(p, 7, 0x7f0000000000, 1ull << 30, page_kib, &pl, i == 0);
                p->stat.processor = on_cpu;
                p->cpu_weight_ticks = 100;
        }
}

/* Nodes 0 and 1 with CPUs in tier 4, node 2 memory only in tier 5 (a CXL
 * expander with dax/kmem). */
static struct ng_snapshot *tiered(void)
{
        struct ng_snapshot *s = snap_new(3, 2, 2, 21, 4u << 20);
        snap_tier(s, 4, "0-1");
        snap_tier(s, 5, "2");
        return s;
}

START_TEST(slow_tier)
{
        struct ng_snapshot *s = tiered();
        add_instance(s, "0-1", "0-2", 0, 2, 4);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_SLOW_TIER);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_str_eq(f->instance, "ORCL");
        ck_assert(ng_bitmap_test(&f->nodes, 2) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert_msg(strstr(f->message, "100% of 1 GiB resident shared memory (1 GiB) sits on node 2 in memory tier 5, "
                             "slower than tier 4 of the instance's CPU nodes 0; +110 % average memory latency "
                             "against local (distance 21 vs 10, from the SLIT)"), "%s", f->message);
        ck_assert_str_eq(ng_code_name(f->code), "SLOW_TIER");
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(slow_tier_boundaries)
{
        /* The other CPU node's memory is the same tier: remote, not slower. */
        struct ng_snapshot *s = tiered();
        add_instance(s, "0-1", "0-2", 0, 1, 4);
        struct ng_audit *a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SLOW_TIER));
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* No tiers known (a kernel before 6.1): nothing to say. */
        s = snap_new(3, 2, 2, 21, 4u << 20);
        add_instance(s, "0-1", "0-2", 0, 2, 4);
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SLOW_TIER));
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* One tier for every node (no dax/kmem): nothing is slower. */
        s = snap_new(3, 2, 2, 21, 4u << 20);
        snap_tier(s, 4, "0-2");
        add_instance(s, "0-1", "0-2", 0, 2, 4);
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SLOW_TIER));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(shmem_demotable)
{
        struct ng_snapshot *s = tiered();
        s->topo.demotion_enabled = 1;
        add_instance(s, "0-1", "0-2", 0, 0, 4);
        struct ng_audit *a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SLOW_TIER));
        const struct ng_finding *f = find(a, NG_CODE_SHMEM_DEMOTABLE);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(ng_bitmap_test(&f->nodes, 2) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert_msg(!strcmp(f->message, "demotion is on and 1 GiB of the instance's resident shared memory is not "
                              "in hugepages: under memory pressure on node 0 the kernel may move it to the slower "
                              "tier on node 2"), "%s", f->message);
        ck_assert(f->value == (double) (1ull << 30));
        ck_assert(strstr(f->advice, "hugetlb pages are never demoted"));
        ng_audit_free(a);

        /* Tiering-mode NUMA balancing promotes back only what is touched. */
        s->knobs.numa_balancing = 2;
        a = audit(s);
        f = find(a, NG_CODE_SHMEM_DEMOTABLE);
        ck_assert_ptr_nonnull(f);
        ck_assert(strstr(f->message, "(NUMA balancing in tiering mode promotes a page back only once it is touched "
                         "again)"));
        ng_audit_free(a);

        /* Demotion off or unknown: nothing. */
        s->topo.demotion_enabled = 0;
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SHMEM_DEMOTABLE));
        ng_audit_free(a);
        s->topo.demotion_enabled = -1;
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SHMEM_DEMOTABLE));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugetlb_is_never_demoted)
{
        struct ng_snapshot *s = tiered();
        s->topo.demotion_enabled = 1;
        snap_pool(s, 2048, 512, 0, 0);
        add_instance(s, "0-1", "0-2", 0, 0, 2048);
        struct ng_audit *a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_SHMEM_DEMOTABLE));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

/* Two nodes of one socket (sub-NUMA clusters) at distance 11. */
static struct ng_snapshot *snc(bool one_socket)
{
        struct ng_snapshot *s = snap_new(2, 2, 2, 11, 4u << 20);
        if (one_socket)
                s->topo.nodes[1].package_id = 0;
        return s;
}

START_TEST(remote_inside_a_socket)
{
        struct ng_snapshot *s = snc(true);
        add_instance(s, "0-1", "1", 0, 1, 4);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_REMOTE_MEMORY);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_msg(strstr(f->message, "every access is remote; +10 % average memory latency against local "
                             "(distance 11 vs 10, from the SLIT); nodes 0-1 are sub-NUMA clusters of one socket "
                             "(0): the hop stays inside it"), "%s", f->message);
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* Two sockets: critical, and no word of a socket. */
        s = snc(false);
        add_instance(s, "0-1", "1", 0, 1, 4);
        a = audit(s);
        f = find(a, NG_CODE_REMOTE_MEMORY);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert_ptr_null(strstr(f->message, "socket"));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cyclops_inside_a_socket)
{
        struct ng_snapshot *s = snc(true);
        add_instance(s, "0-3", "0-1", 2, 0, 4);
        s->procs[0]->stat.processor = 0;
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_CYCLOPS);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "; nodes 0-1 are sub-NUMA clusters of one socket (0): the hop stays inside it"),
                      "%s", f->message);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(host_numa_knobs)
{
        struct ng_snapshot *s = tiered();
        s->knobs.zone_reclaim_mode = 1;
        s->knobs.numa_balancing = 2;
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_ZONE_RECLAIM_ON);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_str_eq(f->message, "vm.zone_reclaim_mode=1: a node short of free memory reclaims its own page cache "
                         "before it allocates on another node: stalls for the database and its file cache dropped");
        /* Tiering mode alone moves nothing between nodes of one tier. */
        ck_assert_ptr_null(find(a, NG_CODE_AUTONUMA_ON));
        ng_audit_free(a);

        s->knobs.zone_reclaim_mode = 4;
        s->knobs.numa_balancing = 3;
        a = audit(s);
        f = find(a, NG_CODE_ZONE_RECLAIM_ON);
        ck_assert_ptr_nonnull(f);
        ck_assert(strstr(f->message, "(writing dirty pages or swapping, bits 2 and 4)"));
        ck_assert_ptr_nonnull(find(a, NG_CODE_AUTONUMA_ON));
        ng_audit_free(a);

        s->knobs.zone_reclaim_mode = 0;
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_ZONE_RECLAIM_ON));
        ng_audit_free(a);
        s->knobs.zone_reclaim_mode = -1;
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_ZONE_RECLAIM_ON));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(overcommit_hides_a_shortfall)
{
        struct ng_snapshot *s = tiered();
        snap_pool(s, 2048, 100, 0, 0);
        s->pools[0].overcommit_pages = 64;
        s->pools[0].surplus_pages = 20;
        s->topo.nodes[1].pools[0].surplus_pages = 20;
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_OVERCOMMIT);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(ng_bitmap_test(&f->nodes, 1) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert(f->value == 20);
        ck_assert_str_eq(f->message, "20 surplus 2 MiB pages (40 MiB) are in use under vm.nr_overcommit_hugepages = 64: "
                         "the persistent pool of 280 pages was short and the rest came from free memory at fault "
                         "time, on node 1; after a restart on a fragmented host they may not come back");
        ng_audit_free(a);

        /* Overcommit allowed but unused, or surplus without overcommit
         * (a pool shrunk while in use): nothing. */
        s->pools[0].surplus_pages = 0;
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_OVERCOMMIT));
        ng_audit_free(a);
        s->pools[0].surplus_pages = 20;
        s->pools[0].overcommit_pages = 0;
        a = audit(s);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_OVERCOMMIT));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(thp_as_the_vendor_asks)
{
        struct ng_snapshot *s = tiered();
        add_instance(s, "0-1", "0-2", 0, 0, 4);
        snprintf(s->knobs.thp_enabled, sizeof(s->knobs.thp_enabled), "always");
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string("[global]\nmin_segment_size = 1M\n", "t.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_finding *f = find(a, NG_CODE_THP_NOT_AS_VENDOR);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_str_eq(f->instance, "oracle:ORCL");
        ck_assert_str_eq(f->message, "transparent hugepages are \"always\" (/sys/kernel/mm/transparent_hugepage/enabled) "
                         "but oracle asks for \"never\": khugepaged's collapsing and compaction stall the database's "
                         "processes");
        ng_audit_free(a);

        snprintf(s->knobs.thp_enabled, sizeof(s->knobs.thp_enabled), "never");
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        ck_assert_ptr_null(find(a, NG_CODE_THP_NOT_AS_VENDOR));
        ng_audit_free(a);
        /* Unknown (no THP file): nothing. */
        s->knobs.thp_enabled[0] = '\0';
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        ck_assert_ptr_null(find(a, NG_CODE_THP_NOT_AS_VENDOR));
        ng_audit_free(a);
        /* A configured instance is of the engine its main process is of:
         * ORCL's is ora_pmon_ORCL, so Oracle's ask holds for it. */
        snprintf(s->knobs.thp_enabled, sizeof(s->knobs.thp_enabled), "always");
        a = audit(s);
        f = find(a, NG_CODE_THP_NOT_AS_VENDOR);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->instance, "ORCL");
        ck_assert_ptr_nonnull(strstr(f->message, "but oracle asks for \"never\""));
        ng_audit_free(a);
        /* ... and one whose main process is no engine's is asked nothing. */
        snprintf(s->procs[0]->name, sizeof(s->procs[0]->name), "ora-like");
        snprintf(s->procs[1]->name, sizeof(s->procs[1]->name), "ora-like");
        struct ng_config *c2;
        ck_assert_int_eq(ng_config_load_string("[global]\nmin_segment_size = 1M\n[instance X]\nmatch_comm = ora-like\n",
                                               "t.conf", NULL, NULL, &c2), 0);
        ck_assert_int_eq(ng_audit_run(s, c2, &a), 0);
        ck_assert_ptr_null(find(a, NG_CODE_THP_NOT_AS_VENDOR));
        ng_audit_free(a);
        ng_config_free(c2);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("tiers");
        TCase *tc = tcase_create("tiers");
        tcase_add_test(tc, slow_tier);
        tcase_add_test(tc, slow_tier_boundaries);
        tcase_add_test(tc, shmem_demotable);
        tcase_add_test(tc, hugetlb_is_never_demoted);
        suite_add_tcase(s, tc);
        tc = tcase_create("sockets");
        tcase_add_test(tc, remote_inside_a_socket);
        tcase_add_test(tc, cyclops_inside_a_socket);
        suite_add_tcase(s, tc);
        tc = tcase_create("host");
        tcase_add_test(tc, host_numa_knobs);
        tcase_add_test(tc, overcommit_hides_a_shortfall);
        tcase_add_test(tc, thp_as_the_vendor_asks);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

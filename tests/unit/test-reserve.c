/* Hugepage reservations against the nodes that can serve them: the needs an
 * audit yields (reserved, faulted, the nodes a first touch may use), the
 * check of each correction that narrows them or takes free pages (cpuset
 * mems, a pool shrunk, hugetlb pages moved), and HUGEPAGE_SIGBUS_RISK. The
 * shape is the SIGBUS case of the NUMA guest: 8 reserved 2 MiB SysV pages,
 * 4 faulted from node 1's pool, node 1 then empty and node 0 with 4 free. */

#include "snapshot-builder.h"
#include "ng-act-cpuset.h"
#include "ng-act-hugepages.h"
#include "ng-act-rebalance.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-reserve.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static struct ng_config *conf(const char *text)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string(text, "test.conf", NULL, NULL, &c), 0);
        return c;
}

static struct ng_audit *run(const struct ng_snapshot *s, const struct ng_config *c)
{
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        return a;
}

static void set_free(struct ng_snapshot *s, int node, uint64_t nr, uint64_t free_pages)
{
        struct ng_hugepool *hp = &s->topo.nodes[node].pools[0];
        s->pools[0].nr_pages += nr - hp->nr_pages;
        s->pools[0].free_pages += free_pages - hp->free_pages;
        hp->nr_pages = nr;
        hp->free_pages = free_pages;
}

/* 4 nodes; pools: node 0 4 free of 4, node 1 0 free of 4, node 2 free2 of
 * free2; a 16 MiB SHM_HUGETLB segment (8 pages) with 4 faulted on node 1
 * (rss 8 MiB, resv 4), mapped by pid 100 of cgroup /hp with mems "mems". */
static struct ng_snapshot *sigbus_shape(const char *mems, uint64_t free2)
{
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 4);
        set_free(s, 0, 4, 4);
        set_free(s, 1, 4, 0);
        set_free(s, 2, free2, free2);
        snap_shm(s, 5, 16 * MiB, 1, 0);
        s->shm[0].rss_bytes = 8 * MiB;
        struct ng_proc *p = snap_proc(s, 100, 1, "hpdb", "1", mems);
        snap_proc_cgroup(p, "/hp");
        static const struct ng_node_pages on1[] = { { 1, 4 } };
        snap_map_sysv(p, 5, 0x7f0000000000, 16 * MiB, 2048, on1, 1);
        return s;
}

#define HP "[instance hp]\nmatch_comm = hpdb\n"

START_TEST(needs_count_reserved_faulted_and_nodes)
{
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        struct ng_resv_need *needs;
        size_t n;
        ck_assert_int_eq(ng_resv_needs(s, a, NULL, &needs, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(needs[0].page_kib, 2048);
        ck_assert_uint_eq(needs[0].reserved_pages, 8);
        ck_assert_uint_eq(needs[0].faulted_pages, 4);
        ck_assert_uint_eq(needs[0].unfaulted_pages, 4);
        ck_assert(!needs[0].faulted_at_least);
        ck_assert_int_eq(needs[0].pid, 100);
        ck_assert_uint_eq(ng_bitmap_count(&needs[0].nodes), 2);
        ck_assert(ng_bitmap_test(&needs[0].nodes, 0) && ng_bitmap_test(&needs[0].nodes, 1));
        struct ng_resv_weighed w;
        ng_resv_weigh(s, needs, n, NULL, &w);
        ck_assert_int_eq(w.state, NG_RESV_COVERED);
        ck_assert_uint_eq(w.free_pages, 4);
        free(needs);

        /* The kernel's resv_hugepages bounds what is still to fault. */
        s->pools[0].resv_pages = 3;
        ck_assert_int_eq(ng_resv_needs(s, a, NULL, &needs, &n), 0);
        ck_assert_uint_eq(needs[0].unfaulted_pages, 3);
        free(needs);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cpuset_change_narrows_the_nodes_of_its_cgroup_only)
{
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        struct ng_resv_change chg = { .cgroup = "/hp" };
        bm(&chg.mems, "1");
        struct ng_resv_verdict v;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(v.checked);
        ck_assert(!v.ok);
        ck_assert(!v.unknown);
        ck_assert_uint_eq(v.after.demand_pages, 4);
        ck_assert_uint_eq(v.after.free_pages, 0);
        ck_assert_uint_eq(v.after.short_pages, 4);
        ck_assert_uint_eq(v.before.free_pages, 4);
        ck_assert_msg(strstr(v.message, "4 reserved 2M hugepages not yet faulted with 0 free on node 1, 4 short") &&
                      strstr(v.message, "SIGBUS") && strstr(v.message, "4 of 8 reserved") &&
                      strstr(v.message, "node 0 4"), "%s", v.message);

        /* Another cgroup's change, or a wider one: nothing to refuse. */
        chg.cgroup = "/other";
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(v.ok);
        chg.cgroup = "/hp";
        bm(&chg.mems, "0");
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert_msg(v.ok, "%s", v.message);

        /* A parent's change reaches it too (its own mems narrowed by it). */
        chg.cgroup = "/";
        bm(&chg.mems, "1-3");
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(!v.ok);

        /* Once node 1's pool holds the pages, the same change passes. */
        set_free(s, 1, 8, 4);
        chg.cgroup = "/hp";
        bm(&chg.mems, "1");
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert_msg(v.ok && v.checked, "%s", v.message);
        ck_assert_ptr_nonnull(strstr(v.message, "hugepage reservations checked"));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(pool_shrink_and_unknown_pool)
{
        /* Node 2 holds 4 more free pages: the kernel would let node 0 shrink
         * (the global count stays whole), the instance could not use them. */
        struct ng_snapshot *s = sigbus_shape("0-1", 4);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        struct ng_resv_delta d[] = { { 0, -4 } };
        struct ng_resv_change chg = { .page_kib = 2048, .delta = d, .n_delta = 1 };
        struct ng_resv_verdict v;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(!v.ok);
        ck_assert_uint_eq(v.after.short_pages, 4);
        /* Another page size, or a node it cannot use: no effect. */
        chg.page_kib = 1048576;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(v.ok);
        chg.page_kib = 2048;
        d[0].node = 2;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(v.ok);
        /* Shrinking one of two pages away is one page short. */
        d[0] = (struct ng_resv_delta) { 0, -1 };
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(!v.ok);
        ck_assert_uint_eq(v.after.short_pages, 1);

        /* A pool that could not be read refuses: never an unearned all-clear. */
        s->topo.nodes[0].pools[0].unknown = true;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(!v.ok && v.unknown);
        ck_assert_ptr_nonnull(strstr(v.message, "cannot be checked"));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(an_instance_already_short_may_not_get_shorter)
{
        /* Confined to node 1 already (something else narrowed it): short by
         * 4. Growing node 1 by 2 is fine, taking node 1's last free page is
         * not, and nothing about node 0 matters to it. */
        struct ng_snapshot *s = sigbus_shape("1", 0);
        set_free(s, 1, 5, 1);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        struct ng_resv_delta d[] = { { 1, 2 } };
        struct ng_resv_change chg = { .page_kib = 2048, .delta = d, .n_delta = 1 };
        struct ng_resv_verdict v;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(v.ok);
        d[0].pages = -1;
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(!v.ok);
        ck_assert_uint_eq(v.before.short_pages, 3);
        ck_assert_uint_eq(v.after.short_pages, 4);
        d[0] = (struct ng_resv_delta) { 0, -4 };
        ck_assert_int_eq(ng_resv_check(s, a, &chg, &v), 0);
        ck_assert(v.ok);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(two_instances_confined_alike_share_the_free_pages)
{
        /* A second instance on node 0 alone with 4 unfaulted pages: the
         * first one may not count node 0's 4 free pages as its own too. */
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        snap_shm(s, 6, 16 * MiB, 1, 0);
        s->shm[1].rss_bytes = 8 * MiB;
        s->pools[0].resv_pages = 8;
        struct ng_proc *p = snap_proc(s, 200, 1, "otherdb", "0", "0");
        snap_proc_cgroup(p, "/other");
        static const struct ng_node_pages on0[] = { { 0, 4 } };
        snap_map_sysv(p, 6, 0x7f1000000000, 16 * MiB, 2048, on0, 1);
        struct ng_config *c = conf(HP "[instance other]\nmatch_comm = otherdb\n");
        struct ng_audit *a = run(s, c);
        struct ng_resv_need *needs;
        size_t n;
        ck_assert_int_eq(ng_resv_needs(s, a, NULL, &needs, &n), 0);
        ck_assert_uint_eq(n, 2);
        struct ng_resv_weighed w[2];
        ng_resv_weigh(s, needs, n, NULL, w);
        size_t hp = needs[0].pid == 100 ? 0 : 1;
        ck_assert_uint_eq(w[hp].demand_pages, 8);
        ck_assert_int_eq(w[hp].state, NG_RESV_SHORT);
        ck_assert_int_eq(w[1 - hp].state, NG_RESV_COVERED);
        free(needs);
        /* Both short already shows as one finding, for the wider one. */
        size_t risks = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_HUGEPAGE_SIGBUS_RISK) {
                        risks++;
                        ck_assert_str_eq(a->findings[i].instance, "hp");
                }
        ck_assert_uint_eq(risks, 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

static const struct ng_finding *risk(const struct ng_audit *a)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_HUGEPAGE_SIGBUS_RISK)
                        return &a->findings[i];
        return NULL;
}

static const struct ng_finding *memcg_risk(const struct ng_audit *a)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_HUGEPAGE_SIGBUS_RISK && strstr(a->findings[i].message, "memory.max"))
                        return &a->findings[i];
        return NULL;
}

/* Hugetlb charged to the memory cgroup (memory_hugetlb_accounting): the 4
 * unfaulted pages (8 MiB) against memory.max of /hp, which holds the 4
 * faulted ones (8 MiB of hugetlb) and 4 MiB else. The nodes cover them. */
START_TEST(memory_cgroup_bounds_the_faults)
{
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        struct ng_cgroup *cg = snap_cgroup(s, "/hp", "0-3", "0-1");
        snap_cgroup_memory(cg, 20 * MiB, 12 * MiB, 8 * MiB);
        snap_cgroup2_mount(s, "rw,nsdelegate");
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        ck_assert_ptr_null(risk(a));            /* not charged: the option is off */
        ng_audit_free(a);
        free(s->mounts[0].super_options);
        s->mounts[0].super_options = strdup("rw,nsdelegate,memory_hugetlb_accounting");
        const struct ng_instance *in;
        struct ng_resv_memcg m;
        /* 8 MiB free below 20 MiB: room */
        a = run(s, c);
        in = ng_audit_instance(a, "hp");
        ng_resv_memcg(s, a, in, &m);
        ck_assert_int_eq(m.state, NG_RESV_MEMCG_ROOM);
        ck_assert_uint_eq(m.unfaulted_bytes, 8 * MiB);
        ck_assert_ptr_eq(m.cgroup, cg);
        ck_assert_ptr_null(risk(a));
        ng_audit_free(a);
        /* 16 MiB: 4 MiB free, 8 MiB beside its hugetlb: a warning, the
         * faults reclaim the rest first */
        cg->memory.max_bytes = 16 * MiB;
        a = run(s, c);
        const struct ng_finding *f = memcg_risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(f->value == 4 * MiB);
        ck_assert_str_eq(f->instance, "hp");
        ck_assert_uint_eq(ng_bitmap_count(&f->nodes), 0);
        ck_assert_msg(strstr(f->message, "8 MiB of hugepages not yet faulted (shmid 5") &&
                      strstr(f->message, "cgroup /hp (memory_hugetlb_accounting), whose memory.max 16 MiB leaves 4 "
                             "MiB (it holds 12 MiB, 8 MiB of it hugetlb)") &&
                      strstr(f->message, "only if the charge first reclaims") &&
                      strstr(f->message, "VM_FAULT_OOM, not SIGBUS"), "%s", f->message);
        ck_assert_msg(strstr(f->advice, "raise memory.max of cgroup /hp by at least 4 MiB"), "%s", f->advice);
        ng_audit_free(a);
        /* 14 MiB: 6 MiB beside its hugetlb, whatever else is reclaimed */
        cg->memory.max_bytes = 14 * MiB;
        a = run(s, c);
        f = memcg_risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert(f->value == 2 * MiB);
        ck_assert_ptr_nonnull(strstr(f->message, "whatever else is reclaimed"));
        ck_assert_int_eq(ng_audit_exit_status(a), 2);
        ng_audit_free(a);
        /* memory.stat without a hugetlb line: only the free part is known */
        cg->memory.hugetlb_known = false;
        a = run(s, c);
        f = memcg_risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_ptr_nonnull(strstr(f->message, "(its hugetlb unknown)"));
        ng_audit_free(a);
        /* ... but a memory.max below what is still to fault is beyond any
         * reclaim, its hugetlb known or not (6.12's memory.stat lists none) */
        cg->memory.max_bytes = 6 * MiB;
        a = run(s, c);
        f = memcg_risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert(f->value == 2 * MiB);
        ck_assert_msg(strstr(f->message, "more than all of its memory.max, whatever else is reclaimed (its hugetlb "
                             "unknown)"), "%s", f->message);
        ck_assert_int_eq(ng_audit_exit_status(a), 2);
        ng_audit_free(a);
        cg->memory.max_bytes = 14 * MiB;
        /* the memory files not read: unknown, no finding made of nothing */
        cg->memory.known = false;
        a = run(s, c);
        ng_resv_memcg(s, a, ng_audit_instance(a, "hp"), &m);
        ck_assert_int_eq(m.state, NG_RESV_MEMCG_UNKNOWN);
        ck_assert_ptr_null(memcg_risk(a));
        ng_audit_free(a);
        /* everything faulted: nothing to charge */
        cg->memory.known = true;
        s->shm[0].rss_bytes = 16 * MiB;
        a = run(s, c);
        ng_resv_memcg(s, a, ng_audit_instance(a, "hp"), &m);
        ck_assert_int_eq(m.state, NG_RESV_MEMCG_NONE);
        ck_assert_ptr_null(memcg_risk(a));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(finding_for_the_risk_that_exists)
{
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        ck_assert_ptr_null(risk(a));
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* Narrowed to node 1 by someone else: critical, with the numbers. */
        s = sigbus_shape("1", 0);
        a = run(s, c);
        const struct ng_finding *f = risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert_str_eq(f->instance, "hp");
        ck_assert(f->value == 4);
        ck_assert(ng_bitmap_test(&f->nodes, 1) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert_msg(strstr(f->message, "4 pages short") && strstr(f->message, "4 of 8 reserved 2M") &&
                      strstr(f->message, "node 1 0") && strstr(f->message, "node 0 4"), "%s", f->message);
        ck_assert_msg(strstr(f->advice, "--node 1 --pages 8"), "%s", f->advice);
        ck_assert_int_eq(ng_audit_exit_status(a), 2);
        ng_audit_free(a);

        /* Surplus pages the kernel may still make: a warning, said so. */
        s->pools[0].overcommit_pages = 16;
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", GiB / 1024);
        s->topo.nodes[1].has_meminfo = true;
        a = run(s, c);
        f = risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_ptr_nonnull(strstr(f->message, "surplus"));
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* Everything faulted: nothing reserved is left to take. */
        s = sigbus_shape("1", 0);
        s->shm[0].rss_bytes = 16 * MiB;
        a = run(s, c);
        ck_assert_ptr_null(risk(a));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cpuset_plan_gate)
{
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        snap_cgroup(s, "/hp", "1", "0-1");
        struct ng_config *c = conf("[instance hp]\ncgroup = /hp\npolicy = bind\nnodes = 1\n");
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "hp");
        ck_assert_ptr_nonnull(in);
        struct ng_cpuset_bounds parent;
        bm(&parent.cpus, "0-3");
        bm(&parent.mems, "0-3");
        struct ng_cpuset_plan plan;
        ck_assert_int_eq(ng_cpuset_plan(s, in, &parent, &plan), 0);
        ck_assert(!plan.refused && plan.write_mems);
        ck_assert_int_eq(ng_cpuset_plan_check(s, a, &plan), 0);
        ck_assert(plan.refused && plan.check_refused);
        ck_assert_msg(strstr(plan.reason, "cpuset.mems 1: it would leave 4 reserved 2M hugepages"), "%s", plan.reason);
        /* Refused before any write, the check in the result. */
        struct ng_action_result *res;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_cpuset_apply(NULL, &ng_action_ops_default, &plan, true, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_REFUSED);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert(res->check_refused);
        ck_assert_ptr_nonnull(strstr(res->summary, "SIGBUS"));

        /* Node 1's pool grown: the plan passes and says what it weighed. */
        set_free(s, 1, 8, 4);
        ck_assert_int_eq(ng_cpuset_plan(s, in, &parent, &plan), 0);
        ck_assert_int_eq(ng_cpuset_plan_check(s, a, &plan), 0);
        ck_assert(!plan.refused && !plan.check_refused);
        ck_assert_ptr_nonnull(strstr(plan.check, "hugepage reservations checked"));
        ng_action_result_free(res);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugepages_plan_gate)
{
        struct ng_snapshot *s = sigbus_shape("0-1", 4);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        struct ng_act_hugepages *act;
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 2048, 0, 0, &act), 0);
        ck_assert(!act->refused);
        ck_assert_int_eq(ng_act_hugepages_check(s, a, act), 0);
        ck_assert(act->refused && act->check_refused);
        ck_assert_msg(strstr(act->reason, "0 free on nodes 0-1, 4 short"), "%s", act->reason);
        struct ng_action_result *res;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_act_hugepages_run(act, NULL, &ng_action_ops_default, false, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_REFUSED);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert_ptr_nonnull(strstr(res->summary, "would take free pages a reservation needs"));
        ng_act_hugepages_free(act);
        /* Node 2's pool may shrink; growing never refuses. */
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 2048, 0, 2, &act), 0);
        ck_assert_int_eq(ng_act_hugepages_check(s, a, act), 0);
        ck_assert_msg(!act->refused, "%s", act->reason);
        ng_act_hugepages_free(act);
        ck_assert_int_eq(ng_act_hugepages_plan_reserve(s, 0, 2048, 8, 1, &act), 0);
        ck_assert_int_eq(ng_act_hugepages_check(s, a, act), 0);
        ck_assert(!act->refused);
        ck_assert_str_eq(act->check, "");
        ng_act_hugepages_free(act);
        ng_action_result_free(res);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(rebalance_plan_gate)
{
        /* Pages of another instance's hugetlb segment moving onto node 0
         * take the free pages instance hp needs there. */
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        struct ng_rebalance_plan *p = xcalloc(1, sizeof(*p));
        p->huge = true;
        p->page_bytes = 2 * MiB;
        p->verdict = NG_OUTCOME_DRY_RUN;
        p->move_pages = 3;
        p->n_nodes = 2;
        p->nodes[0] = (struct ng_rebalance_node) { .node = 0, .dest = true, .in_pages = 3 };
        p->nodes[1] = (struct ng_rebalance_node) { .node = 2, .out_pages = 3 };
        ck_assert_int_eq(ng_rebalance_plan_check(s, a, p), 0);
        ck_assert_int_eq(p->verdict, NG_OUTCOME_REFUSED);
        ck_assert(p->check_refused);
        ck_assert_ptr_nonnull(strstr(p->reason, "3 short"));
        /* Between the nodes it may use, a move changes nothing for it. */
        p->verdict = NG_OUTCOME_DRY_RUN;
        p->check_refused = false;
        p->nodes[1].node = 1;
        ck_assert_int_eq(ng_rebalance_plan_check(s, a, p), 0);
        ck_assert_int_eq(p->verdict, NG_OUTCOME_DRY_RUN);
        /* 4 KiB pages come from no pool. */
        p->huge = false;
        p->nodes[1].node = 2;
        ck_assert_int_eq(ng_rebalance_plan_check(s, a, p), 0);
        ck_assert_int_eq(p->verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_str_eq(p->check, "");
        free(p);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(bind_policy_narrows_the_nodes)
{
        /* mems 0-1, but the segment is bound to node 1 (numactl --membind):
         * node 0's free pages cannot serve its faults. */
        struct ng_snapshot *s = sigbus_shape("0-1", 0);
        s->procs[0]->numa_maps[0].policy = NG_MPOL_BIND;
        free(s->procs[0]->numa_maps[0].policy_nodes);
        s->procs[0]->numa_maps[0].policy_nodes = strdup("1");
        struct ng_config *c = conf(HP);
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = risk(a);
        ck_assert_ptr_nonnull(f);
        ck_assert(ng_bitmap_test(&f->nodes, 1) && ng_bitmap_count(&f->nodes) == 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("reserve");
        TCase *tc = tcase_create("reserve");
        tcase_add_test(tc, needs_count_reserved_faulted_and_nodes);
        tcase_add_test(tc, cpuset_change_narrows_the_nodes_of_its_cgroup_only);
        tcase_add_test(tc, pool_shrink_and_unknown_pool);
        tcase_add_test(tc, an_instance_already_short_may_not_get_shorter);
        tcase_add_test(tc, two_instances_confined_alike_share_the_free_pages);
        tcase_add_test(tc, finding_for_the_risk_that_exists);
        tcase_add_test(tc, memory_cgroup_bounds_the_faults);
        tcase_add_test(tc, cpuset_plan_gate);
        tcase_add_test(tc, hugepages_plan_gate);
        tcase_add_test(tc, rebalance_plan_gate);
        tcase_add_test(tc, bind_policy_narrows_the_nodes);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* rebalance: the planner on literal snapshots (targets, no-ops, refusals for
 * free memory and free hugepages, how each kind of segment is reached), and
 * the executor against a fake move_pages(2) that keeps a page -> node
 * table: batches, rate-limit sleeps, per-node counts, pages never resident
 * left alone, busy pages, a vanished process, missing privilege. The
 * executor's tests run both ways a segment is reached (_i): through the
 * attacher's addresses (0), and through a mapping of our own of the
 * segment's file (1: a memfd whose resident page i holds i, its holes
 * never handed over). */

#include <fcntl.h>
#include <numaif.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "snapshot-builder.h"
#include "ng-act-rebalance.h"
#include "ng-audit.h"
#include "ng-config.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)
#define START UINT64_C(0x7f0000000000)

/* ---- fixtures ---- */

struct fixture {
        struct ng_snapshot *s;
        struct ng_config *cfg;
        struct ng_audit *a;
        struct ng_rebalance_plan plan;
};

/* ORCL: pids 100 (pages per node in numa_maps) and 101 attached to SysV
 * shmid 7 of bytes, page_kib pages, CPUs on every node. conf_extra: more
 * [global] keys, then "|", then more [instance ORCL] keys. */
static void build(struct fixture *f, int nodes, uint64_t bytes, uint64_t page_kib, const struct ng_node_pages *pl,
                  size_t n_pl, const char *conf_extra)
{
        memset(f, 0, sizeof(*f));
        f->s = snap_new(nodes, 1, nodes, 21, 16 * GiB / 1024);
        snap_shm(f->s, 7, bytes, 2, 0);
        char mems[16];
        snprintf(mems, sizeof(mems), "0-%d", nodes - 1);
        snap_map_sysv(snap_proc(f->s, 100, 1, "ora_pmon_ORCL", nodes > 1 ? "0-3" : "0", mems), 7, START, bytes,
                      page_kib, pl, n_pl);
        snap_map_sysv(snap_proc(f->s, 101, 1, "ora_dbw0_ORCL", nodes > 1 ? "0-3" : "0", mems), 7, START, bytes,
                      page_kib, NULL, 0);
        char text[512];
        const char *bar = conf_extra ? strchr(conf_extra, '|') : NULL;
        snprintf(text, sizeof(text), "[global]\nmin_segment_size = 4M\n%.*s[instance ORCL]\nmatch_comm = ora_*\n%s",
                 bar ? (int) (bar - conf_extra) : 0, conf_extra ? conf_extra : "", bar ? bar + 1 : "");
        ck_assert_int_eq(ng_config_load_string(text, "test.conf", NULL, NULL, &f->cfg), 0);
}

static void plan(struct fixture *f)
{
        ck_assert_int_eq(ng_audit_run(f->s, f->cfg, &f->a), 0);
        const struct ng_instance *in = ng_audit_instance(f->a, "ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_segs, 1);
        ck_assert_int_eq(ng_rebalance_plan_segment(f->s, f->cfg, in, &f->a->segments[in->segs[0]], &f->plan), 0);
}

static void done(struct fixture *f)
{
        ng_audit_free(f->a);
        ng_config_free(f->cfg);
        ng_snapshot_free(f->s);
}

static const struct ng_rebalance_node *pnode(const struct ng_rebalance_plan *p, int node)
{
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].node == node)
                        return &p->nodes[i];
        ck_abort_msg("node %d not in the plan", node);
        return NULL;
}

/* A 32 MiB 4 KiB-page cyclops: 8192 pages on node 0 of 4. */
static void cyclops_4k(struct fixture *f)
{
        static const struct ng_node_pages pl[] = { { 0, 8192 } };
        build(f, 4, 32 * MiB, 4, pl, 1, NULL);
        plan(f);
}

/* ---- planner ---- */

START_TEST(plan_cyclops_spreads_over_all_nodes)
{
        struct fixture f;
        cyclops_4k(&f);
        const struct ng_rebalance_plan *p = &f.plan;
        ck_assert_int_eq(p->verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_int_eq(p->pid, 100);
        ck_assert_uint_eq(p->page_bytes, 4096);
        ck_assert_uint_eq(p->n_ranges, 1);
        ck_assert_uint_eq(p->ranges[0].start, START);
        ck_assert_uint_eq(p->ranges[0].end, START + 32 * MiB);
        ck_assert_uint_eq(p->n_dest, 4);
        ck_assert_uint_eq(p->resident_pages, 8192);
        ck_assert_uint_eq(p->move_pages, 6144);
        ck_assert_uint_eq(pnode(p, 0)->target_pages, 2048);
        ck_assert_uint_eq(pnode(p, 0)->out_pages, 6144);
        for (int n = 1; n < 4; n++) {
                ck_assert_uint_eq(pnode(p, n)->target_pages, 2048);
                ck_assert_uint_eq(pnode(p, n)->in_pages, 2048);
                ck_assert_uint_eq(pnode(p, n)->out_pages, 0);
        }
        char buf[128];
        ck_assert_str_eq(ng_rebalance_format_moves(p, false, buf, sizeof(buf)),
                         "node0 -6144, node1 +2048, node2 +2048, node3 +2048");
        done(&f);
}
END_TEST

START_TEST(plan_never_onto_a_slower_tier)
{
        /* Nodes 0-2 in tier 4, node 3 in tier 5 (dax/kmem): the cyclops on
         * node 0 spreads over nodes 0-2 only. */
        static const struct ng_node_pages pl[] = { { 0, 8190 } };
        struct fixture f;
        build(&f, 4, 32 * MiB - 8192, 4, pl, 1, NULL);
        snap_tier(f.s, 4, "0-2");
        snap_tier(f.s, 5, "3");
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(f.plan.n_dest, 3);
        ck_assert(!pnode(&f.plan, 3)->dest);
        ck_assert_uint_eq(pnode(&f.plan, 3)->in_pages, 0);
        for (int n = 0; n < 3; n++)
                ck_assert_uint_eq(pnode(&f.plan, n)->target_pages, 2730);
        done(&f);

        /* Not even when nodes= names it. */
        build(&f, 4, 32 * MiB - 8192, 4, pl, 1, "|policy = interleave\nnodes = 0,3\n");
        snap_tier(f.s, 4, "0-2");
        snap_tier(f.s, 5, "3");
        plan(&f);
        ck_assert_uint_eq(f.plan.n_dest, 1);
        ck_assert(!pnode(&f.plan, 3)->dest);
        ck_assert_uint_eq(f.plan.move_pages, 0);
        done(&f);
}
END_TEST

START_TEST(plan_weighted_interleave)
{
        /* policy weighted-interleave over nodes 0, 2 and 3, node 3 a slower
         * tier (CXL): the HMAT's 20000, 8000 and 16000 MB/s from node 0 make
         * shares of 5, 2 and 4; 8195 pages on node 0. */
        static const struct ng_node_pages pl[] = { { 0, 8195 } };
        struct fixture f;
        build(&f, 4, 32 * MiB + 3 * 4096, 4, pl, 1, "|policy = weighted-interleave\nnodes = 0,2,3\n");
        snap_tier(f.s, 4, "0-2");
        snap_tier(f.s, 5, "3");
        static const int64_t bw[] = { 20000, 20000, 8000, 16000 };
        for (int i = 0; i < 4; i++)
                snap_hmat(f.s, i, 1, "0", 100, bw[i]);
        f.s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE].state = NG_FEATURE_PRESENT;
        plan(&f);
        const struct ng_rebalance_plan *p = &f.plan;
        ck_assert_uint_eq(p->n_dest, 3);                /* the slower tier too: it is what weights are for */
        ck_assert_int_eq(p->policy, NG_MPOL_WEIGHTED_INTERLEAVE);
        ck_assert_str_eq(p->policy_text, "weighted interleave:0,2-3");
        ck_assert_str_eq(p->weights_source, "HMAT bandwidth");
        ck_assert_uint_eq(pnode(p, 0)->target_pages, 3725);    /* 8195 x 5/11 */
        ck_assert_uint_eq(pnode(p, 2)->target_pages, 1490);
        ck_assert_uint_eq(pnode(p, 3)->target_pages, 2980);
        ck_assert_uint_eq(pnode(p, 0)->target_pages + pnode(p, 2)->target_pages + pnode(p, 3)->target_pages, 8195);
        done(&f);

        /* without the kernel's weighted interleave: even, fast tier only */
        build(&f, 4, 32 * MiB + 3 * 4096, 4, pl, 1, "|policy = weighted-interleave\nnodes = 0,2,3\n");
        snap_tier(f.s, 4, "0-2");
        snap_tier(f.s, 5, "3");
        plan(&f);
        ck_assert_uint_eq(f.plan.n_dest, 2);
        ck_assert_str_eq(f.plan.policy_text, "interleave:0,2");
        ck_assert_str_eq(f.plan.weights_source, "");
        done(&f);
}
END_TEST

/* The host's weights: files written here, read back as written. */
struct wfiles {
        char path[4][128], value[4][16];
        int n, fail;
};

static int w_write(void *userdata, const struct ng_path *p, const char *path, const char *value)
{
        struct wfiles *w = userdata;
        (void) p;
        if (w->fail)
                return -EACCES;
        snprintf(w->path[w->n], sizeof(w->path[0]), "%s", path);
        snprintf(w->value[w->n], sizeof(w->value[0]), "%s", value);
        w->n++;
        return 0;
}

static int w_read(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size)
{
        struct wfiles *w = userdata;
        (void) p;
        snprintf(buf, size, "1\n");
        for (int i = 0; i < w->n; i++)
                if (!strcmp(w->path[i], path))
                        snprintf(buf, size, "%s\n", w->value[i]);
        return 0;
}

START_TEST(weights_written)
{
        static const struct ng_node_pages pl[] = { { 0, 8195 } };
        struct fixture f;
        build(&f, 4, 32 * MiB + 3 * 4096, 4, pl, 1, "|policy = weighted-interleave\nnodes = 0,2,3\n");
        static const int64_t bw[] = { 20000, 20000, 8000, 16000 };
        for (int i = 0; i < 4; i++) {
                snap_hmat(f.s, i, 1, "0", 100, bw[i]);
                f.s->topo.nodes[i].interleave_weight = i == 2 ? 2 : 1;         /* node 2 is right already */
        }
        f.s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE].state = NG_FEATURE_PRESENT;
        plan(&f);
        const struct ng_instance *in = ng_audit_instance(f.a, "ORCL");
        struct wfiles w = {0};
        struct ng_action_ops ops = { .size = sizeof(ops), .write = w_write, .read = w_read, .userdata = &w };
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(NULL, &p), 0);
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        /* the dry run: two writes shown, none done */
        ck_assert_int_eq(ng_interleave_weights_run(f.s, in, &ops, p, true, res), 1);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(res->n_writes, 2);
        ck_assert_str_eq(res->writes[0].path, "/sys/kernel/mm/mempolicy/weighted_interleave/node0");
        ck_assert_str_eq(res->writes[0].value, "5");
        ck_assert_str_eq(res->writes[1].path, "/sys/kernel/mm/mempolicy/weighted_interleave/node3");
        ck_assert_str_eq(res->writes[1].value, "4");
        ck_assert_int_eq(w.n, 0);
        ck_assert_msg(strstr(res->summary, "would set the host's weighted-interleave weights node0 5, node2 2, node3 4 "
                             "(HMAT bandwidth; host-global)"), "%s", res->summary);
        /* done, read back */
        ng_action_result_reset(res);
        ck_assert_int_eq(ng_interleave_weights_run(f.s, in, &ops, p, false, res), 1);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_int_eq(w.n, 2);
        ck_assert_str_eq(res->writes[1].after, "4");
        /* refused by the kernel: the error's outcome */
        ng_action_result_reset(res);
        w = (struct wfiles) { .fail = 1 };
        ck_assert_int_eq(ng_interleave_weights_run(f.s, in, &ops, p, false, res), 1);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_PERMANENT);
        ck_assert_int_eq(res->error, -EACCES);
        /* a kernel without weighted interleave: nothing to write */
        ng_action_result_reset(res);
        f.s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE].state = NG_FEATURE_ABSENT;
        ck_assert_int_eq(ng_interleave_weights_run(f.s, in, &ops, p, false, res), 0);
        ck_assert_uint_eq(res->n_writes, 0);
        ng_path_free(p);
        done(&f);
}
END_TEST

START_TEST(plan_only_the_excess_moves)
{
        /* 6000 / 2192 / 0 / 0 of 8192: nodes 2 and 3 take 2048 each, node 1
         * keeps its 2048 plus the remainder-free share. */
        static const struct ng_node_pages pl[] = { { 0, 6000 }, { 1, 2192 } };
        struct fixture f;
        build(&f, 4, 32 * MiB, 4, pl, 2, NULL);
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(f.plan.move_pages, 4096);
        ck_assert_uint_eq(pnode(&f.plan, 0)->out_pages, 3952);
        ck_assert_uint_eq(pnode(&f.plan, 1)->out_pages, 144);
        ck_assert_uint_eq(pnode(&f.plan, 2)->in_pages, 2048);
        ck_assert_uint_eq(pnode(&f.plan, 3)->in_pages, 2048);
        done(&f);
}
END_TEST

START_TEST(plan_noop_when_spread_or_one_node)
{
        static const struct ng_node_pages even[] = { { 0, 2048 }, { 1, 2048 }, { 2, 2048 }, { 3, 2048 } };
        struct fixture f;
        build(&f, 4, 32 * MiB, 4, even, 4, NULL);
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_NOOP);
        ck_assert_uint_eq(f.plan.move_pages, 0);
        ck_assert_ptr_nonnull(strstr(f.plan.reason, "already spread"));
        done(&f);

        static const struct ng_node_pages one[] = { { 0, 8192 } };
        build(&f, 1, 32 * MiB, 4, one, 1, NULL);
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_NOOP);
        ck_assert_ptr_nonnull(strstr(f.plan.reason, "one NUMA node"));
        done(&f);
}
END_TEST

START_TEST(plan_configured_nodes)
{
        static const struct ng_node_pages pl[] = { { 0, 8192 } };
        struct fixture f;
        build(&f, 4, 32 * MiB, 4, pl, 1, "|policy = interleave\nnodes = 1-2\n");
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(f.plan.n_dest, 2);
        ck_assert_int_eq(f.plan.dest[0], 1);
        ck_assert_int_eq(f.plan.dest[1], 2);
        ck_assert_uint_eq(pnode(&f.plan, 0)->out_pages, 8192);
        ck_assert(!pnode(&f.plan, 0)->dest);
        ck_assert_uint_eq(pnode(&f.plan, 1)->in_pages, 4096);
        ck_assert_uint_eq(pnode(&f.plan, 2)->in_pages, 4096);
        ck_assert_uint_eq(pnode(&f.plan, 3)->in_pages, 0);
        done(&f);
}
END_TEST

START_TEST(plan_never_outside_the_instance_memory_nodes)
{
        /* Its processes may use nodes 0-1 only (a cpuset): the spread stays
         * there, though numaguard's own mapping could reach the others. */
        static const struct ng_node_pages pl[] = { { 0, 8192 } };
        struct fixture f;
        build(&f, 4, 32 * MiB, 4, pl, 1, NULL);
        for (size_t i = 0; i < f.s->n_procs; i++) {
                idset(&f.s->procs[i]->status.mems_allowed, "0-1");
        }
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(f.plan.n_dest, 2);
        ck_assert_int_eq(f.plan.dest[0], 0);
        ck_assert_int_eq(f.plan.dest[1], 1);
        ck_assert(!pnode(&f.plan, 2)->dest && !pnode(&f.plan, 3)->dest);
        ck_assert_uint_eq(f.plan.move_pages, 4096);
        done(&f);
}
END_TEST

START_TEST(plan_refused_without_free_memory)
{
        static const struct ng_node_pages pl[] = { { 0, 8192 } };
        struct fixture f;
        /* node 3: 300 MiB free, floor 256 MiB: 44 MiB above it, 8 MiB needed: fine */
        build(&f, 4, 32 * MiB, 4, pl, 1, "node_free_floor = 256M\n|");
        mi_set(&f.s->topo.nodes[3].meminfo, "MemFree", 300 * 1024);
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(pnode(&f.plan, 3)->avail_pages, 44 * 256);
        done(&f);
        /* 260 MiB free: 4 MiB above the floor, 8 MiB needed */
        build(&f, 4, 32 * MiB, 4, pl, 1, "node_free_floor = 256M\n|");
        mi_set(&f.s->topo.nodes[3].meminfo, "MemFree", 260 * 1024);
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(f.plan.reason, "node 3 can take 4 MiB") && strstr(f.plan.reason, "8 MiB needed"),
                      "reason: %s", f.plan.reason);
        done(&f);
}
END_TEST

/* 32 MiB of 2 MiB pages (16) on node 0; 2 MiB pools of 8 free per node. */
static void cyclops_2m(struct fixture *f, uint64_t free3)
{
        static const struct ng_node_pages pl[] = { { 0, 16 } };
        build(f, 4, 32 * MiB, 2048, pl, 1, NULL);
        snap_pool(f->s, 2048, 24, 8, 0);
        f->s->topo.nodes[0].pools[0].free_pages = 8;
        f->s->topo.nodes[3].pools[0].free_pages = free3;
        plan(f);
}

START_TEST(plan_hugetlb_needs_free_hugepages_on_each_destination)
{
        struct fixture f;
        cyclops_2m(&f, 8);
        ck_assert(f.plan.huge);
        ck_assert_uint_eq(f.plan.page_bytes, 2 * MiB);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(pnode(&f.plan, 3)->in_pages, 4);
        ck_assert_uint_eq(pnode(&f.plan, 3)->avail_pages, 8);
        done(&f);

        /* the case: node 3 has no free hugepages */
        cyclops_2m(&f, 0);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(f.plan.reason, "node 3 has 0 free 2048 kB hugepages, 4 needed"), "reason: %s",
                      f.plan.reason);
        done(&f);

        /* enough per node, but the pool's free pages are reserved by others */
        static const struct ng_node_pages pl[] = { { 0, 16 } };
        build(&f, 4, 32 * MiB, 2048, pl, 1, NULL);
        snap_pool(f.s, 2048, 24, 8, 30);        /* 32 free, 30 reserved */
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(f.plan.reason, "2 free unreserved 2048 kB hugepages in the pool, 12 needed"),
                      "reason: %s", f.plan.reason);
        done(&f);
}
END_TEST

START_TEST(plan_1g_pages_only_from_the_pool)
{
        static const struct ng_node_pages pl[] = { { 0, 4 } };
        struct fixture f;
        build(&f, 4, 4 * GiB, 1048576, pl, 1, NULL);
        snap_pool(f.s, 1048576, 1, 1, 0);
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(f.plan.move_pages, 3);
        done(&f);
        build(&f, 4, 4 * GiB, 1048576, pl, 1, NULL);
        snap_pool(f.s, 1048576, 1, 1, 0);
        f.s->topo.nodes[2].pools[0].free_pages = 0;     /* plenty of MemFree: irrelevant */
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_ptr_nonnull(strstr(f.plan.reason, "node 2 has 0 free 1048576 kB hugepages, 1 needed"));
        done(&f);
}
END_TEST

START_TEST(plan_reaches_4k_shmem_through_its_own_file)
{
        /* SysV in 4 KiB pages: through the representative's map_files link
         * to the segment's file, checked to be shmid 7 on its device */
        struct fixture f;
        cyclops_4k(&f);
        const struct ng_rebalance_plan *p = &f.plan;
        ck_assert_int_eq(p->via, NG_REBALANCE_VIA_SEGMENT);
        ck_assert_str_eq(ng_rebalance_via_name(p->via), "segment");
        ck_assert_str_eq(p->seg_path, "/proc/100/map_files/7f0000000000-7f0002000000");
        ck_assert(p->seg_follow);
        ck_assert_uint_eq(p->inode, 7);
        /* and its name: a memfd may have the shmid for inode on its device */
        ck_assert_str_eq(p->seg_name, "/SYSV00000000 (deleted)");
        ck_assert_uint_eq(p->unreachable_pages, 0);
        done(&f);
        /* hugetlb: through the attacher's page tables */
        cyclops_2m(&f, 8);
        ck_assert_int_eq(f.plan.via, NG_REBALANCE_VIA_ATTACHER);
        ck_assert_str_eq(ng_rebalance_via_name(f.plan.via), "attacher");
        ck_assert_str_eq(f.plan.seg_path, "");
        done(&f);
}
END_TEST

START_TEST(plan_refused_where_attachers_name_two_devices)
{
        /* One attacher's maps line names shmid 7 on another device (a
         * user's file named SYSV<key>): which file is the segment is
         * unknown, and no map_files link is opened for it. */
        struct fixture f;
        cyclops_4k(&f);
        const struct ng_instance *in = ng_audit_instance(f.a, "ORCL");
        struct ng_segment seg = f.a->segments[in->segs[0]];
        ck_assert_uint_eq(seg.dev_minor, 1);    /* both lines agree: the shm mount's */
        seg.dev_major = seg.dev_minor = NG_SEG_DEV_CONFLICT;
        ck_assert_int_eq(ng_rebalance_plan_segment(f.s, f.cfg, in, &seg, &f.plan), 0);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_str_eq(f.plan.seg_path, "");
        ck_assert_msg(strstr(f.plan.reason, "8192 resident pages out of reach: its attachers' maps lines name it "
                             "on two devices"), "%s", f.plan.reason);
        done(&f);
}
END_TEST

START_TEST(plan_refused_without_an_attached_process)
{
        /* A SysV segment nobody maps: no way in, refused with the count */
        struct fixture f;
        cyclops_4k(&f);
        const struct ng_instance *in = ng_audit_instance(f.a, "ORCL");
        struct ng_segment seg = f.a->segments[in->segs[0]];
        seg.rep_pid = 0;
        seg.resident_bytes = 32 * MiB;
        ck_assert_int_eq(ng_rebalance_plan_segment(f.s, f.cfg, in, &seg, &f.plan), 0);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_uint_eq(f.plan.unreachable_pages, 8192);
        ck_assert_msg(strstr(f.plan.reason, "8192 resident pages out of reach: no process maps it"), "%s",
                      f.plan.reason);
        /* a /dev/shm file nobody maps: by its path, in its mount namespace */
        f.s->files = xcalloc(1, sizeof(*f.s->files));
        f.s->files[0] = (struct ng_shm_file) { .path = strdup("/dev/shm/ora_ORCL_7"), .kind = NG_SHM_FILE_TMPFS,
                                               .dev_major = 0, .dev_minor = 25, .inode = 4242, .ns_pid = 345 };
        f.s->n_files = 1;
        seg.kind = NG_SEG_FILE;
        seg.dev_minor = 25;
        seg.inode = 4242;
        ck_assert_int_eq(ng_rebalance_plan_segment(f.s, f.cfg, in, &seg, &f.plan), 0);
        ck_assert_msg(f.plan.verdict == NG_OUTCOME_DRY_RUN, "%s", f.plan.reason);
        ck_assert_str_eq(f.plan.seg_path, "/dev/shm/ora_ORCL_7");
        ck_assert(!f.plan.seg_follow);
        ck_assert_int_eq(f.plan.seg_root_pid, 345);
        ck_assert_int_eq(f.plan.pid, 0);
        /* hugetlb with nobody attached: refused */
        seg.huge = true;
        seg.page_kib = 2048;
        ck_assert_int_eq(ng_rebalance_plan_segment(f.s, f.cfg, in, &seg, &f.plan), 0);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_ptr_nonnull(strstr(f.plan.reason, "no attached process"));
        done(&f);
}
END_TEST

/* The kernel counts the segment's pages, but nothing read their nodes (the
 * representative's numa_maps was unusable and dropped: #36). "Nothing
 * resident, nothing would move" (exit 0) was a lie: refused, with why. */
START_TEST(plan_refused_when_placement_unknown)
{
        struct fixture f;
        build(&f, 4, 32 * MiB, 4, NULL, 0, NULL);
        plan(&f);
        const struct ng_instance *in = ng_audit_instance(f.a, "ORCL");
        const struct ng_segment *seg = &f.a->segments[in->segs[0]];
        ck_assert_int_eq(seg->placement_source, NG_SOURCE_NONE);
        ck_assert_uint_eq(seg->resident_bytes, 32 * MiB);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(f.plan.reason, "its placement is unknown: the nodes of its 32 MiB resident were not read"),
                      "%s", f.plan.reason);
        ck_assert_uint_eq(f.plan.move_pages, 0);
        done(&f);
        /* the kernel counts nothing resident, the attacher maps none of it:
         * that is known, nothing to move */
        static const struct ng_node_pages none[] = { { 0, 0 } };
        build(&f, 4, 32 * MiB, 4, none, 1, NULL);
        f.s->shm[0].rss_bytes = 0;
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_NOOP);
        ck_assert_msg(strstr(f.plan.reason, "no page of it is resident"), "%s", f.plan.reason);
        done(&f);
        /* its resident bytes unknown too (no count, no attacher's line) */
        build(&f, 4, 32 * MiB, 4, NULL, 0, NULL);
        f.s->shm[0].has_rss = false;
        f.s->shm[0].rss_bytes = 0;
        plan(&f);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(f.plan.reason, "its resident pages and their nodes are unknown"), "%s", f.plan.reason);
        done(&f);
        /* a /dev/shm file nobody maps, of which nothing was kept: reachable
         * by its path, but not "no page of it is resident" */
        cyclops_4k(&f);
        const struct ng_instance *in4 = ng_audit_instance(f.a, "ORCL");
        struct ng_segment file = f.a->segments[in4->segs[0]];
        f.s->files = xcalloc(1, sizeof(*f.s->files));
        f.s->files[0] = (struct ng_shm_file) { .path = strdup("/dev/shm/ora_ORCL_7"), .kind = NG_SHM_FILE_TMPFS,
                                               .dev_major = 0, .dev_minor = 25, .inode = 4242, .ns_pid = 345 };
        f.s->n_files = 1;
        file.kind = NG_SEG_FILE;
        file.dev_minor = 25;
        file.inode = 4242;
        file.rep_pid = 0;
        file.n_pids = 0;
        file.n_nodes = 0;
        file.resident_bytes = 0;
        file.method = NG_METHOD_NONE;
        file.resident_source = file.placement_source = NG_SOURCE_NONE;
        ck_assert_int_eq(ng_rebalance_plan_segment(f.s, f.cfg, in4, &file, &f.plan), 0);
        ck_assert_int_eq(f.plan.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(f.plan.reason, "its resident pages and their nodes are unknown"), "%s", f.plan.reason);
        done(&f);
}
END_TEST

/* ---- executor against a fake move_pages(2) ---- */

#define FAKE_PAGES 8192

static struct {
        uint64_t page_bytes;
        int node[FAKE_PAGES];           /* -1: not resident */
        int busy[FAKE_PAGES];           /* EBUSY answers left for that page */
        unsigned long max_move, max_query;
        unsigned moves, queries;
        unsigned fail_at;               /* the move call that fails with fail_errno */
        int fail_errno;
        uint64_t clock_usec, sleeps, slept_usec;
} F;

static bool via_segment;        /* the executor's tests: how the plan reaches the pages */

static void fake_reset(uint64_t page_bytes, unsigned resident_pages)
{
        memset(&F, 0, sizeof(F));
        via_segment = false;
        F.page_bytes = page_bytes;
        for (unsigned i = 0; i < FAKE_PAGES; i++)
                F.node[i] = i < resident_pages ? 0 : -1;
}

static unsigned page_of(void *addr)
{
        uint64_t i;
        if (via_segment)
                memcpy(&i, addr, sizeof(i));    /* our mapping of the file: the page says which it is */
        else
                i = ((uintptr_t) addr - START) / F.page_bytes;
        ck_assert_uint_lt(i, FAKE_PAGES);
        return (unsigned) i;
}

/* The segment's file: a memfd whose resident pages (F.node >= 0) hold
 * their index, the others holes. */
static int fake_open(void *userdata, const struct ng_rebalance_plan *p)
{
        (void) userdata;
        ck_assert(p->via == NG_REBALANCE_VIA_SEGMENT);
        int fd = memfd_create("ng-rebalance-test", MFD_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, (off_t) (FAKE_PAGES * F.page_bytes)), 0);
        for (uint64_t i = 0; i < FAKE_PAGES; i++)
                if (F.node[i] >= 0)
                        ck_assert_int_eq(pwrite(fd, &i, sizeof(i), (off_t) (i * F.page_bytes)), (ssize_t) sizeof(i));
        return fd;
}

/* _i of a loop test: 1 reaches the segment through its own file (the plan
 * says so for 4 KiB shmem; the memfd's identity is the plan's), 0 through
 * the attacher's addresses. */
static void reach(struct fixture *f, int i)
{
        via_segment = i == 1;
        if (!via_segment) {
                f->plan.via = NG_REBALANCE_VIA_ATTACHER;
                return;
        }
        ck_assert(f->plan.via == NG_REBALANCE_VIA_SEGMENT);
        int fd = memfd_create("ng-rebalance-id", MFD_CLOEXEC);
        struct stat st;
        ck_assert_int_eq(fstat(fd, &st), 0);
        close(fd);
        /* every memfd is on the same internal mount: the plan checks the
         * device; the inode is each memfd's own, so none is checked here
         * (run_segment_replaced checks it) */
        f->plan.dev_major = major(st.st_dev);
        f->plan.dev_minor = minor(st.st_dev);
        f->plan.inode = 0;
        /* nor its name, a memfd's (run_segment_named_otherwise checks it) */
        f->plan.seg_name[0] = '\0';
}

static long fake_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
        ck_assert_int_eq(pid, via_segment ? 0 : 100);
        if (!nodes) {
                F.queries++;
                F.max_query = count > F.max_query ? count : F.max_query;
                for (unsigned long i = 0; i < count; i++) {
                        unsigned p = page_of(pages[i]);
                        status[i] = F.node[p] >= 0 ? F.node[p] : -ENOENT;
                }
                return 0;
        }
        ck_assert_int_eq(flags, MPOL_MF_MOVE_ALL);
        F.moves++;
        F.max_move = count > F.max_move ? count : F.max_move;
        if (F.fail_at && F.moves == F.fail_at) {
                errno = F.fail_errno;
                return -1;
        }
        for (unsigned long i = 0; i < count; i++) {
                unsigned p = page_of(pages[i]);
                ck_assert_msg(F.node[p] >= 0, "asked to move page %u, which is not resident", p);
                ck_assert_int_ne(F.node[p], nodes[i]);
                /* like migrate_pages(): the call stops at the failing page,
                 * the rest is not attempted and counted as not migrated */
                if (F.busy[p] > 0) {
                        F.busy[p]--;
                        status[i] = -EBUSY;
                        return (long) (count - i);
                }
                F.node[p] = status[i] = nodes[i];
        }
        return 0;
}

static void fake_sleep(void *userdata, uint64_t usec)
{
        (void) userdata;
        F.sleeps++;
        F.slept_usec += usec;
        F.clock_usec += usec;
}

static uint64_t fake_now(void *userdata)
{
        (void) userdata;
        return F.clock_usec;
}

static const struct ng_rebalance_ops fake_ops = {
        .move_pages = fake_move_pages, .open_segment = fake_open, .sleep_usec = fake_sleep, .now_usec = fake_now };

static unsigned fake_on(int node)
{
        unsigned n = 0;
        for (unsigned i = 0; i < FAKE_PAGES; i++)
                n += F.node[i] == node;
        return n;
}

START_TEST(run_moves_in_batches_with_rate_limit)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_DONE, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        /* 16 batches of 512 addresses, 384 of them move each time */
        ck_assert_uint_eq(st.batches, 16);
        ck_assert_uint_eq(F.moves, 16);
        ck_assert_uint_eq(F.max_move, 384);
        ck_assert_uint_le(F.max_query, 512);
        /* one query a batch to count, one to pick the moves: a call that
         * attempted every page says where each went, no query after it */
        ck_assert_uint_eq(F.queries, 32);
        ck_assert_uint_eq(st.moved_pages, 6144);
        ck_assert_uint_eq(st.busy_pages, 0);
        ck_assert_uint_eq(st.not_resident_pages, 0);
        for (int n = 0; n < 4; n++)
                ck_assert_uint_eq(fake_on(n), 2048);
        /* page i sits on node i mod 4 */
        for (unsigned i = 0; i < FAKE_PAGES; i++)
                ck_assert_int_eq(F.node[i], (int) (i % 4));
        ck_assert_uint_eq(pnode(&f.plan, 0)->moved_out_pages, 6144);
        ck_assert_uint_eq(pnode(&f.plan, 3)->moved_in_pages, 2048);
        /* 24 MiB at 64 MiB/s: 375 ms of sleeps, one per batch */
        ck_assert_uint_eq(F.sleeps, 16);
        ck_assert_uint_eq(F.slept_usec, 375000);
        ck_assert_uint_eq(st.slept_usec, 375000);
        ck_assert_msg(strstr(res->summary, "moved 6144 pages (24 MiB) of shmid 7") &&
                      strstr(res->summary, "node0 -6144, node1 +2048, node2 +2048, node3 +2048 in 375 ms"),
                      "summary: %s", res->summary);
        done(&f);
}
END_TEST

START_TEST(run_batch_size_and_no_rate_limit)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        o.batch_pages = 100;
        o.rate_bytes_per_sec = 0;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(st.batches, 82);      /* 8192 / 100, rounded up */
        ck_assert_uint_le(F.max_move, 100);
        ck_assert_uint_le(F.max_query, 100);
        ck_assert_uint_eq(F.sleeps, 0);
        for (int n = 0; n < 4; n++)
                ck_assert_uint_eq(fake_on(n), 2048);
        done(&f);
}
END_TEST

START_TEST(run_dry_run_counts_exactly_and_moves_nothing)
{
        struct fixture f;
        cyclops_4k(&f);
        /* the snapshot said 8192 resident; really 4096, the rest never touched */
        fake_reset(4096, 4096);
        reach(&f, _i);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        o.dry_run = true;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(F.moves, 0);
        ck_assert_uint_eq(F.sleeps, 0);
        ck_assert_uint_eq(fake_on(0), 4096);
        ck_assert_uint_eq(f.plan.resident_pages, 4096);
        ck_assert_uint_eq(f.plan.move_pages, 3072);
        ck_assert_msg(strstr(res->summary, "would move 3072 of 4096 resident pages (12 MiB) of shmid 7") &&
                      strstr(res->summary, "node0 -3072, node1 +1024, node2 +1024, node3 +1024"),
                      "summary: %s", res->summary);
        /* the attacher's page tables are asked about every address; the
         * segment's own file hands over its resident pages only */
        ck_assert_uint_eq(st.not_resident_pages, via_segment ? 0 : 4096);
        ck_assert_uint_eq(st.scanned_pages, via_segment ? 4096 : FAKE_PAGES);
        ck_assert(!strstr(res->summary, "not resident") == via_segment);
        done(&f);
}
END_TEST

START_TEST(run_leaves_non_resident_pages_alone)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, 6000);
        reach(&f, _i);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        for (unsigned i = 6000; i < FAKE_PAGES; i++)
                ck_assert_int_eq(F.node[i], -1);
        for (int n = 0; n < 4; n++)
                ck_assert_uint_eq(fake_on(n), 1500);
        ck_assert_uint_eq(st.not_resident_pages, via_segment ? 0 : 2192);
        if (!via_segment)
                ck_assert_ptr_nonnull(strstr(res->summary, "2192 pages not resident in pid 100 left alone"));
        done(&f);
}
END_TEST

START_TEST(run_busy_pages_are_retried_then_left_for_later)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        for (unsigned i = 1; i <= 10; i++)
                F.busy[i * 4 + 1] = 5;  /* busy through every retry */
        F.busy[2] = 1;                  /* busy once: the retry moves it */
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_PARTIAL, "%s", ng_outcome_name(res->outcome));
        ck_assert_uint_eq(st.busy_pages, 10);
        ck_assert_uint_eq(st.moved_pages, 6134);
        ck_assert_int_eq(F.node[2], 2);
        ck_assert_int_eq(F.node[5], 0);
        /* first batch: the list resumes after each of the 11 busy pages
         * (12 calls), the retry after each of the 10 still busy (10);
         * 15 more batches of one call */
        ck_assert_uint_eq(F.moves, 37);
        ck_assert_uint_eq(pnode(&f.plan, 1)->moved_in_pages, 2038);
        ck_assert_msg(strstr(res->summary, "10 pages busy (EBUSY), left for a later run"), "%s", res->summary);
        done(&f);
}
END_TEST

START_TEST(run_process_gone_is_transient)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        F.fail_at = 3;
        F.fail_errno = ESRCH;
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_TRANSIENT);
        ck_assert_int_eq(res->error, -ESRCH);
        ck_assert_uint_eq(st.moved_pages, 768);
        ck_assert_uint_eq(F.moves, 3);
        ck_assert_msg(strstr(res->summary, "No such process") && strstr(res->summary, "moved 768 pages"), "%s",
                      res->summary);
        done(&f);
}
END_TEST

START_TEST(run_without_cap_sys_nice_is_permanent)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        F.fail_at = 1;
        F.fail_errno = EPERM;
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_PERMANENT);
        ck_assert_int_eq(res->error, -EPERM);
        ck_assert_uint_eq(F.moves, 1);
        ck_assert_uint_eq(fake_on(0), FAKE_PAGES);
        ck_assert_ptr_nonnull(strstr(res->summary, "CAP_SYS_NICE"));
        done(&f);
}
END_TEST

static int verify_gone(void *userdata, const struct ng_rebalance_plan *p)
{
        (void) userdata;
        (void) p;
        return -EAGAIN;
}

START_TEST(run_stops_when_the_mapping_changed)
{
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        struct ng_rebalance_ops ops = fake_ops;
        ops.verify = verify_gone;
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &ops, NULL, res), 0);
        /* only an attacher's addresses can come to mean other pages; the
         * file stays the segment while it is open */
        ck_assert_int_eq(res->outcome, via_segment ? NG_OUTCOME_DONE : NG_OUTCOME_TRANSIENT);
        ck_assert_uint_eq(F.moves, via_segment ? 16 : 0);
        done(&f);
}
END_TEST

START_TEST(run_refuses_or_noops_from_the_plan)
{
        struct fixture f;
        cyclops_2m(&f, 0);
        fake_reset(2 * MiB, 16);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_REFUSED);
        ck_assert_uint_eq(F.moves + F.queries, 0);
        ck_assert_ptr_nonnull(strstr(res->summary, "node 3 has 0 free 2048 kB hugepages"));
        done(&f);

        /* exact count finds the segment already spread: noop, nothing moved */
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, _i);
        for (unsigned i = 0; i < FAKE_PAGES; i++)
                F.node[i] = (int) ((i + 1) % 4);        /* the kernel's interleave, rotated */
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_NOOP);
        ck_assert_uint_eq(F.moves, 0);
        done(&f);
}
END_TEST

/* More nodes than a 64-bit mask holds: 8000 pages on node 0 of 80 spread
 * over all 80, 100 pages each, node 79 too. */
START_TEST(run_spreads_over_more_than_64_nodes)
{
        static const struct ng_node_pages pl[] = { { 0, 8000 } };
        struct fixture f;
        build(&f, 80, 8000 * 4096, 4, pl, 1, "|policy = interleave\n");
        plan(&f);
        ck_assert_msg(f.plan.verdict == NG_OUTCOME_DRY_RUN, "%s", f.plan.reason);
        ck_assert_uint_eq(f.plan.n_dest, 80);
        ck_assert_int_eq(f.plan.dest[f.plan.n_dest - 1], 79);
        ck_assert_uint_eq(pnode(&f.plan, 79)->in_pages, 100);
        fake_reset(4096, 8000);
        reach(&f, _i);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        o.rate_bytes_per_sec = 0;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_DONE, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        ck_assert_uint_eq(st.moved_pages, 7900);
        for (int n = 0; n < 80; n++)
                ck_assert_msg(fake_on(n) == 100, "node %d holds %u pages", n, fake_on(n));
        ck_assert_uint_eq(pnode(&f.plan, 79)->moved_in_pages, 100);
        done(&f);
}
END_TEST

START_TEST(run_hugetlb_moves_whole_pages)
{
        struct fixture f;
        cyclops_2m(&f, 8);
        fake_reset(2 * MiB, 16);
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(st.moved_pages, 12);
        for (int n = 0; n < 4; n++)
                ck_assert_uint_eq(fake_on(n), 4);
        /* 24 MiB at 64 MiB/s */
        ck_assert_uint_eq(F.slept_usec, 375000);
        done(&f);
}
END_TEST

START_TEST(run_segment_replaced)
{
        /* the file opened is not the segment planned: nothing asked of it */
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, 1);
        f.plan.inode = UINT64_MAX;
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_TRANSIENT);
        ck_assert_int_eq(res->error, -ESTALE);
        ck_assert_uint_eq(F.moves + F.queries, 0);
        ck_assert_msg(strstr(res->summary, "another file is there now"), "%s", res->summary);
        done(&f);
}
END_TEST

START_TEST(run_segment_named_otherwise)
{
        /* A memfd on the segment's device (every memfd and SysV segment
         * share the kernel's shm mount), named otherwise: not the segment,
         * nothing asked of it; under the name planned it is. */
        struct fixture f;
        cyclops_4k(&f);
        fake_reset(4096, FAKE_PAGES);
        reach(&f, 1);
        snprintf(f.plan.seg_name, sizeof(f.plan.seg_name), "/SYSV00000000 (deleted)");
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_TRANSIENT);
        ck_assert_int_eq(res->error, -ESTALE);
        ck_assert_uint_eq(F.moves + F.queries, 0);
        ck_assert_msg(strstr(res->summary, "another file is there now"), "%s", res->summary);
        snprintf(f.plan.seg_name, sizeof(f.plan.seg_name), "/memfd:ng-rebalance-test (deleted)");
        f.plan.verdict = NG_OUTCOME_DRY_RUN;
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, NULL, res), 0);
        ck_assert_msg(res->error != -ESTALE && F.queries > 0, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        done(&f);
}
END_TEST

START_TEST(run_hugetlb_out_of_reach_is_partial)
{
        /* the kernel counts 20 resident pages, the attacher maps 16: those
         * move, and the run says what it could not reach */
        struct fixture f;
        cyclops_2m(&f, 8);
        fake_reset(2 * MiB, 16);
        f.plan.known_resident_pages = 20;
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats st;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_PARTIAL, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        ck_assert_uint_eq(st.moved_pages, 12);
        ck_assert_uint_eq(f.plan.unreachable_pages, 4);
        ck_assert_msg(strstr(res->summary, "4 resident pages out of reach: pid 100 does not map them"), "%s",
                      res->summary);
        done(&f);
        /* already spread as far as it reaches: still not "as wanted" */
        cyclops_2m(&f, 8);
        fake_reset(2 * MiB, 16);
        for (unsigned i = 0; i < 16; i++)
                F.node[i] = (int) (i % 4);
        f.plan.known_resident_pages = 20;
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &fake_ops, &st, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_PARTIAL, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        ck_assert_uint_eq(F.moves, 0);
        done(&f);
}
END_TEST

/* The real kernel, one node: a memfd with 300 resident pages in 1000,
 * reached by its /proc/self/fd link with the default ops; every resident
 * page counted, no hole filled, nothing to move on one node. A path with
 * a symbolic link on the way is never opened. */
START_TEST(run_real_kernel_own_mapping)
{
        int fd = memfd_create("ng-rebalance-real", MFD_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 1000 * 4096), 0);
        for (uint64_t i = 100; i < 400; i++)
                ck_assert_int_eq(pwrite(fd, &i, sizeof(i), (off_t) (i * 4096)), (ssize_t) sizeof(i));
        struct stat st;
        ck_assert_int_eq(fstat(fd, &st), 0);
        static struct ng_rebalance_plan p;
        memset(&p, 0, sizeof(p));
        snprintf(p.label, sizeof(p.label), "memfd");
        p.page_bytes = 4096;
        p.via = NG_REBALANCE_VIA_SEGMENT;
        snprintf(p.seg_path, sizeof(p.seg_path), "/proc/self/fd/%d", fd);
        p.seg_follow = true;
        p.dev_major = major(st.st_dev);
        p.dev_minor = minor(st.st_dev);
        p.inode = (uint64_t) st.st_ino;
        p.n_nodes = 1;
        p.nodes[0] = (struct ng_rebalance_node) { .node = 0, .dest = true, .avail_pages = 1 << 20 };
        p.n_dest = 1;
        p.verdict = NG_OUTCOME_DRY_RUN;
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        struct ng_rebalance_stats rs;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&p, &o, NULL, &rs, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_NOOP, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        ck_assert_uint_eq(p.resident_pages, 300);
        ck_assert_uint_eq(p.nodes[0].before_pages, 300);
        ck_assert_uint_eq(rs.scanned_pages, 300);
        struct stat after;
        ck_assert_int_eq(fstat(fd, &after), 0);
        ck_assert_int_eq(after.st_blocks, st.st_blocks);
        /* the kernel's shared policy on it, read back through a mapping */
        p.policy = NG_MPOL_INTERLEAVE;
        snprintf(p.policy_text, sizeof(p.policy_text), "interleave:0");
        p.verdict = NG_OUTCOME_DRY_RUN;
        o.set_policy = true;
        ck_assert_int_eq(ng_rebalance_run(&p, &o, NULL, &rs, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_DONE, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        ck_assert_uint_eq(res->n_writes, 1);
        ck_assert_str_eq(res->writes[0].before, "default");
        ck_assert_str_eq(res->writes[0].after, "interleave:0");
        void *m = mmap(NULL, 1000 * 4096, PROT_READ, MAP_SHARED, fd, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        int mode = -1;
        unsigned long mask[17] = {0};
        ck_assert_int_eq(get_mempolicy(&mode, mask, 1025, (char *) m + 500 * 4096, MPOL_F_ADDR), 0);
        ck_assert_int_eq(mode, MPOL_INTERLEAVE);        /* any mapping of it: the segment's own */
        ck_assert_uint_eq(mask[0], 1);
        munmap(m, 1000 * 4096);
        o.set_policy = false;
        ck_assert_int_eq(fstat(fd, &after), 0);
        ck_assert_int_eq(after.st_blocks, st.st_blocks);
        close(fd);

        /* not followed: a link on the way to a /dev/shm-like path */
        char dir[] = "/tmp/ng-rebalance-XXXXXX", link[64], file[64];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(file, sizeof(file), "%s/seg", dir);
        snprintf(link, sizeof(link), "%s-link", dir);
        int f2 = open(file, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        ck_assert_int_ge(f2, 0);
        close(f2);
        ck_assert_int_eq(symlink(dir, link), 0);
        snprintf(p.seg_path, sizeof(p.seg_path), "%s/seg", link);
        p.seg_follow = false;
        p.inode = 0;
        p.verdict = NG_OUTCOME_DRY_RUN;
        ck_assert_int_eq(ng_rebalance_run(&p, &o, NULL, &rs, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_PERMANENT && res->error == -ELOOP, "%s: %s",
                      ng_outcome_name(res->outcome), res->summary);
        ck_assert_ptr_nonnull(strstr(res->summary, "opening the segment's file"));
        unlink(link);
        unlink(file);
        rmdir(dir);
}
END_TEST

/* ---- the policy installed on the segment ---- */

static struct {
        int mode;
        unsigned long mask[17];
        unsigned mbinds, fail_errno;
} P;

static long fake_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask, unsigned long maxnode,
                       unsigned flags)
{
        (void) addr, (void) len, (void) flags;
        ck_assert_uint_eq(maxnode, NG_REBALANCE_MAX_NODES + 1);
        P.mbinds++;
        if (P.fail_errno) {
                errno = (int) P.fail_errno;
                return -1;
        }
        P.mode = mode;
        memcpy(P.mask, nodemask, sizeof(P.mask));
        return 0;
}

static long fake_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr,
                               unsigned long flags)
{
        (void) maxnode, (void) addr;
        ck_assert_uint_eq(flags, MPOL_F_ADDR);
        *mode = P.mode;
        memcpy(nodemask, P.mask, sizeof(P.mask));
        return 0;
}

static const struct ng_rebalance_ops policy_ops = {
        .move_pages = fake_move_pages, .open_segment = fake_open, .sleep_usec = fake_sleep, .now_usec = fake_now,
        .mbind = fake_mbind, .get_mempolicy = fake_get_mempolicy };

static const struct ng_write *policy_write(const struct ng_action_result *res)
{
        for (size_t i = 0; i < res->n_writes; i++)
                if (res->writes[i].kind == NG_WRITE_SEGMENT_POLICY)
                        return &res->writes[i];
        return NULL;
}

START_TEST(run_installs_the_instance_policy_on_the_segment)
{
        struct fixture f;
        cyclops_4k(&f);
        ck_assert_int_eq(f.plan.policy, NG_MPOL_INTERLEAVE);    /* local over CPUs on 4 nodes */
        ck_assert_str_eq(f.plan.policy_text, "interleave:0-3");
        fake_reset(4096, FAKE_PAGES);
        reach(&f, 1);
        memset(&P, 0, sizeof(P));
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        o.set_policy = true;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        /* dry run: shown, not done */
        o.dry_run = true;
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &policy_ops, NULL, res), 0);
        const struct ng_write *w = policy_write(res);
        ck_assert_ptr_nonnull(w);
        ck_assert_str_eq(w->value, "interleave:0-3");
        ck_assert_str_eq(w->before, "default");
        ck_assert_str_eq(w->after, "");
        ck_assert_uint_eq(P.mbinds, 0);
        ck_assert_msg(strstr(res->summary, "would install policy interleave:0-3 on it (now default)"), "%s",
                      res->summary);
        /* the run: moved, then installed and read back */
        o.dry_run = false;
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &policy_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        w = policy_write(res);
        ck_assert_ptr_nonnull(w);
        ck_assert_str_eq(w->after, "interleave:0-3");
        ck_assert_int_eq(w->error, 0);
        ck_assert_uint_eq(P.mbinds, 1);
        ck_assert_int_eq(P.mode, MPOL_INTERLEAVE);
        ck_assert_uint_eq(P.mask[0], 0xf);
        ck_assert_msg(strstr(res->summary, "installed policy interleave:0-3 on it (was default)"), "%s", res->summary);
        /* again: spread and with its policy, nothing written */
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &policy_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_NOOP);
        ck_assert_ptr_null(policy_write(res));
        ck_assert_uint_eq(P.mbinds, 1);
        ck_assert_msg(strstr(res->summary, "new pages follow interleave:0-3 already"), "%s", res->summary);
        /* spread, policy gone (a new segment): installed, done */
        P.mode = MPOL_DEFAULT;
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &policy_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(P.mbinds, 2);
        /* refused by the kernel: partial, with the error */
        P.mode = MPOL_DEFAULT;
        P.fail_errno = EPERM;
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &policy_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_PARTIAL);
        ck_assert_int_eq(res->error, -EPERM);
        ck_assert_ptr_nonnull(strstr(res->summary, "installing policy interleave:0-3 failed"));
        done(&f);

        /* bind, and prefer on one node */
        build(&f, 4, 32 * MiB, 4, (const struct ng_node_pages[]) { { 0, 8192 } }, 1, "|policy = bind\nnodes = 1-2\n");
        plan(&f);
        ck_assert_str_eq(f.plan.policy_text, "bind:1-2");
        done(&f);
        build(&f, 4, 32 * MiB, 4, (const struct ng_node_pages[]) { { 0, 8192 } }, 1, "|nodes = 2\n");
        plan(&f);
        ck_assert_str_eq(f.plan.policy_text, "prefer:2");
        done(&f);
}
END_TEST

START_TEST(run_hugetlb_has_no_shared_policy)
{
        struct fixture f;
        cyclops_2m(&f, 8);
        ck_assert_int_eq(f.plan.policy, NG_MPOL_DEFAULT);
        fake_reset(2 * MiB, 16);
        memset(&P, 0, sizeof(P));
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        o.set_policy = true;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_rebalance_run(&f.plan, &o, &policy_ops, NULL, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_uint_eq(P.mbinds, 0);
        ck_assert_ptr_null(policy_write(res));
        ck_assert_msg(strstr(res->summary, "no policy installed: a hugetlb segment has no shared policy"), "%s",
                      res->summary);
        done(&f);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("act-rebalance");
        TCase *tc = tcase_create("plan");
        tcase_add_test(tc, plan_never_onto_a_slower_tier);
        tcase_add_test(tc, plan_cyclops_spreads_over_all_nodes);
        tcase_add_test(tc, plan_weighted_interleave);
        tcase_add_test(tc, weights_written);
        tcase_add_test(tc, plan_only_the_excess_moves);
        tcase_add_test(tc, plan_noop_when_spread_or_one_node);
        tcase_add_test(tc, plan_configured_nodes);
        tcase_add_test(tc, plan_refused_without_free_memory);
        tcase_add_test(tc, plan_never_outside_the_instance_memory_nodes);
        tcase_add_test(tc, plan_hugetlb_needs_free_hugepages_on_each_destination);
        tcase_add_test(tc, plan_1g_pages_only_from_the_pool);
        tcase_add_test(tc, plan_reaches_4k_shmem_through_its_own_file);
        tcase_add_test(tc, plan_refused_where_attachers_name_two_devices);
        tcase_add_test(tc, plan_refused_without_an_attached_process);
        tcase_add_test(tc, plan_refused_when_placement_unknown);
        suite_add_tcase(s, tc);
        tc = tcase_create("run");
        tcase_add_loop_test(tc, run_moves_in_batches_with_rate_limit, 0, 2);
        tcase_add_loop_test(tc, run_batch_size_and_no_rate_limit, 0, 2);
        tcase_add_loop_test(tc, run_dry_run_counts_exactly_and_moves_nothing, 0, 2);
        tcase_add_loop_test(tc, run_leaves_non_resident_pages_alone, 0, 2);
        tcase_add_loop_test(tc, run_busy_pages_are_retried_then_left_for_later, 0, 2);
        tcase_add_loop_test(tc, run_process_gone_is_transient, 0, 2);
        tcase_add_loop_test(tc, run_without_cap_sys_nice_is_permanent, 0, 2);
        tcase_add_loop_test(tc, run_stops_when_the_mapping_changed, 0, 2);
        tcase_add_loop_test(tc, run_refuses_or_noops_from_the_plan, 0, 2);
        tcase_add_test(tc, run_hugetlb_moves_whole_pages);
        tcase_add_test(tc, run_segment_replaced);
        tcase_add_test(tc, run_segment_named_otherwise);
        tcase_add_test(tc, run_hugetlb_out_of_reach_is_partial);
        tcase_add_test(tc, run_real_kernel_own_mapping);
        tcase_add_test(tc, run_installs_the_instance_policy_on_the_segment);
        tcase_add_test(tc, run_hugetlb_has_no_shared_policy);
        tcase_add_loop_test(tc, run_spreads_over_more_than_64_nodes, 0, 2);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

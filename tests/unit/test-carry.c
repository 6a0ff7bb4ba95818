/* Between two tier-1 samplings numaguardd carries each unchanged segment's
 * last placement over to a counters-only snapshot: same pid with the same
 * start time, same mapping. */

#include "snapshot-builder.h"
#include "ng-segments.h"

#define GiB (UINT64_C(1) << 30)
#define ADDR UINT64_C(0x7f0000000000)

/* A 1 GiB SysV segment mapped by pid 100 (start time st); with a sample
 * of 40 pages: 10 on node 0, 30 on node 1. */
static struct ng_snapshot *snap(uint64_t st, uint64_t addr, bool with_sample)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        s->placement = with_sample ? NG_PLACEMENT_SAMPLED : NG_PLACEMENT_COUNTERS;
        snap_shm(s, 7, GiB, 1, 0);
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        p->stat.starttime_ticks = st;
        snap_map_sysv(p, 7, addr, GiB, 4, NULL, 0);
        p->maps[0].page_kib = with_sample ? 4 : 0;
        if (with_sample) {
                s->samples = xcalloc(1, sizeof(*s->samples));
                s->samples[0] = (struct ng_sample) { .pid = 100, .start = addr, .len = GiB, .asked = 40, .present = 40 };
                s->samples[0].np = xcalloc(2, sizeof(struct ng_node_pages));
                s->samples[0].np[0] = (struct ng_node_pages) { 0, 10 };
                s->samples[0].np[1] = (struct ng_node_pages) { 1, 30 };
                s->samples[0].n_np = 2;
                s->n_samples = 1;
        }
        return s;
}

START_TEST(carried_when_unchanged)
{
        struct ng_snapshot *prev = snap(5, ADDR, true), *s = snap(5, ADDR, false);
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 1);
        ck_assert_uint_eq(s->n_samples, 1);
        ck_assert_ptr_ne(s->samples[0].np, prev->samples[0].np);     /* a copy */
        ck_assert_uint_eq(s->procs[0]->maps[0].page_kib, 4);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(v[0].method, NG_METHOD_SAMPLED);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 1), 3 * ng_segment_node_bytes(&v[0], 0));
        ck_assert_uint_eq(v[0].page_kib, 4);
        ng_segments_free(v, n);
        /* carrying twice adds nothing */
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 0);
        ng_snapshot_free(s);
        ng_snapshot_free(prev);
}
END_TEST

START_TEST(not_carried_across_pid_reuse_or_remap)
{
        struct ng_snapshot *prev = snap(5, ADDR, true);
        struct ng_snapshot *reused = snap(6, ADDR, false), *moved = snap(5, ADDR + GiB, false);
        ck_assert_int_eq(ng_snapshot_carry_placement(reused, prev), 0);
        ck_assert_uint_eq(reused->procs[0]->maps[0].page_kib, 0);
        ck_assert_int_eq(ng_snapshot_carry_placement(moved, prev), 0);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(moved, &v, &n), 0);
        ck_assert_int_eq(v[0].method, NG_METHOD_COUNTERS);     /* numaguardd samples again */
        ng_segments_free(v, n);
        ng_snapshot_free(reused);
        ng_snapshot_free(moved);
        ng_snapshot_free(prev);
}
END_TEST

START_TEST(carried_sample_with_nothing_resident)
{
        struct ng_snapshot *prev = snap(5, ADDR, true), *s = snap(5, ADDR, false);
        free(prev->samples[0].np);
        prev->samples[0].np = NULL;     /* what ng_sample_range() leaves when nothing is resident */
        prev->samples[0].n_np = 0;
        prev->samples[0].present = 0;
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 1);
        ck_assert_uint_eq(s->samples[0].n_np, 0);
        ng_snapshot_free(s);
        ng_snapshot_free(prev);
}
END_TEST

/* A SysV segment removed (IPC_RMID) while attached is no longer in
 * /proc/sysvipc/shm but still mapped: the sample asked of it is carried,
 * or numaguardd would sample every segment again on every poll. Once no
 * process maps it either, it is not. */
START_TEST(whole_sample_of_removed_segment_carried)
{
        struct ng_snapshot *prev = snap(5, ADDR, false), *s = snap(5, ADDR, false), *gone = snap(5, ADDR, false);
        prev->samples = xcalloc(1, sizeof(*prev->samples));
        prev->samples[0] = (struct ng_sample) { .whole = true, .sysv = true, .inode = 7, .len = GiB, .asked = 40,
                                                .present = 40 };
        prev->samples[0].np = xcalloc(1, sizeof(struct ng_node_pages));
        prev->samples[0].np[0] = (struct ng_node_pages) { 1, 40 };
        prev->samples[0].n_np = 1;
        prev->n_samples = 1;
        s->n_shm = 0;           /* removed, still attached */
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 1);
        ck_assert_ptr_nonnull(ng_snapshot_whole_sample(s, true, 0, 0, 7));
        gone->n_shm = 0;
        gone->procs[0]->maps[0].inode = 8;      /* and no longer mapped */
        ck_assert_int_eq(ng_snapshot_carry_placement(gone, prev), 0);
        ng_snapshot_free(s);
        ng_snapshot_free(gone);
        ng_snapshot_free(prev);
}
END_TEST

/* mbind(2) on part of a segment splits its VMA: a 768 MiB VMA all on
 * node 1 and a 256 MiB one all on node 0, each sampled with the same
 * number of addresses, hold the segment 3:1, not 1:1. */
START_TEST(split_vmas_weighted_by_length)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        s->placement = NG_PLACEMENT_SAMPLED;
        snap_shm(s, 7, GiB, 1, 0);
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        snap_map_sysv(p, 7, ADDR, GiB / 4 * 3, 4, NULL, 0);
        snap_map_sysv(p, 7, ADDR + GiB / 4 * 3, GiB / 4, 4, NULL, 0);
        p->maps[1].offset = GiB / 4 * 3;        /* the rest of the same segment */
        s->samples = xcalloc(2, sizeof(*s->samples));
        for (int i = 0; i < 2; i++) {
                struct ng_sample *smp = &s->samples[i];
                *smp = (struct ng_sample) { .pid = 100, .start = p->maps[i].start,
                                            .len = p->maps[i].end - p->maps[i].start, .asked = 4096, .present = 4096 };
                smp->np = xcalloc(1, sizeof(struct ng_node_pages));
                smp->np[0] = (struct ng_node_pages) { i == 0 ? 1 : 0, 4096 };
                smp->n_np = 1;
        }
        s->n_samples = 2;
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(v[0].method, NG_METHOD_SAMPLED);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 1), GiB / 4 * 3);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 0), GiB / 4);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
}
END_TEST


/* A sample asked of the segment itself: 1 GiB SysV shmid 7, 3:1 over
 * nodes 1 and 0, whichever process maps it. */
static void add_whole(struct ng_snapshot *s, pid_t via)
{
        s->samples = xcalloc(1, sizeof(*s->samples));
        s->samples[0] = (struct ng_sample) { .pid = via, .len = GiB, .asked = 400, .present = 200, .whole = true,
                                             .sysv = true, .inode = 7, .dev_minor = 1 };
        s->samples[0].np = xcalloc(2, sizeof(struct ng_node_pages));
        s->samples[0].np[0] = (struct ng_node_pages) { 0, 50 };
        s->samples[0].np[1] = (struct ng_node_pages) { 1, 150 };
        s->samples[0].n_np = 2;
        s->n_samples = 1;
}

START_TEST(whole_sample_carried_by_identity)
{
        /* The attacher that served is gone, another process maps it now:
         * the segment is the same, so is its placement. */
        struct ng_snapshot *prev = snap(5, ADDR, false), *s = snap(9, ADDR + GiB, false);
        add_whole(prev, 100);
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 1);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(v[0].placement_source, NG_SOURCE_SEGMENT);
        /* the kernel's count (rss: the whole GiB) stands; the shares are the sample's */
        ck_assert_int_eq(v[0].resident_source, NG_SOURCE_COUNTER);
        ck_assert_uint_eq(v[0].resident_bytes, GiB);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 1), 3 * GiB / 4);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 0), GiB / 4);
        ng_segments_free(v, n);
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 0);     /* once */
        ng_snapshot_free(s);
        /* removed: nothing carried */
        s = snap(9, ADDR, false);
        s->shm[0].shmid = 8;
        s->procs[0]->maps[0].inode = 8;
        ck_assert_int_eq(ng_snapshot_carry_placement(s, prev), 0);
        ng_snapshot_free(s);
        ng_snapshot_free(prev);
}
END_TEST

START_TEST(attacher_that_maps_nothing_leaves_the_count)
{
        /* The kernel counts 1 GiB; the attacher's sample finds nothing of it
         * in its page tables: the count stands, the placement is unknown. */
        struct ng_snapshot *s = snap(5, ADDR, true);
        s->samples[0].present = 0;
        s->samples[0].n_np = 0;
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(v[0].resident_bytes, GiB);
        ck_assert_int_eq(v[0].method, NG_METHOD_COUNTERS);
        ck_assert_int_eq(v[0].placement_source, NG_SOURCE_NONE);
        ck_assert_uint_eq(v[0].n_nodes, 0);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
}
END_TEST

/* A 48 MiB SHM_HUGETLB segment whose attacher maps none of it: the nodes'
 * 2 MiB pools hand out 8 pages on node 0 and 16 on node 1, exactly what
 * it holds, so the pools are its placement. */
static struct ng_snapshot *huge_snap(bool second)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        s->placement = NG_PLACEMENT_SAMPLED;
        snap_pool(s, 2048, 16, 8, 0);
        s->topo.nodes[1].pools[0].free_pages = 0;
        snap_shm(s, 7, 48 << 20, 1, 0);
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        snap_map_sysv(p, 7, ADDR, 48 << 20, 2048, NULL, 0);
        p->maps[0].page_kib = 2048;
        if (second) {   /* another 2 MiB segment holding 4 pages of them */
                snap_shm(s, 9, 8 << 20, 1, 0);
                snap_map_sysv(p, 9, ADDR + GiB, 8 << 20, 2048, NULL, 0);
                p->maps[1].page_kib = 2048;
        }
        s->samples = xcalloc(1, sizeof(*s->samples));
        s->samples[0] = (struct ng_sample) { .pid = 100, .start = ADDR, .len = 48 << 20, .asked = 24 };
        s->n_samples = 1;
        return s;
}

START_TEST(hugetlb_placed_by_its_pools)
{
        struct ng_snapshot *s = huge_snap(false);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_int_eq(v[0].placement_source, NG_SOURCE_POOL);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 0), 16 << 20);
        ck_assert_uint_eq(ng_segment_node_bytes(&v[0], 1), 32 << 20);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
        /* Sharing the pools with another segment: they say nothing of it. */
        s = huge_snap(true);
        s->shm[0].rss_bytes = 40 << 20;
        s->shm[1].rss_bytes = 8 << 20;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_ne(v[i].placement_source, NG_SOURCE_POOL);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("carry");
        TCase *tc = tcase_create("carry");
        tcase_add_test(tc, carried_when_unchanged);
        tcase_add_test(tc, not_carried_across_pid_reuse_or_remap);
        tcase_add_test(tc, carried_sample_with_nothing_resident);
        tcase_add_test(tc, whole_sample_of_removed_segment_carried);
        tcase_add_test(tc, split_vmas_weighted_by_length);
        tcase_add_test(tc, whole_sample_carried_by_identity);
        tcase_add_test(tc, attacher_that_maps_nothing_leaves_the_count);
        tcase_add_test(tc, hugetlb_placed_by_its_pools);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

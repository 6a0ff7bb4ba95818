/* The price model on literal snapshots with hand-made matrices: the
 * documented 4-node Xeon E5-4627 (SLIT 10/21, measured 53/211/217/248 ns
 * from node 0) and an 8-node remote binding (SLIT 10/12/13/22). */

#include <math.h>

#include "ng-latency.h"
#include "snapshot-builder.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-metrics.h"
#include "ng-price.h"
#include "ng-report.h"
#include "util.h"

static void close_to(double a, double b, const char *what)
{
        double d = a > b ? a - b : b - a, m = b < 0 ? -b : b;
        ck_assert_msg(d < 1e-6 * (m + 1), "%s = %.9g, expected %.9g", what, a, b);
}
#define CLOSE(a, b) close_to((a), (b), #a)

/* The E5-4627 ring 0-1-3-2: each node's second hop is the one across. */
static const double e5_ns[4][4] = {
        { 53, 211, 217, 248 },
        { 211, 53, 248, 215 },
        { 217, 248, 53, 213 },
        { 248, 215, 213, 53 },
};

static struct ng_latency *matrix(int n, const double *ns, double local_mbps, double remote_mbps)
{
        struct ng_latency *m = ng_latency_new((size_t) n, (size_t) n);
        ck_assert_ptr_nonnull(m);
        for (int i = 0; i < n; i++)
                m->nodes[i] = m->cpu_nodes[i] = i;
        for (int i = 0; i < n * n; i++) {
                m->latency_ns[i] = ns[i];
                m->bandwidth_mbps[i] = i / n == i % n ? local_mbps : remote_mbps;
        }
        return m;
}

static struct ng_snapshot *e5(bool measured)
{
        struct ng_snapshot *s = snap_new(4, 8, 4, 21, 32u << 20);
        if (measured)
                s->latency = matrix(4, &e5_ns[0][0], 10000, 6000);
        return s;
}

static void price(const struct ng_snapshot *s, const char *cpu_nodes, const struct ng_node_share *cpu, size_t n_cpu,
                  const struct ng_node_bytes *mem, size_t n_mem, struct ng_price *ret)
{
        struct ng_bitmap k;
        bm(&k, cpu_nodes);
        ck_assert_int_eq(ng_price_compute(s, &k, cpu, n_cpu, mem, n_mem, ret), 0);
}

static const struct ng_node_share even4[] = { { 0, 0.25 }, { 1, 0.25 }, { 2, 0.25 }, { 3, 0.25 } };

START_TEST(cyclops_on_e5_measured)
{
        struct ng_snapshot *s = e5(true);
        struct ng_node_bytes mem[] = { { 0, 8ull << 30 } };
        struct ng_price p;
        price(s, "0-3", even4, 4, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_MEASURED);
        CLOSE(p.remote_access_ratio, 0.75);
        CLOSE(p.expected_latency, (53 + 211 + 217 + 248) / 4.0);
        CLOSE(p.local_latency, 53);
        double all = 0;
        for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                        all += e5_ns[i][j];
        CLOSE(p.interleaved_latency, all / 16);
        /* Node 0 serves everything: 1/4 local at 10000, 3/4 remote at 6000. */
        CLOSE(p.bandwidth_ceiling, 7000);
        CLOSE(p.interleaved_bandwidth_ceiling, 28000);
        CLOSE(ng_price_ceiling_nodes(&p), 1);
        ck_assert_uint_eq(p.interleave_nodes, 4);
        ck_assert_uint_eq(p.n_cpu_share, 4);
        ng_price_done(&p);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cyclops_on_e5_from_slit)
{
        struct ng_snapshot *s = e5(false);
        struct ng_node_bytes mem[] = { { 0, 8ull << 30 } };
        struct ng_price p;
        price(s, "0-3", even4, 4, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_SLIT);
        CLOSE(p.remote_access_ratio, 0.75);
        CLOSE(p.expected_latency, (10 + 21 * 3) / 4.0);
        CLOSE(p.interleaved_latency, (10 + 21 * 3) / 4.0);
        CLOSE(p.bandwidth_ceiling, 1);
        CLOSE(p.interleaved_bandwidth_ceiling, 4);
        CLOSE(ng_price_ceiling_nodes(&p), 1);
        ng_price_done(&p);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(interleaved_costs_what_interleaving_costs)
{
        struct ng_snapshot *s = e5(true);
        struct ng_node_bytes mem[] = { { 0, 1 << 30 }, { 1, 1 << 30 }, { 2, 1 << 30 }, { 3, 1 << 30 } };
        struct ng_price p;
        price(s, "0-3", even4, 4, mem, 4, &p);
        CLOSE(p.expected_latency, p.interleaved_latency);
        CLOSE(p.bandwidth_ceiling, p.interleaved_bandwidth_ceiling);
        CLOSE(ng_price_ceiling_nodes(&p), 4);
        ng_price_done(&p);
        ng_snapshot_free(s);
}
END_TEST

/* 8 nodes, two groups of four: 12 inside, 13 to the neighbour group's
 * first node, 22 across. */
static struct ng_snapshot *eight(void)
{
        struct ng_snapshot *s = snap_new(8, 2, 8, 22, 16u << 20);
        for (int i = 0; i < 8; i++)
                for (int j = 0; j < 8; j++)
                        s->topo.nodes[i].distance[j] = i == j ? 10 : i / 4 == j / 4 ? 12 : (j % 4 == 0 ? 13 : 22);
        return s;
}

START_TEST(remote_binding_on_eight_nodes)
{
        struct ng_snapshot *s = eight();
        static const struct ng_node_share on0[] = { { 0, 1 } };
        struct ng_node_bytes mem[] = { { 7, 8ull << 30 } };
        struct ng_price p;
        price(s, "0", on0, 1, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_SLIT);
        CLOSE(p.remote_access_ratio, 1);
        CLOSE(p.expected_latency, 22);
        CLOSE(p.local_latency, 10);
        CLOSE(ng_price_latency_pct(&p), 120);
        CLOSE(p.interleaved_latency, 10);
        ng_price_done(&p);

        /* Measured: 100 ns local, 215 ns to node 7: 2.15 times. */
        double ns[64];
        for (int i = 0; i < 64; i++)
                ns[i] = i / 8 == i % 8 ? 100 : 150;
        ns[7] = 215;
        s->latency = matrix(8, ns, 12000, 4000);
        price(s, "0", on0, 1, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_MEASURED);
        CLOSE(p.expected_latency, 215);
        CLOSE(ng_price_latency_pct(&p), 115);
        CLOSE(p.bandwidth_ceiling, 4000);
        CLOSE(p.interleaved_bandwidth_ceiling, 12000);
        ng_price_done(&p);

        /* A cell the instance needs missing: the SLIT, and said so. */
        s->latency->latency_ns[7] = NAN;
        price(s, "0", on0, 1, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_SLIT);
        ng_price_done(&p);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(nothing_to_price)
{
        struct ng_snapshot *s = e5(true);
        struct ng_price p;
        price(s, "0-3", even4, 4, NULL, 0, &p);
        ck_assert_int_eq(p.source, NG_PRICE_NONE);
        ck_assert(isnan(ng_price_latency_pct(&p)));
        struct ng_node_bytes mem[] = { { 0, 1 << 30 } };
        price(s, "", even4, 4, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_NONE);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cpu_share_from_cpu_time)
{
        struct ng_snapshot *s = e5(false);
        /* CPUs 0-7 are node 0, 8-15 node 1 ... */
        snap_proc(s, 100, 1, "ora_pmon_X", "0-31", "0-3");
        snap_proc(s, 101, 1, "ora_dbw0_X", "0-31", "0-3");
        snap_proc(s, 102, 1, "ora_lgwr_X", "0-31", "0-3");
        struct ng_proc *a = s->procs[0], *b = s->procs[1], *c = s->procs[2];
        a->stat.processor = 3;
        a->cpu_weight_ticks = 300;
        b->stat.processor = 17;
        b->cpu_weight_ticks = 100;
        c->stat.processor = 30;     /* no CPU time: no weight */
        struct ng_bitmap k;
        bm(&k, "0-3");
        pid_t pids[] = { 100, 101, 102 };
        struct ng_node_share *v;
        size_t n;
        bool measured;
        ck_assert_int_eq(ng_price_cpu_share(s, pids, 3, &k, &v, &n, &measured), 0);
        ck_assert(measured);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(v[0].node, 0);
        CLOSE(v[0].share, 0.75);
        ck_assert_int_eq(v[1].node, 2);
        CLOSE(v[1].share, 0.25);
        free(v);
        /* Nobody used CPU time: even over the CPU nodes. */
        a->cpu_weight_ticks = b->cpu_weight_ticks = 0;
        ck_assert_int_eq(ng_price_cpu_share(s, pids, 3, &k, &v, &n, &measured), 0);
        ck_assert(!measured);
        ck_assert_uint_eq(n, 4);
        CLOSE(v[3].share, 0.25);
        free(v);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hidden_hop_on_e5)
{
        struct ng_snapshot *s = e5(true);
        struct ng_hidden_hop *h;
        int n = ng_price_hidden_hops(s, &h);
        ck_assert_int_eq(n, 4);
        ck_assert_int_eq(h[0].cpu_node, 0);
        ck_assert_int_eq(h[0].near_node, 1);
        ck_assert_int_eq(h[0].far_node, 3);
        ck_assert_int_eq(h[0].near_slit, 21);
        ck_assert_int_eq(h[0].far_slit, 21);
        CLOSE(h[0].near_ns, 211);
        CLOSE(h[0].far_ns, 248);
        ck_assert_int_eq(h[1].far_node, 2);
        free(h);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hidden_hop_boundaries)
{
        /* Remote levels within 10 %: one level, as the SLIT says. */
        double flat[16] = { 50, 200, 210, 219, 200, 50, 219, 210, 210, 219, 50, 200, 219, 210, 200, 50 };
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 1u << 20);
        s->latency = matrix(4, flat, 1, 1);
        struct ng_hidden_hop *h;
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 0);
        /* Just above 10 %: a level. */
        s->latency->latency_ns[3] = 220.1;
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 1);
        ck_assert_int_eq(h[0].far_node, 3);
        free(h);
        ng_snapshot_free(s);

        /* Order reversed: SLIT says nodes 1-3 are near (12) and node 4
         * further (13), the measurement says the opposite. */
        s = eight();
        double ns[64];
        for (int i = 0; i < 64; i++)
                ns[i] = i / 8 == i % 8 ? 100 : s->topo.nodes[i / 8].distance[i % 8] * 10.0;
        ns[1] = ns[2] = ns[3] = 250;
        ns[4] = 200;
        s->latency = matrix(8, ns, 1, 1);
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 1);
        ck_assert_int_eq(h[0].cpu_node, 0);
        ck_assert_int_eq(h[0].near_node, 4);
        ck_assert_int_eq(h[0].far_node, 1);
        ck_assert_int_eq(h[0].near_slit, 13);
        ck_assert_int_eq(h[0].far_slit, 12);
        free(h);
        /* No matrix, no finding. */
        ng_latency_free(s->latency);
        s->latency = NULL;
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 0);
        ng_snapshot_free(s);
}
END_TEST

/* ---- through the audit ---- */

static struct ng_audit *audit(const struct ng_snapshot *s)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string("[instance ORCL]\nmatch_comm = ora_*\n", "t.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        ng_config_free(c);
        return a;
}

static const struct ng_finding *find(const struct ng_audit *a, enum ng_code code, int nth)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == code && nth-- == 0)
                        return &a->findings[i];
        return NULL;
}

/* ORCL: one process per CPU given, each with ticks of CPU time, all
 * attached to a 1 GiB SysV segment whose 4 KiB pages sit on mem_node. */
static void add_instance(struct ng_snapshot *s, const char *cpus, const char *mems, const int *on_cpu, size_t n,
                         int mem_node)
{
        struct ng_node_pages pl = { mem_node, 262144 };
        snap_shm(s, 7, 1ull << 30, n, 0);
        for (size_t i = 0; i < n; i++) {
                struct ng_proc *p = snap_proc(s, (pid_t) (100 + i), 1, i ? "ora_dbw0_ORCL" : "ora_pmon_ORCL", cpus, mems);
                snap_map_sysv(p, 7, 0x7f0000000000, 1ull << 30, 4, &pl, i == 0);
                p->stat.processor = on_cpu[i];
                p->cpu_weight_ticks = 100;
        }
}

START_TEST(cyclops_finding_carries_bandwidth)
{
        struct ng_snapshot *s = e5(true);
        static const int on[] = { 0, 8, 16, 24 };
        add_instance(s, "0-31", "0-3", on, 4, 0);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_CYCLOPS, 0);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "; bandwidth capped at 1 of 4 nodes (7 of 28 GB/s read, measured), 75% of "
                             "accesses remote"), "%s", f->message);
        const struct ng_instance *in = ng_audit_instance(a, "ORCL");
        ck_assert_int_eq(in->price.source, NG_PRICE_MEASURED);
        ck_assert(in->price.cpu_share_measured);
        struct json_object *o = ng_report_audit_json(s, a), *insts, *i0, *v;
        ck_assert(json_object_object_get_ex(o, "instances", &insts));
        i0 = json_object_array_get_idx(insts, 0);
        ck_assert(json_object_object_get_ex(i0, "price_source", &v));
        ck_assert_str_eq(json_object_get_string(v), "measured");
        ck_assert(json_object_object_get_ex(i0, "remote_access_ratio", &v));
        CLOSE(json_object_get_double(v), 0.75);
        ck_assert(json_object_object_get_ex(i0, "expected_latency_ns", &v));
        CLOSE(json_object_get_double(v), 182.25);
        ck_assert(json_object_object_get_ex(i0, "bandwidth_ceiling_mbps", &v));
        CLOSE(json_object_get_double(v), 7000);
        ck_assert(json_object_object_get_ex(i0, "interleaved_bandwidth_ceiling_mbps", &v));
        CLOSE(json_object_get_double(v), 28000);
        ck_assert(json_object_object_get_ex(i0, "cpu_share_by_node", &v));
        ck_assert_uint_eq(json_object_array_length(v), 4);
        json_object_put(o);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(remote_binding_finding_carries_latency)
{
        struct ng_snapshot *s = eight();
        static const int on[] = { 0, 1 };
        add_instance(s, "0-1", "7", on, 2, 7);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_REMOTE_MEMORY, 0);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert_msg(strstr(f->message, "every access is remote; +120 % average memory latency against local "
                             "(distance 22 vs 10, from the SLIT)"), "%s", f->message);
        ng_audit_free(a);

        double ns[64];
        for (int i = 0; i < 64; i++)
                ns[i] = i / 8 == i % 8 ? 100 : 150;
        ns[7] = 215;
        s->latency = matrix(8, ns, 12000, 4000);
        a = audit(s);
        f = find(a, NG_CODE_REMOTE_MEMORY, 0);
        ck_assert_msg(strstr(f->message, "every access is remote; +115 % average memory latency against local "
                             "(215 vs 100 ns, measured)"), "%s", f->message);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(metrics_carry_prices_and_matrices)
{
        struct ng_snapshot *s = e5(true);
        static const int on[] = { 0, 8, 16, 24 };
        add_instance(s, "0-31", "0-3", on, 4, 0);
        struct ng_audit *a = audit(s);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct ng_metrics_poll poll = {0};
        ck_assert_int_eq(ng_metrics_render(s, a, &poll, f), 0);
        fclose(f);
        static const char *const want[] = {
                "\nnumaguard_node_latency_seconds{cpu_node=\"0\",memory_node=\"3\"} 2.48e-07\n",
                "\nnumaguard_node_read_bandwidth_bytes_per_second{cpu_node=\"1\",memory_node=\"1\"} 1e+10\n",
                "\nnumaguard_instance_remote_access_ratio{db_instance=\"ORCL\",source=\"measured\"} 0.75\n",
                "\nnumaguard_instance_expected_latency_seconds{db_instance=\"ORCL\"} 1.8225e-07\n",
                "# TYPE numaguard_node_latency_seconds gauge\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ck_assert_msg(strstr(text, want[i]) != NULL, "no %s in:\n%s", want[i], text);
        free(text);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hidden_hop_findings)
{
        struct ng_snapshot *s = e5(true);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_HIDDEN_HOP, 0);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_INFO);
        ck_assert_msg(!strcmp(f->message, "from node 0, nodes 1 and 3 share SLIT distance 21 but measure 211 ns and "
                              "248 ns (+18%): node 3 is a further hop the distance table hides"), "%s", f->message);
        ck_assert(ng_bitmap_test(&f->nodes, 0) && ng_bitmap_test(&f->nodes, 1) && ng_bitmap_test(&f->nodes, 3));
        ck_assert_ptr_nonnull(find(a, NG_CODE_HIDDEN_HOP, 3));
        ck_assert_ptr_null(find(a, NG_CODE_HIDDEN_HOP, 4));
        /* info only: it never changes the exit status */
        for (int k = 0; k < 4; k++)
                ck_assert_int_eq(find(a, NG_CODE_HIDDEN_HOP, k)->severity, NG_SEV_INFO);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

/* A CXL-like host: nodes 0 and 1 with CPUs (100 ns, 20 GB/s local),
 * node 2 memory only behind node 0 at three times its latency and 8 GB/s,
 * node 3 memory only behind node 0 at 150 ns; the SLIT says 20 to every
 * other node. */
static struct ng_snapshot *cxl(void)
{
        struct ng_snapshot *s = snap_new(4, 2, 2, 20, 1u << 20);
        snap_hmat(s, 0, 1, "0", 100, 20000);
        snap_hmat(s, 1, 1, "1", 100, 20000);
        snap_hmat(s, 2, 1, "0", 300, 8000);
        snap_hmat(s, 3, 1, "0", 150, 16000);
        for (int i = 0; i < 4; i++)
                snap_hmat(s, i, 0, i == 1 ? "1" : "0", 90, 30000);
        return s;
}

START_TEST(price_from_hmat)
{
        struct ng_snapshot *s = cxl();
        static const struct ng_node_share on0[] = { { 0, 1 } };
        struct ng_node_bytes mem[] = { { 2, 1ull << 30 } };
        struct ng_price p;
        price(s, "0", on0, 1, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_HMAT);
        ck_assert_str_eq(ng_price_source_name(p.source), "hmat");
        CLOSE(p.remote_access_ratio, 1);
        /* access1 (CPU initiators), not access0. */
        CLOSE(p.expected_latency, 300);
        CLOSE(p.local_latency, 100);
        CLOSE(p.interleaved_latency, 100);
        CLOSE(ng_price_latency_pct(&p), 200);
        CLOSE(p.bandwidth_ceiling, 8000);
        CLOSE(p.interleaved_bandwidth_ceiling, 20000);
        ng_price_done(&p);

        /* Half on the expander, half local. */
        struct ng_node_bytes half[] = { { 0, 1ull << 30 }, { 2, 1ull << 30 } };
        price(s, "0", on0, 1, half, 2, &p);
        ck_assert_int_eq(p.source, NG_PRICE_HMAT);
        CLOSE(p.expected_latency, 200);
        CLOSE(p.bandwidth_ceiling, 16000);
        ng_price_done(&p);

        /* Without access1 (kernels before 5.10) access0 serves. */
        memset(&s->topo.nodes[2].access[1], 0, sizeof(s->topo.nodes[2].access[1]));
        memset(&s->topo.nodes[0].access[1], 0, sizeof(s->topo.nodes[0].access[1]));
        price(s, "0", on0, 1, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_HMAT);
        CLOSE(p.expected_latency, 90);
        ng_price_done(&p);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hmat_cells_missing_fall_to_the_slit)
{
        struct ng_snapshot *s = cxl();
        struct ng_price p;
        /* Node 1 is no best initiator of node 0: the kernel exports no
         * figure for that pair, so the SLIT prices the cyclops. */
        static const struct ng_node_share both[] = { { 0, 0.5 }, { 1, 0.5 } };
        struct ng_node_bytes mem[] = { { 0, 1ull << 30 } };
        price(s, "0-1", both, 2, mem, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_SLIT);
        CLOSE(p.expected_latency, 15);
        ng_price_done(&p);

        /* A figure the firmware did not give is unknown, not 0. */
        static const struct ng_node_share on0[] = { { 0, 1 } };
        struct ng_node_bytes on2[] = { { 2, 1ull << 30 } };
        s->topo.nodes[2].access[1].read_bandwidth_mbps = NG_HMAT_UNKNOWN;
        price(s, "0", on0, 1, on2, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_SLIT);
        CLOSE(p.expected_latency, 20);
        ng_price_done(&p);

        /* A saved probe comes first. */
        s->topo.nodes[2].access[1].read_bandwidth_mbps = 8000;
        double ns[16];
        for (int i = 0; i < 16; i++)
                ns[i] = i / 4 == i % 4 ? 80 : 200;
        s->latency = matrix(4, ns, 12000, 4000);
        price(s, "0", on0, 1, on2, 1, &p);
        ck_assert_int_eq(p.source, NG_PRICE_MEASURED);
        CLOSE(p.expected_latency, 200);
        ng_price_done(&p);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hidden_hop_from_hmat)
{
        struct ng_snapshot *s = cxl();
        struct ng_hidden_hop *h;
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 1);
        ck_assert_int_eq(h[0].source, NG_PRICE_HMAT);
        ck_assert_int_eq(h[0].cpu_node, 0);
        ck_assert_int_eq(h[0].near_node, 3);
        ck_assert_int_eq(h[0].far_node, 2);
        CLOSE(h[0].near_ns, 150);
        CLOSE(h[0].far_ns, 300);
        free(h);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_HIDDEN_HOP, 0);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(!strcmp(f->message, "from node 0, nodes 3 and 2 share SLIT distance 20 but the firmware's "
                              "HMAT gives 150 ns and 300 ns (+100%): node 2 is a further hop the distance table "
                              "hides"), "%s", f->message);
        ck_assert_ptr_null(find(a, NG_CODE_HIDDEN_HOP, 1));
        ng_audit_free(a);

        /* Within NG_HIDDEN_HOP_RATIO: one level. */
        s->topo.nodes[2].access[1].read_latency_ns = 165;
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 0);
        /* A probe saved: the HMAT is not asked. */
        s->topo.nodes[2].access[1].read_latency_ns = 300;
        double ns[16];
        for (int i = 0; i < 16; i++)
                ns[i] = i / 4 == i % 4 ? 80 : 200;
        s->latency = matrix(4, ns, 12000, 4000);
        ck_assert_int_eq(ng_price_hidden_hops(s, &h), 0);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(remote_finding_and_json_from_hmat)
{
        struct ng_snapshot *s = cxl();
        static const int on[] = { 0, 1 };
        add_instance(s, "0-1", "2", on, 2, 2);
        struct ng_audit *a = audit(s);
        const struct ng_finding *f = find(a, NG_CODE_REMOTE_MEMORY, 0);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "+200 % average memory latency against local (300 vs 100 ns, from the "
                             "firmware's HMAT)"), "%s", f->message);
        struct json_object *o = ng_report_audit_json(s, a), *insts, *i0, *v;
        ck_assert(json_object_object_get_ex(o, "instances", &insts));
        i0 = json_object_array_get_idx(insts, 0);
        ck_assert(json_object_object_get_ex(i0, "price_source", &v));
        ck_assert_str_eq(json_object_get_string(v), "hmat");
        ck_assert(json_object_object_get_ex(i0, "expected_latency_ns", &v));
        CLOSE(json_object_get_double(v), 300);
        ck_assert(json_object_object_get_ex(i0, "bandwidth_ceiling_mbps", &v));
        CLOSE(json_object_get_double(v), 8000);
        json_object_put(o);
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        struct ng_metrics_poll poll = {0};
        ck_assert_int_eq(ng_metrics_render(s, a, &poll, m), 0);
        fclose(m);
        ck_assert_msg(strstr(text, "numaguard_instance_remote_access_ratio{db_instance=\"ORCL\",source=\"hmat\"} 1\n"),
                      "%s", text);
        ck_assert_msg(strstr(text, "numaguard_instance_expected_latency_seconds{db_instance=\"ORCL\"} 3e-07\n"),
                      "%s", text);
        free(text);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("price");
        TCase *tc = tcase_create("model");
        tcase_add_test(tc, cyclops_on_e5_measured);
        tcase_add_test(tc, cyclops_on_e5_from_slit);
        tcase_add_test(tc, interleaved_costs_what_interleaving_costs);
        tcase_add_test(tc, remote_binding_on_eight_nodes);
        tcase_add_test(tc, nothing_to_price);
        tcase_add_test(tc, cpu_share_from_cpu_time);
        tcase_add_test(tc, hidden_hop_on_e5);
        tcase_add_test(tc, hidden_hop_boundaries);
        suite_add_tcase(s, tc);
        tc = tcase_create("audit");
        tcase_add_test(tc, cyclops_finding_carries_bandwidth);
        tcase_add_test(tc, remote_binding_finding_carries_latency);
        tcase_add_test(tc, hidden_hop_findings);
        tcase_add_test(tc, metrics_carry_prices_and_matrices);
        suite_add_tcase(s, tc);
        tc = tcase_create("hmat");
        tcase_add_test(tc, price_from_hmat);
        tcase_add_test(tc, hmat_cells_missing_fall_to_the_slit);
        tcase_add_test(tc, hidden_hop_from_hmat);
        tcase_add_test(tc, remote_finding_and_json_from_hmat);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* The analysis on literal snapshots: every rule raised and not raised, at
 * its boundaries; discovery; exit status. */

#include "snapshot-builder.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "rules-internal.h"
#include "util.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

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

static size_t count(const struct ng_audit *a, enum ng_code code)
{
        size_t n = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                n += a->findings[i].code == code;
        return n;
}

static const struct ng_finding *find(const struct ng_audit *a, enum ng_code code)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == code)
                        return &a->findings[i];
        return NULL;
}

#define ORA "[instance ORCL]\nmatch_comm = ora_*\n"

/* One Oracle-like instance: pids 100 and 101 with cpus/mems, attached to a
 * 1 GiB 4 KiB-page SysV segment whose pages per node are given. */
static struct ng_snapshot *one_instance(int nodes, const char *cpus, const char *mems,
                                        const struct ng_node_pages *pl, size_t n_pl)
{
        struct ng_snapshot *s = snap_new(nodes, 1, nodes, 21, 16 * GiB / 1024);
        snap_shm(s, 7, GiB, 2, 0);
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", cpus, mems);
        snap_map_sysv(p, 7, 0x7f0000000000, GiB, 4, pl, n_pl);
        p = snap_proc(s, 101, 1, "ora_dbw0_ORCL", cpus, mems);
        snap_map_sysv(p, 7, 0x7f0000000000, GiB, 4, NULL, 0);
        return s;
}

static void pages_split(struct ng_node_pages *pl, int nodes, uint64_t total, double share0)
{
        uint64_t first = (uint64_t) (total * share0 + 0.5), rest = total - first;
        pl[0] = (struct ng_node_pages) { 0, first };
        for (int i = 1; i < nodes; i++)
                pl[i] = (struct ng_node_pages) { i, rest / (uint64_t) (nodes - 1) + (i == 1 ? rest % (uint64_t) (nodes - 1) : 0) };
}

/* Severities come from the code table: a rule raises its code's own or
 * one of the overrides ng-codes.h lists, and ng_rules_add_as() refuses
 * any other. */
START_TEST(severity_from_table)
{
        const char *when = "x";
        for (int k = 0; k < NG_CODE_MAX_; k++) {
                ck_assert(ng_code_severity_allowed((enum ng_code) k, ng_code_info((enum ng_code) k)->severity, &when));
                ck_assert_ptr_null(when);
        }
        ck_assert(ng_code_severity_allowed(NG_CODE_REMOTE_MEMORY, NG_SEV_CRITICAL, &when));
        ck_assert_ptr_nonnull(strstr(when, "another socket"));
        ck_assert(ng_code_severity_allowed(NG_CODE_ORPHAN_SEGMENT, NG_SEV_INFO, &when));
        ck_assert(!ng_code_severity_allowed(NG_CODE_ORPHAN_SEGMENT, NG_SEV_CRITICAL, NULL));
        ck_assert(!ng_code_severity_allowed(NG_CODE_CYCLOPS, NG_SEV_CRITICAL, NULL));
        ck_assert(!ng_code_severity_allowed(NG_CODE_MAX_, NG_SEV_WARNING, NULL));

        struct ng_audit a = { 0 };
        struct audit_ctx ctx = { .a = &a };
        ck_assert_int_eq(ng_rules_add(&ctx, NG_CODE_CYCLOPS, NULL, NULL, NULL, 0, "", "m"), 0);
        ck_assert_int_eq(a.findings[0].severity, NG_SEV_WARNING);
        ck_assert_int_eq(ng_rules_add_as(&ctx, NG_CODE_REMOTE_MEMORY, NG_SEV_CRITICAL, NULL, NULL, NULL, 0, "", "m"), 0);
        ck_assert_int_eq(a.findings[1].severity, NG_SEV_CRITICAL);
        /* a severity the table does not list: refused, nothing added */
        ck_assert_int_eq(ng_rules_add_as(&ctx, NG_CODE_CYCLOPS, NG_SEV_CRITICAL, NULL, NULL, NULL, 0, "", "m"),
                         -EINVAL);
        ck_assert_uint_eq(a.n_findings, 2);
        free(a.findings);
}
END_TEST

START_TEST(cyclops_raised_at_fraction)
{
        struct ng_node_pages pl[4];
        /* 235926 of 262140 pages is exactly the default 0.9. */
        pages_split(pl, 4, 262140, 0.90);
        struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 4);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_CYCLOPS);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->instance, "ORCL");
        ck_assert(ng_bitmap_test(&f->nodes, 0) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert_msg(strstr(f->message, "90% of 1023 MiB") != NULL, "%s", f->message);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_int_eq(ng_audit_exit_status(a), 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* The instance's segment asked of itself (a whole sample), with the policy
 * the live segment said it has. */
static struct ng_audit *with_policy(const char *policy, const char *conf_text, struct ng_snapshot **sp,
                                    struct ng_config **cp)
{
        static const struct ng_node_pages pl[] = { { 0, 262144 } };
        struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 1);
        s->placement = NG_PLACEMENT_SAMPLED;
        s->samples = xcalloc(1, sizeof(*s->samples));
        s->samples[0] = (struct ng_sample) { .pid = 100, .len = GiB, .asked = 64, .present = 64, .whole = true,
                                             .sysv = true, .inode = 7, .dev_minor = 1 };
        snprintf(s->samples[0].policy, sizeof(s->samples[0].policy), "%s", policy);
        s->samples[0].np = xcalloc(1, sizeof(struct ng_node_pages));
        s->samples[0].np[0] = (struct ng_node_pages) { 0, 64 };
        s->samples[0].n_np = 1;
        s->n_samples = 1;
        *sp = s;
        *cp = conf(conf_text);
        return run(s, *cp);
}

/* A sample of the segment itself is its own only on its device: a file of
 * another device whose inode equals the shmid (a user's own tmpfs) is not;
 * and where the attachers' maps lines disagree on the device (a user's
 * mapping named like the segment), no sample is trusted. */
START_TEST(sysv_sample_keyed_by_device)
{
        for (int other = 0; other < 3; other++) {
                static const struct ng_node_pages pl[] = { { 0, 262144 } };
                struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 1);
                s->placement = NG_PLACEMENT_SAMPLED;
                s->samples = xcalloc(1, sizeof(*s->samples));
                s->samples[0] = (struct ng_sample) { .pid = 100, .len = GiB, .asked = 64, .present = 64,
                                                     .whole = true, .sysv = true, .inode = 7,
                                                     .dev_minor = other == 1 ? 9 : 1 };
                s->samples[0].np = xcalloc(1, sizeof(struct ng_node_pages));
                s->samples[0].np[0] = (struct ng_node_pages) { 2, 64 };     /* the sample says node 2 */
                s->samples[0].n_np = 1;
                s->n_samples = 1;
                if (other == 2) {       /* a third process maps "shmid 7" on device 0:9 */
                        struct ng_proc *p = snap_proc(s, 102, 1000, "ora_forg_ORCL", "0-3", "0-3");
                        snap_map_sysv(p, 7, 0x7f0000000000, GiB, 4, NULL, 0);
                        p->maps[p->n_maps - 1].dev_minor = 9;
                }
                struct ng_config *c = conf(ORA);
                struct ng_audit *a = run(s, c);
                const struct ng_instance *in = ng_audit_instance(a, "ORCL");
                ck_assert_ptr_nonnull(in);
                const struct ng_segment *seg = &a->segments[in->segs[0]];
                ck_assert_msg(other ? seg->placement_source != NG_SOURCE_SEGMENT : seg->placement_source == NG_SOURCE_SEGMENT,
                              "case %d: placement from %s", other, ng_source_name(seg->placement_source));
                ck_assert_uint_eq(ng_segment_node_bytes(seg, 2) > 0, !other);
                ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        }
}
END_TEST

START_TEST(segment_policy_drift)
{
        struct ng_snapshot *s;
        struct ng_config *c;
        /* interleave wanted, none of its own: info, with what to do */
        struct ng_audit *a = with_policy("default", ORA "policy = interleave\n", &s, &c);
        const struct ng_finding *f = find(a, NG_CODE_SEGMENT_POLICY_DRIFT);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_INFO);
        ck_assert_msg(strstr(f->message, "its new pages follow default (no policy of its own") &&
                      strstr(f->message, "the instance's policy is interleave:0-3"), "%s", f->message);
        ck_assert_ptr_nonnull(strstr(f->advice, "numaguardctl rebalance"));
        ck_assert_int_eq(ng_code_info(NG_CODE_SEGMENT_POLICY_DRIFT)->correction, NG_CORRECTION_REBALANCE);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* another policy than the instance's: warning */
        a = with_policy("bind:2", ORA "policy = interleave\nnodes = 0-1\n", &s, &c);
        f = find(a, NG_CODE_SEGMENT_POLICY_DRIFT);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_msg(strstr(f->message, "follow bind:2; the instance's policy is interleave:0-1"), "%s", f->message);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* as wanted, or local with none of its own, or unknown: nothing */
        const char *const quiet[][2] = { { "interleave:0-3", ORA "policy = interleave\n" },
                                         { "default", ORA },
                                         { "interleave:0-3", ORA },     /* local over CPUs on 4 nodes */
                                         { "", ORA "policy = interleave\n" } };
        for (size_t i = 0; i < ELEMENTSOF(quiet); i++) {
                a = with_policy(quiet[i][0], quiet[i][1], &s, &c);
                ck_assert_msg(count(a, NG_CODE_SEGMENT_POLICY_DRIFT) == 0, "case %zu", i);
                ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        }
        /* local, but another policy of its own: warning */
        a = with_policy("prefer:3", ORA, &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_SEGMENT_POLICY_DRIFT), 1);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
}
END_TEST

/* The segment carries interleave:0-3; the main process (pid 100) started
 * under start_policy/nodes, in unit (or none) whose files say unit_policy
 * (-1: no NUMAPolicy=) over unit_mask. */
static struct ng_audit *persisted(int start_policy, const char *start_nodes, const char *unit, int unit_policy,
                                  const char *unit_mask, struct ng_snapshot **sp, struct ng_config **cp)
{
        struct ng_audit *a = with_policy("interleave:0-3", ORA "policy = interleave\n", sp, cp);
        ng_audit_free(a);
        struct ng_snapshot *s = *sp;
        s->db_settings = xcalloc(1, sizeof(*s->db_settings));
        s->n_db_settings = 1;
        struct ng_db_settings *d = &s->db_settings[0];
        *d = (struct ng_db_settings) { .pid = 100, .policy_known = true, .policy = start_policy };
        snprintf(d->policy_nodes, sizeof(d->policy_nodes), "%s", start_nodes);
        if (unit) {
                snprintf(d->unit, sizeof(d->unit), "%s", unit);
                d->unit_known = true;
                d->unit_has_policy = unit_policy >= 0;
                d->unit_policy = unit_policy;
                snprintf(d->unit_mask, sizeof(d->unit_mask), "%s", unit_mask);
        }
        return run(s, *cp);
}

START_TEST(policy_not_persistent)
{
        struct ng_snapshot *s;
        struct ng_config *c;
        /* a service without NUMAPolicy=: warning, the drop-in in the advice */
        struct ng_audit *a = persisted(NG_MPOL_DEFAULT, "", "postgresql@15-main.service", -1, "", &s, &c);
        const struct ng_finding *f = find(a, NG_CODE_POLICY_NOT_PERSISTENT);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_msg(strstr(f->message, "follows interleave:0-3, but that dies with the segment") &&
                      strstr(f->message, "started under default; its unit postgresql@15-main.service sets no "
                             "NUMAPolicy="), "%s", f->message);
        ck_assert_msg(strstr(f->advice, "NUMAPolicy=interleave and NUMAMask=0-3"), "%s", f->advice);
        ck_assert_int_eq(ng_code_info(NG_CODE_POLICY_NOT_PERSISTENT)->correction, NG_CORRECTION_NONE);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* started by hand: the numactl option */
        a = persisted(NG_MPOL_DEFAULT, "", NULL, -1, "", &s, &c);
        f = find(a, NG_CODE_POLICY_NOT_PERSISTENT);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->advice, "numactl --interleave=0-3"), "%s", f->advice);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* a unit with another mask: still raised */
        a = persisted(NG_MPOL_DEFAULT, "", "db.service", NG_MPOL_INTERLEAVE, "0-1", &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_POLICY_NOT_PERSISTENT), 1);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* started under it, or recorded in its unit: nothing */
        a = persisted(NG_MPOL_INTERLEAVE, "0-3", NULL, -1, "", &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_POLICY_NOT_PERSISTENT), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        a = persisted(NG_MPOL_DEFAULT, "", "db.service", NG_MPOL_INTERLEAVE, "0-3", &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_POLICY_NOT_PERSISTENT), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* the segment without the instance's policy: SEGMENT_POLICY_DRIFT's, not this */
        a = with_policy("default", ORA "policy = interleave\n", &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_POLICY_NOT_PERSISTENT), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
}
END_TEST

/* policy = weighted-interleave: node i's memory at bw[i] MB/s from node 0
 * (the HMAT), the host's weights host[i] (0: the kernel has none). */
static struct ng_audit *weighted(const int64_t *bw, const unsigned *host, struct ng_snapshot **sp, struct ng_config **cp)
{
        static const struct ng_node_pages pl[] = { { 0, 262144 } };
        struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 1);
        for (int i = 0; i < 4; i++) {
                snap_hmat(s, i, 1, "0", 100, bw[i]);
                s->topo.nodes[i].interleave_weight = host ? host[i] : 0;
        }
        s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE].state = host ? NG_FEATURE_PRESENT : NG_FEATURE_ABSENT;
        snprintf(s->topo.features[NG_FEATURE_WEIGHTED_INTERLEAVE].detail,
                 sizeof(s->topo.features[0].detail), "%s", host ? "weights node0 1" : "no weighted_interleave");
        *sp = s;
        *cp = conf(ORA "policy = weighted-interleave\n");
        return run(s, *cp);
}

START_TEST(interleave_weights)
{
        static const int64_t bw[] = { 20000, 8000, 16000, 8000 };
        static const unsigned ones[] = { 1, 1, 1, 1 }, right[] = { 10, 4, 8, 4 };
        struct ng_snapshot *s;
        struct ng_config *c;
        struct ng_audit *a = weighted(bw, ones, &s, &c);
        /* the weights the bandwidth calls for: 16ths of the fastest, reduced */
        unsigned w[8];
        struct ng_bitmap all = {0};
        ck_assert_int_eq(ng_bitmap_parse_list("0-3", &all), 0);
        ck_assert_str_eq(ng_instance_interleave_weights(s, &a->instances[0], &all, w, 8), "HMAT bandwidth");
        ck_assert_msg(w[0] == 5 && w[1] == 2 && w[2] == 4 && w[3] == 2 && w[4] == 0, "%u %u %u %u", w[0], w[1], w[2],
                      w[3]);
        char txt[96];
        ck_assert_int_eq(ng_instance_segment_policy(s, &a->instances[0], &all, txt, sizeof(txt)),
                         NG_MPOL_WEIGHTED_INTERLEAVE);
        ck_assert_str_eq(txt, "weighted interleave:0-3");
        const struct ng_finding *f = find(a, NG_CODE_INTERLEAVE_WEIGHTS);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_msg(strstr(f->message, "(node0 1, node1 1, node2 1, node3 1)") &&
                      strstr(f->message, "HMAT bandwidth) calls for: node0 5, node1 2, node2 4, node3 2"), "%s",
                      f->message);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* the same ratio written larger: nothing to say */
        a = weighted(bw, right, &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_INTERLEAVE_WEIGHTS), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* a kernel without it: info, and plain interleave is what it gets */
        a = weighted(bw, NULL, &s, &c);
        f = find(a, NG_CODE_INTERLEAVE_WEIGHTS);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_INFO);
        ck_assert_msg(strstr(f->message, "the kernel has no weighted interleave (no weighted_interleave)"), "%s",
                      f->message);
        ck_assert_int_eq(ng_instance_segment_policy(s, &a->instances[0], &all, txt, sizeof(txt)), NG_MPOL_INTERLEAVE);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* a node without a bandwidth: equal weights, said so */
        static const int64_t some[] = { 20000, NG_HMAT_UNKNOWN, 16000, 8000 };
        a = weighted(some, ones, &s, &c);
        ck_assert_str_eq(ng_instance_interleave_weights(s, &a->instances[0], &all, w, 8), "equal: no bandwidth known");
        ck_assert(w[0] == 1 && w[1] == 1 && w[3] == 1);
        ck_assert_uint_eq(count(a, NG_CODE_INTERLEAVE_WEIGHTS), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
}
END_TEST

/* A 1 GiB hugetlb SysV segment, all resident by the kernel's count, of
 * which the attacher maps mapped_pages 2 MiB pages, all on node 0. */
static struct ng_audit *huge_cyclops(uint64_t mapped_pages, struct ng_snapshot **sp, struct ng_config **cp)
{
        struct ng_node_pages pl[] = { { 0, mapped_pages } };
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_shm(s, 7, GiB, 1, 0);
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-3", "0-3");
        snap_map_sysv(p, 7, 0x7f0000000000, GiB, 2048, pl, 1);
        *sp = s;
        *cp = conf(ORA);
        return run(s, *cp);
}

START_TEST(out_of_reach)
{
        struct ng_snapshot *s;
        struct ng_config *c;
        /* the attacher maps a quarter: three quarters out of rebalance's reach */
        struct ng_audit *a = huge_cyclops(128, &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 1);
        const struct ng_finding *f = find(a, NG_CODE_OUT_OF_REACH);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_INFO);
        ck_assert_msg(strstr(f->message, "768 MiB of the 1 GiB resident in shmid 7") &&
                      strstr(f->message, "only through an attacher's page tables, and pid 100's hold only part"),
                      "%s", f->message);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* it maps every page: nothing out of reach */
        a = huge_cyclops(512, &s, &c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 1);
        ck_assert_uint_eq(count(a, NG_CODE_OUT_OF_REACH), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
        /* no correction called for (placement spread): nothing said */
        static const struct ng_node_pages spread[] = { { 0, 32 }, { 1, 32 }, { 2, 32 }, { 3, 32 } };
        s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_shm(s, 7, GiB, 1, 0);
        snap_map_sysv(snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-3", "0-3"), 7, 0x7f0000000000, GiB, 2048, spread, 4);
        c = conf(ORA);
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 0);
        ck_assert_uint_eq(count(a, NG_CODE_OUT_OF_REACH), 0);
        ng_audit_free(a), ng_config_free(c), ng_snapshot_free(s);
}
END_TEST

START_TEST(cyclops_not_raised_below_fraction)
{
        struct ng_node_pages pl[4];
        pages_split(pl, 4, 262144, 0.89);
        struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 4);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cyclops_not_raised_for_single_node_cpus_or_bind)
{
        struct ng_node_pages pl[] = { { 0, 262144 } };
        struct ng_snapshot *s = one_instance(4, "0", "0", pl, 1);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        /* CPUs and memory on node 0: a deliberate local binding, nothing to say. */
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 0);
        ck_assert_uint_eq(count(a, NG_CODE_REMOTE_MEMORY), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);

        s = one_instance(4, "0-3", "0-3", pl, 1);
        c = conf(ORA "policy = bind\nnodes = 0\n");
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 0);
        ng_audit_free(a);
        ng_config_free(c);
        c = conf(ORA "policy = bind\nnodes = 1\n");
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cyclops_needs_min_segment_size)
{
        struct ng_node_pages pl[] = { { 0, 262144 } };
        struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 1);
        struct ng_config *c = conf("[global]\nmin_segment_size = 2G\n" ORA);
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_CYCLOPS), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(remote_memory_bound_elsewhere_is_critical)
{
        struct ng_node_pages pl[] = { { 3, 262144 } };
        struct ng_snapshot *s = one_instance(4, "0", "3", pl, 1);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_REMOTE_MEMORY);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert(ng_bitmap_test(&f->nodes, 3) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert_msg(strstr(f->message, "distance 21") != NULL, "%s", f->message);
        ck_assert_int_eq(ng_audit_exit_status(a), 2);
        ck_assert_int_eq(a->findings[0].severity, NG_SEV_CRITICAL);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(remote_memory_sits_on_boundary)
{
        /* CPUs on nodes 0-1, memory allowed on 0-1 (nothing allowed remote),
         * 25% resident on node 3: raised; 24%: not. */
        struct ng_node_pages pl[] = { { 0, 98304 }, { 1, 98304 }, { 3, 65536 } };
        struct ng_snapshot *s = one_instance(4, "0-1", "0-1", pl, 3);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_REMOTE_MEMORY);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(ng_bitmap_test(&f->nodes, 3));
        ng_audit_free(a);
        ng_snapshot_free(s);

        struct ng_node_pages pl2[] = { { 0, 100000 }, { 1, 99232 }, { 3, 62912 } };
        s = one_instance(4, "0-1", "0-1", pl2, 3);
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_REMOTE_MEMORY), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(remote_memory_allowed_on_cpu_nodes_but_not_memory_only)
{
        /* CPUs 0-1 on nodes 0-1 of 4 CPU nodes, memory allowed everywhere. */
        struct ng_node_pages pl[] = { { 0, 131072 }, { 1, 131072 } };
        struct ng_snapshot *s = one_instance(4, "0-1", "0-3", pl, 2);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_REMOTE_MEMORY);
        ck_assert_ptr_nonnull(f);
        ck_assert(ng_bitmap_test(&f->nodes, 2) && ng_bitmap_test(&f->nodes, 3));
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* Nodes 2-3 memory-only (CXL-like): allowed by default, not flagged. */
        s = snap_new(4, 1, 2, 21, 16 * GiB / 1024);
        snap_shm(s, 7, GiB, 1, 0);
        snap_map_sysv(snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-3"), 7, 0x7f0000000000, GiB, 4, pl, 2);
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_REMOTE_MEMORY), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugepage_fallback_one_page_short)
{
        /* docs/ARCHITECTURE.md, "Why it exists": an SGA of 1 GB + 16 KB beside a
         * pool of 513 pages. */
        uint64_t sga = GiB + 16 * 1024;
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 256, 256, 0);
        s->topo.nodes[0].pools[0].nr_pages = s->topo.nodes[0].pools[0].free_pages = 257;
        s->pools[0].nr_pages = s->pools[0].free_pages = 513;
        snap_shm(s, 7, sga, 1, 0);
        struct ng_node_pages pl[] = { { 0, 131076 }, { 1, 131072 } };
        snap_map_sysv(snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1"), 7, 0x7f0000000000, sga, 4, pl, 2);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_FALLBACK);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_msg(strstr(f->message, "needs 513 pages") && strstr(f->message, "513 pages (513 free"), "%s",
                      f->message);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_IDLE), 1);
        ng_audit_free(a);
        ng_config_free(c);

        c = conf(ORA "hugepages = required\n");
        a = run(s, c);
        ck_assert_int_eq(find(a, NG_CODE_HUGEPAGE_FALLBACK)->severity, NG_SEV_CRITICAL);
        ng_audit_free(a);
        ng_config_free(c);

        c = conf(ORA "hugepages = off\n");
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_FALLBACK), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugepage_fallback_not_without_pool_or_in_hugepages)
{
        struct ng_node_pages pl[] = { { 0, 131072 }, { 1, 131072 } };
        struct ng_snapshot *s = one_instance(2, "0-1", "0-1", pl, 2);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_FALLBACK), 0);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_IDLE), 0);
        ng_audit_free(a);
        ng_snapshot_free(s);

        /* The same segment in 2 MiB pages, pool in use: nothing to say. */
        s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 256, 0, 0);
        snap_shm(s, 7, GiB, 1, 0);
        struct ng_node_pages hp[] = { { 0, 256 }, { 1, 256 } };
        snap_map_sysv(snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1"), 7, 0x7f0000000000, GiB, 2048, hp, 2);
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_FALLBACK), 0);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_SHORTFALL), 0);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_IDLE), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugepage_idle_only_when_unreserved)
{
        struct ng_node_pages pl[] = { { 0, 131072 }, { 1, 131072 } };
        struct ng_snapshot *s = one_instance(2, "0-1", "0-1", pl, 2);
        snap_pool(s, 2048, 100, 100, 200);
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_IDLE), 0);
        ng_audit_free(a);
        s->pools[0].resv_pages = 199;
        a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_IDLE);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "1 of 200 2 MiB hugepages") != NULL, "%s", f->message);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugepage_shortfall_global_and_per_node)
{
        /* expected_size 2 GiB = 1024 pages; 512 free in all: short by 512. */
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 256, 256, 0);
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "1", "1");
        struct ng_config *c = conf(ORA "expected_size = 2G\nhugepages = required\n");
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_SHORTFALL);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert(f->value == 512);
        ng_audit_free(a);
        ng_config_free(c);

        /* 1 GiB wanted, 512 free in all but only 256 on node 1 where the
         * instance may allocate. */
        c = conf(ORA "expected_size = 1G\n");
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_SHORTFALL), 0);
        f = find(a, NG_CODE_HUGEPAGE_NODE_SHORTFALL);
        ck_assert_ptr_nonnull(f);
        ck_assert(ng_bitmap_test(&f->nodes, 1) && ng_bitmap_count(&f->nodes) == 1);
        ck_assert(f->value == 256);
        ng_audit_free(a);
        ng_config_free(c);

        /* 512 MiB wanted: fits on node 1. */
        c = conf(ORA "expected_size = 512M\n");
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_HUGEPAGE_SHORTFALL) + count(a, NG_CODE_HUGEPAGE_NODE_SHORTFALL), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(pagetable_bloat_boundary)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 8 * GiB / 1024);
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        struct ng_config *c = conf(ORA);
        /* 16 GiB of memory: 2% is 335544.32 KiB, so 335545 KiB is the first
         * whole KiB at or above the edge and 335544 the last below it. */
        mi_set(&s->meminfo, "PageTables", 335545);
        p->status.vm_pte_kib = 335545;
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_PAGETABLE_BLOAT), 2);
        ng_audit_free(a);
        mi_set(&s->meminfo, "PageTables", 335544);
        p->status.vm_pte_kib = 335544;
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_PAGETABLE_BLOAT), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(node_pressure_auto_floor)
{
        /* 16 GiB nodes, no watermark known: auto is 3 % = 515396073 bytes. */
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        struct ng_config *c = conf("");
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", 1024 * 1024 - 1);     /* 1 GiB - 1 KiB: fine */
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_NODE_PRESSURE), 0);
        ng_audit_free(a);
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", 515396073 / 1024);    /* 1 KiB under */
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_NODE_PRESSURE), 1);
        ng_audit_free(a);
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", 515396073 / 1024 + 1);
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_NODE_PRESSURE), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(node_pressure_floor)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        struct ng_config *c = conf("[global]\nnode_free_floor = 1G\n");
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", 1024 * 1024 - 1);     /* 1 GiB - 1 KiB */
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_NODE_PRESSURE);
        ck_assert_ptr_nonnull(f);
        ck_assert(ng_bitmap_test(&f->nodes, 1));
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ng_audit_free(a);
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", 1024 * 1024);
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_NODE_PRESSURE), 0);
        ng_audit_free(a);
        mi_set(&s->topo.nodes[1].meminfo, "MemFree", 100 * 1024);
        a = run(s, c);
        ck_assert_int_eq(find(a, NG_CODE_NODE_PRESSURE)->severity, NG_SEV_CRITICAL);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(orphan_segments)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_shm(s, 1, GiB, 0, 0);                      /* nobody attached */
        snap_shm(s, 2, GiB, 1, 01000);                  /* ipcrm'd, still attached */
        snap_shm(s, 3, MiB, 0, 0);                      /* too small to matter */
        snap_map_sysv(snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1"), 2, 0x7f0000000000, GiB, 4, NULL, 0);
        struct ng_config *c = conf("");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_ORPHAN_SEGMENT), 2);
        bool warn = false, info = false;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *f = &a->findings[i];
                if (f->code != NG_CODE_ORPHAN_SEGMENT)
                        continue;
                warn |= f->severity == NG_SEV_WARNING && strstr(f->segment, "shmid 1 ") != NULL;
                info |= f->severity == NG_SEV_INFO && strstr(f->segment, "shmid 2 ") != NULL;
        }
        ck_assert(warn && info);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(autonuma_and_numad)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        struct ng_config *c = conf("");
        s->knobs.numa_balancing = 1;
        snap_proc(s, 55, 1, "numad", "0-1", "0-1");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_AUTONUMA_ON), 1);
        ck_assert_uint_eq(count(a, NG_CODE_NUMAD_RUNNING), 1);
        ck_assert_int_eq(ng_audit_exit_status(a), 0);
        ng_audit_free(a);
        ng_snapshot_free(s);

        s = snap_new(1, 2, 1, 21, 16 * GiB / 1024);     /* one node: balancing is moot */
        s->knobs.numa_balancing = 1;
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_AUTONUMA_ON), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cpuset_drift)
{
        struct ng_node_pages pl[] = { { 0, 131072 }, { 1, 131072 } };
        struct ng_snapshot *s = one_instance(4, "0-3", "0-3", pl, 2);
        struct ng_config *c = conf(ORA "policy = interleave\nnodes = 0-1\n");
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_CPUSET_DRIFT);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "memory nodes 0-3") != NULL, "%s", f->message);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);

        s = one_instance(4, "0-1", "0-1", pl, 2);
        c = conf(ORA "policy = interleave\nnodes = 0-1\n");
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_CPUSET_DRIFT), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(discovery)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        snap_proc(s, 101, 1, "ora_dbw0_ORCL", "0-1", "0-1");
        snap_proc(s, 102, 1, "oracleORCL", "0-1", "0-1");
        snap_proc(s, 103, 1, "ora_pmon_TEST", "0-1", "0-1");
        struct ng_proc *pm = snap_proc(s, 200, 1, "postgres", "0-1", "0-1");
        free(pm->cmdline);
        pm->cmdline = strdup("/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main");
        snap_proc(s, 201, 200, "postgres", "0-1", "0-1");
        snap_proc(s, 202, 200, "postgres", "0-1", "0-1");
        snap_proc(s, 300, 1, "mariadbd", "0", "0");
        struct ng_config *c = conf("");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(a->n_instances, 4);
        const struct ng_instance *in = ng_audit_instance(a, "oracle:ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 3);
        ck_assert_int_eq(in->main_pid, 100);
        ck_assert_ptr_nonnull(ng_audit_instance(a, "oracle:TEST"));
        in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/15/main");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 3);
        ck_assert_str_eq(in->type, "postgresql");
        in = ng_audit_instance(a, "mysql:300");
        ck_assert_ptr_nonnull(in);
        ck_assert(ng_bitmap_test(&in->cpu_nodes, 0) && ng_bitmap_count(&in->cpu_nodes) == 1);
        ng_audit_free(a);
        ng_config_free(c);

        /* A configured instance holds its processes; the others are
         * discovered beside it (test-ns-clusters.c). */
        c = conf("[instance pg]\nmatch_comm = postgres\n");
        a = run(s, c);
        ck_assert_uint_eq(a->n_instances, 4);
        ck_assert_uint_eq(ng_audit_instance(a, "pg")->n_pids, 3);
        ck_assert_ptr_null(ng_audit_instance(a, "postgresql:/var/lib/postgresql/15/main"));
        ck_assert_ptr_nonnull(ng_audit_instance(a, "oracle:ORCL"));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(unclaimed_segment_is_audited)
{
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 16 * GiB / 1024);
        snap_shm(s, 9, GiB, 1, 0);
        struct ng_node_pages pl[] = { { 2, 262144 } };
        snap_map_sysv(snap_proc(s, 500, 1, "app", "0-3", "0-3"), 9, 0x7f0000000000, GiB, 4, pl, 1);
        struct ng_config *c = conf("");
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "unclaimed:shmid-9");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->origin, NG_INST_UNCLAIMED);
        const struct ng_finding *f = find(a, NG_CODE_CYCLOPS);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->instance, "unclaimed:shmid-9");
        ck_assert(ng_bitmap_test(&f->nodes, 2));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(libnuma_missing_only_for_oracle)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        snap_proc(s, 200, 1, "postgres", "0-1", "0-1");
        struct ng_config *c = conf("");
        s->libnuma_so = 0;
        struct ng_audit *a = run(s, c);
        const struct ng_finding *f = find(a, NG_CODE_LIBNUMA_MISSING);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->instance, "oracle:ORCL");
        ck_assert_uint_eq(count(a, NG_CODE_LIBNUMA_MISSING), 1);
        ng_audit_free(a);
        s->libnuma_so = 1;
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_LIBNUMA_MISSING), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(long_sids_asm_and_several_instances)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        /* SIDs of 10 and 8 characters: comm keeps 15, argv[0] the whole name. */
        snap_proc(s, 100, 1, "ora_pmon_FINPROD012", "0-1", "0-1");
        snap_proc(s, 101, 1, "ora_dbw0_FINPROD012", "0-1", "0-1");
        snap_proc(s, 102, 1, "oracleFINPROD012 (LOCAL=NO)", "0-1", "0-1");
        snap_proc(s, 110, 1, "ora_pmon_FINPROD0", "0-1", "0-1");
        snap_proc(s, 111, 1, "ora_lg00_FINPROD0", "0-1", "0-1");
        snap_proc(s, 120, 1, "ora_pmon_HR_PROD", "0-1", "0-1");
        snap_proc(s, 121, 1, "ora_ckpt_HR_PROD", "0-1", "0-1");
        snap_proc(s, 130, 1, "asm_pmon_+ASM", "0-1", "0-1");
        snap_proc(s, 131, 1, "asm_rbal_+ASM", "0-1", "0-1");
        snap_proc(s, 132, 1, "oracle+ASM (LOCAL=NO)", "0-1", "0-1");
        ck_assert_str_eq(s->procs[0]->stat.comm, "ora_pmon_FINPRO");
        ck_assert_str_eq(s->procs[0]->name, "ora_pmon_FINPROD012");
        ck_assert_str_eq(s->procs[2]->name, "oracleFINPROD012");
        struct ng_config *c = conf("");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(a->n_instances, 4);
        const struct ng_instance *in = ng_audit_instance(a, "oracle:FINPROD012");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 3);
        in = ng_audit_instance(a, "oracle:FINPROD0");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 2);
        in = ng_audit_instance(a, "oracle:HR_PROD");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 2);
        in = ng_audit_instance(a, "asm:+ASM");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 3);
        ng_audit_free(a);
        ng_config_free(c);
        /* A configured glob on the full name matches, and only its SID. */
        c = conf("[instance FIN]\nmatch_comm = ora_*_FINPROD012\n");
        a = run(s, c);
        in = ng_audit_instance(a, "FIN");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 2);
        ck_assert_uint_eq(count(a, NG_CODE_INSTANCE_NOT_FOUND), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(proc_name_rule)
{
        struct ng_proc pr;
        memset(&pr, 0, sizeof(pr));
        /* comm shorter than 15: never replaced (postgres rewrites argv[0]). */
        snprintf(pr.stat.comm, sizeof(pr.stat.comm), "postgres");
        pr.cmdline = (char *) "postgres: checkpointer";
        ng_proc_set_name(&pr);
        ck_assert_str_eq(pr.name, "postgres");
        /* A path in argv[0]: its last component. */
        snprintf(pr.stat.comm, sizeof(pr.stat.comm), "hdbindexserver_");
        pr.cmdline = (char *) "/usr/sap/HDB/exe/hdbindexserver_long -port 30003";
        ng_proc_set_name(&pr);
        ck_assert_str_eq(pr.name, "hdbindexserver_long");
        /* argv[0] that does not extend comm (prctl(PR_SET_NAME)): comm. */
        snprintf(pr.stat.comm, sizeof(pr.stat.comm), "ora_pmon_FINPRO");
        pr.cmdline = (char *) "something_else_entirely";
        ng_proc_set_name(&pr);
        ck_assert_str_eq(pr.name, "ora_pmon_FINPRO");
        pr.cmdline = NULL;
        ng_proc_set_name(&pr);
        ck_assert_str_eq(pr.name, "ora_pmon_FINPRO");
}
END_TEST

START_TEST(instance_not_found)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        struct ng_config *c = conf("[instance ORCL]\nmatch_comm = ora_*_ORCL\n"
                                   "[instance TYPO]\nmatch_comm = ora_*_ORCLX\n");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_INSTANCE_NOT_FOUND), 1);
        const struct ng_finding *f = find(a, NG_CODE_INSTANCE_NOT_FOUND);
        ck_assert_str_eq(f->instance, "TYPO");
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_msg(strstr(f->message, "match_comm=ora_*_ORCLX") != NULL, "%s", f->message);
        ck_assert_int_eq(ng_audit_exit_status(a), 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(audit_incomplete_without_permission)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_proc(s, 100, 1, "ora_pmon_ORCL", "0-1", "0-1");
        struct ng_config *c = conf("");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 0);
        ck_assert_int_eq(ng_audit_exit_status(a), 0);
        ng_audit_free(a);
        struct ng_proc *p = snap_proc(s, 200, 1, "postgres", "0-1", "0-1");
        p->status.uid = 116;
        p->maps_errno = EACCES;
        p = snap_proc(s, 201, 200, "postgres", "0-1", "0-1");
        p->status.uid = 116;
        p->maps_errno = EACCES;
        p = snap_proc(s, 300, 1, "sshd", "0-1", "0-1");
        p->maps_errno = EACCES;
        a = run(s, c);
        /* the discovered PostgreSQL's own, and the host's for sshd */
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 2);
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *f = &a->findings[i];
                if (f->code != NG_CODE_AUDIT_INCOMPLETE)
                        continue;
                ck_assert_int_eq(f->severity, NG_SEV_WARNING);
                if (f->instance[0])
                        ck_assert_msg(strstr(f->message, "2 processes of the instance, of uid 116 ") &&
                                      ng_audit_instance(a, f->instance) &&
                                      !strcmp(ng_audit_instance(a, f->instance)->type, "postgresql"), "%s", f->message);
                else
                        ck_assert_msg(strstr(f->message, "1 process of uid 0 ") && strstr(f->message, "300 (sshd)"),
                                      "%s", f->message);
        }
        ck_assert_int_eq(ng_audit_exit_status(a), 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(free_floor_fits_the_node)
{
        struct ng_node nd;
        memset(&nd, 0, sizeof(nd));
        /* Unknown MemTotal: the old fixed 1 GiB. */
        ck_assert_uint_eq(ng_node_free_floor(NG_FREE_FLOOR_AUTO, &nd), GiB);
        /* 458 MiB node (guest4-v2 node 0), watermark 1000 pages: 3 % wins. */
        nd.has_meminfo = true;
        nd.meminfo.n = 1;
        snprintf(nd.meminfo.f[0].key, sizeof(nd.meminfo.f[0].key), "MemTotal");
        nd.meminfo.f[0].value = 469504;
        nd.meminfo.f[0].kib = true;
        nd.high_wmark_pages = 1000;
        ck_assert_uint_eq(ng_node_free_floor(NG_FREE_FLOOR_AUTO, &nd), UINT64_C(469504) * 1024 / 100 * 3);
        /* A watermark above 3 % wins. */
        nd.high_wmark_pages = 10000;
        ck_assert_uint_eq(ng_node_free_floor(NG_FREE_FLOOR_AUTO, &nd), 10000 * 4096);
        /* 64 GiB node: capped at 1 GiB. */
        nd.meminfo.f[0].value = UINT64_C(64) << 20;
        ck_assert_uint_eq(ng_node_free_floor(NG_FREE_FLOOR_AUTO, &nd), GiB);
        /* A node of the fastest of several tiers keeps its promo
         * watermark when it is above the rest. */
        nd.meminfo.f[0].value = 469504;
        nd.promo_wmark_pages = 12000;
        ck_assert_uint_eq(ng_node_free_floor(NG_FREE_FLOOR_AUTO, &nd), 12000 * 4096);
        nd.promo_wmark_pages = 9000;
        ck_assert_uint_eq(ng_node_free_floor(NG_FREE_FLOOR_AUTO, &nd), 10000 * 4096);
        nd.meminfo.f[0].value = UINT64_C(64) << 20;
        /* An explicit value wins, whatever the node. */
        ck_assert_uint_eq(ng_node_free_floor(256 * MiB, &nd), 256 * MiB);
        ck_assert_uint_eq(ng_node_free_floor(0, &nd), 0);
}
END_TEST

/* A node's supply, typed: a meminfo without MemFree (or a garbage one,
 * which the parser drops) leaves free memory unknown, never 0, and raises
 * no NODE_PRESSURE; a pool whose counters could not be read is unknown. */
START_TEST(node_supply_is_typed)
{
        struct ng_node nd;
        memset(&nd, 0, sizeof(nd));
        nd.id = 1;
        struct ng_node_supply sup;
        ng_node_supply(&nd, NG_FREE_FLOOR_AUTO, 2048, &sup);
        ck_assert(!sup.total_bytes.known && !sup.free_bytes.known && !sup.avail_bytes.known);
        ck_assert(!sup.has_pool && !sup.headroom_pages.known);
        ck_assert_uint_eq(sup.floor_bytes, GiB);
        nd.has_meminfo = true;
        nd.meminfo.n = 1;
        snprintf(nd.meminfo.f[0].key, sizeof(nd.meminfo.f[0].key), "MemTotal");
        nd.meminfo.f[0].value = 515672;
        nd.meminfo.f[0].kib = true;
        nd.pools[0] = (struct ng_hugepool) { .page_kib = 2048, .unknown = true };
        nd.n_pools = 1;
        ng_node_supply(&nd, 16 * MiB, 2048, &sup);
        ck_assert(sup.total_bytes.known && sup.total_bytes.v == UINT64_C(515672) * 1024);
        ck_assert(!sup.free_bytes.known && !sup.avail_bytes.known && !sup.headroom_pages.known);
        ck_assert(sup.has_pool && !sup.nr_pages.known && !sup.free_pages.known);
        snprintf(nd.meminfo.f[1].key, sizeof(nd.meminfo.f[1].key), "MemFree");
        nd.meminfo.f[1].value = 20 * 1024;
        nd.meminfo.f[1].kib = true;
        nd.meminfo.n = 2;
        nd.pools[0] = (struct ng_hugepool) { .page_kib = 2048, .nr_pages = 8, .free_pages = 9 };
        ng_node_supply(&nd, 16 * MiB, 2048, &sup);
        ck_assert(sup.free_bytes.known && sup.free_bytes.v == 20 * MiB);
        ck_assert(sup.avail_bytes.known && sup.avail_bytes.v == 4 * MiB);
        ck_assert(sup.headroom_pages.known && sup.headroom_pages.v == 2);
        ck_assert(sup.nr_pages.known && sup.nr_pages.v == 8 && sup.free_pages.v == 8);
}
END_TEST

START_TEST(memfree_missing_is_no_pressure)
{
        /* Node 1's meminfo holds MemTotal and no MemFree line: unknown,
         * where it used to read 0 and raise a critical NODE_PRESSURE. */
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 515672);
        struct ng_meminfo *m = &s->topo.nodes[1].meminfo;
        memset(m, 0, sizeof(*m));
        mi_set(m, "MemTotal", 515672);
        struct ng_config *c = conf("");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_NODE_PRESSURE), 0);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* which codes a missing kernel feature keeps from being raised */
START_TEST(codes_name_their_kernel_feature)
{
        ck_assert_int_eq(ng_code_kernel_feature(NG_CODE_SLOW_TIER), NG_FEATURE_MEMORY_TIERS);
        ck_assert(ng_code_needs_feature(NG_CODE_SLOW_TIER));
        ck_assert_int_eq(ng_code_kernel_feature(NG_CODE_TIERS_IGNORE_HMAT), NG_FEATURE_MEMORY_TIERS);
        ck_assert_int_eq(ng_code_kernel_feature(NG_CODE_SHMEM_DEMOTABLE), NG_FEATURE_DEMOTION);
        ck_assert_int_eq(ng_code_kernel_feature(NG_CODE_HUGEPAGE_NOT_PERMITTED), NG_FEATURE_HUGETLB_SHM_GROUP_ONLY);
        ck_assert(!ng_code_needs_feature(NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ck_assert_int_eq(ng_code_kernel_feature(NG_CODE_CYCLOPS), -1);
        ck_assert(!ng_code_needs_feature(NG_CODE_CYCLOPS));
        ck_assert_int_eq(ng_code_kernel_feature(NG_CODE_MAX_), -1);
}
END_TEST

/* Nodes whose MemTotal add up to a third of /proc/meminfo's (a balloon
 * driver's guest): said to differ; within 2 % they agree. */
START_TEST(memory_split)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 4 * GiB / 1024);
        struct ng_known_u64 nodes, hostmem;
        ck_assert(!ng_host_memory_split(s, &nodes, &hostmem));
        ck_assert(nodes.known && hostmem.known);
        ck_assert_uint_eq(nodes.v, 8 * GiB);
        mi_set(&s->meminfo, "MemTotal", 24 * GiB / 1024);
        ck_assert(ng_host_memory_split(s, &nodes, &hostmem));
        ck_assert_uint_eq(nodes.v, 8 * GiB);
        ck_assert_uint_eq(hostmem.v, 24 * GiB);
        /* 2 % apart of the larger: still one count; a page more differs */
        uint64_t host_kib = 8 * GiB / 1024 * 100 / 98;
        mi_set(&s->meminfo, "MemTotal", host_kib);
        ck_assert(!ng_host_memory_split(s, &nodes, &hostmem));
        mi_set(&s->meminfo, "MemTotal", host_kib + 8);
        ck_assert(ng_host_memory_split(s, &nodes, &hostmem));
        /* the nodes larger than the host: differ too */
        mi_set(&s->meminfo, "MemTotal", 2 * GiB / 1024);
        ck_assert(ng_host_memory_split(s, &nodes, &hostmem));
        /* a node's MemTotal unknown: no sum, nothing said */
        s->topo.nodes[1].has_meminfo = false;
        ck_assert(!ng_host_memory_split(s, &nodes, &hostmem));
        ck_assert(!nodes.known);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(codes_are_stable)
{
        static const char *const names[] = { "CYCLOPS", "REMOTE_MEMORY", "HUGEPAGE_FALLBACK", "HUGEPAGE_SHORTFALL",
                                             "HUGEPAGE_NODE_SHORTFALL", "HUGEPAGE_IDLE", "PAGETABLE_BLOAT",
                                             "NODE_PRESSURE", "ORPHAN_SEGMENT", "CPUSET_DRIFT", "AUTONUMA_ON",
                                             "NUMAD_RUNNING", "LIBNUMA_MISSING", "INSTANCE_NOT_FOUND",
                                             "AUDIT_INCOMPLETE", "CPUSET_NOT_PERSISTENT",
                                             "HUGEPAGE_NOT_PERSISTENT", "HIDDEN_HOP", "SLOW_TIER",
                                             "SHMEM_DEMOTABLE", "ZONE_RECLAIM_ON", "HUGEPAGE_OVERCOMMIT",
                                             "THP_NOT_AS_VENDOR", "HUGEPAGE_NOT_PERMITTED",
                                             "HUGEPAGE_SIGBUS_RISK", "HUGEPAGE_NEXT_START", "TIERS_IGNORE_HMAT",
                                             "SEGMENT_POLICY_DRIFT", "POLICY_NOT_PERSISTENT",
                                             "INTERLEAVE_WEIGHTS", "OUT_OF_REACH", "INSTANCE_AMBIGUOUS" };
        ck_assert_int_eq(NG_CODE_MAX_, 32);
        for (int i = 0; i < NG_CODE_MAX_; i++) {
                enum ng_code c;
                ck_assert_str_eq(ng_code_name((enum ng_code) i), names[i]);
                ck_assert_int_eq(ng_code_from_name(names[i], &c), 0);
                ck_assert_int_eq(c, i);
        }
        enum ng_code c;
        ck_assert_int_eq(ng_code_from_name("CYCLOPZ", &c), -EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("audit");
        TCase *tc = tcase_create("rules");
        tcase_add_test(tc, severity_from_table);
        tcase_add_test(tc, cyclops_raised_at_fraction);
        tcase_add_test(tc, cyclops_not_raised_below_fraction);
        tcase_add_test(tc, segment_policy_drift);
        tcase_add_test(tc, sysv_sample_keyed_by_device);
        tcase_add_test(tc, policy_not_persistent);
        tcase_add_test(tc, interleave_weights);
        tcase_add_test(tc, out_of_reach);
        tcase_add_test(tc, cyclops_not_raised_for_single_node_cpus_or_bind);
        tcase_add_test(tc, cyclops_needs_min_segment_size);
        tcase_add_test(tc, remote_memory_bound_elsewhere_is_critical);
        tcase_add_test(tc, remote_memory_sits_on_boundary);
        tcase_add_test(tc, remote_memory_allowed_on_cpu_nodes_but_not_memory_only);
        tcase_add_test(tc, hugepage_fallback_one_page_short);
        tcase_add_test(tc, hugepage_fallback_not_without_pool_or_in_hugepages);
        tcase_add_test(tc, hugepage_idle_only_when_unreserved);
        tcase_add_test(tc, hugepage_shortfall_global_and_per_node);
        tcase_add_test(tc, pagetable_bloat_boundary);
        tcase_add_test(tc, node_pressure_floor);
        tcase_add_test(tc, node_pressure_auto_floor);
        tcase_add_test(tc, orphan_segments);
        tcase_add_test(tc, autonuma_and_numad);
        tcase_add_test(tc, cpuset_drift);
        tcase_add_test(tc, discovery);
        tcase_add_test(tc, unclaimed_segment_is_audited);
        tcase_add_test(tc, libnuma_missing_only_for_oracle);
        tcase_add_test(tc, long_sids_asm_and_several_instances);
        tcase_add_test(tc, proc_name_rule);
        tcase_add_test(tc, instance_not_found);
        tcase_add_test(tc, audit_incomplete_without_permission);
        tcase_add_test(tc, free_floor_fits_the_node);
        tcase_add_test(tc, node_supply_is_typed);
        tcase_add_test(tc, memfree_missing_is_no_pressure);
        tcase_add_test(tc, memory_split);
        tcase_add_test(tc, codes_are_stable);
        tcase_add_test(tc, codes_name_their_kernel_feature);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

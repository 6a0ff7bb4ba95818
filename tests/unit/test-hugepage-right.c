/* The right to create a SysV hugepage segment (HUGEPAGE_NOT_PERMITTED):
 * the status fields it reads (Gid, Groups, CapEff) and the memlock limit
 * parsed from real kernel text (tests/fixtures/text), and the rule on
 * literal snapshots whose processes carry those credentials. */

#include <limits.h>

#include "snapshot-builder.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "parse.h"

#define FX "tests/fixtures/text/"

/* ---- parsers ---- */

static void parse_status(const char *file, struct ng_pid_status *st)
{
        char *buf = ng_test_read(file, NULL);
        memset(st, 0, sizeof(*st));
        ck_assert_int_eq(ng_parse_pid_status(buf, st), 0);
        free(buf);
}

START_TEST(status_credentials)
{
        struct ng_pid_status st;
        /* PostgreSQL 15's postmaster in the guest: user postgres (101),
         * group postgres (104), also in ssl-cert (103); no capability. */
        parse_status(FX "guest4-pg15-sysv-status", &st);
        ck_assert(st.has_gid && st.has_groups && st.has_cap_eff);
        ck_assert_uint_eq(st.uid, 101);
        ck_assert_uint_eq(st.gid, 104);
        ck_assert_uint_eq(st.egid, 104);
        ck_assert_uint_eq(st.fsgid, 104);
        ck_assert_uint_eq(st.n_groups, 2);
        ck_assert_uint_eq(st.groups[0], 103);
        ck_assert_uint_eq(st.groups[1], 104);
        ck_assert(!st.groups_more);
        ck_assert(st.cap_eff == 0);
        ng_pid_status_done(&st);
        /* root on the build host: no supplementary group ("Groups:\t \n"),
         * every capability but CAP_SYS_RESOURCE (bit 24), CAP_IPC_LOCK
         * among them. */
        parse_status(FX "host-status", &st);
        ck_assert(st.has_groups && st.n_groups == 0);
        ck_assert(st.cap_eff == UINT64_C(0x000001fffeffffff));
        ck_assert(st.cap_eff & (UINT64_C(1) << NG_CAP_IPC_LOCK));
        ng_pid_status_done(&st);
}
END_TEST

START_TEST(status_credentials_edge)
{
        struct ng_pid_status st = {0};
        /* Groups past what is kept; a Gid line short of its four ids; a
         * CapEff that is no hex number. */
        char many[512] = "Name:\tx\nPid:\t1\nGid:\t1\t2\t3\nCapEff:\t00zz\nGroups:\t";
        for (int i = 0; i < NG_STATUS_MAX_GROUPS + 3; i++)
                snprintf(many + strlen(many), sizeof(many) - strlen(many), "%d ", 1000 + i);
        strcat(many, "\n");
        ck_assert_int_eq(ng_parse_pid_status(many, &st), 0);
        ck_assert(!st.has_gid && !st.has_cap_eff);
        ck_assert(st.has_groups && st.groups_more);
        ck_assert_uint_eq(st.n_groups, NG_STATUS_MAX_GROUPS);
        ck_assert_uint_eq(st.groups[NG_STATUS_MAX_GROUPS - 1], 1000 + NG_STATUS_MAX_GROUPS - 1);
        ng_pid_status_done(&st);
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\nPid:\t1\nGroups:\t5 x\n", &st), 0);
        ck_assert(!st.has_groups);
        ng_pid_status_done(&st);
}
END_TEST

START_TEST(limits)
{
        char *buf = ng_test_read(FX "host-limits", NULL);
        uint64_t soft = 1, hard = 1;
        ck_assert_int_eq(ng_parse_pid_limit(buf, "Max locked memory", &soft, &hard), 0);
        ck_assert(soft == 8388608 && hard == 8388608);
        ck_assert_int_eq(ng_parse_pid_limit(buf, "Max stack size", &soft, &hard), 0);
        ck_assert(soft == 8388608 && hard == UINT64_MAX);
        ck_assert_int_eq(ng_parse_pid_limit(buf, "Max cpu time", &soft, &hard), 0);
        ck_assert(soft == UINT64_MAX && hard == UINT64_MAX);
        /* No units column. */
        ck_assert_int_eq(ng_parse_pid_limit(buf, "Max nice priority", &soft, &hard), 0);
        ck_assert(soft == 0 && hard == 0);
        /* A prefix of a name is no name. */
        ck_assert_int_eq(ng_parse_pid_limit(buf, "Max locked", &soft, &hard), -ENOENT);
        ck_assert_int_eq(ng_parse_pid_limit(buf, "Max things", &soft, &hard), -ENOENT);
        free(buf);
        ck_assert_int_eq(ng_parse_pid_limit("Max locked memory         12x   5  bytes\n", "Max locked memory", &soft,
                                            &hard), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_limit("Max locked memory         unlimitedx 5\n", "Max locked memory", &soft,
                                            &hard), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_limit("", "Max locked memory", &soft, &hard), -ENOENT);
}
END_TEST

/* ---- HUGEPAGE_NOT_PERMITTED ---- */

static const struct ng_finding *find(const struct ng_audit *a, enum ng_code code)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == code)
                        return &a->findings[i];
        return NULL;
}

static struct ng_audit *run(const struct ng_snapshot *s, const char *conf)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string(conf, "t.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        ng_config_free(c);
        return a;
}

#define DISCOVER "[global]\nmin_segment_size = 1M\n"

/* Oracle ORCL: pmon (pid 100) and dbw0 (101) map a 1 GiB SysV SGA in
 * page_kib pages on node 0, with the credentials of the status file and
 * the memlock limit of the limits file (NULL: not read) on its pmon. A
 * 2 MiB pool of 512 pages a node; a 6.1 kernel. */
static struct ng_snapshot *oracle(uint64_t page_kib, const char *status_file, const char *limits_file)
{
        struct ng_snapshot *s = snap_new(2, 2, 2, 21, 4u << 20);
        s->knobs.kernel_major = 6;
        s->knobs.kernel_minor = 1;
        s->knobs.hugetlb_shm_group = 0;
        snap_pool(s, 2048, 512, page_kib > 4 ? 0 : 512, 0);
        struct ng_node_pages pl = { 0, (1u << 20) / page_kib };
        snap_shm(s, 7, 1ull << 30, 2, 0);
        for (int i = 0; i < 2; i++) {
                struct ng_proc *p = snap_proc(s, 100 + i, 1, i ? "ora_dbw0_ORCL" : "ora_pmon_ORCL", "0-3", "0-1");
                snap_map_sysv(p, 7, 0x7f0000000000, 1ull << 30, page_kib, &pl, i == 0);
                p->stat.processor = 0;
                p->cpu_weight_ticks = 100;
                struct ng_pid_status st;
                parse_status(status_file, &st);
                p->status.has_gid = st.has_gid;
                p->status.gid = st.gid;
                p->status.fsgid = st.fsgid;
                p->status.uid = st.uid;
                p->status.euid = st.euid;
                /* its segment, made by it: its owner's (only the owner's
                 * and root's processes speak for a segment) */
                s->shm[0].uid = s->shm[0].cuid = st.uid;
                p->status.has_groups = st.has_groups;
                memcpy(p->status.groups, st.groups, sizeof(st.groups));
                p->status.n_groups = st.n_groups;
                p->status.has_cap_eff = st.has_cap_eff;
                p->status.cap_eff = st.cap_eff;
                ng_pid_status_done(&st);
                if (limits_file && i == 0) {
                        char *buf = ng_test_read(limits_file, NULL);
                        uint64_t hard;
                        p->has_memlock = ng_parse_pid_limit(buf, "Max locked memory", &p->memlock_soft_bytes,
                                                            &hard) == 0;
                        free(buf);
                }
        }
        return s;
}

static void set_group(struct ng_snapshot *s, int64_t g)
{
        s->knobs.hugetlb_shm_group = g;
}

START_TEST(no_right_no_hugepages)
{
        /* The postgres user's credentials (uid 101, gid 104, groups 103
         * and 104, no capability) and vm.hugetlb_shm_group = 0. */
        struct ng_snapshot *s = oracle(4, FX "guest4-pg15-sysv-status", NULL);
        struct ng_audit *a = run(s, DISCOVER);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert_str_eq(f->instance, "oracle:ORCL");
        ck_assert(f->value == (double) (1ull << 30));
        ck_assert_str_eq(f->message, "its main process (pid 100: uid 101, gid 104, groups 103,104) has neither "
                         "CAP_IPC_LOCK nor the group vm.hugetlb_shm_group = 0: since Linux 5.16 the kernel refuses "
                         "it SysV SHM_HUGETLB segments whatever its memlock limit, and the 1 GiB of its SysV shared "
                         "memory sits in 4K pages");
        ck_assert(strstr(f->advice, "vm.hugetlb_shm_group to the gid of the oinstall group"));
        ck_assert_str_eq(ng_code_name(f->code), "HUGEPAGE_NOT_PERMITTED");
        ng_audit_free(a);

        /* The group as the fsgid, then as a supplementary group: the right. */
        set_group(s, 104);
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        set_group(s, 103);
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        /* Unknown group (no such file): nothing said. */
        set_group(s, -1);
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        /* No pool and nothing asked of hugepages: nobody wants them. */
        set_group(s, 0);
        s->pools[0].nr_pages = 0;
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        /* ... unless the instance requires them; not when it turns them off. */
        a = run(s, "[global]\nmin_segment_size = 1M\n[instance ORCL]\nmatch_comm = ora_*\nhugepages = required\n");
        f = find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->instance, "ORCL");
        /* A configured instance is no engine's: the generic fix. */
        ck_assert(strstr(f->advice, "AmbientCapabilities=CAP_IPC_LOCK"));
        ng_audit_free(a);
        a = run(s, "[global]\nmin_segment_size = 1M\n[instance ORCL]\nmatch_comm = ora_*\nhugepages = off\n");
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(capability_and_hugepages_now)
{
        /* root's status on the build host: CAP_IPC_LOCK, whatever the group. */
        struct ng_snapshot *s = oracle(2048, FX "host-status", NULL);
        set_group(s, 5);
        struct ng_audit *a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        ng_snapshot_free(s);
        /* In hugepages now, no right: the next start cannot have them. */
        s = oracle(2048, FX "guest4-pg15-sysv-status", NULL);
        a = run(s, DISCOVER);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "the 1 GiB of its SysV shared memory are in hugepages now but cannot be "
                                         "created there again"), "%s", f->message);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(memlock)
{
        /* The right through its group, but Oracle's memlock (8 MiB, the
         * build host's limit) below its 1 GiB SGA. */
        struct ng_snapshot *s = oracle(4, FX "guest4-pg15-sysv-status", FX "host-limits");
        set_group(s, 104);
        struct ng_audit *a = run(s, DISCOVER);
        const struct ng_finding *f = find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->message, "its memlock limit (Max locked memory of pid 100) is 8 MiB, below the 1 GiB of "
                         "its SGA: oracle locks in large pages only what the limit covers");
        ng_audit_free(a);
        s->procs[0]->memlock_soft_bytes = UINT64_MAX;
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);

        /* Before Linux 5.16 the memlock limit was a right of its own. */
        set_group(s, 0);
        s->knobs.kernel_major = 5;
        s->knobs.kernel_minor = 14;
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        s->procs[0]->memlock_soft_bytes = 8388608;
        a = run(s, DISCOVER);
        f = find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strstr(f->message, "nor the group vm.hugetlb_shm_group = 0 and a memlock limit of 8 MiB: the "
                                         "kernel refuses it SysV SHM_HUGETLB segments"), "%s", f->message);
        ck_assert_msg(strstr(f->message, "; its memlock limit (Max locked memory of pid 100) is 8 MiB"), "%s",
                      f->message);
        ng_audit_free(a);
        /* ... and without its limit read, unknown. */
        s->knobs.kernel_major = 4;
        s->knobs.kernel_minor = 18;
        s->procs[0]->has_memlock = false;
        a = run(s, DISCOVER);
        ck_assert_ptr_null(find(a, NG_CODE_HUGEPAGE_NOT_PERMITTED));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("hugepage-right");
        TCase *tc = tcase_create("parse");
        tcase_add_test(tc, status_credentials);
        tcase_add_test(tc, status_credentials_edge);
        tcase_add_test(tc, limits);
        suite_add_tcase(s, tc);
        tc = tcase_create("rule");
        tcase_add_test(tc, no_right_no_hugepages);
        tcase_add_test(tc, capability_and_hugepages_now);
        tcase_add_test(tc, memlock);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

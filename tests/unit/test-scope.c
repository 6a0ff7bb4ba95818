/* What an audit of one instance considers (ng_finding_bears_on(),
 * numaguardctl audit --instance): its own findings and the host's that
 * bear on it, never one about other processes; the refused processes of
 * an instance as its own AUDIT_INCOMPLETE; unreadable_ok's acknowledged
 * processes, counted and never a finding. */

#include "snapshot-builder.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "util.h"

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

static size_t count(const struct ng_audit *a, enum ng_code code)
{
        size_t n = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                n += a->findings[i].code == code;
        return n;
}

/* The AUDIT_INCOMPLETE of instance ("" the host's), or NULL. */
static const struct ng_finding *incomplete(const struct ng_audit *a, const char *instance)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_AUDIT_INCOMPLETE && !strcmp(a->findings[i].instance, instance))
                        return &a->findings[i];
        return NULL;
}

/* Two nodes; ORCL (pids 100, 101, CPUs and memory on node 0) attached to a
 * 1 GiB SysV segment in 4 KiB pages, all on node 0; pid 1, and whatever
 * the test adds, in pid order. */
static struct ng_snapshot *host(void)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        struct ng_node_pages pl[] = { { 0, GiB / 4096 } };
        snap_shm(s, 7, GiB, 2, 0);
        snap_proc(s, 1, 0, "process_api", "0-1", "0-1");
        struct ng_proc *p = snap_proc(s, 100, 1, "ora_pmon_ORCL", "0", "0");
        snap_map_sysv(p, 7, 0x7f0000000000, GiB, 4, pl, 1);
        p = snap_proc(s, 101, 1, "ora_dbw0_ORCL", "0", "0");
        snap_map_sysv(p, 7, 0x7f0000000000, GiB, 4, NULL, 0);
        return s;
}

#define ORA "[instance ORCL]\nmatch_comm = ora_*_ORCL\n"

START_TEST(refused_per_instance)
{
        struct ng_snapshot *s = host();
        snap_proc(s, 102, 1, "ora_lgwr_ORCL", "0", "0")->maps_errno = EACCES;
        s->procs[0]->maps_errno = EACCES;       /* pid 1 */
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert(in->shared_unknown);
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 2);
        const struct ng_finding *own = incomplete(a, "ORCL"), *other = incomplete(a, "");
        ck_assert_ptr_nonnull(own);
        ck_assert_ptr_nonnull(other);
        ck_assert_msg(strstr(own->message, "of the instance") && strstr(own->message, "pid 102 (ora_lgwr_ORCL)") &&
                      !strstr(own->message, "process_api"), "%s", own->message);
        ck_assert_msg(strstr(other->message, "pid 1 (process_api)") && !strstr(other->message, "102"), "%s",
                      other->message);
        ck_assert(!own->other_processes);
        ck_assert(other->other_processes);
        /* the instance's own counts for it, another process's does not */
        ck_assert(ng_finding_bears_on(a, own, in));
        ck_assert(!ng_finding_bears_on(a, other, in));
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* A file that could not be used: a process's is the AUDIT_INCOMPLETE of
 * its instance, or about other processes; a host file's bears on every
 * instance. */
START_TEST(problems_by_process)
{
        struct ng_snapshot *s = host();
        snap_proc(s, 500, 1, "sshd", "0-1", "0-1");
        static const struct { const char *path; pid_t pid; } pb[] = {
                { "/proc/101/numa_maps", 101 },
                { "/proc/500/numa_maps", 500 },
                { "/sys/devices/system/node/node1/meminfo", 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(pb); i++) {
                struct ng_problem *p = &s->problems[s->n_problems++];
                snprintf(p->path, sizeof(p->path), "%s", pb[i].path);
                snprintf(p->reason, sizeof(p->reason), "no line parses");
                p->pid = pb[i].pid;
        }
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "ORCL");
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 3);
        size_t own = 0, other = 0, host_file = 0;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *f = &a->findings[i];
                if (f->code != NG_CODE_AUDIT_INCOMPLETE)
                        continue;
                bool bears = ng_finding_bears_on(a, f, in);
                if (strstr(f->message, "/proc/101/")) {
                        ck_assert_str_eq(f->instance, "ORCL");
                        own += bears;
                } else if (strstr(f->message, "/proc/500/")) {
                        ck_assert_str_eq(f->instance, "");
                        ck_assert(f->other_processes);
                        other += !bears;
                } else {
                        ck_assert_str_eq(f->instance, "");
                        ck_assert(!f->other_processes);
                        host_file += bears;
                }
        }
        ck_assert_uint_eq(own, 1);
        ck_assert_uint_eq(other, 1);
        ck_assert_uint_eq(host_file, 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* The host's findings, code by code, against an instance on node 0 with a
 * 4 KiB segment and no hugetlb memory. */
START_TEST(host_findings_that_bear)
{
        struct ng_snapshot *s = host();
        struct ng_config *c = conf(ORA);
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_segs, 1);
        char label[128];
        ng_segment_label(&a->segments[in->segs[0]], label, sizeof(label));
        static const struct {
                enum ng_code code;
                const char *instance, *segment, *nodes;
                bool other_processes, bears;
        } cases[] = {
                { NG_CODE_CYCLOPS, "ORCL", "", "0", false, true },
                { NG_CODE_CYCLOPS, "PG", "", "0", false, false },       /* another instance's */
                { NG_CODE_NODE_PRESSURE, "", "", "0", false, true },    /* its node */
                { NG_CODE_NODE_PRESSURE, "", "", "1", false, false },
                { NG_CODE_HIDDEN_HOP, "", "", "0-1", false, true },
                { NG_CODE_TIERS_IGNORE_HMAT, "", "", "1", false, false },
                { NG_CODE_AUTONUMA_ON, "", "", "", false, true },       /* it has 4 KiB shared pages */
                { NG_CODE_ZONE_RECLAIM_ON, "", "", "", false, true },
                { NG_CODE_NUMAD_RUNNING, "", "", "", false, true },
                { NG_CODE_PAGETABLE_BLOAT, "", "", "", false, false },  /* the host's page tables */
                { NG_CODE_HUGEPAGE_IDLE, "", "", "", false, false },
                { NG_CODE_HUGEPAGE_NOT_PERSISTENT, "", "", "0", false, false },        /* no hugetlb memory */
                { NG_CODE_HUGEPAGE_OVERCOMMIT, "", "", "0", false, false },
                { NG_CODE_ORPHAN_SEGMENT, "", "shmid 9 (key 0x00001009)", "", false, false },
                { NG_CODE_ORPHAN_SEGMENT, "", NULL, "", false, true },  /* its own segment, removed */
                { NG_CODE_AUDIT_INCOMPLETE, "", "", "", false, true },  /* a host file */
                { NG_CODE_AUDIT_INCOMPLETE, "", "", "", true, false },  /* other processes */
                { NG_CODE_AUDIT_INCOMPLETE, "", NULL, "1", false, true },       /* its segment off the topology */
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct ng_finding f = { .code = cases[i].code, .other_processes = cases[i].other_processes };
                snprintf(f.instance, sizeof(f.instance), "%s", cases[i].instance);
                snprintf(f.segment, sizeof(f.segment), "%s", cases[i].segment ? cases[i].segment : label);
                if (cases[i].nodes[0])
                        bm(&f.nodes, cases[i].nodes);
                ck_assert_msg(ng_finding_bears_on(a, &f, in) == cases[i].bears, "case %zu (%s): %d", i,
                              ng_code_name(cases[i].code), !cases[i].bears);
        }
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* unreadable_ok: process 1 by init, a cgroup and what is below it, never
 * a cgroup that only starts with the same characters, never a process of
 * an instance; acknowledged processes are counted, not AUDIT_INCOMPLETE. */
START_TEST(acknowledged_unreadable)
{
        struct ng_snapshot *s = host();
        s->procs[0]->maps_errno = EACCES;
        struct ng_proc *p = snap_proc(s, 102, 1, "ora_lgwr_ORCL", "0", "0");
        p->maps_errno = EACCES;
        snap_proc_cgroup(p, "/system.slice/agent.service");
        p = snap_proc(s, 400, 1, "agent", "0-1", "0-1");
        p->maps_errno = EACCES;
        p->status.uid = 0;
        snap_proc_cgroup(p, "/system.slice/agent.service/worker");
        p = snap_proc(s, 401, 1, "agent", "0-1", "0-1");
        p->maps_errno = EACCES;
        p->status.uid = 1000;
        snap_proc_cgroup(p, "/system.slice/agent.service2");
        struct ng_config *c = conf("[global]\nunreadable_ok = init, /system.slice/agent.service\n" ORA);
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(a->n_acknowledged, 2);
        ck_assert_int_eq(a->acknowledged[0].pid, 1);
        ck_assert_str_eq(a->acknowledged[0].by, "init");
        ck_assert_str_eq(a->acknowledged[0].name, "process_api");
        ck_assert_int_eq(a->acknowledged[1].pid, 400);
        ck_assert_str_eq(a->acknowledged[1].by, "/system.slice/agent.service");
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 2);
        const struct ng_finding *own = incomplete(a, "ORCL"), *other = incomplete(a, "");
        ck_assert_ptr_nonnull(own);
        ck_assert_msg(strstr(own->message, "pid 102 (ora_lgwr_ORCL)"), "%s", own->message);
        ck_assert_ptr_nonnull(other);
        ck_assert_msg(strstr(other->message, "1 process of uid 1000") && strstr(other->message, "pid 401 (agent)"),
                      "%s", other->message);
        ng_audit_free(a);
        /* Without 102 and 401 refused nothing is incomplete: exit 0, two
         * acknowledged. */
        s->procs[3]->maps_errno = s->procs[5]->maps_errno = 0;
        a = run(s, c);
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 0);
        ck_assert_uint_eq(a->n_acknowledged, 2);
        ck_assert_int_eq(ng_audit_exit_status(a), 0);
        ng_audit_free(a);
        ng_config_free(c);
        /* Without the key both are the host's AUDIT_INCOMPLETE again. */
        c = conf(ORA);
        a = run(s, c);
        ck_assert_uint_eq(a->n_acknowledged, 0);
        ck_assert_uint_eq(count(a, NG_CODE_AUDIT_INCOMPLETE), 1);
        other = incomplete(a, "");
        ck_assert_ptr_nonnull(other);
        ck_assert_msg(strstr(other->message, "2 processes"), "%s", other->message);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("scope");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, refused_per_instance);
        tcase_add_test(tc, problems_by_process);
        tcase_add_test(tc, host_findings_that_bear);
        tcase_add_test(tc, acknowledged_unreadable);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

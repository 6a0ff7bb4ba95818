/* Unit tests for lib/2-analyze/refusal.c: why numaguard could not read a
 * process's maps, decided from /proc/PID/status texts captured on a real
 * host (tests/fixtures/text/refusal/, README there), and the
 * AUDIT_INCOMPLETE findings that name those processes. */

#include <errno.h>
#include <json-c/json.h>

#include "ng-audit.h"
#include "parse.h"
#include "refusal.h"
#include "ng-report.h"
#include "snapshot-builder.h"

#define FX "tests/fixtures/text/refusal/"
#define GiB (UINT64_C(1) << 30)
#define INITIAL_MAP "         0          0 4294967295"

static struct ng_pid_status status_of(const char *file)
{
        char *buf = ng_test_read(file, NULL);
        struct ng_pid_status st;
        ck_assert_int_eq(ng_parse_pid_status(buf, &st), 0);
        free(buf);
        return st;
}

/* numaguard's own credentials as ng_collect_own_creds() reads them. */
static struct ng_self_creds self_of(const char *file, const char *uid_map, const char *lsm)
{
        struct ng_pid_status st = status_of(file);
        struct ng_self_creds c = { .known = true, .euid = st.euid, .has_cap_eff = st.has_cap_eff,
                                   .cap_eff = st.cap_eff };
        snprintf(c.uid_map, sizeof(c.uid_map), "%s", uid_map);
        snprintf(c.lsm, sizeof(c.lsm), "%s", lsm);
        ng_pid_status_done(&st);
        return c;
}

static struct ng_proc *target_of(const char *file, int userns_other, const char *label)
{
        struct ng_proc *pr = xcalloc(1, sizeof(*pr));
        pr->status = status_of(file);
        pr->maps_errno = EACCES;
        pr->userns_other = userns_other;
        snprintf(pr->lsm_label, sizeof(pr->lsm_label), "%s", label);
        return pr;
}

static void explain(enum ng_refusal k, const struct ng_self_creds *self, uint64_t missing, const char *label,
                    char *reason, char *advice)
{
        ng_refusal_explain(k, self, missing, label, reason, 400, advice, 256);
}

START_TEST(test_capabilities_numaguard_lacks)
{
        /* this host: root with CAP_SYS_PTRACE, PID 1 holds cap_sys_resource too */
        struct ng_self_creds self = self_of(FX "root-self-status", INITIAL_MAP, "");
        struct ng_proc *pid1 = target_of(FX "pid1-status", 0, "");
        struct ng_refusal_why w = ng_refusal_decide(&self, pid1);
        ck_assert_int_eq(w.kind, NG_REFUSAL_CAPS);
        ck_assert_uint_eq(w.missing_caps, UINT64_C(1) << 24);
        char reason[400], advice[256];
        explain(w.kind, &self, w.missing_caps, "", reason, advice);
        ck_assert_msg(strstr(reason, "capabilities numaguard lacks (cap_sys_resource)") &&
                      strstr(reason, "securityfs is not mounted"), "%s", reason);
        ck_assert_msg(!strstr(advice, "run as root") && strstr(advice, "cap_sys_resource"), "%s", advice);
        /* with the module list known, it is named */
        snprintf(self.lsm, sizeof(self.lsm), "lockdown,capability,landlock,bpf");
        explain(w.kind, &self, w.missing_caps, "", reason, advice);
        ck_assert_msg(strstr(reason, "active: lockdown,capability,landlock,bpf"), "%s", reason);
        ng_pid_status_done(&pid1->status);
        free(pid1);
}
END_TEST

START_TEST(test_not_root)
{
        struct ng_self_creds self = self_of(FX "nobody-self-status", INITIAL_MAP, "");
        struct ng_proc *pid1 = target_of(FX "pid1-status", -1, "");
        struct ng_refusal_why w = ng_refusal_decide(&self, pid1);
        ck_assert_int_eq(w.kind, NG_REFUSAL_NOT_ROOT);
        char reason[400], advice[256];
        explain(w.kind, &self, w.missing_caps, "", reason, advice);
        ck_assert_msg(strstr(reason, "uid 65534, not root"), "%s", reason);
        ck_assert_msg(strstr(advice, "run as root"), "%s", advice);
        /* its own processes are not refused for want of root */
        pid1->status.uid = pid1->status.euid = 65534;
        pid1->status.cap_prm = 0;
        ck_assert_int_ne(ng_refusal_decide(&self, pid1).kind, NG_REFUSAL_NOT_ROOT);
        ng_pid_status_done(&pid1->status);
        free(pid1);
}
END_TEST

START_TEST(test_root_without_ptrace)
{
        struct ng_self_creds self = self_of(FX "root-noptrace-self-status", INITIAL_MAP, "");
        struct ng_proc *pid1 = target_of(FX "pid1-status", 0, "");
        struct ng_refusal_why w = ng_refusal_decide(&self, pid1);
        ck_assert_int_eq(w.kind, NG_REFUSAL_NO_PTRACE);
        ck_assert(w.missing_caps & (UINT64_C(1) << NG_CAP_SYS_PTRACE));
        ck_assert(w.missing_caps & (UINT64_C(1) << NG_CAP_DAC_READ_SEARCH));
        char reason[400], advice[256];
        explain(w.kind, &self, w.missing_caps, "", reason, advice);
        ck_assert_msg(strstr(reason, "root without CAP_SYS_PTRACE") && strstr(reason, "cap_sys_ptrace"), "%s",
                      reason);
        ck_assert_msg(!strstr(advice, "run as root") && strstr(advice, "root alone is not enough"), "%s", advice);
        /* another user's process, whatever its capabilities */
        pid1->status.euid = 116;
        pid1->status.cap_prm = 0;
        ck_assert_int_eq(ng_refusal_decide(&self, pid1).kind, NG_REFUSAL_NO_PTRACE);
        ng_pid_status_done(&pid1->status);
        free(pid1);
}
END_TEST

START_TEST(test_user_namespace)
{
        /* numaguard inside a container's user namespace, the process not in it */
        struct ng_self_creds self = self_of(FX "root-self-status", "0 100000 65536", "");
        struct ng_proc *pid1 = target_of(FX "pid1-status", 1, "");
        ck_assert_int_eq(ng_refusal_decide(&self, pid1).kind, NG_REFUSAL_USERNS);
        /* from the initial namespace CAP_SYS_PTRACE reaches every other one:
         * not the reason there */
        snprintf(self.uid_map, sizeof(self.uid_map), "%s", INITIAL_MAP);
        ck_assert_int_eq(ng_refusal_decide(&self, pid1).kind, NG_REFUSAL_CAPS);
        /* the same map: unknown whether it differs, never claimed */
        snprintf(self.uid_map, sizeof(self.uid_map), "0 100000 65536");
        pid1->userns_other = 0;
        ck_assert_int_eq(ng_refusal_decide(&self, pid1).kind, NG_REFUSAL_CAPS);
        ng_pid_status_done(&pid1->status);
        free(pid1);
}
END_TEST

START_TEST(test_security_module)
{
        /* every capability of the process held: a label or a module decides */
        struct ng_self_creds self = self_of(FX "root-self-status", INITIAL_MAP, "lockdown,capability,yama");
        struct ng_proc *pr = target_of(FX "root-self-status", 0, "system_u:system_r:postgresql_t:s0");
        struct ng_refusal_why w = ng_refusal_decide(&self, pr);
        ck_assert_int_eq(w.kind, NG_REFUSAL_LSM);
        ck_assert_uint_eq(w.missing_caps, 0);
        char reason[400], advice[256];
        explain(w.kind, &self, 0, pr->lsm_label, reason, advice);
        ck_assert_msg(strstr(reason, "label system_u:system_r:postgresql_t:s0"), "%s", reason);
        ck_assert_msg(!strstr(advice, "run as root"), "%s", advice);
        /* unconfined, and Yama (which governs attaching, not reading) the
         * only other module: nothing explains it */
        snprintf(pr->lsm_label, sizeof(pr->lsm_label), "unconfined");
        ck_assert_int_eq(ng_refusal_decide(&self, pr).kind, NG_REFUSAL_UNKNOWN);
        explain(NG_REFUSAL_UNKNOWN, &self, 0, "", reason, advice);
        ck_assert_msg(!strstr(advice, "run as root") && strstr(advice, "audit log"), "%s", advice);
        /* a BPF LSM or AppArmor active: a module may have */
        snprintf(self.lsm, sizeof(self.lsm), "lockdown,capability,landlock,bpf");
        ck_assert_int_eq(ng_refusal_decide(&self, pr).kind, NG_REFUSAL_LSM);
        snprintf(self.lsm, sizeof(self.lsm), "capability,apparmor");
        ck_assert_int_eq(ng_refusal_decide(&self, pr).kind, NG_REFUSAL_LSM);
        ck_assert(!ng_lsm_checks_ptrace("capability,yama,lockdown"));
        ck_assert(!ng_lsm_checks_ptrace(""));
        ck_assert(!ng_lsm_checks_ptrace("bpfx,landlocked"));
        ng_pid_status_done(&pr->status);
        free(pr);
}
END_TEST

START_TEST(test_tree_and_caps_format)
{
        struct ng_self_creds unknown = {0};
        struct ng_proc *pid1 = target_of(FX "pid1-status", -1, "");
        ck_assert_int_eq(ng_refusal_decide(&unknown, pid1).kind, NG_REFUSAL_TREE);
        ng_pid_status_done(&pid1->status);
        free(pid1);
        char buf[128];
        ng_caps_format((UINT64_C(1) << 24) | (UINT64_C(1) << 19) | (UINT64_C(1) << 50), buf, sizeof(buf));
        ck_assert_str_eq(buf, "cap_sys_ptrace, cap_sys_resource, cap_50");
        ng_caps_format(0, buf, sizeof(buf));
        ck_assert_str_eq(buf, "");
        ng_caps_format(UINT64_MAX, buf, 40);    /* cut, still terminated */
        ck_assert_uint_lt(strlen(buf), 40);
}
END_TEST

/* The audit: the refused process of an instance is named by the
 * instance's own finding, by pid and name (a hostile one, escaped by the
 * renderers), the others by the host's, and the instance's sizes are
 * unknown, not 0. */
START_TEST(test_audit_names_processes)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        s->self = self_of(FX "nobody-self-status", INITIAL_MAP, "");
        for (pid_t pid = 100; pid < 110; pid++)
                snap_proc(s, pid, 1, "sshd", "0-1", "0-1")->maps_errno = EACCES;
        struct ng_proc *p = snap_proc(s, 200, 1, "ngdb\xff\x1b[31mZ", "0-1", "0-1");
        p->maps_errno = EACCES;
        struct ng_config *c = NULL;
        ck_assert_int_eq(ng_config_load_string("[instance DB]\nmatch_comm = ngdb*\n", "t.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_finding *f = NULL, *host = NULL;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *x = &a->findings[i];
                if (x->code != NG_CODE_AUDIT_INCOMPLETE)
                        continue;
                if (!strcmp(x->instance, "DB"))
                        f = f ? (ck_abort_msg("two findings of DB"), f) : x;
                else
                        host = host ? (ck_abort_msg("two findings of the host"), host) : x;
        }
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(host);
        ck_assert_msg(strstr(f->message, "1 process of the instance, of uid 0 ") &&
                      strstr(f->message, "pid 200 (ngdb\xff\x1b[31mZ): ") && !strstr(f->message, "sshd") &&
                      strstr(f->message, "uid 65534, not root"), "%s", f->message);
        ck_assert_msg(strstr(host->message, "10 processes of uid 0 ") &&
                      strstr(host->message, "pids 100 (sshd), 101 (sshd), 102 (sshd), 103 (sshd) and 6 more") &&
                      !strstr(host->message, "ngdb"), "%s", host->message);
        ck_assert(host->other_processes && !f->other_processes);
        const struct ng_instance *in = ng_audit_instance(a, "DB");
        ck_assert(in && in->shared_unknown && in->resident_unknown);
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        ck_assert_int_eq(ng_report_audit_text(s, a, m), 0);
        fclose(m);
        ck_assert_msg(strstr(text, "shared memory of unknown size, unknown resident"), "%s", text);
        ck_assert_msg(strstr(text, "200 (ngdb\\xff\\x1b[31mZ)") && !strchr(text, '\x1b'), "%s", text);
        free(text);
        struct json_object *j = ng_report_audit_json(s, a);
        struct json_object *insts, *i0, *v;
        ck_assert(json_object_object_get_ex(j, "instances", &insts));
        i0 = json_object_array_get_idx(insts, 0);
        ck_assert(json_object_object_get_ex(i0, "shared_bytes", &v) && v == NULL);
        ck_assert(json_object_object_get_ex(i0, "resident_bytes", &v) && v == NULL);
        const char *js = json_object_to_json_string(j);
        ck_assert_msg(strstr(js, "200 (ngdb\xef\xbf\xbd\\u001b[31mZ)"), "%s", js);
        json_object_put(j);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("refusal");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_capabilities_numaguard_lacks);
        tcase_add_test(tc, test_not_root);
        tcase_add_test(tc, test_root_without_ptrace);
        tcase_add_test(tc, test_user_namespace);
        tcase_add_test(tc, test_security_module);
        tcase_add_test(tc, test_tree_and_caps_format);
        tcase_add_test(tc, test_audit_names_processes);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(suite());
}

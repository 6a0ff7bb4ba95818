/* Unit tests for lib/3-report/metrics.c: Prometheus text from a literal snapshot and
 * a literal audit. Every sample line must be valid exposition format, every
 * family must have HELP and TYPE, and the numbers must be the snapshot's. */

#include <regex.h>

#include "ng-metrics.h"
#include "snapshot-builder.h"

static char *render(const struct ng_snapshot *s, const struct ng_audit *a)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_ptr_nonnull(f);
        struct ng_metrics_poll p = { .timestamp_usec = 1700000000123456, .duration_usec = 2500,
                                     .cpu_usec = 1500, .polls_total = 7, .alerts_raised_total = 3,
                                     .alerts_active = 1 };
        ck_assert_int_eq(ng_metrics_render(s, a, &p, f), 0);
        fclose(f);
        return buf;
}

static void expect_line(const char *text, const char *line)
{
        char *needle;
        ck_assert_int_gt(asprintf(&needle, "\n%s\n", line), 0);
        ck_assert_msg(strstr(text, needle) != NULL, "missing line: %s\n--- output:\n%s", line, text);
        free(needle);
}

static void check_syntax(const char *text)
{
        regex_t sample, comment;
        /* name{label="value",...} value -- label values may hold escaped \" \\ \n */
        ck_assert_int_eq(regcomp(&sample,
                "^numaguard_[a-z_]+(\\{[a-z_]+=\"([^\"\\\\]|\\\\.)*\"(,[a-z_]+=\"([^\"\\\\]|\\\\.)*\")*\\})? [0-9]+(\\.[0-9]+)?$",
                REG_EXTENDED | REG_NOSUB), 0);
        ck_assert_int_eq(regcomp(&comment, "^# (HELP|TYPE) numaguard_[a-z_]+ .+$", REG_EXTENDED | REG_NOSUB), 0);
        char *copy = strdup(text), *save = NULL;
        unsigned samples = 0;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                regex_t *re = l[0] == '#' ? &comment : &sample;
                ck_assert_msg(regexec(re, l, 0, NULL, 0) == 0, "bad line: %s", l);
                samples += l[0] != '#';
        }
        ck_assert_uint_gt(samples, 20);
        free(copy);
        regfree(&sample);
        regfree(&comment);
}

START_TEST(test_snapshot_only)
{
        struct ng_snapshot *s = snap_new(2, 2, 2, 21, 1024 * 1024);
        snap_pool(s, 2048, 16, 12, 0);
        mi_set(&s->topo.nodes[1].meminfo, "Shmem", 4096);
        mi_set(&s->topo.nodes[1].meminfo, "PageTables", 300);
        s->cost.files_read = 42;
        s->cost.numa_maps_read = 3;
        s->cost.pages_sampled = 4096;
        char *t = render(s, NULL);
        check_syntax(t);
        expect_line(t, "numaguard_nodes 2");
        expect_line(t, "numaguard_node_hugepages{node=\"1\",page_size_bytes=\"2097152\"} 16");
        expect_line(t, "numaguard_node_hugepages_free{node=\"0\",page_size_bytes=\"2097152\"} 12");
        expect_line(t, "numaguard_node_hugepages_surplus{node=\"1\",page_size_bytes=\"2097152\"} 0");
        expect_line(t, "numaguard_node_memory_free_bytes{node=\"0\"} 536870912");
        expect_line(t, "numaguard_node_shmem_bytes{node=\"1\"} 4194304");
        expect_line(t, "numaguard_node_page_tables_bytes{node=\"1\"} 307200");
        expect_line(t, "numaguard_poll_duration_seconds 0.002500");
        expect_line(t, "numaguard_last_poll_timestamp_seconds 1700000000.123456");
        expect_line(t, "numaguard_poll_files_read 42");
        expect_line(t, "numaguard_poll_numa_maps_read 3");
        expect_line(t, "numaguard_poll_pages_sampled 4096");
        expect_line(t, "numaguard_polls_total 7");
        expect_line(t, "# TYPE numaguard_polls_total counter");
        ck_assert_ptr_null(strstr(t, "numaguard_findings_active"));
        free(t);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(test_with_audit)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 1024 * 1024);
        struct ng_node_bytes nb[2] = { { 0, 3u << 20 }, { 1, 1u << 20 } };
        struct ng_instance in[1] = { { .name = "ORCL", .type = "oracle", .nodes = nb, .n_nodes = 2,
                                       .shared_bytes = 4u << 20, .vm_pte_kib = 8 } };
        struct ng_finding f[3] = {
                { .code = NG_CODE_CYCLOPS, .severity = NG_SEV_WARNING, .instance = "ORCL" },
                { .code = NG_CODE_CYCLOPS, .severity = NG_SEV_WARNING, .instance = "ORCL" },
                { .code = NG_CODE_AUTONUMA_ON, .severity = NG_SEV_INFO, .instance = "" },
        };
        struct ng_audit a = { .instances = in, .n_instances = 1, .findings = f, .n_findings = 3 };
        char *t = render(s, &a);
        check_syntax(t);
        expect_line(t, "numaguard_instance_resident_bytes{db_instance=\"ORCL\",node=\"0\"} 3145728");
        expect_line(t, "numaguard_instance_resident_bytes{db_instance=\"ORCL\",node=\"1\"} 1048576");
        expect_line(t, "numaguard_instance_shared_bytes{db_instance=\"ORCL\",type=\"oracle\"} 4194304");
        expect_line(t, "numaguard_instance_page_tables_bytes{db_instance=\"ORCL\"} 8192");
        expect_line(t, "numaguard_findings_active{code=\"CYCLOPS\",severity=\"warning\",db_instance=\"ORCL\"} 2");
        expect_line(t, "numaguard_findings_active{code=\"AUTONUMA_ON\",severity=\"info\",db_instance=\"\"} 1");
        expect_line(t, "numaguard_findings_by_code{code=\"CYCLOPS\"} 2");
        expect_line(t, "numaguard_findings_by_code{code=\"REMOTE_MEMORY\"} 0");
        /* A name with characters the format must escape. */
        snprintf(in[0].name, sizeof(in[0].name), "a\"b\\c");
        free(t);
        t = render(s, &a);
        check_syntax(t);
        expect_line(t, "numaguard_instance_page_tables_bytes{db_instance=\"a\\\"b\\\\c\"} 8192");
        free(t);
        /* A SID that is not UTF-8, with a newline: still one valid line
         * (node_exporter drops the whole file over one invalid label). */
        snprintf(in[0].name, sizeof(in[0].name), "oracle:N\xff\x1b[31m\nZ");
        t = render(s, &a);
        check_syntax(t);
        expect_line(t, "numaguard_instance_page_tables_bytes{db_instance=\"oracle:N\xef\xbf\xbd\x1b[31m\\nZ\"} 8192");
        ck_assert_ptr_null(strstr(t, "\xff"));
        free(t);
        ng_snapshot_free(s);
}
END_TEST

/* Maps no one could read, counted per owner; none: the family and no sample. */
START_TEST(test_unreadable)
{
        struct ng_snapshot *s = snap_new(2, 2, 2, 21, 1024 * 1024);
        snap_proc(s, 10, 1, "mariadbd", "0-3", "0-1")->status.uid = 106;
        snap_proc(s, 11, 1, "postgres", "0-3", "0-1")->status.uid = 105;
        snap_proc(s, 12, 11, "postgres", "0-3", "0-1")->status.uid = 105;
        snap_proc(s, 13, 1, "bash", "0-3", "0-1")->status.uid = 0;
        char *t = render(s, NULL);
        expect_line(t, "# TYPE numaguard_audit_unreadable_processes gauge");
        ck_assert_ptr_null(strstr(t, "numaguard_audit_unreadable_processes{"));
        free(t);
        s->procs[0]->maps_errno = EACCES;
        s->procs[1]->maps_errno = EACCES;
        s->procs[2]->maps_errno = EPERM;
        t = render(s, NULL);
        check_syntax(t);
        expect_line(t, "numaguard_audit_unreadable_processes{uid=\"105\"} 2\n"
                       "numaguard_audit_unreadable_processes{uid=\"106\"} 1");
        ck_assert_ptr_null(strstr(t, "numaguard_audit_unreadable_processes{uid=\"0\"}"));
        free(t);
        ng_snapshot_free(s);
}
END_TEST

/* Refused processes unreadable_ok acknowledges: counted on their own
 * gauge (0 included), never among the unreadable ones. */
START_TEST(test_acknowledged_unreadable)
{
        struct ng_snapshot *s = snap_new(2, 2, 2, 21, 1024 * 1024);
        snap_proc(s, 1, 0, "init", "0-3", "0-1")->status.uid = 0;
        snap_proc(s, 11, 1, "postgres", "0-3", "0-1")->status.uid = 105;
        snap_proc(s, 40, 1, "agent", "0-3", "0-1")->status.uid = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                s->procs[i]->maps_errno = EACCES;
        struct ng_audit a = {0};
        char *t = render(s, &a);
        check_syntax(t);
        expect_line(t, "# TYPE numaguard_audit_acknowledged_unreadable_processes gauge");
        expect_line(t, "numaguard_audit_acknowledged_unreadable_processes 0");
        expect_line(t, "numaguard_audit_unreadable_processes{uid=\"0\"} 2");
        free(t);
        struct ng_acknowledged ack[2] = { { .pid = 1, .by = "init" }, { .pid = 40, .by = "/system.slice/agent.service" } };
        a.acknowledged = ack;
        a.n_acknowledged = 2;
        t = render(s, &a);
        check_syntax(t);
        expect_line(t, "numaguard_audit_acknowledged_unreadable_processes 2");
        expect_line(t, "numaguard_audit_unreadable_processes{uid=\"105\"} 1");
        ck_assert_ptr_null(strstr(t, "numaguard_audit_unreadable_processes{uid=\"0\"}"));
        free(t);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(test_escape)
{
        char buf[16];
        ng_metrics_escape("x\"y\\z\nw", buf, sizeof(buf));
        ck_assert_str_eq(buf, "x\\\"y\\\\z\\nw");
        ng_metrics_escape("abcdefghijklmnopqrstuvwxyz", buf, sizeof(buf));
        ck_assert_uint_lt(strlen(buf), sizeof(buf));
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("metrics");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_snapshot_only);
        tcase_add_test(tc, test_with_audit);
        tcase_add_test(tc, test_unreadable);
        tcase_add_test(tc, test_acknowledged_unreadable);
        tcase_add_test(tc, test_escape);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(suite());
}

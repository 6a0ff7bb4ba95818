/* The matrix file: a real probe output, every shape error named, format and
 * parse round trip, and the file written under a root and read back. */

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-test.h"
#include "ng-latency.h"
#include "ng-probe.h"

static struct ng_latency *parse_ok(const char *text)
{
        struct ng_latency *m = NULL;
        char err[160] = "";
        int r = ng_latency_parse(text, strlen(text), &m, err, sizeof(err));
        ck_assert_msg(r == 0, "parse failed (%d): %s", r, err);
        return m;
}

static void parse_bad(const char *text, const char *reason)
{
        struct ng_latency *m = NULL;
        char err[160] = "";
        ck_assert_int_eq(ng_latency_parse(text, strlen(text), &m, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_null(m);
        ck_assert_msg(strstr(err, reason) != NULL, "'%s' does not say '%s'", err, reason);
}

START_TEST(real_probe_output)
{
        char *text = ng_test_read(NG_FIXTURES "/text/latency-1node.json", NULL);
        struct ng_latency *m = parse_ok(text);
        ck_assert_uint_eq(m->n_nodes, 1);
        ck_assert_uint_eq(m->n_cpu_nodes, 1);
        ck_assert_int_eq(m->nodes[0], 0);
        double ns = ng_latency_ns(m, 0, 0), mbps = ng_latency_bandwidth_mbps(m, 0, 0);
        ck_assert_msg(ns > 20 && ns < 1000, "local latency %g ns", ns);
        ck_assert_msg(mbps > 100 && mbps < 1e6, "local bandwidth %g MB/s", mbps);
        ck_assert_uint_eq(m->pages_verified[0], 256);
        ck_assert(isnan(ng_latency_ns(m, 0, 1)));
        ck_assert(isnan(ng_latency_ns(m, 1, 0)));
        ng_latency_free(m);
        free(text);
}
END_TEST

#define E5 "{\"schema\": 1, \"measured_at\": \"2026-11-23T00:00:00Z\", \"nodes\": [0, 1, 2, 3], " \
        "\"cpu_nodes\": [0, 1, 2], "

START_TEST(memory_only_columns_and_nulls)
{
        struct ng_latency *m = parse_ok(E5 "\"latency_ns\": [[53, 211, 217, 248], [211, 53, 248, null], "
                                        "[217, 248, 53, 300]], \"bandwidth_mbps\": [[9000, 5000, 5000, 4000], "
                                        "[5000, 9000, 4000, 1], [1, 2, 3, 4]]}");
        ck_assert_uint_eq(m->n_nodes, 4);
        ck_assert_uint_eq(m->n_cpu_nodes, 3);
        ck_assert_int_eq(ng_latency_row(m, 3), -1);
        ck_assert_int_eq(ng_latency_col(m, 3), 3);
        ck_assert(ng_latency_ns(m, 0, 3) == 248);
        ck_assert(ng_latency_ns(m, 2, 3) == 300);
        ck_assert(isnan(ng_latency_ns(m, 1, 3)));
        ck_assert(ng_latency_bandwidth_mbps(m, 1, 0) == 5000);
        ck_assert_str_eq(m->measured_at, "2026-11-23T00:00:00Z");
        ng_latency_free(m);
}
END_TEST

START_TEST(bad_files_say_why)
{
        parse_bad("", "not JSON");
        parse_bad("[1]", "not a JSON object");
        parse_bad("{\"schema\": 2}", "schema 2");
        parse_bad("{\"schema\": 1}", "\"nodes\" is missing");
        parse_bad("{\"schema\": 1, \"nodes\": [1, 0], \"cpu_nodes\": []}", "ascending");
        parse_bad("{\"schema\": 1, \"nodes\": [0, 5000], \"cpu_nodes\": []}", "ascending");
        parse_bad("{\"schema\": 1, \"nodes\": [], \"cpu_nodes\": []}", "empty");
        parse_bad("{\"schema\": 1, \"nodes\": [0], \"cpu_nodes\": [1]}", "CPU node 1 is not among");
        parse_bad(E5 "\"latency_ns\": [[53, 211, 217, 248]]}", "1 rows, expected 3");
        parse_bad(E5 "\"latency_ns\": [[53, 211, 217], [1, 2, 3, 4], [1, 2, 3, 4]]}", "row 0");
        parse_bad(E5 "\"latency_ns\": [[53, 211, 217, -1], [1, 2, 3, 4], [1, 2, 3, 4]]}", "[0][3]");
        parse_bad(E5 "\"latency_ns\": [[53, 211, 217, \"x\"], [1, 2, 3, 4], [1, 2, 3, 4]]}", "[0][3]");
        parse_bad(E5 "\"latency_ns\": [[53, 211, 217, 1e12], [1, 2, 3, 4], [1, 2, 3, 4]]}", "[0][3]");
        parse_bad(E5 "\"latency_ns\": [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]}", "\"bandwidth_mbps\" is missing");
        parse_bad("{\"schema\": 1, \"nodes\": [0], \"cpu_nodes\": [0], \"latency_ns\": [[1]], "
                  "\"bandwidth_mbps\": [[1]]} trailing", "text after");
        parse_bad("{\"schema\": 1, \"nodes\": [0], \"cpu_nodes\": [0], \"latency_ns\": [[1]], "
                  "\"bandwidth_mbps\": [[1]], \"pages_verified\": [-1]}", "pages_verified");
}
END_TEST

START_TEST(format_parse_round_trip)
{
        struct ng_latency *m = ng_latency_new(2, 3);
        ck_assert_ptr_nonnull(m);
        int nodes[] = { 0, 1, 4 }, cpus[] = { 0, 4 };
        memcpy(m->nodes, nodes, sizeof(nodes));
        memcpy(m->cpu_nodes, cpus, sizeof(cpus));
        snprintf(m->measured_at, sizeof(m->measured_at), "2026-11-23T16:00:00Z");
        double lat[] = { 53.25, 211, 217.125, NAN, 53, 248.5 }, bw[] = { 9000.5, 5000, 5000, NAN, 8000, 3000 };
        memcpy(m->latency_ns, lat, sizeof(lat));
        memcpy(m->bandwidth_mbps, bw, sizeof(bw));
        m->pages_verified[2] = 17;
        char *text;
        ck_assert_int_eq(ng_latency_format(m, &text), 0);
        ck_assert_msg(strstr(text, "217.125") && strstr(text, "null"), "%s", text);
        struct ng_latency *back = parse_ok(text);
        ck_assert_uint_eq(back->n_nodes, 3);
        ck_assert_int_eq(back->cpu_nodes[1], 4);
        for (size_t i = 0; i < 6; i++) {
                ck_assert(isnan(lat[i]) ? isnan(back->latency_ns[i]) : back->latency_ns[i] == lat[i]);
                ck_assert(isnan(bw[i]) ? isnan(back->bandwidth_mbps[i]) : back->bandwidth_mbps[i] == bw[i]);
        }
        ck_assert_uint_eq(back->pages_verified[2], 17);
        ck_assert_str_eq(back->measured_at, m->measured_at);
        free(text);
        ng_latency_free(back);
        ng_latency_free(m);
}
END_TEST

/* A probe's runs that disagree: the cell is counted (latency or bandwidth),
 * the spreads are in the JSON only when known and read back from it; a
 * file without them has nothing known to be unstable. */
START_TEST(unstable_cells)
{
        struct ng_latency *m = ng_latency_new(2, 2);
        ck_assert_ptr_nonnull(m);
        int ids[] = { 0, 1 };
        memcpy(m->nodes, ids, sizeof(ids));
        memcpy(m->cpu_nodes, ids, sizeof(ids));
        double lat[] = { 95, 140, 141, 96 }, bw[] = { 54000, 30000, 576, 53000 };
        memcpy(m->latency_ns, lat, sizeof(lat));
        memcpy(m->bandwidth_mbps, bw, sizeof(bw));
        char *text;
        ck_assert_int_eq(ng_latency_format(m, &text), 0);
        ck_assert_msg(!strstr(text, "spread"), "%s", text);
        free(text);
        ck_assert_uint_eq(ng_probe_unstable(m, NG_PROBE_MAX_SPREAD), 0);
        double ls[] = { 1.02, 1.1, 1.05, 2.5 }, bs[] = { 1.1, 1.3, 93.8, 1.2 };
        memcpy(m->latency_spread, ls, sizeof(ls));
        memcpy(m->bandwidth_spread, bs, sizeof(bs));
        ck_assert_uint_eq(ng_probe_unstable(m, NG_PROBE_MAX_SPREAD), 2);  /* bandwidth of (1,0), latency of (1,1) */
        ck_assert_uint_eq(ng_probe_unstable(m, 100), 0);
        ck_assert_uint_eq(ng_probe_unstable(m, 1), 4);
        ck_assert_int_eq(ng_latency_format(m, &text), 0);
        ck_assert_msg(strstr(text, "\"bandwidth_spread\"") && strstr(text, "93.8"), "%s", text);
        struct ng_latency *back = parse_ok(text);
        ck_assert(back->bandwidth_spread[2] == 93.8 && back->latency_spread[3] == 2.5);
        ck_assert_uint_eq(ng_probe_unstable(back, NG_PROBE_MAX_SPREAD), 2);
        ng_latency_free(back);
        /* a file of 0.1.0: no spreads, nothing known to be unstable */
        back = parse_ok("{\"schema\": 1, \"nodes\": [0], \"cpu_nodes\": [0], \"latency_ns\": [[90]], "
                        "\"bandwidth_mbps\": [[9000]]}");
        ck_assert(isnan(back->latency_spread[0]));
        ck_assert_uint_eq(ng_probe_unstable(back, 1), 0);
        free(text);
        ng_latency_free(back);
        ng_latency_free(m);
}
END_TEST

/* --save is checked before a probe: the directory made as the write makes
 * it, a temporary file created and removed; where var/lib is a file, the
 * write's own error. */
START_TEST(check_writable_before_measuring)
{
        char root[] = "/tmp/ng-latency-w-XXXXXX", path[256];
        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_eq(ng_latency_check_writable(root), 0);
        snprintf(path, sizeof(path), "%s%s.new", root, NG_LATENCY_FILE);
        ck_assert_int_eq(access(path, F_OK), -1);
        snprintf(path, sizeof(path), "%s/var/lib/numaguard", root);
        ck_assert_int_eq(rmdir(path), 0);
        snprintf(path, sizeof(path), "%s/var/lib", root);
        ck_assert_int_eq(rmdir(path), 0);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fclose(f);
        ck_assert_int_eq(ng_latency_check_writable(root), -ENOTDIR);
        unlink(path);
        snprintf(path, sizeof(path), "%s/var", root);
        rmdir(path);
        ck_assert_int_eq(rmdir(root), 0);
}
END_TEST

START_TEST(written_under_root_and_read_back)
{
        char root[] = "/tmp/ng-latency-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(root));
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(root, &p), 0);
        struct ng_latency *m = NULL;
        char err[160];
        ck_assert_int_eq(ng_latency_read(p, &m, err, sizeof(err)), -ENOENT);
        m = ng_latency_new(1, 1);
        m->latency_ns[0] = 80;
        m->bandwidth_mbps[0] = 12000;
        ck_assert_int_eq(ng_latency_write(root, m), 0);
        ng_latency_free(m);
        m = NULL;
        ck_assert_int_eq(ng_latency_read(p, &m, err, sizeof(err)), 0);
        ck_assert(ng_latency_ns(m, 0, 0) == 80);
        ng_latency_free(m);
        /* A broken file is an error with its reason, not an empty matrix. */
        char path[256];
        snprintf(path, sizeof(path), "%s%s", root, NG_LATENCY_FILE);
        FILE *f = fopen(path, "w");
        fputs("{\"schema\": 1, \"nodes\": [0]", f);
        fclose(f);
        m = NULL;
        ck_assert_int_eq(ng_latency_read(p, &m, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_null(m);
        ck_assert_msg(strstr(err, "not JSON") != NULL, "%s", err);
        unlink(path);
        snprintf(path, sizeof(path), "%s/var/lib/numaguard", root);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/var/lib", root);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/var", root);
        rmdir(path);
        ck_assert_int_eq(rmdir(root), 0);
        ng_path_free(p);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("latency");
        TCase *tc = tcase_create("file");
        tcase_add_test(tc, real_probe_output);
        tcase_add_test(tc, memory_only_columns_and_nulls);
        tcase_add_test(tc, bad_files_say_why);
        tcase_add_test(tc, format_parse_round_trip);
        tcase_add_test(tc, written_under_root_and_read_back);
        tcase_add_test(tc, unstable_cells);
        tcase_add_test(tc, check_writable_before_measuring);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

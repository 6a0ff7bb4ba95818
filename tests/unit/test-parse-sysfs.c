/* Unit tests for the small sysfs attributes: HMAT figures as the kernel
 * prints them (drivers/base/node.c: "%u\n"), node, tier and cache index
 * names, and demotion_enabled. */

#include "parse.h"
#include "ng-test.h"
#include "util.h"

START_TEST(test_hmat_value)
{
        int64_t v = 42;
        ck_assert_int_eq(ng_parse_hmat_value("30\n", &v), 0);
        ck_assert_int_eq(v, 30);
        ck_assert_int_eq(ng_parse_hmat_value("204800\n", &v), 0);
        ck_assert_int_eq(v, 204800);
        ck_assert_int_eq(ng_parse_hmat_value("4294967295\n", &v), 0);
        ck_assert_int_eq(v, 4294967295);
        /* The kernel's 0: the firmware gave no value. */
        ck_assert_int_eq(ng_parse_hmat_value("0\n", &v), 0);
        ck_assert_int_eq(v, NG_HMAT_UNKNOWN);
        v = 7;
        ck_assert_int_eq(ng_parse_hmat_value("4294967296\n", &v), -ERANGE);
        ck_assert_int_eq(ng_parse_hmat_value("99999999999999999999999\n", &v), -ERANGE);
        ck_assert_int_eq(ng_parse_hmat_value("", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_hmat_value("\n", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_hmat_value("-1\n", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_hmat_value("30 ns\n", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_hmat_value("0x1e\n", &v), -EINVAL);
        ck_assert_int_eq(v, 7);
}
END_TEST

START_TEST(test_prefixed_id)
{
        unsigned id = 99;
        ck_assert_int_eq(ng_parse_prefixed_id("node0", "node", 1023, &id), 0);
        ck_assert_uint_eq(id, 0);
        ck_assert_int_eq(ng_parse_prefixed_id("node12", "node", 1023, &id), 0);
        ck_assert_uint_eq(id, 12);
        ck_assert_int_eq(ng_parse_prefixed_id("memory_tier4", "memory_tier", 1u << 16, &id), 0);
        ck_assert_uint_eq(id, 4);
        ck_assert_int_eq(ng_parse_prefixed_id("index1", "index", 255, &id), 0);
        ck_assert_uint_eq(id, 1);
        id = 99;
        ck_assert_int_eq(ng_parse_prefixed_id("node", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("node01", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("node1024", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("node1x", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("node 1", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("node-1", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("nodes", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("read_latency", "node", 1023, &id), -EINVAL);
        ck_assert_int_eq(ng_parse_prefixed_id("node99999999999999999999", "node", 1023, &id), -EINVAL);
        ck_assert_uint_eq(id, 99);
}
END_TEST

START_TEST(test_true_false)
{
        bool b = false;
        ck_assert_int_eq(ng_parse_true_false("true\n", &b), 0);
        ck_assert(b);
        ck_assert_int_eq(ng_parse_true_false("false\n", &b), 0);
        ck_assert(!b);
        ck_assert_int_eq(ng_parse_true_false("1", &b), 0);
        ck_assert(b);
        ck_assert_int_eq(ng_parse_true_false("0\n", &b), 0);
        ck_assert(!b);
        b = true;
        ck_assert_int_eq(ng_parse_true_false("", &b), -EINVAL);
        ck_assert_int_eq(ng_parse_true_false("\n", &b), -EINVAL);
        ck_assert_int_eq(ng_parse_true_false("truex\n", &b), -EINVAL);
        ck_assert_int_eq(ng_parse_true_false("true\n\n", &b), -EINVAL);
        ck_assert_int_eq(ng_parse_true_false("true\nfalse\n", &b), -EINVAL);
        ck_assert_int_eq(ng_parse_true_false(" true\n", &b), -EINVAL);
        ck_assert_int_eq(ng_parse_true_false("fals", &b), -EINVAL);
        ck_assert(b);
}
END_TEST

/* a tree's kept probe answers (numaguard/features), written by numaguard
 * but read back from a tree anyone may hand over */
START_TEST(test_feature_line)
{
        struct ng_feature_line fl;
        ck_assert_int_eq(ng_parse_feature_line("cgroup_v1_cpuset absent the kernel refuses a v1 cpuset "
                                               "(fsconfig(2): cgroup: Unknown subsys name 'cpuset')", &fl), 0);
        ck_assert_str_eq(fl.name, "cgroup_v1_cpuset");
        ck_assert_str_eq(fl.state, "absent");
        ck_assert_str_eq(fl.detail, "the kernel refuses a v1 cpuset (fsconfig(2): cgroup: Unknown subsys name 'cpuset')");
        ck_assert_int_eq(ng_parse_feature_line("procmap_query present", &fl), 0);
        ck_assert_str_eq(fl.state, "present");
        ck_assert_str_eq(fl.detail, "");
        /* what is not printable ASCII is not kept as it came */
        ck_assert_int_eq(ng_parse_feature_line("damon present a\x1b[2Jb\xc3\xa9", &fl), 0);
        ck_assert_str_eq(fl.detail, "a?[2Jb??");
        /* a detail longer than the field is cut, never overflows */
        char longline[600];
        int n = snprintf(longline, sizeof(longline), "damon unknown ");
        memset(longline + n, 'x', sizeof(longline) - (size_t) n - 1);
        longline[sizeof(longline) - 1] = '\0';
        ck_assert_int_eq(ng_parse_feature_line(longline, &fl), 0);
        ck_assert_uint_eq(strlen(fl.detail), sizeof(fl.detail) - 1);
        ck_assert_int_eq(ng_parse_feature_line("", &fl), -EINVAL);
        ck_assert_int_eq(ng_parse_feature_line("damon", &fl), -EINVAL);
        ck_assert_int_eq(ng_parse_feature_line("Damon present", &fl), -EINVAL);
        ck_assert_int_eq(ng_parse_feature_line("damon Present x", &fl), -EINVAL);
        ck_assert_int_eq(ng_parse_feature_line("damon  present", &fl), -EINVAL);
        ck_assert_int_eq(ng_parse_feature_line("a_name_longer_than_thirty_one_chars present", &fl), -EINVAL);
}
END_TEST

/* The words of shmem_enabled and huge=, both ways; anything else unknown. */
START_TEST(test_shmem_huge_names)
{
        static const char *const words[] = { "never", "always", "within_size", "advise", "inherit", "deny", "force" };
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                enum ng_shmem_huge h = ng_shmem_huge_from_name(words[i]);
                ck_assert_int_ne(h, NG_SHMEM_HUGE_UNKNOWN);
                ck_assert_str_eq(ng_shmem_huge_name(h), words[i]);
        }
        ck_assert_int_eq(ng_shmem_huge_from_name("Always"), NG_SHMEM_HUGE_UNKNOWN);
        ck_assert_int_eq(ng_shmem_huge_from_name("[always]"), NG_SHMEM_HUGE_UNKNOWN);
        ck_assert_int_eq(ng_shmem_huge_from_name("unknown"), NG_SHMEM_HUGE_UNKNOWN);
        ck_assert_int_eq(ng_shmem_huge_from_name(""), NG_SHMEM_HUGE_UNKNOWN);
        ck_assert_int_eq(ng_shmem_huge_from_name(NULL), NG_SHMEM_HUGE_UNKNOWN);
        ck_assert_str_eq(ng_shmem_huge_name(NG_SHMEM_HUGE_UNKNOWN), "unknown");
        ck_assert_str_eq(ng_shmem_huge_name((enum ng_shmem_huge) 99), "unknown");
}
END_TEST

static Suite *sysfs_suite(void)
{
        Suite *s = suite_create("parse-sysfs");
        TCase *tc = tcase_create("attributes");
        tcase_add_test(tc, test_hmat_value);
        tcase_add_test(tc, test_prefixed_id);
        tcase_add_test(tc, test_true_false);
        tcase_add_test(tc, test_feature_line);
        tcase_add_test(tc, test_shmem_huge_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(sysfs_suite());
}

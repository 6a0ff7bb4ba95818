/* Unit tests for lib/0-core/bitmap.c: kernel list format and set operations. */

#include "ng-bitmap.h"
#include "ng-test.h"
#include "util.h"

static struct ng_bitmap parse_ok(const char *s)
{
        struct ng_bitmap b;

        memset(&b, 0xa5, sizeof(b));
        ck_assert_msg(ng_bitmap_parse_list(s, &b) == 0, "parse \"%s\"", s);
        return b;
}

static const char *fmt(const struct ng_bitmap *b)
{
        static char buf[4096];

        ng_bitmap_format_list(b, buf, sizeof(buf));
        return buf;
}

START_TEST(test_parse_ranges)
{
        struct ng_bitmap b = parse_ok("0-3,8,10-11\n");

        ck_assert_uint_eq(ng_bitmap_count(&b), 7);
        ck_assert(ng_bitmap_test(&b, 0) && ng_bitmap_test(&b, 3) && ng_bitmap_test(&b, 8));
        ck_assert(!ng_bitmap_test(&b, 4) && !ng_bitmap_test(&b, 9) && !ng_bitmap_test(&b, 12));
        ck_assert_str_eq(fmt(&b), "0-3,8,10-11");
}
END_TEST

START_TEST(test_parse_empty)
{
        struct ng_bitmap b = parse_ok("");

        ck_assert(ng_bitmap_empty(&b));
        b = parse_ok("\n");
        ck_assert(ng_bitmap_empty(&b));
        ck_assert_str_eq(fmt(&b), "");
        ck_assert_int_eq(ng_bitmap_next(&b, 0), -1);
}
END_TEST

START_TEST(test_parse_stride)
{
        struct ng_bitmap b = parse_ok("0-31:8");

        ck_assert_uint_eq(ng_bitmap_count(&b), 4);
        ck_assert_str_eq(fmt(&b), "0,8,16,24");
        b = parse_ok("1-2:1");
        ck_assert_str_eq(fmt(&b), "1-2");
}
END_TEST

START_TEST(test_parse_bounds)
{
        char buf[64];
        struct ng_bitmap b = parse_ok("8191");

        ck_assert(ng_bitmap_test(&b, NG_BITMAP_BITS - 1));
        ck_assert_int_eq(ng_bitmap_next(&b, 0), NG_BITMAP_BITS - 1);
        ck_assert_int_eq(ng_bitmap_next(&b, NG_BITMAP_BITS - 1), NG_BITMAP_BITS - 1);
        ck_assert_int_eq(ng_bitmap_next(&b, NG_BITMAP_BITS), -1);
        b = parse_ok("8190-8191");
        ck_assert_str_eq(fmt(&b), "8190-8191");
        snprintf(buf, sizeof(buf), "%d", NG_BITMAP_BITS);
        ck_assert_int_eq(ng_bitmap_parse_list(buf, &b), -EINVAL);
        ck_assert_int_eq(ng_bitmap_parse_list("0-8192", &b), -EINVAL);
        ck_assert_int_eq(ng_bitmap_parse_list("99999999999999999999999", &b), -EINVAL);
        /* out-of-range set/test are ignored, not UB */
        ng_bitmap_set(&b, NG_BITMAP_BITS);
        ck_assert(!ng_bitmap_test(&b, NG_BITMAP_BITS));
}
END_TEST

START_TEST(test_parse_64_nodes)
{
        struct ng_bitmap b = parse_ok("0-63");

        ck_assert_uint_eq(ng_bitmap_count(&b), 64);
        ck_assert(!ng_bitmap_test(&b, 64));
        ck_assert_str_eq(fmt(&b), "0-63");
        b = parse_ok("0-64");
        ck_assert_uint_eq(ng_bitmap_count(&b), 65);
        ck_assert_str_eq(fmt(&b), "0-64");
        b = parse_ok("63,64,127,128");
        ck_assert_str_eq(fmt(&b), "63-64,127-128");
}
END_TEST

START_TEST(test_parse_bad)
{
        static const char *const bad[] = {
                "a", "1-", "-1", "3-1", "1,,2", "1,", ",1", "1 2", "1-2-3", "0-7:0",
                "0x3", "1;2", "1-2:", " 1\n2", "\x01",
        };
        struct ng_bitmap b, orig;

        memset(&b, 0x5a, sizeof(b));
        orig = b;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(ng_bitmap_parse_list(bad[i], &b) == -EINVAL, "\"%s\" accepted", bad[i]);
        /* untouched on failure */
        ck_assert(memcmp(&b, &orig, sizeof(b)) == 0);
}
END_TEST

START_TEST(test_format_truncation)
{
        struct ng_bitmap b = parse_ok("0-3,8,100-200");
        char small[6];

        memset(small, 'x', sizeof(small));
        ck_assert_int_eq(ng_bitmap_format_list(&b, small, sizeof(small)), (int)strlen("0-3,8,100-200"));
        ck_assert_str_eq(small, "0-3,8");
        ck_assert_int_eq(ng_bitmap_format_list(&b, NULL, 0), 13);
        ck_assert_int_eq(ng_bitmap_format_list(&b, small, 1), 13);
        ck_assert_str_eq(small, "");
}
END_TEST

START_TEST(test_set_ops)
{
        struct ng_bitmap a = parse_ok("0-3"), b = parse_ok("3-5"), c = parse_ok("6,4096"), d;

        ck_assert(ng_bitmap_intersects(&a, &b));
        ck_assert(!ng_bitmap_intersects(&a, &c));
        d = a;
        ng_bitmap_and(&d, &b);
        ck_assert_str_eq(fmt(&d), "3");
        d = a;
        ng_bitmap_or(&d, &c);
        ck_assert_str_eq(fmt(&d), "0-3,6,4096");
        ck_assert(!ng_bitmap_equal(&d, &a));
        ck_assert(ng_bitmap_equal(&a, &a));
        ck_assert(!ng_bitmap_empty(&c));
}
END_TEST

START_TEST(test_foreach)
{
        struct ng_bitmap b = parse_ok("1,63-64,8191");
        int seen[4], n = 0;

        NG_BITMAP_FOREACH(i, &b) {
                ck_assert_int_lt(n, 4);
                seen[n++] = i;
        }
        ck_assert_int_eq(n, 4);
        ck_assert_int_eq(seen[0], 1);
        ck_assert_int_eq(seen[1], 63);
        ck_assert_int_eq(seen[2], 64);
        ck_assert_int_eq(seen[3], 8191);
        ck_assert_int_eq(ng_bitmap_next(&b, -5), 1);
}
END_TEST

START_TEST(test_parse_kernel_group)
{
        /* bitmap_parselist(): "0-1023:2/256" = two of every 256 */
        struct ng_bitmap b = parse_ok("0-1023:2/256");

        ck_assert_str_eq(fmt(&b), "0-1,256-257,512-513,768-769");
        ck_assert_int_eq(ng_bitmap_parse_list("0-7:3/2", &b), -EINVAL);
        ck_assert_int_eq(ng_bitmap_parse_list("0-7:1/0", &b), -EINVAL);
}
END_TEST

static Suite *bitmap_suite(void)
{
        Suite *s = suite_create("bitmap");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_ranges);
        tcase_add_test(tc, test_parse_empty);
        tcase_add_test(tc, test_parse_stride);
        tcase_add_test(tc, test_parse_bounds);
        tcase_add_test(tc, test_parse_64_nodes);
        tcase_add_test(tc, test_parse_bad);
        tcase_add_test(tc, test_format_truncation);
        tcase_add_test(tc, test_set_ops);
        tcase_add_test(tc, test_foreach);
        tcase_add_test(tc, test_parse_kernel_group);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(bitmap_suite());
}

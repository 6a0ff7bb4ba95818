/* Unit tests for the core kit (lib/0-core/util.h, bitmap-json.h): growing an
 * array, the clock, a bitmap in JSON. The oracle of ng_grow is the
 * allocator itself (malloc_usable_size) and, under SANITIZE=1, ASan. */

#include <malloc.h>
#include <stdint.h>

#include "bitmap-json.h"
#include "ng-test.h"
#include "util.h"

/* Under SANITIZE=1, an allocation that cannot be is a NULL to handle (as
 * glibc's), not a report: test_grow_max asks for one. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
        return "allocator_may_return_null=1";
}

/* Every item written lands in memory the array owns, with and without a
 * kept capacity; the capacity-less one is reallocated only at 0, 16, 32,
 * 64, ... as its contract says. */
START_TEST(test_grow_room)
{
        uint64_t *kept = NULL, *bare = NULL;
        size_t cap = 0, reallocs = 0;
        for (size_t n = 0; n < 5000; n++) {
                ck_assert_int_eq(ng_grow(&kept, &cap, n, sizeof(*kept), 0), 0);
                ck_assert_uint_gt(cap, n);
                ck_assert_uint_ge(malloc_usable_size(kept), (n + 1) * sizeof(*kept));
                kept[n] = n;
                uint64_t *before = bare;
                size_t size_before = before ? malloc_usable_size(before) : 0;
                ck_assert_int_eq(ng_grow(&bare, NULL, n, sizeof(*bare), 0), 0);
                ck_assert_uint_ge(malloc_usable_size(bare), (n + 1) * sizeof(*bare));
                bool pow2 = n >= 16 && !(n & (n - 1));
                if (n == 0 || pow2)
                        reallocs++;
                else    /* no call to the allocator: same block, same size */
                        ck_assert(bare == before && malloc_usable_size(bare) == size_before);
                bare[n] = n;
        }
        for (size_t n = 0; n < 5000; n++)
                ck_assert(kept[n] == n && bare[n] == n);
        ck_assert_uint_eq(reallocs, 1 + 9);     /* 0, then 16 .. 4096 */
        free(kept);
        free(bare);
}
END_TEST

START_TEST(test_grow_max)
{
        int *v = NULL;
        size_t cap = 0, n = 0;
        int r;
        while ((r = ng_grow(&v, &cap, n, sizeof(*v), 100)) == 0)
                v[n++] = 1;
        ck_assert_int_eq(r, -E2BIG);
        ck_assert_uint_eq(n, 100);
        ck_assert_uint_eq(cap, 100);
        free(v);
        /* An absurd item size fails cleanly, the array kept. */
        char *c = NULL;
        size_t ccap = 0;
        ck_assert_int_eq(ng_grow(&c, &ccap, 0, 1, 0), 0);
        char *keep = c;
        volatile size_t absurd = SIZE_MAX / 8;  /* hidden from the compiler's size check */
        ck_assert_int_eq(ng_grow(&c, &ccap, ccap, absurd, 0), -ENOMEM);
        ck_assert_ptr_eq(c, keep);
        free(c);
}
END_TEST

START_TEST(test_now_usec)
{
        static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
                                            CLOCK_THREAD_CPUTIME_ID };
        for (size_t i = 0; i < ELEMENTSOF(clocks); i++) {
                struct timespec a, b;
                clock_gettime(clocks[i], &a);
                uint64_t u = now_usec(clocks[i]);
                clock_gettime(clocks[i], &b);
                uint64_t lo = (uint64_t) a.tv_sec * 1000000 + (uint64_t) a.tv_nsec / 1000;
                uint64_t hi = (uint64_t) b.tv_sec * 1000000 + (uint64_t) b.tv_nsec / 1000;
                ck_assert_msg(lo <= u && u <= hi, "clock %d: %llu not in [%llu, %llu]", (int) clocks[i],
                              (unsigned long long) u, (unsigned long long) lo, (unsigned long long) hi);
        }
        ck_assert_uint_eq(USEC_PER_SEC, 1000 * USEC_PER_MSEC);
}
END_TEST

START_TEST(test_bitmap_json)
{
        struct ng_bitmap b;
        ck_assert_int_eq(ng_bitmap_parse_list("0-3,8,63", &b), 0);
        struct json_object *l = ng_bitmap_json_list(&b), *ids = ng_bitmap_json_ids(&b);
        ck_assert_str_eq(json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN), "\"0-3,8,63\"");
        ck_assert_str_eq(json_object_to_json_string_ext(ids, JSON_C_TO_STRING_PLAIN), "[0,1,2,3,8,63]");
        json_object_put(l);
        json_object_put(ids);
        struct ng_bitmap empty = {0};
        l = ng_bitmap_json_list(&empty);
        ids = ng_bitmap_json_ids(&empty);
        ck_assert_str_eq(json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN), "\"\"");
        ck_assert_str_eq(json_object_to_json_string_ext(ids, JSON_C_TO_STRING_PLAIN), "[]");
        json_object_put(l);
        json_object_put(ids);
}
END_TEST

static Suite *util_suite(void)
{
        Suite *s = suite_create("util");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_grow_room);
        tcase_add_test(tc, test_grow_max);
        tcase_add_test(tc, test_now_usec);
        tcase_add_test(tc, test_bitmap_json);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(util_suite());
}

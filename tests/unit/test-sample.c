/* Tier-1 sampling: shares from move_pages(2), through a fake kernel and the
 * real one. */

#include <sys/mman.h>
#include <unistd.h>

#include "ng-test.h"
#include "ng-sample.h"

/* A fake move_pages(2): interleave over 4 nodes by page number, with every
 * 7th page not present (independent of the node). */
static unsigned long fake_calls;
static long fake_interleave(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
        (void) pid, (void) nodes, (void) flags;
        fake_calls++;
        for (unsigned long i = 0; i < count; i++) {
                uintptr_t page = (uintptr_t) pages[i] / 4096;
                status[i] = page % 7 == 6 ? -ENOENT : (int) (page % 4);
        }
        return 0;
}

static long fake_gone(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
        (void) pid, (void) count, (void) pages, (void) nodes, (void) status, (void) flags;
        errno = ESRCH;
        return -1;
}

static uint64_t pages_on(const struct ng_sample *s, int node)
{
        for (size_t i = 0; i < s->n_np; i++)
                if (s->np[i].node == node)
                        return s->np[i].pages;
        return 0;
}

START_TEST(interleave_is_not_aliased)
{
        /* 32 MiB = 8192 pages, 4096 samples: a fixed stride of 2 pages
         * would see only nodes 0 and 2. */
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_range(1, 0x7f0000000000, 32 << 20, 4096, 4096, fake_interleave, &s), 0);
        ck_assert_uint_eq(s.asked, 4096);
        ck_assert_uint_eq(s.n_np, 4);
        for (int n = 0; n < 4; n++) {
                double share = (double) pages_on(&s, n) / s.present;
                ck_assert_msg(share > 0.22 && share < 0.28, "node %d share %.3f", n, share);
        }
        double present = (double) s.present / s.asked;
        ck_assert_msg(present > 0.83 && present < 0.88, "present %.3f", present);
        ng_sample_done(&s);
}
END_TEST

/* A fake move_pages(2): interleave over 4 nodes by page number, all present. */
static long fake_interleave_full(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
        (void) pid, (void) nodes, (void) flags;
        for (unsigned long i = 0; i < count; i++)
                status[i] = (int) ((uintptr_t) pages[i] / 4096 % 4);
        return 0;
}

START_TEST(interleave_shares_within_two_points_at_size)
{
        /* 256 MiB = 65536 pages, 8192 samples: strata of 8 pages, each with
         * two pages of every node. The offset inside a stratum must come
         * from good random bits: the low bits of xorshift64* put node 2 at
         * 27.3 % on the e2e guest. Several segment addresses (seeds). */
        for (uint64_t base = 0x7f0000000000; base < 0x7f0000000000 + 16 * (UINT64_C(1) << 30); base += UINT64_C(1) << 30) {
                struct ng_sample s;
                ck_assert_int_eq(ng_sample_range(1, base, 256 << 20, 4096, 8192, fake_interleave_full, &s), 0);
                ck_assert_uint_eq(s.present, 8192);
                for (int n = 0; n < 4; n++) {
                        double share = (double) pages_on(&s, n) / s.present;
                        ck_assert_msg(share > 0.23 && share < 0.27, "base %#llx node %d share %.4f",
                                      (unsigned long long) base, n, share);
                }
                ng_sample_done(&s);
        }
}
END_TEST

START_TEST(small_mapping_is_sampled_whole_in_batches)
{
        struct ng_sample s;
        fake_calls = 0;
        ck_assert_int_eq(ng_sample_range(1, 0x1000000, 3000 * 4096, 4096, 4096, fake_interleave, &s), 0);
        ck_assert_uint_eq(s.asked, 3000);
        ck_assert_uint_eq(s.present, 3000 - (3000 + 1) / 7);
        ck_assert_uint_eq(fake_calls, 3);       /* 1024-address batches */
        ng_sample_done(&s);
}
END_TEST

START_TEST(errors)
{
        struct ng_sample s = { .asked = 77 };
        ck_assert_int_eq(ng_sample_range(1, 0x1000000, 1 << 20, 4096, 64, fake_gone, &s), -ESRCH);
        ck_assert_uint_eq(s.asked, 77);
        ck_assert_int_eq(ng_sample_range(1, 0x1000000, 100, 4096, 64, fake_interleave, &s), -EINVAL);
        ck_assert_int_eq(ng_sample_range(1, 0x1000000, 1 << 20, 4096, 0, fake_interleave, &s), -EINVAL);
}
END_TEST

START_TEST(real_kernel_self)
{
        /* Our own touched memory: every sampled page present, on a node the
         * kernel knows; untouched memory: nothing present, nothing faulted in. */
        size_t len = 16 << 20;
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        memset(m, 1, len / 2);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_range(getpid(), (uintptr_t) m, len / 2, 4096, 1024, NULL, &s), 0);
        ck_assert_uint_eq(s.asked, 1024);
        ck_assert_uint_eq(s.present, 1024);
        ck_assert_uint_ge(s.n_np, 1);
        ng_sample_done(&s);
        ck_assert_int_eq(ng_sample_range(getpid(), (uintptr_t) m + len / 2, len / 2, 4096, 1024, NULL, &s), 0);
        ck_assert_uint_eq(s.present, 0);
        unsigned char vec[16];
        ck_assert_int_eq(mincore(m + len / 2, 16 * 4096, vec), 0);
        for (int i = 0; i < 16; i++)
                ck_assert_int_eq(vec[i] & 1, 0);
        ng_sample_done(&s);
        munmap(m, len);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("sample");
        TCase *tc = tcase_create("sample");
        tcase_add_test(tc, interleave_is_not_aliased);
        tcase_add_test(tc, interleave_shares_within_two_points_at_size);
        tcase_add_test(tc, small_mapping_is_sampled_whole_in_batches);
        tcase_add_test(tc, errors);
        tcase_add_test(tc, real_kernel_self);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

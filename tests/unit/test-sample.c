/* Tier-1 sampling: shares from move_pages(2), through a fake kernel and the
 * real one. */

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-test.h"
#include "sample.h"

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


/* ---- the segment itself (ng_sample_segment_fd) ---- */

static int memfd_with(uint64_t size)
{
        int fd = memfd_create("ng-test-segment", MFD_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, (off_t) size), 0);
        return fd;
}

static void fill(int fd, uint64_t off, uint64_t len)
{
        static char buf[1 << 16];
        memset(buf, 7, sizeof(buf));
        for (uint64_t done = 0; done < len; done += sizeof(buf))
                ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), (off_t) (off + done)), (ssize_t) sizeof(buf));
}

static uint64_t blocks(int fd)
{
        struct stat st;
        ck_assert_int_eq(fstat(fd, &st), 0);
        return (uint64_t) st.st_blocks;
}

START_TEST(segment_pages_nobody_maps)
{
        /* Written with pwrite(2): no process maps a page of it, yet every
         * page is resident. Two extents, 20 MiB of data in a 64 MiB file. */
        int fd = memfd_with(64 << 20);
        fill(fd, 8 << 20, 16 << 20);
        fill(fd, 40 << 20, 4 << 20);
        uint64_t before = blocks(fd);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 4096, false, NULL, &s), 0);
        ck_assert(s.whole);
        ck_assert(!s.exact);
        ck_assert_uint_eq(s.len, 20 << 20);
        ck_assert_uint_eq(s.asked, 4096);
        ck_assert_uint_eq(s.present, 4096);
        ck_assert_uint_ge(s.n_np, 1);
        ng_sample_done(&s);
        ck_assert_int_eq(ng_sample_segment_fd(fd, 4096, true, NULL, &s), 0);
        ck_assert(s.exact);
        ck_assert_uint_eq(s.asked, (20 << 20) / 4096);
        ck_assert_uint_eq(s.present, (20 << 20) / 4096);
        ng_sample_done(&s);
        /* Nothing allocated: the holes stay holes. */
        ck_assert_uint_eq(blocks(fd), before);
        close(fd);
}
END_TEST

START_TEST(segment_sparse_terabyte)
{
        /* 1 TiB with 1 MiB of data: the budget goes where the data is. */
        int fd = memfd_with(UINT64_C(1) << 40);
        fill(fd, UINT64_C(700) << 30, 1 << 20);
        uint64_t before = blocks(fd);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 4096, false, NULL, &s), 0);
        ck_assert_uint_eq(s.len, 1 << 20);
        ck_assert_uint_eq(s.asked, 256);
        ck_assert_uint_eq(s.present, 256);
        ng_sample_done(&s);
        ck_assert_uint_eq(blocks(fd), before);
        close(fd);
}
END_TEST

START_TEST(segment_fragmented_past_the_cap)
{
        /* 20 one-page extents in a 1 GiB file, with the extents followed
         * bounded at 8: the rest of the file is one extent, holes and all.
         * The sample spends its budget on the 7 extents known to be data
         * and says what it left (13 pages); the exact count walks it all
         * and counts against what is allocated, not against the holes. */
        unsigned cap = ng_seg_max_extents;
        ng_seg_max_extents = 8;
        int fd = memfd_with(UINT64_C(1) << 30);
        for (int i = 0; i < 20; i++)
                ck_assert_int_eq(pwrite(fd, "x", 1, (off_t) i * (1 << 20)), 1);
        ck_assert_uint_eq(blocks(fd) * 512, 20 * 4096);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 4, false, NULL, &s), 0);
        ck_assert_uint_eq(s.len, 7 * 4096);
        ck_assert_uint_eq(s.asked, 4);
        ck_assert_uint_eq(s.present, 4);
        ck_assert_uint_eq(s.unwalked_bytes, 13 * 4096);
        ng_sample_done(&s);
        ck_assert_int_eq(ng_sample_segment_fd(fd, 0, true, NULL, &s), 0);
        ck_assert_uint_eq(s.len, 20 * 4096);
        ck_assert_uint_eq(s.asked, 20);
        ck_assert_uint_eq(s.present, 20);
        ck_assert_uint_eq(s.unwalked_bytes, 0);
        ng_sample_done(&s);
        ck_assert_uint_eq(blocks(fd) * 512, 20 * 4096);     /* nothing allocated */
        ng_seg_max_extents = cap;
        close(fd);
}
END_TEST

START_TEST(segment_guard_refuses_holes)
{
        /* 4 pages written, then page 1 punched (as a user's PUNCH_HOLE
         * loop does between mincore and the read): through the guard the
         * read of the hole fails and nothing is allocated; a page
         * fallocate(2) made is there, and is read. Unguarded, the same read
         * allocates the page again: what the guard is for. */
        int fd = memfd_with(8 * 4096);
        fill(fd, 0, 1 << 16);
        ck_assert_int_eq(ftruncate(fd, 8 * 4096), 0);
        ck_assert_int_eq(fallocate(fd, 0, 6 * 4096, 4096), 0);         /* page 6: allocated, never written */
        ck_assert_int_eq(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 4096), 0);
        uint64_t before = blocks(fd);
        int uffd = ng_seg_guard_open();
        if (uffd < 0) {
                close(fd);
                ck_abort_msg("userfaultfd refused here (%s): the guard cannot be tested", strerror(-uffd));
        }
        char *m = mmap(NULL, 8 * 4096, PROT_READ, MAP_SHARED, fd, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        ck_assert_int_eq(ng_seg_guard(uffd, m, 8 * 4096), 0);
        void *hole[] = { m + 4096 }, *data[] = { m }, *falloc[] = { m + 6 * 4096 };
        ck_assert_int_eq(ng_segment_touch(hole, 1), 0);
        ck_assert_uint_eq(blocks(fd), before);
        ck_assert_int_eq(ng_segment_touch(data, 1), 1);
        ck_assert_int_eq(ng_segment_touch(falloc, 1), 1);
        ck_assert_uint_eq(blocks(fd), before);
        munmap(m, 8 * 4096);
        close(uffd);
        m = mmap(NULL, 8 * 4096, PROT_READ, MAP_SHARED, fd, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        hole[0] = m + 4096;
        ck_assert_int_eq(ng_segment_touch(hole, 1), 1);
        ck_assert_uint_eq(blocks(fd), before + 8);     /* 4 KiB in 512-byte blocks */
        munmap(m, 8 * 4096);
        close(fd);
}
END_TEST

/* The owner's PUNCH_HOLE loop beside the exact walk, page by page from the
 * end: whatever the walk finds resident by mincore and reads a moment
 * later, a page punched meanwhile must stay a hole. */
struct puncher {
        int fd;
        unsigned pages;
        atomic_bool done;
};

static void *punch(void *arg)
{
        struct puncher *p = arg;
        for (unsigned i = p->pages; i-- > 0;) {
                (void) fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) i * 4096, 4096);
                for (volatile int spin = 0; spin < 2000; spin++)
                        ;
        }
        atomic_store(&p->done, true);
        return NULL;
}

START_TEST(segment_punched_meanwhile_stays_a_hole)
{
        int uffd = ng_seg_guard_open();
        if (uffd < 0)
                ck_abort_msg("userfaultfd refused here (%s)", strerror(-uffd));
        close(uffd);
        unsigned runs = 0;
        for (int round = 0; round < 20; round++) {
                struct puncher p = { .fd = memfd_with(4 << 20), .pages = 1024 };
                fill(p.fd, 0, 4 << 20);
                pthread_t t;
                ck_assert_int_eq(pthread_create(&t, NULL, punch, &p), 0);
                while (!atomic_load(&p.done)) {
                        struct ng_sample s;
                        ck_assert_int_eq(ng_sample_segment_fd(p.fd, 0, true, NULL, &s), 0);
                        ng_sample_done(&s);
                        runs++;
                }
                pthread_join(t, NULL);
                /* every page punched: none came back through a read of ours */
                ck_assert_msg(blocks(p.fd) == 0, "round %d: %" PRIu64 " blocks allocated again after %u walks",
                              round, blocks(p.fd), runs);
                close(p.fd);
        }
        ck_assert_uint_gt(runs, 20);
}
END_TEST

START_TEST(segment_fallocated_pages_count)
{
        /* 4 MiB written, 8 MiB fallocate(2)d and never written (as
         * PostgreSQL makes its dynamic shared memory): SEEK_DATA and
         * mincore pass the 8 MiB over, the blocks count them. The walk
         * probes outside the data through the guard: 3072 pages, every one
         * with a node, nothing allocated. */
        int fd = memfd_with(64 << 20);
        fill(fd, 0, 4 << 20);
        ck_assert_int_eq(fallocate(fd, 0, 16 << 20, 8 << 20), 0);
        uint64_t before = blocks(fd);
        ck_assert_uint_eq(before * 512, 12 << 20);
        int uffd = ng_seg_guard_open();
        if (uffd < 0) {
                close(fd);
                ck_abort_msg("userfaultfd refused here (%s)", strerror(-uffd));
        }
        close(uffd);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 64, false, NULL, &s), 0);
        ck_assert_uint_eq(s.asked, 3072);
        ck_assert_uint_eq(s.present, 3072);
        ck_assert_uint_eq(s.len, 12 << 20);
        ck_assert_uint_eq(s.unwalked_bytes, 0);
        ng_sample_done(&s);
        ck_assert_uint_eq(blocks(fd), before);
        close(fd);
}
END_TEST

START_TEST(segment_dense_is_one_extent)
{
        /* Every page written, the last one partly: the blocks cover the
         * size, so the file is one extent without the SEEK_DATA walk, and
         * gives what the walk gave (the partial page counted whole). */
        uint64_t size = (8 << 20) + 100;
        int fd = memfd_with(size);
        fill(fd, 0, 8 << 20);
        ck_assert_int_eq(pwrite(fd, "x", 1, (off_t) size - 1), 1);
        ck_assert_uint_ge(blocks(fd) * 512, size);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 0, true, NULL, &s), 0);
        ck_assert(s.exact);
        ck_assert_uint_eq(s.len, (8 << 20) + 4096);
        ck_assert_uint_eq(s.asked, (8 << 20) / 4096 + 1);
        ck_assert_uint_eq(s.present, s.asked);
        ng_sample_done(&s);
        close(fd);
}
END_TEST

START_TEST(segment_empty_is_known_empty)
{
        int fd = memfd_with(32 << 20);
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 4096, false, NULL, &s), 0);
        ck_assert(s.whole);
        ck_assert_uint_eq(s.len, 0);
        ck_assert_uint_eq(s.asked, 0);
        ck_assert_uint_eq(blocks(fd), 0);
        ng_sample_done(&s);
        close(fd);
}
END_TEST

/* A fake kernel: every third page of the file is not resident, and the
 * resident ones alternate between nodes 0 and 3 by page of our mapping. */
static int fake_mincore_thirds(void *addr, size_t len, unsigned char *vec)
{
        for (size_t i = 0; i < (len + 4095) / 4096; i++)
                vec[i] = ((uintptr_t) addr / 4096 + i) % 3 == 2 ? 0 : 1;
        return 0;
}

static long fake_two_nodes(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
        (void) nodes, (void) flags;
        ck_assert_int_eq(pid, 0);       /* our own mapping, never another process */
        for (unsigned long i = 0; i < count; i++)
                status[i] = (uintptr_t) pages[i] / 4096 % 2 ? 3 : 0;
        return 0;
}

static int fake_mincore_refused(void *addr, size_t len, unsigned char *vec)
{
        (void) addr, (void) len, (void) vec;
        errno = EPERM;
        return -1;
}

START_TEST(segment_fake_kernel)
{
        int fd = memfd_with(32 << 20);
        fill(fd, 0, 32 << 20);
        struct ng_seg_sample_ops ops = { fake_mincore_thirds, fake_two_nodes };
        struct ng_sample s;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 6000, false, &ops, &s), 0);
        double present = (double) s.present / s.asked;
        ck_assert_msg(present > 0.63 && present < 0.70, "present %.3f", present);
        ck_assert_uint_eq(s.n_np, 2);
        ck_assert_int_eq(s.np[0].node, 0);
        ck_assert_int_eq(s.np[1].node, 3);
        double share = (double) s.np[1].pages / s.present;
        ck_assert_msg(share > 0.45 && share < 0.55, "node 3 share %.3f", share);
        ng_sample_done(&s);
        /* Every page: exactly the resident two thirds, one mincore(2) a window. */
        ck_assert_int_eq(ng_sample_segment_fd(fd, 0, true, &ops, &s), 0);
        ck_assert(s.exact);
        ck_assert_uint_eq(s.asked, 8192);
        ck_assert_uint_ge(s.present, 8192 * 2 / 3 - 1);
        ck_assert_uint_le(s.present, 8192 * 2 / 3 + 1);
        ck_assert_uint_eq(s.np[0].pages + s.np[1].pages, s.present);
        ng_sample_done(&s);
        /* A refused call is an error, never "nothing resident". */
        struct ng_seg_sample_ops refused = { fake_mincore_refused, fake_two_nodes };
        s.asked = 77;
        ck_assert_int_eq(ng_sample_segment_fd(fd, 64, false, &refused, &s), -EPERM);
        ck_assert_uint_eq(s.asked, 77);
        close(fd);
        /* Not a regular file. */
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(ng_sample_segment_fd(p[0], 64, false, NULL, &s), -EINVAL);
        close(p[0]);
        close(p[1]);
}
END_TEST

/* ---- the walk over every resident page (segment-walk.c) ---- */

struct seen {
        int fd;
        uint64_t pages, calls, max_batch, last_pgoff;
        bool ordered, contents_ok;
        int fail_after;         /* the callback fails on this call (0: never) */
};

static int note_batch(void *userdata, void *const *addrs, const uint64_t *pgoff, size_t n)
{
        struct seen *v = userdata;
        v->calls++;
        if (v->fail_after && v->calls == (uint64_t) v->fail_after)
                return -EIO;
        v->max_batch = n > v->max_batch ? n : v->max_batch;
        for (size_t i = 0; i < n; i++) {
                /* each page holds its own index: the address is that page's */
                uint64_t at;
                memcpy(&at, addrs[i], sizeof(at));
                if (at != pgoff[i])
                        v->contents_ok = false;
                if (v->pages && pgoff[i] <= v->last_pgoff)
                        v->ordered = false;
                v->last_pgoff = pgoff[i];
                v->pages++;
        }
        return 0;
}

/* A memfd whose page i (of those written) holds i. */
static void fill_indexed(int fd, uint64_t first, uint64_t n)
{
        for (uint64_t i = first; i < first + n; i++)
                ck_assert_int_eq(pwrite(fd, &i, sizeof(i), (off_t) (i * 4096)), (ssize_t) sizeof(i));
}

START_TEST(walk_every_resident_page)
{
        /* 3 extents in 96 MiB: 300 pages, 1000 pages, 1 page; a 1 MiB window
         * and batches of 100, so extents span windows and windows batches. */
        int fd = memfd_with(96 << 20);
        fill_indexed(fd, 10, 300);
        fill_indexed(fd, 5000, 1000);
        fill_indexed(fd, 24000, 1);
        uint64_t before = blocks(fd);
        struct seen v = { .fd = fd, .ordered = true, .contents_ok = true };
        struct ng_seg_walk_opts o = { .batch_pages = 100, .window_bytes = 1 << 20, .batch = note_batch,
                                      .userdata = &v };
        struct ng_seg_walk_stats st;
        ck_assert_int_eq(ng_segment_walk(fd, &o, &st), 0);
        ck_assert_uint_eq(v.pages, 1301);
        ck_assert_uint_eq(st.resident_pages, 1301);
        ck_assert_uint_eq(st.data_pages, 1301);
        ck_assert_uint_eq(st.vanished_pages, 0);
        ck_assert(v.ordered);
        ck_assert(v.contents_ok);
        ck_assert_uint_le(v.max_batch, 100);
        /* 300 pages: 2 windows (from page 10 to the 1 MiB boundary and on),
         * 1000: 4, 1: 1 */
        ck_assert_uint_ge(st.windows, 7);
        ck_assert_uint_eq(blocks(fd), before);  /* no hole filled */
        /* A callback's error ends the walk and is returned. */
        v = (struct seen) { .fd = fd, .ordered = true, .contents_ok = true, .fail_after = 3 };
        ck_assert_int_eq(ng_segment_walk(fd, &o, &st), -EIO);
        ck_assert_uint_eq(v.calls, 3);
        close(fd);
}
END_TEST

START_TEST(walk_skips_what_is_not_resident)
{
        int fd = memfd_with(8 << 20);
        fill_indexed(fd, 0, 2048);
        struct seen v = { .fd = fd, .ordered = true, .contents_ok = true };
        struct ng_seg_walk_opts o = { .batch_pages = NG_SEG_BATCH, .batch = note_batch, .userdata = &v,
                                      .mincore = fake_mincore_thirds };
        struct ng_seg_walk_stats st;
        ck_assert_int_eq(ng_segment_walk(fd, &o, &st), 0);
        ck_assert_uint_eq(st.data_pages, 2048);
        ck_assert_uint_ge(v.pages, 2048 * 2 / 3 - 1);
        ck_assert_uint_le(v.pages, 2048 * 2 / 3 + 1);
        ck_assert(v.contents_ok);
        /* refused: an error, never "nothing resident" */
        o.mincore = fake_mincore_refused;
        ck_assert_int_eq(ng_segment_walk(fd, &o, &st), -EPERM);
        /* a batch of more pages than one read takes: read in chunks */
        o.mincore = NULL;
        o.batch_pages = NG_SEG_MAX_BATCH;
        v = (struct seen) { .fd = fd, .ordered = true, .contents_ok = true };
        ck_assert_int_eq(ng_segment_walk(fd, &o, &st), 0);
        ck_assert_uint_eq(v.pages, 2048);
        ck_assert_uint_eq(v.max_batch, 2048);
        ck_assert_uint_eq(v.calls, 1);
        ck_assert(v.contents_ok && v.ordered);
        /* bad options */
        o.batch_pages = NG_SEG_MAX_BATCH + 1;
        ck_assert_int_eq(ng_segment_walk(fd, &o, NULL), -EINVAL);
        o.batch_pages = 0;
        ck_assert_int_eq(ng_segment_walk(fd, &o, NULL), -EINVAL);
        close(fd);
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
        tcase_add_test(tc, segment_pages_nobody_maps);
        tcase_add_test(tc, segment_sparse_terabyte);
        tcase_add_test(tc, segment_fragmented_past_the_cap);
        tcase_add_test(tc, segment_guard_refuses_holes);
        tcase_add_test(tc, segment_fallocated_pages_count);
        tcase_add_test(tc, segment_punched_meanwhile_stays_a_hole);
        tcase_add_test(tc, segment_dense_is_one_extent);
        tcase_add_test(tc, segment_empty_is_known_empty);
        tcase_add_test(tc, segment_fake_kernel);
        tcase_add_test(tc, walk_every_resident_page);
        tcase_add_test(tc, walk_skips_what_is_not_resident);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

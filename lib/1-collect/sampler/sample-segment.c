/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiers 1 and 2 asked of the segment itself, not of an attacher: where are
 * the resident pages of a shmem file (/dev/shm, a SysV segment, anonymous
 * shared memory), whether or not a living process maps them
 * (docs/ARCHITECTURE.md, "Cost tiers").
 *
 * The file is mapped read-only in our own address space, one window at a
 * time, advised MADV_RANDOM (no readahead around the pages read). Which
 * pages hold data comes from lseek(SEEK_DATA/SEEK_HOLE), so a sparse
 * segment costs its extents, not its size; a file whose allocated blocks
 * cover its size (st_blocks) is one extent without that walk, which on a
 * dense shmem file looks up every page. Residency comes from
 * mincore(2), which on shmem looks the page up in the file's page cache (a
 * page no process maps counts too) and never faults. Only a page mincore
 * called resident is then read, one byte, through process_vm_readv(2) on
 * ourselves: the fault maps the page that is there (a read fault on a hole
 * would allocate one, which is why holes are never read), and a page
 * truncated meanwhile is an EFAULT rather than a SIGBUS. A page whose owner
 * punched a hole between mincore and the read is refused by the guard (a
 * userfaultfd in missing mode over our mapping, ng_seg_guard()), never
 * allocated again. Every page asked
 * (exact, or a file smaller than the sample) is the walk of
 * segment-walk.c, one mincore(2) call a window; a sample reads each chosen
 * page through a mapping of its own (struct run). move_pages(2) on our own
 * mapping, no target nodes, then names each page's node. Nothing is
 * written, nothing migrates, and the windows are unmapped before we return.
 *
 * Hugetlb files are refused (-EOPNOTSUPP): mincore there reports only the
 * caller's page tables, and a fault on a hole takes a page from the pool.
 */

#include <errno.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cleanup.h"
#include "sample.h"
#include "util.h"

/* Mapped at a time when sampling: our page tables for one window stay
 * under 2 MiB even when every sampled page is in a PMD of its own. */
#define WINDOW_BYTES (UINT64_C(1) << 30)
#define BATCH NG_SEG_BATCH

struct run {
        const struct ng_seg_sample_ops *ops;
        struct ng_sample *s;
        void *addrs[BATCH];
        int status[BATCH];
        size_t n;
        /* A sample, not every page: each page read is mapped on its own,
         * in slot n of area (BATCH pages reserved), so that the read fault
         * maps that page alone. In the window the kernel maps the resident
         * pages around it too ("fault-around", 16 with the default
         * fault_around_bytes), which then cost as much again to unmap:
         * most of a dense segment's sampling. One call empties the area. */
        char *area;
        uint64_t page;
        int uffd;               /* the guard (ng_seg_guard), or -errno */
};

static int reserve_area(struct run *u, int flags)
{
        void *a = mmap(u->area, BATCH * u->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
        if (a == MAP_FAILED)
                return -errno;
        u->area = a;
        return 0;
}

/* Done with the batch: the pages mapped in the area go. */
static void unmap_batch(struct run *u)
{
        if (u->area && u->n && reserve_area(u, MAP_FIXED) < 0) {
                munmap(u->area, BATCH * u->page);
                u->area = NULL; /* the next pages are read in the window */
        }
        u->n = 0;
}

static uint32_t sat32(uint64_t v)
{
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t) v;
}

/* The pages move_pages(2) named a node of, counted per node. */
static int count_nodes(struct ng_sample *s, const int *status, size_t n)
{
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (status[i] < 0)
                        continue;
                s->present = sat32((uint64_t) s->present + 1);
                r = ng_sample_count_node(s, status[i]);
        }
        return r;
}

/* The batch's addresses are resident by mincore: map them, ask their nodes. */
static int flush(struct run *u)
{
        ssize_t left = ng_segment_touch_all(u->addrs, NULL, u->n);
        if (left < 0) {
                unmap_batch(u);
                return (int) left;
        }
        u->n = (size_t) left;
        if (u->n && u->ops->move_pages(0, u->n, u->addrs, NULL, u->status, 0) < 0) {
                int r = -errno;
                unmap_batch(u);
                return r;
        }
        int r = count_nodes(u->s, u->status, u->n);
        unmap_batch(u);
        return r;
}

/* Maps the window holding file page first_page and asks every listed page
 * of it (sorted file page numbers, all inside the window). */
static int ask_window(int fd, uint64_t size, uint64_t page, uint64_t win_off, const uint64_t *pages, size_t n,
                      struct run *u)
{
        uint64_t win_len = size - win_off < WINDOW_BYTES ? size - win_off : WINDOW_BYTES;
        win_len = (win_len + page - 1) / page * page;
        void *base = mmap(NULL, win_len, PROT_READ, SEG_MAP, fd, (off_t) win_off);
        if (base == MAP_FAILED)
                return -errno;
        /* Only the pages asked are read: no readahead around them. Advice
         * only, so a refusal changes nothing asked. */
        (void) madvise(base, win_len, MADV_RANDOM);
        (void) ng_seg_guard(u->uffd, base, win_len);    /* a hole read is refused, never filled */
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                uint64_t off = pages[i] * page - win_off;
                unsigned char vec = 0;
                u->s->asked++;
                if (u->ops->mincore((char *) base + off, page, &vec) < 0) {
                        /* refused (a seccomp filter): unknown, never "none" */
                        r = -errno;
                        break;
                }
                if (!(vec & 1))
                        continue;       /* a hole, swapped out, or gone: not resident */
                void *at = (char *) base + off;
                if (u->area) {
                        at = mmap(u->area + u->n * page, page, PROT_READ, SEG_MAP | MAP_FIXED, fd,
                                  (off_t) (pages[i] * page));
                        if (at == MAP_FAILED) {
                                r = -errno;
                                break;
                        }
                        (void) ng_seg_guard(u->uffd, at, page);
                }
                u->addrs[u->n++] = at;
                if (u->n == BATCH)
                        r = flush(u);
        }
        if (r >= 0)
                r = flush(u);
        else
                unmap_batch(u);
        munmap(base, win_len);
        return r;
}

static int default_mincore(void *addr, size_t len, unsigned char *vec)
{
        return mincore(addr, len, vec);
}

static const struct ng_seg_sample_ops default_ops = { default_mincore, move_pages };

/* The file page numbers to ask: every page of the extents (exact), or k
 * spread over them, one at a random offset in each of k equal strata of the
 * data, so that a sparse file spends its budget where the data is. */
static int choose_pages(const struct ng_extent *ext, size_t n_ext, uint64_t page, uint64_t data_pages, uint64_t k,
                        uint64_t seed, uint64_t **ret)
{
        uint64_t *v = malloc((k ? k : 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        uint64_t rng = seed ^ UINT64_C(0x9e3779b97f4a7c15);
        size_t e = 0;
        uint64_t before = 0;    /* data pages in ext[0..e) */
        for (uint64_t i = 0; i < k; i++) {
                uint64_t lo = i * data_pages / k, hi = (i + 1) * data_pages / k;
                uint64_t d = lo + (hi > lo + 1 ? ng_sample_random(&rng) % (hi - lo) : 0);
                while (e < n_ext && d >= before + ext[e].len / page)
                        before += ext[e++].len / page;
                v[i] = ext[e].off / page + (d - before);
        }
        *ret = v;
        return 0;
}

/* Every page: the walk hands the resident ones over (segment-walk.c). */
struct every {
        const struct ng_seg_sample_ops *ops;
        struct ng_sample *s;
        int status[NG_SEG_BATCH];
};

static int count_batch(void *userdata, void *const *addrs, const uint64_t *pgoff, size_t n)
{
        struct every *e = userdata;
        (void) pgoff;
        if (e->ops->move_pages(0, n, (void **) addrs, NULL, e->status, 0) < 0)
                return -errno;
        return count_nodes(e->s, e->status, n);
}

static int ask_every(int fd, const struct ng_seg_sample_ops *ops, uint64_t page, struct ng_sample *s)
{
        struct every e = { .ops = ops, .s = s };
        struct ng_seg_walk_opts o = { .batch_pages = NG_SEG_BATCH, .batch = count_batch, .userdata = &e,
                                      .mincore = ops->mincore };
        struct ng_seg_walk_stats st;
        int r = ng_segment_walk(fd, &o, &st);
        /* the data walked, and the pages fallocate(2) made found outside
         * it; what could not be probed is said, never taken as none */
        s->asked = sat32(st.data_pages + st.fallocated_pages);
        s->len = (st.data_pages + st.fallocated_pages) * page;
        s->unwalked_bytes = st.unprobed_bytes;
        return r;
}

/* The policy the segment's new pages follow: its shared policy, asked at
 * its first page through a mapping of our own that no page ever enters
 * (get_mempolicy(2) with MPOL_F_ADDR looks the policy up, it faults
 * nothing). "" when it cannot be asked. */
static void ask_policy(int fd, uint64_t size, uint64_t page, struct ng_sample *s)
{
        if (size == 0)
                return;
        void *a = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
        if (a == MAP_FAILED)
                return;
        if (ng_segment_policy(NULL, a, s->policy, sizeof(s->policy)) < 0)
                s->policy[0] = '\0';
        munmap(a, page);
}

int ng_sample_segment_fd(int fd, unsigned k, bool exact, const struct ng_seg_sample_ops *ops,
                         struct ng_sample *ret)
{
        struct stat st;
        uint64_t page;
        if (!ops)
                ops = &default_ops;
        int r = ng_segment_stat(fd, &st, &page);        /* hugetlbfs: see the top of this file */
        if (r < 0)
                return r;
        if (!exact && k == 0)
                return -EINVAL;
        uint64_t size = (uint64_t) st.st_size;
        _cleanup_free_ struct ng_extent *ext = NULL;
        size_t n_ext;
        bool capped;
        r = ng_segment_extents(fd, &st, page, &ext, &n_ext, &capped);
        if (r < 0)
                return r;
        /* Fragmented past the extents followed: the last one is the rest of
         * the file, holes and all. The allocated blocks say how much data
         * there is; a sample spends its budget on the extents known to be
         * data, and says how much it left unknown. */
        uint64_t allocated = st.st_blocks > 0 ? (uint64_t) st.st_blocks * 512 : 0;
        if (capped && n_ext > 1 && !exact)
                n_ext--;
        uint64_t data_pages = 0;
        for (size_t i = 0; i < n_ext; i++)
                data_pages += ext[i].len / page;
        /* pages fallocate(2) made lie outside the data: only the walk of
         * every page probes for them (segment-walk.c) */
        bool falloc = !capped && allocated >= (data_pages + 1) * page;
        bool all = exact || k >= data_pages || falloc;
        struct ng_sample s = {
                .len = data_pages * page, .whole = true, .exact = exact,
                .unwalked_bytes = capped && !all && allocated > data_pages * page ? allocated - data_pages * page : 0,
                .dev_major = major(st.st_dev), .dev_minor = minor(st.st_dev), .inode = (uint64_t) st.st_ino,
        };
        ask_policy(fd, size, page, &s);
        if (all) {
                r = ask_every(fd, ops, page, &s);
                if (r < 0) {
                        ng_sample_done(&s);
                        return r;
                }
                /* every page walked, but the last extent was mostly holes:
                 * what holds data is what is allocated */
                if (capped && allocated && allocated / page < s.asked) {
                        s.asked = sat32(allocated / page);
                        s.len = allocated;
                }
                *ret = s;
                return 0;
        }
        _cleanup_free_ uint64_t *pages = NULL;
        r = choose_pages(ext, n_ext, page, data_pages, k, (uint64_t) st.st_ino, &pages);
        if (r < 0)
                return r;
        struct run u = { .ops = ops, .s = &s, .page = page, .uffd = ng_seg_guard_open() };
        if ((r = reserve_area(&u, 0)) < 0) {
                if (u.uffd >= 0)
                        close(u.uffd);
                ng_sample_done(&s);
                return r;
        }
        for (uint64_t i = 0; i < k && r >= 0;) {
                uint64_t win_off = pages[i] * page / WINDOW_BYTES * WINDOW_BYTES;
                uint64_t j = i;
                while (j < k && pages[j] * page < win_off + WINDOW_BYTES)
                        j++;
                r = ask_window(fd, size, page, win_off, pages + i, j - i, &u);
                i = j;
        }
        if (u.area)
                munmap(u.area, BATCH * page);
        if (u.uffd >= 0)
                close(u.uffd);
        if (r < 0) {
                ng_sample_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The resident pages of a shmem file (/dev/shm, a SysV segment, anonymous
 * shared memory), every one, mapped into our own address space a window at
 * a time: what the exact sampler counts and what rebalance moves
 * (docs/ARCHITECTURE.md, "Cost tiers" and "Corrections").
 *
 * Which pages hold data comes from lseek(SEEK_DATA/SEEK_HOLE)
 * (ng_segment_extents), residency of a whole window from one mincore(2)
 * call, which on shmem looks each page up in the file's page cache (a page
 * no process maps counts too) and never faults. Only a page mincore called
 * resident is then read, one byte, through process_vm_readv(2) on
 * ourselves, which maps the page that is there (a read fault on a hole
 * would allocate one: holes are never read), or, through the guard, a run
 * of them at once by MADV_POPULATE_READ; a page truncated meanwhile is
 * an EFAULT rather than a SIGBUS, and is left out; a page whose owner
 * punched a hole meanwhile is refused by the guard (ng_seg_guard(): a
 * userfaultfd in missing mode), never allocated again. While the caller's
 * function runs on a batch, those pages are mapped at the addresses given,
 * so move_pages(2) on pid 0 reaches them. The window is unmapped before
 * the next one: our page tables stay bounded by the window (2 KiB of page
 * table per MiB of 4 KiB pages), whatever the segment's size. Nothing is
 * written.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cleanup.h"
#include "sample.h"
#include "util.h"

/* Extents followed with SEEK_DATA before the rest of the file is taken as
 * one: a segment fragmented page by page costs a bounded walk. */
unsigned ng_seg_max_extents = 65536;

static int add_extent(struct ng_extent **v, size_t *n, uint64_t off, uint64_t end)
{
        if (ng_grow(v, NULL, *n, sizeof(**v), 0) < 0)
                return -ENOMEM;
        (*v)[(*n)++] = (struct ng_extent) { .off = off, .len = end - off };
        return 0;
}

/* Whether the data from lo on is [lo, lo + left) whole, left being the
 * allocated bytes not in an extent yet: nothing past it, or past the end,
 * and its last page data. Then no SEEK_HOLE walk is needed, which on shmem
 * looks up every page of the extent (a dense 1 GiB file: 262,144 lookups).
 * Pages fallocate(2) made are allocated but no data for SEEK_DATA: when
 * they lie past the data, the last page says so. */
static bool rest_is_one(int fd, uint64_t lo, uint64_t left, uint64_t size, uint64_t page)
{
        if (!left)
                return false;
        uint64_t end = lo + left < size ? lo + left : size, last = (end - 1) / page * page;
        if (last > lo && lseek(fd, (off_t) last, SEEK_DATA) != (off_t) last)
                return false;
        if (lo + left >= size)
                return true;
        return lseek(fd, (off_t) (lo + left), SEEK_DATA) < 0 && errno == ENXIO;
}

int ng_segment_extents(int fd, const struct stat *st, uint64_t page, struct ng_extent **ret, size_t *ret_n,
                       bool *ret_capped)
{
        bool capped = false;
        _cleanup_free_ struct ng_extent *v = NULL;
        size_t n = 0;
        uint64_t off = 0, size = (uint64_t) st->st_size;
        uint64_t left = st->st_blocks > 0 ? (uint64_t) st->st_blocks * 512 : 0;
        int r = 0;
        while (off < size && r >= 0) {
                off_t d = lseek(fd, (off_t) off, SEEK_DATA);
                if (d < 0) {
                        if (errno == ENXIO)
                                break;
                        if (n == 0 && errno == EINVAL) {
                                r = add_extent(&v, &n, 0, (size + page - 1) / page * page);
                                break;
                        }
                        r = -errno;
                        break;
                }
                uint64_t lo = (uint64_t) d / page * page;
                off_t h;
                if (n + 1 >= ng_seg_max_extents) {
                        h = (off_t) size;
                        capped = true;
                }
                else if (rest_is_one(fd, lo, left, size, page))
                        h = (off_t) (lo + left < size ? lo + left : size);
                else
                        h = lseek(fd, d, SEEK_HOLE);
                if (h < 0) {
                        r = -errno;
                        break;
                }
                uint64_t hi = ((uint64_t) h > size ? size : (uint64_t) h);
                hi = (hi + page - 1) / page * page;
                if (hi <= lo)
                        break;
                if (n && v[n - 1].off + v[n - 1].len >= lo)
                        v[n - 1].len = hi - v[n - 1].off;
                else
                        r = add_extent(&v, &n, lo, hi);
                left = left > hi - lo ? left - (hi - lo) : 0;
                off = hi;
        }
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        if (ret_capped)
                *ret_capped = capped;
        return 0;
}

int ng_segment_stat(int fd, struct stat *st, uint64_t *ret_page)
{
        long ps = sysconf(_SC_PAGESIZE);
        *ret_page = ps > 0 ? (uint64_t) ps : 4096;
        if (fstat(fd, st) < 0)
                return -errno;
        if (!S_ISREG(st->st_mode) || st->st_size < 0)
                return -EINVAL;
        /* hugetlbfs says its page size; shmem says the PMD size where it may
         * fold base pages into transparent hugepages (shmem_getattr) */
        struct statfs sfs;
        if (fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC)
                return 0;
        if ((uint64_t) st->st_blksize > *ret_page)
                return -EOPNOTSUPP;
        return 0;
}

bool ng_segment_named(int fd, const char *name)
{
        char link[64], buf[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, buf, sizeof(buf) - 1);
        if (k < 0 || (size_t) k >= sizeof(buf) - 1)
                return false;
        buf[k] = '\0';
        return strcmp(buf, name) == 0;
}

ssize_t ng_segment_touch(void *const *pages, size_t n)
{
        struct iovec remote[NG_SEG_BATCH];
        char sink[NG_SEG_BATCH];
        if (n > NG_SEG_BATCH)
                n = NG_SEG_BATCH;
        struct iovec local = { .iov_base = sink, .iov_len = n };
        for (size_t i = 0; i < n; i++)
                remote[i] = (struct iovec) { .iov_base = pages[i], .iov_len = 1 };
        ssize_t got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
        if (got < 0)
                return errno == EFAULT ? 0 : -errno;
        return got;
}

int ng_seg_guard_open(void)
{
        _cleanup_close_ int fd = (int) syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_SIGBUS };
        if (ioctl(fd, UFFDIO_API, &api) < 0 || !(api.features & UFFD_FEATURE_SIGBUS))
                return errno ? -errno : -EOPNOTSUPP;
        return ng_steal_fd(&fd);
}

int ng_seg_guard(int uffd, void *addr, size_t len)
{
        if (uffd < 0 || len == 0)
                return 0;
        struct uffdio_register reg = {
                .range = { .start = (uint64_t) (uintptr_t) addr, .len = len },
                .mode = UFFDIO_REGISTER_MODE_MISSING,
        };
        return ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

ssize_t ng_segment_touch_all(void **addrs, uint64_t *pgoff, size_t n)
{
        size_t done = 0;
        while (done < n) {
                size_t chunk = n - done < NG_SEG_BATCH ? n - done : NG_SEG_BATCH;
                ssize_t t = ng_segment_touch(addrs + done, chunk);
                if (t < 0)
                        return t;
                size_t got = (size_t) t;
                if (got < chunk) {
                        /* The page at done + got went: leave it out. */
                        size_t k = done + got, rest = n - k - 1;
                        memmove(addrs + k, addrs + k + 1, rest * sizeof(*addrs));
                        if (pgoff)
                                memmove(pgoff + k, pgoff + k + 1, rest * sizeof(*pgoff));
                        n--;
                }
                done += got;
        }
        return (ssize_t) n;
}

int ng_segment_policy(ng_get_mempolicy_fn get, void *addr, char *buf, size_t size)
{
        enum { NBITS = 1024 };  /* MAX_NUMNODES at its largest */
        unsigned long mask[NBITS / (8 * sizeof(unsigned long)) + 1] = {0};
        int mode = 0;
        long r = get ? get(&mode, mask, NBITS + 1, addr, MPOL_F_ADDR)
                     : get_mempolicy(&mode, mask, NBITS + 1, addr, MPOL_F_ADDR);
        if (r < 0)
                return errno ? -errno : -EIO;
        ng_mpol_format(mode, mask, NBITS, buf, size);
        return 0;
}

/* MADV_POPULATE_READ (Linux 5.14) maps a run of resident pages in one
 * call, where a read per page costs a trip through the kernel each. Used
 * only through the guard: a page of the run whose owner punched a hole
 * meanwhile fails the call (EFAULT) rather than being allocated. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

struct walk {
        const struct ng_seg_walk_opts *o;
        void **addrs;
        uint64_t *pgoff;        /* batch_pages of each */
        size_t n;
        struct ng_seg_walk_stats st;
        int uffd;               /* the guard, or -errno */
        bool probing;           /* a range outside the data: every page a hole or fallocated */
        bool populated;         /* the window's resident pages are mapped already */
        bool no_populate;       /* the kernel lacks MADV_POPULATE_READ */
};

/* The batch's pages are resident by mincore: map them by a read, leave out
 * those that went, hand the rest over. */
static int flush(struct walk *w)
{
        ssize_t left = w->populated ? (ssize_t) w->n : ng_segment_touch_all(w->addrs, w->pgoff, w->n);
        if (left < 0)
                return (int) left;
        /* probing, the pages left out are holes; else pages that went */
        if (!w->probing)
                w->st.vanished_pages += w->n - (size_t) left;
        else
                w->st.fallocated_pages += (size_t) left;
        size_t n = (size_t) left;
        w->n = 0;
        if (!n)
                return 0;
        w->st.resident_pages += n;
        w->st.batches++;
        return w->o->batch(w->o->userdata, w->addrs, w->pgoff, n);
}

/* Maps each run of the window's resident pages (vec) with one
 * MADV_POPULATE_READ: true when every run is mapped. A run that fails (a
 * page went: EFAULT; an older kernel: EINVAL, and then never again) leaves
 * the window to the read per page, which finds out which page went. */
static bool populate(struct walk *w, char *base, uint64_t pages, uint64_t page, const unsigned char *vec)
{
        if (w->no_populate)
                return false;
        for (uint64_t i = 0; i < pages;) {
                if (!(vec[i] & 1)) {
                        i++;
                        continue;
                }
                uint64_t j = i;
                while (j < pages && (vec[j] & 1))
                        j++;
                if (madvise(base + i * page, (j - i) * page, MADV_POPULATE_READ) < 0) {
                        if (errno == EINVAL || errno == ENOSYS)
                                w->no_populate = true;
                        return false;
                }
                i = j;
        }
        return true;
}

/* One window [off, off + len) of the file: mapped, asked, handed over in
 * batches, unmapped. */
static int walk_window(struct walk *w, int fd, uint64_t off, uint64_t len, uint64_t page, unsigned char *vec)
{
        void *base = mmap(NULL, len, PROT_READ, SEG_MAP, fd, (off_t) off);
        if (base == MAP_FAILED)
                return -errno;
        /* a hole read is refused, never filled: unguarded only where the
         * kernel refuses the guard (counted) */
        bool guarded = w->uffd >= 0 && ng_seg_guard(w->uffd, base, len) == 0;
        if (!guarded)
                w->st.unguarded_windows++;
        /* Only the pages asked are read: no readahead around them. Advice
         * only, so a refusal changes nothing asked. */
        (void) madvise(base, len, MADV_RANDOM);
        w->st.windows++;
        uint64_t pages = len / page;
        int r = 0;
        if (w->probing)         /* no page there is data: each is read, through the guard only */
                memset(vec, guarded ? 1 : 0, pages);
        else
                r = w->o->mincore(base, len, vec) < 0 ? -errno : 0;     /* refused: unknown, never "none" */
        if (w->probing && !guarded)
                w->st.unprobed_bytes += len;
        if (!w->probing)
                w->st.data_pages += pages;
        w->populated = r >= 0 && guarded && !w->probing && populate(w, base, pages, page, vec);
        for (uint64_t i = 0; i < pages && r >= 0; i++) {
                if (!(vec[i] & 1))
                        continue;       /* a hole, swapped out, or gone: not resident */
                w->addrs[w->n] = (char *) base + i * page;
                w->pgoff[w->n++] = off / page + i;
                if (w->n == w->o->batch_pages)
                        r = flush(w);
        }
        if (r >= 0)
                r = flush(w);
        w->n = 0;
        w->populated = false;
        munmap(base, len);
        return r;
}

static int default_mincore(void *addr, size_t len, unsigned char *vec)
{
        return mincore(addr, len, vec);
}

/* The blocks count more than the data extents hold: pages fallocate(2)
 * made, which SEEK_DATA and mincore(2) pass over. Every page outside the
 * extents is read through the guard (a hole fails, such a page maps) when
 * that is at most NG_SEG_PROBE_MAX_BYTES and the guard works; else the
 * allocated bytes not found are left unprobed. */
static int probe_outside(struct walk *w, int fd, const struct stat *st, uint64_t page, uint64_t window,
                         const struct ng_extent *ext, size_t n_ext, unsigned char *vec)
{
        uint64_t size = ((uint64_t) st->st_size + page - 1) / page * page, data = 0;
        uint64_t allocated = st->st_blocks > 0 ? (uint64_t) st->st_blocks * 512 : 0;
        for (size_t e = 0; e < n_ext; e++)
                data += ext[e].len;
        if (allocated < data + page)
                return 0;
        if (w->uffd < 0 || size - data > NG_SEG_PROBE_MAX_BYTES) {
                w->st.unprobed_bytes = allocated - data;
                return 0;
        }
        w->probing = true;
        int r = 0;
        for (size_t e = 0; e <= n_ext && r >= 0; e++) {
                uint64_t lo = e ? ext[e - 1].off + ext[e - 1].len : 0, hi = e < n_ext ? ext[e].off : size;
                for (uint64_t off = lo; off < hi && r >= 0; off += window)
                        r = walk_window(w, fd, off, hi - off < window ? hi - off : window, page, vec);
        }
        w->probing = false;
        /* what the guard refused to probe is unknown, never none */
        if (w->st.unprobed_bytes > allocated - data)
                w->st.unprobed_bytes = allocated - data;
        return r;
}

int ng_segment_walk(int fd, const struct ng_seg_walk_opts *o, struct ng_seg_walk_stats *ret)
{
        struct stat st;
        uint64_t page;
        if (!o || !o->batch || o->batch_pages == 0 || o->batch_pages > NG_SEG_MAX_BATCH)
                return -EINVAL;
        int r = ng_segment_stat(fd, &st, &page);
        if (r < 0)
                return r;
        uint64_t window = o->window_bytes ? o->window_bytes / page * page : NG_SEG_WINDOW_BYTES;
        if (window == 0)
                return -EINVAL;
        _cleanup_free_ struct ng_extent *ext = NULL;
        size_t n_ext;
        r = ng_segment_extents(fd, &st, page, &ext, &n_ext, NULL);   /* capped: the rest walked, holes and all */
        if (r < 0)
                return r;
        struct ng_seg_walk_opts opts = *o;
        if (!opts.mincore)
                opts.mincore = default_mincore;
        struct walk w = { .o = &opts, .addrs = calloc(opts.batch_pages, sizeof(void *)),
                          .pgoff = calloc(opts.batch_pages, sizeof(uint64_t)), .uffd = ng_seg_guard_open() };
        _cleanup_free_ unsigned char *vec = malloc(window / page);
        if (!vec || !w.addrs || !w.pgoff)
                r = -ENOMEM;
        for (size_t e = 0; e < n_ext && r >= 0; e++)
                for (uint64_t off = ext[e].off; off < ext[e].off + ext[e].len && r >= 0; off += window) {
                        uint64_t end = ext[e].off + ext[e].len;
                        r = walk_window(&w, fd, off, end - off < window ? end - off : window, page, vec);
                }
        if (r >= 0)
                r = probe_outside(&w, fd, &st, page, window, ext, n_ext, vec);
        free(w.addrs);
        free(w.pgoff);
        if (w.uffd >= 0)
                close(w.uffd);
        if (ret)
                *ret = w.st;
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Tier 1 of the cost model: where a mapping's pages are, from move_pages(2)
 * asked about K addresses of one process -- no page-table walk, no fault,
 * no allocation (nodes == NULL only queries). struct ng_sample and
 * ng_move_pages_fn are public, in ng-sample.h. Internal to the library:
 * not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ng-sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* Queries at most k addresses spread evenly over [start, start + len), one
 * per page of page_bytes (4096 when unknown). fn NULL means move_pages(2).
 * Returns 0 or -errno (-ESRCH: the process is gone, -EPERM). */
int ng_sample_range(pid_t pid, uint64_t start, uint64_t len, uint64_t page_bytes, unsigned k,
                    ng_move_pages_fn fn, struct ng_sample *ret);
void ng_sample_done(struct ng_sample *s);
/* xorshift64*: deterministic per seed, so two polls of an unchanged segment
 * sample the same pages and report the same shares. */
uint64_t ng_sample_random(uint64_t *state);
/* One more sampled page on node, s->np kept in node order: 0 or -ENOMEM. */
int ng_sample_count_node(struct ng_sample *s, int node);

/* What ng_sample_segment_fd() asks the kernel through; swappable for tests
 * (NULL: mincore(2) and move_pages(2)). */
struct ng_seg_sample_ops {
        int (*mincore)(void *addr, size_t len, unsigned char *vec);
        ng_move_pages_fn move_pages;
};

/* Asks the shmem file behind fd (a /dev/shm file, or a SysV or anonymous
 * shared segment opened through /proc/PID/map_files) where its resident
 * pages are: k pages spread over the bytes that hold data, or every page
 * when exact. Maps the file read-only in our address space a window at a
 * time and reads one byte of a page only when mincore(2) said it is
 * resident: it never allocates a page, never writes, never migrates
 * (sample-segment.c says how). ret->whole is set; ret->len is the bytes
 * holding data, ret->asked the pages asked, ret->present those resident
 * with a node. Returns 0, -EOPNOTSUPP for a hugetlbfs file, -EINVAL for
 * anything but a regular file, or -errno (-EPERM: a call was refused). */
int ng_sample_segment_fd(int fd, unsigned k, bool exact, const struct ng_seg_sample_ops *ops,
                         struct ng_sample *ret);

/* ---- every resident page of a shmem file, window by window
 * (segment-walk.c): what the exact sampler counts and rebalance moves ---- */

/* Pages read by one process_vm_readv(2) call (its IOV_MAX), the bytes of
 * the file mapped at a time by default (our page tables for one window stay
 * under 128 KiB), and the most pages handed over at a time: a window's. */
#define NG_SEG_BATCH 1024
#define NG_SEG_WINDOW_BYTES (UINT64_C(64) << 20)
#define NG_SEG_MAX_BATCH 16384

struct ng_extent {
        uint64_t off, len;      /* bytes, page aligned */
};

/* The page-aligned ranges of [0, st_size) of fd that hold data. A file
 * system without SEEK_DATA gives the whole file as one. The allocated
 * blocks (which count swapped-out pages, as SEEK_DATA does) say when the
 * rest of the data is one extent: a dense file costs no page-by-page
 * SEEK_HOLE walk. Past 65,536 extents the rest of the file is one, holes
 * and all: *ret_capped (may be NULL) says so, and that last extent is not
 * all data. 0 or -errno. */
int ng_segment_extents(int fd, const struct stat *st, uint64_t page, struct ng_extent **ret, size_t *ret_n,
                       bool *ret_capped);
/* That bound on the extents followed (65,536; tests lower it). */
extern unsigned ng_seg_max_extents;

/* fstat(2) of a shmem file to ask of itself: a regular file in pages of
 * *ret_page bytes (the system's page size). 0, -EINVAL for anything but a
 * regular file, -EOPNOTSUPP for a hugetlbfs file (mincore there reads the
 * caller's page tables, and a fault on a hole takes a page from the pool),
 * or fstat's -errno. */
int ng_segment_stat(int fd, struct stat *st, uint64_t *ret_page);

/* Whether the file open at fd bears the name the kernel gives it in a maps
 * line, " (deleted)" included ("/SYSV0052e2c1 (deleted)"): its
 * /proc/self/fd link. A SysV segment's inode is its shmid, on the kernel's
 * internal shm mount where every memfd sits too, numbered from one counter
 * since boot that a shmid may be ahead of: a user's memfd may reach the
 * device and inode of someone else's segment, never its name (the kernel
 * puts "memfd:" first). */
bool ng_segment_named(int fd, const char *name);

/* Reads one byte of each of the first n (at most NG_SEG_BATCH) pages
 * through the kernel, so that a page that went away fails that read
 * (EFAULT) instead of raising SIGBUS. Returns how many of the first pages
 * were read (the caller leaves out the one after), or -errno when the call
 * itself is refused. */
ssize_t ng_segment_touch(void *const *pages, size_t n);
/* ng_segment_touch() of all n pages, NG_SEG_BATCH a call, leaving out
 * (compacting addrs, and pgoff when not NULL) each page that went away:
 * how many are left, or -errno when a call is refused. */
ssize_t ng_segment_touch_all(void **addrs, uint64_t *pgoff, size_t n);

/*
 * The guard that makes a read of a hole fail rather than allocate a page:
 * a userfaultfd(2) with UFFD_FEATURE_SIGBUS, over which our mappings of a
 * segment are registered in missing mode. A fault on a page the file holds
 * maps it as before (a page fallocate(2) made included); a fault on a
 * hole, which mincore(2) said was resident only a moment before (its owner
 * punched it meanwhile), is refused, so the read through the kernel fails
 * with EFAULT and the page is left out. ng_seg_guard_open() returns the
 * descriptor, or -errno where the kernel or a seccomp filter refuses
 * userfaultfd (then reads go unguarded, as before 5.x had it);
 * ng_seg_guard() registers [addr, addr + len) (0, or -errno), a no-op for
 * a negative descriptor.
 */
int ng_seg_guard_open(void);
/* How a segment is mapped to be read: privately, read-only. A page read
 * through it is the file's own page (nothing is ever written, so nothing
 * is copied), and a private mapping may be registered with the guard (a
 * shared one of a file opened read-only may not: userfaultfd wants
 * VM_MAYWRITE). The segment's shared policy is set and asked through a
 * shared mapping of its own. */
#define SEG_MAP MAP_PRIVATE
int ng_seg_guard(int uffd, void *addr, size_t len);

/* The function get_mempolicy(2) is asked through (NULL: the kernel's). */
typedef long (*ng_get_mempolicy_fn)(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr,
                                    unsigned long flags);
/* The policy of the shmem page mapped at addr in our address space (the
 * segment's shared policy, "default" without one), as numa_maps writes a
 * policy ("interleave:0-3"), asked with MPOL_F_ADDR, which faults nothing.
 * 0 or -errno. */
int ng_segment_policy(ng_get_mempolicy_fn get, void *addr, char *buf, size_t size);

struct ng_seg_walk_opts {
        size_t batch_pages;             /* 1..NG_SEG_MAX_BATCH */
        uint64_t window_bytes;          /* 0: NG_SEG_WINDOW_BYTES */
        /* Called with n resident pages, mapped at addrs in our address
         * space while it runs, pgoff their page index in the file (file
         * order). Its error (<0) ends the walk and is returned. */
        int (*batch)(void *userdata, void *const *addrs, const uint64_t *pgoff, size_t n);
        void *userdata;
        int (*mincore)(void *addr, size_t len, unsigned char *vec);    /* NULL: mincore(2) */
};

struct ng_seg_walk_stats {
        uint64_t data_pages;            /* pages of the data extents asked */
        uint64_t resident_pages;        /* handed over */
        uint64_t vanished_pages;        /* resident by mincore, gone by the read */
        uint64_t windows, batches;
        uint64_t unguarded_windows;     /* read without the guard (ng_seg_guard): refused by the kernel */
        /* Pages fallocate(2) made and nobody wrote yet: allocated (the
         * blocks count them) but neither data for SEEK_DATA nor resident
         * for mincore(2). Probed through the guard outside the data
         * extents when the blocks say there are some (a hole fails, such a
         * page maps): found, and the allocated bytes left unprobed (more
         * than NG_SEG_PROBE_MAX_BYTES outside the data, or no guard). */
        uint64_t fallocated_pages;
        uint64_t unprobed_bytes;
};

/* Most of a file outside its data extents probed for fallocated pages. */
#define NG_SEG_PROBE_MAX_BYTES (UINT64_C(4) << 30)

/* Hands over every resident page of the shmem file behind fd, in file
 * order, never faulting a hole and never writing. Returns 0, -EOPNOTSUPP
 * for a hugetlbfs file, -EINVAL for anything but a regular file, a
 * refused call's -errno, or the callback's error; *ret (may be NULL) has
 * the counts so far. */
int ng_segment_walk(int fd, const struct ng_seg_walk_opts *o, struct ng_seg_walk_stats *ret);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

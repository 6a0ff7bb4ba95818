/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rebalance through the segment's own file, in a child process: the
 * mover. A page migration unmaps the page from every process that maps it
 * and flushes each one's TLB; for the process that runs the migration, its
 * own mapping of the page is one it is using, so each page moved costs it
 * a flush of its own translations while it works, where a process that is
 * asleep costs nothing (its address space is loaded on no CPU). Measured
 * in a 2-node guest (256 MiB of a file nobody maps, moved to the other
 * node, best of six): move_pages(2) through our own mapping 1.48 s,
 * mbind(2) with MPOL_MF_MOVE_ALL through it 1.26 s, the kernel's
 * migrate_pages(2) of a sleeping process that maps the file 0.65 s, and
 * move_pages(2) on the addresses of a sleeping child that maps each window
 * 0.70 s.
 *
 * So the windows are mapped by a child of ours (fork(2): the same
 * credentials; it dies with us), which walks the file as segment-walk.c
 * does -- residency from mincore(2), only resident pages mapped, each hole
 * refused by its own userfaultfd guard, nothing written -- and hands each
 * batch over: the page addresses, in its address space, in memory both
 * share, then a byte on a pipe. It sleeps on the pipe while we ask and
 * move those pages through move_pages(2) on its pid, and unmaps the window
 * once we answer. Its page tables, not ours, hold the window.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "act-rebalance-internal.h"
#include "cleanup.h"
#include "sample.h"

/* What the child hands over, in memory both processes map. */
struct handover {
        size_t n;                       /* pages in this batch */
        int rc;                         /* the walk's return, at the end */
        struct ng_seg_walk_stats st;    /* its statistics, at the end */
        void *addrs[NG_SEG_MAX_BATCH];
        uint64_t pgoff[NG_SEG_MAX_BATCH];
};

struct child {
        struct handover *h;
        int to_parent, from_parent;
};

static void handover_unmapp(struct handover **h)
{
        if (*h != MAP_FAILED)
                munmap(*h, sizeof(**h));
}

static void pipe_closep(int (*fds)[2])
{
        ng_closep(&(*fds)[0]);
        ng_closep(&(*fds)[1]);
}

static int read_full(int fd, void *buf, size_t len)
{
        for (size_t done = 0; done < len;) {
                ssize_t k = read(fd, (char *) buf + done, len - done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EPIPE;
                done += (size_t) k;
        }
        return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
        for (size_t done = 0; done < len;) {
                ssize_t k = write(fd, (const char *) buf + done, len - done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EPIPE;
                done += (size_t) k;
        }
        return 0;
}

/* In the child: one batch handed over, then asleep until the parent's
 * answer (its batch function's return). */
static int child_batch(void *userdata, void *const *addrs, const uint64_t *pgoff, size_t n)
{
        struct child *c = userdata;
        memcpy(c->h->addrs, addrs, n * sizeof(*addrs));
        memcpy(c->h->pgoff, pgoff, n * sizeof(*pgoff));
        c->h->n = n;
        int rc, r = write_full(c->to_parent, "B", 1);
        if (r >= 0)
                r = read_full(c->from_parent, &rc, sizeof(rc));
        return r < 0 ? r : rc;
}

static _Noreturn void child_main(int fd, const struct ng_seg_walk_opts *o, struct child *c)
{
        /* no older than its parent: gone with it */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        struct ng_seg_walk_opts co = *o;
        co.batch = child_batch;
        co.userdata = c;
        c->h->rc = ng_segment_walk(fd, &co, &c->h->st);
        (void) write_full(c->to_parent, "E", 1);
        _exit(0);
}

int ng_rebalance_walk_mover(int fd, const struct ng_seg_walk_opts *o, pid_t *ret_pid, struct ng_seg_walk_stats *ret)
{
        if (!o || !o->batch || o->batch_pages == 0 || o->batch_pages > NG_SEG_MAX_BATCH || !ret_pid)
                return -EINVAL;
        _ng_cleanup_(handover_unmapp) struct handover *h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE,
                                                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (h == MAP_FAILED)
                return -errno;
        _ng_cleanup_(pipe_closep) int up[2] = { -1, -1 }, down[2] = { -1, -1 };
        if (pipe2(up, O_CLOEXEC) < 0 || pipe2(down, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                struct child c = { .h = h, .to_parent = up[1], .from_parent = down[0] };
                close(up[0]);
                close(down[1]);
                child_main(fd, o, &c);
        }
        close(up[1]);
        close(down[0]);
        up[1] = down[0] = -1;
        *ret_pid = pid;
        int r;
        for (;;) {
                char what;
                r = read_full(up[0], &what, 1);
                if (r < 0) {
                        r = -EIO;       /* the child died mid-walk */
                        break;
                }
                if (what == 'E') {
                        r = h->rc;
                        if (ret)
                                *ret = h->st;
                        break;
                }
                size_t n = h->n <= o->batch_pages ? h->n : 0;
                int rc = n ? o->batch(o->userdata, h->addrs, h->pgoff, n) : -EIO;
                r = write_full(down[1], &rc, sizeof(rc));
                if (r < 0) {
                        r = -EIO;
                        break;
                }
        }
        kill(pid, SIGKILL);     /* done, or a walk to stop: nothing of it is needed */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        *ret_pid = 0;
        return r;
}

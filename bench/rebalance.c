/* rebalance -- what moving a segment's pages costs numaguard, against the
 * kernel's own migration of the same pages, in the same run.
 *
 *   rebalance [MIB [ROUNDS]]   (default 1024 and 3; as root, on a host
 *                              with two memory nodes)
 *
 * Two shmem files (memfd) of MIB each are filled on the first memory node A
 * and left mapped by no process. Then numaguard's count alone, and ROUNDS
 * rounds, each moving both files to the other node (A to B, then back):
 *
 *   count      its dry run: the exact count of the pages per node, the
 *              first of the run's two passes (the same walk, no move)
 *   numaguard  ng_rebalance_run() moves every resident page of the first to
 *              node B through a mapping of the file in its mover, a child
 *              process (act-rebalance-mover.c; the walk of segment-walk.c,
 *              one 64 MiB window at a time), no rate limit; a process of
 *              ours reads our VmPTE and the mover's every millisecond: the
 *              peak of numaguard's page tables while it runs.
 *   kernel     a child maps the second file and reads every page (as a
 *              database's attacher does), then migrate_pages(2) moves all of
 *              the child's pages from A to B: the physical limit, with the
 *              page tables already there.
 *
 * The two take turns within each round, so what else runs on the host
 * weighs on both alike; the ratio is of their medians over the rounds.
 * The kernel's per-node count of each file's pages after every move (the
 * same move_pages(2) query on a fresh mapping) is checked: every page must
 * be on the round's destination. Prints one line per move, the medians and
 * the ratio; exit 0, or 1 when a move did not happen. One memory node: says
 * so and exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ng-act-rebalance.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static long vm_pte_kib(pid_t pid)
{
        char path[64], line[256];
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "r");
        long v = -1;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "VmPTE: %ld kB", &v) == 1)
                        break;
        if (f)
                fclose(f);
        return v;
}

/* The kernel's attacher: a child of ours whose page tables are not
 * numaguard's. */
static pid_t attacher = -1;

/* Our VmPTE and our children's but the sampler's and the attacher's
 * (numaguard's mover maps the windows: act-rebalance-mover.c), from
 * /proc/PID/task/PID/children. */
static long pte_with_children(pid_t parent)
{
        long sum = vm_pte_kib(parent);
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) parent, (int) parent);
        FILE *f = fopen(path, "r");
        int pid;
        while (f && fscanf(f, "%d", &pid) == 1) {
                long v = pid != getpid() && pid != attacher ? vm_pte_kib(pid) : -1;
                sum += v > 0 ? v : 0;
        }
        if (f)
                fclose(f);
        return sum;
}

/* A process of its own reads our VmPTE and our children's every
 * millisecond until told to stop (SIGTERM), then writes the peak to fd: a
 * thread of ours would make every migration's TLB flush reach a second
 * CPU, which numaguardctl never has. */
static pid_t start_sampler(int fd)
{
        pid_t parent = getpid(), pid = fork();
        if (pid != 0)
                return pid;
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        long peak = -1;
        struct timespec tick = { 0, 1000000 };
        for (;;) {
                long v = pte_with_children(parent);
                peak = v > peak ? v : peak;
                if (sigtimedwait(&set, NULL, &tick) == SIGTERM)
                        break;
        }
        if (write(fd, &peak, sizeof(peak)) != sizeof(peak))
                _exit(1);
        _exit(0);
}

static long stop_sampler(pid_t pid, int fd)
{
        long peak = -1;
        kill(pid, SIGTERM);
        if (read(fd, &peak, sizeof(peak)) != sizeof(peak))
                peak = -1;
        waitpid(pid, NULL, 0);
        return peak;
}

/* A memfd of bytes, every page written on node a. */
static int filled(size_t bytes, int a)
{
        int fd = memfd_create("ng-bench-rebalance", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t) bytes) < 0)
                return -1;
        char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
                return -1;
        unsigned long mask = 1UL << a;
        if (mbind(m, bytes, MPOL_BIND, &mask, sizeof(mask) * 8, 0) < 0)
                return -1;
        for (size_t i = 0; i < bytes; i += 4096)
                m[i] = (char) i;
        munmap(m, bytes);
        return fd;
}

/* Pages of the file on node, asked through a fresh mapping that faults
 * only what is there (read of resident pages: every page is). */
static size_t on_node(int fd, size_t bytes, int node)
{
        char *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
        size_t n = bytes / 4096, count = 0;
        void **addrs = malloc(n * sizeof(*addrs));
        int *status = malloc(n * sizeof(*status));
        if (m == MAP_FAILED || !addrs || !status)
                return 0;
        volatile char sink = 0;
        for (size_t i = 0; i < n; i++) {
                addrs[i] = m + i * 4096;
                sink += m[i * 4096];
        }
        (void) sink;
        if (move_pages(0, n, addrs, NULL, status, 0) == 0)
                for (size_t i = 0; i < n; i++)
                        count += status[i] == node;
        munmap(m, bytes);
        free(addrs);
        free(status);
        return count;
}

/* numaguard's plan for the file fd: every page from node src to dst */
static void plan_for(struct ng_rebalance_plan *p, int fd, int src, int dst)
{
        struct stat st;
        memset(p, 0, sizeof(*p));
        fstat(fd, &st);
        snprintf(p->label, sizeof(p->label), "bench memfd");
        p->page_bytes = 4096;
        p->via = NG_REBALANCE_VIA_SEGMENT;
        snprintf(p->seg_path, sizeof(p->seg_path), "/proc/self/fd/%d", fd);
        p->seg_follow = true;
        p->dev_major = major(st.st_dev);
        p->dev_minor = minor(st.st_dev);
        p->inode = (uint64_t) st.st_ino;
        p->n_nodes = 2;
        p->nodes[0] = (struct ng_rebalance_node) { .node = src < dst ? src : dst, .avail_pages = UINT64_MAX / 2 };
        p->nodes[1] = (struct ng_rebalance_node) { .node = src < dst ? dst : src, .avail_pages = UINT64_MAX / 2 };
        p->nodes[src < dst ? 1 : 0].dest = true;
        p->dest[0] = dst;
        p->n_dest = 1;
        p->verdict = NG_OUTCOME_DRY_RUN;
}

/* A child that maps the file and reads every page (as a database's
 * attacher does), then sleeps: what the kernel's migrate_pages(2) moves. */
static pid_t start_attacher(int fd, size_t bytes)
{
        int pipefd[2];
        if (pipe(pipefd) < 0)
                return -1;
        pid_t child = fork();
        if (child == 0) {
                char *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
                volatile char sink = 0;
                for (size_t i = 0; m != MAP_FAILED && i < bytes; i += 4096)
                        sink += m[i];
                (void) sink;
                if (write(pipefd[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        char c;
        bool ok = child > 0 && read(pipefd[0], &c, 1) == 1;
        close(pipefd[0]);
        close(pipefd[1]);
        return ok ? child : -1;
}

static int cmp_double(const void *x, const void *y)
{
        double a = *(const double *) x, b = *(const double *) y;
        return a < b ? -1 : a > b;
}

static double median(const double *v, int n)
{
        double s[16];
        memcpy(s, v, (size_t) n * sizeof(*s));
        qsort(s, (size_t) n, sizeof(*s), cmp_double);
        return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
        size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024, bytes = mib << 20, pages = bytes / 4096;
        int rounds = argc > 2 ? atoi(argv[2]) : 3;
        if (mib == 0 || rounds < 1 || rounds > 16) {
                fprintf(stderr, "usage: rebalance [MIB [ROUNDS]] (ROUNDS 1 to 16)\n");
                return 2;
        }
        if (numa_available() < 0 || numa_num_configured_nodes() < 2) {
                printf("*** rebalance: one memory node here: nothing moves (run it on a NUMA host or guest)\n");
                return 0;
        }
        int a = -1, b = -1;
        for (int n = 0; n <= numa_max_node() && b < 0; n++)
                if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned) n)) {
                        if (a < 0)
                                a = n;
                        else
                                b = n;
                }
        /* Node B's memory touched once before anything is timed: a guest's
         * RAM that was never touched costs the hypervisor a fault per page,
         * which the first move there would pay and the second would not. */
        int warm = filled(2 * bytes, b);
        if (warm >= 0)
                close(warm);
        int f1 = filled(bytes, a), f2 = filled(bytes, a);
        if (f1 < 0 || f2 < 0) {
                perror("rebalance: filling the files");
                return 1;
        }
        printf("# %zu MiB on node %d, moved between nodes %d and %d, %d rounds: %zu and %zu pages there before\n",
               mib, a, a, b, rounds, on_node(f1, bytes, a), on_node(f2, bytes, a));

        static struct ng_rebalance_plan p;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        if (ng_action_result_new(&res) < 0) {
                perror("rebalance: the result");
                return 1;
        }
        struct ng_rebalance_stats rs;
        plan_for(&p, f1, a, b);
        struct ng_rebalance_opts o = ng_rebalance_opts_for(&p);
        o.rate_bytes_per_sec = 0;
        /* its exact count alone (a dry run): the first of its two passes */
        o.dry_run = true;
        double t0 = now_s();
        ng_rebalance_run(&p, &o, NULL, &rs, res);
        printf("numaguard's count alone (--dry-run): %.3f s, %llu resident pages\n", now_s() - t0,
               (unsigned long long) p.resident_pages);
        o.dry_run = false;

        pid_t child = attacher = start_attacher(f2, bytes);
        if (child < 0) {
                perror("rebalance: the kernel's attacher");
                return 1;
        }
        struct bitmask *from = numa_allocate_nodemask(), *to = numa_allocate_nodemask();
        double ng_s[16], k_s[16];
        long peak = -1, pte0 = vm_pte_kib(getpid());
        bool all_moved = true;
        for (int i = 0; i < rounds; i++) {
                int src = i % 2 ? b : a, dst = i % 2 ? a : b;
                /* numaguard: its own mapping, in its mover, of a file nobody maps */
                plan_for(&p, f1, src, dst);
                o = ng_rebalance_opts_for(&p);
                o.rate_bytes_per_sec = 0;
                int pfd[2];
                if (pipe(pfd) < 0)
                        return 1;
                pid_t smp = start_sampler(pfd[1]);
                usleep(20000);
                t0 = now_s();
                int r = ng_rebalance_run(&p, &o, NULL, &rs, res);
                ng_s[i] = now_s() - t0;
                long pk = stop_sampler(smp, pfd[0]);
                close(pfd[0]);
                close(pfd[1]);
                peak = pk > peak ? pk : peak;
                size_t ng_on = on_node(f1, bytes, dst);
                printf("round %d numaguard %d->%d: %.3f s, moved %llu pages (%s: %s), %zu of %zu pages on node %d "
                       "after, peak page tables %ld kB with its mover's, %llu windows, %llu move_pages calls, "
                       "%llu busy\n",
                       i + 1, src, dst, ng_s[i], (unsigned long long) rs.moved_pages, ng_outcome_name(res->outcome),
                       r < 0 ? strerror(-r) : "ok", ng_on, pages, dst, pk, (unsigned long long) rs.windows,
                       (unsigned long long) rs.move_calls, (unsigned long long) rs.busy_pages);
                /* the kernel: migrate_pages(2) of a process that maps every page */
                numa_bitmask_clearall(from);
                numa_bitmask_clearall(to);
                numa_bitmask_setbit(from, (unsigned) src);
                numa_bitmask_setbit(to, (unsigned) dst);
                t0 = now_s();
                long left = migrate_pages(child, from->size + 1, from->maskp, to->maskp);
                k_s[i] = now_s() - t0;
                size_t k_on = on_node(f2, bytes, dst);
                printf("round %d kernel    %d->%d: %.3f s, migrate_pages(2) of a process that maps every page: "
                       "%ld not moved, %zu of %zu pages on node %d after\n",
                       i + 1, src, dst, k_s[i], left, k_on, pages, dst);
                all_moved = all_moved && ng_on == pages && k_on == pages;
        }
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        double ng_m = median(ng_s, rounds), k_m = median(k_s, rounds);
        printf("medians over %d rounds: numaguard %.3f s, kernel %.3f s (page tables %ld kB before)\n", rounds, ng_m,
               k_m, pte0);
        printf("ratio: numaguard / kernel = %.2f (target: at most 1.5); numaguard's peak page tables %ld kB "
               "(target: under 4096 kB)\n", k_m > 0 ? ng_m / k_m : 0, peak);
        return all_moved ? 0 : 1;
}

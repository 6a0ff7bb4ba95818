/* farm -- a database-like process farm on one SysV segment, for bench/run-bench.
 *
 *   farm -s MIB [-H] [-k KEY] [-p PIDFILE] [-t MIB] [-c]
 *
 * Creates one SysV segment of MIB MiB (4 KiB pages, or SHM_HUGETLB with -H),
 * touches every page of it once (write faults: the pages are allocated by
 * this process), detaches, then reads commands on stdin:
 *
 *   grow N     fork children until N are attached; each child shmat()s the
 *              segment and populates its own page tables over all of it
 *              (madvise(MADV_POPULATE_READ), or one read per page before
 *              Linux 5.14), as database backends do, then sleeps. Answers
 *              "ready N populate_s=T" once all N have populated, and rewrites
 *              PIDFILE with the children's pids, one per line.
 *   shrink N   end the children added last until N are left; answers
 *              "ready N populate_s=0" and rewrites PIDFILE.
 *   quit       (or end of file on stdin, or SIGTERM/SIGINT/SIGHUP) end the
 *              children, remove the segment and exit.
 *
 * -t MIB: each child populates only the first MIB of the segment (0: none),
 * as dedicated servers that touch a part of an SGA; attaching thousands of
 * them then takes seconds. -c: every 100th child uses CPU time, 1 to 4 ms
 * every 250 ms (0.4 to 1.6 % of a CPU), pinned to one CPU: CPU 0 for
 * a third of them, the next CPU for the others (all on CPU 0 with one
 * CPU), so that the CPU share per CPU is known and uneven.
 *
 * The first line on stdout is "segment shmid=ID key=K bytes=B page_kib=P
 * touch_s=T". Children die with the farm (PR_SET_PDEATHSIG), so a killed
 * script leaves no process behind; the segment then stays (fixed key: the
 * script removes a leftover with ipcrm -M KEY before it starts).
 *
 * Exit status: 0 clean, 1 usage or system error, 2 the segment could not be
 * created (hugetlb pool too small, shmmax/shmall).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int shmid = -1;
static pid_t *kids;
static size_t n_kids, cap_kids;
static volatile sig_atomic_t stop;
static size_t touch_bytes = SIZE_MAX;   /* -t */
static bool burn;                       /* -c */

static void on_signal(int sig)
{
        (void) sig;
        stop = 1;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cleanup(void)
{
        for (size_t i = 0; i < n_kids; i++)
                kill(kids[i], SIGKILL);
        for (size_t i = 0; i < n_kids; i++)
                while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
                        ;
        n_kids = 0;
        if (shmid >= 0 && shmctl(shmid, IPC_RMID, NULL) < 0)
                fprintf(stderr, "farm: IPC_RMID %d: %m\n", shmid);
        shmid = -1;
}

/* Touch (write) or populate (read) every page of [p, p+len). */
static int populate(char *p, size_t len, size_t page, bool write)
{
        if (madvise(p, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
                return 0;
        if (errno != EINVAL)
                return -errno;
        /* Before Linux 5.14: one access per page. */
        volatile char *v = p;
        unsigned sum = 0;
        for (size_t off = 0; off < len; off += page) {
                if (write)
                        v[off] = 1;
                else
                        sum += v[off];
        }
        (void) sum;
        return 0;
}

static double spin_until(double t)
{
        double x = 0;
        while (now_s() < t)
                x += 1;
        return x;
}

/* -c: child k of every 100 uses CPU time on a CPU of its own. */
static void burn_loop(size_t k)
{
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((k / 100) % 3 == 0 || ncpu < 2 ? 0 : 1, &set);
        sched_setaffinity(0, sizeof(set), &set);
        double busy_s = 0.001 * (double) (1 + (k / 100) % 4);
        struct timespec nap = { 0, 250 * 1000000L };
        for (;;) {
                spin_until(now_s() + busy_s);
                nanosleep(&nap, NULL);
        }
}

static void child(int ready_fd, size_t bytes, size_t page, pid_t farm, size_t k)
{
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_IGN);        /* the farm ends us on Ctrl-C */
        signal(SIGHUP, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != farm)
                _exit(0);
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
                dup2(fd, 0);
                dup2(fd, 1);
                close(fd);
        }
        char *p = shmat(shmid, NULL, 0);
        char c = '1';
        if (p == (void *) -1) {
                fprintf(stderr, "farm[%d]: shmat: %m\n", getpid());
                c = 'E';
        } else if ((bytes < touch_bytes ? bytes : touch_bytes) > 0 &&
                   populate(p, bytes < touch_bytes ? bytes : touch_bytes, page, false) < 0) {
                fprintf(stderr, "farm[%d]: populate: %m\n", getpid());
                c = 'E';
        }
        if (write(ready_fd, &c, 1) != 1)
                _exit(1);
        close(ready_fd);
        if (burn && k % 100 == 0)
                burn_loop(k);
        for (;;)
                pause();
}

static int write_pids(const char *path)
{
        if (!path)
                return 0;
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (!f)
                return -errno;
        for (size_t i = 0; i < n_kids; i++)
                fprintf(f, "%d\n", (int) kids[i]);
        if (fclose(f) != 0 || rename(tmp, path) < 0)
                return -errno;
        return 0;
}

static int grow(size_t target, size_t bytes, size_t page, const char *pidfile)
{
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return -errno;
        if (target > cap_kids) {
                pid_t *nk = realloc(kids, target * sizeof(*nk));
                if (!nk)
                        return -ENOMEM;
                kids = nk;
                cap_kids = target;
        }
        pid_t farm = getpid();
        double t0 = now_s();
        size_t want = target > n_kids ? target - n_kids : 0, got = 0, bad = 0;
        while (n_kids < target && !stop) {
                pid_t pid = fork();
                if (pid < 0) {
                        fprintf(stderr, "farm: fork: %m\n");
                        break;
                }
                if (pid == 0) {
                        close(pfd[0]);
                        child(pfd[1], bytes, page, farm, n_kids);
                }
                kids[n_kids++] = pid;
        }
        close(pfd[1]);
        char buf[256];
        while (got < want && !stop) {
                ssize_t k = read(pfd[0], buf, sizeof(buf));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                for (ssize_t i = 0; i < k; i++)
                        bad += buf[i] != '1';
                got += k;
        }
        close(pfd[0]);
        if (stop)
                return -EINTR;
        if (got < want || bad) {
                fprintf(stderr, "farm: %zu of %zu children ready, %zu failed\n", got, want, bad);
                return -EIO;
        }
        int r = write_pids(pidfile);
        if (r < 0)
                return r;
        printf("ready %zu populate_s=%.3f\n", n_kids, now_s() - t0);
        fflush(stdout);
        return 0;
}

static int shrink(size_t target, const char *pidfile)
{
        while (n_kids > target) {
                pid_t pid = kids[--n_kids];
                kill(pid, SIGKILL);
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        int r = write_pids(pidfile);
        if (r < 0)
                return r;
        printf("ready %zu populate_s=0\n", n_kids);
        fflush(stdout);
        return 0;
}

static void usage(void)
{
        fprintf(stderr, "usage: farm -s MIB [-H] [-k KEY] [-p PIDFILE] [-t MIB] [-c]\n");
        exit(1);
}

int main(int argc, char **argv)
{
        size_t mib = 0;
        bool huge = false;
        key_t key = IPC_PRIVATE;
        const char *pidfile = NULL;
        int opt;

        while ((opt = getopt(argc, argv, "s:Hk:p:t:c")) != -1) {
                switch (opt) {
                case 's': mib = strtoull(optarg, NULL, 0); break;
                case 'H': huge = true; break;
                case 'k': key = (key_t) strtoul(optarg, NULL, 0); break;
                case 'p': pidfile = optarg; break;
                case 't': touch_bytes = (size_t) strtoull(optarg, NULL, 0) << 20; break;
                case 'c': burn = true; break;
                default: usage();
                }
        }
        if (!mib || optind != argc)
                usage();

        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        size_t bytes = mib << 20;
        size_t page = huge ? 2u << 20 : (size_t) sysconf(_SC_PAGESIZE);
        shmid = shmget(key, bytes, IPC_CREAT | IPC_EXCL | 0600 | (huge ? SHM_HUGETLB : 0));
        if (shmid < 0) {
                fprintf(stderr, "farm: shmget %zu MiB%s: %m\n", mib, huge ? " SHM_HUGETLB" : "");
                return 2;
        }
        double t0 = now_s();
        char *p = shmat(shmid, NULL, 0);
        if (p == (void *) -1) {
                fprintf(stderr, "farm: shmat: %m\n");
                cleanup();
                return 1;
        }
        int r = populate(p, bytes, page, true);
        shmdt(p);
        if (r < 0) {
                fprintf(stderr, "farm: touching the segment: %s\n", strerror(-r));
                cleanup();
                return 2;
        }
        printf("segment shmid=%d key=0x%x bytes=%zu page_kib=%zu touch_s=%.3f\n",
               shmid, (unsigned) key, bytes, page >> 10, now_s() - t0);
        fflush(stdout);

        char line[256];
        int rc = 0;
        while (!stop) {
                if (!fgets(line, sizeof(line), stdin))
                        break;
                size_t n;
                if (sscanf(line, "grow %zu", &n) == 1) {
                        r = grow(n, bytes, page, pidfile);
                        if (r < 0 && r != -EINTR) {
                                printf("error %s\n", strerror(-r));
                                fflush(stdout);
                                rc = 1;
                                break;
                        }
                } else if (sscanf(line, "shrink %zu", &n) == 1) {
                        r = shrink(n, pidfile);
                        if (r < 0) {
                                printf("error %s\n", strerror(-r));
                                fflush(stdout);
                                rc = 1;
                                break;
                        }
                } else if (!strncmp(line, "quit", 4)) {
                        break;
                } else {
                        printf("error unknown command\n");
                        fflush(stdout);
                }
        }
        cleanup();
        return rc;
}

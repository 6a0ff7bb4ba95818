/* measure -- CPU seconds (user+sys) of a child, the median of a few runs.
 *
 *   measure [-r RUNS] [-t SECONDS] [-o OUT] [-e ERR] -- CMD [ARG...]
 *   measure [-r RUNS] [-t SECONDS] --cat FILE...
 *
 * Runs CMD RUNS times (default 3), one after the other (but no further run
 * once the runs so far took SECONDS of wall time: expensive scans are then
 * measured fewer times; at least one run always), and reports the
 * child's rusage from wait4(): user + sys of the child and of every
 * descendant it waited for (a shell loop over numastat counts its numastats).
 * Kernel work done on behalf of a reader, such as the page-table walk behind
 * /proc/PID/numa_maps, is system time of the reader: it is counted.
 *
 * --cat: the child reads each FILE to its end and discards the bytes (what
 * `cat FILE... >/dev/null` does, without trusting cat not to shortcut);
 * unreadable files are counted and skipped, like a vanished pid.
 *
 * stdout of the child goes to OUT (rewritten on every run: the last run's is
 * kept) or /dev/null; stderr to ERR or is inherited.
 *
 * Prints one line:
 *   cpu_s=C user_s=U sys_s=S wall_s=W rc=R runs=c1,c2,...
 * C and W are medians over the runs (separately); U and S are those of the
 * run whose CPU time is the median; R is the exit status of the last run
 * (128+signal when killed). Exit status: 0, or 1 on a usage/system error;
 * when a run is ended by SIGINT, SIGTERM or SIGHUP, measure prints nothing
 * and dies of the same signal.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 64

struct run {
        double cpu, user, sys, wall;
};

static double tv_s(struct timeval tv)
{
        return tv.tv_sec + tv.tv_usec / 1e6;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static int cmp_run(const void *a, const void *b)
{
        return cmp_double(&((const struct run *) a)->cpu, &((const struct run *) b)->cpu);
}

static void cat_files(char **files, int n)
{
        static char buf[1 << 16];
        int failed = 0;
        for (int i = 0; i < n; i++) {
                int fd = open(files[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        failed++;
                        continue;
                }
                ssize_t k;
                while ((k = read(fd, buf, sizeof(buf))) > 0)
                        ;
                if (k < 0)
                        failed++;
                close(fd);
        }
        _exit(failed ? 1 : 0);
}

static void usage(void)
{
        fprintf(stderr, "usage: measure [-r RUNS] [-t SECONDS] [-o OUT] [-e ERR] -- CMD [ARG...]\n"
                        "       measure [-r RUNS] [-t SECONDS] --cat FILE...\n");
        exit(1);
}

int main(int argc, char **argv)
{
        int runs = 3, i = 1;
        double budget = 0;
        const char *out = "/dev/null", *err = NULL;
        int cat = 0;

        for (; i < argc; i++) {
                if (!strcmp(argv[i], "-r") && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else if (!strcmp(argv[i], "-t") && i + 1 < argc)
                        budget = atof(argv[++i]);
                else if (!strcmp(argv[i], "-o") && i + 1 < argc)
                        out = argv[++i];
                else if (!strcmp(argv[i], "-e") && i + 1 < argc)
                        err = argv[++i];
                else if (!strcmp(argv[i], "--cat")) {
                        cat = 1;
                        i++;
                        break;
                } else if (!strcmp(argv[i], "--")) {
                        i++;
                        break;
                } else
                        usage();
        }
        if (i >= argc || runs < 1 || runs > MAX_RUNS)
                usage();

        struct run r[MAX_RUNS];
        int rc = 0;
        double spent = 0;
        for (int k = 0; k < runs; k++) {
                if (k > 0 && budget > 0 && spent >= budget) {
                        runs = k;
                        break;
                }
                double t0 = now_s();
                pid_t pid = fork();
                if (pid < 0) {
                        perror("measure: fork");
                        return 1;
                }
                if (pid == 0) {
                        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                        if (fd < 0 || dup2(fd, 1) < 0)
                                _exit(127);
                        if (err) {
                                int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                                if (fe < 0 || dup2(fe, 2) < 0)
                                        _exit(127);
                        }
                        if (cat)
                                cat_files(argv + i, argc - i);
                        execvp(argv[i], argv + i);
                        fprintf(stderr, "measure: %s: %m\n", argv[i]);
                        _exit(127);
                }
                int status;
                struct rusage ru;
                while (wait4(pid, &status, 0, &ru) < 0) {
                        if (errno != EINTR) {
                                perror("measure: wait4");
                                return 1;
                        }
                }
                r[k].wall = now_s() - t0;
                spent += r[k].wall;
                r[k].user = tv_s(ru.ru_utime);
                r[k].sys = tv_s(ru.ru_stime);
                r[k].cpu = r[k].user + r[k].sys;
                rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM ||
                                            WTERMSIG(status) == SIGHUP)) {
                        /* Interrupted: no number to report; die the same way so the caller sees it. */
                        signal(WTERMSIG(status), SIG_DFL);
                        kill(getpid(), WTERMSIG(status));
                        return 128 + WTERMSIG(status);
                }
        }

        char list[MAX_RUNS * 16] = "";
        size_t len = 0;
        for (int k = 0; k < runs; k++)
                len += snprintf(list + len, sizeof(list) - len, "%s%.4f", k ? "," : "", r[k].cpu);
        double walls[MAX_RUNS];
        for (int k = 0; k < runs; k++)
                walls[k] = r[k].wall;
        qsort(walls, runs, sizeof(double), cmp_double);
        qsort(r, runs, sizeof(struct run), cmp_run);
        const struct run *m = &r[runs / 2];
        printf("cpu_s=%.4f user_s=%.4f sys_s=%.4f wall_s=%.4f rc=%d runs=%s\n",
               m->cpu, m->user, m->sys, walls[runs / 2], rc, list);
        return 0;
}

/* procmap -- reading a large process's maps: the text of /proc/PID/maps,
 * parsed as numaguard parses it, against the PROCMAP_QUERY ioctl (Linux
 * 6.11) on the same file, one call per mapping, in the same run.
 *
 *   procmap [MAPPINGS]   (default 20000; any user)
 *
 * A child makes MAPPINGS mappings that cannot merge (one page each, every
 * other one of a file, the rest anonymous with alternating protections,
 * each between two pages of a PROT_NONE reserve: about twice MAPPINGS
 * mappings in all), as a database process with many attached segments and
 * libraries has, and sleeps. Then, one after the other, each the best of BENCH_REPEAT runs
 * (default 5), CPU time (user + system) and wall time:
 *
 *   text   read /proc/CHILD/maps to the end and parse it with ng_parse_maps()
 *          (every mapping: the minimum private size 0)
 *   query  PROCMAP_QUERY from address 0, PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
 *          each mapping's file name asked too (numaguard matches segments
 *          by it), until ENOENT
 *
 * Both must count the same mappings. Prints one line each and the ratio;
 * exit 0, or 1 when the counts differ. A kernel without the ioctl: says so
 * and exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"

/* struct procmap_query of <linux/fs.h> (Linux 6.11), for older headers. */
struct procmap_query_v1 {
        uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
        uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
        uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY_IOC _IOWR('f', 17, struct procmap_query_v1)
#define COVERING_OR_NEXT_VMA 0x10

static double wall_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6 + (double) ru.ru_stime.tv_sec +
               (double) ru.ru_stime.tv_usec / 1e6;
}

static pid_t make_mappings(size_t n, int ready)
{
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        char path[] = "/tmp/ng-bench-procmap-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0 || ftruncate(fd, (off_t) n * 4096) < 0)
                _exit(1);
        unlink(path);
        long page = sysconf(_SC_PAGESIZE);
        /* a reserved range, then one page at a time inside it: neighbours
         * differ (file or anonymous, protections), so none merge */
        char *base = mmap(NULL, n * 2 * (size_t) page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
                _exit(1);
        for (size_t i = 0; i < n; i++) {
                char *at = base + i * 2 * (size_t) page;
                void *m = i % 2 ? mmap(at, (size_t) page, PROT_READ, MAP_SHARED | MAP_FIXED, fd, (off_t) i * page)
                                : mmap(at, (size_t) page, i % 4 ? PROT_READ : PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
                if (m == MAP_FAILED)
                        _exit(1);
        }
        if (write(ready, "x", 1) != 1)
                _exit(1);
        pause();
        _exit(0);
}

/* Returns the mappings counted, -1 on error. */
static long by_text(pid_t pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        size_t cap = 1 << 20, len = 0;
        char *buf = malloc(cap);
        for (ssize_t k; buf;) {
                if (len + 1 >= cap) {
                        char *nb = realloc(buf, cap *= 2);
                        if (!nb) {
                                free(buf);
                                buf = NULL;
                                break;
                        }
                        buf = nb;
                }
                if ((k = read(fd, buf + len, cap - len - 1)) <= 0)
                        break;
                len += (size_t) k;
        }
        close(fd);
        if (!buf)
                return -1;
        buf[len] = '\0';
        /* every line a mapping (the count the query must match); the
         * parse keeps what numaguard keeps of them */
        long lines = 0;
        for (size_t i = 0; i < len; i++)
                lines += buf[i] == '\n';
        /* the gate page is in the text, no mapping of the process's own */
        lines -= strstr(buf, "[vsyscall]") != NULL;
        struct ng_map *m;
        size_t n;
        long r = ng_parse_maps(buf, 0, &m, &n, NULL) < 0 ? -1 : lines;
        if (r >= 0)
                ng_maps_free(m, n);
        free(buf);
        return r;
}

static long by_query(pid_t pid)
{
        char path[64], name[4096];
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        long n = 0;
        for (uint64_t addr = 0;;) {
                struct procmap_query_v1 q = { .size = sizeof(q), .query_flags = COVERING_OR_NEXT_VMA,
                                              .query_addr = addr, .vma_name_size = sizeof(name),
                                              .vma_name_addr = (uintptr_t) name };
                if (ioctl(fd, PROCMAP_QUERY_IOC, &q) < 0) {
                        if (errno != ENOENT)
                                n = -1;
                        break;
                }
                n++;
                addr = q.vma_end;
        }
        close(fd);
        return n;
}

struct best {
        double cpu, wall;
        long count;
};

static struct best measure(long (*fn)(pid_t), pid_t pid, int repeat)
{
        struct best b = { 1e9, 1e9, -1 };
        for (int i = 0; i < repeat; i++) {
                double c0 = cpu_s(), w0 = wall_s();
                b.count = fn(pid);
                double c = cpu_s() - c0, w = wall_s() - w0;
                b.cpu = c < b.cpu ? c : b.cpu;
                b.wall = w < b.wall ? w : b.wall;
        }
        return b;
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
        int repeat = getenv("BENCH_REPEAT") ? atoi(getenv("BENCH_REPEAT")) : 5;
        if (repeat < 1)
                repeat = 1;
        int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        struct procmap_query_v1 probe = { .size = sizeof(probe), .query_addr = (uintptr_t) main };
        int have = fd >= 0 && ioctl(fd, PROCMAP_QUERY_IOC, &probe) == 0;
        if (fd >= 0)
                close(fd);
        if (!have) {
                printf("*** procmap: this kernel has no PROCMAP_QUERY (Linux 6.11): nothing to compare\n");
                return 0;
        }
        int p[2];
        if (pipe(p) < 0)
                return 1;
        pid_t child = make_mappings(n, p[1]);
        char c;
        if (child < 0 || read(p[0], &c, 1) != 1) {
                fprintf(stderr, "procmap: the child could not make %zu mappings\n", n);
                return 1;
        }
        struct best t = measure(by_text, child, repeat), q = measure(by_query, child, repeat);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        printf("text:  %ld mappings, %.4f s CPU, %.4f s wall (read /proc/PID/maps, ng_parse_maps)\n", t.count, t.cpu,
               t.wall);
        printf("query: %ld mappings, %.4f s CPU, %.4f s wall (PROCMAP_QUERY, one call a mapping, names asked)\n",
               q.count, q.cpu, q.wall);
        printf("ratio: query / text = %.2f CPU, %.2f wall (best of %d; below 1: the ioctl is cheaper)\n",
               t.cpu > 0 ? q.cpu / t.cpu : 0, t.wall > 0 ? q.wall / t.wall : 0, repeat);
        return t.count == q.count && t.count > 0 ? 0 : 1;
}

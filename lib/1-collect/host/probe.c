/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The latency and bandwidth probe (see ng-probe.h). */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ng-probe.h"
#include "util.h"

#define LINE_BYTES 64
/* Bandwidth: each rep streams the buffer this many times. */
#define BW_PASSES 2
#define MAX_BW_THREADS 256
/* Without a node_floor function: a node's floor at most this share of it. */
#define FLOOR_NODE_SHARE 0.10

static int fail(char *err, size_t size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t size, int r, const char *fmt, ...)
{
        if (err && size) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, size, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* The chase's clock: a stalled load is CPU time, time preempted by
 * another program on a busy host is not. */
static double thread_sec(void)
{
        return (double) now_usec(CLOCK_THREAD_CPUTIME_ID) / (double) USEC_PER_SEC;
}

static double now_sec(void)
{
        return (double) now_usec(CLOCK_MONOTONIC) / (double) USEC_PER_SEC;
}

static bool selected(const struct ng_probe_opts *o, int id)
{
        return ng_bitmap_empty(&o->nodes) || ng_bitmap_test(&o->nodes, (unsigned) id);
}

static int check_floor(const struct ng_node *nd, uint64_t size, const struct ng_probe_opts *o, char *err, size_t esz)
{
        uint64_t floor = o->floor_bytes;
        struct ng_node_supply sup;
        ng_node_supply(nd, 0, 0, &sup);
        uint64_t total = sup.total_bytes.v, free_b = sup.free_bytes.v;
        if (!sup.total_bytes.known || !sup.free_bytes.known || total == 0)
                return fail(err, esz, -ENOSPC, "node %d: its free memory is unknown (no meminfo)", nd->id);
        if (o->node_floor)
                floor = o->node_floor(o->floor_bytes, nd);
        else if (floor > (uint64_t) ((double) total * FLOOR_NODE_SHARE))
                floor = (uint64_t) ((double) total * FLOOR_NODE_SHARE);
        if (free_b < size || free_b - size < floor)
                return fail(err, esz, -ENOSPC,
                            "node %d has %" PRIu64 " MiB free: a %" PRIu64 " MiB buffer would leave it below its "
                            "floor of %" PRIu64 " MiB (use a smaller --size)",
                            nd->id, free_b >> 20, size >> 20, floor >> 20);
        return 0;
}

int ng_probe_plan(const struct ng_snapshot *s, const struct ng_probe_opts *opts, struct ng_bitmap *ret_cpu_nodes,
                  struct ng_bitmap *ret_mem_nodes, char *err, size_t err_size)
{
        struct ng_bitmap cpu = {0}, mem = {0};
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                struct ng_bitmap online = nd->cpus;
                ng_bitmap_and(&online, &s->topo.cpus_online);
                if (!selected(opts, nd->id))
                        continue;
                if (!ng_bitmap_empty(&online))
                        ng_bitmap_set(&cpu, (unsigned) nd->id);
                if (nd->has_memory) {
                        int r = check_floor(nd, opts->size_bytes, opts, err, err_size);
                        if (r < 0)
                                return r;
                        ng_bitmap_set(&mem, (unsigned) nd->id);
                }
        }
        if (ng_bitmap_empty(&mem) || ng_bitmap_empty(&cpu))
                return fail(err, err_size, -ENODEV, "no node with %s among the selected nodes",
                            ng_bitmap_empty(&mem) ? "memory" : "online CPUs");
        *ret_cpu_nodes = cpu;
        *ret_mem_nodes = mem;
        return 0;
}

/* ---- one buffer bound to one node ---- */

struct buffer {
        char *base;
        size_t size;            /* a multiple of the page size */
        size_t lines;
};

static uint64_t xorshift(uint64_t *st)
{
        uint64_t x = *st;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *st = x;
}

/* Sattolo's shuffle: one cycle through every line, so the chase visits
 * them all in an order no prefetcher predicts. Writing the links also
 * faults every page in, under the buffer's binding. */
static void link_lines(struct buffer *b)
{
        uint64_t st = 0x9e3779b97f4a7c15u;
        for (size_t i = 0; i < b->lines; i++)
                *(size_t *) (b->base + i * LINE_BYTES) = i;
        for (size_t i = b->lines - 1; i > 0; i--) {
                size_t j = (size_t) (xorshift(&st) % i);
                size_t *a = (size_t *) (b->base + i * LINE_BYTES), *c = (size_t *) (b->base + j * LINE_BYTES);
                size_t t = *a;
                *a = *c;
                *c = t;
        }
        for (size_t i = 0; i < b->lines; i++) {
                char **slot = (char **) (b->base + i * LINE_BYTES);
                *slot = b->base + *(size_t *) slot * LINE_BYTES;
        }
}

static int buffer_bind(struct buffer *b, int node, size_t size, char *err, size_t esz)
{
        unsigned long mask[NG_BITMAP_WORDS] = {0};
        long page = sysconf(_SC_PAGESIZE);
        b->size = (size + (size_t) page - 1) / (size_t) page * (size_t) page;
        b->lines = b->size / LINE_BYTES;
        b->base = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (b->base == MAP_FAILED) {
                b->base = NULL;
                return fail(err, esz, -errno, "node %d: mmap of %zu bytes: %s", node, b->size, strerror(errno));
        }
        mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
        if (mbind(b->base, b->size, MPOL_BIND, mask, NG_BITMAP_BITS, MPOL_MF_STRICT) < 0)
                return fail(err, esz, -errno, "node %d: mbind(MPOL_BIND): %s (is the node outside this "
                            "process's cpuset?)", node, strerror(errno));
        /* Fewer TLB misses in the chase where THP is available; optional. */
        (void) madvise(b->base, b->size, MADV_HUGEPAGE);
        link_lines(b);
        return 0;
}

static void buffer_free(struct buffer *b)
{
        if (b->base)
                munmap(b->base, b->size);
        b->base = NULL;
}

/* Asks the kernel where pages are (no fault: they are all resident). */
static int verify(const struct buffer *b, int node, unsigned *ret_pages, char *err, size_t esz)
{
        long page = sysconf(_SC_PAGESIZE);
        size_t pages = b->size / (size_t) page, k = pages < NG_PROBE_VERIFY_PAGES ? pages : NG_PROBE_VERIFY_PAGES;
        void *addrs[NG_PROBE_VERIFY_PAGES];
        int status[NG_PROBE_VERIFY_PAGES];
        for (size_t i = 0; i < k; i++)
                addrs[i] = b->base + (i * pages / k) * (size_t) page;
        if (move_pages(0, (unsigned long) k, addrs, NULL, status, 0) < 0)
                return fail(err, esz, -errno, "node %d: move_pages: %s", node, strerror(errno));
        for (size_t i = 0; i < k; i++)
                if (status[i] != node)
                        return fail(err, esz, -EXDEV, "node %d: the buffer's page %zu of %zu is %s %d, not on "
                                    "the node: no number measured",
                                    node, i, k, status[i] < 0 ? "in error" : "on node",
                                    status[i] < 0 ? -status[i] : status[i]);
        *ret_pages = (unsigned) k;
        return 0;
}

/* ---- measurements from pinned threads ---- */

struct worker {
        pthread_t tid;
        int cpu;
        const struct buffer *b;
        size_t from, to;                /* bytes, bandwidth slice */
        unsigned *ready;                /* bandwidth: threads pinned so far */
        int *go;                        /* 1 start, -1 give up */
        double result;                  /* ns per load, or a checksum */
        int error;
};

static int pin(int cpu)
{
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *chase_main(void *arg)
{
        struct worker *w = arg;
        if ((w->error = pin(w->cpu)) < 0)
                return NULL;
        size_t steps = w->b->lines < (1u << 16) ? (1u << 16) : w->b->lines > (1u << 22) ? (1u << 22) : w->b->lines;
        char **p = (char **) w->b->base;
        for (size_t k = 0; k < steps / 4; k++)  /* warm the TLB and the walk */
                p = (char **) *p;
        double t0 = thread_sec();
        for (size_t k = 0; k < steps; k++)
                p = (char **) *p;
        double t1 = thread_sec();
        /* The chain's end goes into the result so the loads stay. */
        w->result = (t1 - t0) * 1e9 / (double) steps + (p == NULL ? 1 : 0);
        return NULL;
}

static void *stream_main(void *arg)
{
        struct worker *w = arg;
        w->error = pin(w->cpu);
        __atomic_add_fetch(w->ready, 1, __ATOMIC_SEQ_CST);
        while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
                sched_yield();
        if (w->error < 0 || __atomic_load_n(w->go, __ATOMIC_ACQUIRE) < 0)
                return NULL;
        uint64_t sum = 0;
        for (int pass = 0; pass < BW_PASSES; pass++)
                for (size_t o = w->from; o + sizeof(uint64_t) <= w->to; o += sizeof(uint64_t))
                        sum += *(const volatile uint64_t *) (w->b->base + o);
        w->result = (double) sum;
        return NULL;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

/* The median of n runs, and how far they lay apart: the largest over the
 * smallest (a run on a busy host reads 576 MB/s where the others read
 * 54,000; the median hides one such run, the spread shows it). */
static double median(double *v, unsigned n, double *ret_spread)
{
        qsort(v, n, sizeof(*v), cmp_double);
        *ret_spread = v[0] > 0 && v[n - 1] / v[0] < NG_LATENCY_MAX_SPREAD ? v[n - 1] / v[0] : NG_LATENCY_MAX_SPREAD;
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int first_cpu(const struct ng_snapshot *s, const struct ng_node *nd)
{
        struct ng_bitmap online = nd->cpus;
        ng_bitmap_and(&online, &s->topo.cpus_online);
        return ng_bitmap_next(&online, 0);
}

static int measure_latency(const struct ng_snapshot *s, const struct ng_node *cn, const struct buffer *b,
                           unsigned reps, double *ret_ns, double *ret_spread)
{
        double v[16];
        for (unsigned r = 0; r < reps; r++) {
                struct worker w = { .cpu = first_cpu(s, cn), .b = b };
                int e = pthread_create(&w.tid, NULL, chase_main, &w);
                if (e)
                        return -e;
                pthread_join(w.tid, NULL);
                if (w.error < 0)
                        return w.error;
                v[r] = w.result;
        }
        *ret_ns = median(v, reps, ret_spread);
        return 0;
}

/* One rep: every CPU of the node streams its slice at once; the clock
 * starts when all are pinned. */
static int stream_once(const struct ng_bitmap *cpus, unsigned n, const struct buffer *b, double *ret_mbps)
{
        _cleanup_free_ struct worker *w = calloc(n, sizeof(*w));
        if (!w)
                return -ENOMEM;
        unsigned made = 0, ready = 0;
        int r = 0, go = 0, cpu = ng_bitmap_next(cpus, 0);
        size_t slice = b->size / n / LINE_BYTES * LINE_BYTES;
        for (; made < n; made++, cpu = ng_bitmap_next(cpus, cpu + 1)) {
                w[made] = (struct worker) { .cpu = cpu, .b = b, .ready = &ready, .go = &go,
                                            .from = slice * made, .to = made + 1 == n ? b->size : slice * (made + 1) };
                int e = pthread_create(&w[made].tid, NULL, stream_main, &w[made]);
                if (e) {
                        r = -e;
                        break;
                }
        }
        while (r == 0 && __atomic_load_n(&ready, __ATOMIC_SEQ_CST) < made)
                sched_yield();
        double t0 = now_sec();
        __atomic_store_n(&go, r == 0 ? 1 : -1, __ATOMIC_RELEASE);
        for (unsigned k = 0; k < made; k++) {
                pthread_join(w[k].tid, NULL);
                if (w[k].error < 0 && r == 0)
                        r = w[k].error;
        }
        double t1 = now_sec();
        if (r == 0)
                *ret_mbps = (double) b->size * BW_PASSES / (t1 - t0) / 1e6;
        return r;
}

static int measure_bandwidth(const struct ng_snapshot *s, const struct ng_node *cn, const struct buffer *b,
                             unsigned reps, double *ret_mbps, double *ret_spread)
{
        struct ng_bitmap cpus = cn->cpus;
        ng_bitmap_and(&cpus, &s->topo.cpus_online);
        unsigned n = ng_bitmap_count(&cpus);
        if (n > MAX_BW_THREADS)
                n = MAX_BW_THREADS;
        double v[16];
        for (unsigned r = 0; r < reps; r++) {
                int e = stream_once(&cpus, n, b, &v[r]);
                if (e < 0)
                        return e;
        }
        *ret_mbps = median(v, reps, ret_spread);
        return 0;
}

/* ---- the whole matrix ---- */

static int fill_ids(const struct ng_snapshot *s, const struct ng_bitmap *set, int *ids)
{
        int n = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (ng_bitmap_test(set, (unsigned) s->topo.nodes[i].id))
                        ids[n++] = s->topo.nodes[i].id;
        return n;
}

static void stamp(struct ng_latency *m)
{
        time_t t = time(NULL);
        struct tm tm;
        if (gmtime_r(&t, &tm))
                strftime(m->measured_at, sizeof(m->measured_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One cell: its runs, again (up to PROBE_ATTEMPTS times in all) while they
 * disagree: a burst of load elsewhere passes; the attempt that agreed best
 * is kept, with its spread, for the caller to judge. */
#define PROBE_ATTEMPTS 3

static int measure_cell(const struct ng_snapshot *s, const struct ng_node *cn, const struct buffer *b, unsigned reps,
                        struct ng_latency *m, size_t cell)
{
        double best = INFINITY;
        for (unsigned k = 0; k < PROBE_ATTEMPTS && best > NG_PROBE_MAX_SPREAD; k++) {
                double ns = NAN, ns_spread = INFINITY, mbps = NAN, mbps_spread = INFINITY;
                int r = measure_latency(s, cn, b, reps, &ns, &ns_spread);
                if (r >= 0)
                        r = measure_bandwidth(s, cn, b, reps, &mbps, &mbps_spread);
                if (r < 0)
                        return r;
                double worst = ns_spread > mbps_spread ? ns_spread : mbps_spread;
                if (worst < best) {
                        best = worst;
                        m->latency_ns[cell] = ns;
                        m->latency_spread[cell] = ns_spread;
                        m->bandwidth_mbps[cell] = mbps;
                        m->bandwidth_spread[cell] = mbps_spread;
                }
        }
        return 0;
}

/* Every CPU node against the buffer on column c. */
static int probe_column(const struct ng_snapshot *s, const struct ng_probe_opts *o, struct ng_latency *m, size_t c,
                        size_t *done, size_t total, char *err, size_t esz)
{
        struct buffer b = {0};
        int node = m->nodes[c];
        int r = buffer_bind(&b, node, o->size_bytes, err, esz);
        if (r >= 0)
                r = verify(&b, node, &m->pages_verified[c], err, esz);
        for (size_t row = 0; r >= 0 && row < m->n_cpu_nodes; row++) {
                const struct ng_node *cn = ng_snapshot_node(s, m->cpu_nodes[row]);
                double t0 = now_sec();
                size_t cell = row * m->n_nodes + c;
                r = measure_cell(s, cn, &b, o->reps, m, cell);
                if (r < 0)
                        fail(err, esz, r, "CPU node %d -> memory node %d: %s (is a CPU outside this process's "
                             "cpuset?)", cn->id, node, strerror(-r));
                else if (o->progress)
                        o->progress(o->userdata, cn->id, node, now_sec() - t0, ++*done, total);
        }
        /* The pages are still bound there: check that none moved meanwhile. */
        if (r >= 0)
                r = verify(&b, node, &m->pages_verified[c], err, esz);
        buffer_free(&b);
        return r;
}

int ng_probe_run(const struct ng_snapshot *s, const struct ng_probe_opts *opts, struct ng_latency **ret,
                 char *err, size_t err_size)
{
        if (s->root[0])
                return fail(err, err_size, -EOPNOTSUPP, "the probe measures the live host, not a tree");
        struct ng_probe_opts o = *opts;
        if (o.reps == 0 || o.reps > 15)
                o.reps = NG_PROBE_DEFAULT_REPS;
        if (o.size_bytes < NG_PROBE_MIN_SIZE_BYTES)
                return fail(err, err_size, -EINVAL, "a buffer of %" PRIu64 " bytes is too small to leave the caches",
                            o.size_bytes);
        struct ng_bitmap cpu, mem;
        int r = ng_probe_plan(s, &o, &cpu, &mem, err, err_size);
        if (r < 0)
                return r;
        /* A CPU node without memory is a column of nulls. */
        struct ng_bitmap cols = mem;
        ng_bitmap_or(&cols, &cpu);
        _ng_cleanup_(ng_latency_freep) struct ng_latency *m = ng_latency_new(ng_bitmap_count(&cpu),
                                                                             ng_bitmap_count(&cols));
        if (!m)
                return -ENOMEM;
        fill_ids(s, &cpu, m->cpu_nodes);
        fill_ids(s, &cols, m->nodes);
        stamp(m);
        size_t done = 0;
        for (size_t c = 0; c < m->n_nodes && r >= 0; c++)
                if (ng_bitmap_test(&mem, (unsigned) m->nodes[c]))
                        r = probe_column(s, &o, m, c, &done, m->n_cpu_nodes * ng_bitmap_count(&mem), err, err_size);
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&m);
        return 0;
}

size_t ng_probe_unstable(const struct ng_latency *m, double max_spread)
{
        size_t n = 0;
        for (size_t i = 0; i < m->n_cpu_nodes * m->n_nodes; i++)
                n += m->latency_spread[i] > max_spread || m->bandwidth_spread[i] > max_spread;
        return n;
}

/* cpu-shares -- CPU share per node of a segment's attachers when numaguardd
 * reads their CPU time by turns, against reading every thread every poll,
 * for bench/run-bench's attachers axis.
 *
 *   cpu-shares -s SHMID [-b BUDGET] [-n POLLS] [-i MS]
 *
 * Collects the live host through two process pictures, as numaguardd polls
 * it (counters only, no sampling), every MS milliseconds (default 500),
 * POLLS times (default 150): one reads the CPU time of at most BUDGET
 * segment holders a poll (default 100, numaguard.conf's attacher_read_budget),
 * the other of every one. For the processes that map SysV segment SHMID it
 * compares the library's CPU share per node of the first
 * (ng_price_cpu_share after ng_snapshot_cpu_since) with the CPU time every
 * thread used over the same turn (the last cpu_read_every polls, each
 * thread on the node of the CPU it last ran on at each poll), and with the
 * all-threads figure of the poll alone. On a host with fewer than two
 * nodes, each CPU stands for a node (pseudo-nodes), so that the figure
 * says something.
 *
 * Prints, over the polls after the first two turns:
 *   shares holders=H budget=B read_every=R polls=N nodes=K pseudo=0|1
 *          run_diff_points=D turn_max_diff_points=X turn_mean_diff_points=Y
 *          poll_max_diff_points=Z turns=A,B,... all_threads=A,B,...
 * a diff being the largest difference of one node's share, in points:
 * run_diff between the mean of the shares by turns (turns=) and the share
 * of all the CPU time every thread used over those polls (all_threads=);
 * turn_max and turn_mean of each poll's share by turns against every
 * thread's over the last turn; poll_max against every thread's over that
 * poll alone. The per-poll figures carry the noise of a few clock ticks per
 * process and turn; the run's says whether the shares by turns lean.
 *
 * Exit status: 0 done, 1 usage or error, 2 no CPU time to compare.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ng-price.h"
#include "ng-snapshot.h"

#define RING 4096
#define MAX_NODES 256

static struct ng_node pseudo[MAX_NODES];
static size_t n_pseudo;

static struct ng_snapshot *collect(const struct ng_path *p, struct ng_picture *pic)
{
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        struct ng_snapshot *s = NULL;
        int r = ng_snapshot_collect(p, &o, &s);
        if (r < 0) {
                fprintf(stderr, "cpu-shares: collecting: %s\n", strerror(-r));
                exit(1);
        }
        return s;
}

/* Swaps in one pseudo-node per CPU where the host has fewer than two
 * nodes, keeping the real ones in *keep; call again to put them back. */
struct topo_keep {
        struct ng_node *nodes;
        size_t n;
};

static void swap_topology(struct ng_snapshot *s, struct topo_keep *keep)
{
        if (!n_pseudo)
                return;
        if (s->topo.nodes == pseudo) {
                s->topo.nodes = keep->nodes;
                s->topo.n_nodes = keep->n;
                return;
        }
        *keep = (struct topo_keep) { s->topo.nodes, s->topo.n_nodes };
        s->topo.nodes = pseudo;
        s->topo.n_nodes = n_pseudo;
}

static int node_of(const struct ng_snapshot *s, int cpu)
{
        for (size_t i = 0; cpu >= 0 && i < s->topo.n_nodes; i++)
                if (ng_bitmap_test(&s->topo.nodes[i].cpus, (unsigned) cpu))
                        return (int) i;
        return -1;
}

static size_t holders(const struct ng_snapshot *s, int shmid, pid_t *v)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct ng_proc *pr = s->procs[i];
                for (size_t j = 0; j < pr->n_maps; j++)
                        if (pr->maps[j].kind == NG_MAP_SYSV && pr->maps[j].inode == (uint64_t) shmid) {
                                v[n++] = pr->pid;
                                break;
                        }
        }
        return n;
}

/* The weights of one poll per node index (the topology in place). */
static void poll_weights(const struct ng_snapshot *s, const pid_t *pids, size_t n, double *w)
{
        memset(w, 0, s->topo.n_nodes * sizeof(*w));
        for (size_t k = 0; k < n; k++) {
                const struct ng_proc *pr = ng_snapshot_proc(s, pids[k]);
                if (!pr)
                        continue;
                for (size_t t = 0; t < (pr->n_tasks ? pr->n_tasks : 1); t++) {
                        int cpu = pr->n_tasks ? pr->tasks[t].processor : pr->stat.processor;
                        uint64_t ticks = pr->n_tasks ? pr->tasks[t].weight_ticks : pr->cpu_weight_ticks;
                        int i = node_of(s, cpu);
                        if (i >= 0)
                                w[i] += (double) ticks;
                }
        }
}

static void normalize(double *w, size_t n)
{
        double total = 0;
        for (size_t i = 0; i < n; i++)
                total += w[i];
        for (size_t i = 0; i < n && total > 0; i++)
                w[i] /= total;
}

static void print_shares(const char *name, const double *v, size_t n)
{
        printf(" %s=", name);
        for (size_t i = 0; i < n; i++)
                printf("%s%.3f", i ? "," : "", v[i]);
}

static void nap(unsigned ms)
{
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void make_pseudo(const struct ng_snapshot *s)
{
        if (s->topo.n_nodes >= 2)
                return;
        long ncpu = sysconf(_SC_NPROCESSORS_CONF);
        for (long c = 0; c < ncpu && n_pseudo < MAX_NODES; c++) {
                pseudo[n_pseudo].id = (int) c;
                ng_bitmap_set(&pseudo[n_pseudo].cpus, (unsigned) c);
                pseudo[n_pseudo++].has_cpu = true;
        }
}

int main(int argc, char **argv)
{
        int shmid = -1, opt;
        unsigned budget = 100, polls = 150, ms = 500;
        while ((opt = getopt(argc, argv, "s:b:n:i:")) != -1) {
                switch (opt) {
                case 's': shmid = atoi(optarg); break;
                case 'b': budget = (unsigned) strtoul(optarg, NULL, 10); break;
                case 'n': polls = (unsigned) strtoul(optarg, NULL, 10); break;
                case 'i': ms = (unsigned) strtoul(optarg, NULL, 10); break;
                default: goto usage;
                }
        }
        if (shmid < 0 || optind != argc || !polls)
                goto usage;
        struct ng_path *p = NULL;
        struct ng_picture *turns = NULL, *every = NULL;
        if (ng_path_new(NULL, &p) < 0 || ng_picture_new(100000, &turns) < 0 || ng_picture_new(100000, &every) < 0) {
                fprintf(stderr, "cpu-shares: out of memory\n");
                return 1;
        }
        ng_picture_set_read_budget(turns, budget);
        static double ring[RING][MAX_NODES];
        double ref[MAX_NODES], pollw[MAX_NODES], got[MAX_NODES] = {0};
        double got_sum[MAX_NODES] = {0}, all_sum[MAX_NODES] = {0};
        double worst = 0, worst_poll = 0, sum = 0;
        unsigned compared = 0, every_n = 1;
        size_t n_nodes = 0, n_pids = 0;
        struct ng_snapshot *pt = NULL, *pe = NULL;
        for (unsigned k = 0; k < polls; k++) {
                if (k)
                        nap(ms);
                struct ng_snapshot *st = collect(p, turns), *se = collect(p, every);
                if (pt) {
                        ng_snapshot_cpu_since(st, pt);
                        ng_snapshot_cpu_since(se, pe);
                }
                ng_snapshot_free(pt);
                ng_snapshot_free(pe);
                pt = st;
                pe = se;
                if (k == 0)
                        make_pseudo(st);
                pid_t *pids = malloc((se->n_procs + 1) * sizeof(*pids));
                if (!pids)
                        return 1;
                n_pids = holders(se, shmid, pids);
                every_n = st->cpu_read_every ? st->cpu_read_every : 1;
                struct topo_keep kt, ke;
                swap_topology(st, &kt);
                swap_topology(se, &ke);
                n_nodes = st->topo.n_nodes;
                poll_weights(se, pids, n_pids, ring[k % RING]);
                struct ng_node_share *v = NULL;
                size_t n_v = 0;
                bool measured = false;
                struct ng_bitmap none = {0};
                int r = ng_price_cpu_share(st, pids, n_pids, &none, &v, &n_v, &measured);
                memset(got, 0, sizeof(got));
                for (size_t i = 0; r >= 0 && i < n_v; i++)
                        for (size_t j = 0; j < n_nodes; j++)
                                if (st->topo.nodes[j].id == v[i].node)
                                        got[j] = v[i].share;
                free(v);
                swap_topology(st, &kt);
                swap_topology(se, &ke);
                free(pids);
                if (r < 0)
                        return 1;
                if (k < 2 * every_n + 1 || every_n >= RING)
                        continue;       /* the first turn mixes whole CPU times with rates */
                memset(ref, 0, sizeof(ref));
                for (unsigned b = 0; b < every_n; b++)
                        for (size_t j = 0; j < n_nodes; j++)
                                ref[j] += ring[(k - b) % RING][j];
                memcpy(pollw, ring[k % RING], sizeof(pollw));
                normalize(ref, n_nodes);
                normalize(pollw, n_nodes);
                double d = 0, dp = 0;
                for (size_t j = 0; j < n_nodes; j++) {
                        d = fmax(d, fabs(got[j] - ref[j]));
                        dp = fmax(dp, fabs(got[j] - pollw[j]));
                }
                if (!measured)
                        continue;
                for (size_t j = 0; j < n_nodes; j++) {
                        got_sum[j] += got[j];
                        all_sum[j] += ring[k % RING][j];
                }
                worst = fmax(worst, d);
                worst_poll = fmax(worst_poll, dp);
                sum += d;
                compared++;
        }
        ng_snapshot_free(pt);
        ng_snapshot_free(pe);
        ng_picture_free(turns);
        ng_picture_free(every);
        ng_path_free(p);
        printf("shares holders=%zu budget=%u read_every=%u polls=%u nodes=%zu pseudo=%d", n_pids, budget, every_n,
               compared, n_nodes, n_pseudo > 0);
        if (!compared) {
                printf(" (no CPU time to compare)\n");
                return 2;
        }
        double run_diff = 0;
        normalize(all_sum, n_nodes);
        for (size_t j = 0; j < n_nodes; j++) {
                got_sum[j] /= compared;
                run_diff = fmax(run_diff, fabs(got_sum[j] - all_sum[j]));
        }
        printf(" run_diff_points=%.2f turn_max_diff_points=%.2f turn_mean_diff_points=%.2f poll_max_diff_points=%.2f",
               run_diff * 100, worst * 100, sum / compared * 100, worst_poll * 100);
        print_shares("turns", got_sum, n_nodes);
        print_shares("all_threads", all_sum, n_nodes);
        printf("\n");
        return 0;
usage:
        fprintf(stderr, "usage: cpu-shares -s SHMID [-b BUDGET] [-n POLLS] [-i MS]\n");
        return 1;
}

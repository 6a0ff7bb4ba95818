/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The price of a placement (see ng-price.h for the model). */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-latency.h"
#include "ng-price.h"
#include "util.h"

const char *ng_price_source_name(enum ng_price_source src)
{
        static const char *const names[] = {
                [NG_PRICE_SLIT] = "slit",
                [NG_PRICE_MEASURED] = "measured",
                [NG_PRICE_HMAT] = "hmat",
        };
        return NG_NAME(names, src, "none");
}

void ng_price_done(struct ng_price *p)
{
        if (!p)
                return;
        free(p->cpu_share);
        p->cpu_share = NULL;
        p->n_cpu_share = 0;
}

static int cpu_node(const struct ng_snapshot *s, int cpu)
{
        if (cpu < 0)
                return -1;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (ng_bitmap_test(&s->topo.nodes[i].cpus, (unsigned) cpu))
                        return s->topo.nodes[i].id;
        return -1;
}

static size_t node_index(const struct ng_snapshot *s, int id)
{
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].id == id)
                        return i;
        return SIZE_MAX;
}

int ng_price_cpu_share(const struct ng_snapshot *s, const pid_t *pids, size_t n_pids,
                       const struct ng_bitmap *cpu_nodes, struct ng_node_share **ret, size_t *ret_n,
                       bool *ret_measured)
{
        size_t n = s->topo.n_nodes;
        _cleanup_free_ double *w = calloc(n ? n : 1, sizeof(*w));
        double total = 0;
        if (!w)
                return -ENOMEM;
        size_t at = 0;
        for (size_t k = 0; k < n_pids; k++) {
                const struct ng_proc *pr = ng_snapshot_proc_next(s, pids[k], &at);
                if (!pr)
                        continue;
                /* Each thread where it last ran (MariaDB is one process
                 * whose threads run everywhere), else the process. */
                for (size_t t = 0; t < (pr->n_tasks ? pr->n_tasks : 1); t++) {
                        int cpu = pr->n_tasks ? pr->tasks[t].processor : pr->stat.processor;
                        uint64_t ticks = pr->n_tasks ? pr->tasks[t].weight_ticks : pr->cpu_weight_ticks;
                        size_t i = node_index(s, cpu_node(s, cpu));
                        if (i == SIZE_MAX || ticks == 0)
                                continue;
                        w[i] += (double) ticks;
                        total += (double) ticks;
                }
        }
        bool measured = total > 0;
        if (!measured)
                for (size_t i = 0; i < n; i++)
                        if (ng_bitmap_test(cpu_nodes, (unsigned) s->topo.nodes[i].id)) {
                                w[i] = 1;
                                total += 1;
                        }
        struct ng_node_share *v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        size_t m = 0;
        for (size_t i = 0; i < n && total > 0; i++)
                if (w[i] > 0)
                        v[m++] = (struct ng_node_share) { s->topo.nodes[i].id, w[i] / total };
        *ret = v;
        *ret_n = m;
        *ret_measured = measured;
        return 0;
}

/* L(i,j) and B(i,j) from the measured matrices, the HMAT, or the SLIT
 * (and 1 per node); NAN for a cell the source lacks. */
static double lat(const struct ng_snapshot *s, enum ng_price_source src, int i, int j)
{
        if (src == NG_PRICE_MEASURED)
                return ng_latency_ns(s->latency, i, j);
        if (src == NG_PRICE_HMAT) {
                const struct ng_hmat_access *a = ng_snapshot_hmat(s, i, j);
                return a && a->read_latency_ns > 0 ? (double) a->read_latency_ns : NAN;
        }
        int d = ng_snapshot_distance(s, i, j);
        return d > 0 ? d : NAN;
}

static double bw(const struct ng_snapshot *s, enum ng_price_source src, int i, int j)
{
        if (src == NG_PRICE_MEASURED)
                return ng_latency_bandwidth_mbps(s->latency, i, j);
        if (src == NG_PRICE_HMAT) {
                const struct ng_hmat_access *a = ng_snapshot_hmat(s, i, j);
                return a && a->read_bandwidth_mbps > 0 ? (double) a->read_bandwidth_mbps : NAN;
        }
        return 1.0;
}

struct dist {
        const struct ng_node_share *cpu;
        size_t n_cpu;
        const int *mem;         /* memory nodes */
        const double *m;        /* their shares */
        size_t n_mem;
};

/* Returns NAN when a cell is missing. */
static double avg_latency(const struct ng_snapshot *s, enum ng_price_source src, const struct dist *d)
{
        double sum = 0;
        for (size_t a = 0; a < d->n_cpu; a++)
                for (size_t b = 0; b < d->n_mem; b++)
                        if (d->m[b] > 0)
                                sum += d->cpu[a].share * d->m[b] * lat(s, src, d->cpu[a].node, d->mem[b]);
        return sum;
}

static double ceiling(const struct ng_snapshot *s, enum ng_price_source src, const struct dist *d)
{
        double best = INFINITY;
        for (size_t b = 0; b < d->n_mem; b++) {
                if (d->m[b] <= 0)
                        continue;
                double bj = 0;
                for (size_t a = 0; a < d->n_cpu; a++)
                        bj += d->cpu[a].share * bw(s, src, d->cpu[a].node, d->mem[b]);
                double t = bj / d->m[b];
                if (isnan(t))
                        return NAN;
                if (t < best)
                        best = t;
        }
        return isinf(best) ? NAN : best;
}

static double local_latency(const struct ng_snapshot *s, enum ng_price_source src, const struct ng_node_share *cpu,
                            size_t n)
{
        double sum = 0;
        for (size_t a = 0; a < n; a++)
                sum += cpu[a].share * lat(s, src, cpu[a].node, cpu[a].node);
        return sum;
}

/* Fills every figure from one source; false when a cell is missing. */
static bool fill(const struct ng_snapshot *s, enum ng_price_source src, const struct dist *now, const struct dist *il,
                 struct ng_price *p)
{
        p->expected_latency = avg_latency(s, src, now);
        p->interleaved_latency = avg_latency(s, src, il);
        p->local_latency = local_latency(s, src, now->cpu, now->n_cpu);
        p->bandwidth_ceiling = ceiling(s, src, now);
        p->interleaved_bandwidth_ceiling = ceiling(s, src, il);
        return !isnan(p->expected_latency) && !isnan(p->interleaved_latency) && !isnan(p->local_latency) &&
               !isnan(p->bandwidth_ceiling) && !isnan(p->interleaved_bandwidth_ceiling);
}

static int build(const struct ng_snapshot *s, const struct ng_bitmap *cpu_nodes, const struct ng_node_bytes *mem,
                 size_t n_mem, int *ids, double *now_m, double *il_m, size_t *ret_n, unsigned *ret_k)
{
        uint64_t total = 0;
        for (size_t b = 0; b < n_mem; b++)
                total += mem[b].bytes;
        unsigned k = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                k += ng_bitmap_test(cpu_nodes, (unsigned) s->topo.nodes[i].id);
        if (total == 0 || k == 0)
                return -ENODATA;
        size_t n = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                int id = s->topo.nodes[i].id;
                double m = 0;
                for (size_t b = 0; b < n_mem; b++)
                        if (mem[b].node == id)
                                m += (double) mem[b].bytes / (double) total;
                ids[n] = id;
                now_m[n] = m;
                il_m[n++] = ng_bitmap_test(cpu_nodes, (unsigned) id) ? 1.0 / k : 0;
        }
        *ret_n = n;
        *ret_k = k;
        return 0;
}

int ng_price_compute(const struct ng_snapshot *s, const struct ng_bitmap *cpu_nodes,
                     const struct ng_node_share *cpu, size_t n_cpu, const struct ng_node_bytes *mem, size_t n_mem,
                     struct ng_price *ret)
{
        memset(ret, 0, sizeof(*ret));
        size_t n = s->topo.n_nodes;
        _cleanup_free_ int *ids = calloc(n ? n : 1, sizeof(*ids));
        _cleanup_free_ double *now_m = calloc(n ? n : 1, sizeof(double)), *il_m = calloc(n ? n : 1, sizeof(double));
        ret->cpu_share = calloc(n_cpu ? n_cpu : 1, sizeof(*ret->cpu_share));
        int r = ids && now_m && il_m && ret->cpu_share ? 0 : -ENOMEM;
        size_t n_nodes = 0;
        unsigned k = 0;
        if (r == 0 && n_cpu > 0 && build(s, cpu_nodes, mem, n_mem, ids, now_m, il_m, &n_nodes, &k) == 0) {
                memcpy(ret->cpu_share, cpu, n_cpu * sizeof(*cpu));
                ret->n_cpu_share = n_cpu;
                ret->interleave_nodes = k;
                double local = 0;
                for (size_t a = 0; a < n_cpu; a++)
                        for (size_t b = 0; b < n_nodes; b++)
                                if (ids[b] == cpu[a].node)
                                        local += cpu[a].share * now_m[b];
                ret->remote_access_ratio = local >= 1 ? 0 : 1 - local;
                struct dist now = { cpu, n_cpu, ids, now_m, n_nodes }, il = { cpu, n_cpu, ids, il_m, n_nodes };
                /* A saved probe, then the firmware's HMAT, then the SLIT:
                 * the first that has every cell the instance needs. */
                if (s->latency && fill(s, NG_PRICE_MEASURED, &now, &il, ret))
                        ret->source = NG_PRICE_MEASURED;
                else if (ng_snapshot_has_hmat(s) && fill(s, NG_PRICE_HMAT, &now, &il, ret))
                        ret->source = NG_PRICE_HMAT;
                else if (fill(s, NG_PRICE_SLIT, &now, &il, ret))
                        ret->source = NG_PRICE_SLIT;
        }
        if (ret->source == NG_PRICE_NONE) {
                ng_price_done(ret);
                memset(ret, 0, sizeof(*ret));
        }
        return r;
}

double ng_price_latency_pct(const struct ng_price *p)
{
        if (p->source == NG_PRICE_NONE || !(p->local_latency > 0))
                return NAN;
        return (p->expected_latency / p->local_latency - 1) * 100;
}

double ng_price_ceiling_nodes(const struct ng_price *p)
{
        if (p->source == NG_PRICE_NONE || !(p->interleaved_bandwidth_ceiling > 0))
                return NAN;
        return p->bandwidth_ceiling / p->interleaved_bandwidth_ceiling * p->interleave_nodes;
}

/* ---- HIDDEN_HOP ---- */

static bool worst_pair(const struct ng_snapshot *s, enum ng_price_source src, int i, struct ng_hidden_hop *ret)
{
        double worst = NG_HIDDEN_HOP_RATIO;
        bool found = false;
        for (size_t a = 0; a < s->topo.n_nodes; a++)
                for (size_t b = 0; b < s->topo.n_nodes; b++) {
                        int near = s->topo.nodes[a].id, far = s->topo.nodes[b].id;
                        if (near == i || far == i || near == far)
                                continue;
                        int ds_near = ng_snapshot_distance(s, i, near), ds_far = ng_snapshot_distance(s, i, far);
                        double ln = lat(s, src, i, near), lf = lat(s, src, i, far);
                        if (ds_near <= 0 || ds_far <= 0 || ds_far > ds_near || isnan(ln) || isnan(lf) ||
                            lf <= worst * ln)
                                continue;
                        worst = lf / ln;
                        *ret = (struct ng_hidden_hop) { i, near, far, ds_near, ds_far, ln, lf, src };
                        found = true;
                }
        return found;
}

int ng_price_hidden_hops(const struct ng_snapshot *s, struct ng_hidden_hop **ret)
{
        *ret = NULL;
        /* The probe's matrix when one was saved, else the firmware's HMAT. */
        enum ng_price_source src = s->latency ? NG_PRICE_MEASURED : NG_PRICE_HMAT;
        if (src == NG_PRICE_HMAT && !ng_snapshot_has_hmat(s))
                return 0;
        _cleanup_free_ struct ng_hidden_hop *v = calloc(s->topo.n_nodes ? s->topo.n_nodes : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        int n = 0;
        for (size_t r = 0; r < s->topo.n_nodes; r++) {
                int id = s->topo.nodes[r].id;
                bool row = src == NG_PRICE_MEASURED ? ng_latency_row(s->latency, id) >= 0
                                                    : !ng_bitmap_empty(&s->topo.nodes[r].cpus);
                if (row)
                        n += worst_pair(s, src, id, &v[n]);
        }
        if (n == 0)
                return 0;
        *ret = ng_steal_ptr(&v);
        return n;
}

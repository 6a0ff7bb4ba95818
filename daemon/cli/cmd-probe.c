/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numaguardctl probe [--json] [--nodes LIST] [--size SIZE] [--save]`:
 * measure this host's latency and read bandwidth per (CPU node, memory
 * node) pair (lib/1-collect/host/probe.c), print them beside the SLIT, and with --save
 * keep them in /var/lib/numaguard/latency.json (under --root: the tree's).
 * --save is checked before anything is measured: a probe takes seconds to
 * minutes of every CPU of a node, not to be thrown away for want of a
 * writable /var/lib. A matrix whose runs disagree (NG_PROBE_MAX_SPREAD) is
 * printed with a warning per cell and never saved: it measured the load.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cmd-probe.h"
#include "common.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-latency.h"
#include "ng-path.h"
#include "ng-probe.h"
#include "ng-report.h"
#include "ng-snapshot.h"
#include "term.h"

static void progress(void *userdata, int cpu_node, int mem_node, double seconds, size_t done, size_t total)
{
        (void) userdata;
        fprintf(stderr, "\rnumaguardctl: probe: CPU node %d -> memory node %d: %.1f s (%zu of %zu pairs)%s",
                cpu_node, mem_node, seconds, done, total, done == total ? "\n" : "   ");
}

/* A size as everywhere else (ng_parse_size_bytes: 64M, 1G, 512MiB), or a
 * bare number of MiB as 0.1.0 took it; whole MiB from 1M to 1T. */
static int parse_size(const char *arg, uint64_t *ret)
{
        uint64_t bytes = 0;
        size_t digits = strspn(arg, "0123456789");
        int r = digits > 0 && arg[digits] == '\0' && digits <= 7 ? (bytes = strtoull(arg, NULL, 10) << 20, 0)
                                                                  : ng_parse_size_bytes(arg, &bytes);
        if (r < 0 || bytes < (UINT64_C(1) << 20) || bytes > (UINT64_C(1) << 40) || bytes % (UINT64_C(1) << 20)) {
                ctl_usage_error("probe", "--size: '%s' is not a buffer size of whole MiB from 1M to 1T "
                                "(64M, 1G; a bare number is MiB)", arg);
                return -EINVAL;
        }
        *ret = bytes;
        return 0;
}

static int print_text(const struct ng_snapshot *s, const struct ng_latency *m, uint64_t size, unsigned reps, FILE *f)
{
        fprintf(f, "measured %s: a %" PRIu64 " MiB buffer bound to each memory node (placement checked with "
                "move_pages, %u pages each), median of %u runs\n\n", m->measured_at, size >> 20,
                m->pages_verified[0], reps);
        return ng_report_latency_text(s, m, f);
}

static int parse_nodes(const struct ctl_opts *o, struct ng_bitmap *ret)
{
        *ret = (struct ng_bitmap) {0};
        if (!o->nodes)
                return 0;
        if (ng_bitmap_parse_list(o->nodes, ret) < 0 || ng_bitmap_empty(ret)) {
                ctl_usage_error("probe", "--nodes: '%s' is not a node list such as 0-3,6", o->nodes);
                return -EINVAL;
        }
        return 0;
}

static int measure(const struct ctl_opts *o, const struct ng_probe_opts *po, struct ng_latency **ret)
{
        struct ng_path *p;
        struct ng_snapshot *s = NULL;
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.skip_procs = true;
        int r = ng_path_new(NULL, &p);
        if (r >= 0) {
                r = ng_snapshot_collect(p, &co, &s);
                ng_path_free(p);
        }
        if (r < 0)
                return ctl_fail("reading the host", r);
        char err[256] = "";
        r = ng_probe_run(s, po, ret, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "numaguardctl: probe: %s\n", err[0] ? err : strerror(-r));
        else if (o->json) {
                char *text;
                r = ng_latency_format(*ret, &text);
                if (r >= 0) {
                        fputs(text, stdout);
                        free(text);
                }
        } else
                r = print_text(s, *ret, po->size_bytes, po->reps, stdout);
        ng_snapshot_free(s);
        return r < 0 ? NG_EXIT_UNKNOWN : NG_EXIT_OK;
}

/* NG_PROBE_MAX_SPREAD, or $NUMAGUARD_PROBE_MAX_SPREAD (tests: 1 makes any
 * two runs disagree, a large one none). */
static double max_spread(void)
{
        const char *e = getenv("NUMAGUARD_PROBE_MAX_SPREAD");
        char *end;
        double v = e && *e ? strtod(e, &end) : 0;
        return e && *e && !*end && v >= 1 ? v : NG_PROBE_MAX_SPREAD;
}

/* The cells whose runs disagree, one stderr line each; how many. */
static size_t warn_unstable(const struct ng_latency *m)
{
        double limit = max_spread();
        size_t n = ng_probe_unstable(m, limit);
        for (size_t r = 0; n && r < m->n_cpu_nodes; r++)
                for (size_t c = 0; c < m->n_nodes; c++) {
                        size_t i = r * m->n_nodes + c;
                        bool lat = m->latency_spread[i] > limit;
                        bool bw = m->bandwidth_spread[i] > limit;
                        if (!lat && !bw)
                                continue;
                        fprintf(stderr, "numaguardctl: probe: CPU node %d -> memory node %d: its runs disagree:",
                                m->cpu_nodes[r], m->nodes[c]);
                        if (lat)
                                fprintf(stderr, " latency %.2fx apart (median %.1f ns)%s", m->latency_spread[i],
                                        m->latency_ns[i], bw ? "," : "");
                        if (bw)
                                fprintf(stderr, " bandwidth %.2fx apart (median %.0f MB/s)", m->bandwidth_spread[i],
                                        m->bandwidth_mbps[i]);
                        fputs("; something else was running\n", stderr);
                }
        return n;
}

static int save(const struct ctl_opts *o, const struct ng_latency *m, size_t unstable)
{
        const char *root = o->root ? o->root : "";
        if (unstable) {
                fprintf(stderr, "numaguardctl: probe: not saved to %s%s: the runs of %zu cell%s disagree by more "
                        "than %gx; probe again when the host is quiet\n", root, NG_LATENCY_FILE, unstable,
                        unstable == 1 ? "" : "s", max_spread());
                return NG_EXIT_WARNING;
        }
        int e = ng_latency_write(o->root, m);
        if (e < 0)
                fprintf(stderr, "numaguardctl: probe: saving %s%s: %s\n", root, NG_LATENCY_FILE, strerror(-e));
        else
                fprintf(stderr, "numaguardctl: probe: saved to %s%s\n", root, NG_LATENCY_FILE);
        return e < 0 ? NG_EXIT_UNKNOWN : NG_EXIT_OK;
}

int ctl_probe(const struct ctl_opts *o)
{
        struct ng_probe_opts po = { .size_bytes = NG_PROBE_DEFAULT_SIZE_BYTES, .reps = NG_PROBE_DEFAULT_REPS };
        if ((o->size && parse_size(o->size, &po.size_bytes) < 0) || parse_nodes(o, &po.nodes) < 0)
                return NG_EXIT_UNKNOWN;
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        int e = o->save ? ng_latency_check_writable(o->root) : 0;
        if (e < 0) {
                fprintf(stderr, "numaguardctl: probe: cannot save to %s%s: %s; nothing measured\n",
                        o->root ? o->root : "", NG_LATENCY_FILE, strerror(-e));
                return NG_EXIT_UNKNOWN;
        }
        po.floor_bytes = cfg->node_free_floor_bytes;
        po.node_floor = ng_node_free_floor;
        if (o->term && o->term->progress)
                po.progress = progress;
        struct ng_latency *m = NULL;
        int r = measure(o, &po, &m);
        if (r == NG_EXIT_OK && fflush(stdout) != 0)
                r = ctl_fail("writing output", -errno);
        size_t unstable = r == NG_EXIT_OK ? warn_unstable(m) : 0;
        if (r == NG_EXIT_OK && o->save)
                r = save(o, m, unstable);
        else if (r == NG_EXIT_OK && unstable)
                r = NG_EXIT_WARNING;
        ng_latency_free(m);
        return r;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numaguardctl: the command-line face of libnumaguard. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-plan.h"
#include "ng-report.h"

static void usage(FILE *f)
{
        fputs("Usage: numaguardctl [OPTIONS] COMMAND\n"
              "\n"
              "Commands:\n"
              "  audit               instances, where their shared memory sits, findings\n"
              "  topology            nodes, CPUs, memory, hugepage pools, distances\n"
              "  segments            shared memory segments and their placement per node\n"
              "  hugepages plan      the pools per node the instances need, and how to get them\n"
              "  hugepages reserve --size 2M|1G --pages P [--node N]\n"
              "                      size the pools per node (P in total over the nodes\n"
              "                      with memory, or P on node N); --dry-run first\n"
              "  hugepages apply     carry out `hugepages plan` (--dry-run first)\n"
              "  cpuset apply INST   set INST's cgroup cpuset.mems/cpus to its policy (--dry-run)\n"
              "  rebalance INST      move INST's cyclops segments' pages over its nodes (--dry-run)\n"
              "  snapshot -o FILE    capture what numaguard reads into FILE.tar.gz\n"
              "  status              ask the running numaguardd: last poll, placement,\n"
              "                      active alerts (exit 3 when it is not running)\n"
              "  reload              make numaguardd reload its configuration (root)\n"
              "\n"
              "Options:\n"
              "  -r, --root DIR      read DIR/proc and DIR/sys instead of the live host\n"
              "  -j, --json          machine-readable output (see numaguardctl(1))\n"
              "  -c, --config FILE   configuration (default " NG_CONFIG_DEFAULT_PATH ")\n"
              "      --exact         audit: read numa_maps of one process per segment\n"
              "                      instead of sampling with move_pages(2)\n"
              "  -o, --output FILE   output file (snapshot)\n"
              "      --dry-run       corrections: show every write, change nothing\n"
              "      --size 2M|1G    hugepages reserve: the page size\n"
              "      --pages P       hugepages reserve: pages wanted\n"
              "      --node N        hugepages reserve: on node N only\n"
              "      --socket PATH   numaguardd's control socket (status, reload; default:\n"
              "                      the configuration's socket)\n"
              "  -h, --help          this text\n"
              "      --version       print the version\n"
              "\n"
              "Exit status: 0 success (audit: no warning), 1 audit found a warning,\n"
              "2 audit found a critical problem, 3 could not audit, bad usage or I/O error.\n", f);
}

static int load(const struct ctl_opts *o, bool procs, struct ng_snapshot **ret)
{
        struct ng_path *p;
        int r = ng_path_new(o->root, &p);
        if (r < 0)
                return r;
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.skip_procs = !procs;
        if (o->exact)
                co.placement = NG_PLACEMENT_EXACT;
        r = ng_snapshot_collect(p, &co, ret);
        ng_path_free(p);
        return r;
}

static int cmd_topology(const struct ctl_opts *o)
{
        struct ng_snapshot *s;
        int r = load(o, false, &s);
        if (r < 0)
                return ctl_fail_read(o, r);
        r = ctl_render_topology(s, o->json, stdout);
        ng_snapshot_free(s);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r < 0 ? ctl_fail("writing output", r) : NG_EXIT_OK;
}

static int cmd_segments(const struct ctl_opts *o)
{
        struct ng_snapshot *s;
        int r = load(o, true, &s);
        if (r < 0)
                return ctl_fail_read(o, r);
        r = ctl_render_segments(s, o->json, stdout);
        ng_snapshot_free(s);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r < 0 ? ctl_fail("listing segments", r) : NG_EXIT_OK;
}

static int cmd_audit(const struct ctl_opts *o)
{
        struct ng_config *cfg;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        struct ng_snapshot *s = NULL;
        struct ng_audit *a = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        if (r < 0)
                r = ctl_fail_read(o, r);
        else if ((r = ng_audit_run(s, cfg, &a)) < 0)
                r = ctl_fail("auditing", r);
        else {
                r = o->json ? ctl_print_json(ng_report_audit_json(s, a), stdout) : ng_report_audit_text(s, a, stdout);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
                r = r < 0 ? ctl_fail("writing output", r) : ng_audit_exit_status(a);
        }
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        return r;
}

static int cmd_hugepages(const struct ctl_opts *o)
{
        if (o->n_args == 1 && strcmp(o->args[0], "reserve") == 0)
                return ctl_hugepages_reserve(o);
        if (o->n_args == 1 && strcmp(o->args[0], "apply") == 0)
                return ctl_hugepages_apply(o);
        if (o->n_args != 1 || strcmp(o->args[0], "plan") != 0) {
                fprintf(stderr, "numaguardctl: usage: numaguardctl hugepages plan [--json]\n"
                        "       numaguardctl hugepages reserve --size 2M|1G --pages P [--node N] [--dry-run]\n"
                        "       numaguardctl hugepages apply [--dry-run]\n");
                return NG_EXIT_UNKNOWN;
        }
        struct ng_config *cfg;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        struct ng_snapshot *s = NULL;
        struct ng_audit *a = NULL;
        struct ng_plan *p = NULL;
        int r = ctl_collect_for_audit(o, cfg, &s);
        if (r < 0)
                r = ctl_fail_read(o, r);
        else if ((r = ng_audit_run(s, cfg, &a)) < 0 || (r = ng_plan_hugepages(s, cfg, a, &p)) < 0)
                r = ctl_fail("planning", r);
        else {
                r = o->json ? ctl_print_json(ng_report_plan_json(p), stdout) : ng_report_plan_text(p, stdout);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
                r = r < 0 ? ctl_fail("writing output", r) : (p->changes ? NG_EXIT_WARNING : NG_EXIT_OK);
        }
        ng_plan_free(p);
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        return r;
}

static const struct {
        const char *name;
        int (*run)(const struct ctl_opts *o);
        bool takes_args;
} commands[] = {
        { "audit", cmd_audit, false },
        { "hugepages", cmd_hugepages, true },
        { "topology", cmd_topology, false },
        { "segments", cmd_segments, false },
        { "snapshot", ctl_snapshot, false },
        { "status", ctl_status, false },
        { "reload", ctl_reload, false },
        { "cpuset", ctl_cpuset, true },
        { "rebalance", ctl_rebalance, true },
};

int main(int argc, char **argv)
{
        enum { OPT_VERSION = 0x100, OPT_EXACT, OPT_SOCKET, OPT_DRY_RUN, OPT_SIZE, OPT_PAGES, OPT_NODE };
        static const struct option longopts[] = {
                { "root", required_argument, NULL, 'r' },
                { "json", no_argument, NULL, 'j' },
                { "output", required_argument, NULL, 'o' },
                { "config", required_argument, NULL, 'c' },
                { "exact", no_argument, NULL, OPT_EXACT },
                { "dry-run", no_argument, NULL, OPT_DRY_RUN },
                { "size", required_argument, NULL, OPT_SIZE },
                { "pages", required_argument, NULL, OPT_PAGES },
                { "node", required_argument, NULL, OPT_NODE },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {}
        };
        struct ctl_opts o = { .pages = -1, .node = -1 };
        int c;
        while ((c = getopt_long(argc, argv, "r:jo:c:h", longopts, NULL)) >= 0) {
                switch (c) {
                case 'r': o.root = optarg; break;
                case 'j': o.json = true; break;
                case 'o': o.output = optarg; break;
                case 'c': o.config = optarg; break;
                case OPT_EXACT: o.exact = true; break;
                case OPT_DRY_RUN: o.dry_run = true; break;
                case OPT_SIZE: o.size = optarg; break;
                case OPT_PAGES:
                case OPT_NODE: {
                        char *end;
                        errno = 0;
                        long v = strtol(optarg, &end, 10);
                        if (errno || *end || v < 0 || v > (c == OPT_NODE ? 1023 : 1L << 30)) {
                                fprintf(stderr, "numaguardctl: --%s: invalid value '%s'\n",
                                        c == OPT_NODE ? "node" : "pages", optarg);
                                return NG_EXIT_UNKNOWN;
                        }
                        if (c == OPT_NODE)
                                o.node = (int) v;
                        else
                                o.pages = v;
                        break;
                }
                case OPT_SOCKET: o.socket = optarg; break;
                case 'h': usage(stdout); return NG_EXIT_OK;
                case OPT_VERSION: puts("numaguardctl " NG_VERSION); return NG_EXIT_OK;
                default: usage(stderr); return NG_EXIT_UNKNOWN;
                }
        }
        if (optind >= argc) {
                usage(stderr);
                return NG_EXIT_UNKNOWN;
        }
        o.args = argv + optind + 1;
        o.n_args = argc - optind - 1;
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                if (strcmp(argv[optind], commands[i].name) != 0)
                        continue;
                if (o.n_args > 0 && !commands[i].takes_args) {
                        fprintf(stderr, "numaguardctl: unexpected argument '%s'\n", o.args[0]);
                        return NG_EXIT_UNKNOWN;
                }
                return commands[i].run(&o);
        }
        fprintf(stderr, "numaguardctl: unknown command '%s' (see --help)\n", argv[optind]);
        return NG_EXIT_UNKNOWN;
}

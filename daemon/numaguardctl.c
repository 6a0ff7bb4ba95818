/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numaguardctl: the command-line face of libnumaguard. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ng-report.h"
#include "ng-segments.h"

static void usage(FILE *f)
{
        fputs("Usage: numaguardctl [OPTIONS] COMMAND\n"
              "\n"
              "Commands:\n"
              "  topology            nodes, CPUs, memory, hugepage pools, distances\n"
              "  segments            shared memory segments and their placement per node\n"
              "  snapshot -o FILE    capture what numaguard reads into FILE.tar.gz\n"
              "\n"
              "Options:\n"
              "  -r, --root DIR      read DIR/proc and DIR/sys instead of the live host\n"
              "  -j, --json          machine-readable output (see numaguardctl(1))\n"
              "  -o, --output FILE   output file (snapshot)\n"
              "  -h, --help          this text\n"
              "      --version       print the version\n"
              "\n"
              "Exit status: 0 success, 3 could not read the host or bad usage.\n", f);
}

int ctl_fail(const char *what, int r)
{
        fprintf(stderr, "numaguardctl: %s: %s\n", what, strerror(r < 0 ? -r : r));
        return NG_EXIT_UNKNOWN;
}

static int print_json(struct json_object *o, FILE *f)
{
        if (!o)
                return -ENOMEM;
        fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
        fputc('\n', f);
        json_object_put(o);
        return ferror(f) ? -EIO : 0;
}

int ctl_render_topology(const struct ng_snapshot *s, bool json, FILE *f)
{
        return json ? print_json(ng_report_topology_json(s), f) : ng_report_topology_text(s, f);
}

int ctl_render_segments(const struct ng_snapshot *s, bool json, FILE *f)
{
        struct ng_segment *v;
        size_t n;
        int r = ng_segments_build(s, &v, &n);
        if (r < 0)
                return r;
        r = json ? print_json(ng_report_segments_json(v, n), f) : ng_report_segments_text(s, v, n, f);
        ng_segments_free(v, n);
        return r;
}

static int load(const struct ctl_opts *o, bool procs, struct ng_snapshot **ret)
{
        struct ng_path *p;
        int r = ng_path_new(o->root, &p);
        if (r < 0)
                return r;
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.skip_procs = !procs;
        r = ng_snapshot_collect(p, &co, ret);
        ng_path_free(p);
        return r;
}

static int cmd_topology(const struct ctl_opts *o)
{
        struct ng_snapshot *s;
        int r = load(o, false, &s);
        if (r < 0)
                return ctl_fail("reading topology", r);
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
                return ctl_fail("reading the host", r);
        r = ctl_render_segments(s, o->json, stdout);
        ng_snapshot_free(s);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        return r < 0 ? ctl_fail("listing segments", r) : NG_EXIT_OK;
}

static const struct {
        const char *name;
        int (*run)(const struct ctl_opts *o);
} commands[] = {
        { "topology", cmd_topology },
        { "segments", cmd_segments },
        { "snapshot", ctl_snapshot },
};

int main(int argc, char **argv)
{
        enum { OPT_VERSION = 0x100 };
        static const struct option longopts[] = {
                { "root", required_argument, NULL, 'r' },
                { "json", no_argument, NULL, 'j' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {}
        };
        struct ctl_opts o = {0};
        int c;
        while ((c = getopt_long(argc, argv, "r:jo:h", longopts, NULL)) >= 0) {
                switch (c) {
                case 'r': o.root = optarg; break;
                case 'j': o.json = true; break;
                case 'o': o.output = optarg; break;
                case 'h': usage(stdout); return NG_EXIT_OK;
                case OPT_VERSION: puts("numaguardctl " NG_VERSION); return NG_EXIT_OK;
                default: usage(stderr); return NG_EXIT_UNKNOWN;
                }
        }
        if (optind >= argc) {
                usage(stderr);
                return NG_EXIT_UNKNOWN;
        }
        if (optind + 1 < argc) {
                fprintf(stderr, "numaguardctl: unexpected argument '%s'\n", argv[optind + 1]);
                return NG_EXIT_UNKNOWN;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (!strcmp(argv[optind], commands[i].name))
                        return commands[i].run(&o);
        fprintf(stderr, "numaguardctl: unknown command '%s' (see --help)\n", argv[optind]);
        return NG_EXIT_UNKNOWN;
}

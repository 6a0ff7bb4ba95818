/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaguardctl: the command-line face of libnumaguard.
 *
 * Two tables drive the command line: the options (getopt's long options and
 * their help lines) and the commands (synopsis, the options each takes, exit
 * statuses, an example). A new command is one more entry in `commands`; an
 * option a command does not list is a usage error naming the command, and
 * `help COMMAND` / `COMMAND --help` print its entry.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-cpuset.h"
#include "cmd-hugepages.h"
#include "cmd-probe.h"
#include "cmd-rebalance.h"
#include "cmd-rehearse.h"
#include "cmd-report.h"
#include "cmd-snapshot.h"
#include "cmd-status.h"
#include "common.h"
#include "ng-config.h"
#include "ng-latency.h"
#include "ng-owner.h"
#include "term.h"
#include "util.h"

#define PROG "numaguardctl"

/* One bit per option a command may take. */
enum {
        CO_ROOT = 1u << 0,
        CO_JSON = 1u << 1,
        CO_CONFIG = 1u << 2,
        CO_EXACT = 1u << 3,
        CO_OUTPUT = 1u << 4,
        CO_DRY_RUN = 1u << 5,
        CO_SIZE = 1u << 6,
        CO_PAGES = 1u << 7,
        CO_NODE = 1u << 8,
        CO_SOCKET = 1u << 9,
        CO_COLOR = 1u << 10,
        CO_VERBOSE = 1u << 11,
        CO_PERSIST = 1u << 12,
        CO_NODES = 1u << 13,
        CO_SAVE = 1u << 14,
        CO_INSTANCE = 1u << 15,
        CO_TEXT = CO_COLOR,     /* what every command printing text takes */
};

enum { OPT_VERSION = 0x100, OPT_EXACT, OPT_SOCKET, OPT_DRY_RUN, OPT_SIZE, OPT_PAGES, OPT_NODE, OPT_COLOR, OPT_PERSIST,
       OPT_NODES, OPT_SAVE, OPT_INSTANCE };

static const struct ctl_option {
        unsigned bit;           /* 0: global (--help, --version) */
        const char *name;
        int val;                /* getopt's value: the short letter or OPT_* */
        const char *arg;        /* NULL: takes no argument */
        const char *help;
} options[] = {
        { CO_ROOT, "root", 'r', "DIR", "read DIR/proc and DIR/sys (a captured tree) instead of the live host" },
        { CO_CONFIG, "config", 'c', "FILE", "configuration (default " NG_CONFIG_DEFAULT_PATH ")" },
        { CO_INSTANCE, "instance", OPT_INSTANCE, "NAME",
          "only this instance (repeatable): its segments and findings, and the exit status of those" },
        { CO_EXACT, "exact", OPT_EXACT, NULL,
          "every resident page instead of a sample: a shmem segment asked of itself whole, a hugetlb "
          "segment by the numa_maps of one process that maps it" },
        { CO_JSON, "json", 'j', NULL, "machine-readable output (schema in numaguardctl(1))" },
        { CO_VERBOSE, "verbose", 'v', NULL,
          "every segment on its own line, also each Oracle AMM granule file and each small segment" },
        { CO_OUTPUT, "output", 'o', "FILE", "the archive to write (FILE.tar.gz)" },
        { CO_DRY_RUN, "dry-run", OPT_DRY_RUN, NULL, "show every write, change nothing" },
        { CO_SIZE, "size", OPT_SIZE, "SIZE",
          "hugepages reserve: the page size, 2M or 1G (also 2048kB, 1048576kB); probe: the buffer, 256M by default "
          "(64M, 1G; a bare number is MiB)" },
        { CO_PAGES, "pages", OPT_PAGES, "P", "pages wanted: in total over the nodes with memory, or on --node" },
        { CO_NODE, "node", OPT_NODE, "N", "on node N only" },
        { CO_PERSIST, "persist", OPT_PERSIST, NULL, "also record the pools for boot (" NG_HUGEPAGES_BOOT_FILE ")" },
        { CO_SOCKET, "socket", OPT_SOCKET, "PATH", "numaguardd's control socket (default: the configuration's)" },
        { CO_NODES, "nodes", OPT_NODES, "LIST", "only these nodes (\"0-3,6\"; default: all)" },
        { CO_SAVE, "save", OPT_SAVE, NULL, "keep the result in " NG_LATENCY_FILE " (under --root DIR: DIR's copy)" },
        { CO_COLOR, "color", OPT_COLOR, "WHEN", "colour for severities: auto (on a terminal without NO_COLOR), always, never" },
        { 0, "help", 'h', NULL, "this command's options, exit statuses and an example" },
        { 0, "version", OPT_VERSION, NULL, "print the version" },
};

#define EXIT_AUDIT \
        "  0  no warning or critical finding\n" \
        "  1  a warning\n" \
        "  2  a critical finding\n" \
        "  3  could not audit: bad usage, unreadable host or configuration, I/O error\n"
#define EXIT_REPORT \
        "  0  success\n" \
        "  3  bad usage, unreadable host, I/O error\n"
#define EXIT_CORRECTION \
        "  0  done, already as wanted, or a dry run\n" \
        "  1  partial: fewer pages granted or moved than asked\n" \
        "  2  refused by a safety check (the message gives the numbers)\n" \
        "  3  a write failed, bad usage, unreadable host or configuration\n"

static const struct ctl_command {
        const char *name;       /* one word, or "WORD SUBCOMMAND" */
        const char *args;       /* positional arguments, "INSTANCE"; NULL: none */
        unsigned opts;          /* CO_* it takes */
        unsigned required;      /* CO_* it needs */
        const char *summary;
        const char *exits;
        const char *example;
        int (*run)(const struct ctl_opts *o);
} commands[] = {
        { "audit", NULL, CO_ROOT | CO_CONFIG | CO_INSTANCE | CO_EXACT | CO_VERBOSE | CO_JSON | CO_TEXT, 0,
          "instances, where their shared memory sits, findings", EXIT_AUDIT,
          PROG " audit --json | jq '.findings[] | select(.severity == \"critical\")'", ctl_audit },
        { "topology", NULL, CO_ROOT | CO_JSON | CO_TEXT, 0, "nodes, CPUs, memory, hugepage pools, distances", EXIT_REPORT,
          PROG " topology --root /tmp/host", ctl_topology },
        { "segments", NULL, CO_ROOT | CO_EXACT | CO_JSON | CO_TEXT, 0,
          "shared memory segments and their placement per node", EXIT_REPORT, PROG " segments --json",
          ctl_segments },
        { "hugepages plan", NULL, CO_ROOT | CO_CONFIG | CO_EXACT | CO_JSON | CO_TEXT, 0,
          "the pools per node the instances need, and how to get them",
          "  0  the pools already fit\n"
          "  1  the plan changes something\n"
          "  3  bad usage, unreadable host or configuration, I/O error\n",
          PROG " hugepages plan", ctl_hugepages_plan },
        { "hugepages reserve", NULL,
          CO_ROOT | CO_CONFIG | CO_DRY_RUN | CO_PERSIST | CO_JSON | CO_TEXT | CO_SIZE | CO_PAGES | CO_NODE,
          CO_SIZE | CO_PAGES, "size a page size's pools per node (--dry-run first)", EXIT_CORRECTION,
          PROG " hugepages reserve --size 2M --pages 512 --node 1 --dry-run", ctl_hugepages_reserve },
        { "hugepages apply", NULL, CO_ROOT | CO_CONFIG | CO_EXACT | CO_DRY_RUN | CO_PERSIST | CO_JSON | CO_TEXT, 0,
          "carry out `hugepages plan` (--dry-run first)", EXIT_CORRECTION, PROG " hugepages apply --dry-run",
          ctl_hugepages_apply },
        { "cpuset apply", "INSTANCE", CO_ROOT | CO_CONFIG | CO_DRY_RUN | CO_JSON | CO_TEXT, 0,
          "set INSTANCE's cgroup cpuset.mems/cpus to its policy (--dry-run first)", EXIT_CORRECTION,
          PROG " cpuset apply ORCL --dry-run", ctl_cpuset },
        { "rebalance", "INSTANCE", CO_ROOT | CO_CONFIG | CO_EXACT | CO_DRY_RUN | CO_JSON | CO_TEXT, 0,
          "move INSTANCE's cyclops segments' pages over its nodes (--dry-run first)", EXIT_CORRECTION,
          PROG " rebalance ORCL --dry-run", ctl_rebalance },
        { "rehearse", "[INSTANCE]", CO_ROOT | CO_CONFIG | CO_JSON | CO_TEXT, 0,
          "predict what each instance's next start gets from the hugepage pools (changes nothing)",
          "  0  every instance starts in hugepages, or in 4 KiB pages as its setting asks\n"
          "  1  one falls back to 4 KiB pages, partly or wholly, or lands on one node (cyclops)\n"
          "  2  one would not start, or would die of SIGBUS at a first touch\n"
          "  3  cannot tell for one (the reason is given), bad usage, unreadable host or configuration\n",
          PROG " rehearse postgresql:/var/lib/postgresql/15/main", ctl_rehearse },
        { "snapshot", NULL, CO_ROOT | CO_CONFIG | CO_EXACT | CO_OUTPUT, 0,
          "capture what numaguard reads into a .tar.gz (-o FILE)", EXIT_REPORT, PROG " snapshot -o /tmp/host.tar.gz",
          ctl_snapshot },
        { "probe", NULL, CO_ROOT | CO_CONFIG | CO_JSON | CO_TEXT | CO_SIZE | CO_NODES | CO_SAVE, 0,
          "measure latency and read bandwidth per CPU node and memory node (--save keeps them)",
          "  0  measured (and saved with --save)\n"
          "  1  measured, but the runs of a cell disagree (a busy host): not saved\n"
          "  3  could not measure, or --save could not write (checked before measuring), bad usage\n",
          PROG " probe --size 512M --save    # after hardware or firmware changes, never in a hot path", ctl_probe },
        { "status", NULL, CO_CONFIG | CO_SOCKET | CO_JSON | CO_TEXT, 0,
          "ask the running numaguardd: last poll, placement, active alerts",
          "  0  no active warning or critical alert\n"
          "  1  an active warning\n"
          "  2  an active critical alert\n"
          "  3  numaguardd is not running or refused the request, bad usage\n",
          PROG " status --json", ctl_status },
        { "reload", NULL, CO_CONFIG | CO_SOCKET, 0, "make numaguardd reload its configuration (root)",
          "  0  numaguardd reloaded its configuration\n"
          "  3  numaguardd is not running, refused the request, or the new configuration is bad\n",
          "systemctl reload numaguard    # runs " PROG " reload", ctl_reload },
};

static const struct ctl_option *option_by_val(int val)
{
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (options[i].val == val)
                        return &options[i];
        return NULL;
}

static const struct ctl_option *option_by_bit(unsigned bit)
{
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (options[i].bit == bit)
                        return &options[i];
        return NULL;
}

/* "--root DIR" or "-r, --root DIR" into buf. */
static void option_spelling(const struct ctl_option *opt, bool with_short, char *buf, size_t size)
{
        if (with_short && opt->val < 0x100)
                snprintf(buf, size, "-%c, --%s%s%s", opt->val, opt->name, opt->arg ? " " : "", opt->arg ? opt->arg : "");
        else
                snprintf(buf, size, "%s--%s%s%s", with_short ? "    " : "", opt->name, opt->arg ? " " : "",
                         opt->arg ? opt->arg : "");
}

static void usage(FILE *f)
{
        fputs("Usage: " PROG " [OPTIONS] COMMAND [ARGUMENTS]\n\nCommands:\n", f);
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                char head[48];
                snprintf(head, sizeof(head), "%s%s%s", commands[i].name, commands[i].args ? " " : "",
                         commands[i].args ? commands[i].args : "");
                fprintf(f, "  %-24s %s\n", head, commands[i].summary);
        }
        fputs("\nSee '" PROG " help COMMAND' for a command's options, exit statuses and an example;\n"
              "numaguardctl(1) for the JSON schemas. Also: " PROG " --version.\n", f);
}

static void command_help(const struct ctl_command *c, FILE *f)
{
        char spell[64];
        fprintf(f, "Usage: " PROG " %s", c->name);
        if (c->args)
                fprintf(f, " %s", c->args);
        for (unsigned bit = 1; bit && bit <= c->opts; bit <<= 1) {
                const struct ctl_option *opt = option_by_bit(bit);
                if (!(c->opts & bit) || !opt)
                        continue;
                option_spelling(opt, false, spell, sizeof(spell));
                fprintf(f, (c->required & bit) ? " %s" : " [%s]", spell);
        }
        fprintf(f, "\n\n%c%s.\n\nOptions:\n", c->summary[0] >= 'a' && c->summary[0] <= 'z' ? c->summary[0] - 32 : c->summary[0],
                c->summary + 1);
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                if (options[i].bit && !(c->opts & options[i].bit))
                        continue;
                if (!options[i].bit && options[i].val != 'h')
                        continue;
                option_spelling(&options[i], true, spell, sizeof(spell));
                fprintf(f, "  %-22s %s\n", spell, options[i].help);
        }
        fprintf(f, "\nExit status:\n%s\nExample:\n  %s\n", c->exits, c->example);
}

/* Whether name's first word is word (and then, through *rest, what follows). */
static bool first_word_is(const char *name, const char *word, const char **rest)
{
        size_t n = strlen(word);
        if (strncmp(name, word, n) != 0 || (name[n] != '\0' && name[n] != ' '))
                return false;
        *rest = name[n] ? name + n + 1 : NULL;
        return true;
}

/* Finds the command words[0] [words[1]] names; *n_words: how many it used.
 * NULL with *n_words 1 when words[0] is a command that needs a subcommand. */
static const struct ctl_command *find_command(char **words, int n, int *n_words)
{
        const char *rest;
        *n_words = 0;
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                if (!first_word_is(commands[i].name, words[0], &rest))
                        continue;
                *n_words = 1;
                if (!rest)
                        return &commands[i];
                if (n > 1 && strcmp(rest, words[1]) == 0) {
                        *n_words = 2;
                        return &commands[i];
                }
        }
        return NULL;
}

/* The subcommands of word, "plan, reserve or apply". */
static void subcommands(const char *word, char *buf, size_t size)
{
        const char *rest, *last = NULL;
        size_t len = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                if (!first_word_is(commands[i].name, word, &rest) || !rest)
                        continue;
                if (last)
                        len += (size_t) snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? ", " : "", last);
                last = rest;
        }
        if (last)
                snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? " or " : "", last);
}

/* `help [COMMAND [SUBCOMMAND]]`; a word alone with subcommands prints them all. */
static int help(char **words, int n)
{
        if (n == 0) {
                usage(stdout);
                return NG_EXIT_OK;
        }
        int used;
        const struct ctl_command *c = find_command(words, n, &used);
        if (c && used == n) {
                command_help(c, stdout);
                return NG_EXIT_OK;
        }
        if (used == 1 && n == 1) {
                const char *rest;
                bool first = true;
                for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                        if (first_word_is(commands[i].name, words[0], &rest)) {
                                if (!first)
                                        fputs("\n", stdout);
                                command_help(&commands[i], stdout);
                                first = false;
                        }
                return NG_EXIT_OK;
        }
        return ctl_usage_error(NULL, "help: no command '%s%s%s'", words[0], n > 1 ? " " : "", n > 1 ? words[1] : "");
}

static int parse_number(const char *command, int val, const char *arg, long max, long *ret)
{
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (errno || end == arg || *end || v < 0 || v > max)
                return ctl_usage_error(command, "--%s: invalid value '%s' (a number from 0 to %ld)",
                                       option_by_val(val)->name, arg, max);
        *ret = v;
        return 0;
}

struct parsed {
        unsigned seen;          /* CO_* given */
        bool help, version;
        char bad[128];          /* the first getopt error, reported once the command is known */
        const char *pages, *node, *color;
};

static void parse(int argc, char **argv, struct ctl_opts *o, struct parsed *p)
{
        struct option longopts[ELEMENTSOF(options) + 1];
        char shortopts[2 * ELEMENTSOF(options) + 2] = ":";
        size_t ns = 1;
        for (size_t i = 0; i < ELEMENTSOF(options); i++) {
                longopts[i] = (struct option) { options[i].name, options[i].arg ? required_argument : no_argument,
                                                NULL, options[i].val };
                if (options[i].val < 0x100) {
                        shortopts[ns++] = (char) options[i].val;
                        if (options[i].arg)
                                shortopts[ns++] = ':';
                }
        }
        shortopts[ns] = '\0';
        longopts[ELEMENTSOF(options)] = (struct option) {};
        opterr = 0;     /* our messages, with the short name and a pointer to help */
        int c;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) >= 0) {
                const struct ctl_option *opt = option_by_val(c);
                if (c == '?' || c == ':') {
                        if (p->bad[0])
                                continue;
                        if (c == ':')
                                snprintf(p->bad, sizeof(p->bad), "option '%s' requires an argument", argv[optind - 1]);
                        else if (optopt > 0 && option_by_val(optopt) && !option_by_val(optopt)->arg)
                                /* A known option that takes no value, given one
                                 * (--json=yes): getopt reports its short letter. */
                                snprintf(p->bad, sizeof(p->bad), "--%s takes no value ('%s')",
                                         option_by_val(optopt)->name, argv[optind - 1]);
                        else if (optopt > 0 && optopt < 0x100)
                                snprintf(p->bad, sizeof(p->bad), "invalid option -- '%c'", optopt);
                        else
                                snprintf(p->bad, sizeof(p->bad), "unrecognized option '%s'", argv[optind - 1]);
                        continue;
                }
                p->seen |= opt ? opt->bit : 0;
                switch (c) {
                case 'r': o->root = optarg; break;
                case 'j': o->json = true; break;
                case 'o': o->output = optarg; break;
                case 'c': o->config = optarg; break;
                case OPT_EXACT: o->exact = true; break;
                case 'v': o->verbose = true; break;
                case OPT_DRY_RUN: o->dry_run = true; break;
                case OPT_PERSIST: o->persist = true; break;
                case OPT_SIZE: o->size = optarg; break;
                case OPT_NODES: o->nodes = optarg; break;
                case OPT_SAVE: o->save = true; break;
                case OPT_INSTANCE:
                        if (o->n_instances < CTL_INSTANCES_MAX)
                                o->instances[o->n_instances] = optarg;
                        o->n_instances++;
                        break;
                case OPT_PAGES: p->pages = optarg; break;
                case OPT_NODE: p->node = optarg; break;
                case OPT_SOCKET: o->socket = optarg; break;
                case OPT_COLOR: p->color = optarg; break;
                case 'h': p->help = true; break;
                case OPT_VERSION: p->version = true; break;
                }
        }
}

/* What the command line asked for, checked against the command's entry. */
static int check(const struct ctl_command *c, struct parsed *p, struct ctl_opts *o, enum ctl_color *color)
{
        char spell[64];
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (p->seen & options[i].bit & ~c->opts)
                        return ctl_usage_error(c->name, "--%s does not apply to this command", options[i].name);
        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (options[i].bit & c->required & ~p->seen) {
                        option_spelling(&options[i], false, spell, sizeof(spell));
                        return ctl_usage_error(c->name, "%s is required", spell);
                }
        if (o->n_instances > CTL_INSTANCES_MAX)
                return ctl_usage_error(c->name, "--instance: at most %d", CTL_INSTANCES_MAX);
        if (p->color && ctl_color_parse(p->color, color) < 0)
                return ctl_usage_error(c->name, "--color: '%s' is not auto, always or never", p->color);
        long v;
        if (p->pages) {
                if (parse_number(c->name, OPT_PAGES, p->pages, 1L << 30, &v) != 0)
                        return NG_EXIT_UNKNOWN;
                o->pages = v;
        }
        if (p->node) {
                if (parse_number(c->name, OPT_NODE, p->node, 1023, &v) != 0)
                        return NG_EXIT_UNKNOWN;
                o->node = (int) v;
        }
        return 0;
}

/* Runs c with stdout adapted to the terminal (term.c); JSON goes out as is. */
static int run(const struct ctl_command *c, struct ctl_opts *o, enum ctl_color color)
{
        struct ctl_term term;
        ctl_term_init(&term, color);
        o->term = &term;
        FILE *real = stdout, *adapted = o->json ? NULL : ctl_term_stdout(&term);
        if (adapted)
                stdout = adapted;       /* glibc: stdout is an ordinary variable */
        int r = c->run(o);
        if (adapted) {
                int w = fclose(adapted);
                stdout = real;
                if (w != 0 && r != NG_EXIT_UNKNOWN)
                        r = ctl_fail("writing output", -EIO);
        }
        if (fflush(stdout) != 0 && r != NG_EXIT_UNKNOWN)
                r = ctl_fail("writing output", -errno);
        return r;
}

int main(int argc, char **argv)
{
        struct ctl_opts o = { .pages = -1, .node = -1 };
        struct parsed p = {};
        parse(argc, argv, &o, &p);
        char **words = argv + optind;
        int n = argc - optind, used = 0;
        const struct ctl_command *c = NULL;
        bool is_help = n > 0 && strcmp(words[0], "help") == 0;
        if (n > 0 && !is_help)
                c = find_command(words, n, &used);
        const char *named = c ? c->name : used == 1 ? words[0] : NULL;
        if (p.bad[0])
                return ctl_usage_error(named, "%s", p.bad);
        if (p.version && !p.help && n == 0) {
                puts(PROG " " NG_VERSION);
                return NG_EXIT_OK;
        }
        if (is_help)
                return help(words + 1, n - 1);
        if (p.help)
                return n == 0 ? (usage(stdout), NG_EXIT_OK) : help(words, used ? used : 1);
        if (n == 0)
                return ctl_usage_error(NULL, "no command given");
        if (!c && used == 1) {
                char subs[96];
                subcommands(words[0], subs, sizeof(subs));
                if (n == 1)
                        return ctl_usage_error(words[0], "which one: %s?", subs);
                return ctl_usage_error(words[0], "no subcommand '%s' (%s)", words[1], subs);
        }
        if (!c)
                return ctl_usage_error(NULL, "unknown command '%s'", words[0]);
        if (p.version)
                return ctl_usage_error(c->name, "--version is not a command option");
        enum ctl_color color = CTL_COLOR_AUTO;
        int r = check(c, &p, &o, &color);
        if (r != 0)
                return r;
        o.command = c->name;
        o.args = words + used;
        o.n_args = n - used;
        if (c->args && c->args[0] != '[' && o.n_args == 0)
                return ctl_usage_error(c->name, "missing %s", c->args);
        if (o.n_args > (c->args ? 1 : 0))
                return ctl_usage_error(c->name, "unexpected argument '%s'", o.args[c->args ? 1 : 0]);
        return run(c, &o, color);
}

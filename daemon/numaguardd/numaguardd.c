/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numaguardd: audits NUMA placement of database shared memory continuously. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "check.h"
#include "log.h"
#include "manager.h"
#include "ng-config.h"

/* Exit statuses, numaguardd(8). */
enum {
        EXIT_OK = 0,
        EXIT_FAIL = 1,          /* could not start, or the loop failed */
        EXIT_USAGE = 2,
        EXIT_CONFIG = 78,       /* EX_CONFIG: the unit does not restart on it */
};

static void usage(FILE *f)
{
        fputs("Usage: numaguardd [OPTIONS]\n"
              "\n"
              "Audits NUMA placement of database shared memory every `interval`, alerts\n"
              "to journald/syslog on transitions, writes Prometheus metrics and answers\n"
              "numaguardctl status/reload on its control socket.\n"
              "\n"
              "Options:\n"
              "  -c, --config FILE     configuration (default " NG_CONFIG_DEFAULT_PATH ";\n"
              "                        missing = compiled defaults unless given here),\n"
              "                        then FILE.d/*.conf in name order\n"
              "      --check-config    validate the merged configuration against this host\n"
              "                        (or --root), name the file and line of every problem, exit\n"
              "  -r, --root DIR        read DIR/proc and DIR/sys instead of the live host\n"
              "  -f, --foreground      log plain lines to stderr (numaguardd never forks)\n"
              "      --once            poll once, alert, write metrics, exit (no socket)\n"
              "      --socket PATH     control socket (overrides the config's socket)\n"
              "      --alert-log FILE  append alerts as JSON lines to FILE instead of the\n"
              "                        journal/syslog (tests, debugging)\n"
              "  -v, --verbose         debug log lines\n"
              "  -h, --help            this text\n"
              "      --version         print the version\n"
              "\n"
              "Exit status: 0 stopped by SIGTERM/SIGINT (or --once poll done, or\n"
              "--check-config valid), 1 failure, 2 bad usage, 78 configuration error.\n", f);
}

int main(int argc, char **argv)
{
        enum { OPT_VERSION = 0x100, OPT_ONCE, OPT_SOCKET, OPT_ALERT_LOG, OPT_CHECK_CONFIG };
        static const struct option longopts[] = {
                { "config", required_argument, NULL, 'c' },
                { "root", required_argument, NULL, 'r' },
                { "foreground", no_argument, NULL, 'f' },
                { "once", no_argument, NULL, OPT_ONCE },
                { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "alert-log", required_argument, NULL, OPT_ALERT_LOG },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {}
        };
        struct manager_opts o = {0};
        bool check = false;
        int c;
        while ((c = getopt_long(argc, argv, "c:r:fvh", longopts, NULL)) >= 0) {
                switch (c) {
                case 'c': o.config_path = optarg; break;
                case 'r': o.root = optarg; break;
                case 'f': unsetenv("JOURNAL_STREAM"); break;
                case OPT_ONCE: o.once = true; break;
                case OPT_CHECK_CONFIG: check = true; break;
                case OPT_SOCKET: o.socket_path = optarg; break;
                case OPT_ALERT_LOG: o.alert_log = optarg; break;
                case 'v': log_set_max_level(LOG_DEBUG); break;
                case 'h': usage(stdout); return EXIT_OK;
                case OPT_VERSION: puts("numaguardd " NG_VERSION); return EXIT_OK;
                default: usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "numaguardd: unexpected argument '%s'\n", argv[optind]);
                return EXIT_USAGE;
        }
        if (check)
                return check_config_run(&o);
        struct manager *m;
        bool config_error = false;
        if (manager_new(&o, &m, &config_error) < 0)
                return config_error ? EXIT_CONFIG : EXIT_FAIL;
        int r = manager_run(m);
        manager_free(m);
        return r == 0 ? EXIT_OK : EXIT_FAIL;
}

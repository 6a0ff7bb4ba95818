/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaguardd --check-config: the merged configuration (the main file, then
 * its drop-ins in name order) loaded as a start or a reload would load it,
 * every problem named by file and line, and what the loader alone cannot
 * know checked against this host: nodes = naming nodes it does not have.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "check.h"
#include "cleanup.h"
#include "manager.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-path.h"

int host_nodes(const struct ng_path *p, struct ng_bitmap *ret)
{
        char *buf = NULL;
        int r = ng_path_read(p, &buf, NULL, NG_SYS_NODE_DIR "/online");
        if (r == -ENOENT) {
                /* A kernel without NUMA: one node, 0. */
                memset(ret, 0, sizeof(*ret));
                ng_bitmap_set(ret, 0);
                return 0;
        }
        if (r < 0)
                return r;
        r = ng_bitmap_parse_list(buf, ret);
        free(buf);
        return r < 0 ? r : ng_bitmap_empty(ret) ? -EINVAL : 0;
}

struct check_diag {
        unsigned errors, warnings;
};

static void on_check_diag(void *userdata, int level, const char *file, unsigned line, const char *msg)
{
        struct check_diag *d = userdata;
        bool warning = level > LOG_ERR;
        if (warning)
                d->warnings++;
        else
                d->errors++;
        if (line)
                fprintf(stderr, "%s:%u: %s%s\n", file, line, warning ? "warning: " : "", msg);
        else
                fprintf(stderr, "%s %s%s\n", file, warning ? "warning: " : "", msg);
}

static void print_files(const char *path, bool main_exists)
{
        char **dropins = NULL;
        size_t n = 0;
        if (main_exists)
                printf("%s\n", path);
        if (ng_config_dropins(path, &dropins, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                printf("%s\n", dropins[i]);
        ng_config_dropins_free(dropins, n);
}

int check_config_run(const struct manager_opts *o)
{
        const char *path = o->config_path ? o->config_path : NG_CONFIG_DEFAULT_PATH;
        struct check_diag d = {0};
        struct ng_bitmap nodes;
        _ng_cleanup_(ng_path_freep) struct ng_path *p = NULL;
        _ng_cleanup_(ng_config_freep) struct ng_config *c = NULL;
        int r = ng_path_new(o->root, &p);
        if (r < 0) {
                fprintf(stderr, "numaguardd: root %s: %s\n", o->root, strerror(-r));
                return 1;
        }
        bool have_nodes = host_nodes(p, &nodes) >= 0;
        if (!have_nodes)
                fprintf(stderr, "numaguardd: warning: the host's nodes are unknown; nodes = not checked against them\n");
        r = ng_config_load_checked(path, have_nodes ? &nodes : NULL, on_check_diag, &d, &c);
        bool defaults = r == -ENOENT && !o->config_path;
        if (defaults)
                r = ng_config_new_default(&c);
        if (r < 0) {
                if (r != -EINVAL)
                        fprintf(stderr, "%s: %s\n", path, strerror(-r));
                fprintf(stderr, "numaguardd: configuration not valid: %u error%s, %u warning%s\n",
                        d.errors ? d.errors : 1, d.errors > 1 ? "s" : "", d.warnings, d.warnings == 1 ? "" : "s");
                return 78;
        }
        print_files(path, !defaults);
        if (defaults)
                printf("%s is missing: the built-in defaults\n", path);
        printf("configuration valid: %zu instance%s, %u warning%s\n", c->n_instances,
               c->n_instances == 1 ? "" : "s", d.warnings, d.warnings == 1 ? "" : "s");
        return 0;
}

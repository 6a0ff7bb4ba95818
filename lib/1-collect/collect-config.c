/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One collection under a configuration: what numaguardctl and numaguardd
 * both need before an audit. */

#include <errno.h>
#include <stdlib.h>

#include "ng-config.h"
#include "ng-snapshot.h"

int ng_collect_for_config(const struct ng_path *p, const struct ng_config *cfg, enum ng_placement placement,
                          struct ng_snapshot **ret)
{
        struct ng_collect_opts base = NG_COLLECT_OPTS_DEFAULT;
        base.placement = placement;
        return ng_collect_for_config_opts(p, cfg, &base, ret);
}

int ng_collect_for_config_opts(const struct ng_path *p, const struct ng_config *cfg,
                               const struct ng_collect_opts *base, struct ng_snapshot **ret)
{
        const char **pidfiles = calloc(cfg->n_instances + 1, sizeof(*pidfiles));
        const char **comms = calloc(cfg->n_instances + 3, sizeof(*comms));
        if (!pidfiles || !comms) {
                free(pidfiles);
                free(comms);
                return -ENOMEM;
        }
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.placement = base->placement;
        co.picture = base->picture;
        co.progress = base->progress;
        co.progress_data = base->progress_data;
        co.sample_pages = cfg->sample_pages;
        co.min_private_bytes = cfg->min_segment_size_bytes;
        /* InnoDB's buffer pool, and whatever configured instances run. */
        comms[co.n_private_comms++] = "mysqld";
        comms[co.n_private_comms++] = "mariadbd";
        for (size_t i = 0; i < cfg->n_instances; i++) {
                if (cfg->instances[i].pidfile)
                        pidfiles[co.n_pidfiles++] = cfg->instances[i].pidfile;
                if (cfg->instances[i].match_comm)
                        comms[co.n_private_comms++] = cfg->instances[i].match_comm;
        }
        co.pidfiles = pidfiles;
        co.private_comms = comms;
        int r = ng_snapshot_collect(p, &co, ret);
        free(pidfiles);
        free(comms);
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One collection under a configuration: what numaguardctl and numaguardd
 * both need before an audit. */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "ng-config.h"
#include "engine.h"
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
        assert(p && cfg && base && ret);
        _cleanup_free_ const char **pidfiles = calloc(cfg->n_instances + 1, sizeof(*pidfiles));
        size_t n_heaps = 0;
        for (size_t e = 0; e < ng_n_engines; e++)
                for (const char *const *f = ng_engines[e].family; f && *f && ng_engines[e].private_heap; f++)
                        n_heaps++;
        _cleanup_free_ uint32_t *owners = calloc(cfg->n_instances + 1, sizeof(*owners));
        _cleanup_free_ const char **comms = calloc(cfg->n_instances + n_heaps + 1, sizeof(*comms));
        if (!pidfiles || !comms || !owners)
                return -ENOMEM;
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.placement = base->placement;
        co.picture = base->picture;
        co.progress = base->progress;
        co.progress_data = base->progress_data;
        co.sample_pages = cfg->sample_pages;
        co.min_private_bytes = cfg->min_segment_size_bytes;
        co.min_file_bytes = cfg->min_segment_size_bytes;
        /* The engines' private buffer pools (InnoDB), and whatever
         * configured instances run. */
        for (size_t e = 0; e < ng_n_engines; e++)
                for (const char *const *f = ng_engines[e].family; f && *f && ng_engines[e].private_heap; f++)
                        comms[co.n_private_comms++] = *f;
        for (size_t i = 0; i < cfg->n_instances; i++) {
                if (cfg->instances[i].pidfile)
                        pidfiles[co.n_pidfiles++] = cfg->instances[i].pidfile;
                if (cfg->instances[i].match_comm)
                        comms[co.n_private_comms++] = cfg->instances[i].match_comm;
                /* small files its shm_owner owns are the instance's: listed */
                if (cfg->instances[i].shm_owner_uid != NG_UID_UNSET)
                        owners[co.n_claimed_uids++] = (uint32_t) cfg->instances[i].shm_owner_uid;
        }
        co.claimed_uids = owners;
        /* A configured instance takes the processes of one cluster
         * (PID and IPC namespace) unless it spans them: any process it may
         * match is placed. */
        co.all_namespaces = cfg->n_instances > 0;
        co.pidfiles = pidfiles;
        co.private_comms = comms;
        return ng_snapshot_collect(p, &co, ret);
}

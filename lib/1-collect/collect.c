/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: read the host through the path layer into one snapshot, each
 * part of it by the module that knows it, in the order the parts depend on
 * each other (docs/ARCHITECTURE.md, "The modules of collect"). */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "cleanup.h"
#include "dbconf.h"
#include "host.h"
#include "namespaces.h"
#include "ng-latency.h"
#include "ng-snapshot.h"
#include "owner.h"
#include "parse.h"
#include "path.h"
#include "picture.h"
#include "placement.h"
#include "proc.h"
#include "reader.h"
#include "sample.h"
#include "shm.h"
#include "snapshot.h"
#include "util.h"

/* The matrices numaguardctl probe saved: absent is normal, a broken file
 * is kept as a reason and prices fall back to the SLIT. */
static int collect_latency(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        char err[160] = "";
        int r = ng_latency_read(c->p, &s->latency, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -ENOENT)
                snprintf(s->latency_error, sizeof(s->latency_error), "%s: %s", NG_LATENCY_FILE,
                         r == -EINVAL ? err : strerror(-r));
        return 0;
}

/* ---- entry points ---- */

static bool tree_has_dir(const struct ng_path *p, const char *dir)
{
        int fd = ng_path_open(p, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, "%s", dir);
        if (fd >= 0)
                close(fd);
        return fd >= 0;
}

int ng_snapshot_collect(const struct ng_path *p, const struct ng_collect_opts *opts,
                        struct ng_snapshot **ret)
{
        assert(p && ret);
        /* A root with neither proc/ nor sys/ is no host tree: say so rather
         * than audit an empty machine. */
        if (!ng_path_is_live(p) && !tree_has_dir(p, NG_PROC_DIR) && !tree_has_dir(p, NG_SYS_DIR))
                return -ENOENT;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = ng_snapshot_alloc();
        if (!s)
                return -ENOMEM;
        struct collector c = { .p = p, .o = opts ? *opts : NG_COLLECT_OPTS_DEFAULT, .s = s };
        _ng_cleanup_(ng_path_freep) struct ng_path *reads = NULL;
        if (ng_path_new_counting(p, &c.cost, &reads) < 0)
                return -ENOMEM;
        c.reads = reads;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC), c0 = now_usec(CLOCK_THREAD_CPUTIME_ID);

        s->taken_usec = now_usec(CLOCK_REALTIME);
        s->libnuma_so = -1;
        snprintf(s->root, sizeof(s->root), "%s", ng_path_root(p));
        int r = ng_collect_incomplete(&c);
        if (r >= 0)
                r = ng_collect_memory(&c);
        if (r >= 0)
                r = ng_collect_topology(&c);
        if (r >= 0)
                r = ng_boot_pools_collect(reads, s);
        if (r >= 0)
                r = collect_latency(&c);
        if (r >= 0) {
                ng_collect_knobs(&c);
                ng_collect_features(&c);
        }
        if (r >= 0 && !c.o.skip_procs) {
                ng_collect_own_ns(&c);
                ng_collect_own_creds(&c);
                r = ng_collect_sysvipc(&c);
                if (r >= 0)
                        r = ng_collect_mounts(&c);
                if (r >= 0)
                        r = ng_collect_files(&c);
                if (r >= 0)
                        r = c.o.picture ? ng_picture_collect_procs(c.o.picture, &c) : ng_collect_procs(&c);
                if (r >= 0)
                        r = ng_collect_namespaces(&c);
                if (r >= 0)
                        r = ng_collect_files_fold(&c);
                if (r >= 0)
                        r = ng_collect_containers(&c);
                if (r >= 0) {
                        ng_collect_maps_check(&c);
                        ng_collect_sysvipc_check(&c);
                        r = ng_collect_cgroups(&c);
                }
                if (r >= 0)
                        r = ng_owners_collect(reads, s);
                if (r >= 0)
                        r = ng_collect_placement(&c);
                if (r >= 0)
                        r = ng_collect_pidfiles(&c);
                if (r >= 0)
                        r = ng_collect_db_settings(&c);
                ng_collect_libnuma(&c);
        }
        free(c.whole);
        ng_collect_scans_free(&c);
        if (r < 0)
                return r;
        s->cost.files_read += c.cost.files_read;
        s->cost.bytes_read += c.cost.bytes_read;
        s->cost.wall_usec = now_usec(CLOCK_MONOTONIC) - t0;
        s->cost.cpu_usec = now_usec(CLOCK_THREAD_CPUTIME_ID) - c0;
        *ret = ng_steal_ptr(&s);
        return 0;
}

void ng_snapshot_free(struct ng_snapshot *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                free(s->topo.nodes[i].distance);
        free(s->topo.nodes);
        free(s->shm);
        ng_mounts_free(s->mounts, s->n_mounts);
        for (size_t i = 0; i < s->n_files; i++)
                free(s->files[i].path);
        free(s->files);
        for (size_t i = 0; i < s->n_unlisted; i++)
                free(s->unlisted[i].mountpoint);
        free(s->unlisted);
        /* A picture's snapshot shares the records of unchanged processes. */
        struct ng_proc_gen *gen = snapshot_rec_of(s)->proc_gen;
        for (size_t i = 0; i < s->n_procs; i++) {
                if (gen && proc_rec_of(s->procs[i])->shared)
                        continue;
                ng_proc_release(s->procs[i]);
                free(s->procs[i]);
        }
        free(s->procs);
        ng_proc_gen_unref(gen);
        for (size_t i = 0; i < s->n_cgroups; i++) {
                free(s->cgroups[i].path);
                free(s->cgroups[i].dir);
                ng_numa_stat_free(s->cgroups[i].memory_numa_stat, s->cgroups[i].n_memory_numa_stat);
                for (size_t k = 0; k < s->cgroups[i].n_hugetlb_numa_stat; k++)
                        ng_numa_stat_free(s->cgroups[i].hugetlb_numa_stat[k].lines, s->cgroups[i].hugetlb_numa_stat[k].n);
        }
        free(s->cgroups);
        free(s->boot_pools);
        free(s->containers);
        for (size_t i = 0; i < s->n_pidfiles; i++)
                free(s->pidfiles[i].path);
        free(s->pidfiles);
        for (size_t i = 0; i < s->n_samples; i++)
                ng_sample_done(&s->samples[i]);
        free(s->samples);
        ng_latency_free(s->latency);
        free(s->db_settings);
        free(s);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: the memory tiers the kernel groups nodes into, whether it
 * demotes cold pages to a slower tier, and the socket of each node's CPUs
 * (sub-NUMA clusters of one socket share it). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "host-internal.h"
#include "parse.h"
#include "ng-snapshot.h"

static int tier_cmp(const void *a, const void *b)
{
        const struct ng_memory_tier *x = a, *y = b;
        return (x->id > y->id) - (x->id < y->id);
}

static int read_tiers(struct collector *c, struct ng_topology *t)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n = 0;
        int r = ng_path_list(c->p, &names, &n, NG_SYS_MEMORY_TIERS_DIR);
        if (!ng_feature_found(t, NG_FEATURE_MEMORY_TIERS, NG_SYS_MEMORY_TIERS_DIR, r))
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n && t->n_tiers < NG_MAX_MEMORY_TIERS; i++) {
                unsigned id;
                char path[192];
                if (ng_parse_prefixed_id(names[i], "memory_tier", 1u << 20, &id) < 0)
                        continue;
                struct ng_memory_tier *mt = &t->tiers[t->n_tiers];
                *mt = (struct ng_memory_tier) { .id = (int) id };
                snprintf(path, sizeof(path), NG_SYS_MEMORY_TIERS_DIR "/%s/nodelist", names[i]);
                r = ng_collect_read_list(c, &mt->nodes, path);
                if (r < 0)
                        break;
                t->n_tiers++;
        }
        if (r < 0)
                return r;
        qsort(t->tiers, t->n_tiers, sizeof(*t->tiers), tier_cmp);
        char list[160] = "";
        for (size_t k = 0; k < t->n_tiers; k++) {
                char l[64];
                ng_bitmap_format_list(&t->tiers[k].nodes, l, sizeof(l));
                ng_feature_add_word(list, sizeof(list), "memory_tier%d: nodes %s", t->tiers[k].id, l);
        }
        ng_feature_set(t, NG_FEATURE_MEMORY_TIERS, NG_FEATURE_PRESENT, "%s", list[0] ? list : "no tier lists a node");
        for (size_t i = 0; i < t->n_nodes; i++)
                for (size_t k = 0; k < t->n_tiers && t->nodes[i].tier < 0; k++)
                        if (ng_bitmap_test(&t->tiers[k].nodes, (unsigned) t->nodes[i].id))
                                t->nodes[i].tier = t->tiers[k].id;
        return 0;
}

static void read_demotion(struct collector *c, struct ng_topology *t)
{
        _cleanup_free_ char *buf = NULL;
        bool on;
        t->demotion_enabled = -1;
        if (ng_collect_read(c, &buf, NULL, NG_SYS_DEMOTION_ENABLED) < 0)
                return;
        if (ng_parse_true_false(buf, &on) == 0)
                t->demotion_enabled = on;
        else
                ng_collect_problem(c, NG_SYS_DEMOTION_ENABLED, "neither true nor false: demotion is unknown");
}

/* The socket of a node's first CPU: a node never spans sockets. */
static void read_packages(struct collector *c, struct ng_topology *t)
{
        for (size_t i = 0; i < t->n_nodes; i++) {
                struct ng_node *nd = &t->nodes[i];
                int cpu = ng_bitmap_next(&nd->cpus, 0);
                uint64_t v;
                if (cpu >= 0 && ng_path_read_u64(c->reads, &v, NG_SYS_CPU_DIR "/cpu%d/topology/physical_package_id",
                                                 cpu) == 0 && v <= INT32_MAX)
                        nd->package_id = (int) v;
        }
}

int ng_collect_tiers(struct collector *c)
{
        struct ng_topology *t = &c->s->topo;
        for (size_t i = 0; i < t->n_nodes; i++)
                t->nodes[i].package_id = t->nodes[i].tier = -1;
        read_packages(c, t);
        read_demotion(c, t);
        return read_tiers(c, t);
}

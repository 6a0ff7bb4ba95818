/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: the firmware's HMAT as the kernel exports it per memory node
 * (nodeN/access0, access1: the performance from its best initiators) and
 * its memory-side caches (nodeN/memory_side_cache/indexK). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "host-internal.h"
#include "parse.h"
#include "ng-snapshot.h"

/* A figure is unknown when its file is missing or does not parse (said
 * as a problem): never 0. */
static int64_t read_figure(struct collector *c, int node, unsigned k, const char *name)
{
        _cleanup_free_ char *buf = NULL;
        int64_t v = NG_HMAT_UNKNOWN;
        if (ng_collect_read(c, &buf, NULL, NG_SYS_NODE_DIR "/node%d/access%u/initiators/%s", node, k, name) < 0)
                return v;
        if (ng_parse_hmat_value(buf, &v) < 0) {
                char path[128];
                snprintf(path, sizeof(path), NG_SYS_NODE_DIR "/node%d/access%u/initiators/%s", node, k, name);
                ng_collect_problem(c, path, "not a number: the figure is unknown");
                v = NG_HMAT_UNKNOWN;
        }
        return v;
}

/* The initiators are links to their node directories. A file read
 * through each one puts it in a captured tree (numaguardctl snapshot keeps
 * what was read, not a directory's listing), so --root lists it too. */
static int read_initiators(struct collector *c, int node, unsigned k, struct ng_hmat_access *a)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        int r = ng_path_list(c->p, &names, &n, NG_SYS_NODE_DIR "/node%d/access%u/initiators", node, k);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        a->present = true;
        for (size_t i = 0; i < n; i++) {
                unsigned id;
                uint64_t size;
                if (ng_parse_prefixed_id(names[i], "node", NG_BITMAP_BITS - 1, &id) < 0 ||
                    ng_path_file_size(c->reads, &size, NG_SYS_NODE_DIR "/node%d/access%u/initiators/%s/cpulist",
                                      node, k, names[i]) < 0)
                        continue;
                ng_bitmap_set(&a->initiators, id);
        }
        return 0;
}

static int read_access(struct collector *c, struct ng_node *nd, unsigned k)
{
        struct ng_hmat_access *a = &nd->access[k];
        *a = (struct ng_hmat_access) { .read_latency_ns = NG_HMAT_UNKNOWN, .write_latency_ns = NG_HMAT_UNKNOWN,
                .read_bandwidth_mbps = NG_HMAT_UNKNOWN, .write_bandwidth_mbps = NG_HMAT_UNKNOWN };
        int r = read_initiators(c, nd->id, k, a);
        if (r < 0 || !a->present)
                return r;
        a->read_latency_ns = read_figure(c, nd->id, k, "read_latency");
        a->write_latency_ns = read_figure(c, nd->id, k, "write_latency");
        a->read_bandwidth_mbps = read_figure(c, nd->id, k, "read_bandwidth");
        a->write_bandwidth_mbps = read_figure(c, nd->id, k, "write_bandwidth");
        return 0;
}

static int64_t read_cache_u64(struct collector *c, int node, const char *index, const char *name)
{
        uint64_t v;
        if (ng_path_read_u64(c->reads, &v, NG_SYS_NODE_DIR "/node%d/memory_side_cache/%s/%s", node, index, name) < 0 ||
            v > INT64_MAX)
                return NG_HMAT_UNKNOWN;
        return (int64_t) v;
}

static int cache_cmp(const void *a, const void *b)
{
        const struct ng_mem_cache *x = a, *y = b;
        return (x->level > y->level) - (x->level < y->level);
}

static int read_caches(struct collector *c, struct ng_node *nd)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        int r = ng_path_list(c->p, &names, &n, NG_SYS_NODE_DIR "/node%d/memory_side_cache", nd->id);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n && nd->n_caches < NG_MAX_MEM_CACHES; i++) {
                unsigned level;
                if (ng_parse_prefixed_id(names[i], "index", 255, &level) < 0)
                        continue;
                nd->caches[nd->n_caches++] = (struct ng_mem_cache) {
                        .level = level,
                        .size_bytes = read_cache_u64(c, nd->id, names[i], "size"),
                        .line_size_bytes = read_cache_u64(c, nd->id, names[i], "line_size"),
                        .indexing = read_cache_u64(c, nd->id, names[i], "indexing"),
                        .write_policy = read_cache_u64(c, nd->id, names[i], "write_policy"),
                };
        }
        qsort(nd->caches, nd->n_caches, sizeof(*nd->caches), cache_cmp);
        return 0;
}

int ng_collect_node_hmat(struct collector *c, struct ng_node *nd)
{
        for (unsigned k = 0; k < NG_HMAT_ACCESS_CLASSES; k++) {
                int r = read_access(c, nd, k);
                if (r < 0)
                        return r;
        }
        return read_caches(c, nd);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What boot gives each hugepage pool (ng-owner.h): the kernel command line,
 * then sysctl.d(5), then numaguard's tmpfiles.d file, applied in the order
 * boot applies them; the parsers are in parse-boot.c.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-owner.h"
#include "ng-path.h"
#include "ng-snapshot.h"
#include "owner-internal.h"
#include "parse.h"
#include "util.h"

struct boot_sysctl {
        struct ng_boot_pool pool;       /* the last assignment, NG_BOOT_ALL_NODES */
        bool set;
};

struct sysctl_file {
        char name[NAME_MAX + 1];
        char path[sizeof(((struct ng_boot_pool *) 0)->file)];
};

static int sysctl_cmp(const void *a, const void *b)
{
        return strcmp(((const struct sysctl_file *) a)->name, ((const struct sysctl_file *) b)->name);
}

static bool sysctl_known(const struct sysctl_file *v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i].name, name))
                        return true;
        return false;
}

static int sysctl_add(struct sysctl_file **v, size_t *n, const char *name, const char *path)
{
        if (sysctl_known(*v, *n, name) || strlen(name) >= sizeof((*v)->name) || strlen(path) >= sizeof((*v)->path))
                return 0;
        if (ng_grow(v, NULL, *n, sizeof(**v), 0) < 0)
                return -ENOMEM;
        struct sysctl_file *nv = *v;
        snprintf(nv[*n].name, sizeof(nv[*n].name), "%s", name);
        snprintf(nv[*n].path, sizeof(nv[*n].path), "%s", path);
        ++*n;
        return 0;
}

/* Every *.conf of the sysctl.d directories, a name masking the same name in
 * a lower directory, in name order: what systemd-sysctl applies. */
static int sysctl_files(const struct ng_path *p, struct sysctl_file **ret, size_t *ret_n)
{
        static const char *const dirs[] = NG_SYSCTL_DIRS;
        _cleanup_free_ struct sysctl_file *v = NULL;
        size_t n = 0;
        int r = 0;
        for (size_t d = 0; d < ELEMENTSOF(dirs) && r >= 0; d++) {
                char **names;
                size_t k;
                if (ng_path_list(p, &names, &k, "%s", dirs[d]) < 0)
                        continue;
                for (size_t i = 0; i < k && r >= 0; i++) {
                        size_t l = strlen(names[i]);
                        char path[PATH_MAX];
                        if (l > 5 && !strcmp(names[i] + l - 5, ".conf") &&
                            snprintf(path, sizeof(path), "%s/%s", dirs[d], names[i]) < (int) sizeof(path))
                                r = sysctl_add(&v, &n, names[i], path);
                }
                ng_strv_free(names);
        }
        if (r >= 0)
                r = sysctl_add(&v, &n, "99-sysctl.conf", NG_SYSCTL_CONF);
        if (r < 0)
                return r;
        if (n)
                qsort(v, n, sizeof(*v), sysctl_cmp);
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

static int read_sysctl(const struct ng_path *p, uint64_t default_kib, struct boot_sysctl *ret)
{
        _cleanup_free_ struct sysctl_file *v = NULL;
        size_t n = 0;
        int r = sysctl_files(p, &v, &n);
        for (size_t i = 0; i < n && r >= 0; i++) {
                char *buf;
                uint64_t pages;
                unsigned line;
                if (ng_path_read(p, &buf, NULL, "%s", v[i].path) < 0)
                        continue;
                if (ng_parse_sysctl_hugepages(buf, &pages, &line) > 0) {
                        ret->pool = (struct ng_boot_pool) { .node = NG_BOOT_ALL_NODES, .page_kib = default_kib,
                                                            .pages = pages, .setting = pages, .line = line,
                                                            .source = NG_BOOT_SYSCTL };
                        snprintf(ret->pool.file, sizeof(ret->pool.file), "%s", v[i].path);
                        ret->set = true;
                }
                free(buf);
        }
        return r;
}

/* A total set for the whole host: the kernel hands pages out round robin
 * over the nodes with memory (at boot from the first; a write to
 * vm.nr_hugepages from the node after the last one served) and takes them
 * back round robin. Only the sum is certain: every slot becomes split
 * (unless the total is what the earlier stages already gave). */
static void boot_total(struct ng_boot_pool *slot, size_t k, const struct ng_boot_pool *src, bool set_before)
{
        uint64_t cur = 0, want = src->pages;
        for (size_t i = 0; i < k; i++)
                cur += slot[i].pages;
        if (set_before && cur == want)
                return;         /* the kernel has nothing to do: the pools stay as they were */
        if (cur < want) {
                uint64_t d = want - cur;
                size_t first = (size_t) (cur % k);
                for (size_t i = 0; i < k; i++)
                        slot[i].pages += d / k + ((i + k - first) % k < d % k);
        }
        while (cur > want) {
                size_t m = 0;
                uint64_t least = UINT64_MAX;
                for (size_t i = 0; i < k; i++)
                        if (slot[i].pages) {
                                m++;
                                least = slot[i].pages < least ? slot[i].pages : least;
                        }
                uint64_t each = (cur - want) / m < least ? (cur - want) / m : least;
                for (size_t i = 0; i < k && cur > want; i++)
                        if (slot[i].pages) {
                                uint64_t t = each ? each : 1;
                                slot[i].pages -= t;
                                cur -= t;
                        }
        }
        for (size_t i = 0; i < k; i++) {
                int node = slot[i].node;
                uint64_t pages = slot[i].pages;
                slot[i] = *src;
                slot[i].node = node;
                slot[i].pages = pages;
                slot[i].split = true;
        }
}

struct boot_input {
        const struct ng_boot_pool *cmd, *file;
        size_t n_cmd, n_file;
        const struct boot_sysctl *sysctl;
        uint64_t default_kib;
        const int *mem_nodes;           /* the nodes with memory */
        size_t k;
};

/* One size through the boot stages in their order. touched[i]: some stage
 * set slot i. Returns whether any did. */
static bool boot_size(const struct boot_input *in, uint64_t kib, struct ng_boot_pool *slot, bool *touched)
{
        bool any = false;
        for (size_t i = 0; i < in->k; i++) {
                slot[i] = (struct ng_boot_pool) { .node = in->mem_nodes[i], .page_kib = kib };
                touched[i] = false;
        }
        /* the kernel takes the first hugepages= of a size (it warns about a
         * second); the per-node form gives 0 to the nodes it does not list */
        const struct ng_boot_pool *first = NULL;
        for (size_t j = 0; j < in->n_cmd && !first; j++)
                if (in->cmd[j].page_kib == kib && in->cmd[j].source == NG_BOOT_CMDLINE)
                        first = &in->cmd[j];
        if (first && in->k) {
                any = true;
                for (size_t i = 0; i < in->k; i++) {
                        touched[i] = true;
                        slot[i].source = NG_BOOT_CMDLINE;
                }
                if (first->node == NG_BOOT_ALL_NODES)
                        boot_total(slot, in->k, first, false);
                else
                        for (size_t j = 0; j < in->n_cmd; j++)
                                for (size_t i = 0; i < in->k; i++)
                                        if (in->cmd[j].page_kib == kib && in->cmd[j].source == NG_BOOT_CMDLINE &&
                                            in->cmd[j].node == in->mem_nodes[i])
                                                slot[i] = in->cmd[j];
        }
        /* vm.nr_hugepages: the default size; from the command line before
         * init, then systemd-sysctl */
        for (size_t j = 0; kib == in->default_kib && in->k && j <= in->n_cmd; j++) {
                const struct ng_boot_pool *t = j < in->n_cmd ? &in->cmd[j]
                                                             : in->sysctl->set ? &in->sysctl->pool : NULL;
                if (!t || t->source == NG_BOOT_CMDLINE || t->page_kib != kib)
                        continue;
                boot_total(slot, in->k, t, any);
                for (size_t i = 0; i < in->k; i++)
                        touched[i] = true;
                any = true;
        }
        for (size_t j = 0; j < in->n_file; j++)
                for (size_t i = 0; i < in->k; i++)
                        if (in->file[j].page_kib == kib && in->file[j].node == in->mem_nodes[i]) {
                                slot[i] = in->file[j];
                                touched[i] = any = true;
                        }
        return any;
}

static int boot_resolve(const struct boot_input *in, struct ng_boot_pool **ret, size_t *ret_n)
{
        size_t nk = 0, n = 0, cap = 0;
        _cleanup_free_ uint64_t *kibs = calloc(in->n_cmd + in->n_file + 1, sizeof(*kibs));
        _cleanup_free_ struct ng_boot_pool *slot = calloc(in->k + 1, sizeof(*slot)), *v = NULL;
        _cleanup_free_ bool *touched = calloc(in->k + 1, sizeof(*touched));
        int r = kibs && slot && touched ? 0 : -ENOMEM;
        for (size_t j = 0; r >= 0 && j < in->n_cmd + in->n_file + 1; j++) {
                uint64_t kib = j < in->n_cmd ? in->cmd[j].page_kib
                               : j < in->n_cmd + in->n_file ? in->file[j - in->n_cmd].page_kib
                               : in->sysctl->set ? in->default_kib : 0;
                if (!kib || ng_kib_listed(kibs, nk, kib))
                        continue;
                kibs[nk++] = kib;
                if (!boot_size(in, kib, slot, touched))
                        continue;
                for (size_t i = 0; r >= 0 && i < in->k; i++)
                        if (touched[i] && (r = ng_grow(&v, &cap, n, sizeof(*v), NG_PARSE_MAX_ENTRIES)) >= 0)
                                v[n++] = slot[i];
        }
        /* numaguard's lines for nodes without memory: kept as written */
        for (size_t j = 0; r >= 0 && j < in->n_file; j++) {
                bool mem = false;
                for (size_t i = 0; i < in->k; i++)
                        mem |= in->file[j].node == in->mem_nodes[i];
                if (!mem && (r = ng_grow(&v, &cap, n, sizeof(*v), NG_PARSE_MAX_ENTRIES)) >= 0)
                        v[n++] = in->file[j];
        }
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

int ng_boot_pools_collect(const struct ng_path *p, struct ng_snapshot *s)
{
        _cleanup_free_ struct ng_boot_pool *cmd = NULL, *file = NULL;
        size_t n_cmd = 0, n_file = 0;
        struct boot_sysctl sysctl = {0};
        char *buf;
        int r = 0;
        uint64_t def = ng_default_huge_kib(s);
        if (!def)
                def = 2048;
        if (ng_path_read(p, &buf, NULL, "%s", NG_PROC_DIR "/cmdline") >= 0) {
                r = ng_parse_hugepages_cmdline(buf, def, &cmd, &n_cmd);
                free(buf);
        }
        if (r >= 0)
                r = read_sysctl(p, def, &sysctl);
        if (r >= 0 && ng_path_read(p, &buf, NULL, "%s", NG_HUGEPAGES_BOOT_FILE) >= 0) {
                r = ng_parse_hugepages_tmpfiles(buf, &file, &n_file);
                free(buf);
        }
        _cleanup_free_ int *mem = calloc(s->topo.n_nodes + 1, sizeof(*mem));
        size_t k = 0;
        if (!mem && r >= 0)
                r = -ENOMEM;
        for (size_t j = 0; mem && j < s->topo.n_nodes; j++)
                if (s->topo.nodes[j].has_memory)
                        mem[k++] = s->topo.nodes[j].id;
        struct boot_input in = { .cmd = cmd, .n_cmd = n_cmd, .file = file, .n_file = n_file, .sysctl = &sysctl,
                                 .default_kib = def, .mem_nodes = mem, .k = k };
        if (r >= 0)
                r = boot_resolve(&in, &s->boot_pools, &s->n_boot_pools);
        return r;
}

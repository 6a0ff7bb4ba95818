/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: the cpuset cgroups the processes run in (v1 or v2), with their
 * hugetlb limits and, where hugetlb is charged to it, their memory
 * controller's. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "parse.h"
#include "ng-snapshot.h"
#include "units.h"
#include "util.h"

/* ---- cgroups ---- */

/* The hierarchy that holds the cpuset controller: v1 if bound there, else
 * the cgroup2 mount. */
static const struct ng_mount *cpuset_mount(const struct ng_snapshot *s, int *ret_version)
{
        const struct ng_mount *v2 = NULL;
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct ng_mount *m = &s->mounts[i];
                if (!strcmp(m->fstype, "cgroup") && ng_mount_has_option(m, "cpuset")) {
                        *ret_version = 1;
                        return m;
                }
                if (!strcmp(m->fstype, "cgroup2") && !v2)
                        v2 = m;
        }
        *ret_version = 2;
        return v2;
}

static int cgroup_dir(const struct ng_mount *m, const char *path, char **ret)
{
        /* Inside a cgroup namespace the mount root is a sub-path. */
        size_t rl = strlen(m->root);
        if (strcmp(m->root, "/") && !strncmp(path, m->root, rl) && (path[rl] == '/' || !path[rl]))
                path += rl;
        if (!strcmp(path, "/"))
                path = "";
        return asprintf(ret, "%s%s", m->mountpoint, path) < 0 ? -ENOMEM : 0;
}

/* "max" or a byte count: UINT64_MAX for "max"; false when neither. */
static bool limit_value(struct collector *c, uint64_t *ret, const char *dir, uint64_t n, const char *unit,
                        const char *file)
{
        char *buf;
        bool ok = false;
        if (ng_collect_read(c, &buf, NULL, "%s/hugetlb.%" PRIu64 "%s.%s", dir, n, unit, file) < 0)
                return false;
        if (!strcmp(buf, "max\n") || !strcmp(buf, "max")) {
                *ret = UINT64_MAX;
                ok = true;
        } else
                ok = ng_parse_u64_full(buf, ret) >= 0;
        free(buf);
        return ok;
}

static void read_hugetlb_limit(struct collector *c, struct ng_cgroup *cg, uint64_t kib, uint64_t n, const char *unit)
{
        if (cg->n_hugetlb_limit >= NG_MAX_HUGE_SIZES)
                return;
        __typeof__(cg->hugetlb_limit[0]) *l = &cg->hugetlb_limit[cg->n_hugetlb_limit];
        *l = (__typeof__(*l)) { .page_kib = kib };
        l->known = limit_value(c, &l->max_bytes, cg->dir, n, unit, "max") &&
                   limit_value(c, &l->current_bytes, cg->dir, n, unit, "current");
        l->rsvd_known = limit_value(c, &l->rsvd_max_bytes, cg->dir, n, unit, "rsvd.max") &&
                        limit_value(c, &l->rsvd_current_bytes, cg->dir, n, unit, "rsvd.current");
        if (l->known || l->rsvd_known)
                cg->n_hugetlb_limit++;
}

/* memory.max, memory.current and, under a limit, memory.stat's hugetlb:
 * read where hugetlb faults are charged to the cgroup, which then bounds
 * them (ng_snapshot_hugetlb_memcg()). */
static void read_memory(struct collector *c, struct ng_cgroup *cg)
{
        char *buf, path[512];
        uint64_t max, cur;
        if (ng_collect_read(c, &buf, NULL, "%s/memory.max", cg->dir) < 0)
                return;
        bool ok = ng_parse_cgroup_limit(buf, &max) >= 0;
        free(buf);
        if (!ok) {
                snprintf(path, sizeof(path), "%s/memory.max", cg->dir);
                ng_collect_problem(c, path, "no limit the kernel prints: the bound on the cgroup's hugetlb faults "
                                   "is unknown");
        }
        if (!ok || ng_collect_read(c, &buf, NULL, "%s/memory.current", cg->dir) < 0)
                return;
        ok = ng_parse_u64_full(buf, &cur) >= 0;
        free(buf);
        if (!ok) {
                snprintf(path, sizeof(path), "%s/memory.current", cg->dir);
                ng_collect_problem(c, path, "no count the kernel prints: the bound on the cgroup's hugetlb faults "
                                   "is unknown");
                return;
        }
        cg->memory.known = true;
        cg->memory.max_bytes = max;
        cg->memory.current_bytes = cur;
        if (max == UINT64_MAX || ng_collect_read(c, &buf, NULL, "%s/memory.stat", cg->dir) < 0)
                return;
        cg->memory.hugetlb_known = ng_parse_keyed_u64(buf, "hugetlb", &cg->memory.hugetlb_bytes) >= 0;
        free(buf);
}

static void read_cgroup_files(struct collector *c, struct ng_cgroup *cg, bool memcg_hugetlb)
{
        static const char *const v1[] = { "cpuset.cpus", "cpuset.mems", "cpuset.effective_cpus", "cpuset.effective_mems" };
        static const char *const v2[] = { "cpuset.cpus", "cpuset.mems", "cpuset.cpus.effective", "cpuset.mems.effective" };
        struct ng_bitmap *dst[] = { &cg->cpus, &cg->mems, &cg->effective_cpus, &cg->effective_mems };
        const char *const *names = cg->version == 1 ? v1 : v2;
        char *buf;

        /* on the live host (a tree keeps what it kept) */
        uint64_t procs_size;
        cg->gone = ng_path_is_live(c->reads) &&
                   ng_path_file_size(c->reads, &procs_size, "%s/cgroup.procs", cg->dir) == -ENOENT;
        for (size_t i = 0; i < 4 && !cg->gone; i++) {
                if (ng_collect_read(c, &buf, NULL, "%s/%s", cg->dir, names[i]) < 0)
                        continue;
                if (ng_bitmap_parse_list(buf, dst[i]) >= 0 && i >= 2)
                        cg->has_cpuset = true;
                free(buf);
        }
        uint64_t v;
        cg->memory_migrate = cg->version == 1 &&
                ng_path_read_u64(c->reads, &v, "%s/%s", cg->dir, "cpuset.memory_migrate") >= 0 ? (int) (v != 0) : -1;
        if (cg->version == 2 && ng_collect_read(c, &buf, NULL, "%s/memory.numa_stat", cg->dir) >= 0) {
                if (ng_parse_numa_stat(buf, &cg->memory_numa_stat, &cg->n_memory_numa_stat) < 0)
                        cg->n_memory_numa_stat = 0;
                free(buf);
        }
        if (cg->version == 2 && memcg_hugetlb && !cg->gone)
                read_memory(c, cg);
        /* The hugetlb controller names sizes "2MB", "1GB", "64KB". */
        for (size_t i = 0; cg->version == 2 && i < c->s->n_pools; i++) {
                uint64_t kib = c->s->pools[i].page_kib;
                const char *unit = kib >= 1048576 ? "GB" : kib >= 1024 ? "MB" : "KB";
                uint64_t n = kib >= 1048576 ? kib >> 20 : kib >= 1024 ? kib >> 10 : kib;
                read_hugetlb_limit(c, cg, kib, n, unit);
                if (ng_collect_read(c, &buf, NULL, "%s/hugetlb.%" PRIu64 "%s.numa_stat", cg->dir, n, unit) < 0)
                        continue;
                size_t k = cg->n_hugetlb_numa_stat;
                if (ng_parse_numa_stat(buf, &cg->hugetlb_numa_stat[k].lines, &cg->hugetlb_numa_stat[k].n) >= 0) {
                        cg->hugetlb_numa_stat[k].page_kib = kib;
                        cg->n_hugetlb_numa_stat++;
                }
                free(buf);
        }
}

int ng_collect_cgroups(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        int version;
        const struct ng_mount *m = cpuset_mount(s, &version);
        if (!m)
                return 0;
        const struct ng_cgroup_entry *last = NULL;
        bool memcg_hugetlb = version == 2 && ng_snapshot_hugetlb_memcg(s) == 1;
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct ng_pid_cgroup *pc = &s->procs[i]->cgroup;
                /* Records of a picture share equal cgroup lists: one look each. */
                if (pc->e && pc->e == last)
                        continue;
                last = pc->e;
                const char *path = version == 1 ? ng_pid_cgroup_v1_path(pc, "cpuset") : ng_pid_cgroup_v2_path(pc);
                if (!path || ng_snapshot_cgroup(s, path))
                        continue;
                if (ng_grow(&s->cgroups, NULL, s->n_cgroups, sizeof(*s->cgroups), 0) < 0)
                        return -ENOMEM;
                struct ng_cgroup *cg = &s->cgroups[s->n_cgroups];
                *cg = (struct ng_cgroup) { .version = version, .memory_migrate = -1 };
                if (!(cg->path = strdup(path)) || cgroup_dir(m, path, &cg->dir) < 0) {
                        free(cg->path);
                        return -ENOMEM;
                }
                s->n_cgroups++;
                read_cgroup_files(c, cg, memcg_hugetlb);
        }
        return 0;
}

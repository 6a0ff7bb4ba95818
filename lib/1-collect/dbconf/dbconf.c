/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: each database's hugepage settings, from the files its next
 * start reads (ng-dbconf.h): PostgreSQL's here, MariaDB's (mycnf.c) and
 * Oracle's (oracle.c) by their readers. The postmaster runs in its data
 * directory, so /proc/PID/cwd reaches it in any mount namespace, and
 * /proc/PID/root an absolute config_file; includes are followed as the
 * server follows them, relative to the including file.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "dbconf-internal.h"
#include "engine.h"
#include "ng-bitmap.h"
#include "owner.h"
#include "parse.h"
#include "util.h"

struct reader {
        struct collector *c;
        struct ng_db_settings *s;
        unsigned depth;
        char cwd_prefix[64], root_prefix[64];   /* "/proc/PID/cwd/", "/proc/PID/root" */
        char datadir[256];                      /* its -D, "" unknown */
};

/* How users know a file read through /proc/PID: its data directory's
 * path, or the path inside its root. */
static void shown(const struct reader *r, const char *path, char *buf, size_t size)
{
        size_t lc = strlen(r->cwd_prefix), lr = strlen(r->root_prefix);
        if (!strncmp(path, r->cwd_prefix, lc))
                snprintf(buf, size, "%.200s/%.*s", r->datadir[0] ? r->datadir : "(its data directory)",
                         (int) (size > 210 ? size - 210 : 0), path + lc);
        else if (!strncmp(path, r->root_prefix, lr) && path[lr] == '/')
                snprintf(buf, size, "%.*s", (int) size - 1, path + lr);
        else
                snprintf(buf, size, "%.*s", (int) size - 1, path);
}

static int read_conf(struct reader *r, const char *path, bool must_exist);

static void fail_at(const struct reader *r, int err, const char *path)
{
        if (r->s->error)
                return;
        r->s->error = err;
        shown(r, path, r->s->error_path, sizeof(r->s->error_path));
}

/* The directory part of path, with its slash ("/a/b/" of "/a/b/c"). */
static void dir_of(const char *path, char *buf, size_t size)
{
        const char *slash = strrchr(path, '/');
        snprintf(buf, size, "%.*s", slash ? (int) (slash - path + 1) : 0, path);
}

/* An include's target: absolute within the process's root, or relative to
 * the including file. */
static void include_path(const char *from, const char *target, char *buf, size_t size)
{
        char dir[NG_PATH_MAX];
        if (target[0] == '/') {
                /* from is "/proc/PID/root/..." or "/proc/PID/cwd/...": keep the
                 * "/proc/PID/root" part. */
                int pid;
                if (sscanf(from, NG_PROC_DIR "/%d/", &pid) == 1)
                        snprintf(buf, size, NG_PROC_DIR "/%d/root%s", pid, target);
                else
                        snprintf(buf, size, "%s", target);
                return;
        }
        dir_of(from, dir, sizeof(dir));
        snprintf(buf, size, "%s%s", dir, target);
}

static int include_dir(struct reader *r, const char *dir)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        int e = ng_path_list(r->c->reads, &names, &n, "%s", dir);
        if (e < 0) {
                fail_at(r, e, dir);
                return 0;
        }
        for (size_t i = 0; i < n && e >= 0; i++) {
                size_t l = strlen(names[i]);
                char path[NG_PATH_MAX];
                if (names[i][0] == '.' || l < 6 || strcmp(names[i] + l - 5, ".conf"))
                        continue;
                if ((size_t) snprintf(path, sizeof(path), "%.*s/%.*s", (int) sizeof(path) / 2, dir,
                                      (int) sizeof(path) / 2 - 2, names[i]) >= sizeof(path) - 1)
                        fail_at(r, -ENAMETOOLONG, dir);
                else
                        e = read_conf(r, path, true);
        }
        return e < 0 ? e : 0;
}

static int apply_items(struct reader *r, const char *path, const struct ng_pg_conf_item *v, size_t n)
{
        char file[NG_PATH_MAX];
        shown(r, path, file, sizeof(file));
        for (size_t i = 0; i < n && !r->s->error; i++) {
                char from[NG_PATH_MAX + 16], target[NG_PATH_MAX];
                snprintf(from, sizeof(from), "%s:%u", file, v[i].line);
                bool inc = !strcmp(v[i].name, "include"), opt = !strcmp(v[i].name, "include_if_exists");
                int k = 0;
                if (inc || opt || !strcmp(v[i].name, "include_dir")) {
                        include_path(path, v[i].value, target, sizeof(target));
                        k = inc || opt ? read_conf(r, target, inc) : include_dir(r, target);
                } else if (ng_pg_setting_apply(r->s, v[i].name, v[i].value, from) < 0 && !r->s->error) {
                        r->s->error = -EINVAL;
                        snprintf(r->s->error_path, sizeof(r->s->error_path), "%.*s", (int) sizeof(r->s->error_path) - 1,
                                 from);
                }
                if (k < 0)
                        return k;
        }
        return 0;
}

/* Reads and applies one file; a missing optional one is nothing. -ENOMEM
 * only: what cannot be read is recorded in the settings. */
static int read_conf(struct reader *r, const char *path, bool must_exist)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ struct ng_pg_conf_item *v = NULL;
        size_t len, n;
        unsigned bad = 0;
        if (r->depth >= NG_PG_CONF_MAX_DEPTH) {
                fail_at(r, -ELOOP, path);
                return 0;
        }
        int e = ng_path_read(r->c->reads, &buf, &len, "%s", path);
        if (e == -ENOENT && !must_exist)
                return 0;
        if (e < 0) {
                fail_at(r, e, path);
                return 0;
        }
        e = ng_pg_conf_parse(buf, len, &v, &n, &bad);
        if (e == -ENOMEM)
                return e;
        if (e < 0) {
                if (!r->s->error) {
                        char file[NG_PATH_MAX];
                        shown(r, path, file, sizeof(file));
                        r->s->error = e;
                        snprintf(r->s->error_path, sizeof(r->s->error_path), "%.200s:%u", file, bad);
                }
                return 0;
        }
        r->s->files++;
        r->depth++;
        e = apply_items(r, path, v, n);
        r->depth--;
        return e;
}

/* The policy its numa_maps shows on its first mapping: the task's own,
 * unless that mapping has one of its own (PostgreSQL sets none). */
static void read_policy(struct collector *c, const struct ng_proc *pr, struct ng_db_settings *ret)
{
        _cleanup_free_ char *buf = NULL;
        struct ng_numa_map *nm = NULL;
        struct ng_parse_skipped bad = {};
        size_t len, n = 0;
        char path[64];
        snprintf(path, sizeof(path), NG_PROC_DIR "/%d/numa_maps", (int) pr->pid);
        if (ng_path_read(c->reads, &buf, &len, "%s", path) < 0 || ng_parse_numa_maps(buf, &nm, &n, &bad) < 0)
                return;
        /* its first line may be the one skipped */
        if (bad.lines)
                ng_collect_problem(c, path, "line %zu is not one the kernel prints: the memory policy pid %d (%s) "
                                   "runs under is unknown", bad.first_line, (int) pr->pid, pr->name);
        else if (n > 0) {
                ret->policy_known = true;
                ret->policy = (int) nm[0].policy;
                snprintf(ret->policy_nodes, sizeof(ret->policy_nodes), "%.*s", (int) sizeof(ret->policy_nodes) - 1,
                         nm[0].policy_nodes ? nm[0].policy_nodes : "");
        }
        ng_numa_maps_free(nm, n);
}

/* The systemd service pr runs in: the last component of its cgroup, every
 * parent a slice (not a unit of a container's own manager, whose cgroups
 * hang below the container's scope), and what its unit files say of the
 * memory policy its processes start under. */
static void read_unit(struct collector *c, const struct ng_proc *pr, struct ng_db_settings *ret)
{
        const char *cg = ng_pid_cgroup_v2_path(&pr->cgroup);
        if (!cg || !*cg)
                cg = ng_pid_cgroup_v1_path(&pr->cgroup, "name=systemd");
        char unit[256];
        if (!cg || *cg != '/' || ng_unit_from_cgroup(cg, unit, sizeof(unit)) < 0 || strlen(unit) <= 8 ||
            strcmp(unit + strlen(unit) - 8, ".service"))
                return;
        for (const char *p = cg + 1, *slash; (slash = strchr(p, '/')); p = slash + 1)
                if (slash - p <= 6 || strncmp(slash - 6, ".slice", 6))
                        return;
        snprintf(ret->unit, sizeof(ret->unit), "%s", unit);
        struct ng_unit_cpuset u;
        if (ng_unit_files_read(c->reads, unit, &u, NULL, 0) < 0)
                return;
        ret->unit_known = true;
        ret->unit_has_policy = u.has_numa_policy;
        ret->unit_policy = u.numa_policy;
        if (u.has_numa_mask)
                ng_bitmap_format_list(&u.numa_mask, ret->unit_mask, sizeof(ret->unit_mask));
}

/* The engine whose configuration pr's files are, when pr is the main
 * process of an engine that has one (engine.h: has_conf): the first of
 * its family (not a child of one), or its <main_prefix><SID> process (not
 * a fork of one of that name). */
static const struct ng_engine *configured_main(const struct ng_snapshot *s, const struct ng_proc *pr)
{
        const struct ng_engine *e = ng_engine_of_process(pr->name);
        if (!e || !e->has_conf)
                return NULL;
        const struct ng_proc *parent = ng_snapshot_proc(s, pr->stat.ppid);
        if (e->family)
                return !parent || !ng_engine_in_family(e, parent->name) ? e : NULL;
        size_t l = e->main_prefix ? strlen(e->main_prefix) : 0;
        if (!l || strncmp(pr->name, e->main_prefix, l) || !pr->name[l])
                return NULL;
        return !parent || strcmp(parent->name, pr->name) ? e : NULL;
}

static int settings_of(struct collector *c, const struct ng_engine *eng, const struct ng_proc *pr,
                       struct ng_db_settings *ret)
{
        struct reader r = { .c = c, .s = ret };
        struct ng_db_settings scratch = {0};
        snprintf(r.cwd_prefix, sizeof(r.cwd_prefix), NG_PROC_DIR "/%d/cwd/", (int) pr->pid);
        snprintf(r.root_prefix, sizeof(r.root_prefix), NG_PROC_DIR "/%d/root", (int) pr->pid);
        ng_pg_cmdline_datadir(pr->cmdline ? pr->cmdline : "", r.datadir, sizeof(r.datadir));
        char config_file[NG_PATH_MAX], path[NG_PATH_MAX + 64];
        *ret = (struct ng_db_settings) { .pid = pr->pid };
        c->current_pid = pr->pid;
        ng_pg_cmdline_apply(&scratch, pr->cmdline ? pr->cmdline : "", config_file, sizeof(config_file));
        if (config_file[0] == '/')
                snprintf(path, sizeof(path), NG_PROC_DIR "/%d/root%s", (int) pr->pid, config_file);
        else
                snprintf(path, sizeof(path), NG_PROC_DIR "/%d/cwd/%s", (int) pr->pid,
                         config_file[0] ? config_file : eng->conf_file);
        int e = read_conf(&r, path, true);
        if (e >= 0) {
                snprintf(path, sizeof(path), NG_PROC_DIR "/%d/cwd/%s", (int) pr->pid, eng->auto_conf_file);
                e = read_conf(&r, path, false);
        }
        if (e >= 0)
                ng_pg_cmdline_apply(ret, pr->cmdline ? pr->cmdline : "", config_file, sizeof(config_file));
        if (e >= 0) {
                read_policy(c, pr, ret);
                read_unit(c, pr, ret);
        }
        c->current_pid = 0;
        return e;
}

int ng_collect_db_settings(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct ng_proc *pr = s->procs[i];
                const struct ng_engine *eng = configured_main(s, pr);
                if (!eng)
                        continue;
                if (ng_grow(&s->db_settings, NULL, s->n_db_settings, sizeof(*s->db_settings), 0) < 0)
                        return -ENOMEM;
                struct ng_db_settings *d = &s->db_settings[s->n_db_settings];
                int e;
                if (eng->conf_kind == NG_DB_CONF_POSTGRESQL)
                        e = settings_of(c, eng, pr, d);
                else {
                        *d = (struct ng_db_settings) { .pid = pr->pid, .kind = eng->conf_kind };
                        c->current_pid = pr->pid;
                        e = eng->conf_kind == NG_DB_CONF_ORACLE ? ng_dbconf_read_oracle(c, pr, d)
                                                                : ng_dbconf_read_mariadb(c, pr, d);
                        if (e >= 0) {
                                read_policy(c, pr, d);
                                read_unit(c, pr, d);
                        }
                        c->current_pid = 0;
                }
                if (e < 0)
                        return e;
                s->n_db_settings++;
        }
        return 0;
}

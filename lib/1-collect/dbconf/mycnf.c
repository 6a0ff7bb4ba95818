/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: a MariaDB (or MySQL) server's large_pages and buffer pool size
 * as its next start reads them (ng-dbconf.h): the option files the server
 * reads (mysys/my_default.c: /etc/my.cnf, /etc/mysql/my.cnf, $MYSQL_HOME's
 * my.cnf, --defaults-extra-file; or --defaults-file alone; none under
 * --no-defaults), with their !include and !includedir, then its command
 * line, each later one winning. Every file is read inside the server's
 * root (/proc/PID/root: a container's files as it sees them). The option
 * file of the server user's home (~/.my.cnf) is not read.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "dbconf-internal.h"
#include "util.h"

/* The server skips a directive beyond this depth (with a warning). */
#define MY_MAX_DEPTH 10

struct reader {
        struct collector *c;
        struct ng_db_settings *s;
        pid_t pid;
        const char *suffix;
        unsigned files;
};

static int read_file(struct reader *r, const char *path, bool must, unsigned depth);

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* "!includedir DIR": its files ending ".cnf", in strcmp order (my_dir
 * with MY_WANT_SORT); a directory that cannot be listed stops the
 * server. */
static int include_dir(struct reader *r, const char *dir, unsigned depth)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n = 0;
        int e = ng_path_list(r->c->reads, &names, &n, NG_PROC_DIR "/%d/root%s", (int) r->pid, dir);
        if (e < 0) {
                ng_dbconf_fail(r->s, e, dir);
                return 0;
        }
        qsort(names, n, sizeof(*names), cmp_names);
        for (size_t i = 0; i < n && e >= 0 && !r->s->error; i++) {
                size_t l = strlen(names[i]);
                char path[1200];
                if (l < 4 || strcmp(names[i] + l - 4, ".cnf"))
                        continue;
                if ((size_t) snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
                                      names[i]) >= sizeof(path))
                        ng_dbconf_fail(r->s, -ENAMETOOLONG, dir);
                else
                        e = read_file(r, path, false, depth);
        }
        return e < 0 ? e : 0;
}

static int apply_items(struct reader *r, const char *path, const struct ng_my_cnf_item *v, size_t n,
                       unsigned depth)
{
        int group = 0;  /* ng_my_group_read() of the current group */
        char group_name[64] = "";
        for (size_t i = 0; i < n && !r->s->error; i++) {
                char from[1100];
                snprintf(from, sizeof(from), "%s:%u", path, v[i].line);
                switch (v[i].kind) {
                case NG_MY_CNF_GROUP:
                        group = v[i].cut ? 0 : ng_my_group_read(v[i].name, r->suffix);
                        snprintf(group_name, sizeof(group_name), "%s", v[i].name);
                        break;
                case NG_MY_CNF_INCLUDE:
                case NG_MY_CNF_INCLUDEDIR:
                        if (depth + 1 > MY_MAX_DEPTH)
                                break;
                        if (v[i].cut || v[i].value[0] != '/') {
                                ng_dbconf_unknown(r->s, "%.120s includes %.60s%s, a relative path: the directory "
                                                  "the server starts in is not known", from, v[i].value,
                                                  v[i].cut ? "..." : "");
                                break;
                        }
                        if (!ng_db_path_ok(v[i].value)) {
                                ng_dbconf_fail(r->s, -EINVAL, from);
                                break;
                        }
                        int e = v[i].kind == NG_MY_CNF_INCLUDE ? read_file(r, v[i].value, false, depth + 1)
                                                               : include_dir(r, v[i].value, depth + 1);
                        if (e < 0)
                                return e;
                        break;
                case NG_MY_CNF_OPTION:
                        if (!group)
                                break;
                        if (v[i].cut) {
                                /* a value beyond the field: one of numaguard's it cannot read */
                                struct ng_db_settings probe = {0};
                                if (ng_my_option_apply(&probe, v[i].name, "0", from) > 0)
                                        ng_dbconf_fail(r->s, -E2BIG, from);
                                break;
                        }
                        int k = ng_my_option_apply(r->s, v[i].name, v[i].has_value ? v[i].value : NULL, from);
                        if (k < 0)
                                ng_dbconf_fail(r->s, k, from);
                        else if (k > 0 && group == 2)
                                ng_dbconf_unknown(r->s, "%.60s is set in group [%.40s] of %.100s, which only a "
                                                  "server of that version reads: numaguard does not know this "
                                                  "server's version", v[i].name, group_name, from);
                        break;
                }
        }
        return 0;
}

/* Reads and applies one option file, path inside the server's root; a
 * missing one is nothing unless must. -ENOMEM only. */
static int read_file(struct reader *r, const char *path, bool must, unsigned depth)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ struct ng_my_cnf_item *v = NULL;
        size_t len, n;
        unsigned bad = 0;
        if (r->s->error)
                return 0;
        if (r->files >= NG_DB_CONF_MAX_FILES) {
                ng_dbconf_fail(r->s, -E2BIG, path);
                return 0;
        }
        int e = ng_path_read(r->c->reads, &buf, &len, NG_PROC_DIR "/%d/root%s", (int) r->pid, path);
        if (e == -ENOENT && !must)
                return 0;
        if (e < 0) {
                ng_dbconf_fail(r->s, e, path);
                return 0;
        }
        r->files++;
        r->s->files++;
        e = ng_my_cnf_parse(buf, len, &v, &n, &bad);
        if (e == -ENOMEM)
                return e;
        if (e < 0) {
                char where[1100];
                snprintf(where, sizeof(where), "%s:%u", path, bad);
                ng_dbconf_fail(r->s, e, e == -EINVAL ? where : path);
                return 0;
        }
        return apply_items(r, path, v, n, depth);
}

/* An option file named on the command line: absolute, or unknown. */
static bool named_file(struct reader *r, const char *opt, const char *path)
{
        if (path[0] == '/' && ng_db_path_ok(path))
                return true;
        if (path[0] == '/')
                ng_dbconf_fail(r->s, -EINVAL, path);
        else
                ng_dbconf_unknown(r->s, "its command line's --%s=%.100s is a relative path: the directory the "
                                  "server starts in is not known", opt, path);
        return false;
}

int ng_dbconf_read_mariadb(struct collector *c, const struct ng_proc *pr, struct ng_db_settings *ret)
{
        struct ng_my_defaults d;
        const char *cmdline = pr->cmdline ? pr->cmdline : "";
        struct reader r = { .c = c, .s = ret, .pid = pr->pid };
        int e = 0;
        ng_my_cmdline_defaults(cmdline, &d);
        r.suffix = d.group_suffix[0] ? d.group_suffix : NULL;
        if (d.no_defaults)
                ;
        else if (d.file[0]) {
                if (named_file(&r, "defaults-file", d.file))
                        e = read_file(&r, d.file, true, 0);
        } else {
                /* init_default_directories(): a directory named twice is
                 * read once, in its last place. */
                char dirs[3][520] = { "/etc/", "/etc/mysql/", "" };
                _cleanup_free_ char *env = NULL;
                size_t len;
                int k = ng_path_read(c->reads, &env, &len, NG_PROC_DIR "/%d/environ", (int) pr->pid);
                char home[512];
                if (k < 0 && k != -ENOENT) {
                        char where[64];
                        snprintf(where, sizeof(where), NG_PROC_DIR "/%d/environ", (int) pr->pid);
                        ng_dbconf_fail(ret, k, where);
                } else if (k >= 0 && ng_environ_get(env, len, "MYSQL_HOME", home, sizeof(home)) == 0 && home[0]) {
                        if (home[0] != '/' || !ng_db_path_ok(home))
                                ng_dbconf_unknown(ret, "its MYSQL_HOME is %.100s, not an absolute path numaguard "
                                                  "reads", home);
                        else {
                                snprintf(dirs[2], sizeof(dirs[2]), "%.510s%s", home,
                                         home[strlen(home) - 1] == '/' ? "" : "/");
                                for (size_t i = 0; i < 2; i++)
                                        if (!strcmp(dirs[i], dirs[2]))
                                                dirs[i][0] = '\0';
                        }
                }
                for (size_t i = 0; i < ELEMENTSOF(dirs) && e >= 0; i++) {
                        char path[540];
                        if (!dirs[i][0])
                                continue;
                        snprintf(path, sizeof(path), "%.519smy.cnf", dirs[i]);
                        e = read_file(&r, path, false, 0);
                }
                if (e >= 0 && d.extra_file[0] && named_file(&r, "defaults-extra-file", d.extra_file))
                        e = read_file(&r, d.extra_file, true, 0);
        }
        if (e < 0)
                return e;
        int k = ret->error ? 0 : ng_my_cmdline_apply(ret, cmdline);
        if (k < 0)
                ng_dbconf_fail(ret, k, "its command line");
        return 0;
}

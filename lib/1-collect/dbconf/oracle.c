/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: an Oracle instance's use_large_pages and SGA size as its next
 * start reads them (ng-dbconf.h). The instance is its pmon process,
 * ora_pmon_SID; its ORACLE_HOME comes from pmon's environment
 * (/proc/PID/environ, another user's text: bounded, checked), and its
 * parameter file is the first of $ORACLE_HOME/dbs/spfileSID.ora,
 * spfile.ora and initSID.ora, as a startup without PFILE= looks for them.
 * A text pfile may name the spfile to read (SPFILE=, "?" for ORACLE_HOME,
 * "@" for the SID; one in ASM, "+DISKGROUP/...", cannot be read from the
 * file system) and include others (IFILE=). Every file is read inside
 * pmon's root (/proc/PID/root).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "dbconf-internal.h"
#include "engine.h"
#include "util.h"

struct reader {
        struct collector *c;
        struct ng_db_settings *s;
        pid_t pid;
        char sid[32];
        char home[512];
        struct ng_ora_conf conf;
        unsigned files;
};

static int read_params(struct reader *r, const char *path, bool spfile, unsigned depth);

/* A file name of a pfile's SPFILE= or IFILE=: "?" at its start is
 * ORACLE_HOME, "@" anywhere the SID. false, said why, when it cannot be
 * read. */
static bool file_name(struct reader *r, const char *value, const char *from, char *buf, size_t size)
{
        size_t o = 0;
        if (value[0] == '+') {
                ng_dbconf_unknown(r->s, "its parameter file is in Oracle ASM (%.100s, named in %.100s): numaguard "
                                  "reads parameter files from the file system only", value, from);
                return false;
        }
        for (const char *v = value; *v; v++) {
                const char *add = v == value && *v == '?' ? r->home : *v == '@' ? r->sid : NULL;
                size_t l = add ? strlen(add) : 1;
                if (o + l + 1 >= size) {
                        ng_dbconf_fail(r->s, -ENAMETOOLONG, from);
                        return false;
                }
                memcpy(buf + o, add ? add : v, l);
                o += l;
        }
        buf[o] = '\0';
        if (buf[0] != '/') {
                ng_dbconf_unknown(r->s, "%.100s names %.100s, a relative path: the directory the instance starts "
                                  "in is not known", from, value);
                return false;
        }
        if (!ng_db_path_ok(buf)) {
                ng_dbconf_fail(r->s, -EINVAL, from);
                return false;
        }
        return true;
}

static int apply_params(struct reader *r, const char *path, bool spfile, const struct ng_ora_param *v, size_t n,
                        unsigned depth)
{
        for (size_t i = 0; i < n && !r->s->error && !r->s->unknown[0]; i++) {
                char from[1100], target[1024];
                snprintf(from, sizeof(from), "%s:%u", path, v[i].line);
                bool sp = !strcmp(v[i].name, "spfile"), inc = !strcmp(v[i].name, "ifile");
                bool ours = !strcmp(v[i].sid, "*") || !strcasecmp(v[i].sid, r->sid);
                if (!sp && !inc) {
                        int e = ng_ora_param_apply(&r->conf, r->sid, &v[i], from);
                        if (e < 0)
                                ng_dbconf_fail(r->s, e, from);
                        continue;
                }
                /* what a server parameter file says of them is not read */
                if (spfile || !ours)
                        continue;
                if (v[i].cut) {
                        ng_dbconf_fail(r->s, -E2BIG, from);
                        continue;
                }
                if (!file_name(r, v[i].value, from, target, sizeof(target)))
                        continue;
                int e = read_params(r, target, sp, depth + 1);
                if (e < 0)
                        return e;
        }
        return 0;
}

/* Reads and applies one parameter file, path inside pmon's root. 1 when
 * read, 0 when absent (nothing recorded), -ENOMEM. */
static int read_params(struct reader *r, const char *path, bool spfile, unsigned depth)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ struct ng_ora_param *v = NULL;
        size_t len, n;
        unsigned bad = 0;
        if (depth >= NG_PG_CONF_MAX_DEPTH || r->files >= NG_DB_CONF_MAX_FILES) {
                ng_dbconf_fail(r->s, depth >= NG_PG_CONF_MAX_DEPTH ? -ELOOP : -E2BIG, path);
                return 1;
        }
        int e = ng_path_read(r->c->reads, &buf, &len, NG_PROC_DIR "/%d/root%s", (int) r->pid, path);
        if (e == -ENOENT && depth == 0)
                return 0;
        if (e < 0) {
                ng_dbconf_fail(r->s, e, path);
                return 1;
        }
        r->files++;
        r->s->files++;
        e = ng_ora_params_parse(buf, len, spfile, r->sid, &v, &n, &bad);
        if (e == -ENOMEM)
                return e;
        if (e < 0) {
                char where[1100];
                snprintf(where, sizeof(where), "%s:%u", path, bad);
                ng_dbconf_fail(r->s, e, e == -E2BIG ? path : where);
                return 1;
        }
        e = apply_params(r, path, spfile, v, n, depth);
        return e < 0 ? e : 1;
}

int ng_dbconf_read_oracle(struct collector *c, const struct ng_proc *pr, struct ng_db_settings *ret)
{
        struct reader r = { .c = c, .s = ret, .pid = pr->pid };
        const struct ng_engine *eng = ng_engine_of_process(pr->name);
        const char *sid = pr->name + (eng && eng->main_prefix ? strlen(eng->main_prefix) : 0);
        _cleanup_free_ char *env = NULL;
        size_t len;
        char where[64];
        if (strlen(sid) >= sizeof(r.sid)) {
                ng_dbconf_unknown(ret, "its SID %.40s... is longer than any Oracle allows", sid);
                return 0;
        }
        snprintf(r.sid, sizeof(r.sid), "%s", sid);
        snprintf(where, sizeof(where), NG_PROC_DIR "/%d/environ", (int) pr->pid);
        int e = ng_path_read(c->reads, &env, &len, "%s", where);
        if (e < 0) {
                ng_dbconf_fail(ret, e, where);
                return 0;
        }
        e = ng_environ_get(env, len, "ORACLE_HOME", r.home, sizeof(r.home));
        if (e == -ENOENT || (e == 0 && !r.home[0])) {
                ng_dbconf_unknown(ret, "ORACLE_HOME is not in the environment of its pmon (pid %d): its parameter "
                                  "file cannot be found", (int) pr->pid);
                return 0;
        }
        /* strip the trailing slashes a user may have typed */
        for (size_t l = strlen(r.home); e == 0 && l > 1 && r.home[l - 1] == '/'; l--)
                r.home[l - 1] = '\0';
        if (e < 0 || !ng_db_path_ok(r.home)) {
                ng_dbconf_unknown(ret, "the ORACLE_HOME of its pmon (pid %d) is not an absolute path numaguard "
                                  "reads", (int) pr->pid);
                return 0;
        }
        const struct {
                const char *name;
                bool sid, spfile;
        } files[] = { { "spfile", true, true }, { "spfile", false, true }, { "init", true, false } };
        e = 0;
        for (size_t i = 0; i < ELEMENTSOF(files) && e == 0; i++) {
                char path[640];
                snprintf(path, sizeof(path), "%s/dbs/%s%s.ora", r.home, files[i].name, files[i].sid ? r.sid : "");
                e = read_params(&r, path, files[i].spfile, 0);
        }
        if (e < 0)
                return e;
        if (e == 0)
                ng_dbconf_unknown(ret, "none of spfile%s.ora, spfile.ora and init%s.ora is in %.200s/dbs (a "
                                  "read-only Oracle home keeps them in ORACLE_BASE/dbs, not read): it was started "
                                  "with a PFILE= numaguard does not know", r.sid, r.sid, r.home);
        if (!ret->error && !ret->unknown[0] && ng_ora_conf_settings(&r.conf, ret) < 0)
                ng_dbconf_fail(ret, -EINVAL, "its SGA size");
        ret->kind = NG_DB_CONF_ORACLE;
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: what the databases leave and load outside /proc besides their
 * configuration: the pid files the configuration names (an instance found
 * by its postmaster.pid), and the unversioned libnuma.so an engine
 * dlopen()s at its start for its NUMA support (Oracle turns it off without
 * a word when the library is missing).
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbconf.h"
#include "engine.h"
#include "parse.h"
#include "reader.h"
#include "util.h"

/* Only where an engine that needs the unversioned libnuma.so runs: the
 * check stats files outside /proc and /sys. */
void ng_collect_libnuma(struct collector *c)
{
        static const char *const paths[] = NG_LIBNUMA_PATHS;
        struct ng_snapshot *s = c->s;
        s->libnuma_so = -1;
        for (size_t i = 0; i < s->n_procs && s->libnuma_so < 0; i++) {
                const struct ng_engine *e = ng_engine_of_process(s->procs[i]->name);
                if (e && e->needs_libnuma)
                        s->libnuma_so = 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(paths) && s->libnuma_so == 0; i++) {
                uint64_t size;
                if (ng_path_file_size(c->p, &size, "%s", paths[i]) >= 0)
                        s->libnuma_so = 1;
        }
}

int ng_collect_pidfiles(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        if (c->o.n_pidfiles == 0)
                return 0;
        s->pidfiles = calloc(c->o.n_pidfiles, sizeof(*s->pidfiles));
        if (!s->pidfiles)
                return -ENOMEM;
        for (size_t i = 0; i < c->o.n_pidfiles; i++) {
                struct ng_pidfile *pf = &s->pidfiles[s->n_pidfiles++];
                char *buf;
                uint64_t v;
                if (!(pf->path = strdup(c->o.pidfiles[i])))
                        return -ENOMEM;
                if (ng_collect_read(c, &buf, NULL, "%s", pf->path) < 0)
                        continue;
                /* PostgreSQL's postmaster.pid holds more lines after the pid. */
                char *nl = strchr(buf, '\n');
                if (nl)
                        *nl = '\0';
                if (ng_parse_u64_full(buf, &v) >= 0 && v > 0 && v <= INT32_MAX)
                        pf->pid = (pid_t) v;
                free(buf);
        }
        return 0;
}

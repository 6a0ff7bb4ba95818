/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cgconfig group's cpuset values edited in place (ng-act-cpuset.h):
 * only the bytes of the values change, so comments, layout and every other
 * group stay as the administrator wrote them. libcgroup has no call that
 * writes a configuration file back (cgroup_config_load_config() only reads
 * and applies), hence this.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action-internal.h"
#include "act-cpuset-internal.h"
#include "ng-act-cpuset.h"
#include "owner.h"

struct edit {
        size_t start, end;      /* bytes of text replaced ([start, start) inserts) */
        char with[320];
        unsigned line;
};

static const struct ng_cgconfig_group *find_group(const struct ng_cgconfig_group *g, size_t n, const char *name)
{
        const char *want = name;
        while (*want == '/')
                want++;
        for (size_t i = n; i-- > 0;) {
                const char *have = g[i].name;
                while (*have == '/')
                        have++;
                if (!strcmp(have, want))
                        return &g[i];
        }
        return NULL;
}

/* The line of text holding offset, as a string (without the newline). */
static void line_at(const char *text, size_t off, char *buf, size_t size)
{
        size_t s = off, e = off;
        while (s > 0 && text[s - 1] != '\n')
                s--;
        while (text[e] && text[e] != '\n')
                e++;
        snprintf(buf, size, "%.*s", (int) (e - s), text + s);
}

static int value_edit(const char *text, const struct ng_cgconfig_value *v, const struct ng_bitmap *set,
                      struct edit *e)
{
        char list[256];
        if (ng_bitmap_format_list(set, list, sizeof(list)) >= (int) sizeof(list))
                return -E2BIG;
        bool quoted = text[v->start] == '"';
        *e = (struct edit) { .start = v->start, .end = v->end, .line = v->line };
        snprintf(e->with, sizeof(e->with), "%s%s%s", quoted ? "\"" : "", list, quoted ? "\"" : "");
        return 0;
}

/* A key the group's cpuset block lacks: its own line before the '}' when
 * that stands alone on its line, else inline before it. */
static int insert_edit(const char *text, const struct ng_cgconfig_group *g, const char *key,
                       const struct ng_bitmap *set, struct edit *e)
{
        char list[256];
        if (ng_bitmap_format_list(set, list, sizeof(list)) >= (int) sizeof(list))
                return -E2BIG;
        size_t s = g->cpuset_close;
        while (s > 0 && (text[s - 1] == ' ' || text[s - 1] == '\t'))
                s--;
        bool alone = s == 0 || text[s - 1] == '\n';
        *e = (struct edit) { .start = alone ? s : g->cpuset_close, .line = g->cpuset_close_line };
        e->end = e->start;
        if (alone)
                snprintf(e->with, sizeof(e->with), "%.*s\t%s = \"%s\";\n", (int) (g->cpuset_close - s), text + s, key,
                         list);
        else
                snprintf(e->with, sizeof(e->with), "%s = \"%s\"; ", key, list);
        return 0;
}

/* 0, also when res is NULL or full (not recorded), or -ENOMEM. */
static int record(struct ng_action_result *res, const char *file, const char *text, const struct edit *e)
{
        if (!res)
                return 0;
        struct ng_write *w;
        int r = ng_action_result_add(res, NG_WRITE_CONFIG_LINE, &w);
        if (r < 0)
                return r == -E2BIG ? 0 : r;     /* full: the edit is made, not recorded */
        snprintf(w->path, sizeof(w->path), "%s:%u", file, e->line);
        line_at(text, e->start, w->before, sizeof(w->before));
        size_t s = e->start;
        while (s > 0 && text[s - 1] != '\n')
                s--;
        if (e->start == e->end && e->with[strlen(e->with) - 1] == '\n') {
                /* an added line */
                snprintf(w->value, sizeof(w->value), "%.*s", (int) strlen(e->with) - 1, e->with);
                w->before[0] = '\0';
                return 0;
        }
        size_t le = e->end;
        while (text[le] && text[le] != '\n')
                le++;
        snprintf(w->value, sizeof(w->value), "%.*s%s%.*s", (int) (e->start - s), text + s, e->with,
                 (int) (le - e->end), text + e->end);
        return 0;
}

static int cmp_edit(const void *a, const void *b)
{
        const struct edit *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start;
}

static int apply_edits(const char *text, struct edit *e, size_t n, char **ret)
{
        size_t len = strlen(text), extra = 0;
        for (size_t i = 0; i < n; i++)
                extra += strlen(e[i].with);
        char *out = malloc(len + extra + 1), *o = out;
        if (!out)
                return -ENOMEM;
        qsort(e, n, sizeof(*e), cmp_edit);
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
                memcpy(o, text + at, e[i].start - at);
                o += e[i].start - at;
                size_t k = strlen(e[i].with);
                memcpy(o, e[i].with, k);
                o += k;
                at = e[i].end;
        }
        memcpy(o, text + at, len - at);
        o[len - at] = '\0';
        *ret = out;
        return 0;
}

int ng_cgconfig_edit(const char *text, const char *file, const char *group, const struct ng_bitmap *cpus,
                     const struct ng_bitmap *mems, struct ng_action_result *res, char **ret)
{
        if (!text || !file || !group || !ret)
                return -EINVAL;
        struct ng_cgconfig_group *groups = NULL;
        size_t n = 0;
        int r = ng_parse_cgconfig(text, &groups, &n, NULL);
        if (r < 0)
                return r;
        const struct ng_cgconfig_group *g = find_group(groups, n, group);
        struct edit e[2];
        size_t ne = 0;
        if (!g)
                r = -ENOENT;
        else if (!g->has_cpuset)
                r = -ENODATA;
        const struct { const struct ng_bitmap *set; const struct ng_cgconfig_value *v; const char *key; } want[] = {
                { cpus, g ? &g->cpus : NULL, "cpuset.cpus" },
                { mems, g ? &g->mems : NULL, "cpuset.mems" },
        };
        for (size_t i = 0; i < 2 && r >= 0; i++) {
                if (!want[i].set)
                        continue;
                r = want[i].v->present ? value_edit(text, want[i].v, want[i].set, &e[ne])
                                       : insert_edit(text, g, want[i].key, want[i].set, &e[ne]);
                if (r >= 0)
                        r = record(res, file, text, &e[ne++]);
        }
        if (r >= 0)
                r = apply_edits(text, e, ne, ret);
        free(groups);
        return r;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: MariaDB's (and MySQL's) option files and command line as their
 * server reads them (mysys/my_default.c, mysys/my_getopt.c), for the few options
 * numaguard uses. The files are another user's: every line is bounded,
 * every number checked.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "dbconf.h"
#include "engine.h"
#include "util.h"

static bool space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Where a '#' outside quotes ends the option (remove_end_comment). */
static const char *end_comment(const char *s, const char *end)
{
        char quote = 0;
        bool escape = false;
        for (; s < end; s++) {
                if ((*s == '\'' || *s == '"') && !escape) {
                        if (!quote)
                                quote = *s;
                        else if (quote == *s)
                                quote = 0;
                }
                if (!quote && *s == '#')
                        return s;
                escape = quote && *s == '\\' && !escape;
        }
        return end;
}

/* The value between v and e: one pair of quotes taken off, escapes undone. */
static bool unquote(const char *v, const char *e, char *out, size_t size)
{
        size_t o = 0;
        if ((*v == '"' || *v == '\'') && v + 1 < e && e[-1] == *v) {
                v++;
                e--;
        }
        for (; v < e; v++) {
                char c = *v;
                if (c == '\\' && v != e - 1) {
                        c = *++v;
                        switch (c) {
                        case 'n': c = '\n'; break;
                        case 't': c = '\t'; break;
                        case 'r': c = '\r'; break;
                        case 'b': c = '\b'; break;
                        case 's': c = ' '; break;
                        case '"': case '\'': case '\\': break;
                        default:
                                if (o + 1 >= size)
                                        return false;
                                out[o++] = '\\';
                        }
                }
                if (o + 1 >= size)
                        return false;
                out[o++] = c;
        }
        out[o] = '\0';
        return true;
}

/* A directive's argument: the rest of the line, blanks trimmed. */
static int directive(const char *s, const char *end, size_t kw, struct ng_my_cnf_item *it)
{
        s += kw;
        while (s < end && space(*s))
                s++;
        while (end > s && space(end[-1]))
                end--;
        if (end == s)
                return -EINVAL;
        it->cut = (size_t) (end - s) >= sizeof(it->value);
        snprintf(it->value, sizeof(it->value), "%.*s", (int) (end - s), s);
        it->has_value = true;
        return 1;
}

/* One line: 1 with *it filled, 0 nothing (a comment, an unknown
 * directive), -EINVAL for what the server refuses. */
static int parse_line(const char *s, const char *end, bool *in_group, struct ng_my_cnf_item *it)
{
        *it = (struct ng_my_cnf_item) {0};
        while (s < end && space(*s))
                s++;
        if (s == end || *s == '#' || *s == ';')
                return 0;
        if (*s == '!') {
                for (s++; s < end && space(*s); s++)
                        ;
                size_t l = (size_t) (end - s);
                if (l > 10 && !strncmp(s, "includedir", 10) && space(s[10])) {
                        it->kind = NG_MY_CNF_INCLUDEDIR;
                        return directive(s, end, 10, it);
                }
                if (l > 7 && !strncmp(s, "include", 7) && space(s[7])) {
                        it->kind = NG_MY_CNF_INCLUDE;
                        return directive(s, end, 7, it);
                }
                return 0;
        }
        if (*s == '[') {
                const char *close = memchr(s, ']', (size_t) (end - s));
                if (!close)
                        return -EINVAL;
                const char *e = close;
                for (s++; e > s && space(e[-1]); e--)
                        ;
                it->kind = NG_MY_CNF_GROUP;
                it->cut = (size_t) (e - s) >= sizeof(it->name);
                size_t n = 0;
                for (; s < e && n + 1 < sizeof(it->name); s++)
                        it->name[n++] = (char) tolower((unsigned char) *s);
                it->name[n] = '\0';
                *in_group = true;
                return 1;
        }
        if (!*in_group)
                return -EINVAL;
        const char *stop = end_comment(s, end);
        const char *eq = stop > s ? memchr(s, '=', (size_t) (stop - s)) : NULL;
        const char *ne = eq ? eq : stop;
        while (ne > s && space(ne[-1]))
                ne--;
        /* a name beyond the field is none numaguard reads */
        if ((size_t) (ne - s) >= sizeof(it->name))
                return 0;
        it->kind = NG_MY_CNF_OPTION;
        snprintf(it->name, sizeof(it->name), "%.*s", (int) (ne - s), s);
        if (eq) {
                const char *v = eq + 1, *ve = stop;
                while (v < ve && space(*v))
                        v++;
                while (ve > v && space(ve[-1]))
                        ve--;
                it->has_value = true;
                if (!unquote(v, ve, it->value, sizeof(it->value)))
                        it->cut = true;
        }
        return 1;
}

int ng_my_cnf_parse(const char *buf, size_t len, struct ng_my_cnf_item **ret, size_t *ret_n,
                    unsigned *ret_bad_line)
{
        _cleanup_free_ struct ng_my_cnf_item *v = NULL;
        struct ng_my_cnf_item it;
        size_t n = 0;
        unsigned line = 0;
        bool in_group = false;
        if (!ret || !ret_n || (!buf && len))
                return -EINVAL;
        for (const char *s = buf, *end = buf + len; s && s < end;) {
                const char *nl = memchr(s, '\n', (size_t) (end - s));
                const char *stop = nl ? nl : end;
                line++;
                int r = memchr(s, '\0', (size_t) (stop - s)) ? -EINVAL : parse_line(s, stop, &in_group, &it);
                if (r < 0) {
                        if (ret_bad_line)
                                *ret_bad_line = line;
                        return r;
                }
                if (r > 0) {
                        if (n >= NG_PG_CONF_MAX_ITEMS || ng_grow(&v, NULL, n, sizeof(*v), 0) < 0)
                                return n >= NG_PG_CONF_MAX_ITEMS ? -E2BIG : -ENOMEM;
                        it.line = line;
                        v[n++] = it;
                }
                s = nl ? nl + 1 : NULL;
        }
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

int ng_my_group_read(const char *group, const char *suffix)
{
        const struct ng_engine *e = ng_engine_of_conf(NG_DB_CONF_MARIADB);
        size_t sl = suffix ? strlen(suffix) : 0;
        for (int pass = 0; e && pass < (sl ? 2 : 1); pass++) {
                char g[64];
                size_t gl = strlen(group);
                if (pass == 1) {
                        if (gl <= sl || strcasecmp(group + gl - sl, suffix))
                                continue;
                        gl -= sl;
                }
                snprintf(g, sizeof(g), "%.*s", (int) gl, group);
                for (const char *const *n = e->conf_groups; n && *n; n++)
                        if (!strcasecmp(g, *n))
                                return 1;
                for (const char *const *n = e->conf_version_groups; n && *n; n++) {
                        size_t pl = strlen(*n);
                        unsigned major, minor;
                        int k = 0;
                        if (!strncasecmp(g, *n, pl) && sscanf(g + pl, "%u.%u%n", &major, &minor, &k) == 2 &&
                            (size_t) k == strlen(g + pl))
                                return 2;
                }
        }
        return 0;
}

/* my_getopt's boolean words; anything else numaguard cannot tell. */
static int bool_value(const char *v, bool *ret)
{
        static const char *const on[] = { "true", "on", "1" }, *const off[] = { "false", "off", "0" };
        for (size_t i = 0; i < ELEMENTSOF(on); i++)
                if (!strcasecmp(v, on[i]) || !strcasecmp(v, off[i])) {
                        *ret = !strcasecmp(v, on[i]);
                        return 0;
                }
        return -EINVAL;
}

int ng_my_option_apply(struct ng_db_settings *s, const char *name, const char *value, const char *from)
{
        char n[64];
        size_t l = strlen(name);
        if (l >= sizeof(n))
                return 0;
        for (size_t i = 0; i <= l; i++)
                n[i] = name[i] == '-' ? '_' : name[i];
        const char *o = n;
        if (!strncmp(o, "loose_", 6))
                o += 6;
        int sign = 0;   /* -1 skip-/disable-, 1 enable- */
        if (!strncmp(o, "skip_", 5) || !strncmp(o, "disable_", 8)) {
                sign = -1;
                o += o[0] == 's' ? 5 : 8;
        } else if (!strncmp(o, "enable_", 7)) {
                sign = 1;
                o += 7;
        } else if (!strncmp(o, "maximum_", 8))
                return 0;
        bool pool = !strcmp(o, "innodb_buffer_pool_size"), pool_max = !strcmp(o, "innodb_buffer_pool_size_max");
        if (!strcmp(o, "large_pages")) {
                bool on = sign >= 0;
                if (value && sign < 0)
                        return -EINVAL;         /* "--skip-large-pages=1": my_getopt refuses it */
                if (value && sign == 0 && bool_value(value, &on) < 0)
                        return -EINVAL;
                s->huge_pages = on ? NG_HUGE_TRY : NG_HUGE_OFF;
                snprintf(s->huge_pages_word, sizeof(s->huge_pages_word), "%s", on ? "ON" : "OFF");
                snprintf(s->huge_pages_from, sizeof(s->huge_pages_from), "%s", from);
                return 1;
        }
        if (!pool && !pool_max)
                return 0;
        uint64_t b;
        int e;
        if (sign || !value)
                return -EINVAL;
        if ((e = ng_dbconf_suffixed_size(value, "KMGTPE", &b)) < 0)
                return e;
        /* innodb_buffer_pool_size_max, where the server has it, is what it
         * maps: it is never below the size. */
        if (pool_max || strncmp(s->size_from, "innodb_buffer_pool_size_max", 27)) {
                s->size_bytes = b;
                snprintf(s->size_from, sizeof(s->size_from), "%.30s, %.*s", o, (int) (sizeof(s->size_from) - 40),
                         from);
        }
        return 1;
}

/* The next blank-separated word at *p, its length in *ret_len; NULL at the end. */
static const char *word(const char **p, size_t *ret_len)
{
        const char *w = *p;
        while (*w == ' ')
                w++;
        *ret_len = strcspn(w, " ");
        *p = w + *ret_len;
        return *ret_len ? w : NULL;
}

void ng_my_cmdline_defaults(const char *cmdline, struct ng_my_defaults *ret)
{
        static const struct {
                const char *opt;
                size_t off, size;
        } opts[] = {
                { "--defaults-file=", offsetof(struct ng_my_defaults, file), sizeof(ret->file) },
                { "--defaults-extra-file=", offsetof(struct ng_my_defaults, extra_file), sizeof(ret->extra_file) },
                { "--defaults-group-suffix=", offsetof(struct ng_my_defaults, group_suffix),
                  sizeof(ret->group_suffix) },
        };
        const char *p = cmdline;
        size_t len;
        *ret = (struct ng_my_defaults) {0};
        if (!word(&p, &len))
                return;         /* argv[0] */
        /* get_defaults_options(): --no-defaults only as the first argument,
         * then each of the others once, until another option. */
        const char *w = word(&p, &len);
        if (w && len == 13 && !strncmp(w, "--no-defaults", 13)) {
                ret->no_defaults = true;
                return;
        }
        for (bool found = true; w && found; w = word(&p, &len)) {
                found = false;
                for (size_t i = 0; i < ELEMENTSOF(opts) && !found; i++) {
                        size_t ol = strlen(opts[i].opt);
                        char *dst = (char *) ret + opts[i].off;
                        if (len < ol || strncmp(w, opts[i].opt, ol) || dst[0])
                                continue;
                        snprintf(dst, opts[i].size, "%.*s", (int) (len - ol), w + ol);
                        found = true;
                }
        }
}

/* Whether the option (its name after "--", any prefix, dashes or not)
 * takes its value from the next word when it has no "=". */
static bool takes_value(const char *name, size_t len)
{
        static const char *const names[] = { "innodb_buffer_pool_size", "innodb_buffer_pool_size_max" };
        if (len > 6 && (!strncmp(name, "loose-", 6) || !strncmp(name, "loose_", 6))) {
                name += 6;
                len -= 6;
        }
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                bool same = strlen(names[i]) == len;
                for (size_t k = 0; same && k < len; k++)
                        same = names[i][k] == (name[k] == '-' ? '_' : name[k]);
                if (same)
                        return true;
        }
        return false;
}

int ng_my_cmdline_apply(struct ng_db_settings *s, const char *cmdline)
{
        const char *p = cmdline;
        size_t len;
        int first = 0;
        if (!word(&p, &len))
                return 0;       /* argv[0] */
        for (const char *w; (w = word(&p, &len));) {
                char name[64], value[512];
                const char *eq, *v = NULL;
                size_t vl = 0;
                if (len <= 2 || strncmp(w, "--", 2))
                        continue;
                w += 2;
                len -= 2;
                eq = memchr(w, '=', len);
                size_t nl = eq ? (size_t) (eq - w) : len;
                if (nl >= sizeof(name))
                        continue;       /* no option numaguard reads */
                snprintf(name, sizeof(name), "%.*s", (int) nl, w);
                if (eq) {
                        v = eq + 1;
                        vl = len - nl - 1;
                } else if (takes_value(w, nl)) {
                        const char *save = p;
                        v = word(&p, &vl);
                        if (!v)
                                p = save;
                }
                /* a value beyond the field is none the server takes here */
                snprintf(value, sizeof(value), "%.*s", vl < sizeof(value) ? (int) vl : 0, v ? v : "");
                int r = ng_my_option_apply(s, name, v ? value : NULL, "command line");
                if (r < 0 && !first)
                        first = r;
        }
        return first;
}

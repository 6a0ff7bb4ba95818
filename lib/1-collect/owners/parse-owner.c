/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers for the declarations of a cpuset's owner (ng-owner.h).
 *
 * Why not libcgroup's parser: cgroup_config_load_config() parses and at
 * once creates the groups on the live host (it is cgconfigparser), needs
 * cgroup_init() on the live mount table, and keeps no positions, so it can
 * neither read a --root tree nor let a value be edited in place with the
 * rest of the file (comments included) left as it was. The grammar read
 * here is its lexer's (src/lex.l), strictly, so that a file numaguard
 * accepts is one cgconfigparser accepts: a comment is a line that starts
 * with '#' or '*' in its first column (a '#' after text is a syntax error
 * there), words are [a-zA-Z0-9_-/.,]+, strings are "..." without escapes
 * (newlines allowed), and every other character is a token of its own.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ng-owner.h"
#include "owner-internal.h"
#include "parse.h"
#include "util.h"

const char *ng_owner_kind_name(enum ng_owner_kind k)
{
        static const char *const names[] = {
                [NG_OWNER_NONE] = "none",
                [NG_OWNER_SYSTEMD] = "systemd",
                [NG_OWNER_CGCONFIG] = "cgconfig",
                [NG_OWNER_UNKNOWN] = "unknown",
                [NG_OWNER_DOCKER] = "docker",
                [NG_OWNER_PODMAN] = "podman",
                [NG_OWNER_KUBELET] = "kubelet",
        };
        return NG_NAME(names, k, "unknown");
}

/* ---- cgconfig.conf ---- */

enum tok_kind { TOK_EOF, TOK_WORD, TOK_STRING, TOK_PUNCT, TOK_BAD };

struct lexer {
        const char *buf, *p;
        unsigned line;
        /* the last token */
        enum tok_kind kind;
        const char *start, *end;        /* quotes included */
        unsigned tok_line;
};

/* Deeper nesting than any real file has; bounds the skipping below. */
#define MAX_DEPTH 16

static bool is_punct(char c)
{
        return c == '{' || c == '}' || c == '=' || c == ';';
}

static bool is_word(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '/' || c == '.' || c == ',';
}

static void skip_blank(struct lexer *lx)
{
        for (;;) {
                char c = *lx->p;
                bool bol = lx->p == lx->buf || lx->p[-1] == '\n';
                if (c == '\n') {
                        lx->line++;
                        lx->p++;
                } else if (c == ' ' || c == '\t') {
                        lx->p++;
                } else if (bol && (c == '#' || c == '*')) {
                        while (*lx->p && *lx->p != '\n')
                                lx->p++;
                } else
                        return;
        }
}

static enum tok_kind next(struct lexer *lx)
{
        skip_blank(lx);
        lx->start = lx->p;
        lx->tok_line = lx->line;
        char c = *lx->p;
        if (!c)
                lx->kind = TOK_EOF;
        else if (is_punct(c)) {
                lx->p++;
                lx->kind = TOK_PUNCT;
        } else if (c == '"') {
                const char *q = lx->p + 1;
                unsigned nl = 0;
                while (*q && *q != '"')
                        nl += *q++ == '\n';
                if (*q != '"')
                        return lx->kind = TOK_BAD;
                lx->p = q + 1;
                lx->line += nl;
                lx->kind = TOK_STRING;
        } else if (is_word(c)) {
                while (is_word(*lx->p))
                        lx->p++;
                lx->kind = TOK_WORD;
        } else {
                /* any other character is a token of its own: the grammar
                 * has no place for it */
                lx->p++;
                return lx->kind = TOK_BAD;
        }
        lx->end = lx->p;
        return lx->kind;
}

static bool is(const struct lexer *lx, char punct)
{
        return lx->kind == TOK_PUNCT && *lx->start == punct;
}

static bool word_is(const struct lexer *lx, const char *w)
{
        size_t n = strlen(w);
        return lx->kind == TOK_WORD && (size_t) (lx->end - lx->start) == n && !memcmp(lx->start, w, n);
}

/* The token's text without quotes; -EINVAL when it does not fit. */
static int tok_text(const struct lexer *lx, char *buf, size_t size)
{
        const char *s = lx->start, *e = lx->end;
        if (lx->kind == TOK_STRING) {
                s++;
                e--;
        } else if (lx->kind != TOK_WORD)
                return -EINVAL;
        if ((size_t) (e - s) >= size)
                return -EINVAL;
        memcpy(buf, s, (size_t) (e - s));
        buf[e - s] = '\0';
        return 0;
}

/* After a '{': up to and including its matching '}'. */
static int skip_block(struct lexer *lx)
{
        unsigned depth = 1;
        while (depth > 0) {
                enum tok_kind k = next(lx);
                if (k == TOK_EOF || k == TOK_BAD)
                        return -EINVAL;
                if (is(lx, '{') && ++depth > MAX_DEPTH)
                        return -EINVAL;
                if (is(lx, '}'))
                        depth--;
        }
        return 0;
}

/* After "CONTROLLER {": KEY = VALUE; ... }. Records cpuset's two values. */
static int controller_body(struct lexer *lx, struct ng_cgconfig_group *g, bool cpuset)
{
        for (;;) {
                if (next(lx) == TOK_PUNCT && is(lx, '}')) {
                        if (cpuset) {
                                g->has_cpuset = true;
                                g->cpuset_close = (size_t) (lx->start - lx->buf);
                                g->cpuset_close_line = lx->tok_line;
                        }
                        return 0;
                }
                char key[256];
                if (tok_text(lx, key, sizeof(key)) < 0 || next(lx) != TOK_PUNCT || !is(lx, '='))
                        return -EINVAL;
                if (next(lx) != TOK_WORD && lx->kind != TOK_STRING)
                        return -EINVAL;
                struct ng_cgconfig_value v = { .present = true, .start = (size_t) (lx->start - lx->buf),
                                               .end = (size_t) (lx->end - lx->buf), .line = lx->tok_line };
                if (tok_text(lx, v.value, sizeof(v.value)) < 0)
                        return -EINVAL;
                if (cpuset && !strcmp(key, "cpuset.cpus"))
                        g->cpus = v;
                else if (cpuset && !strcmp(key, "cpuset.mems"))
                        g->mems = v;
                if (next(lx) != TOK_PUNCT || !is(lx, ';'))
                        return -EINVAL;
        }
}

/* After "group NAME {": CONTROLLER { ... } and perm { ... } blocks. */
static int group_body(struct lexer *lx, struct ng_cgconfig_group *g)
{
        for (;;) {
                if (next(lx) == TOK_PUNCT && is(lx, '}'))
                        return 0;
                if (lx->kind != TOK_WORD)
                        return -EINVAL;
                bool perm = word_is(lx, "perm"), cpuset = word_is(lx, "cpuset");
                if (next(lx) != TOK_PUNCT || !is(lx, '{'))
                        return -EINVAL;
                int r = perm ? skip_block(lx) : controller_body(lx, g, cpuset);
                if (r < 0)
                        return r;
        }
}

/* One top-level statement; 1 when it declared a group (into *g). */
static int statement(struct lexer *lx, struct ng_cgconfig_group *g)
{
        if (lx->kind != TOK_WORD)
                return -EINVAL;
        if (word_is(lx, "group")) {
                *g = (struct ng_cgconfig_group) { .line = lx->tok_line };
                if ((next(lx) != TOK_WORD && lx->kind != TOK_STRING) || tok_text(lx, g->name, sizeof(g->name)) < 0)
                        return -EINVAL;
                if (next(lx) != TOK_PUNCT || !is(lx, '{'))
                        return -EINVAL;
                int r = group_body(lx, g);
                return r < 0 ? r : 1;
        }
        /* mount { }, default { }, namespace { }, template NAME { } */
        for (unsigned words = 0; !is(lx, '{'); words++)
                if (words > 2 || (next(lx) != TOK_WORD && lx->kind != TOK_STRING && !is(lx, '{')))
                        return -EINVAL;
        return skip_block(lx);
}

int ng_parse_cgconfig(const char *buf, struct ng_cgconfig_group **ret, size_t *ret_n, unsigned *ret_error_line)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        struct lexer lx = { .buf = buf, .p = buf, .line = 1 };
        struct ng_cgconfig_group *v = NULL, g;
        size_t n = 0, cap = 0;
        int r = 0;
        while (next(&lx) != TOK_EOF) {
                r = statement(&lx, &g);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                if ((r = ng_grow(&v, &cap, n, sizeof(*v), NG_PARSE_MAX_ENTRIES)) < 0)
                        break;
                v[n++] = g;
                r = 0;
        }
        if (r < 0) {
                free(v);
                if (r == -EINVAL && ret_error_line)
                        *ret_error_line = lx.tok_line;
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* ---- systemd unit files ---- */

/* "0-3 8,10" -> bitmap; systemd accepts blanks and commas between items. */
static int unit_list(const char *s, struct ng_bitmap *ret)
{
        char buf[1024];
        size_t n = 0;
        for (; *s && n + 1 < sizeof(buf); s++)
                buf[n++] = (*s == ' ' || *s == '\t') ? ',' : *s;
        if (*s)
                return -EINVAL;
        buf[n] = '\0';
        /* collapse ",," and trim commas */
        char out[1024];
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (buf[i] != ',' || (m > 0 && out[m - 1] != ','))
                        out[m++] = buf[i];
        while (m > 0 && out[m - 1] == ',')
                m--;
        out[m] = '\0';
        return ng_bitmap_parse_list(out, ret);
}

static void unit_assign(const char *value, bool *has, struct ng_bitmap *set)
{
        struct ng_bitmap b = {0};
        if (!*value) {
                *has = false;
                *set = b;
                return;
        }
        if (unit_list(value, &b) < 0)
                return;
        *has = true;
        ng_bitmap_or(set, &b);
}

/* NUMAPolicy=: one of systemd's names; "" resets it. Anything else is
 * what systemd ignores with a warning: the setting stays as it was. */
static void numa_policy_assign(const char *value, struct ng_unit_cpuset *acc)
{
        if (!*value) {
                acc->has_numa_policy = false;
                acc->numa_policy = 0;
                return;
        }
        const char *name;
        for (int i = 0; (name = ng_unit_numa_policy_name(i)) || i < NG_MPOL_UNKNOWN; i++)
                if (name && !strcmp(value, name)) {
                        acc->has_numa_policy = true;
                        acc->numa_policy = i;
                }
}

static char *trim(char *s)
{
        while (*s == ' ' || *s == '\t')
                s++;
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                s[--n] = '\0';
        return s;
}

int ng_parse_unit_cpuset(const char *buf, struct ng_unit_cpuset *acc)
{
        if (!buf || !acc)
                return -EINVAL;
        const char *p = buf;
        bool in_type_section = false;
        while (*p) {
                char *line = ng_parse_line_dup(&p);
                if (!line)
                        return -ENOMEM;
                char *l = trim(line);
                char *eq = strchr(l, '=');
                if (*l == '[')
                        /* cgroup settings live in [Service], [Scope], [Slice]... */
                        in_type_section = strcmp(l, "[Unit]") && strcmp(l, "[Install]");
                else if (in_type_section && eq && *l != '#' && *l != ';') {
                        *eq = '\0';
                        char *key = trim(l), *value = trim(eq + 1);
                        if (!strcmp(key, "AllowedCPUs"))
                                unit_assign(value, &acc->has_cpus, &acc->cpus);
                        else if (!strcmp(key, "AllowedMemoryNodes"))
                                unit_assign(value, &acc->has_mems, &acc->mems);
                        else if (!strcmp(key, "NUMAPolicy"))
                                numa_policy_assign(value, acc);
                        else if (!strcmp(key, "NUMAMask"))     /* adds, as AllowedCPUs= */
                                unit_assign(value, &acc->has_numa_mask, &acc->numa_mask);
                }
                free(line);
        }
        return 0;
}

static bool unit_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(":-_.\\@", c);
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
        size_t k = strlen(suffix);
        return n > k && !memcmp(s + n - k, suffix, k);
}

int ng_unit_from_cgroup(const char *cgroup_path, char *buf, size_t size)
{
        if (!cgroup_path || !buf)
                return -EINVAL;
        const char *slash = strrchr(cgroup_path, '/');
        const char *name = slash ? slash + 1 : cgroup_path;
        size_t n = strlen(name);
        if (n == 0 || n >= size || n > 255 || !(ends_with(name, n, ".service") || ends_with(name, n, ".scope")))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!unit_char(name[i]))
                        return -EINVAL;
        memcpy(buf, name, n + 1);
        return 0;
}

/* After "mount {": CONTROLLER = PATH; ... }. 1 when controller is one. */
static int mount_body(struct lexer *lx, const char *controller)
{
        int found = 0;
        for (;;) {
                if (next(lx) == TOK_PUNCT && is(lx, '}'))
                        return found;
                char key[256], path[NG_PATH_MAX];
                if (tok_text(lx, key, sizeof(key)) < 0 || next(lx) != TOK_PUNCT || !is(lx, '='))
                        return -EINVAL;
                if ((next(lx) != TOK_WORD && lx->kind != TOK_STRING) || tok_text(lx, path, sizeof(path)) < 0)
                        return -EINVAL;
                found |= !strcmp(key, controller);
                if (next(lx) != TOK_PUNCT || !is(lx, ';'))
                        return -EINVAL;
        }
}

int ng_cgconfig_mounts(const char *buf, const char *controller)
{
        if (!buf || !controller)
                return -EINVAL;
        struct lexer lx = { .buf = buf, .p = buf, .line = 1 };
        struct ng_cgconfig_group g;
        int found = 0;
        while (next(&lx) != TOK_EOF) {
                int r;
                if (lx.kind == TOK_WORD && word_is(&lx, "mount")) {
                        if (next(&lx) != TOK_PUNCT || !is(&lx, '{'))
                                return -EINVAL;
                        r = mount_body(&lx, controller);
                        found |= r > 0;
                } else
                        r = statement(&lx, &g);
                if (r < 0)
                        return r;
        }
        return found;
}

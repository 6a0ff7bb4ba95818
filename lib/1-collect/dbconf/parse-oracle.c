/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: an Oracle instance's parameter file, the few parameters
 * numaguard reads, and a process's environment. A text pfile is lines of
 * "[SID.]name = value"; a server parameter file (spfile) is binary, its
 * parameters text lines "SID.name=value" or "*.name=value" between the
 * bytes of its header, its padding and, in a larger file, the headers of
 * its blocks, which may fall inside a line: such a line cannot be read
 * whole, and numaguard says so rather than take its first part for the
 * value. The files are another user's: every line is bounded, every
 * number checked.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "dbconf.h"
#include "util.h"

static const char *const wanted[] = { "use_large_pages", "sga_max_size", "sga_target", "memory_target",
                                      "memory_max_target", "spfile", "ifile" };

bool ng_db_path_ok(const char *path)
{
        size_t l = strlen(path);
        if (path[0] != '/' || l >= 1024)
                return false;
        for (size_t i = 0; i < l; i++)
                if ((unsigned char) path[i] < 0x20 || path[i] == 0x7f)
                        return false;
        for (const char *c = path; c; c = strchr(c + 1, '/')) {
                size_t n = strcspn(c + 1, "/");
                if ((n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
                        return false;
        }
        return true;
}

/* A byte of a text line: printable ASCII or a tab. */
static bool text(char c)
{
        return (c >= 0x20 && c < 0x7f) || c == '\t';
}

static bool sid_char(char c)
{
        return isalnum((unsigned char) c) || c == '_' || c == '$' || c == '#' || c == '*' || c == '+' || c == '-';
}

static bool name_char(char c)
{
        return isalnum((unsigned char) c) || c == '_' || c == '$' || c == '#';
}

/* Whether a parameter name (len bytes) is one numaguard reads; with
 * prefix, whether it may be the beginning of one. */
static bool wanted_name(const char *n, size_t len, bool prefix)
{
        for (size_t i = 0; i < ELEMENTSOF(wanted); i++) {
                size_t wl = strlen(wanted[i]);
                if ((len == wl || (prefix && len < wl)) && !strncasecmp(n, wanted[i], len))
                        return true;
        }
        return false;
}

/* The parts of "[SID.]name": the SID's length (0: none), the name's start
 * and length. */
struct head {
        const char *sid, *name;
        size_t sid_len, name_len;
        bool dot;
};

static const char *parse_head(const char *s, const char *end, struct head *h)
{
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        const char *t = s;
        while (t < end && sid_char(*t))
                t++;
        *h = (struct head) { .sid = s, .name = s };
        if (t < end && *t == '.') {
                h->sid_len = (size_t) (t - s);
                h->dot = true;
                h->name = t + 1;
        }
        for (t = h->name; t < end && name_char(*t);)
                t++;
        h->name_len = (size_t) (t - h->name);
        return t;
}

/* A value: quoted ('' or "" inside doubling the quote) or bare up to a
 * blank, a comma or a '#'. false when it does not fit or is unterminated. */
static bool parse_value(const char *s, const char *end, struct ng_ora_param *p)
{
        size_t o = 0;
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        if (s < end && (*s == '\'' || *s == '"')) {
                char q = *s++;
                for (;; s++) {
                        if (s >= end)
                                return false;
                        if (*s == q) {
                                if (s + 1 < end && s[1] == q)
                                        s++;
                                else
                                        break;
                        }
                        if (o + 1 >= sizeof(p->value)) {
                                p->cut = true;
                                break;
                        }
                        p->value[o++] = *s;
                }
        } else
                for (; s < end && *s != ' ' && *s != '\t' && *s != ',' && *s != '#'; s++) {
                        if (o + 1 >= sizeof(p->value)) {
                                p->cut = true;
                                break;
                        }
                        p->value[o++] = *s;
                }
        p->value[o] = '\0';
        return true;
}

/* A whole setting line: 1 with *p filled when it is one numaguard reads,
 * 0 when not. spfile: the SID prefix is required. */
static int setting(const char *s, const char *end, bool spfile, struct ng_ora_param *p)
{
        struct head h;
        const char *t = parse_head(s, end, &h);
        if (!h.name_len || (spfile && !h.dot) || (h.dot && !h.sid_len) || h.sid_len >= sizeof(p->sid) ||
            !wanted_name(h.name, h.name_len, false))
                return 0;
        while (t < end && (*t == ' ' || *t == '\t'))
                t++;
        if (t >= end || *t != '=')
                return 0;
        *p = (struct ng_ora_param) {0};
        snprintf(p->sid, sizeof(p->sid), "%.*s", h.dot ? (int) h.sid_len : 1, h.dot ? h.sid : "*");
        for (size_t i = 0; i < h.name_len; i++)
                p->name[i] = (char) tolower((unsigned char) h.name[i]);
        return parse_value(t + 1, end, p) ? 1 : 0;
}

/* Whether a run cut at its end by binary bytes may be the beginning of a
 * line of a parameter numaguard reads: its "*." or "SID.", then a name
 * that begins one of them. */
static bool cut_head(const char *s, const char *end, const char *sid)
{
        struct head h;
        const char *t = parse_head(s, end, &h);
        if (!h.dot || (t < end && *t != '=' && *t != ' ' && *t != '\t'))
                return false;
        bool ours = (h.sid_len == 1 && *h.sid == '*') ||
                    (sid && h.sid_len == strlen(sid) && !strncasecmp(h.sid, sid, h.sid_len));
        return ours && wanted_name(h.name, h.name_len, t == end);
}

/* Whether a run that follows binary bytes within a line is the rest of a
 * line of a parameter numaguard reads cut inside its prefix: "CL.sga_target"
 * after "ORCL" was cut, ".sga_target" after "*". */
static bool cut_tail(const char *s, const char *end, const char *sid)
{
        struct head h;
        parse_head(s, end, &h);
        if (!h.dot || !wanted_name(h.name, h.name_len, false))
                return false;
        if (h.sid_len == 0)
                return true;
        size_t l = sid ? strlen(sid) : 0;
        return h.sid_len < l && !strncasecmp(sid + l - h.sid_len, h.sid, h.sid_len);
}

/* One line of an spfile (runs of text between binary bytes): 1 with *p
 * filled, 0 nothing of numaguard's, -EBADMSG for one of its parameters
 * cut by binary bytes. */
static int spfile_line(const char *s, const char *end, const char *sid, struct ng_ora_param *p)
{
        const char *run = s;
        for (const char *c = s; c <= end; c++) {
                if (c < end && text(*c))
                        continue;
                bool last = c == end;
                if (c > run) {
                        if (!last && cut_head(run, c, sid))
                                return -EBADMSG;
                        if (last && run != s && cut_tail(run, c, sid))
                                return -EBADMSG;
                        if (last)
                                return setting(run, c, true, p);
                }
                run = c + 1;
        }
        return 0;
}

int ng_ora_params_parse(const char *buf, size_t len, bool spfile, const char *sid, struct ng_ora_param **ret,
                        size_t *ret_n, unsigned *ret_bad_line)
{
        _cleanup_free_ struct ng_ora_param *v = NULL;
        struct ng_ora_param it;
        size_t n = 0;
        unsigned line = 0;
        if (!ret || !ret_n || (!buf && len))
                return -EINVAL;
        for (const char *s = buf, *end = buf + len; s && s < end;) {
                const char *nl = memchr(s, '\n', (size_t) (end - s));
                const char *stop = nl ? nl : end;
                line++;
                int r;
                if (spfile) {
                        r = spfile_line(s, stop, sid, &it);
                        /* a setting without its newline is cut by the end of the file */
                        if (!nl && r > 0)
                                r = -EBADMSG;
                } else
                        r = memchr(s, '\0', (size_t) (stop - s)) ? -EINVAL : setting(s, stop, false, &it);
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

bool ng_ora_line_kept(const char *line, size_t len)
{
        const char *end = line + len, *run = line;
        for (const char *c = line; c <= end; c++) {
                if (c < end && text(*c))
                        continue;
                if (c > run) {
                        /* a run cut by binary bytes that may begin a line of
                         * one (cut_head(), whatever its SID); a whole name */
                        struct head h;
                        const char *t = parse_head(run, c, &h);
                        bool cut = c < end && h.dot && (t == c || *t == '=' || *t == ' ' || *t == '\t');
                        if ((cut || h.name_len) && wanted_name(h.name, h.name_len, cut && t == c))
                                return true;
                }
                run = c + 1;
        }
        return false;
}

static const char *const large_pages_words[] = { "TRUE", "FALSE", "ONLY", "AUTO", "AUTO_ONLY" };

int ng_ora_param_apply(struct ng_ora_conf *conf, const char *sid, const struct ng_ora_param *p, const char *from)
{
        __typeof__(conf->use_large_pages) *slot =
                !strcmp(p->name, "use_large_pages") ? &conf->use_large_pages
                : !strcmp(p->name, "sga_max_size") ? &conf->sga_max_size
                : !strcmp(p->name, "sga_target") ? &conf->sga_target
                : !strcmp(p->name, "memory_target") ? &conf->memory_target
                : !strcmp(p->name, "memory_max_target") ? &conf->memory_max_target : NULL;
        bool own = strcmp(p->sid, "*") != 0;
        if (!slot || (own && strcasecmp(p->sid, sid)) || (slot->own && !own))
                return 0;
        if (p->cut || strlen(p->value) >= sizeof(slot->value))
                return -EINVAL;
        if (slot == &conf->use_large_pages) {
                bool known = false;
                for (size_t i = 0; i < ELEMENTSOF(large_pages_words) && !known; i++)
                        known = !strcasecmp(p->value, large_pages_words[i]);
                if (!known)
                        return -EINVAL;
        } else {
                uint64_t b;
                int e = ng_dbconf_suffixed_size(p->value, "KMGT", &b);
                if (e < 0)
                        return e;
        }
        slot->set = true;
        slot->own = own;
        snprintf(slot->value, sizeof(slot->value), "%.*s", (int) sizeof(slot->value) - 1, p->value);
        snprintf(slot->from, sizeof(slot->from), "%s", from);
        return 0;
}

int ng_ora_conf_settings(const struct ng_ora_conf *conf, struct ng_db_settings *s)
{
        s->kind = NG_DB_CONF_ORACLE;
        if (conf->use_large_pages.set) {
                char w[16];
                size_t i;
                for (i = 0; i < sizeof(w) - 1 && conf->use_large_pages.value[i]; i++)
                        w[i] = (char) toupper((unsigned char) conf->use_large_pages.value[i]);
                w[i] = '\0';
                /* TRUE: what the pool holds, the rest in 4 KiB pages (since
                 * 11.2.0.3); ONLY: all or no start; AUTO and AUTO_ONLY ask
                 * the kernel for the pages first, then behave as TRUE and
                 * ONLY. */
                s->huge_pages = !strcmp(w, "FALSE") ? NG_HUGE_OFF
                              : !strcmp(w, "ONLY") || !strcmp(w, "AUTO_ONLY") ? NG_HUGE_ON : NG_HUGE_PARTIAL;
                s->huge_auto = !strncmp(w, "AUTO", 4);
                snprintf(s->huge_pages_word, sizeof(s->huge_pages_word), "%s", w);
                snprintf(s->huge_pages_from, sizeof(s->huge_pages_from), "%s", conf->use_large_pages.from);
        }
        const struct {
                const __typeof__(conf->sga_max_size) *slot;
                const char *name;
                bool amm;
        } sizes[] = {
                { &conf->memory_max_target, "memory_max_target", true },
                { &conf->memory_target, "memory_target", true },
                { &conf->sga_max_size, "sga_max_size", false },
                { &conf->sga_target, "sga_target", false },
        };
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                uint64_t b;
                if (!sizes[i].slot->set)
                        continue;
                int e = ng_dbconf_suffixed_size(sizes[i].slot->value, "KMGT", &b);
                if (e < 0)
                        return e;
                uint64_t *dst = sizes[i].amm ? &s->amm_bytes : &s->size_bytes;
                char *from = sizes[i].amm ? s->amm_from : s->size_from;
                size_t fsize = sizes[i].amm ? sizeof(s->amm_from) : sizeof(s->size_from);
                /* the first of each kind set to more than 0 wins: the
                 * largest SGA its settings allow */
                if (*dst || !b)
                        continue;
                *dst = b;
                snprintf(from, fsize, "%s, %.*s", sizes[i].name, (int) fsize - 40, sizes[i].slot->from);
        }
        return 0;
}

int ng_environ_get(const char *buf, size_t len, const char *name, char *out, size_t size)
{
        size_t nl = strlen(name);
        for (size_t i = 0; i < len;) {
                const char *e = buf + i, *z = memchr(e, '\0', len - i);
                size_t el = z ? (size_t) (z - e) : len - i;
                if (el > nl && e[nl] == '=' && !memcmp(e, name, nl)) {
                        if (el - nl - 1 >= size)
                                return -ENAMETOOLONG;
                        memcpy(out, e + nl + 1, el - nl - 1);
                        out[el - nl - 1] = '\0';
                        return 0;
                }
                i += el + 1;
        }
        return -ENOENT;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: PostgreSQL's configuration text (the grammar of its guc-file.l)
 * and the few settings numaguard uses, as the server reads them. The files
 * are another user's: every line is bounded, every number checked.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "dbconf.h"
#include "util.h"

const char *ng_huge_setting_name(enum ng_huge_setting h)
{
        static const char *const names[NG_HUGE_SETTING_COUNT_] = {
                [NG_HUGE_UNSET] = "unset", [NG_HUGE_OFF] = "off", [NG_HUGE_ON] = "on",
                [NG_HUGE_TRY] = "try", [NG_HUGE_PARTIAL] = "partial",
        };
        return (unsigned) h < NG_HUGE_SETTING_COUNT_ ? names[h] : "?";
}

static bool name_char(char c, bool first)
{
        return isalpha((unsigned char) c) || c == '_' || (!first && (isdigit((unsigned char) c) || c == '.'));
}

/* A quoted value at *p (after the quote): '' and \x escapes; the closing
 * quote consumed. false when the line ends first or it does not fit. */
static bool quoted(const char **p, const char *end, char *out, size_t size)
{
        size_t o = 0;
        const char *s = *p;
        while (s < end && *s != '\n') {
                char c = *s++;
                if (c == '\'') {
                        if (s < end && *s == '\'') {
                                c = *s++;
                        } else {
                                out[o] = '\0';
                                *p = s;
                                return true;
                        }
                } else if (c == '\\' && s < end && *s != '\n') {
                        c = *s++;
                        c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
                }
                if (o + 1 >= size)
                        return false;
                out[o++] = c;
        }
        return false;
}

/* One line: 0 with *ret_has set when it holds a setting, -EINVAL when it
 * does not parse. */
static int parse_line(const char *s, const char *end, struct ng_pg_conf_item *it, bool *ret_has)
{
        *ret_has = false;
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
                s++;
        if (s == end || *s == '#')
                return 0;
        if (!name_char(*s, true))
                return -EINVAL;
        size_t n = 0;
        while (s < end && name_char(*s, n == 0)) {
                if (n + 1 >= sizeof(it->name))
                        return -EINVAL;
                it->name[n++] = (char) tolower((unsigned char) *s++);
        }
        it->name[n] = '\0';
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        if (s < end && *s == '=')
                s++;
        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        if (s < end && *s == '\'') {
                s++;
                if (!quoted(&s, end, it->value, sizeof(it->value)))
                        return -EINVAL;
        } else {
                size_t v = 0;
                while (s < end && *s != ' ' && *s != '\t' && *s != '#' && *s != '\r' && *s != '\'') {
                        if (v + 1 >= sizeof(it->value))
                                return -EINVAL;
                        it->value[v++] = *s++;
                }
                it->value[v] = '\0';
                if (v == 0)
                        return -EINVAL;
        }
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
                s++;
        if (s < end && *s != '#')
                return -EINVAL;
        *ret_has = true;
        return 0;
}

int ng_pg_conf_parse(const char *buf, size_t len, struct ng_pg_conf_item **ret, size_t *ret_n,
                     unsigned *ret_bad_line)
{
        _cleanup_free_ struct ng_pg_conf_item *v = NULL;
        struct ng_pg_conf_item it;
        size_t n = 0;
        unsigned line = 0;
        if (!ret || !ret_n || (!buf && len))
                return -EINVAL;
        for (const char *s = buf, *end = buf + len; s && s < end;) {
                const char *nl = memchr(s, '\n', (size_t) (end - s));
                const char *stop = nl ? nl : end;
                bool has;
                line++;
                if (memchr(s, '\0', (size_t) (stop - s)) || parse_line(s, stop, &it, &has) < 0) {
                        if (ret_bad_line)
                                *ret_bad_line = line;
                        return -EINVAL;
                }
                if (has) {
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

/* PostgreSQL's boolean words, and its enum's own. */
static int huge_value(const char *v, enum ng_huge_setting *ret)
{
        static const struct {
                const char *word;
                enum ng_huge_setting h;
        } words[] = {
                { "on", NG_HUGE_ON }, { "off", NG_HUGE_OFF }, { "try", NG_HUGE_TRY }, { "true", NG_HUGE_ON },
                { "false", NG_HUGE_OFF }, { "yes", NG_HUGE_ON }, { "no", NG_HUGE_OFF }, { "1", NG_HUGE_ON },
                { "0", NG_HUGE_OFF },
        };
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (!strcasecmp(v, words[i].word)) {
                        *ret = words[i].h;
                        return 0;
                }
        return -EINVAL;
}

/* A memory setting: an integer and a unit among PostgreSQL's (B, kB, MB,
 * GB, TB: case as it spells them), or none (unit_bytes). */
static int memory_value(const char *v, uint64_t unit_bytes, uint64_t *ret)
{
        static const struct {
                const char *unit;
                uint64_t bytes;
        } units[] = { { "B", 1 }, { "kB", 1024 }, { "MB", 1024 * 1024 }, { "GB", UINT64_C(1) << 30 },
                      { "TB", UINT64_C(1) << 40 } };
        char *end;
        if (!isdigit((unsigned char) *v))
                return -EINVAL;
        errno = 0;
        uint64_t n = strtoull(v, &end, 10);
        if (errno)
                return -ERANGE;
        while (*end == ' ')
                end++;
        uint64_t mult = unit_bytes;
        if (*end) {
                mult = 0;
                for (size_t i = 0; i < ELEMENTSOF(units); i++)
                        if (!strcmp(end, units[i].unit))
                                mult = units[i].bytes;
                if (!mult)
                        return -EINVAL;
        }
        if (__builtin_mul_overflow(n, mult, ret))
                return -ERANGE;
        return 0;
}

int ng_pg_setting_apply(struct ng_db_settings *s, const char *name, const char *value, const char *from)
{
        uint64_t b;
        int e;
        if (!strcmp(name, "huge_pages")) {
                enum ng_huge_setting h;
                if (huge_value(value, &h) < 0)
                        return -EINVAL;
                s->huge_pages = h;
                snprintf(s->huge_pages_from, sizeof(s->huge_pages_from), "%s", from);
        } else if (!strcmp(name, "shared_memory_type")) {
                if (strcasecmp(value, "mmap") && strcasecmp(value, "sysv"))
                        return -EINVAL;
                s->shm_sysv = !strcasecmp(value, "sysv");
        } else if (!strcmp(name, "huge_page_size")) {
                if ((e = memory_value(value, 1024, &b)) < 0)
                        return e;
                if (b % 1024)
                        return -EINVAL;
                s->huge_page_size_kib = b / 1024;
        } else if (!strcmp(name, "shared_buffers")) {
                if ((e = memory_value(value, 8192, &b)) < 0)
                        return e;
                s->shared_buffers_bytes = b;
        }
        return 0;
}

/* "name=value" of an option: the name with '-' read as '_' (as the server
 * reads --name=value), lower case. */
static void option(struct ng_db_settings *s, const char *tok, size_t len, char *config_file, size_t size)
{
        char name[64], value[512];
        const char *eq = memchr(tok, '=', len);
        if (!eq || eq == tok || (size_t) (eq - tok) >= sizeof(name) || len - (size_t) (eq - tok) > sizeof(value))
                return;
        size_t nl = (size_t) (eq - tok);
        for (size_t i = 0; i < nl; i++)
                name[i] = tok[i] == '-' ? '_' : (char) tolower((unsigned char) tok[i]);
        name[nl] = '\0';
        snprintf(value, sizeof(value), "%.*s", (int) (len - nl - 1), eq + 1);
        if (!strcmp(name, "config_file"))
                snprintf(config_file, size, "%s", value);
        else
                ng_pg_setting_apply(s, name, value, "command line");
}

/* The next blank-separated word of a command line at *p: its start, its
 * length in *ret_len; NULL at the end. */
static const char *next_word(const char **p, size_t *ret_len)
{
        const char *w = *p;
        if (!w)
                return NULL;
        while (*w == ' ')
                w++;
        *ret_len = strcspn(w, " ");
        *p = w + *ret_len;
        return *ret_len ? w : NULL;
}

void ng_pg_cmdline_apply(struct ng_db_settings *s, const char *cmdline, char *config_file, size_t size)
{
        const char *p = cmdline;
        size_t len;
        bool next_c = false, next_b = false;
        config_file[0] = '\0';
        for (const char *w; (w = next_word(&p, &len));) {
                const char *q = w;
                if (next_c)
                        option(s, q, len, config_file, size);
                else if (next_b) {
                        char v[32];
                        snprintf(v, sizeof(v), "%.*s", (int) (len < sizeof(v) ? len : sizeof(v) - 1), q);
                        ng_pg_setting_apply(s, "shared_buffers", v, "command line");
                } else if (len > 2 && (!strncmp(q, "-c", 2) || !strncmp(q, "--", 2)))
                        option(s, q + 2, len - 2, config_file, size);
                next_c = len == 2 && !strncmp(q, "-c", 2);
                next_b = len == 2 && !strncmp(q, "-B", 2);
        }
}

void ng_pg_cmdline_datadir(const char *cmdline, char *buf, size_t size)
{
        const char *p = cmdline;
        size_t len;
        bool next = false;
        buf[0] = '\0';
        for (const char *w; (w = next_word(&p, &len));) {
                const char *v = next ? w : len > 2 && !strncmp(w, "-D", 2) ? w + 2
                              : len > 9 && !strncmp(w, "--pgdata=", 9) ? w + 9 : NULL;
                size_t vl = v ? len - (size_t) (v - w) : 0;
                if (v && vl > 0 && v[0] == '/')
                        snprintf(buf, size, "%.*s", (int) (vl < size ? vl : size - 1), v);
                next = len == 2 && !strncmp(w, "-D", 2);
        }
}

bool ng_db_conf_path(const char *path)
{
        unsigned pid;
        int n = 0;
        if (sscanf(path, "/proc/%u/%n", &pid, &n) != 1 || n == 0)
                return false;
        return !strncmp(path + n, "cwd/", 4) || !strncmp(path + n, "root/", 5);
}

bool ng_db_environ_path(const char *path)
{
        unsigned pid;
        int n = 0;
        return sscanf(path, "/proc/%u/environ%n", &pid, &n) == 1 && n > 0 && path[n] == '\0';
}

/* The settings a rehearsal reads, and the includes that lead to them; not
 * a comment (a commented-out primary_conninfo holds a password too). Any
 * engine's, whatever the file: PostgreSQL's names, MariaDB's (dashes or
 * underscores, my_getopt's prefixes, its groups and !include directives),
 * Oracle's (ng_ora_line_kept()). */
static bool kept(const char *line, size_t len)
{
        static const char *const names[] = { "huge_pages", "shared_memory_type", "huge_page_size", "shared_buffers",
                                              "include", "include_if_exists", "include_dir", "large_pages",
                                              "innodb_buffer_pool_size", "innodb_buffer_pool_size_max" };
        static const char *const prefixes[] = { "loose_", "skip_", "disable_", "enable_" };
        if (ng_ora_line_kept(line, len))
                return true;
        while (len && (*line == ' ' || *line == '\t')) {
                line++;
                len--;
        }
        if (len == 0 || *line == '[' || *line == '!')
                return true;
        char n[64];
        size_t l = 0;
        while (l < len && l + 1 < sizeof(n) && (name_char(line[l], l == 0) || line[l] == '-')) {
                n[l] = line[l] == '-' ? '_' : (char) tolower((unsigned char) line[l]);
                l++;
        }
        n[l] = '\0';
        const char *o = n;
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (!strncmp(o, prefixes[i], strlen(prefixes[i])))
                        o += strlen(prefixes[i]);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (!strcmp(o, names[i]))
                        return true;
        return false;
}

int ng_db_conf_redact(const char *buf, size_t len, char **ret, size_t *ret_len)
{
        char *out = malloc(len + 1);
        size_t o = 0;
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(buf + i, '\n', len - i);
                size_t l = nl ? (size_t) (nl - (buf + i)) : len - i;
                if (kept(buf + i, l)) {
                        memcpy(out + o, buf + i, l);
                        o += l;
                } else
                        out[o++] = '#';
                if (nl)
                        out[o++] = '\n';
                i += l + (nl ? 1 : 0);
        }
        out[o] = '\0';
        *ret = out;
        *ret_len = o;
        return 0;
}

int ng_db_environ_redact(const char *buf, size_t len, char **ret, size_t *ret_len)
{
        static const char *const names[] = { "ORACLE_HOME=", "ORACLE_SID=", "MYSQL_HOME=" };
        char *out = malloc(len + 2);
        size_t o = 0;
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                const char *e = buf + i, *z = memchr(e, '\0', len - i);
                size_t el = z ? (size_t) (z - e) : len - i;
                for (size_t k = 0; k < ELEMENTSOF(names); k++)
                        if (el >= strlen(names[k]) && !memcmp(e, names[k], strlen(names[k]))) {
                                memcpy(out + o, e, el);
                                o += el;
                                out[o++] = '\0';
                                break;
                        }
                i += el + 1;
        }
        out[o] = '\0';
        *ret = out;
        *ret_len = o;
        return 0;
}

void ng_dbconf_fail(struct ng_db_settings *ret, int err, const char *where)
{
        if (ret->error)
                return;
        ret->error = err;
        snprintf(ret->error_path, sizeof(ret->error_path), "%.*s", (int) sizeof(ret->error_path) - 1, where);
}

void ng_dbconf_unknown(struct ng_db_settings *ret, const char *fmt, ...)
{
        if (ret->unknown[0])
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ret->unknown, sizeof(ret->unknown), fmt, ap);
        va_end(ap);
}

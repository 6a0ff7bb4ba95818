/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small parsing helpers and /proc/meminfo (also node meminfo). */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "parse.h"
#include "parse-internal.h"
#include "text.h"
#include "util.h"

static bool is_blank(char c)
{
        return c == ' ' || c == '\t';
}

static bool is_space(char c)
{
        return is_blank(c) || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

int ng_parse_u64(const char **s, uint64_t *ret)
{
        const char *p = *s;
        uint64_t v = 0;

        while (is_blank(*p))
                p++;
        if (!is_digit(*p))
                return -EINVAL;
        for (; is_digit(*p); p++) {
                unsigned d = (unsigned)(*p - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *s = p;
        *ret = v;
        return 0;
}

static bool only_space(const char *s)
{
        while (is_space(*s))
                s++;
        return *s == '\0';
}

int ng_parse_u64_full(const char *buf, uint64_t *ret)
{
        uint64_t v;
        int r;

        r = ng_parse_u64(&buf, &v);
        if (r < 0)
                return r;
        if (!only_space(buf))
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Two passes so that *ret stays untouched when the row is bad. */
static int u64_row_walk(const char *buf, uint64_t *out, size_t max, size_t *ret_n)
{
        size_t n = 0;

        while (!only_space(buf)) {
                uint64_t v;
                int r;

                r = ng_parse_u64(&buf, &v);
                if (r < 0)
                        return r;
                if (*buf && !is_space(*buf))
                        return -EINVAL;
                if (n >= max)
                        return -E2BIG;
                if (out)
                        out[n] = v;
                n++;
        }
        *ret_n = n;
        return 0;
}

int ng_parse_u64_row(const char *buf, uint64_t *ret, size_t max, size_t *ret_n)
{
        size_t n;
        int r;

        if (!buf || !ret || !ret_n)
                return -EINVAL;
        r = u64_row_walk(buf, NULL, max, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return -EINVAL;
        u64_row_walk(buf, ret, max, &n);
        *ret_n = n;
        return 0;
}

int ng_parse_hugepages_dirname(const char *name, uint64_t *ret_kib)
{
        static const char prefix[] = "hugepages-";
        const char *p = name;
        uint64_t kib;

        if (!name || strncmp(p, prefix, strlen(prefix)) != 0)
                return -EINVAL;
        p += strlen(prefix);
        /* the kernel prints "%lukB"; no blanks allowed in a dirent */
        if (!is_digit(*p) || ng_parse_u64(&p, &kib) < 0)
                return -EINVAL;
        if (strcmp(p, "kB") != 0 || kib == 0)
                return -EINVAL;
        *ret_kib = kib;
        return 0;
}

int ng_parse_owner_line(const char *line, uint32_t *ret_uid, const char **ret_path)
{
        const char *p = line;
        uint64_t uid;

        if (!line || !is_digit(*p) || ng_parse_u64(&p, &uid) < 0 || uid > UINT32_MAX || *p != ' ' || p[1] != '/')
                return -EINVAL;
        *ret_uid = (uint32_t) uid;
        *ret_path = p + 1;
        return 0;
}

int ng_parse_shm_file_line(char *line, struct ng_shm_file_line *ret)
{
        const char *p = line;
        uint64_t uid, size, allocated;

        if (!line || !is_digit(*p) || ng_parse_u64(&p, &uid) < 0 || uid > UINT32_MAX || *p != ' ' ||
            !is_digit(p[1]) || ng_parse_u64(&p, &size) < 0 || *p != ' ' ||
            !is_digit(p[1]) || ng_parse_u64(&p, &allocated) < 0 || *p != ' ' || p[1] != '/' ||
            size > INT64_MAX || allocated > INT64_MAX)   /* what stat(2) can say */
                return -EINVAL;
        char *path = line + (p + 1 - line);
        if (ng_text_unescape(path) < 0)
                return -EINVAL;
        *ret = (struct ng_shm_file_line) { .uid = (uint32_t) uid, .size_bytes = size, .allocated_bytes = allocated,
                                           .path = path };
        return 0;
}

int ng_parse_bracketed_choice(const char *buf, char *ret, size_t size)
{
        const char *open, *close;
        size_t len;

        if (!buf || !ret)
                return -EINVAL;
        open = strchr(buf, '[');
        if (!open)
                return -EINVAL;
        close = strchr(open + 1, ']');
        if (!close || close == open + 1)
                return -EINVAL;
        len = (size_t)(close - open - 1);
        if (memchr(open + 1, '\n', len))
                return -EINVAL;
        if (len >= size)
                return -ENOBUFS;
        memcpy(ret, open + 1, len);
        ret[len] = '\0';
        return 0;
}

static bool is_octal(char c)
{
        return c >= '0' && c <= '7';
}

void ng_unescape_octal(char *s)
{
        char *w = s;

        if (!s)
                return;
        for (const char *r = s; *r; ) {
                /* The kernel emits exactly three digits; "\000" is left
                 * alone so the string cannot be cut short. */
                if (r[0] == '\\' && is_octal(r[1]) && is_octal(r[2]) && is_octal(r[3]) && r[1] <= '3') {
                        char c = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));

                        if (c != '\0') {
                                *w++ = c;
                                r += 4;
                                continue;
                        }
                }
                *w++ = *r++;
        }
        *w = '\0';
}

/* ---- zoneinfo ---- */

static int zoneinfo_mark(const char *buf, int node, const char *mark, uint64_t *ret_pages)
{
        size_t ml = strlen(mark);
        uint64_t sum = 0;
        bool mine = false, any = false;
        if (!buf || !ret_pages)
                return -EINVAL;
        for (const char *p = buf; *p;) {
                const char *end = strchrnul(p, '\n');
                int id;
                if (!strncmp(p, "Node ", 5)) {
                        mine = sscanf(p, "Node %d, zone", &id) == 1 && id == node;
                } else if (mine) {
                        const char *q = p;
                        while (q < end && is_blank(*q))
                                q++;
                        /* "high     18" -- not the per-cpu "high:  0". */
                        if (end - q > (ptrdiff_t) ml && !strncmp(q, mark, ml) && is_blank(q[ml])) {
                                uint64_t v;
                                q += ml;
                                while (q < end && is_blank(*q))
                                        q++;
                                if (ng_parse_u64(&q, &v) >= 0 && (q == end || is_space(*q))) {
                                        if (__builtin_add_overflow(sum, v, &sum))
                                                return -ERANGE;
                                        any = true;
                                }
                        }
                }
                p = *end ? end + 1 : end;
        }
        if (!any)
                return -ENOENT;
        *ret_pages = sum;
        return 0;
}

int ng_parse_zoneinfo_high(const char *buf, int node, uint64_t *ret_pages)
{
        return zoneinfo_mark(buf, node, "high", ret_pages);
}

int ng_parse_zoneinfo_promo(const char *buf, int node, uint64_t *ret_pages)
{
        return zoneinfo_mark(buf, node, "promo", ret_pages);
}

/* ---- meminfo ---- */

/* "Node 0 " prefix of per-node meminfo. */
static const char *skip_node_prefix(const char *p)
{
        uint64_t node;
        const char *q;

        if (strncmp(p, "Node ", 5) != 0)
                return p;
        q = p + 5;
        if (ng_parse_u64(&q, &node) < 0 || !is_blank(*q))
                return p;
        while (is_blank(*q))
                q++;
        return q;
}

/* Parses one line into *f; false if it is malformed. */
static bool meminfo_line(const char *p, const char *end, struct ng_meminfo_field *f)
{
        const char *colon;
        size_t keylen;

        p = skip_node_prefix(p);
        colon = memchr(p, ':', (size_t)(end - p));
        if (!colon || colon == p)
                return false;
        keylen = (size_t)(colon - p);
        if (keylen >= NG_MEMINFO_KEY_MAX || memchr(p, ' ', keylen) || memchr(p, '\t', keylen))
                return false;
        memcpy(f->key, p, keylen);
        f->key[keylen] = '\0';
        p = colon + 1;
        if (ng_parse_u64(&p, &f->value) < 0 || p > end)
                return false;
        while (p < end && is_blank(*p))
                p++;
        f->kib = end - p >= 2 && p[0] == 'k' && p[1] == 'B';
        if (f->kib)
                p += 2;
        while (p < end && is_space(*p))
                p++;
        return p == end;
}

static bool meminfo_has(const struct ng_meminfo *m, const char *key)
{
        for (size_t i = 0; i < m->n; i++)
                if (strcmp(m->f[i].key, key) == 0)
                        return true;
        return false;
}

int ng_parse_meminfo(const char *buf, struct ng_meminfo *ret)
{
        struct ng_meminfo m = {};

        if (!buf || !ret)
                return -EINVAL;
        for (const char *p = buf; *p; ) {
                const char *end = strchrnul(p, '\n');
                struct ng_meminfo_field f = {};

                /* first one wins; fields past the cap are dropped, the
                 * kernel prints about 60 */
                if (meminfo_line(p, end, &f) && !meminfo_has(&m, f.key) &&
                    m.n < NG_MEMINFO_MAX_FIELDS)
                        m.f[m.n++] = f;
                p = *end ? end + 1 : end;
        }
        if (m.n == 0)
                return -EINVAL;
        *ret = m;
        return 0;
}

int ng_meminfo_get(const struct ng_meminfo *m, const char *key, uint64_t *ret)
{
        if (!m || !key)
                return -EINVAL;
        for (size_t i = 0; i < m->n && i < NG_MEMINFO_MAX_FIELDS; i++)
                if (strcmp(m->f[i].key, key) == 0) {
                        if (ret)
                                *ret = m->f[i].value;
                        return 0;
                }
        return -ENOENT;
}

uint64_t ng_meminfo_value(const struct ng_meminfo *m, const char *key)
{
        uint64_t v = 0;

        (void)ng_meminfo_get(m, key, &v);
        return v;
}

char *ng_parse_line_dup(const char **p)
{
        const char *s = *p, *e = strchrnul(s, '\n');
        *p = *e ? e + 1 : e;
        return (size_t) (e - s) > NG_PARSE_MAX_LINE ? strdup("") : strndup(s, (size_t) (e - s));
}

int ng_parse_lines(const char *buf, size_t item_size, ng_line_fn fn, void *userdata,
                   void (*free_items)(void *array, size_t n), void **ret, size_t *ret_n,
                   struct ng_parse_skipped *ret_skipped)
{
        char *arr = NULL;
        size_t n = 0, cap = 0, lineno = 0;
        struct ng_parse_skipped skipped = {};
        int r = 0;
        _cleanup_free_ void *item = malloc(item_size);

        if (!item)
                return -ENOMEM;
        for (const char *p = buf; *p && r >= 0;) {
                char *line = ng_parse_line_dup(&p);
                if (!line) {
                        r = -ENOMEM;
                        break;
                }
                lineno++;
                r = fn(line, item, userdata);
                free(line);
                if (r == -EINVAL) {
                        if (skipped.lines++ == 0)
                                skipped.first_line = lineno;
                        r = 0;
                }
                if (r <= 0)
                        continue;
                r = ng_grow(&arr, &cap, n, item_size, NG_PARSE_MAX_ENTRIES);
                if (r < 0) {
                        /* the item is kept-but-unstored: free it with the rest */
                        free_items(ng_steal_ptr(&item), 1);
                        break;
                }
                memcpy(arr + n++ * item_size, item, item_size);
        }
        if (r < 0) {
                free_items(arr, n);
                return r;
        }
        *ret = arr;
        *ret_n = n;
        if (ret_skipped)
                *ret_skipped = skipped;
        return 0;
}

/* ---- /proc/<pid>/limits ---- */

/* "unlimited" or a number, then a blank or the end. */
static int limit_value(const char **p, uint64_t *ret)
{
        while (is_blank(**p))
                (*p)++;
        if (!strncmp(*p, "unlimited", 9) && (is_space((*p)[9]) || !(*p)[9])) {
                *p += 9;
                *ret = UINT64_MAX;
                return 0;
        }
        if (ng_parse_u64(p, ret) < 0 || !(is_space(**p) || !**p))
                return -EINVAL;
        return 0;
}

int ng_parse_pid_limit(const char *buf, const char *name, uint64_t *ret_soft, uint64_t *ret_hard)
{
        size_t len = strlen(name);
        for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                /* The name, padded with blanks to its column; a name
                 * that goes on ("Max locked" of "Max locked memory") is
                 * another. */
                if (strncmp(p, name, len) || !is_blank(p[len]))
                        continue;
                const char *v = p + len;
                while (is_blank(*v))
                        v++;
                if (!is_digit(*v) && strncmp(v, "unlimited", 9))
                        continue;
                uint64_t soft, hard;
                if (limit_value(&v, &soft) < 0 || limit_value(&v, &hard) < 0)
                        return -EINVAL;
                *ret_soft = soft;
                *ret_hard = hard;
                return 0;
        }
        return -ENOENT;
}

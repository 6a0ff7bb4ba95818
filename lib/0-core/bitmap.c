/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fixed-size CPU/node bitmaps and the kernel's "0-3,8" list format. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-bitmap.h"

unsigned ng_bitmap_count(const struct ng_bitmap *b)
{
        unsigned n = 0;

        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                n += (unsigned)__builtin_popcountll(b->w[i]);
        return n;
}

bool ng_bitmap_empty(const struct ng_bitmap *b)
{
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                if (b->w[i])
                        return false;
        return true;
}

bool ng_bitmap_equal(const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

bool ng_bitmap_intersects(const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                if (a->w[i] & b->w[i])
                        return true;
        return false;
}

bool ng_bitmap_subset(const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                if (a->w[i] & ~b->w[i])
                        return false;
        return true;
}

void ng_bitmap_or(struct ng_bitmap *dst, const struct ng_bitmap *src)
{
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                dst->w[i] |= src->w[i];
}

void ng_bitmap_and(struct ng_bitmap *dst, const struct ng_bitmap *src)
{
        for (size_t i = 0; i < NG_BITMAP_WORDS; i++)
                dst->w[i] &= src->w[i];
}

int ng_bitmap_next(const struct ng_bitmap *b, int i)
{
        if (i < 0)
                i = 0;
        while (i < NG_BITMAP_BITS) {
                uint64_t word = b->w[i / 64] >> (i % 64);

                if (word)
                        return i + __builtin_ctzll(word);
                i = (i / 64 + 1) * 64;
        }
        return -1;
}

/* One id of a list: decimal digits only, below NG_BITMAP_BITS. Parsing stops
 * early so that a 40-digit id cannot overflow. */
static int parse_id(const char **s, unsigned *ret)
{
        const char *p = *s;
        unsigned v = 0;

        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                v = v * 10 + (unsigned)(*p - '0');
                if (v >= NG_BITMAP_BITS)
                        return -EINVAL;
        }
        *s = p;
        *ret = v;
        return 0;
}

/* "A:S" past a range: our stride form ("0-31:8" = 0,8,16,24). The kernel's
 * own "A-B:USED/GROUP" form (lib/bitmap.c bitmap_parselist) is read too. */
static int parse_group(const char **s, unsigned *ret_used, unsigned *ret_group)
{
        unsigned used, group;

        if (parse_id(s, &used) < 0 || used == 0)
                return -EINVAL;
        if (**s != '/') {
                *ret_used = 1;
                *ret_group = used;
                return 0;
        }
        (*s)++;
        if (parse_id(s, &group) < 0 || group == 0 || used > group)
                return -EINVAL;
        *ret_used = used;
        *ret_group = group;
        return 0;
}

/* "A", "A-B", "A-B:S" or "A-B:U/G". */
static int parse_range(const char **s, struct ng_bitmap *b)
{
        unsigned first, last, used = 1, group = 1;

        if (parse_id(s, &first) < 0)
                return -EINVAL;
        last = first;
        if (**s == '-') {
                (*s)++;
                if (parse_id(s, &last) < 0 || last < first)
                        return -EINVAL;
        }
        if (**s == ':') {
                (*s)++;
                if (parse_group(s, &used, &group) < 0)
                        return -EINVAL;
        }
        for (unsigned i = first; i <= last; i++)
                if ((i - first) % group < used)
                        ng_bitmap_set(b, i);
        return 0;
}

static bool is_trailing_space(const char *s)
{
        for (; *s; s++)
                if (*s != '\n' && *s != ' ' && *s != '\t')
                        return false;
        return true;
}

int ng_bitmap_parse_list(const char *s, struct ng_bitmap *ret)
{
        struct ng_bitmap b = {};

        if (!s || !ret)
                return -EINVAL;
        while (*s == ' ' || *s == '\t')
                s++;
        while (!is_trailing_space(s)) {
                if (parse_range(&s, &b) < 0)
                        return -EINVAL;
                if (*s == ',') {
                        s++;
                        /* "0-3," is not a list the kernel prints */
                        if (is_trailing_space(s))
                                return -EINVAL;
                } else if (!is_trailing_space(s)) {
                        return -EINVAL;
                }
        }
        *ret = b;
        return 0;
}

/* Appends like snprintf does, counting what would have been written. */
static void append(char *buf, size_t size, size_t *pos, const char *item)
{
        size_t len = strlen(item);

        if (*pos < size) {
                size_t room = size - *pos - 1;
                size_t k = len < room ? len : room;

                memcpy(buf + *pos, item, k);
                buf[*pos + k] = '\0';
        }
        *pos += len;
}

int ng_bitmap_format_list(const struct ng_bitmap *b, char *buf, size_t size)
{
        size_t pos = 0;
        int i = ng_bitmap_next(b, 0);

        if (!buf)
                size = 0;
        if (size)
                buf[0] = '\0';
        while (i >= 0) {
                char item[32];
                int last = i;

                while (last + 1 < NG_BITMAP_BITS && ng_bitmap_test(b, (unsigned)last + 1))
                        last++;
                if (last == i)
                        snprintf(item, sizeof(item), "%s%d", pos ? "," : "", i);
                else
                        snprintf(item, sizeof(item), "%s%d-%d", pos ? "," : "", i, last);
                append(buf, size, &pos, item);
                i = ng_bitmap_next(b, last + 1);
        }
        return (int)pos;
}

int ng_idset_from_bitmap(const struct ng_bitmap *b, struct ng_idset *ret)
{
        size_t n = NG_BITMAP_WORDS;

        while (n > 0 && !b->w[n - 1])
                n--;
        uint64_t *w = NULL;
        if (n && !(w = malloc(n * sizeof(*w))))
                return -ENOMEM;
        if (n)
                memcpy(w, b->w, n * sizeof(*w));
        *ret = (struct ng_idset) { .w = w, .n_words = n };
        return 0;
}

int ng_idset_copy(const struct ng_idset *src, struct ng_idset *ret)
{
        uint64_t *w = NULL;

        if (src->n_words && !(w = malloc(src->n_words * sizeof(*w))))
                return -ENOMEM;
        if (src->n_words)
                memcpy(w, src->w, src->n_words * sizeof(*w));
        *ret = (struct ng_idset) { .w = w, .n_words = src->n_words };
        return 0;
}

void ng_idset_done(struct ng_idset *s)
{
        if (!s)
                return;
        free(s->w);
        *s = (struct ng_idset) {0};
}

bool ng_idset_test(const struct ng_idset *s, unsigned i)
{
        return i / 64 < s->n_words && (s->w[i / 64] >> (i % 64)) & 1;
}

bool ng_idset_equal(const struct ng_idset *a, const struct ng_idset *b)
{
        return a->n_words == b->n_words && (!a->n_words || !memcmp(a->w, b->w, a->n_words * sizeof(*a->w)));
}

void ng_idset_to_bitmap(const struct ng_idset *s, struct ng_bitmap *ret)
{
        memset(ret, 0, sizeof(*ret));
        ng_bitmap_or_idset(ret, s);
}

void ng_bitmap_or_idset(struct ng_bitmap *dst, const struct ng_idset *src)
{
        for (size_t i = 0; i < src->n_words && i < NG_BITMAP_WORDS; i++)
                dst->w[i] |= src->w[i];
}

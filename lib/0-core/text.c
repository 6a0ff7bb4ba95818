/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Untrusted names made fit for JSON, Prometheus labels, terminals and
 * numaguard's own records (text.h); shared by report and the programs. */

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* RFC 3629, table 3-7 of the Unicode standard: the second byte's range
 * depends on the first, which rules out overlong forms, surrogates and code
 * points above U+10FFFF. */
size_t ng_utf8_char(const char *s, size_t len, uint32_t *ret_cp)
{
        const unsigned char *u = (const unsigned char *) s;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;
        uint32_t cp;
        if (len == 0)
                return 0;
        if (u[0] < 0x80) {
                *ret_cp = u[0];
                return 1;
        }
        if (u[0] >= 0xc2 && u[0] <= 0xdf) {
                n = 2;
                cp = u[0] & 0x1f;
        } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
                n = 3;
                cp = u[0] & 0x0f;
                lo = u[0] == 0xe0 ? 0xa0 : 0x80;
                hi = u[0] == 0xed ? 0x9f : 0xbf;
        } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
                n = 4;
                cp = u[0] & 0x07;
                lo = u[0] == 0xf0 ? 0x90 : 0x80;
                hi = u[0] == 0xf4 ? 0x8f : 0xbf;
        } else
                return 0;
        if (len < n || u[1] < lo || u[1] > hi)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if (i > 1 && (u[i] < 0x80 || u[i] > 0xbf))
                        return 0;
                cp = cp << 6 | (u[i] & 0x3f);
        }
        *ret_cp = cp;
        return n;
}

bool ng_utf8_valid(const char *s)
{
        size_t len = strlen(s);
        uint32_t cp;
        for (size_t i = 0, k; i < len; i += k)
                if (!(k = ng_utf8_char(s + i, len - i, &cp)))
                        return false;
        return true;
}

/* Where escaped text goes: buf of size bytes, or nowhere (buf NULL) when
 * only counting. A piece that does not fit ends the text there. */
struct out {
        char *buf;
        size_t size, n;
        bool full;
};

static void put(struct out *o, const char *piece, size_t len)
{
        if (o->full)
                return;
        if (o->buf && o->n + len >= o->size) {
                o->full = true;
                return;
        }
        if (o->buf)
                memcpy(o->buf + o->n, piece, len);
        o->n += len;
}

/* "\xNN" for a byte, "\uNNNN" for a character. */
static void put_escape(struct out *o, char kind, uint32_t v)
{
        char e[8];
        int k = snprintf(e, sizeof(e), kind == 'x' ? "\\x%02x" : "\\u%04x", (unsigned) v);
        put(o, e, (size_t) k);
}

#define REPLACEMENT "\xef\xbf\xbd"      /* U+FFFD */

/* Characters that move or reorder what follows them on a terminal: C1
 * controls (U+009B is a one-byte CSI to some terminals), the line and
 * paragraph separators, bidi marks, embeddings, overrides and isolates
 * (Unicode TR9): a name must not make the text after it read otherwise. */
static bool term_hidden(uint32_t cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static void escape_char(enum ng_text_mode mode, const char *s, size_t k, uint32_t cp, struct out *o)
{
        switch (mode) {
        case NG_TEXT_UTF8:
                break;
        case NG_TEXT_LABEL:
                if (cp == '\\' || cp == '"') {
                        put(o, cp == '\\' ? "\\\\" : "\\\"", 2);
                        return;
                }
                if (cp == '\n') {
                        put(o, "\\n", 2);
                        return;
                }
                break;
        case NG_TEXT_TERM:
                if (cp < 0x20 || cp == 0x7f) {
                        put_escape(o, 'x', cp);
                        return;
                }
                if (term_hidden(cp)) {
                        put_escape(o, 'u', cp);
                        return;
                }
                break;
        case NG_TEXT_RECORD:
                if (cp == '\\') {
                        put(o, "\\\\", 2);
                        return;
                }
                if (cp < 0x20 || cp == 0x7f) {
                        put_escape(o, 'x', cp);
                        return;
                }
                break;
        }
        put(o, s, k);
}

static size_t escape(enum ng_text_mode mode, const char *s, struct out *o)
{
        size_t len = strlen(s);
        for (size_t i = 0, k; i < len && !o->full; i += k) {
                uint32_t cp;
                k = ng_utf8_char(s + i, len - i, &cp);
                if (k) {
                        escape_char(mode, s + i, k, cp, o);
                        continue;
                }
                k = 1;
                if (mode == NG_TEXT_TERM || mode == NG_TEXT_RECORD)
                        put_escape(o, 'x', (unsigned char) s[i]);
                else
                        put(o, REPLACEMENT, 3);
        }
        return o->n;
}

char *ng_text_escape(enum ng_text_mode mode, const char *s, char *buf, size_t size)
{
        struct out o = { .buf = buf, .size = size };
        buf[escape(mode, s, &o)] = '\0';
        return buf;
}

char *ng_text_dup(enum ng_text_mode mode, const char *s)
{
        struct out count = {0};
        size_t size = escape(mode, s, &count) + 1;
        char *buf = malloc(size);
        return buf ? ng_text_escape(mode, s, buf, size) : NULL;
}

static int hex_digit(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
               c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int ng_text_unescape(char *s)
{
        char *o = s;
        for (const char *p = s; *p; p++) {
                if (*p != '\\') {
                        *o++ = *p;
                        continue;
                }
                if (p[1] == '\\') {
                        *o++ = '\\';
                        p++;
                        continue;
                }
                int hi = p[1] == 'x' ? hex_digit(p[2]) : -1, lo = hi >= 0 ? hex_digit(p[3]) : -1;
                if (lo < 0 || (hi | lo) == 0)
                        return -EINVAL;
                *o++ = (char) (hi << 4 | lo);
                p += 3;
        }
        *o = '\0';
        return 0;
}

struct json_object *ng_json_utf8(struct json_object *o)
{
        switch (json_object_get_type(o)) {
        case json_type_string:
                if (!ng_utf8_valid(json_object_get_string(o))) {
                        char *fixed = ng_text_dup(NG_TEXT_UTF8, json_object_get_string(o));
                        /* out of memory: no string rather than an invalid one */
                        json_object_set_string(o, fixed ? fixed : "");
                        free(fixed);
                }
                break;
        case json_type_object: {
                json_object_object_foreach(o, key, v) {
                        (void) key;
                        ng_json_utf8(v);
                }
                break;
        }
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        ng_json_utf8(json_object_array_get_idx(o, i));
                break;
        default:
                break;
        }
        return o;
}

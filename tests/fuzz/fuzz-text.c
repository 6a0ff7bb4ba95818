/* libFuzzer target for lib/0-core/text.c: whatever bytes a name holds, the
 * JSON form is UTF-8 and parses back to it, the Prometheus label value reads
 * back (as Prometheus unescapes it) to the same UTF-8, the terminal form has
 * no control or bidi character, the record form is one line of UTF-8 that
 * ng_text_unescape() gives back as the name (and any text it accepts comes
 * out no longer, without a NUL), and a short buffer holds a prefix of whole
 * escapes. The UTF-8 check here is written apart from the library's: it
 * decodes first and then rejects overlong forms, surrogates and code points
 * past U+10FFFF. The first input byte sizes the short buffer. */

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls fn on each code point of s; false when s is not UTF-8. */
static bool each_char(const char *s, bool (*fn)(uint32_t))
{
        static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
        const unsigned char *u = (const unsigned char *) s;
        while (*u) {
                size_t n = *u < 0x80 ? 1 : (*u >> 5) == 6 ? 2 : (*u >> 4) == 14 ? 3 : (*u >> 3) == 30 ? 4 : 0;
                if (!n)
                        return false;
                uint32_t cp = n == 1 ? *u : *u & (0x7f >> n);
                for (size_t i = 1; i < n; i++) {
                        if ((u[i] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (u[i] & 0x3f);
                }
                if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (fn && !fn(cp)))
                        return false;
                u += n;
        }
        return true;
}

static bool record_ok(uint32_t cp)
{
        return cp >= 0x20 && cp != 0x7f;
}

static bool term_ok(uint32_t cp)
{
        return cp >= 0x20 && !(cp >= 0x7f && cp <= 0x9f) && cp != 0x061c && cp != 0x200e && cp != 0x200f &&
               !(cp >= 0x2028 && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
}

/* What Prometheus reads from a label value: NULL when it would reject it. */
static char *unescape_label(const char *l)
{
        char *out = malloc(strlen(l) + 1), *o = out;
        if (!out)
                abort();
        for (; *l; l++) {
                if (*l == '"' || *l == '\n')
                        goto bad;
                if (*l != '\\') {
                        *o++ = *l;
                        continue;
                }
                l++;
                if (*l == 'n')
                        *o++ = '\n';
                else if (*l == '\\' || *l == '"')
                        *o++ = *l;
                else
                        goto bad;
        }
        *o = '\0';
        return out;
bad:
        free(out);
        return NULL;
}

static void check_cut(enum ng_text_mode mode, const char *s, const char *whole, size_t size)
{
        char *buf = malloc(size);
        if (!buf)
                abort();
        ng_text_escape(mode, s, buf, size);
        size_t n = strlen(buf);
        if (n >= size || strncmp(buf, whole, n) != 0)
                abort();
        if (!each_char(buf, mode == NG_TEXT_TERM ? term_ok : mode == NG_TEXT_RECORD ? record_ok : NULL))
                abort();
        free(buf);
}

static void check_json(const char *s, const char *utf8)
{
        struct json_object *o = json_object_new_array();
        json_object_array_add(o, json_object_new_string(s));
        const char *text = json_object_to_json_string_ext(ng_json_utf8(o), JSON_C_TO_STRING_PLAIN);
        if (!each_char(text, NULL))
                abort();
        struct json_object *back = json_tokener_parse(text);
        if (!back || strcmp(json_object_get_string(json_object_array_get_idx(back, 0)), utf8) != 0)
                abort();
        json_object_put(back);
        json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        size_t cut = data[0] % 64 + 1;
        char *s = malloc(size);
        if (!s)
                return 0;
        memcpy(s, data + 1, size - 1);
        s[size - 1] = '\0';

        char *utf8 = ng_text_dup(NG_TEXT_UTF8, s), *label = ng_text_dup(NG_TEXT_LABEL, s),
             *term = ng_text_dup(NG_TEXT_TERM, s), *record = ng_text_dup(NG_TEXT_RECORD, s),
             *back = record ? strdup(record) : NULL, *raw = strdup(s);
        if (!utf8 || !label || !term || !back || !raw)
                abort();
        if (!each_char(record, record_ok) || ng_text_unescape(back) != 0 || strcmp(back, s) != 0)
                abort();
        /* whatever a tree's record holds: decoded no longer, or refused */
        size_t raw_len = strlen(raw);
        if (ng_text_unescape(raw) == 0 && strlen(raw) > raw_len)
                abort();
        if (!each_char(utf8, NULL) || (each_char(s, NULL) && strcmp(utf8, s) != 0))
                abort();
        if (ng_utf8_valid(s) != each_char(s, NULL))
                abort();
        char *read = unescape_label(label);
        if (!read || strcmp(read, utf8) != 0)
                abort();
        if (!each_char(term, term_ok) || strlen(term) > 4 * strlen(s))
                abort();
        check_cut(NG_TEXT_UTF8, s, utf8, cut);
        check_cut(NG_TEXT_LABEL, s, label, cut);
        check_cut(NG_TEXT_TERM, s, term, cut);
        check_cut(NG_TEXT_RECORD, s, record, cut);
        check_json(s, utf8);
        free(read);
        free(utf8);
        free(label);
        free(term);
        free(record);
        free(back);
        free(raw);
        free(s);
        return 0;
}

/* Unit tests for lib/0-core/text.c: names others choose (invalid UTF-8,
 * overlong forms, surrogates, escape sequences, C1 controls, bidi
 * overrides, quotes, backslashes, newlines) made fit for JSON, Prometheus
 * labels, terminals and numaguard's own records (and back from those);
 * and the audit's renderers fed such names. */

#include <json-c/json.h>

#include "ng-audit.h"
#include "ng-report.h"
#include "ng-segments.h"
#include "text.h"
#include "snapshot-builder.h"
#include "util.h"

/* What a process may call itself: Oracle's pmon with a hostile SID. */
#define HOSTILE "oracle:N\xff\x1b[31mZ\"\\\n\xc2\x9b\xe2\x80\xae"

static const char *esc(enum ng_text_mode mode, const char *s)
{
        static char buf[1024];
        return ng_text_escape(mode, s, buf, sizeof(buf));
}

/* No C0 control but the newline, no DEL. */
static bool no_c0(const char *s)
{
        for (const unsigned char *u = (const unsigned char *) s; *u; u++)
                if ((*u < 0x20 && *u != '\n') || *u == 0x7f)
                        return false;
        return true;
}

/* Nor C1 controls or bidi overrides: what may reach a terminal. */
static bool terminal_safe(const char *s)
{
        if (!no_c0(s))
                return false;
        for (const unsigned char *u = (const unsigned char *) s; *u; u++)
                if ((u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) ||
                    (u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae))
                        return false;
        return true;
}

START_TEST(test_utf8_char)
{
        static const struct {
                const char *s;
                size_t len;
                uint32_t cp;
        } cases[] = {
                { "A", 1, 'A' },
                { "\xc3\xa9", 2, 0xe9 },
                { "\xe2\x82\xac", 3, 0x20ac },
                { "\xed\x9f\xbf", 3, 0xd7ff },          /* last before the surrogates */
                { "\xee\x80\x80", 3, 0xe000 },          /* first after them */
                { "\xf0\x9f\x98\x80", 4, 0x1f600 },
                { "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
                { "\xc0\x80", 0, 0 },                   /* overlong NUL */
                { "\xc1\xbf", 0, 0 },                   /* overlong 0x7f */
                { "\xe0\x80\xaf", 0, 0 },               /* overlong '/' */
                { "\xe0\x9f\xbf", 0, 0 },               /* overlong 0x7ff */
                { "\xf0\x8f\xbf\xbf", 0, 0 },           /* overlong 0xffff */
                { "\xed\xa0\x80", 0, 0 },               /* surrogate D800 */
                { "\xed\xbf\xbf", 0, 0 },               /* surrogate DFFF */
                { "\xf4\x90\x80\x80", 0, 0 },           /* above U+10FFFF */
                { "\xf5\x80\x80\x80", 0, 0 },
                { "\xff", 0, 0 },
                { "\x80", 0, 0 },                       /* lone continuation */
                { "\xe2\x82", 0, 0 },                   /* cut short */
                { "\xe2\x28\xa1", 0, 0 },               /* bad continuation */
                { "\xf0\x9f\x98\x28", 0, 0 },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint32_t cp = 0;
                size_t k = ng_utf8_char(cases[i].s, strlen(cases[i].s), &cp);
                ck_assert_msg(k == cases[i].len, "case %zu: length %zu, want %zu", i, k, cases[i].len);
                if (k)
                        ck_assert_uint_eq(cp, cases[i].cp);
        }
        ck_assert(ng_utf8_valid("Zürich €"));
        ck_assert(!ng_utf8_valid("ora_pmon_\xff"));
        ck_assert(!ng_utf8_valid("\xed\xa0\x80"));
}
END_TEST

START_TEST(test_utf8_mode)
{
        ck_assert_str_eq(esc(NG_TEXT_UTF8, "ora_pmon_\xff"), "ora_pmon_\xef\xbf\xbd");
        /* each byte of an invalid sequence is one replacement */
        ck_assert_str_eq(esc(NG_TEXT_UTF8, "\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        ck_assert_str_eq(esc(NG_TEXT_UTF8, "\xc0\xaf!"), "\xef\xbf\xbd\xef\xbf\xbd!");
        ck_assert_str_eq(esc(NG_TEXT_UTF8, "\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
        /* valid text, controls included (json-c escapes those), unchanged */
        ck_assert_str_eq(esc(NG_TEXT_UTF8, "Zürich \x1b[31m\"\\\n"), "Zürich \x1b[31m\"\\\n");
        ck_assert(ng_utf8_valid(esc(NG_TEXT_UTF8, HOSTILE)));
}
END_TEST

START_TEST(test_label_mode)
{
        ck_assert_str_eq(esc(NG_TEXT_LABEL, "a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        ck_assert_str_eq(esc(NG_TEXT_LABEL, "oracle:N\xff"), "oracle:N\xef\xbf\xbd");
        ck_assert_str_eq(esc(NG_TEXT_LABEL, "oracle:ORCL"), "oracle:ORCL");
        const char *l = esc(NG_TEXT_LABEL, HOSTILE);
        ck_assert(ng_utf8_valid(l));
        ck_assert_ptr_null(strchr(l, '\n'));
        /* every quote is escaped: the value cannot end early */
        for (const char *q = strchr(l, '"'); q; q = strchr(q + 1, '"'))
                ck_assert(q > l && q[-1] == '\\');
}
END_TEST

START_TEST(test_term_mode)
{
        ck_assert_str_eq(esc(NG_TEXT_TERM, "ora_pmon_\x1b[31mZ"), "ora_pmon_\\x1b[31mZ");
        ck_assert_str_eq(esc(NG_TEXT_TERM, "ora_pmon_\xff"), "ora_pmon_\\xff");
        ck_assert_str_eq(esc(NG_TEXT_TERM, "a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
        ck_assert_str_eq(esc(NG_TEXT_TERM, "\xc2\x9b" "31m"), "\\u009b31m");     /* C1 CSI */
        ck_assert_str_eq(esc(NG_TEXT_TERM, "x\xe2\x80\xaegnp.exe"), "x\\u202egnp.exe");
        ck_assert_str_eq(esc(NG_TEXT_TERM, "\xe2\x81\xa6\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8"),
                         "\\u2066\\u200f\\u061c\\u2028");
        ck_assert_str_eq(esc(NG_TEXT_TERM, "\xed\xa0\x80"), "\\xed\\xa0\\x80");
        ck_assert_str_eq(esc(NG_TEXT_TERM, "\xc0\x80"), "\\xc0\\x80");
        /* an ordinary name looks the same: UTF-8, quotes, a systemd unit's \x2d */
        ck_assert_str_eq(esc(NG_TEXT_TERM, "Zürich \"q\" dev-disk-by\\x2duuid.swap"),
                         "Zürich \"q\" dev-disk-by\\x2duuid.swap");
        const char *t = esc(NG_TEXT_TERM, HOSTILE);
        ck_assert(ng_utf8_valid(t));
        ck_assert(terminal_safe(t));
        ck_assert_ptr_null(strchr(t, '\n'));
}
END_TEST

/* A snapshot's records: one line a name, any bytes but NUL, given back. */
START_TEST(test_record_mode)
{
        ck_assert_str_eq(esc(NG_TEXT_RECORD, "/dev/shm/new\nline"), "/dev/shm/new\\x0aline");
        ck_assert_str_eq(esc(NG_TEXT_RECORD, "a\\x0a\tb\x7f"), "a\\\\x0a\\x09b\\x7f");
        ck_assert_str_eq(esc(NG_TEXT_RECORD, "bad\xff\xfe caf\xc3\xa9"), "bad\\xff\\xfe caf\xc3\xa9");
        /* an ordinary name is as it is, C1 and bidi characters too: no terminal reads it */
        ck_assert_str_eq(esc(NG_TEXT_RECORD, "PostgreSQL.1804289383"), "PostgreSQL.1804289383");
        ck_assert_str_eq(esc(NG_TEXT_RECORD, "x\xe2\x80\xae\xc2\x9b"), "x\xe2\x80\xae\xc2\x9b");
        static const char *const names[] = { HOSTILE, "\\", "\\x41", "a\\", "\x01\x1f\x80\xc0\x80", "\xe9t\xe9" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char *e = ng_text_dup(NG_TEXT_RECORD, names[i]);
                ck_assert_ptr_nonnull(e);
                ck_assert_ptr_null(strchr(e, '\n'));
                ck_assert(no_c0(e) && ng_utf8_valid(e));
                ck_assert_int_eq(ng_text_unescape(e), 0);
                ck_assert_str_eq(e, names[i]);
                free(e);
        }
        /* what no record holds */
        static const char *const bad[] = { "a\\", "\\n", "\\x", "\\x4", "\\xg0", "\\x00", "\\u0041" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char buf[16];
                snprintf(buf, sizeof(buf), "%s", bad[i]);
                ck_assert_msg(ng_text_unescape(buf) == -EINVAL, "%s decoded", bad[i]);
        }
        char upper[] = "\\xC3\\xA9";
        ck_assert_int_eq(ng_text_unescape(upper), 0);
        ck_assert_str_eq(upper, "\xc3\xa9");
}
END_TEST

START_TEST(test_cut_and_dup)
{
        char b[6];
        /* "\x1b" needs 4 bytes: it goes whole or not at all */
        ck_assert_str_eq(ng_text_escape(NG_TEXT_TERM, "ab\x1b" "c", b, sizeof(b)), "ab");
        ck_assert_str_eq(ng_text_escape(NG_TEXT_TERM, "abc\xe2\x82\xac", b, sizeof(b)), "abc");
        ck_assert_str_eq(ng_text_escape(NG_TEXT_UTF8, "abcd\xff", b, sizeof(b)), "abcd");
        ck_assert_str_eq(ng_text_escape(NG_TEXT_LABEL, "abcd\"", b, sizeof(b)), "abcd");
        ck_assert_str_eq(ng_text_escape(NG_TEXT_TERM, "x", b, 1), "");
        /* NG_TEXT_SIZE always holds the whole escape */
        char big[NG_TEXT_SIZE(4)];
        ck_assert_str_eq(ng_text_escape(NG_TEXT_TERM, "\xff\xfe\x1b\x01", big, sizeof(big)), "\\xff\\xfe\\x1b\\x01");
        for (int m = NG_TEXT_UTF8; m <= NG_TEXT_TERM; m++) {
                char *d = ng_text_dup((enum ng_text_mode) m, HOSTILE);
                ck_assert_ptr_nonnull(d);
                ck_assert_str_eq(d, esc((enum ng_text_mode) m, HOSTILE));
                free(d);
        }
}
END_TEST

START_TEST(test_json_tree)
{
        struct json_object *o = json_object_new_object(), *a = json_object_new_array();
        json_object_object_add(o, "name", json_object_new_string("oracle:\xff"));
        json_object_object_add(o, "ok", json_object_new_string("Zürich"));
        json_object_array_add(a, json_object_new_string("/dev/shm/\xc0\xaf\x1b[2J"));
        json_object_array_add(a, json_object_new_int(7));
        json_object_array_add(a, NULL);
        json_object_object_add(o, "names", a);
        ck_assert_ptr_eq(ng_json_utf8(o), o);
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        ck_assert(ng_utf8_valid(text));
        ck_assert(no_c0(text));
        ck_assert_str_eq(text, "{\"name\":\"oracle:\xef\xbf\xbd\",\"ok\":\"Zürich\",\"names\":"
                               "[\"/dev/shm/\xef\xbf\xbd\xef\xbf\xbd\\u001b[2J\",7,null]}");
        json_object_put(o);
        ck_assert_ptr_null(ng_json_utf8(NULL));
}
END_TEST

/* The audit's renderers with a hostile instance, segment and finding. */
START_TEST(test_audit_renderers)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 1024 * 1024);
        struct ng_node_bytes nb[1] = { { 0, 1u << 20 } };
        struct ng_segment seg[1] = {
                { .kind = NG_SEG_FILE, .name = "/dev/shm/ng\xfe\x1b]0;owned\x07", .bytes = 1u << 20 },
        };
        size_t segs[1] = { 0 };
        struct ng_instance in[1] = { { .name = HOSTILE, .type = "oracle", .origin = NG_INST_DISCOVERED, .nodes = nb,
                                       .n_nodes = 1, .segs = segs, .n_segs = 1, .cgroup = "/user\x1b[8m" } };
        struct ng_finding f[1] = { { .code = NG_CODE_CYCLOPS, .severity = NG_SEV_WARNING, .instance = HOSTILE,
                                     .segment = "/dev/shm/ng\xfe\x1b]0;owned\x07",
                                     .message = "all of " HOSTILE " on node 0", .advice = "bind \xff" } };
        struct ng_audit a = { .instances = in, .n_instances = 1, .segments = seg, .n_segments = 1, .findings = f,
                              .n_findings = 1 };
        char *t = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&t, &len);
        ck_assert_int_eq(ng_report_audit_text_flags(s, &a, NG_REPORT_VERBOSE, m), 0);
        fclose(m);
        ck_assert(ng_utf8_valid(t));
        ck_assert(terminal_safe(t));
        ck_assert_ptr_nonnull(strstr(t, "instance oracle:N\\xff\\x1b[31mZ\"\\\\x0a\\u009b\\u202e (oracle"));
        ck_assert_ptr_nonnull(strstr(t, "file /dev/shm/ng\\xfe\\x1b]0;owned\\x07: 1 MiB, placement none\n"));
        ck_assert_ptr_nonnull(strstr(t, "cpuset /user\\x1b[8m\n"));
        ck_assert_ptr_nonnull(strstr(t, "-> bind \\xff\n"));
        free(t);

        struct json_object *j = ng_report_audit_json(s, &a);
        const char *js = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        ck_assert(ng_utf8_valid(js));
        ck_assert(no_c0(js));
        struct json_object *back = json_tokener_parse(js), *insts, *name;
        ck_assert_ptr_nonnull(back);
        ck_assert(json_object_object_get_ex(back, "instances", &insts));
        ck_assert(json_object_object_get_ex(json_object_array_get_idx(insts, 0), "name", &name));
        ck_assert_str_eq(json_object_get_string(name),
                         "oracle:N\xef\xbf\xbd\x1b[31mZ\"\\\n\xc2\x9b\xe2\x80\xae");
        json_object_put(back);
        json_object_put(j);

        t = NULL;
        m = open_memstream(&t, &len);
        ck_assert_int_eq(ng_report_segments_text(s, seg, 1, m), 0);
        fclose(m);
        ck_assert(terminal_safe(t) && ng_utf8_valid(t));
        free(t);
        j = ng_report_segments_json(s, seg, 1);
        ck_assert(ng_utf8_valid(json_object_to_json_string(j)));
        json_object_put(j);
        ng_snapshot_free(s);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("text");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_utf8_char);
        tcase_add_test(tc, test_utf8_mode);
        tcase_add_test(tc, test_label_mode);
        tcase_add_test(tc, test_term_mode);
        tcase_add_test(tc, test_record_mode);
        tcase_add_test(tc, test_cut_and_dup);
        tcase_add_test(tc, test_json_tree);
        tcase_add_test(tc, test_audit_renderers);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(suite());
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Untrusted text made fit for each output. Any user names a process (argv[0],
 * prctl(PR_SET_NAME)), a file in /dev/shm or hugetlbfs, a delegated cgroup or
 * a user unit, and numaguard shows those names: instance names ("oracle:" and
 * the SID) and finding messages carry them too. Such a name is any bytes but
 * NUL: not necessarily UTF-8, with newlines, quotes or terminal escape
 * sequences. Renderers escape at render time, each for its own output; the
 * names themselves stay as the kernel gave them (a NUMAGUARD_INSTANCE=
 * journal field keeps its bytes).
 *
 *   NG_TEXT_UTF8   JSON strings: each byte that does not begin or continue a
 *                  valid UTF-8 sequence becomes U+FFFD (json-c escapes the
 *                  control characters itself but copies bytes >= 0x80 as they
 *                  are). Strict UTF-8: no overlong forms, no surrogates,
 *                  nothing above U+10FFFF.
 *   NG_TEXT_LABEL  a Prometheus label value, between its quotes: backslash,
 *                  double quote and line feed escaped as the exposition format
 *                  says, and invalid bytes as U+FFFD (a label value must be
 *                  UTF-8, or node_exporter drops the whole file).
 *   NG_TEXT_TERM   a terminal or a log line: an invalid byte, a C0 control
 *                  (ESC, newline, tab...) or DEL is shown as \xNN; a C1
 *                  control, a line or paragraph separator or a character that
 *                  reorders text (bidi marks, embeddings, overrides,
 *                  isolates) as \uNNNN. Everything else, backslashes
 *                  included, as it is: an ordinary name looks the same.
 *   NG_TEXT_RECORD one line of numaguard's own records (what a snapshot
 *                  keeps of each /dev/shm file): a backslash as \\, an
 *                  invalid byte, a C0 control or DEL as \xNN, everything
 *                  else as it is. ng_text_unescape() gives the bytes back.
 *
 * Internal to the library: not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#ifdef __cplusplus
extern "C" {
#endif

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

enum ng_text_mode {
        NG_TEXT_UTF8,
        NG_TEXT_LABEL,
        NG_TEXT_TERM,
        NG_TEXT_RECORD,
};

/* Room for the escaped form of a text of n bytes (NUL included), in any
 * mode: one byte becomes at most 4 ("\xff"). */
#define NG_TEXT_SIZE(n) (4 * (size_t) (n) + 1)

/* Length (1-4) of the valid UTF-8 sequence that starts s (at most len
 * bytes), its code point in *ret_cp; 0 when s does not start one. */
size_t ng_utf8_char(const char *s, size_t len, uint32_t *ret_cp);
bool ng_utf8_valid(const char *s);

/* Escapes s for mode into buf (size > 0): always NUL-terminated, cut only
 * between whole escapes or characters when buf is too small. Returns buf. */
char *ng_text_escape(enum ng_text_mode mode, const char *s, char *buf, size_t size);
/* The same, allocated to fit; NULL when out of memory. */
char *ng_text_dup(enum ng_text_mode mode, const char *s);

/* Reverses NG_TEXT_RECORD in place: 0, or -EINVAL for a backslash that
 * begins no escape it makes, or an escape of NUL (s then undefined). */
int ng_text_unescape(char *s);

/* Makes every string value of a JSON tree valid UTF-8 (NG_TEXT_UTF8), in
 * place; returns o. Keys are left alone: numaguard's are its own words. */
struct json_object *ng_json_utf8(struct json_object *o);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

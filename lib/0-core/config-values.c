/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* numaguard.conf's numeric values: one parser and one formatter per kind
 * (duration, size, free floor, count, fraction, yes/no), with the range
 * checks the table asks for; the named and text values are in
 * config-names.c. */

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config-internal.h"

/* ---- value parsers ---------------------------------------------------- */

/* Parses leading decimal digits; no sign, no blanks, no base prefixes. */
int ng_cfg_parse_digits(const char *s, uint64_t *ret, const char **ret_end)
{
        char *end;
        unsigned long long v;

        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -EINVAL;
        *ret = v;
        *ret_end = end;
        return 0;
}

static int size_shift(const char *suffix, unsigned *ret)
{
        static const char units[] = "KMGTPE";
        const char *u = *suffix ? strchr(units, toupper((unsigned char)*suffix)) : NULL;
        const char *rest = suffix;

        *ret = 0;
        if (u) {
                *ret = 10 * (unsigned)(u - units + 1);
                rest++;
                if (strcasecmp(rest, "iB") == 0)
                        return 0;
        }
        return *rest == '\0' || strcasecmp(rest, "B") == 0 ? 0 : -EINVAL;
}

int ng_parse_size_bytes(const char *s, uint64_t *ret)
{
        uint64_t n;
        const char *end;
        unsigned shift;

        if (!s || ng_cfg_parse_digits(s, &n, &end) < 0)
                return -EINVAL;
        while (*end == ' ' || *end == '\t')
                end++;
        if (size_shift(end, &shift) < 0)
                return -EINVAL;
        if (shift && n > (UINT64_MAX >> shift))
                return -EINVAL;
        *ret = n << shift;
        return 0;
}

static const struct {
        const char *suffix;
        uint64_t usec;
} duration_units[] = {
        /* Largest first: the formatter picks the first that divides evenly. */
        { "d", USEC_PER_DAY },   { "h", USEC_PER_HOUR }, { "m", USEC_PER_MIN },
        { "min", USEC_PER_MIN }, { "s", USEC_PER_SEC },  { "sec", USEC_PER_SEC },
        { "ms", USEC_PER_MSEC }, { "us", 1 },            { "", USEC_PER_SEC },
};

int ng_parse_duration_usec(const char *s, uint64_t *ret)
{
        uint64_t n;
        const char *end;

        if (!s || ng_cfg_parse_digits(s, &n, &end) < 0)
                return -EINVAL;
        while (*end == ' ' || *end == '\t')
                end++;
        for (size_t i = 0; i < ELEMENTSOF(duration_units); i++) {
                uint64_t mult = duration_units[i].usec;

                if (strcmp(end, duration_units[i].suffix) != 0)
                        continue;
                if (n > UINT64_MAX / mult)
                        return -EINVAL;
                *ret = n * mult;
                return 0;
        }
        return -EINVAL;
}

static void format_duration(uint64_t usec, char *buf, size_t size)
{
        for (size_t i = 0; usec && i < ELEMENTSOF(duration_units); i++)
                if (usec % duration_units[i].usec == 0) {
                        snprintf(buf, size, "%" PRIu64 "%s", usec / duration_units[i].usec,
                                 duration_units[i].suffix);
                        return;
                }
        snprintf(buf, size, "0");
}

static void format_size(uint64_t bytes, char *buf, size_t size)
{
        static const char units[] = "EPTGMK";
        unsigned shift = 60;

        for (const char *u = units; *u && bytes; u++, shift -= 10)
                if (bytes % (UINT64_C(1) << shift) == 0) {
                        snprintf(buf, size, "%" PRIu64 "%c", bytes >> shift, *u);
                        return;
                }
        snprintf(buf, size, "%" PRIu64, bytes);
}

int ng_cfg_check_u64_range(const struct item *it, uint64_t v,
                           void (*fmt)(uint64_t, char *, size_t), char *why, size_t whylen)
{
        char lo[32], hi[32];

        if (v >= (uint64_t)it->min && v <= (uint64_t)it->max)
                return 0;
        fmt((uint64_t)it->min, lo, sizeof(lo));
        fmt((uint64_t)it->max, hi, sizeof(hi));
        snprintf(why, whylen, "out of range, must be between %s and %s", lo, hi);
        return -EINVAL;
}

int ng_cfg_parse_duration(const struct item *it, const char *value, void *field, char *why,
                          size_t whylen)
{
        uint64_t v;

        if (ng_parse_duration_usec(value, &v) < 0) {
                snprintf(why, whylen, "not a duration (\"30\" seconds, or 500ms, 10s, 1m, 1h)");
                return -EINVAL;
        }
        if (ng_cfg_check_u64_range(it, v, format_duration, why, whylen) < 0)
                return -EINVAL;
        *(uint64_t *)field = v;
        return 0;
}

bool ng_cfg_fmt_duration(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        format_duration(*(const uint64_t *)field, buf, size);
        return true;
}

int ng_cfg_parse_size(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        uint64_t v;

        if (ng_parse_size_bytes(value, &v) < 0) {
                snprintf(why, whylen, "not a size (bytes, or with a K, M, G, T suffix)");
                return -EINVAL;
        }
        if (ng_cfg_check_u64_range(it, v, format_size, why, whylen) < 0)
                return -EINVAL;
        *(uint64_t *)field = v;
        return 0;
}

bool ng_cfg_fmt_size(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        format_size(*(const uint64_t *)field, buf, size);
        return true;
}

/* A size, or "auto" (NG_FREE_FLOOR_AUTO). */
int ng_cfg_parse_floor(const struct item *it, const char *value, void *field, char *why, size_t whylen)
{
        if (!strcmp(value, "auto")) {
                *(uint64_t *)field = NG_FREE_FLOOR_AUTO;
                return 0;
        }
        int r = ng_cfg_parse_size(it, value, field, why, whylen);
        if (r == -EINVAL && !strncmp(why, "not a size", 10))
                snprintf(why, whylen, "not a size (bytes, or with a K, M, G, T suffix) nor auto");
        return r;
}

bool ng_cfg_fmt_floor(const struct item *it, const void *field, char *buf, size_t size)
{
        if (*(const uint64_t *)field == NG_FREE_FLOOR_AUTO) {
                snprintf(buf, size, "auto");
                return true;
        }
        return ng_cfg_fmt_size(it, field, buf, size);
}

void ng_cfg_format_plain(uint64_t v, char *buf, size_t size)
{
        snprintf(buf, size, "%" PRIu64, v);
}

int ng_cfg_parse_uint(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        uint64_t v;
        const char *end;

        if (ng_cfg_parse_digits(value, &v, &end) < 0 || *end) {
                snprintf(why, whylen, "not a non-negative integer");
                return -EINVAL;
        }
        if (ng_cfg_check_u64_range(it, v, ng_cfg_format_plain, why, whylen) < 0)
                return -EINVAL;
        *(unsigned *)field = (unsigned)v;
        return 0;
}

bool ng_cfg_fmt_uint(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        snprintf(buf, size, "%u", *(const unsigned *)field);
        return true;
}

/* Fractions are parsed and printed by hand: strtod() and printf("%g") follow
 * LC_NUMERIC, and a caller that called setlocale() would read "0,9". Six
 * decimals at most, so that dump and load round-trip exactly. */
#define FRACTION_DIGITS 6
#define FRACTION_SCALE 1000000

static int parse_micro_units(const char *s, uint64_t *ret)
{
        uint64_t ip, fp = 0;
        const char *end;
        unsigned digits = 0;

        if (ng_cfg_parse_digits(s, &ip, &end) < 0 || ip > 1000000)
                return -EINVAL;
        if (*end == '.') {
                for (end++; isdigit((unsigned char)*end); end++, digits++) {
                        if (digits == FRACTION_DIGITS)
                                return -EINVAL;
                        fp = fp * 10 + (uint64_t)(*end - '0');
                }
                if (digits == 0)
                        return -EINVAL;
        }
        if (*end)
                return -EINVAL;
        for (; digits < FRACTION_DIGITS; digits++)
                fp *= 10;
        *ret = ip * FRACTION_SCALE + fp;
        return 0;
}

static void format_fraction(double v, char *buf, size_t size)
{
        uint64_t micro = (uint64_t)(v * FRACTION_SCALE + 0.5);
        char frac[FRACTION_DIGITS + 2];
        size_t n;

        snprintf(frac, sizeof(frac), ".%06" PRIu64, micro % FRACTION_SCALE);
        for (n = strlen(frac); n > 2 && frac[n - 1] == '0'; n--)
                frac[n - 1] = '\0';
        snprintf(buf, size, "%" PRIu64 "%s", micro / FRACTION_SCALE, frac);
}

int ng_cfg_parse_fraction(const struct item *it, const char *value, void *field, char *why,
                          size_t whylen)
{
        uint64_t micro;
        double v;
        char lo[32], hi[32];

        if (parse_micro_units(value, &micro) < 0) {
                snprintf(why, whylen, "not a decimal number with at most %d decimals",
                         FRACTION_DIGITS);
                return -EINVAL;
        }
        v = (double)micro / FRACTION_SCALE;
        if (v < it->min || v > it->max) {
                format_fraction(it->min, lo, sizeof(lo));
                format_fraction(it->max, hi, sizeof(hi));
                snprintf(why, whylen, "out of range, must be between %s and %s", lo, hi);
                return -EINVAL;
        }
        *(double *)field = v;
        return 0;
}

bool ng_cfg_fmt_fraction(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        format_fraction(*(const double *)field, buf, size);
        return true;
}

int ng_cfg_parse_bool(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        (void)it;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
                        *(bool *)field = strcasecmp(value, yes[i]) == 0;
                        return 0;
                }
        snprintf(why, whylen, "not a boolean (yes or no)");
        return -EINVAL;
}

bool ng_cfg_fmt_bool(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        snprintf(buf, size, "%s", *(const bool *)field ? "yes" : "no");
        return true;
}

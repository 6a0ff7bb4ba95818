/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * numaguard.conf loader: one table drives parsing, defaults, range checks and
 * the dump. inih splits lines into key/value pairs; a line reader of ours
 * feeds it, because inih as packaged (Debian libinih1 r55) does not pass line
 * numbers to the handler, never reports sections that have no keys, truncates
 * section names to 49 characters, and treats indented lines as continuations
 * of the previous value. The reader counts lines, recognises section headers
 * itself and rejects indented lines, so none of that reaches the config.
 */

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

#include "ng-config.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MIN (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MIN)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)
#define PIB (UINT64_C(1) << 50)

/* Larger files are not configs; keeps a mistaken path from eating memory. */
#define CONFIG_MAX_BYTES (1024 * 1024)

/* Kernel MAX_NUMNODES is at most 1 << CONFIG_NODES_SHIFT (10) on any arch. */
#define NODE_ID_MAX 1023

/* sizeof(sockaddr_un.sun_path) minus the NUL. */
#define SOCKET_PATH_MAX 107

/* The kernel keeps TASK_COMM_LEN - 1 = 15 characters of a command name. */
#define COMM_MAX 15

enum section_kind {
        SEC_NONE,    /* before the first header */
        SEC_GLOBAL,
        SEC_INSTANCE,
        SEC_SKIP,    /* unknown or broken header: its keys are ignored */
};

struct item;

/* Returns 0, 1 (accepted, with a warning in why), -EINVAL (reason in why)
 * or -ENOMEM. */
typedef int (*parse_fn)(const struct item *it, const char *value, void *field, char *why,
                        size_t whylen);
/* Returns false when the field is unset (then it is not dumped). */
typedef bool (*format_fn)(const struct item *it, const void *field, char *buf, size_t size);

enum {
        ITEM_MATCHER = 1u << 0, /* selects processes/segments of an instance */
};

struct item {
        enum section_kind section;
        const char *key;
        parse_fn parse;
        format_fn format;
        size_t offset;
        double min, max; /* numbers: value range; strings: length range */
        const char *def; /* parsed at init; NULL = unset */
        const char *const *names; /* choices (index = value) or flag bits */
        unsigned flags;
};

/* ---- value parsers ---------------------------------------------------- */

/* Parses leading decimal digits; no sign, no blanks, no base prefixes. */
static int parse_digits(const char *s, uint64_t *ret, const char **ret_end)
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

        if (!s || parse_digits(s, &n, &end) < 0)
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

        if (!s || parse_digits(s, &n, &end) < 0)
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

static int check_u64_range(const struct item *it, uint64_t v,
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

static int parse_duration(const struct item *it, const char *value, void *field, char *why,
                          size_t whylen)
{
        uint64_t v;

        if (ng_parse_duration_usec(value, &v) < 0) {
                snprintf(why, whylen, "not a duration (\"30\" seconds, or 500ms, 10s, 1m, 1h)");
                return -EINVAL;
        }
        if (check_u64_range(it, v, format_duration, why, whylen) < 0)
                return -EINVAL;
        *(uint64_t *)field = v;
        return 0;
}

static bool fmt_duration(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        format_duration(*(const uint64_t *)field, buf, size);
        return true;
}

static int parse_size(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        uint64_t v;

        if (ng_parse_size_bytes(value, &v) < 0) {
                snprintf(why, whylen, "not a size (bytes, or with a K, M, G, T suffix)");
                return -EINVAL;
        }
        if (check_u64_range(it, v, format_size, why, whylen) < 0)
                return -EINVAL;
        *(uint64_t *)field = v;
        return 0;
}

static bool fmt_size(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        format_size(*(const uint64_t *)field, buf, size);
        return true;
}

/* A size, or "auto" (NG_FREE_FLOOR_AUTO). */
static int parse_floor(const struct item *it, const char *value, void *field, char *why, size_t whylen)
{
        if (!strcmp(value, "auto")) {
                *(uint64_t *)field = NG_FREE_FLOOR_AUTO;
                return 0;
        }
        int r = parse_size(it, value, field, why, whylen);
        if (r == -EINVAL && !strncmp(why, "not a size", 10))
                snprintf(why, whylen, "not a size (bytes, or with a K, M, G, T suffix) nor auto");
        return r;
}

static bool fmt_floor(const struct item *it, const void *field, char *buf, size_t size)
{
        if (*(const uint64_t *)field == NG_FREE_FLOOR_AUTO) {
                snprintf(buf, size, "auto");
                return true;
        }
        return fmt_size(it, field, buf, size);
}

static void format_plain(uint64_t v, char *buf, size_t size)
{
        snprintf(buf, size, "%" PRIu64, v);
}

static int parse_uint(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        uint64_t v;
        const char *end;

        if (parse_digits(value, &v, &end) < 0 || *end) {
                snprintf(why, whylen, "not a non-negative integer");
                return -EINVAL;
        }
        if (check_u64_range(it, v, format_plain, why, whylen) < 0)
                return -EINVAL;
        *(unsigned *)field = (unsigned)v;
        return 0;
}

static bool fmt_uint(const struct item *it, const void *field, char *buf, size_t size)
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

        if (parse_digits(s, &ip, &end) < 0 || ip > 1000000)
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

static int parse_fraction(const struct item *it, const char *value, void *field, char *why,
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

static bool fmt_fraction(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        format_fraction(*(const double *)field, buf, size);
        return true;
}

static int parse_bool(const struct item *it, const char *value, void *field, char *why,
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

static bool fmt_bool(const struct item *it, const void *field, char *buf, size_t size)
{
        (void)it;
        snprintf(buf, size, "%s", *(const bool *)field ? "yes" : "no");
        return true;
}

static void join_names(const char *const *names, const char *last_sep, char *buf, size_t size)
{
        size_t pos = 0;

        buf[0] = '\0';
        for (size_t i = 0; names[i] && pos < size; i++)
                pos += (size_t)snprintf(buf + pos, size - pos, "%s%s",
                                        i == 0 ? "" : names[i + 1] ? ", " : last_sep, names[i]);
}

/* Enum fields: GCC gives enums without negative values the type unsigned int. */
static int parse_choice(const struct item *it, const char *value, void *field, char *why,
                        size_t whylen)
{
        char list[128];

        for (unsigned i = 0; it->names[i]; i++)
                if (strcasecmp(value, it->names[i]) == 0) {
                        *(unsigned *)field = i;
                        return 0;
                }
        join_names(it->names, " or ", list, sizeof(list));
        snprintf(why, whylen, "expected %s", list);
        return -EINVAL;
}

static bool fmt_choice(const struct item *it, const void *field, char *buf, size_t size)
{
        snprintf(buf, size, "%s", it->names[*(const unsigned *)field]);
        return true;
}

static int flag_bit(const struct item *it, const char *name, size_t len, unsigned *ret)
{
        for (unsigned i = 0; it->names[i]; i++)
                if (strlen(it->names[i]) == len && strncasecmp(name, it->names[i], len) == 0) {
                        *ret = 1u << i;
                        return 0;
                }
        return -EINVAL;
}

/* "cpuset, hugepages" -> bits; "none" or "" -> 0. */
static int parse_flags(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen)
{
        unsigned mask = 0, bit;
        const char *p = value;
        char list[128];

        if (*value == '\0' || strcasecmp(value, "none") == 0) {
                *(unsigned *)field = 0;
                return 0;
        }
        for (;;) {
                size_t len = strcspn(p, ",");
                size_t lead = strspn(p, " \t");

                while (len > lead && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                        len--;
                if (len <= lead || flag_bit(it, p + lead, len - lead, &bit) < 0) {
                        join_names(it->names, " and ", list, sizeof(list));
                        snprintf(why, whylen, "expected \"none\" or a comma list of %s", list);
                        return -EINVAL;
                }
                mask |= bit;
                p += strcspn(p, ",");
                if (*p++ == '\0')
                        break;
        }
        *(unsigned *)field = mask;
        return 0;
}

static bool fmt_flags(const struct item *it, const void *field, char *buf, size_t size)
{
        unsigned mask = *(const unsigned *)field;
        size_t pos = 0;

        snprintf(buf, size, "none");
        for (unsigned i = 0; it->names[i] && pos < size; i++)
                if (mask & (1u << i))
                        pos += (size_t)snprintf(buf + pos, size - pos, "%s%s", pos ? "," : "",
                                                it->names[i]);
        return true;
}

static int check_length(const struct item *it, const char *value, char *why, size_t whylen)
{
        size_t len = strlen(value);

        if (len < (size_t)it->min) {
                snprintf(why, whylen, "must not be empty");
                return -EINVAL;
        }
        if (len > (size_t)it->max) {
                snprintf(why, whylen, "longer than %zu characters", (size_t)it->max);
                return -EINVAL;
        }
        return 0;
}

static int set_string(void *field, const char *value)
{
        char *s = strdup(value);

        if (!s)
                return -ENOMEM;
        free(*(char **)field);
        *(char **)field = s;
        return 0;
}

static int parse_path(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        if (check_length(it, value, why, whylen) < 0)
                return -EINVAL;
        if (*value && *value != '/') {
                snprintf(why, whylen, "not an absolute path");
                return -EINVAL;
        }
        return set_string(field, value);
}

static int parse_glob(const struct item *it, const char *value, void *field, char *why,
                      size_t whylen)
{
        if (check_length(it, value, why, whylen) < 0)
                return -EINVAL;
        return set_string(field, value);
}

/* Characters any name matching the fnmatch(3) glob has at least. */
static size_t glob_min_length(const char *g)
{
        size_t n = 0;
        while (*g) {
                if (*g == '*') {
                        g++;
                        continue;
                }
                n++;
                if (*g == '\\' && g[1]) {
                        g += 2;
                } else if (*g == '[') {
                        const char *e = g + 1;
                        if (*e == '!' || *e == '^')
                                e++;
                        if (*e == ']')
                                e++;
                        e = strchr(e, ']');
                        g = e ? e + 1 : g + 1;
                } else {
                        g++;
                }
        }
        return n;
}

/* Processes are matched on their full name (argv[0] where comm is its
 * 15-character cut), so a longer glob is right for Oracle SIDs of 7 or
 * more characters; say so, since it then depends on argv[0]. */
static int parse_comm_glob(const struct item *it, const char *value, void *field, char *why,
                           size_t whylen)
{
        int r = parse_glob(it, value, field, why, whylen);

        if (r < 0)
                return r;
        if (glob_min_length(value) > COMM_MAX) {
                snprintf(why, whylen,
                         "\"%s\" can never match a comm, which the kernel cuts to %d characters: "
                         "it matches only the full name in argv[0] (/proc/PID/cmdline, as ps -ef shows it)",
                         value, COMM_MAX);
                return 1;
        }
        return 0;
}

static bool fmt_string(const struct item *it, const void *field, char *buf, size_t size)
{
        const char *s = *(char *const *)field;

        (void)it;
        if (!s)
                return false;
        snprintf(buf, size, "%s", s);
        return true;
}

/* Group names as useradd(8) accepts them, or a number; resolved by the daemon
 * when it creates the socket (the group may be created after the config). */
static int parse_group(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen)
{
        if (check_length(it, value, why, whylen) < 0)
                return -EINVAL;
        for (const char *p = value; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("_.-", *p) &&
                    !(*p == '$' && p[1] == '\0')) {
                        snprintf(why, whylen, "not a group name");
                        return -EINVAL;
                }
        if (*value == '-') {
                snprintf(why, whylen, "not a group name");
                return -EINVAL;
        }
        return set_string(field, value);
}

static int lookup_user(const char *name, uid_t *ret, char *why, size_t whylen)
{
        long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
        size_t size = hint > 0 ? (size_t)hint : 4096;

        for (;;) {
                struct passwd pw, *res = NULL;
                char *buf = malloc(size);
                int r;

                if (!buf)
                        return -ENOMEM;
                r = getpwnam_r(name, &pw, buf, size, &res);
                if (r == 0 && res)
                        *ret = pw.pw_uid;
                free(buf);
                if (r == ERANGE && size < 1024 * 1024) {
                        size *= 2;
                        continue;
                }
                if (r == 0 && res)
                        return 0;
                /* glibc may return ENOENT, ESRCH, EBADF or EPERM for "no such user". */
                snprintf(why, whylen, "unknown user%s%s", r ? ": " : "", r ? strerror(r) : "");
                return -EINVAL;
        }
}

static int parse_uid(const struct item *it, const char *value, void *field, char *why,
                     size_t whylen)
{
        uint64_t n;
        const char *end;
        uid_t uid;

        if (parse_digits(value, &n, &end) == 0 && *end == '\0') {
                if (check_u64_range(it, n, format_plain, why, whylen) < 0)
                        return -EINVAL;
                uid = (uid_t)n;
        } else {
                int r = lookup_user(value, &uid, why, whylen);

                if (r < 0)
                        return r;
        }
        *(uid_t *)field = uid;
        return 0;
}

static bool fmt_uid(const struct item *it, const void *field, char *buf, size_t size)
{
        uid_t uid = *(const uid_t *)field;

        (void)it;
        if (uid == NG_UID_UNSET)
                return false;
        /* Numeric: the dump shows what was resolved at load. */
        snprintf(buf, size, "%u", (unsigned)uid);
        return true;
}

static int parse_nodes(const struct item *it, const char *value, void *field, char *why,
                       size_t whylen)
{
        struct ng_bitmap b;
        int last = -1;

        if (ng_bitmap_parse_list(value, &b) < 0) {
                snprintf(why, whylen, "not a node list (\"0-3,5\")");
                return -EINVAL;
        }
        NG_BITMAP_FOREACH(i, &b)
                last = i;
        if (last < 0) {
                snprintf(why, whylen, "empty node list");
                return -EINVAL;
        }
        if (last > (int)it->max) {
                snprintf(why, whylen, "node %d out of range, must be between 0 and %d", last,
                         (int)it->max);
                return -EINVAL;
        }
        *(struct ng_bitmap *)field = b;
        return 0;
}

static bool fmt_nodes(const struct item *it, const void *field, char *buf, size_t size)
{
        const struct ng_bitmap *b = field;

        (void)it;
        if (ng_bitmap_empty(b))
                return false;
        ng_bitmap_format_list(b, buf, size);
        return true;
}

/* ---- the table -------------------------------------------------------- */

static const char *const mode_names[] = {
        [NG_MODE_AUDIT] = "audit",
        [NG_MODE_ENFORCE] = "enforce",
        NULL,
};

static const char *const policy_names[] = {
        [NG_POLICY_LOCAL] = "local",
        [NG_POLICY_INTERLEAVE] = "interleave",
        [NG_POLICY_BIND] = "bind",
        NULL,
};

static const char *const hugepages_names[] = {
        [NG_HUGEPAGES_PREFERRED] = "preferred",
        [NG_HUGEPAGES_REQUIRED] = "required",
        [NG_HUGEPAGES_OFF] = "off",
        NULL,
};

/* Index i names bit 1 << i: the table of corrections. */
static const char *const enforce_names[] = {
#define ENFORCE_NAME(id, name, msgid) name,
        NG_CORRECTIONS(ENFORCE_NAME)
#undef ENFORCE_NAME
        NULL,
};

#define G(f) SEC_GLOBAL, .offset = offsetof(struct ng_config, f)
#define I(f) SEC_INSTANCE, .offset = offsetof(struct ng_instance_config, f)
#define DURATION .parse = parse_duration, .format = fmt_duration
#define SIZE .parse = parse_size, .format = fmt_size
#define FRACTION .parse = parse_fraction, .format = fmt_fraction
#define UINT .parse = parse_uint, .format = fmt_uint
#define CHOICE(n) .parse = parse_choice, .format = fmt_choice, .names = (n)
#define STRING(p) .parse = (p), .format = fmt_string

/* Keep in step with conf/numaguard.conf (tests/unit/test-config.c checks). */
static const struct item items[] = {
        { G(interval_usec), .key = "interval", DURATION,
          .min = 100 * USEC_PER_MSEC, .max = USEC_PER_HOUR, .def = "30s" },
        { G(cyclops_fraction), .key = "cyclops_fraction", FRACTION,
          .min = 0.5, .max = 1.0, .def = "0.9" },
        { G(pagetable_share), .key = "pagetable_share", FRACTION,
          .min = 0.001, .max = 0.5, .def = "0.02" },
        { G(node_free_floor_bytes), .key = "node_free_floor", .parse = parse_floor, .format = fmt_floor,
          .min = 0, .max = PIB, .def = "auto" },
        { G(min_segment_size_bytes), .key = "min_segment_size", SIZE,
          .min = 0, .max = PIB, .def = "64M" },
        { G(sample_every), .key = "sample_every", UINT,
          .min = 1, .max = 100000, .def = "10" },
        { G(sample_pages), .key = "sample_pages", UINT,
          .min = 64, .max = 65536, .def = "4096" },
        { G(full_scan_every), .key = "full_scan_every", UINT,
          .min = 1, .max = 100000, .def = "20" },
        { G(stuck_after_usec), .key = "stuck_after", DURATION,
          .min = USEC_PER_SEC, .max = USEC_PER_HOUR, .def = "10s" },
        { G(autodiscover), .key = "autodiscover", .parse = parse_bool, .format = fmt_bool,
          .def = "yes" },
        { G(mode), .key = "mode", CHOICE(mode_names), .def = "audit" },
        { G(cooldown_usec), .key = "cooldown", DURATION,
          .min = 0, .max = USEC_PER_DAY, .def = "10m" },
        { G(socket_path), .key = "socket", STRING(parse_path),
          .min = 1, .max = SOCKET_PATH_MAX, .def = "/run/numaguard/ctl.sock" },
        { G(metrics_file), .key = "metrics_file", STRING(parse_path),
          .min = 0, .max = PATH_MAX - 1,
          .def = "/var/lib/prometheus/node-exporter/numaguard.prom" },
        { G(status_group), .key = "status_group", STRING(parse_group),
          .min = 0, .max = 32, .def = "" },

        { I(match_comm), .key = "match_comm", STRING(parse_comm_glob),
          .min = 1, .max = 255, .flags = ITEM_MATCHER },
        { I(match_cmdline), .key = "match_cmdline", STRING(parse_glob),
          .min = 1, .max = 4095, .flags = ITEM_MATCHER },
        { I(pidfile), .key = "pidfile", STRING(parse_path),
          .min = 1, .max = PATH_MAX - 1, .flags = ITEM_MATCHER },
        { I(cgroup), .key = "cgroup", STRING(parse_path),
          .min = 1, .max = PATH_MAX - 1, .flags = ITEM_MATCHER },
        { I(shm_owner_uid), .key = "shm_owner", .parse = parse_uid, .format = fmt_uid,
          .min = 0, .max = (double)(UINT32_MAX - 1), .flags = ITEM_MATCHER },
        { I(policy), .key = "policy", CHOICE(policy_names), .def = "local" },
        { I(nodes), .key = "nodes", .parse = parse_nodes, .format = fmt_nodes,
          .min = 0, .max = NODE_ID_MAX },
        { I(hugepages), .key = "hugepages", CHOICE(hugepages_names), .def = "preferred" },
        { I(expected_size_bytes), .key = "expected_size", SIZE,
          .min = 0, .max = PIB, .def = "0" },
        { I(enforce), .key = "enforce", .parse = parse_flags, .format = fmt_flags,
          .names = enforce_names, .def = "none" },
};

static const struct item *find_item(enum section_kind section, const char *key)
{
        for (size_t i = 0; i < ELEMENTSOF(items); i++)
                if (items[i].section == section && strcmp(items[i].key, key) == 0)
                        return &items[i];
        return NULL;
}

/* Defaults go through the parsers, so they obey the same ranges. */
static int apply_defaults(enum section_kind section, void *base)
{
        char why[256];

        for (size_t i = 0; i < ELEMENTSOF(items); i++) {
                const struct item *it = &items[i];
                int r;

                if (it->section != section || !it->def)
                        continue;
                r = it->parse(it, it->def, (char *)base + it->offset, why, sizeof(why));
                if (r < 0)
                        return r == -ENOMEM ? r : -EINVAL;
        }
        return 0;
}

static int instance_init(struct ng_instance_config *inst, const char *name, unsigned line)
{
        memset(inst, 0, sizeof(*inst));
        snprintf(inst->name, sizeof(inst->name), "%s", name);
        inst->line = line;
        inst->shm_owner_uid = NG_UID_UNSET;
        return apply_defaults(SEC_INSTANCE, inst);
}

static void instance_done(struct ng_instance_config *inst)
{
        free(inst->match_comm);
        free(inst->match_cmdline);
        free(inst->pidfile);
        free(inst->cgroup);
}

void ng_config_free(struct ng_config *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < c->n_instances; i++)
                instance_done(&c->instances[i]);
        free(c->instances);
        free(c->socket_path);
        free(c->metrics_file);
        free(c->status_group);
        free(c);
}

int ng_config_new_default(struct ng_config **ret)
{
        struct ng_config *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        r = apply_defaults(SEC_GLOBAL, c);
        if (r < 0) {
                ng_config_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

/* ---- loading ---------------------------------------------------------- */

struct load_ctx {
        const char *name;
        ng_config_diag_fn diag;
        void *userdata;
        struct ng_config *cfg;
        const char *pos; /* next line of the text */
        unsigned lineno;
        enum section_kind kind;
        unsigned section_line;
        unsigned global_line;
        unsigned seen[ELEMENTSOF(items)]; /* line of each key in this section */
        unsigned errors;
        bool oom;
};

__attribute__((format(printf, 4, 5)))
static void report(struct load_ctx *ctx, int level, unsigned line, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (level == LOG_ERR)
                ctx->errors++;
        if (!ctx->diag)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        ctx->diag(ctx->userdata, level, ctx->name, line, msg);
}

static struct ng_instance_config *current_instance(struct load_ctx *ctx)
{
        return &ctx->cfg->instances[ctx->cfg->n_instances - 1];
}

static void finish_instance(struct load_ctx *ctx)
{
        const struct ng_instance_config *inst = current_instance(ctx);
        const struct item *policy = find_item(SEC_INSTANCE, "policy");
        bool matched = false;

        for (size_t i = 0; i < ELEMENTSOF(items); i++)
                if (items[i].section == SEC_INSTANCE && (items[i].flags & ITEM_MATCHER) &&
                    ctx->seen[i])
                        matched = true;
        if (!matched)
                report(ctx, LOG_ERR, ctx->section_line,
                       "[instance %s] has no matcher: set match_comm, match_cmdline, "
                       "pidfile, cgroup or shm_owner",
                       inst->name);
        if (inst->policy == NG_POLICY_BIND && ng_bitmap_empty(&inst->nodes))
                report(ctx, LOG_ERR, ctx->seen[policy - items],
                       "[instance %s] policy = bind needs a node list (nodes =)", inst->name);
}

static void finish_section(struct load_ctx *ctx)
{
        if (ctx->kind == SEC_INSTANCE)
                finish_instance(ctx);
        ctx->kind = SEC_NONE;
}

static void begin_section(struct load_ctx *ctx, enum section_kind kind)
{
        finish_section(ctx);
        ctx->kind = kind;
        ctx->section_line = ctx->lineno;
        memset(ctx->seen, 0, sizeof(ctx->seen));
}

static bool valid_instance_name(const char *name)
{
        size_t len = strlen(name);

        if (len < 1 || len > NG_INSTANCE_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
                        return false;
        return true;
}

static void begin_instance(struct load_ctx *ctx, const char *name)
{
        struct ng_config *c = ctx->cfg;
        struct ng_instance_config *v;

        if (!valid_instance_name(name)) {
                report(ctx, LOG_ERR, ctx->lineno,
                       "invalid instance name \"%s\": 1 to %d characters of A-Z a-z 0-9 _ . -",
                       name, NG_INSTANCE_NAME_MAX);
                return begin_section(ctx, SEC_SKIP);
        }
        for (size_t i = 0; i < c->n_instances; i++)
                if (strcmp(c->instances[i].name, name) == 0) {
                        report(ctx, LOG_ERR, ctx->lineno,
                               "duplicate section [instance %s], first at line %u", name,
                               c->instances[i].line);
                        return begin_section(ctx, SEC_SKIP);
                }
        finish_section(ctx);
        v = realloc(c->instances, (c->n_instances + 1) * sizeof(*v));
        if (!v) {
                ctx->oom = true;
                return begin_section(ctx, SEC_SKIP);
        }
        c->instances = v;
        c->n_instances++;
        /* Counted before init so that ng_config_free() frees what init set. */
        if (instance_init(current_instance(ctx), name, ctx->lineno) < 0)
                ctx->oom = true;
        begin_section(ctx, SEC_INSTANCE);
}

static void begin_global(struct load_ctx *ctx)
{
        if (ctx->global_line) {
                report(ctx, LOG_ERR, ctx->lineno, "duplicate section [global], first at line %u",
                       ctx->global_line);
                return begin_section(ctx, SEC_SKIP);
        }
        ctx->global_line = ctx->lineno;
        begin_section(ctx, SEC_GLOBAL);
}

/* Trims blanks at both ends of s[0..len) in place; returns the new start. */
static char *trim(char *s)
{
        char *end;

        s += strspn(s, " \t\r");
        end = s + strlen(s);
        while (end > s && strchr(" \t\r", end[-1]))
                *--end = '\0';
        return s;
}

/* line: a copy starting at '['. Mirrors inih: text after ']' is ignored there,
 * but here only a comment may follow. */
static void section_header(struct load_ctx *ctx, char *line)
{
        char *close = strchr(line, ']');
        char *name;

        if (!close) {
                report(ctx, LOG_ERR, ctx->lineno, "unterminated section header, missing ']'");
                return begin_section(ctx, SEC_SKIP);
        }
        *close = '\0';
        close = trim(close + 1);
        if (*close && *close != ';' && *close != '#') {
                report(ctx, LOG_ERR, ctx->lineno, "unexpected text after section header: %s",
                       close);
                return begin_section(ctx, SEC_SKIP);
        }
        name = trim(line + 1);
        if (strcmp(name, "global") == 0)
                return begin_global(ctx);
        if (strncmp(name, "instance", 8) == 0 && (name[8] == '\0' || isblank(name[8])))
                return begin_instance(ctx, trim(name + 8));
        report(ctx, LOG_WARNING, ctx->lineno, "unknown section [%s], ignoring it", name);
        begin_section(ctx, SEC_SKIP);
}

/* Returns true when inih may see the line, false when it was rejected. */
static bool screen_line(struct load_ctx *ctx, char *line)
{
        char *s;

        /* inih skips a UTF-8 byte order mark on the first line. */
        if (ctx->lineno == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0)
                line += 3;
        s = trim(line);
        if (*s == '\0' || *s == ';' || *s == '#')
                return true;
        if (s != line) {
                report(ctx, LOG_ERR, ctx->lineno,
                       "line starts with whitespace; indented lines would continue the "
                       "previous value");
                return false;
        }
        if (*s == '[') {
                section_header(ctx, s);
                return true;
        }
        if (!strpbrk(s, "=:")) {
                report(ctx, LOG_ERR, ctx->lineno, "expected \"key = value\" or \"[section]\"");
                return false;
        }
        return true;
}

/* ini_reader over the in-memory text: counts lines and screens them. */
static char *read_line(char *str, int num, void *stream)
{
        struct load_ctx *ctx = stream;
        const char *eol;
        size_t len;

        if (*ctx->pos == '\0') {
                finish_section(ctx);
                return NULL;
        }
        eol = strchrnul(ctx->pos, '\n');
        len = (size_t)(eol - ctx->pos);
        ctx->lineno++;
        str[0] = '\0';
        if (len + 2 > (size_t)num) { /* room for inih's '\n' + NUL */
                report(ctx, LOG_ERR, ctx->lineno, "line longer than %d characters", num - 2);
        } else {
                /* Screened in str (which it edits), then handed over intact. */
                memcpy(str, ctx->pos, len);
                str[len] = '\0';
                if (screen_line(ctx, str))
                        memcpy(str, ctx->pos, len);
                else
                        len = 0;
                str[len] = '\0';
        }
        ctx->pos = *eol ? eol + 1 : eol;
        return str;
}

static void *section_base(struct load_ctx *ctx)
{
        return ctx->kind == SEC_GLOBAL ? (void *)ctx->cfg : (void *)current_instance(ctx);
}

static int handle_pair(void *user, const char *section, const char *key, const char *value)
{
        struct load_ctx *ctx = user;
        const struct item *it;
        char why[256] = "";
        int r;

        (void)section; /* truncated by inih; ctx->kind is the truth */
        if (ctx->kind == SEC_NONE) {
                report(ctx, LOG_ERR, ctx->lineno, "\"%s\" outside of any section", key);
                return 1;
        }
        if (ctx->kind == SEC_SKIP)
                return 1;
        if (*key == '\0' || !value) {
                report(ctx, LOG_ERR, ctx->lineno, "expected \"key = value\"");
                return 1;
        }
        it = find_item(ctx->kind, key);
        if (!it) {
                report(ctx, LOG_WARNING, ctx->lineno, "unknown key \"%s\" in [%s%s], ignoring it",
                       key, ctx->kind == SEC_GLOBAL ? "global" : "instance ",
                       ctx->kind == SEC_GLOBAL ? "" : current_instance(ctx)->name);
                return 1;
        }
        if (ctx->seen[it - items]) {
                report(ctx, LOG_ERR, ctx->lineno, "%s is already set at line %u", key,
                       ctx->seen[it - items]);
                return 1;
        }
        ctx->seen[it - items] = ctx->lineno;
        /* "key =;x" gives ";x" but "key = ;x" a comment: refuse the ambiguity. */
        if (*value == ';') {
                report(ctx, LOG_ERR, ctx->lineno, "value of %s starts with ';'", key);
                return 1;
        }
        r = it->parse(it, value, (char *)section_base(ctx) + it->offset, why, sizeof(why));
        if (r == -ENOMEM)
                ctx->oom = true;
        else if (r < 0)
                report(ctx, LOG_ERR, ctx->lineno, "invalid %s \"%s\": %s", key, value, why);
        else if (r > 0)
                report(ctx, LOG_WARNING, ctx->lineno, "%s: %s", key, why);
        return 1;
}

int ng_config_load_string(const char *text, const char *name, ng_config_diag_fn diag,
                          void *userdata, struct ng_config **ret)
{
        struct load_ctx ctx = {
                .name = name ? name : "<string>",
                .diag = diag,
                .userdata = userdata,
                .pos = text,
        };
        int r;

        if (!text || !ret)
                return -EINVAL;
        r = ng_config_new_default(&ctx.cfg);
        if (r < 0)
                return r;
        r = ini_parse_stream(read_line, &ctx, handle_pair, &ctx);
        if (r == -2)
                ctx.oom = true;
        else if (r > 0 && ctx.errors == 0)
                report(&ctx, LOG_ERR, (unsigned)r, "malformed line");
        if (ctx.oom || ctx.errors) {
                ng_config_free(ctx.cfg);
                return ctx.oom ? -ENOMEM : -EINVAL;
        }
        *ret = ctx.cfg;
        return 0;
}

static int read_text(const char *path, char **ret, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        size_t len;
        char *buf;
        int r = 0;

        if (!f)
                return -errno;
        buf = malloc(CONFIG_MAX_BYTES + 1);
        if (!buf) {
                fclose(f);
                return -ENOMEM;
        }
        len = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
        if (ferror(f))
                r = errno ? -errno : -EIO;
        else if (len > CONFIG_MAX_BYTES)
                r = -EFBIG;
        fclose(f);
        if (r < 0) {
                free(buf);
                return r;
        }
        buf[len] = '\0';
        *ret = buf;
        *ret_len = len;
        return 0;
}

static unsigned line_of(const char *text, size_t off)
{
        unsigned line = 1;

        for (size_t i = 0; i < off; i++)
                line += text[i] == '\n';
        return line;
}

int ng_config_load(const char *path, ng_config_diag_fn diag, void *userdata, struct ng_config **ret)
{
        char *text = NULL;
        size_t len = 0;
        const char *nul;
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = read_text(path, &text, &len);
        if (r < 0)
                return r;
        nul = memchr(text, '\0', len);
        if (nul) {
                if (diag)
                        diag(userdata, LOG_ERR, path, line_of(text, (size_t)(nul - text)),
                             "file contains a NUL byte");
                free(text);
                return -EINVAL;
        }
        r = ng_config_load_string(text, path, diag, userdata, ret);
        free(text);
        return r;
}

/* ---- dump ------------------------------------------------------------- */

static void dump_section(enum section_kind section, const void *base, FILE *f)
{
        char buf[PATH_MAX + 64];

        for (size_t i = 0; i < ELEMENTSOF(items); i++) {
                const struct item *it = &items[i];

                if (it->section != section)
                        continue;
                if (!it->format(it, (const char *)base + it->offset, buf, sizeof(buf)))
                        continue;
                fprintf(f, "%s =%s%s\n", it->key, *buf ? " " : "", buf);
        }
}

int ng_config_dump(const struct ng_config *c, FILE *f)
{
        if (!c || !f)
                return -EINVAL;
        fprintf(f, "[global]\n");
        dump_section(SEC_GLOBAL, c, f);
        for (size_t i = 0; i < c->n_instances; i++) {
                fprintf(f, "\n[instance %s]\n", c->instances[i].name);
                dump_section(SEC_INSTANCE, &c->instances[i], f);
        }
        return ferror(f) ? -EIO : 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* numaguard.conf's named and text values: one parser and one formatter per
 * kind (choice, flags, path, glob, group, user, nodes), with the checks the
 * table asks for. */

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

#include "cleanup.h"
#include "config-internal.h"

static void join_names(const char *const *names, const char *last_sep, char *buf, size_t size)
{
        size_t pos = 0;

        buf[0] = '\0';
        for (size_t i = 0; names[i] && pos < size; i++)
                pos += (size_t)snprintf(buf + pos, size - pos, "%s%s",
                                        i == 0 ? "" : names[i + 1] ? ", " : last_sep, names[i]);
}

/* Enum fields: GCC gives enums without negative values the type unsigned int. */
int ng_cfg_parse_choice(const struct item *it, const char *value, void *field, char *why,
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

bool ng_cfg_fmt_choice(const struct item *it, const void *field, char *buf, size_t size)
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
int ng_cfg_parse_flags(const struct item *it, const char *value, void *field, char *why,
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

bool ng_cfg_fmt_flags(const struct item *it, const void *field, char *buf, size_t size)
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

int ng_cfg_parse_path(const struct item *it, const char *value, void *field, char *why,
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

int ng_cfg_parse_glob(const struct item *it, const char *value, void *field, char *why,
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
int ng_cfg_parse_comm_glob(const struct item *it, const char *value, void *field, char *why,
                           size_t whylen)
{
        int r = ng_cfg_parse_glob(it, value, field, why, whylen);

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

bool ng_cfg_fmt_string(const struct item *it, const void *field, char *buf, size_t size)
{
        const char *s = *(char *const *)field;

        (void)it;
        if (!s)
                return false;
        snprintf(buf, size, "%s", s);
        return true;
}

/* One entry of unreadable_ok, p[0..len): "init", or a cgroup path as
 * /proc/PID/cgroup shows it, without its trailing '/'. Appends it to out
 * (comma separated); 0 or -EINVAL with the reason in why. */
static int unreadable_entry(const char *p, size_t len, char *out, size_t size, char *why, size_t whylen)
{
        size_t used = strlen(out);

        if (len == 0) {
                snprintf(why, whylen, "an empty entry");
                return -EINVAL;
        }
        if (len == 4 && strncmp(p, "init", 4) == 0)
                goto add;
        if (p[0] != '/') {
                snprintf(why, whylen, "\"%.*s\" is neither init nor a cgroup path (\"/system.slice/NAME.service\"): "
                         "a process name is whatever its user chose, a cgroup is not", (int)(len > 64 ? 64 : len), p);
                return -EINVAL;
        }
        while (len > 1 && p[len - 1] == '/')
                len--;
        if (len == 1) {
                snprintf(why, whylen, "\"/\" is the root cgroup, which holds every process on cgroup v1: name the "
                         "cgroup of the service or container, or init for process 1");
                return -EINVAL;
        }
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
                        goto bad;
        for (size_t i = 0; i < len;) {  /* p[i] is the '/' before a component */
                size_t end = i + 1;

                while (end < len && p[end] != '/')
                        end++;
                if (end == i + 1 || (end == i + 2 && p[i + 1] == '.') ||
                    (end == i + 3 && p[i + 1] == '.' && p[i + 2] == '.'))
                        goto bad;
                i = end;
        }
add:
        if (used + (used > 0) + len + 1 > size) {
                snprintf(why, whylen, "longer than %zu characters", size - 1);
                return -EINVAL;
        }
        snprintf(out + used, size - used, "%s%.*s", used ? "," : "", (int)len, p);
        return 0;
bad:
        snprintf(why, whylen, "\"%.*s\" is not a cgroup path as /proc/PID/cgroup shows it", (int)(len > 64 ? 64 : len),
                 p);
        return -EINVAL;
}

/* unreadable_ok: a comma list of init and cgroup paths, kept as one
 * string without blanks or trailing slashes ("" none). */
int ng_cfg_parse_unreadable_ok(const struct item *it, const char *value, void *field, char *why,
                               size_t whylen)
{
        size_t size = (size_t)it->max + 1;
        _cleanup_free_ char *out = NULL;

        if (check_length(it, value, why, whylen) < 0)
                return -EINVAL;
        if (!(out = calloc(1, size)))
                return -ENOMEM;
        for (const char *p = value; *value;) {
                size_t len = strcspn(p, ","), lead = strspn(p, " \t");

                while (len > lead && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                        len--;
                if (unreadable_entry(p + lead, len > lead ? len - lead : 0, out, size, why, whylen) < 0)
                        return -EINVAL;
                p += strcspn(p, ",");
                if (*p++ == '\0')
                        break;
        }
        free(*(char **)field);
        *(char **)field = ng_steal_ptr(&out);
        return 0;
}

/* Group names as useradd(8) accepts them, or a number; resolved by the daemon
 * when it creates the socket (the group may be created after the config). */
int ng_cfg_parse_group(const struct item *it, const char *value, void *field, char *why,
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

int ng_cfg_parse_uid(const struct item *it, const char *value, void *field, char *why,
                     size_t whylen)
{
        uint64_t n;
        const char *end;
        uid_t uid;

        if (ng_cfg_parse_digits(value, &n, &end) == 0 && *end == '\0') {
                if (ng_cfg_check_u64_range(it, n, ng_cfg_format_plain, why, whylen) < 0)
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

bool ng_cfg_fmt_uid(const struct item *it, const void *field, char *buf, size_t size)
{
        uid_t uid = *(const uid_t *)field;

        (void)it;
        if (uid == NG_UID_UNSET)
                return false;
        /* Numeric: the dump shows what was resolved at load. */
        snprintf(buf, size, "%u", (unsigned)uid);
        return true;
}

int ng_cfg_parse_nodes(const struct item *it, const char *value, void *field, char *why,
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

bool ng_cfg_fmt_nodes(const struct item *it, const void *field, char *buf, size_t size)
{
        const struct ng_bitmap *b = field;

        (void)it;
        if (ng_bitmap_empty(b))
                return false;
        ng_bitmap_format_list(b, buf, size);
        return true;
}

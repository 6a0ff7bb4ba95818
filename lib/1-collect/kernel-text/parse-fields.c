/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fields of a /proc line: splitting on blanks, whole-field numbers. */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "parse.h"
#include "parse-internal.h"

/* Splits on runs of blanks in place; returns the field count, or max + 1
 * when there are more fields than max. */
size_t ng_parse_split(char *s, char **f, size_t max)
{
        size_t n = 0;

        for (;;) {
                while (*s == ' ' || *s == '\t' || *s == '\r')
                        *s++ = '\0';
                if (!*s)
                        return n;
                if (n == max)
                        return max + 1;
                f[n++] = s;
                while (*s && *s != ' ' && *s != '\t' && *s != '\r')
                        s++;
        }
}

/* A whole field as an unsigned decimal. */
int ng_parse_field_u64(const char *s, uint64_t *ret)
{
        uint64_t v;
        int r;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        r = ng_parse_u64(&s, &v);
        if (r < 0)
                return r;
        if (*s)
                return -EINVAL;
        *ret = v;
        return 0;
}

int ng_parse_field_u32(const char *s, uint32_t *ret)
{
        uint64_t v;

        if (ng_parse_field_u64(s, &v) < 0 || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t)v;
        return 0;
}

int ng_parse_field_i64(const char *s, int64_t min, int64_t max, int64_t *ret)
{
        bool neg = *s == '-';
        uint64_t v;

        if (ng_parse_field_u64(s + neg, &v) < 0)
                return -EINVAL;
        if (neg ? v > (uint64_t)-(min + 1) + 1 : v > (uint64_t)max)
                return -ERANGE;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
}

int ng_parse_field_pid(const char *s, pid_t *ret)
{
        int64_t v;

        if (ng_parse_field_i64(s, 0, INT_MAX, &v) < 0)
                return -EINVAL;
        *ret = (pid_t)v;
        return 0;
}

/* Hex digits up to end or stop; no "0x". */
int ng_parse_hex_u64(const char **s, char stop, uint64_t *ret)
{
        const char *p = *s;
        uint64_t v = 0;

        if (*p == '\0' || *p == stop)
                return -EINVAL;
        for (; *p && *p != stop; p++) {
                int d;

                if (*p >= '0' && *p <= '9')
                        d = *p - '0';
                else if (*p >= 'a' && *p <= 'f')
                        d = *p - 'a' + 10;
                else if (*p >= 'A' && *p <= 'F')
                        d = *p - 'A' + 10;
                else
                        return -EINVAL;
                if (v >> 60)
                        return -ERANGE;
                v = v << 4 | (uint64_t)d;
        }
        *s = p;
        *ret = v;
        return 0;
}

int ng_parse_field_hex(const char *s, uint64_t *ret)
{
        return ng_parse_hex_u64(&s, '\0', ret);
}

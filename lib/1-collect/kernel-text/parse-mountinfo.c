/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/<pid>/mountinfo (fs/proc_namespace.c show_mountinfo()):
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
 * ROOT is not always a path ("net:[4026532239]" for nsfs binds).
 * Fields are separated by exactly one blank; blanks inside paths and names
 * are escaped as \040. An empty source prints as two blanks in a row, so the
 * split is on single blanks.
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "parse.h"
#include "parse-internal.h"

/* shared:N master:N propagate_from:N unbindable; a handful at most */
#define MAX_FIELDS 32

static void mount_clear(struct ng_mount *m)
{
        free(m->root);
        free(m->mountpoint);
        free(m->mount_options);
        free(m->fstype);
        free(m->source);
        free(m->super_options);
}

void ng_mounts_free(struct ng_mount *m, size_t n)
{
        if (!m)
                return;
        for (size_t i = 0; i < n; i++)
                mount_clear(&m[i]);
        free(m);
}

/* Splits on single blanks; max + 1 when there are more fields. */
static size_t split1(char *s, char **f, size_t max)
{
        size_t n = 0;

        if (*s == '\0')
                return 0;
        for (;;) {
                if (n == max)
                        return max + 1;
                f[n++] = s;
                s = strchr(s, ' ');
                if (!s)
                        return n;
                *s++ = '\0';
        }
}

static int dec_int(const char *s, int *ret)
{
        uint64_t v;

        if (*s < '0' || *s > '9' || ng_parse_u64(&s, &v) < 0 || *s || v > INT_MAX)
                return -EINVAL;
        *ret = (int)v;
        return 0;
}

static int dev_t_pair(const char *s, unsigned *ret_major, unsigned *ret_minor)
{
        uint64_t maj, min;

        if (*s < '0' || *s > '9' || ng_parse_u64(&s, &maj) < 0 || *s != ':')
                return -EINVAL;
        s++;
        if (*s < '0' || *s > '9' || ng_parse_u64(&s, &min) < 0 || *s ||
            maj > UINT_MAX || min > UINT_MAX)
                return -EINVAL;
        *ret_major = (unsigned)maj;
        *ret_minor = (unsigned)min;
        return 0;
}

static char *dup_unescaped(const char *s)
{
        char *d = strdup(s);

        if (d)
                ng_unescape_octal(d);
        return d;
}

/* Options stay escaped so that an escaped ',' cannot split a value;
 * ng_mount_option_value() unescapes what it returns. */
static int mount_strings(char **f, size_t sep, struct ng_mount *m)
{
        m->root = dup_unescaped(f[3]);
        m->mountpoint = dup_unescaped(f[4]);
        m->mount_options = strdup(f[5]);
        m->fstype = dup_unescaped(f[sep + 1]);
        m->source = dup_unescaped(f[sep + 2]);
        m->super_options = strdup(f[sep + 3]);
        if (!m->root || !m->mountpoint || !m->mount_options || !m->fstype || !m->source ||
            !m->super_options) {
                mount_clear(m);
                return -ENOMEM;
        }
        return 0;
}

/* 1 when *m holds a mount, 0 when the line is skipped, -ENOMEM. */
static int mount_line(char *line, struct ng_mount *m)
{
        char *f[MAX_FIELDS + 1];
        size_t n = split1(line, f, MAX_FIELDS), sep;

        *m = (struct ng_mount) {};
        if (n < 10 || n > MAX_FIELDS)
                return 0;
        for (sep = 6; sep < n && strcmp(f[sep], "-") != 0; sep++)
                ;
        /* exactly fstype, source and super options follow the separator */
        if (sep + 4 != n || f[sep + 1][0] == '\0')
                return 0;
        if (dec_int(f[0], &m->id) < 0 || dec_int(f[1], &m->parent_id) < 0 ||
            dev_t_pair(f[2], &m->major, &m->minor) < 0 || f[4][0] != '/')
                return 0;
        return mount_strings(f, sep, m) < 0 ? -ENOMEM : 1;
}

/* Lines without the "-" separator followed by exactly three fields, or with
 * bad ids, are skipped. */
static int mount_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        return mount_line(line, item);
}

static void mounts_free(void *array, size_t n)
{
        ng_mounts_free(array, n);
}

int ng_parse_mountinfo(const char *buf, struct ng_mount **ret, size_t *ret_n)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), mount_item, NULL, mounts_free, (void **) ret, ret_n, NULL);
}

/* Finds "key" (want_value false) or "key=" (true) among comma-separated
 * options; returns the start of the value or of the match, NULL if absent. */
static const char *find_option(const char *opts, const char *key, bool want_value)
{
        size_t len = strlen(key);

        if (!opts || len == 0)
                return NULL;
        for (const char *p = opts; *p; ) {
                size_t k = strcspn(p, ",");

                if (want_value && k > len && strncmp(p, key, len) == 0 && p[len] == '=')
                        return p + len + 1;
                if (!want_value && k == len && strncmp(p, key, len) == 0)
                        return p;
                p += k;
                if (*p)
                        p++;
        }
        return NULL;
}

bool ng_mount_has_option(const struct ng_mount *m, const char *opt)
{
        if (!m || !opt)
                return false;
        return find_option(m->mount_options, opt, false) ||
               find_option(m->super_options, opt, false);
}

int ng_mount_option_value(const struct ng_mount *m, const char *key, char *buf, size_t size)
{
        const char *v;
        _cleanup_free_ char *tmp = NULL;
        size_t len;

        if (!m || !key || !buf || size == 0)
                return -EINVAL;
        v = find_option(m->mount_options, key, true);
        if (!v)
                v = find_option(m->super_options, key, true);
        if (!v)
                return -ENOENT;
        tmp = strndup(v, strcspn(v, ","));
        if (!tmp)
                return -ENOMEM;
        ng_unescape_octal(tmp);
        len = strlen(tmp);
        if (len >= size)
                return -ENOBUFS;
        memcpy(buf, tmp, len + 1);
        return 0;
}

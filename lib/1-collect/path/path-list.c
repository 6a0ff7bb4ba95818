/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The path layer's directory listings (ng-path.h): names sorted, pids with
 * the inodes of their directories, with or without following a link. */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "cleanup.h"
#include "ng-path.h"
#include "path-internal.h"
#include "util.h"

static int cmp_names(const void *a, const void *b)
{
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

/* ng_path_vopen_dir() with a variadic format. */
static int open_dir(const struct ng_path *p, bool follow, char *rel, DIR **ret, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static int open_dir(const struct ng_path *p, bool follow, char *rel, DIR **ret, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = ng_path_vopen_dir(p, follow, rel, ret, fmt, ap);
        va_end(ap);
        return r;
}

/* At most max names are taken; the entries past them are counted into
 * *ret_total. ret_st: the directory's own stat, before its entries. */
static int vlist(const struct ng_path *p, bool follow, size_t max, char ***ret_names, size_t *ret_n,
                 size_t *ret_total, struct stat *ret_st, const char *fmt, va_list ap)
        __attribute__((format(printf, 8, 0)));
static int vlist(const struct ng_path *p, bool follow, size_t max, char ***ret_names, size_t *ret_n,
                 size_t *ret_total, struct stat *ret_st, const char *fmt, va_list ap)
{
        char rel[PATH_MAX];
        _cleanup_closedir_ DIR *d = NULL;
        int r = ng_path_vopen_dir(p, follow, rel, &d, fmt, ap);
        if (r < 0)
                return r;
        if (ret_st && fstat(dirfd(d), ret_st) < 0)
                return -errno;
        size_t n = 0, cap = 16, total = 0;
        /* NULL-terminated at every step, for the cleanup */
        _ng_cleanup_(ng_strv_freep) char **v = calloc(cap, sizeof(*v));
        if (!v)
                return -ENOMEM;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                total++;
                if (n >= max)
                        continue;
                if (ng_grow(&v, &cap, n + 1, sizeof(*v), 0) < 0 || !(v[n] = strdup(de->d_name)))
                        return -ENOMEM;
                v[++n] = NULL;
        }
        qsort(v, n, sizeof(*v), cmp_names);
        ng_path_record_dir(p, rel, n);
        *ret_names = ng_steal_ptr(&v);
        if (ret_n)
                *ret_n = n;
        if (ret_total)
                *ret_total = total;
        return 0;
}

int ng_path_list(const struct ng_path *p, char ***ret_names, size_t *ret_n, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vlist(p, true, SIZE_MAX, ret_names, ret_n, NULL, NULL, fmt, ap);
        va_end(ap);
        return r;
}

int ng_path_list_nofollow(const struct ng_path *p, char ***ret_names, size_t *ret_n, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vlist(p, false, SIZE_MAX, ret_names, ret_n, NULL, NULL, fmt, ap);
        va_end(ap);
        return r;
}

int ng_path_list_bounded(const struct ng_path *p, size_t max, char ***ret_names, size_t *ret_n, size_t *ret_total,
                         struct stat *ret_st, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = vlist(p, false, max, ret_names, ret_n, ret_total, ret_st, fmt, ap);
        va_end(ap);
        return r;
}

int ng_path_dir_stat(const struct ng_path *p, struct stat *ret_st, struct statfs *ret_sfs, const char *fmt, ...)
{
        char rel[PATH_MAX];
        _cleanup_closedir_ DIR *d = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = ng_path_vopen_dir(p, false, rel, &d, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        if (fstat(dirfd(d), ret_st) < 0 || (ret_sfs && fstatfs(dirfd(d), ret_sfs) < 0))
                return -errno;
        return 0;
}

static int cmp_pid_ent(const void *a, const void *b)
{
        const struct ng_pid_entry *x = a, *y = b;
        return (x->pid > y->pid) - (x->pid < y->pid);
}

int ng_path_list_pids(const struct ng_path *p, struct ng_pid_entry **ret, size_t *ret_n, const char *dir)
{
        char rel[PATH_MAX];
        _cleanup_closedir_ DIR *d = NULL;
        int r = open_dir(p, true, rel, &d, "%s", dir);
        if (r < 0)
                return r;
        size_t n = 0, cap = 256;
        _cleanup_free_ struct ng_pid_entry *v = malloc(cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0 || pid > INT32_MAX || de->d_name[0] == '+' || de->d_name[0] == '-')
                        continue;
                if ((r = ng_grow(&v, &cap, n, sizeof(*v), NG_PATH_MAX_PIDS)) < 0)
                        return r;
                v[n++] = (struct ng_pid_entry) { .pid = (pid_t) pid, .ino = de->d_ino };
        }
        qsort(v, n, sizeof(*v), cmp_pid_ent);
        ng_path_record_dir(p, rel, n);
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

void ng_strv_free(char **v)
{
        if (!v)
                return;
        for (char **i = v; *i; i++)
                free(*i);
        free(v);
}

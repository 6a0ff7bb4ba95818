/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: the readers every part of the collection shares (one file, a
 * list, a meminfo, a number) and the problems they record. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "reader.h"
#include "path.h"
#include "parse.h"
#include "ng-snapshot.h"
#include "text.h"
#include "units.h"
#include "util.h"

/* A file of a tree that is not what the kernel would show there (a FIFO,
 * a link that loops or leads nowhere in the tree, a file where a directory
 * must be) is a problem that names it, and is otherwise taken as missing:
 * the rest of the tree is still audited, and what depends on it is said to
 * be unknown. A file simply missing is missing (a process that went away
 * while the tree was taken), and said by whoever needs it. */
static int tree_damage(struct collector *c, int r, const char *fmt, va_list ap)
{
        char rel[PATH_MAX], path[PATH_MAX], why[160];
        if (vsnprintf(rel, sizeof(rel), fmt, ap) >= (int) sizeof(rel) ||
            ng_path_why(c->reads, r, rel, path, sizeof(path), why, sizeof(why)) < 0)
                return r;
        ng_collect_problem(c, path, "%s; not read", why);
        return -ENOENT;
}

int ng_collect_vread(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
{
        if (c->o.progress)
                c->o.progress(c->o.progress_data, c->current_pid);
        va_list again;
        va_copy(again, ap);
        int r = ng_path_vread(c->reads, ret_buf, ret_len, fmt, ap);
        if ((r == -EINVAL || r == -ELOOP || r == -ENOTDIR || r == -ENOENT) && !ng_path_is_live(c->reads))
                r = tree_damage(c, r, fmt, again);
        va_end(again);
        return r;
}

int ng_collect_read(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = ng_collect_vread(c, ret_buf, ret_len, fmt, ap);
        va_end(ap);
        return r;
}

/* The pid of a host path /proc/PID/..., 0 for any other. */
static pid_t proc_pid_of(const char *path)
{
        const char *p = path + strlen(NG_PROC_DIR "/");
        uint64_t pid = 0;

        if (strncmp(path, NG_PROC_DIR "/", strlen(NG_PROC_DIR "/")) || *p < '1' || *p > '9')
                return 0;
        for (; *p >= '0' && *p <= '9'; p++)
                if ((pid = pid * 10 + (uint64_t) (*p - '0')) > INT32_MAX)
                        return 0;
        return *p == '/' ? (pid_t) pid : 0;
}

static void vproblem(struct collector *c, const char *path, const char *advice, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
static void vproblem(struct collector *c, const char *path, const char *advice, const char *fmt, va_list ap)
{
        struct ng_snapshot *s = c->s;
        /* A long root is cut from its start: the kernel path matters most. */
        char named[sizeof(s->problems[0].path)];
        size_t rl = strlen(s->root), keep = sizeof(named) / 2;
        const char *root = rl > keep ? s->root + rl - keep : s->root;
        int n = snprintf(named, sizeof(named), "%.*s%s", (int) strnlen(root, keep), root, path);
        if (n >= (int) sizeof(named))
                strcpy(named + sizeof(named) - 4, "...");
        /* one problem a file: the first says what is wrong with it */
        for (size_t i = 0; i < s->n_problems && i < NG_MAX_PROBLEMS; i++)
                if (!strcmp(s->problems[i].path, named))
                        return;
        if (s->n_problems++ >= NG_MAX_PROBLEMS)
                return;
        struct ng_problem *pb = &s->problems[s->n_problems - 1];
        memcpy(pb->path, named, sizeof(named));
        pb->pid = proc_pid_of(path);
        vsnprintf(pb->reason, sizeof(pb->reason), fmt, ap);
        snprintf(pb->advice, sizeof(pb->advice), "%s", advice);
}

void ng_collect_problem(struct collector *c, const char *path, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vproblem(c, path, "", fmt, ap);
        va_end(ap);
}

void ng_collect_problem_advice(struct collector *c, const char *path, const char *advice, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vproblem(c, path, advice, fmt, ap);
        va_end(ap);
}

int ng_collect_incomplete(struct collector *c)
{
        if (ng_path_is_live(c->p))
                return 0;
        _cleanup_free_ char *buf = NULL;
        int r = ng_collect_read(c, &buf, NULL, NG_PATH_INCOMPLETE_FILE);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                char *why = strchr(line, '\t');
                if (why)
                        *why++ = '\0';
                /* a line that names no file is the record's own problem */
                char *path = strdup(line);
                if (!path)
                        return -ENOMEM;
                bool named = ng_text_unescape(path) >= 0 && *path == '/';
                ng_collect_problem(c, named ? path : NG_PATH_INCOMPLETE_FILE, "%s%s", named ? "" : "a line that "
                                   "names no file: ", why && *why ? why : "not in this snapshot");
                free(path);
        }
        return 0;
}

/* Reads a list file ("0-3"); an absent file leaves *ret empty, one that
 * does not parse too, with a problem naming it. */
int ng_collect_read_list(struct collector *c, struct ng_bitmap *ret, const char *path)
{
        _cleanup_free_ char *buf = NULL;
        int r = ng_collect_read(c, &buf, NULL, "%s", path);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        struct ng_bitmap b = {0};
        r = ng_bitmap_parse_list(buf, &b);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                ng_collect_problem(c, path, "not a list of ids (%s)", strerror(-r));
                return 0;
        }
        *ret = b;
        return 0;
}

/* Fields of a meminfo that are parts of MemTotal. */
static bool part_of_total(const char *key)
{
        static const char *const keys[] = { "MemFree", "MemUsed", "MemAvailable", "FilePages", "Shmem",
                                            "PageTables", "AnonPages", "Mapped", "Active", "Inactive",
                                            "Slab", "KernelStack" };
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (!strcmp(key, keys[i]))
                        return true;
        return false;
}

/* A meminfo that cannot be true is unknown as a whole: a MemFree of 2^64-1
 * kB would otherwise plan hugepages on memory the node does not have. */
static bool meminfo_plausible(struct collector *c, const char *path, const struct ng_meminfo *m)
{
        uint64_t total;
        if (ng_meminfo_get(m, "MemTotal", &total) < 0) {
                ng_collect_problem(c, path, "no MemTotal line: the memory is unknown");
                return false;
        }
        for (size_t i = 0; i < m->n; i++) {
                const struct ng_meminfo_field *f = &m->f[i];
                if (!f->kib)
                        continue;
                if (f->value > NG_PLAUSIBLE_MAX_KIB) {
                        ng_collect_problem(c, path, "%s %" PRIu64 " kB is more than any machine holds (4 PiB): the memory "
                                "is unknown", f->key, f->value);
                        return false;
                }
                if (part_of_total(f->key) && f->value > total) {
                        ng_collect_problem(c, path, "%s %" PRIu64 " kB exceeds MemTotal %" PRIu64 " kB: the memory is "
                                "unknown", f->key, f->value, total);
                        return false;
                }
        }
        return true;
}

/* Reads a meminfo; has set when it exists, parses and can be true. */
void ng_collect_read_meminfo(struct collector *c, struct ng_meminfo *m, bool *has, bool must_exist, const char *fmt, ...)
{
        char path[128], *buf;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        *has = false;
        int r = ng_collect_read(c, &buf, NULL, "%s", path);
        if (r < 0) {
                if (r != -ENOENT || must_exist)
                        ng_collect_problem(c, path, "%s: the memory is unknown",
                                r == -ENOENT ? "missing" : strerror(-r));
                return;
        }
        r = ng_parse_meminfo(buf, m);
        free(buf);
        if (r < 0)
                ng_collect_problem(c, path, "no meminfo line parses: the memory is unknown");
        else
                *has = meminfo_plausible(c, path, m);
        uint64_t v;
        /* A MemFree line that is absent or does not parse leaves the rest
         * known and free memory unknown (ng_node_supply()), never 0. */
        if (*has && ng_meminfo_get(m, "MemFree", &v) < 0)
                ng_collect_problem(c, path, "no MemFree line that parses: free memory is unknown");
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: what a snapshot keeps of each /dev/shm and hugetlbfs file, and
 * what a --root collection of its tree takes from there (collect-shm.c
 * lists the files). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "shm-internal.h"
#include "parse.h"
#include "text.h"
#include "ng-snapshot.h"
#include "util.h"

/* A tree holds each file of a mount as an empty file of its name; what
 * stat(2) said of it on the live host is kept as FILES_FMT, one
 * "UID SIZE ALLOCATED PATH" line a file the collection kept (one path an
 * inode), PATH as NG_TEXT_RECORD escapes it (a name is any bytes but NUL,
 * newlines too), and a --root collection takes the files' sizes, allocated
 * bytes and owners (shm_owner claims files by them) from there. A sparse
 * file of any size (2^63-1 bytes, more than an ext4 /tmp holds) costs the
 * snapshot one line. A file of the record that is not in the tree (its
 * name lost on the way) is a problem of the snapshot; a file of the tree
 * without a line is none of the live host's (another name of a file it
 * kept, which the live collection left out).
 *
 * Older snapshots have no such record: their copies are sparse files of
 * the sizes, and OWNERS_FMT, "UID PATH" lines, holds the owners (none:
 * unknown, 0). */
#define FILES_FMT "/numaguard/shm-files-%u-%u"
#define OWNERS_FMT "/numaguard/shm-owners-%u-%u"

int ng_shm_record_files(struct collector *c, const struct ng_mount *m, size_t from)
{
        const struct ng_snapshot *s = c->s;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (from == s->n_files)
                return 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        bool fail = false;
        for (size_t i = from; i < s->n_files && !fail; i++) {
                const struct ng_shm_file *sf = &s->files[i];
                _cleanup_free_ char *path = ng_text_dup(NG_TEXT_RECORD, sf->path);
                fail = !path || fprintf(f, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %s\n", sf->uid, sf->size_bytes,
                                        sf->allocated_bytes, path) < 0;
        }
        fail |= ferror(f);
        if (fclose(f) != 0 || fail)
                return -ENOMEM;
        char rel[64];
        snprintf(rel, sizeof(rel), FILES_FMT, m->major, m->minor);
        ng_path_record(c->p, rel, text, len);
        return 0;
}

struct kept {
        struct ng_shm_file_line l;
        bool found;
};

static int cmp_kept(const void *a, const void *b)
{
        return strcmp(((const struct kept *) a)->l.path, ((const struct kept *) b)->l.path);
}

/* The record's lines, sorted by path, into *ret (buf holds their paths);
 * no more than a collection examines: *ret_over counts the lines past them. */
static int parse_kept(char *buf, struct kept **ret, size_t *ret_n, size_t *ret_over)
{
        _cleanup_free_ struct kept *v = NULL;
        size_t n = 0;
        *ret_over = 0;
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                struct ng_shm_file_line l;
                if (ng_parse_shm_file_line(line, &l) < 0)
                        continue;       /* its file then has no line */
                int r = ng_grow(&v, NULL, n, sizeof(*v), NG_SHM_MAX_EXAMINED);
                if (r == -E2BIG) {
                        (*ret_over)++;
                        continue;
                }
                if (r < 0)
                        return r;
                v[n++] = (struct kept) { .l = l };
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_kept);
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

/* 1 when the tree has the record (the files of the mount, s->files[from..],
 * made what it says), 0 when it has none, or -ENOMEM. */
int ng_shm_replay_files(struct collector *c, const struct ng_mount *m, const char *prefix, size_t from)
{
        struct ng_snapshot *s = c->s;
        _cleanup_free_ char *buf = NULL;
        char rel[64];
        snprintf(rel, sizeof(rel), FILES_FMT, m->major, m->minor);
        int r = ng_collect_read(c, &buf, NULL, "%s", rel);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        _cleanup_free_ struct kept *v = NULL;
        size_t n, n_kept = from, over;
        if ((r = parse_kept(buf, &v, &n, &over)) < 0)
                return r;
        if (over)
                ng_collect_problem(c, rel, "%zu more lines than the %d files a collection examines: their files "
                                   "are not audited", over, NG_SHM_MAX_EXAMINED);
        for (size_t i = from; i < s->n_files; i++) {
                struct ng_shm_file *f = &s->files[i];
                struct kept key = { .l.path = f->path }, *k = n ? bsearch(&key, v, n, sizeof(*v), cmp_kept) : NULL;
                if (!k || k->found) {
                        free(f->path);
                        continue;
                }
                k->found = true;
                f->uid = k->l.uid;
                f->size_bytes = k->l.size_bytes;
                f->allocated_bytes = k->l.allocated_bytes;
                s->files[n_kept++] = *f;
        }
        s->n_files = n_kept;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                if (v[i].found)
                        continue;
                if (asprintf(&path, "%s%s", prefix, v[i].l.path) < 0)
                        return -ENOMEM;
                ng_collect_problem(c, path, "in the snapshot's record (%s), not in the tree (its name lost when "
                                   "unpacked?): not audited", rel);
        }
        return 1;
}

static int cmp_path(const void *a, const void *b)
{
        return strcmp((*(struct ng_shm_file *const *) a)->path, (*(struct ng_shm_file *const *) b)->path);
}

int ng_shm_replay_owners(struct collector *c, const struct ng_mount *m, size_t from)
{
        struct ng_snapshot *s = c->s;
        _cleanup_free_ char *buf = NULL;
        if (ng_path_read(c->p, &buf, NULL, OWNERS_FMT, m->major, m->minor) < 0 || from == s->n_files)
                return 0;
        /* the mount's files by path: one name a file in a tree's listing */
        size_t n = s->n_files - from;
        _cleanup_free_ struct ng_shm_file **by_path = malloc(n * sizeof(*by_path));
        if (!by_path)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                by_path[i] = &s->files[from + i];
        qsort(by_path, n, sizeof(*by_path), cmp_path);
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                uint32_t uid;
                const char *path;
                if (ng_parse_owner_line(line, &uid, &path) < 0)
                        continue;
                struct ng_shm_file key = { .path = (char *) path }, *k = &key,
                                   **f = bsearch(&k, by_path, n, sizeof(*by_path), cmp_path);
                if (f)
                        (*f)->uid = uid;
        }
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: what the /dev/shm and hugetlbfs mounts hold that the snapshot
 * does not list as files. Anyone may fill /dev/shm: a hundred thousand
 * empty files would be a hundred thousand segments, each asked where its
 * pages are. A collection looks at NG_SHM_MAX_EXAMINED entries in all and
 * only counts the rest (collect-shm.c), which is a problem of the snapshot
 * naming the mount and who owns most of its files; and the files under
 * min_file_bytes that no process maps are counted per mount, not listed.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "shm-internal.h"
#include "parse.h"
#include "ng-snapshot.h"
#include "units.h"
#include "util.h"

/* The live host's count of the entries past the bound, kept by its
 * snapshot for a --root collection of the tree (which holds the files
 * examined only): "COUNT\n". */
#define UNEXAMINED_FMT "/numaguard/shm-unexamined-%u-%u"

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return (x > y) - (x < y);
}

/* The uid owning most of the files of scan sc (the lowest of a tie) and
 * how many it owns. 0 or -ENOMEM. */
static int top_owner(const struct ng_snapshot *s, struct shm_scan *sc)
{
        size_t n = sc->to - sc->from;
        sc->top_uid = 0;
        sc->top_owned = 0;
        sc->n_examined_files = n;
        if (n == 0)
                return 0;
        _cleanup_free_ uint32_t *v = malloc(n * sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = s->files[sc->from + i].uid;
        qsort(v, n, sizeof(*v), cmp_u32);
        for (size_t i = 0, run; i < n; i += run) {
                for (run = 1; i + run < n && v[i + run] == v[i]; run++)
                        ;
                if (run > sc->top_owned) {
                        sc->top_owned = run;
                        sc->top_uid = v[i];
                }
        }
        return 0;
}

/* A tree: the count its snapshot kept, added to what its own listing left. */
static int replay_unexamined(struct collector *c, struct ng_shm_unlisted *u, const char *rel)
{
        _cleanup_free_ char *buf = NULL;
        int r = ng_collect_read(c, &buf, NULL, "%s", rel);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        uint64_t kept;
        if (ng_parse_u64_full(buf, &kept) < 0) {
                ng_collect_problem(c, rel, "not a count of entries: how many the live host left unexamined is "
                                   "unknown");
                return 0;
        }
        u->unexamined = ng_add_sat(u->unexamined, kept);
        return 0;
}

int ng_collect_unexamined(struct collector *c, size_t i)
{
        struct ng_snapshot *s = c->s;
        struct ng_shm_unlisted *u = &s->unlisted[i];
        struct shm_scan *sc = &c->shm_scans[i];
        char rel[64];
        snprintf(rel, sizeof(rel), UNEXAMINED_FMT, u->dev_major, u->dev_minor);
        if (!ng_path_is_live(c->p)) {
                int r = replay_unexamined(c, u, rel);
                if (r < 0)
                        return r;
        }
        if (!u->unexamined)
                return 0;
        if (ng_path_recording(c->p)) {
                char text[32];
                int len = snprintf(text, sizeof(text), "%" PRIu64 "\n", u->unexamined);
                ng_path_record(c->p, rel, text, (size_t) len);
        }
        /* a copy of the last listing keeps its owners' count */
        int r = sc->cached ? 0 : top_owner(s, sc);
        if (r < 0)
                return r;
        _cleanup_free_ char *path = NULL, *advice = NULL, *owner = NULL;
        char ns[48] = "";
        if (u->mnt_ns)
                snprintf(ns, sizeof(ns), " (mount namespace %" PRIu64 ")", u->mnt_ns);
        if (asprintf(&path, "%s%s", sc->prefix, u->mountpoint) < 0 ||
            (sc->top_owned ? asprintf(&owner, "; uid %" PRIu32 " owns %zu of the %zu files examined there",
                                      sc->top_uid, sc->top_owned, sc->n_examined_files) :
                             asprintf(&owner, "; the mounts listed before it took them all")) < 0 ||
            asprintf(&advice, "remove the files no database needs%s; the segments among the entries not looked "
                     "at are not audited", sc->top_owned ? " (see the uid named)" : " there") < 0)
                return -ENOMEM;
        ng_collect_problem_advice(c, path, advice, "%" PRIu64 " entr%s%s not looked at: one collection examines "
                                  "%d%s", u->unexamined, u->unexamined == 1 ? "y" : "ies", ns,
                                  NG_SHM_MAX_EXAMINED, owner);
        return 0;
}

void ng_collect_scans_free(struct collector *c)
{
        for (size_t i = 0; c->shm_scans && i < c->s->n_unlisted; i++) {
                struct shm_scan *sc = &c->shm_scans[i];
                for (size_t k = 0; k < sc->n_dirs; k++)
                        free(sc->dirs[k].path);
                free(sc->dirs);
                for (size_t k = 0; k < sc->n_small; k++)
                        free(sc->small[k].path);
                free(sc->small);
        }
        free(c->shm_scans);
        c->shm_scans = NULL;
}

/* ---- files under min_file_bytes that no process maps ---- */

/* A shared file mapping of a process: a segment is its device and inode,
 * or its device and path where either inode is unknown (a tree's copy). */
struct map_key {
        unsigned major, minor;
        uint64_t inode;
        const char *path;
};

static int cmp_dev(const struct map_key *x, const struct map_key *y)
{
        if (x->major != y->major)
                return x->major < y->major ? -1 : 1;
        return (x->minor > y->minor) - (x->minor < y->minor);
}

static int cmp_inode(const void *a, const void *b)
{
        const struct map_key *x = a, *y = b;
        int d = cmp_dev(x, y);
        return d ? d : (x->inode > y->inode) - (x->inode < y->inode);
}

static int cmp_path(const void *a, const void *b)
{
        const struct map_key *x = a, *y = b;
        int d = cmp_dev(x, y);
        return d ? d : strcmp(x->path, y->path);
}

struct maps_index {
        struct map_key *by_inode, *by_path;
        size_t n;
};

static int index_maps(const struct ng_snapshot *s, struct maps_index *ix)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                for (size_t j = 0; j < s->procs[i]->n_maps; j++)
                        n += s->procs[i]->maps[j].kind == NG_MAP_FILE_SHARED;
        ix->by_inode = malloc((n + 1) * sizeof(*ix->by_inode));
        ix->by_path = malloc((n + 1) * sizeof(*ix->by_path));
        if (!ix->by_inode || !ix->by_path)
                return -ENOMEM;
        ix->n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                for (size_t j = 0; j < s->procs[i]->n_maps; j++) {
                        const struct ng_map *m = &s->procs[i]->maps[j];
                        if (m->kind == NG_MAP_FILE_SHARED)
                                ix->by_inode[ix->n++] = (struct map_key) {
                                        .major = m->dev_major, .minor = m->dev_minor, .inode = m->inode,
                                        .path = m->path };
                }
        memcpy(ix->by_path, ix->by_inode, ix->n * sizeof(*ix->by_path));
        qsort(ix->by_inode, ix->n, sizeof(*ix->by_inode), cmp_inode);
        qsort(ix->by_path, ix->n, sizeof(*ix->by_path), cmp_path);
        return 0;
}

/* Whether a process maps f, as a segment is matched to its mappings
 * (segments-place.c): by inode where both have one, else by path. */
static bool mapped(const struct maps_index *ix, const struct ng_shm_file *f)
{
        struct map_key key = { .major = f->dev_major, .minor = f->dev_minor, .inode = f->inode, .path = f->path };
        if (f->inode && bsearch(&key, ix->by_inode, ix->n, sizeof(key), cmp_inode))
                return true;
        size_t lo = 0, hi = ix->n;      /* the first mapping of f's device and path */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cmp_path(&ix->by_path[mid], &key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t k = lo; k < ix->n && !cmp_path(&ix->by_path[k], &key); k++)
                if (!f->inode || !ix->by_path[k].inode)
                        return true;
        return false;
}

static bool claimed(const struct ng_collect_opts *o, uint32_t uid)
{
        for (size_t i = 0; i < o->n_claimed_uids; i++)
                if (o->claimed_uids[i] == uid)
                        return true;
        return false;
}

/* f, counted: kept for the picture's copy of a listing it will make
 * (sc stamped), else let go. */
static int count_small(struct shm_scan *sc, struct ng_shm_unlisted *u, struct ng_shm_file *f)
{
        u->small_files++;
        u->small_bytes = ng_add_sat(u->small_bytes, f->size_bytes);
        u->small_allocated_bytes = ng_add_sat(u->small_allocated_bytes, f->allocated_bytes);
        if (!sc->stamped || sc->cached) {
                free(f->path);
                return 0;
        }
        if (ng_grow(&sc->small, NULL, sc->n_small, sizeof(*sc->small), 0) < 0) {
                free(f->path);
                sc->stamped = false;    /* not copied: listed again */
                return -ENOMEM;
        }
        sc->small[sc->n_small++] = (struct shm_small) { .inode = f->inode, .path = f->path,
                                                        .size_bytes = f->size_bytes,
                                                        .allocated_bytes = f->allocated_bytes };
        return 0;
}

/* A mount served by the picture's copy: the files it counted that a
 * process maps now are listed (appended to s->files), and the mount is
 * listed again next time. */
static int list_mapped(struct collector *c, size_t i, const struct maps_index *ix)
{
        struct ng_snapshot *s = c->s;
        struct shm_scan *sc = &c->shm_scans[i];
        struct ng_shm_unlisted *u = &s->unlisted[i];
        for (size_t k = 0; k < ix->n; k++) {
                const struct map_key *m = &ix->by_inode[k];
                if (m->major != u->dev_major || m->minor != u->dev_minor || !m->inode ||
                    (k && !cmp_inode(m, &ix->by_inode[k - 1])))
                        continue;
                const struct shm_small *f = ng_shm_cache_small(sc->cached, m->inode);
                if (!f)
                        continue;
                ng_shm_cache_drop(sc->cached);
                struct ng_file_stat fs;
                char kind;
                if (ng_path_entry_stat(c->p, &fs, &kind, "%s%s", sc->prefix, f->path) < 0 || kind != 'f' ||
                    fs.inode != f->inode || fs.dev_major != u->dev_major || fs.dev_minor != u->dev_minor)
                        continue;       /* gone since: listed again next time */
                if (ng_grow(&s->files, NULL, s->n_files, sizeof(*s->files), 0) < 0)
                        return -ENOMEM;
                char *path = strdup(f->path);
                if (!path)
                        return -ENOMEM;
                s->files[s->n_files++] = (struct ng_shm_file) {
                        .path = path, .kind = sc->kind, .size_bytes = fs.size_bytes, .page_kib = sc->page_kib,
                        .dev_major = u->dev_major, .dev_minor = u->dev_minor, .inode = fs.inode,
                        .allocated_bytes = fs.allocated_bytes, .mnt_ns = u->mnt_ns, .ns_pid = sc->ns_pid,
                        .uid = fs.uid, .huge = sc->huge,
                };
                u->small_files -= u->small_files > 0;
                u->small_bytes -= u->small_bytes >= f->size_bytes ? f->size_bytes : u->small_bytes;
                u->small_allocated_bytes -= u->small_allocated_bytes >= f->allocated_bytes ? f->allocated_bytes :
                                            u->small_allocated_bytes;
        }
        return 0;
}

int ng_collect_files_fold(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        uint64_t min = c->o.min_file_bytes;
        s->min_file_bytes = min;
        if (!min || !s->n_unlisted)
                return 0;
        struct maps_index ix = { 0 };
        int r = index_maps(s, &ix);
        size_t w = 0;
        /* every file is of one mount's scan, the scans in the order of s->files */
        for (size_t i = 0; i < s->n_unlisted && r >= 0; i++) {
                struct shm_scan *sc = &c->shm_scans[i];
                size_t from = sc->from, to = sc->to;
                sc->from = w;
                for (size_t j = from; j < to; j++) {
                        struct ng_shm_file *f = &s->files[j];
                        if (r >= 0 && (f->size_bytes >= min || claimed(&c->o, f->uid) || mapped(&ix, f))) {
                                s->files[w++] = *f;
                                continue;
                        }
                        /* a file the copy listed is counted now: list the mount again */
                        if (sc->cached)
                                ng_shm_cache_drop(sc->cached);
                        if (r >= 0)
                                r = count_small(sc, &s->unlisted[i], f);
                        else
                                free(f->path);
                }
                sc->to = w;
        }
        s->n_files = w;
        for (size_t i = 0; i < s->n_unlisted && r >= 0; i++)
                if (c->shm_scans[i].cached)
                        r = list_mapped(c, i, &ix);
        free(ix.by_inode);
        free(ix.by_path);
        return r < 0 ? r : ng_shm_cache_store(c);
}

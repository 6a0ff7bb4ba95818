/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the picture's copy of what the last listing of each /dev/shm
 * and hugetlbfs mount found (live host). Anyone may leave a hundred
 * thousand empty files in /dev/shm: listing them is a stat(2) each, a
 * hundred times what the rest of a quiet poll costs. While nothing changed
 * there, a poll stats only the files it lists and takes the counts of the
 * others from the copy.
 *
 * Nothing changed when every directory listed has the device, inode, size
 * (tmpfs counts its entries in it), mtime and ctime it had (a directory
 * changed in the 100 ms before it was listed is never copied: a change in
 * the same tick of the kernel's clock would leave its times as they were;
 * ctime cannot be set by utimensat(2)), and the file system's bytes in use
 * less those of the files listed are what they were: a file counted, not
 * listed, that was written to since would show there. A file counted that
 * a process maps since is listed from the copy's record of it (and the
 * mount listed again next time). What neither shows, a file counted that
 * grew by truncate(2) alone and holds no more memory, is listed by the
 * full_scan_every-th collection, which lists the mount again.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "picture.h"
#include "shm-internal.h"
#include "units.h"
#include "util.h"

struct kept_file {
        char *path;
        uint64_t inode;
};

struct shm_cached {
        /* the mount: its namespace, device and mountpoint */
        uint64_t mnt_ns;
        unsigned major, minor;
        char *mountpoint;
        bool used;              /* by this collection */
        bool valid;             /* may serve the next one */
        unsigned served;        /* collections it served since the listing */
        size_t budget, examined;        /* as shm_scan's */
        struct shm_dir *dirs;
        size_t n_dirs;
        uint64_t other_bytes;   /* in use on the file system, less those of the files listed */
        struct kept_file *kept; /* the files listed */
        size_t n_kept;
        struct shm_small *small;        /* the files counted, by inode */
        size_t n_small;
        struct ng_shm_unlisted counts;  /* mountpoint NULL */
        uint64_t sig;
        uint64_t opts_sig;      /* of the options it was listed under */
        uint32_t top_uid;
        size_t top_owned, n_examined_files;
};

struct shm_cache {
        struct shm_cached *v;
        size_t n;
};

static void dirs_free(struct shm_dir *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].path);
        free(v);
}

static void small_free(struct shm_small *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].path);
        free(v);
}

static void cached_done(struct shm_cached *k)
{
        free(k->mountpoint);
        dirs_free(k->dirs, k->n_dirs);
        for (size_t i = 0; i < k->n_kept; i++)
                free(k->kept[i].path);
        free(k->kept);
        small_free(k->small, k->n_small);
        *k = (struct shm_cached) { 0 };
}

static void cache_free(struct shm_cache *cache)
{
        if (!cache)
                return;
        for (size_t i = 0; i < cache->n; i++)
                cached_done(&cache->v[i]);
        free(cache->v);
        free(cache);
}

bool ng_shm_cache_wanted(const struct collector *c)
{
        return c->o.picture && c->o.min_file_bytes && ng_path_is_live(c->p) && !ng_path_recording(c->p);
}

bool ng_shm_cache_usable(const struct collector *c)
{
        return ng_shm_cache_wanted(c) && ng_picture_shm_cache(c->o.picture);
}

/* What decides which files are counted, not listed: a copy listed under
 * other options (a reloaded configuration) serves no collection. */
static uint64_t opts_sig(const struct collector *c)
{
        uint64_t h = UINT64_C(14695981039346656037);
        h = (h ^ c->o.min_file_bytes) * UINT64_C(1099511628211);
        for (size_t i = 0; i < c->o.n_claimed_uids; i++)
                h = (h ^ c->o.claimed_uids[i]) * UINT64_C(1099511628211);
        return h;
}

static int fs_used(const struct statfs *sfs, uint64_t *ret)
{
        /* no size limit: tmpfs says 0 blocks, hugetlbfs -1 */
        if (sfs->f_blocks == 0 || sfs->f_blocks == (__typeof__(sfs->f_blocks)) -1 || sfs->f_bfree > sfs->f_blocks ||
            sfs->f_bsize <= 0)
                return -EOPNOTSUPP;
        return ng_mul_u64((uint64_t) (sfs->f_blocks - sfs->f_bfree), (uint64_t) sfs->f_bsize, ret) ? 0 : -EOVERFLOW;
}

int ng_shm_fs_used(struct collector *c, const char *prefix, const char *dir, uint64_t *ret_bytes)
{
        struct stat st;
        struct statfs sfs;
        int r = ng_path_dir_stat(c->p, &st, &sfs, "%s%s", prefix, dir);
        return r < 0 ? r : fs_used(&sfs, ret_bytes);
}

static struct shm_cached *lookup(struct shm_cache *cache, uint64_t mnt_ns, unsigned major, unsigned minor,
                                 const char *mountpoint)
{
        for (size_t i = 0; cache && i < cache->n; i++) {
                struct shm_cached *k = &cache->v[i];
                if (k->mnt_ns == mnt_ns && k->major == major && k->minor == minor && !strcmp(k->mountpoint, mountpoint))
                        return k;
        }
        return NULL;
}

static bool same_dir(struct collector *c, const char *prefix, const struct shm_dir *d, struct statfs *sfs)
{
        struct stat st;
        if (ng_path_dir_stat(c->p, &st, sfs, "%s%s", prefix, d->path) < 0)
                return false;
        return (uint64_t) st.st_dev == d->dev && (uint64_t) st.st_ino == d->ino && (uint64_t) st.st_size == d->size &&
               (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == d->mtime_ns &&
               (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec == d->ctime_ns;
}

struct shm_cached *ng_shm_cache_find(struct collector *c, const struct ng_shm_unlisted *u, struct shm_scan *sc)
{
        if (!ng_shm_cache_usable(c))
                return NULL;
        struct shm_cached *k = lookup(ng_picture_shm_cache(c->o.picture), u->mnt_ns, u->dev_major, u->dev_minor, u->mountpoint);
        if (!k)
                return NULL;
        k->used = true;
        /* every full_scan_every-th collection lists the mount again */
        if (!k->valid || k->opts_sig != opts_sig(c) || k->budget != sc->budget || !k->n_dirs || k->served + 1 >= ng_picture_full_scan_every(c->o.picture))
                return NULL;
        struct statfs sfs;
        /* the first directory is the mount's own */
        for (size_t i = 0; i < k->n_dirs; i++)
                if (!same_dir(c, sc->prefix, &k->dirs[i], i ? NULL : &sfs))
                        return NULL;
        return fs_used(&sfs, &sc->used_bytes) < 0 ? NULL : k;
}

size_t ng_shm_cache_n_kept(const struct shm_cached *k)
{
        return k->n_kept;
}

const char *ng_shm_cache_kept(const struct shm_cached *k, size_t i, uint64_t *ret_inode)
{
        *ret_inode = k->kept[i].inode;
        return k->kept[i].path;
}

bool ng_shm_cache_use(struct collector *c, struct shm_cached *k, struct ng_shm_unlisted *u, struct shm_scan *sc,
                      uint64_t kept_allocated)
{
        if (sc->used_bytes < kept_allocated || sc->used_bytes - kept_allocated != k->other_bytes)
                return false;
        char *mp = u->mountpoint;
        *u = k->counts;
        u->mountpoint = mp;
        sc->sig = k->sig;
        sc->examined = k->examined;
        sc->top_uid = k->top_uid;
        sc->top_owned = k->top_owned;
        sc->n_examined_files = k->n_examined_files;
        sc->cached = k;
        k->served++;
        c->shm_examined += k->examined;
        return true;
}

static int cmp_small(const void *a, const void *b)
{
        const struct shm_small *x = a, *y = b;
        return (x->inode > y->inode) - (x->inode < y->inode);
}

const struct shm_small *ng_shm_cache_small(const struct shm_cached *k, uint64_t inode)
{
        struct shm_small key = { .inode = inode };
        return k->n_small ? bsearch(&key, k->small, k->n_small, sizeof(key), cmp_small) : NULL;
}

void ng_shm_cache_drop(struct shm_cached *k)
{
        k->valid = false;
}

/* The copy of scan i, listed by this collection (its directories and
 * counted files taken from sc). */
static int store(struct collector *c, struct shm_cache *cache, size_t i)
{
        const struct ng_snapshot *s = c->s;
        const struct ng_shm_unlisted *u = &s->unlisted[i];
        struct shm_scan *sc = &c->shm_scans[i];
        struct shm_cached *k = lookup(cache, u->mnt_ns, u->dev_major, u->dev_minor, u->mountpoint);
        if (!k) {
                if (ng_grow(&cache->v, NULL, cache->n, sizeof(*cache->v), 0) < 0)
                        return -ENOMEM;
                k = &cache->v[cache->n++];
                *k = (struct shm_cached) { .mnt_ns = u->mnt_ns, .major = u->dev_major, .minor = u->dev_minor,
                                           .mountpoint = strdup(u->mountpoint) };
                if (!k->mountpoint) {
                        cache->n--;
                        return -ENOMEM;
                }
        }
        k->used = true;
        k->valid = false;
        uint64_t kept_allocated = 0;
        for (size_t j = sc->from; j < sc->to; j++)
                kept_allocated = ng_add_sat(kept_allocated, s->files[j].allocated_bytes);
        if (!sc->stamped || sc->cached || sc->used_bytes < kept_allocated)
                return 0;
        struct kept_file *kept = calloc(sc->to - sc->from + 1, sizeof(*kept));
        if (!kept)
                return -ENOMEM;
        for (size_t j = sc->from; j < sc->to; j++) {
                kept[j - sc->from] = (struct kept_file) { .path = strdup(s->files[j].path),
                                                          .inode = s->files[j].inode };
                if (!kept[j - sc->from].path) {
                        for (size_t q = 0; q < j - sc->from; q++)
                                free(kept[q].path);
                        free(kept);
                        return -ENOMEM;
                }
        }
        char *mp = k->mountpoint;
        k->mountpoint = NULL;
        cached_done(k);
        *k = (struct shm_cached) {
                .mnt_ns = u->mnt_ns, .major = u->dev_major, .minor = u->dev_minor, .mountpoint = mp,
                .used = true, .valid = true, .budget = sc->budget, .examined = sc->examined,
                .dirs = sc->dirs, .n_dirs = sc->n_dirs, .other_bytes = sc->used_bytes - kept_allocated,
                .kept = kept, .n_kept = sc->to - sc->from, .small = sc->small, .n_small = sc->n_small,
                .counts = *u, .sig = sc->sig, .opts_sig = opts_sig(c), .top_uid = sc->top_uid, .top_owned = sc->top_owned,
                .n_examined_files = sc->n_examined_files,
        };
        k->counts.mountpoint = NULL;
        if (k->n_small)
                qsort(k->small, k->n_small, sizeof(*k->small), cmp_small);
        sc->dirs = NULL;
        sc->n_dirs = 0;
        sc->small = NULL;
        sc->n_small = 0;
        return 0;
}

int ng_shm_cache_store(struct collector *c)
{
        struct ng_picture *pic = c->o.picture;
        if (pic) {
                unsigned listed = 0, copied = 0;
                for (size_t i = 0; i < c->s->n_unlisted; i++) {
                        copied += c->shm_scans[i].cached != NULL;
                        listed += !c->shm_scans[i].cached;
                }
                ng_picture_count_shm(pic, listed, copied);
        }
        if (!ng_shm_cache_wanted(c))
                return 0;
        struct shm_cache *cache = ng_picture_shm_cache(pic);
        if (!cache) {
                if (!(cache = calloc(1, sizeof(*cache))))
                        return -ENOMEM;
                ng_picture_keep_shm_cache(pic, cache, cache_free);
        }
        int r = 0;
        for (size_t i = 0; i < c->s->n_unlisted && r >= 0; i++)
                if (!c->shm_scans[i].cached)
                        r = store(c, cache, i);
        /* the copies of mounts this collection did not see go */
        size_t n = 0;
        for (size_t i = 0; i < cache->n; i++) {
                if (cache->v[i].used) {
                        cache->v[i].used = false;
                        cache->v[n++] = cache->v[i];
                } else
                        cached_done(&cache->v[i]);
        }
        cache->n = n;
        return r;
}

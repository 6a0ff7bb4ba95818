/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parser of /proc/sysvipc/shm (and of the same table an IPC namespace
 * shows its members). Each line is copied (bounded) before it is split, so
 * the parser never looks past the buffer's NUL.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "parse.h"
#include "parse-internal.h"
#include "util.h"

/* ---- /proc/sysvipc/shm ---- */

/* Columns since Linux 2.6.29; before that the last two (rss, swap) were
 * missing. Columns a future kernel appends are ignored. */
#define SHM_COLS_OLD 14
#define SHM_COLS 16

static int shm_times(char **f, struct ng_shm_seg *s)
{
        uint64_t t[3];

        /* printed with %llu from a time64_t; reinterpret */
        for (int i = 0; i < 3; i++)
                if (ng_parse_field_u64(f[11 + i], &t[i]) < 0)
                        return -EINVAL;
        s->atime = (int64_t)t[0];
        s->dtime = (int64_t)t[1];
        s->ctime = (int64_t)t[2];
        return 0;
}

static int shm_ids(char **f, struct ng_shm_seg *s)
{
        int64_t key, id;
        uint64_t perms = 0;

        if (ng_parse_field_i64(f[0], INT32_MIN, INT32_MAX, &key) < 0 ||
            ng_parse_field_i64(f[1], 0, INT32_MAX, &id) < 0)
                return -EINVAL;
        for (const char *p = f[2]; *p; p++) {
                if (*p < '0' || *p > '7' || perms > 07777)
                        return -EINVAL;
                perms = perms * 8 + (uint64_t)(*p - '0');
        }
        if (perms > 0177777)
                return -EINVAL;
        s->key = (int32_t)key;
        s->shmid = (int32_t)id;
        s->perms = (uint32_t)perms;
        return 0;
}

static bool shm_numbers(char **f, size_t n, struct ng_shm_seg *s);

/* A row whose ids parse is kept, its numbers unknown when they do not. */
static bool shm_line(char *line, struct ng_shm_seg *s)
{
        char *f[SHM_COLS + 1];
        size_t n = ng_parse_split(line, f, SHM_COLS);

        if (n > SHM_COLS)
                n = SHM_COLS;
        if (n != SHM_COLS_OLD && n != SHM_COLS)
                return false;
        *s = (struct ng_shm_seg) {};
        if (shm_ids(f, s) < 0)
                return false;
        if (!shm_numbers(f, n, s))
                *s = (struct ng_shm_seg) { .key = s->key, .shmid = s->shmid, .perms = s->perms, .unknown = true };
        return true;
}

/* The numbers after the mode; false when one does not parse. */
static bool shm_numbers(char **f, size_t n, struct ng_shm_seg *s)
{
        if (ng_parse_field_u64(f[3], &s->size_bytes) < 0 ||
            ng_parse_field_pid(f[4], &s->cpid) < 0 || ng_parse_field_pid(f[5], &s->lpid) < 0 ||
            ng_parse_field_u64(f[6], &s->nattch) < 0 ||
            ng_parse_field_u32(f[7], &s->uid) < 0 || ng_parse_field_u32(f[8], &s->gid) < 0 ||
            ng_parse_field_u32(f[9], &s->cuid) < 0 || ng_parse_field_u32(f[10], &s->cgid) < 0 ||
            shm_times(f, s) < 0)
                return false;
        if (n == SHM_COLS_OLD)
                return true;
        s->has_rss = true;
        return ng_parse_field_u64(f[14], &s->rss_bytes) == 0 && ng_parse_field_u64(f[15], &s->swap_bytes) == 0;
}

/* The header and rows whose ids do not parse are skipped; 14 columns
 * (before 2.6.29) or at least 16. */
static int shm_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        /* the header's first field is "key": not a number */
        return shm_line(line, item) ? 1 : 0;
}

static void shm_free(void *array, size_t n)
{
        (void) n;
        free(array);
}

struct shm_order {
        int32_t shmid;
        size_t row;
};

static int shm_order_cmp(const void *a, const void *b)
{
        const struct shm_order *x = a, *y = b;
        if (x->shmid != y->shmid)
                return x->shmid < y->shmid ? -1 : 1;
        return (x->row > y->row) - (x->row < y->row);
}

/* A shmid is one row of the kernel's table: a text that lists it again
 * would make a second, phantom segment. The first row stays, unknown (the
 * rows may disagree and neither can be trusted), the others go. Sorted,
 * not compared pairwise: a hostile table may hold a million rows. */
static int shm_dedup(struct ng_shm_seg *v, size_t *n)
{
        if (*n < 2)
                return 0;
        _cleanup_free_ struct shm_order *o = malloc(*n * sizeof(*o));
        _cleanup_free_ bool *drop = calloc(*n, sizeof(*drop));
        if (!o || !drop)
                return -ENOMEM;
        for (size_t i = 0; i < *n; i++)
                o[i] = (struct shm_order) { .shmid = v[i].shmid, .row = i };
        qsort(o, *n, sizeof(*o), shm_order_cmp);
        /* o[first]: the first row of a run of one shmid (rows in order) */
        for (size_t i = 1, first = 0; i < *n; i++) {
                if (o[i].shmid != o[first].shmid) {
                        first = i;
                        continue;
                }
                drop[o[i].row] = true;
                struct ng_shm_seg *sh = &v[o[first].row];
                *sh = (struct ng_shm_seg) { .key = sh->key, .shmid = sh->shmid, .perms = sh->perms, .unknown = true,
                                            .duplicates = sh->duplicates + 1 };
        }
        size_t k = 0;
        for (size_t i = 0; i < *n; i++)
                if (!drop[i])
                        v[k++] = v[i];
        *n = k;
        return 0;
}

int ng_parse_sysvipc_shm(const char *buf, struct ng_shm_seg **ret, size_t *ret_n)
{
        _cleanup_free_ struct ng_shm_seg *v = NULL;
        size_t n;

        if (!buf || !ret || !ret_n)
                return -EINVAL;
        int r = ng_parse_lines(buf, sizeof(*v), shm_item, NULL, shm_free, (void **) &v, &n, NULL);
        if (r < 0)
                return r;
        r = shm_dedup(v, &n);
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

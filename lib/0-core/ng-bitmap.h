/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Fixed-size bitmaps for CPU and node sets ("0-3,8-11" lists). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Linux allows NR_CPUS up to 8192 on x86_64 and MAX_NUMNODES up to 1024. */
#define NG_BITMAP_BITS 8192
#define NG_BITMAP_WORDS (NG_BITMAP_BITS / 64)

struct ng_bitmap {
        uint64_t w[NG_BITMAP_WORDS];
};

static inline void ng_bitmap_set(struct ng_bitmap *b, unsigned i)
{
        if (i < NG_BITMAP_BITS)
                b->w[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline void ng_bitmap_clear(struct ng_bitmap *b, unsigned i)
{
        if (i < NG_BITMAP_BITS)
                b->w[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

static inline bool ng_bitmap_test(const struct ng_bitmap *b, unsigned i)
{
        return i < NG_BITMAP_BITS && (b->w[i / 64] >> (i % 64)) & 1;
}

unsigned ng_bitmap_count(const struct ng_bitmap *b);
bool ng_bitmap_empty(const struct ng_bitmap *b);
bool ng_bitmap_equal(const struct ng_bitmap *a, const struct ng_bitmap *b);
bool ng_bitmap_intersects(const struct ng_bitmap *a, const struct ng_bitmap *b);
/* Every bit of a is set in b. */
bool ng_bitmap_subset(const struct ng_bitmap *a, const struct ng_bitmap *b);
void ng_bitmap_or(struct ng_bitmap *dst, const struct ng_bitmap *src);
void ng_bitmap_and(struct ng_bitmap *dst, const struct ng_bitmap *src);
/* Next set bit at or after i, or -1. */
int ng_bitmap_next(const struct ng_bitmap *b, int i);
#define NG_BITMAP_FOREACH(i, b) for (int i = ng_bitmap_next((b), 0); i >= 0; i = ng_bitmap_next((b), i + 1))

/*
 * Parses a kernel list ("0-3,8,10-11", "" or "\n" = empty, "0-31:8" stride
 * form accepted). Returns 0 or -EINVAL (also for ids >= NG_BITMAP_BITS);
 * *ret untouched on failure.
 */
int ng_bitmap_parse_list(const char *s, struct ng_bitmap *ret);
/*
 * A set held per process (a status's Cpus_allowed_list and
 * Mems_allowed_list), its words sized to its highest id: a host with
 * thousands of processes must not hold two struct ng_bitmap (2 KiB) for each.
 * The empty set has n_words 0 and w NULL.
 */
struct ng_idset {
        uint64_t *w;
        size_t n_words;
};

/* 0 or -ENOMEM; *ret untouched on failure. */
int ng_idset_from_bitmap(const struct ng_bitmap *b, struct ng_idset *ret);
int ng_idset_copy(const struct ng_idset *src, struct ng_idset *ret);
void ng_idset_done(struct ng_idset *s);
bool ng_idset_test(const struct ng_idset *s, unsigned i);
bool ng_idset_equal(const struct ng_idset *a, const struct ng_idset *b);
void ng_idset_to_bitmap(const struct ng_idset *s, struct ng_bitmap *ret);
void ng_bitmap_or_idset(struct ng_bitmap *dst, const struct ng_idset *src);

/* Formats as a kernel list ("0-3,8"); "" when empty. Returns chars written
 * (like snprintf: the length it needed). */
int ng_bitmap_format_list(const struct ng_bitmap *b, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

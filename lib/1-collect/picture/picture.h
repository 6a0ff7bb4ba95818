/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The process picture kept between polls, as the rest of collect uses it
 * (its public part, ng_picture_*, is in ng-snapshot.h): a collection's
 * processes through it, the generations that keep its shared records
 * alive, and a place it keeps for the shm module between collections. Not
 * installed; its machinery is in picture-internal.h.
 */

#include <stdbool.h>
#include <stddef.h>

#include "ng-snapshot.h"
#include "reader.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_proc_gen;

/* picture.c: the processes of c->s from the picture, reading only what may
 * have changed since the last collection (or everything, see ng-snapshot.h). */
int ng_picture_collect_procs(struct ng_picture *pic, struct collector *c);
/* Lets go of a snapshot's hold on the picture's records (NULL: nothing). */
void ng_proc_gen_unref(struct ng_proc_gen *g);

/* What pic keeps for the shm module between collections: the copy of what
 * the last listing of each /dev/shm and hugetlbfs mount found
 * (shm/collect-shm-cache.c), NULL before the first. The picture does not
 * look into it; ng_picture_free() frees it with the free_cache given. */
struct shm_cache;
struct shm_cache *ng_picture_shm_cache(const struct ng_picture *pic);
void ng_picture_keep_shm_cache(struct ng_picture *pic, struct shm_cache *cache,
                               void (*free_cache)(struct shm_cache *cache));
/* Every full_scan_every-th collection reads everything again (a copy
 * serves the collections between). */
unsigned ng_picture_full_scan_every(const struct ng_picture *pic);
/* The mounts the last collection listed and those it took from their
 * copies (ng_picture_stats). */
void ng_picture_count_shm(struct ng_picture *pic, unsigned listed, unsigned copied);

#pragma GCC visibility pop

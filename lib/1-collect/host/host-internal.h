/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the files of host/ that read the topology and the features.
 * Not installed; the rest of collect uses host.h. */

#include <stdbool.h>
#include <stddef.h>

#include "host.h"
#include "ng-snapshot.h"

/* Library-internal: not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

/* collect-hmat.c: nd's HMAT access classes and memory-side caches (absent
 * ones leave them unknown). 0, or -errno on a real error. */
int ng_collect_node_hmat(struct collector *c, struct ng_node *nd);

/* collect-tiers.c: each node's socket and memory tier, the tiers and
 * whether demotion is on (absent ones unknown). 0, or -errno. */
int ng_collect_tiers(struct collector *c);

/* collect-features.c: a feature's state and detail. */
void ng_feature_set(struct ng_topology *t, enum ng_feature f, enum ng_feature_state st, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* true when r, the result of reading or listing path, is a success; else
 * the feature is absent (-ENOENT) or unknown (why), and false. */
bool ng_feature_found(struct ng_topology *t, enum ng_feature f, const char *path, int r);
/* Appends ", word" (or "word" first) to buf, silently cut at its end. */
void ng_feature_add_word(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The promo watermark's feature, from the /proc/zoneinfo the topology
 * reads (NULL: unreadable). */
void ng_collect_features_zoneinfo(struct ng_topology *t, const char *zoneinfo);

#pragma GCC visibility pop

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tier-1 placement sampling with move_pages(2). */

#include <errno.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "util.h"

/* The kernel answers at most this many addresses per call without
 * chunking internally (DO_PAGES_STAT_CHUNK_NR is 16); 1024 keeps our own
 * arrays small and the mmap lock hold short. */
#define BATCH 1024

/* xorshift64*: deterministic per mapping, so two polls of an unchanged
 * segment sample the same pages and report the same shares. */
uint64_t ng_sample_random(uint64_t *state)
{
        uint64_t x = *state ? *state : 1;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *state = x;
        return x * UINT64_C(0x2545f4914f6cdd1d);
}

int ng_sample_count_node(struct ng_sample *s, int node)
{
        size_t i = 0;
        while (i < s->n_np && s->np[i].node < node)
                i++;
        if (i < s->n_np && s->np[i].node == node) {
                s->np[i].pages++;
                return 0;
        }
        if (ng_grow(&s->np, NULL, s->n_np, sizeof(*s->np), 0) < 0)
                return -ENOMEM;
        struct ng_node_pages *nn = s->np;
        memmove(&nn[i + 1], &nn[i], (s->n_np - i) * sizeof(*nn));
        nn[i] = (struct ng_node_pages) { .node = node, .pages = 1 };
        s->n_np++;
        return 0;
}

static int query_batch(struct ng_sample *s, ng_move_pages_fn fn, void **addrs, int *status, unsigned n)
{
        if (fn(s->pid, n, addrs, NULL, status, 0) < 0)
                return -errno;
        for (unsigned i = 0; i < n; i++) {
                s->asked++;
                if (status[i] < 0)
                        continue;       /* -ENOENT: not present; -EFAULT: hole */
                s->present++;
                int r = ng_sample_count_node(s, status[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ng_sample_range(pid_t pid, uint64_t start, uint64_t len, uint64_t page_bytes, unsigned k,
                    ng_move_pages_fn fn, struct ng_sample *ret)
{
        if (page_bytes == 0)
                page_bytes = 4096;
        uint64_t pages = len / page_bytes;
        if (pages == 0 || k == 0)
                return -EINVAL;
        if (!fn)
                fn = move_pages;
        uint64_t n = pages < k ? pages : k;
        struct ng_sample s = { .pid = pid, .start = start, .len = len };
        void *addrs[BATCH];
        int status[BATCH];
        unsigned b = 0;
        int r = 0;

        uint64_t rng = start ^ UINT64_C(0x9e3779b97f4a7c15);
        for (uint64_t i = 0; i < n && r >= 0; i++) {
                /* One page at a random offset inside each of n equal strata:
                 * a fixed stride would alias with interleave's round robin
                 * (every 2nd page of a 4-node interleave sits on 2 nodes). */
                uint64_t lo = i * pages / n, hi = (i + 1) * pages / n;
                uint64_t page = lo + (hi > lo + 1 ? ng_sample_random(&rng) % (hi - lo) : 0);
                addrs[b++] = (void *) (uintptr_t) (start + page * page_bytes);
                if (b == BATCH || i + 1 == n) {
                        r = query_batch(&s, fn, addrs, status, b);
                        b = 0;
                }
        }
        if (r < 0) {
                ng_sample_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

void ng_sample_done(struct ng_sample *s)
{
        if (!s)
                return;
        free(s->np);
        s->np = NULL;
        s->n_np = 0;
}

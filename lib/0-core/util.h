/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The small kit every stage and both programs share (not installed): the
 * number of elements of an array, time units and the clock, and growing an
 * array. One definition each; tests/shell/test-layout.sh fails on a second
 * one or on an array's length spelled out.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* The number of elements of an array (never a pointer). */
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_USEC UINT64_C(1000)
#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)

/* clk now, in microseconds: CLOCK_REALTIME, CLOCK_MONOTONIC,
 * CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID. */
static inline uint64_t now_usec(clockid_t clk)
{
        struct timespec ts;
        clock_gettime(clk, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

/* The name of enum value v in names[] (a table indexed by the enum), dflt
 * for a value past the table or without a name: every enum's names. */
#define NG_NAME(names, v, dflt) \
        ((size_t) (v) < ELEMENTSOF(names) && (names)[(size_t) (v)] ? (names)[(size_t) (v)] : (dflt))

/* usec as a struct timespec: the deadline pthread_cond_timedwait(3) and
 * pthread_timedjoin_np(3) take, read from now_usec() of their clock. */
static inline struct timespec ng_timespec_usec(uint64_t usec)
{
        return (struct timespec) { .tv_sec = (time_t) (usec / USEC_PER_SEC),
                                   .tv_nsec = (long) (usec % USEC_PER_SEC * NSEC_PER_USEC) };
}

/* The first size of an array grown by ng_grow(). */
#define NG_GROW_FIRST 16

/*
 * Makes room for item n (0-based) of *arr, an array of items of elem bytes,
 * doubling it when full: with cap, *cap items fit and *cap is updated; an
 * array that keeps no capacity (cap NULL) is grown as if it had one, so it
 * is reallocated at n = 0, NG_GROW_FIRST, twice that, ... only: it must
 * have grown from NULL through ng_grow(..., NULL, ...) alone (an array
 * allocated otherwise passes a cap, at least its n). Never past
 * max items (0: what memory can hold): -E2BIG for n >= max. 0 or -ENOMEM;
 * on failure *arr is unchanged.
 */
static inline int ng_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t max)
{
        void **p = (void **) arr;
        size_t have;            /* items that fit now */
        if (cap)
                have = *cap;
        else if (n == 0)
                have = 0;
        else if (n <= NG_GROW_FIRST)
                have = NG_GROW_FIRST;
        else
                have = n & (n - 1) ? n + 1 : n; /* full at a power of two */
        if (n < have)
                return 0;
        if (max && n >= max)
                return -E2BIG;
        size_t ncap = have ? have * 2 : NG_GROW_FIRST;
        if (max && ncap > max)
                ncap = max;
        void *v = reallocarray(*p, ncap, elem);
        if (!v)
                return -ENOMEM;
        *p = v;
        if (cap)
                *cap = ncap;
        return 0;
}

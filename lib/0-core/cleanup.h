/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Scope-bound cleanup, for the library and the programs (not installed):
 *
 *         _cleanup_free_ char *buf = NULL;
 *         _cleanup_fclose_ FILE *f = fopen(...);
 *         _cleanup_close_ int fd = open(...);
 *
 * frees buf, closes f and fd whenever the scope is left, so an error path
 * is a plain `return r;`. ng_steal_ptr() / ng_steal_fd() hand a value out of
 * such a scope. The helpers accept NULL (and fd -1), like every destructor
 * of the library; close() keeps errno, so `return -errno;` after a failed
 * call still returns that call's error.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _ng_cleanup_(f) __attribute__((cleanup(f)))

static inline void ng_freep(void *p)
{
        free(*(void **) p);
}

static inline void ng_fclosep(FILE **f)
{
        if (*f) {
                int e = errno;
                fclose(*f);
                errno = e;
        }
}

static inline void ng_closedirp(DIR **d)
{
        if (*d) {
                int e = errno;
                closedir(*d);
                errno = e;
        }
}

static inline void ng_closep(int *fd)
{
        if (*fd >= 0) {
                int e = errno;
                close(*fd);
                errno = e;
        }
}

#define _cleanup_free_ _ng_cleanup_(ng_freep)
#define _cleanup_fclose_ _ng_cleanup_(ng_fclosep)
#define _cleanup_closedir_ _ng_cleanup_(ng_closedirp)
#define _cleanup_close_ _ng_cleanup_(ng_closep)

/* For the library's own destructors (which accept NULL):
 *
 *         _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
 *
 * Each fn##p is defined once, beside fn in the header that declares it: by
 * hand in a public ng-*.h (ng_snapshot_freep in ng-snapshot.h: this file is
 * not installed), with NG_DEFINE_CLEANUP(type, fn) in an internal header.
 */
#define NG_DEFINE_CLEANUP(type, fn)                     \
        static inline void fn##p(type **p)              \
        {                                               \
                fn(*p);                                 \
        }

/* Returns *pp and sets it to NULL, so the cleanup leaves it alone. */
#define ng_steal_ptr(pp)                                \
        __extension__({                                 \
                __typeof__(*(pp)) _ng_v = *(pp);        \
                *(pp) = NULL;                           \
                _ng_v;                                  \
        })

/* Returns *fdp and sets it to -1. */
#define ng_steal_fd(fdp)                                \
        __extension__({                                 \
                int _ng_fd = *(fdp);                    \
                *(fdp) = -1;                            \
                _ng_fd;                                 \
        })

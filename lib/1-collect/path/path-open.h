/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Opening a file or its directory under a path's root, for the stages after
 * collect and the programs (writing corrections, archiving a snapshot).
 * Not installed, not exported; the rest of the path layer's internals stay
 * in path-internal.h. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ng-path.h"

#pragma GCC visibility push(hidden)

/* What p's rel resolves to, by ng_root_open(): a descriptor or -errno. */
int ng_path_open(const struct ng_path *p, int flags, mode_t mode, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* ng_root_open_parent() under p's root. */
int ng_path_open_parent(const struct ng_path *p, bool create, char *ret_name, size_t name_size, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

#pragma GCC visibility pop

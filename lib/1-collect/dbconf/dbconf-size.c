/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dbconf: the sizes the servers' own option readers take, shared by the
 * MariaDB and Oracle parsers (a file of its own: both depend on it, it on
 * neither). */

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbconf.h"

/* A size in the servers' own manner: digits and at most one suffix of
 * units ("KMGT": Oracle's big integers; "KMGTPE": my_getopt's
 * eval_num_suffix), in either case, each a factor of 1024 over the one
 * before. 0, -EINVAL or -ERANGE. */
int ng_dbconf_suffixed_size(const char *v, const char *units, uint64_t *ret)
{
        char *end;
        if (!isdigit((unsigned char) *v))
                return -EINVAL;
        errno = 0;
        uint64_t n = strtoull(v, &end, 10);
        if (errno)
                return -ERANGE;
        unsigned shift = 0;
        if (*end) {
                const char *u = end[1] ? NULL : strchr(units, toupper((unsigned char) *end));
                if (!u || !*u)
                        return -EINVAL;
                shift = 10 * (unsigned) (u - units + 1);
        }
        if (shift && n > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret = n << shift;
        return 0;
}

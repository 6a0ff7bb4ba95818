/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small sysfs attributes: the HMAT figures of a node's access classes,
 * the names of node links and tier directories, the kernel's true/false. */

#include <errno.h>
#include <string.h>

#include "parse.h"
#include "util.h"

int ng_parse_hmat_value(const char *buf, int64_t *ret)
{
        uint64_t v;
        int r = ng_parse_u64_full(buf, &v);
        if (r < 0)
                return r;
        /* The kernel prints the u32 it holds; 0 is what it holds when the
         * firmware's table gave no value (drivers/acpi/numa/hmat.c). */
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = v == 0 ? NG_HMAT_UNKNOWN : (int64_t) v;
        return 0;
}

int ng_parse_prefixed_id(const char *name, const char *prefix, unsigned max, unsigned *ret)
{
        size_t n = strlen(prefix);
        if (strncmp(name, prefix, n) || name[n] < '0' || name[n] > '9')
                return -EINVAL;
        /* "node01" is no kernel name: refuse it rather than alias node1. */
        if (name[n] == '0' && name[n + 1])
                return -EINVAL;
        const char *p = name + n;
        uint64_t v;
        if (ng_parse_u64(&p, &v) < 0 || *p || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

int ng_parse_true_false(const char *buf, bool *ret)
{
        static const struct {
                const char *word;
                bool value;
        } words[] = {
                { "true", true }, { "false", false }, { "1", true }, { "0", false },
        };
        size_t len = strcspn(buf, "\n");
        if (buf[len] && buf[len + 1])
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strlen(words[i].word) == len && !strncmp(buf, words[i].word, len)) {
                        *ret = words[i].value;
                        return 0;
                }
        return -EINVAL;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small sysfs attributes: the HMAT figures of a node's access classes,
 * the names of node links and tier directories, the kernel's true/false,
 * the names of shmem's huge settings, a memory cgroup's limit and stat
 * lines. */

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

/* copy_word: [first, ...) of chars ok() into buf (size incl. NUL); the
 * number of chars taken, 0 if none or too long. */
static size_t copy_word(const char *s, char *buf, size_t size, bool (*ok)(char))
{
        size_t n = 0;
        while (s[n] && ok(s[n])) {
                if (n + 1 >= size)
                        return 0;
                buf[n] = s[n];
                n++;
        }
        buf[n] = '\0';
        return n;
}

static bool name_char(char ch)
{
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
}

static bool lower_char(char ch)
{
        return ch >= 'a' && ch <= 'z';
}

int ng_parse_feature_line(const char *line, struct ng_feature_line *ret)
{
        *ret = (struct ng_feature_line) { 0 };
        size_t n = copy_word(line, ret->name, sizeof(ret->name), name_char);
        if (!n || line[n] != ' ')
                return -EINVAL;
        line += n + 1;
        n = copy_word(line, ret->state, sizeof(ret->state), lower_char);
        if (!n || (line[n] != ' ' && line[n] != '\0'))
                return -EINVAL;
        line += n;
        if (*line == ' ')
                line++;
        size_t k = 0;
        for (; *line && *line != '\n' && k + 1 < sizeof(ret->detail); line++)
                ret->detail[k++] = (*line >= 0x20 && *line < 0x7f) ? *line : '?';
        ret->detail[k] = '\0';
        return 0;
}

static const char *const shmem_huge_names[] = {
        [NG_SHMEM_HUGE_UNKNOWN] = "unknown", [NG_SHMEM_HUGE_NEVER] = "never", [NG_SHMEM_HUGE_ALWAYS] = "always",
        [NG_SHMEM_HUGE_WITHIN_SIZE] = "within_size", [NG_SHMEM_HUGE_ADVISE] = "advise",
        [NG_SHMEM_HUGE_INHERIT] = "inherit", [NG_SHMEM_HUGE_DENY] = "deny", [NG_SHMEM_HUGE_FORCE] = "force",
};

const char *ng_shmem_huge_name(enum ng_shmem_huge h)
{
        return (unsigned) h < ELEMENTSOF(shmem_huge_names) ? shmem_huge_names[h] : "unknown";
}

enum ng_shmem_huge ng_shmem_huge_from_name(const char *name)
{
        for (size_t i = 1; name && i < ELEMENTSOF(shmem_huge_names); i++)
                if (!strcmp(name, shmem_huge_names[i]))
                        return (enum ng_shmem_huge) i;
        return NG_SHMEM_HUGE_UNKNOWN;
}

int ng_parse_cgroup_limit(const char *buf, uint64_t *ret)
{
        if (!strcmp(buf, "max\n") || !strcmp(buf, "max")) {
                *ret = UINT64_MAX;
                return 0;
        }
        return ng_parse_u64_full(buf, ret);
}

int ng_parse_keyed_u64(const char *buf, const char *key, uint64_t *ret)
{
        size_t k = strlen(key);
        for (const char *p = buf; *p; ) {
                const char *end = strchrnul(p, '\n');
                if ((size_t) (end - p) > k && !strncmp(p, key, k) && p[k] == ' ') {
                        char v[32];
                        size_t n = (size_t) (end - p) - k - 1;
                        if (n == 0 || n >= sizeof(v))
                                return -EINVAL;
                        memcpy(v, p + k + 1, n);
                        v[n] = '\0';
                        uint64_t x;
                        if (v[0] < '0' || v[0] > '9' || ng_parse_u64_full(v, &x) < 0)
                                return -EINVAL;
                        *ret = x;
                        return 0;
                }
                p = *end ? end + 1 : end;
        }
        return -ENOENT;
}

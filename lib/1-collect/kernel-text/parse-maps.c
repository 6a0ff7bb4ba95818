/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of the files that say where memory is: /proc/<pid>/maps,
 * /proc/<pid>/numa_maps and cgroup memory.numa_stat / hugetlb numa_stat.
 * Each line is copied (bounded) before it is split, so a parser never looks
 * past the buffer's NUL.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "parse-internal.h"
#include "util.h"

/* ---- /proc/<pid>/maps ---- */

void ng_maps_free(struct ng_map *m, size_t n)
{
        if (!m)
                return;
        for (size_t i = 0; i < n; i++)
                free(m[i].path);
        free(m);
}

static int maps_perms(const char *s, struct ng_map *m)
{
        if (strlen(s) != 4 || (s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
            (s[2] != 'x' && s[2] != '-') || (s[3] != 's' && s[3] != 'p'))
                return -EINVAL;
        m->read = s[0] == 'r';
        m->write = s[1] == 'w';
        m->exec = s[2] == 'x';
        m->shared = s[3] == 's';
        return 0;
}

static int maps_dev(const char *s, struct ng_map *m)
{
        uint64_t maj, min;

        if (ng_parse_hex_u64(&s, ':', &maj) < 0 || *s != ':')
                return -EINVAL;
        s++;
        if (ng_parse_hex_u64(&s, '\0', &min) < 0 || maj > UINT_MAX || min > UINT_MAX)
                return -EINVAL;
        m->dev_major = (unsigned)maj;
        m->dev_minor = (unsigned)min;
        return 0;
}

static int maps_range(const char *s, struct ng_map *m)
{
        if (ng_parse_hex_u64(&s, '-', &m->start) < 0 || *s != '-')
                return -EINVAL;
        s++;
        if (ng_parse_hex_u64(&s, '\0', &m->end) < 0 || m->end < m->start)
                return -EINVAL;
        return 0;
}

/* Consumes one blank-terminated field of the line at *p into a NUL-ended
 * copy within the line (the line is ours). */
static char *next_field(char **p)
{
        char *s = *p, *f;

        while (*s == ' ' || *s == '\t')
                s++;
        if (!*s)
                return NULL;
        f = s;
        while (*s && *s != ' ' && *s != '\t')
                s++;
        if (*s)
                *s++ = '\0';
        *p = s;
        return f;
}

/* The five fixed fields; *p is left at the (padded) path. Once a field is
 * missing every later one is NULL too, so checking inode first suffices. */
static int maps_fixed(char **p, struct ng_map *m)
{
        char *range = next_field(p), *perms = next_field(p), *off = next_field(p);
        char *dev = next_field(p), *inode = next_field(p);

        if (!inode || maps_range(range, m) < 0 || maps_perms(perms, m) < 0 ||
            ng_parse_field_hex(off, &m->offset) < 0 || maps_dev(dev, m) < 0 ||
            ng_parse_field_u64(inode, &m->inode) < 0)
                return -EINVAL;
        return 0;
}

/* "/SYSV%08x": the kernel names SysV segments after their key. */
static bool sysv_name(const char *path, int32_t *ret_key)
{
        const char *p = path + 5;
        uint64_t key;

        if (strncmp(path, "/SYSV", 5) != 0 || strlen(p) != 8 || ng_parse_field_hex(p, &key) < 0)
                return false;
        *ret_key = (int32_t)(uint32_t)key;
        return true;
}

static bool anon_private_name(const char *path)
{
        /* "[anon:NAME]" comes from PR_SET_VMA_ANON_NAME (5.17+) */
        return path[0] == '\0' || strcmp(path, "[heap]") == 0 || strncmp(path, "[anon:", 6) == 0;
}

static enum ng_map_kind maps_kind(struct ng_map *m)
{
        if (m->shared) {
                if (m->deleted && sysv_name(m->path, &m->sysv_key))
                        return NG_MAP_SYSV;
                /* shmem_zero_setup() and hugetlb_file_setup() names */
                if (m->deleted && (strcmp(m->path, "/dev/zero") == 0 ||
                                   strcmp(m->path, "/anon_hugepage") == 0))
                        return NG_MAP_ANON_SHARED;
                if (m->path[0] == '/')
                        return NG_MAP_FILE_SHARED;
                return NG_MAP_OTHER;
        }
        if (m->inode == 0 && anon_private_name(m->path))
                return NG_MAP_ANON_PRIVATE;
        /* MAP_PRIVATE | MAP_HUGETLB: the same unlinked hugetlbfs file as a
         * shared one (MariaDB's buffer pool under large_pages) */
        if (m->deleted && strcmp(m->path, "/anon_hugepage") == 0)
                return NG_MAP_ANON_PRIVATE;
        return NG_MAP_OTHER;
}

static void strip_deleted(char *path, bool *deleted)
{
        static const char suffix[] = " (deleted)";
        size_t len = strlen(path), k = strlen(suffix);

        *deleted = len >= k && strcmp(path + len - k, suffix) == 0;
        if (*deleted)
                path[len - k] = '\0';
}

/* A private mapping with no access ("---p") holds no memory: it reserves
 * address space, as glibc does beyond each malloc arena's heap and
 * MariaDB 10.11 does for innodb_buffer_pool_size_max (8 TiB by default)
 * behind the buffer pool it uses. */
static bool maps_keep(const struct ng_map *m, uint64_t min_private_bytes)
{
        if (m->shared)
                return true;
        return m->kind == NG_MAP_ANON_PRIVATE && min_private_bytes > 0 && (m->read || m->write) &&
               m->end - m->start >= min_private_bytes;
}

/* 1 and *m filled when kept, 0 when skipped, -EINVAL when malformed,
 * -ENOMEM. */
static int maps_line(char *line, uint64_t min_private_bytes, struct ng_map *m)
{
        char *p = line;

        *m = (struct ng_map) {};
        if (maps_fixed(&p, m) < 0)
                return -EINVAL;
        /* the path is padded to a column and may hold blanks itself */
        p += strspn(p, " \t");
        strip_deleted(p, &m->deleted);
        m->path = p;
        m->kind = maps_kind(m);
        if (m->kind != NG_MAP_SYSV)
                m->sysv_key = 0;
        if (!maps_keep(m, min_private_bytes))
                return 0;
        m->path = strdup(p);
        return m->path ? 1 : -ENOMEM;
}

/* Malformed lines are skipped and counted; paths are kept verbatim (maps
 * escapes only "\n", which we cannot tell from a literal "\012"). */
static int maps_item(char *line, void *item, void *userdata)
{
        return maps_line(line, *(const uint64_t *) userdata, item);
}

static void maps_free(void *array, size_t n)
{
        ng_maps_free(array, n);
}

int ng_parse_maps(const char *buf, uint64_t min_private_bytes, struct ng_map **ret, size_t *ret_n,
                  struct ng_parse_skipped *ret_skipped)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), maps_item, &min_private_bytes, maps_free, (void **) ret, ret_n,
                              ret_skipped);
}

/* ---- /proc/<pid>/numa_maps ---- */

/* Each policy's names: in numa_maps (mm/mempolicy.c policy_modes[]), the
 * numactl(8) option that starts a process under it, and systemd's
 * NUMAPolicy= (the modes 0 to 4 only). The one table of them. */
static const struct {
        const char *kernel, *numactl, *systemd;
} mpols[] = {
        [NG_MPOL_DEFAULT] = { "default", NULL, "default" },
        [NG_MPOL_PREFERRED] = { "prefer", "preferred", "preferred" },
        [NG_MPOL_BIND] = { "bind", "membind", "bind" },
        [NG_MPOL_INTERLEAVE] = { "interleave", "interleave", "interleave" },
        [NG_MPOL_LOCAL] = { "local", NULL, "local" },
        [NG_MPOL_PREFERRED_MANY] = { "prefer (many)", NULL, NULL },
        [NG_MPOL_WEIGHTED_INTERLEAVE] = { "weighted interleave", "weighted-interleave", NULL },
        [NG_MPOL_UNKNOWN] = { "unknown", NULL, NULL },
};

const char *ng_mpol_name(enum ng_mpol p)
{
        return (unsigned) p < ELEMENTSOF(mpols) ? mpols[p].kernel : "unknown";
}

const char *ng_mpol_numactl_option(enum ng_mpol m)
{
        return (unsigned) m < ELEMENTSOF(mpols) && mpols[m].numactl ? mpols[m].numactl : "interleave";
}

const char *ng_unit_numa_policy_name(int mode)
{
        return mode >= 0 && (size_t) mode < ELEMENTSOF(mpols) ? mpols[mode].systemd : NULL;
}

void ng_mpol_format(int mode, const unsigned long *mask, size_t nbits, char *buf, size_t size)
{
        const size_t wbits = 8 * sizeof(*mask);
        mode &= 0xff;   /* MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, ... */
        enum ng_mpol m = mode >= 0 && mode < NG_MPOL_UNKNOWN ? (enum ng_mpol) mode : NG_MPOL_UNKNOWN;
        int n = snprintf(buf, size, "%s", ng_mpol_name(m));
        char sep = ':';
        for (size_t i = 0; i < nbits && n > 0 && (size_t) n < size; i++) {
                if (!(mask[i / wbits] >> (i % wbits) & 1))
                        continue;
                size_t j = i;
                while (j + 1 < nbits && mask[(j + 1) / wbits] >> ((j + 1) % wbits) & 1)
                        j++;
                n += j > i ? snprintf(buf + n, size - (size_t) n, "%c%zu-%zu", sep, i, j)
                           : snprintf(buf + n, size - (size_t) n, "%c%zu", sep, i);
                sep = ',';
                i = j;
        }
}

static void numa_map_clear(struct ng_numa_map *m)
{
        free(m->policy_nodes);
        free(m->file);
        free(m->np);
}

void ng_numa_maps_free(struct ng_numa_map *m, size_t n)
{
        if (!m)
                return;
        for (size_t i = 0; i < n; i++)
                numa_map_clear(&m[i]);
        free(m);
}

static enum ng_mpol mpol_from_name(const char *name, size_t len)
{
        for (size_t i = 0; i < NG_MPOL_UNKNOWN; i++)
                if (strlen(mpols[i].kernel) == len && strncmp(name, mpols[i].kernel, len) == 0)
                        return (enum ng_mpol)i;
        return NG_MPOL_UNKNOWN;
}

/* mpol_to_str(): "NAME[=static|=relative[|balancing]][:NODES]". */
static int numa_policy(const char *s, struct ng_numa_map *m)
{
        const char *colon = strchr(s, ':');
        size_t len = colon ? (size_t)(colon - s) : strlen(s);
        const char *eq = memchr(s, '=', len);

        m->policy = mpol_from_name(s, eq ? (size_t)(eq - s) : len);
        m->policy_nodes = strdup(colon ? colon + 1 : "");
        return m->policy_nodes ? 0 : -ENOMEM;
}

/* Two policy names hold a blank ("prefer (many)", "weighted interleave"):
 * ng_parse_split() cut them in two, so join them again. Returns fields consumed. */
static size_t numa_policy_join(char **f, size_t n)
{
        size_t len = strlen(f[0]);

        if (n >= 2 && f[1] == f[0] + len + 1 &&
            ((strcmp(f[0], "prefer") == 0 && strncmp(f[1], "(many)", 6) == 0) ||
             (strcmp(f[0], "weighted") == 0 && strncmp(f[1], "interleave", 10) == 0))) {
                f[0][len] = ' ';
                return 2;
        }
        return 1;
}

static int numa_node_pages(const char *key, const char *val, struct ng_node_pages **np, size_t *n,
                           size_t *cap)
{
        uint64_t node, pages;
        int r;

        if (ng_parse_field_u64(key + 1, &node) < 0 || node >= NG_BITMAP_BITS ||
            ng_parse_field_u64(val, &pages) < 0 || *n >= NG_PARSE_MAX_NODES_PER_LINE)
                return -EINVAL;
        r = ng_grow(np, cap, *n, sizeof(**np), NG_PARSE_MAX_ENTRIES);
        if (r < 0)
                return r;
        (*np)[(*n)++] = (struct ng_node_pages) { .node = (int)node, .pages = pages };
        return 0;
}

static uint64_t *numa_counter(struct ng_numa_map *m, const char *key)
{
        static const struct {
                const char *key;
                size_t offset;
        } counters[] = {
                { "anon", offsetof(struct ng_numa_map, anon) },
                { "dirty", offsetof(struct ng_numa_map, dirty) },
                { "mapped", offsetof(struct ng_numa_map, mapped) },
                { "mapmax", offsetof(struct ng_numa_map, mapmax) },
                { "swapcache", offsetof(struct ng_numa_map, swapcache) },
                { "active", offsetof(struct ng_numa_map, active) },
                { "writeback", offsetof(struct ng_numa_map, writeback) },
                { "kernelpagesize_kB", offsetof(struct ng_numa_map, kernelpagesize_kib) },
        };

        for (size_t i = 0; i < ELEMENTSOF(counters); i++)
                if (strcmp(key, counters[i].key) == 0)
                        return (uint64_t *)((char *)m + counters[i].offset);
        return NULL;
}

static int numa_kv(char *key, char *val, struct ng_numa_map *m, size_t *cap)
{
        uint64_t *counter;

        if (strcmp(key, "file") == 0) {
                if (m->file)
                        return -EINVAL;
                m->file = strdup(val);
                if (!m->file)
                        return -ENOMEM;
                ng_unescape_octal(m->file);
                return 0;
        }
        /* The kernel prints no other key that starts with 'N': "N-1" or
         * "Nx" is a node that cannot be, never a newer kernel's field. */
        if (key[0] == 'N')
                return numa_node_pages(key, val, &m->np, &m->n_np, cap);
        counter = numa_counter(m, key);
        if (!counter)
                return 0;       /* a newer kernel's field */
        return ng_parse_field_u64(val, counter);
}

static int numa_token(char *tok, struct ng_numa_map *m, size_t *cap)
{
        char *eq = strchr(tok, '=');

        if (!eq) {
                if (strcmp(tok, "heap") == 0)
                        m->heap = true;
                else if (strcmp(tok, "stack") == 0)
                        m->stack = true;
                else if (strcmp(tok, "huge") == 0)
                        m->huge = true;
                return 0;
        }
        *eq = '\0';
        return numa_kv(tok, eq + 1, m, cap);
}

/* 1 when *m holds a line, -EINVAL when it is malformed, -ENOMEM. */
static int numa_line(char *line, struct ng_numa_map *m)
{
        char *f[NG_PARSE_MAX_NODES_PER_LINE + 16];
        size_t n = ng_parse_split(line, f, ELEMENTSOF(f)), i, cap = 0;
        int r;

        *m = (struct ng_numa_map) {};
        if (n < 2 || n > ELEMENTSOF(f) || ng_parse_field_hex(f[0], &m->start) < 0)
                return -EINVAL;
        i = 1 + numa_policy_join(f + 1, n - 1);
        r = numa_policy(f[1], m);
        for (; r == 0 && i < n; i++)
                r = numa_token(f[i], m, &cap);
        if (r == 0)
                return 1;
        numa_map_clear(m);
        return r == -ENOMEM ? r : -EINVAL;
}

/* ng_parse_numa_maps() says what is skipped (parse.h). */
static int numa_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        return numa_line(line, item);
}

static void numa_free(void *array, size_t n)
{
        ng_numa_maps_free(array, n);
}

int ng_parse_numa_maps(const char *buf, struct ng_numa_map **ret, size_t *ret_n,
                       struct ng_parse_skipped *ret_skipped)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), numa_item, NULL, numa_free, (void **) ret, ret_n, ret_skipped);
}

/* ---- memory.numa_stat, hugetlb.<size>.numa_stat ---- */

void ng_numa_stat_free(struct ng_numa_stat_line *l, size_t n)
{
        if (!l)
                return;
        for (size_t i = 0; i < n; i++)
                free(l[i].np);
        free(l);
}

/* "anon" (v2) or "total=12" (v1 and hugetlb). */
static int numa_stat_key(const char *f, struct ng_numa_stat_line *l)
{
        const char *eq = strchr(f, '=');
        size_t len = eq ? (size_t)(eq - f) : strlen(f);

        if (len == 0 || len >= sizeof(l->key) || (f[0] == 'N' && f[1] >= '0' && f[1] <= '9'))
                return -EINVAL;
        /* kernel keys are [a-z0-9_]; anything else is not a stat line */
        for (size_t i = 0; i < len; i++)
                if (!((f[i] >= 'a' && f[i] <= 'z') || (f[i] >= '0' && f[i] <= '9') || f[i] == '_'))
                        return -EINVAL;
        memcpy(l->key, f, len);
        l->key[len] = '\0';
        if (!eq)
                return 0;
        l->has_total = true;
        return ng_parse_field_u64(eq + 1, &l->total);
}

/* 1 when *l holds a line, 0 when skipped, -ENOMEM. */
static int numa_stat_line(char *line, struct ng_numa_stat_line *l)
{
        char *f[NG_PARSE_MAX_NODES_PER_LINE + 2];
        size_t n = ng_parse_split(line, f, ELEMENTSOF(f)), cap = 0;
        int r = 0;

        *l = (struct ng_numa_stat_line) {};
        if (n == 0 || n > ELEMENTSOF(f) || numa_stat_key(f[0], l) < 0)
                return 0;
        for (size_t i = 1; r == 0 && i < n; i++) {
                char *eq = strchr(f[i], '=');

                if (!eq || f[i][0] != 'N') {
                        r = -EINVAL;
                        break;
                }
                *eq = '\0';
                r = numa_node_pages(f[i], eq + 1, &l->np, &l->n_np, &cap);
        }
        if (r == 0)
                return 1;
        free(l->np);
        return r == -ENOMEM ? r : 0;
}

/* Lines whose key is not [a-z0-9_] or with a token other than N<id>=<n>
 * are skipped. */
static int numa_stat_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        return numa_stat_line(line, item);
}

static void numa_stat_free(void *array, size_t n)
{
        ng_numa_stat_free(array, n);
}

int ng_parse_numa_stat(const char *buf, struct ng_numa_stat_line **ret, size_t *ret_n)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), numa_stat_item, NULL, numa_stat_free, (void **) ret, ret_n, NULL);
}

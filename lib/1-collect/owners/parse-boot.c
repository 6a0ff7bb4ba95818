/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hugepage pools as the boot configuration sets them (ng-owner.h): the
 * kernel command line (Documentation/admin-guide/mm/hugetlbpage.rst:
 * "hugepagesz=", "hugepages=", the per-node form "hugepages=0:N,1:M",
 * "default_hugepagesz=", and Documentation/admin-guide/sysctl's
 * "sysctl.vm.nr_hugepages="), sysctl.d(5) files and numaguard's own
 * tmpfiles.d file.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-owner.h"
#include "parse.h"
#include "owner-internal.h"
#include "util.h"

static int push(struct ng_boot_pool **pools, size_t *n, struct ng_boot_pool bp)
{
        size_t cap = *n;        /* grown one at a time: a handful of entries */
        int r = ng_grow(pools, &cap, *n, sizeof(**pools), NG_PARSE_MAX_ENTRIES);
        if (r < 0)
                return r;
        (*pools)[(*n)++] = bp;
        return 0;
}

/* "2M", "1G", "2048k": KiB, or 0. Same spelling the kernel's memparse takes. */
static uint64_t size_kib(const char *s, size_t len)
{
        uint64_t v = 0;
        size_t i = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
                if (v > UINT64_MAX / 10 / 1024 / 1024)
                        return 0;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        if (i == 0 || i + 1 != len)
                return 0;
        switch (s[i]) {
        case 'k': case 'K': return v;
        case 'm': case 'M': return v * 1024;
        case 'g': case 'G': return v * 1024 * 1024;
        }
        return 0;
}

/* A plain number, as the whole of s: the global form. */
static bool total(const char *s, size_t len, uint64_t *ret)
{
        char buf[32];
        if (len == 0 || len >= sizeof(buf))
                return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        const char *p = buf;
        return ng_parse_u64(&p, ret) >= 0 && !*p;
}

/* "0:512,1:512" -> entries; "512" -> one NG_BOOT_ALL_NODES entry. */
static int per_node(const char *s, size_t len, uint64_t kib, struct ng_boot_pool **pools, size_t *n)
{
        char buf[512];
        uint64_t all;
        if (kib == 0)
                return 0;
        if (total(s, len, &all))
                return push(pools, n, (struct ng_boot_pool) { .node = NG_BOOT_ALL_NODES, .page_kib = kib,
                                                              .pages = all, .setting = all });
        if (!memchr(s, ':', len) || len >= sizeof(buf))
                return 0;
        memcpy(buf, s, len);
        buf[len] = '\0';
        size_t start = *n;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                const char *p = tok;
                uint64_t node, pages;
                if (ng_parse_u64(&p, &node) < 0 || *p++ != ':' || ng_parse_u64(&p, &pages) < 0 || *p ||
                    node > 4095) {
                        *n = start;     /* the kernel rejects the whole parameter */
                        return 0;
                }
                int r = push(pools, n, (struct ng_boot_pool) { .node = (int) node, .page_kib = kib, .pages = pages });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Adds kib to the sizes v lists, if absent (up to 16: more sizes than any
 * architecture has). */
static void list_kib(uint64_t *v, size_t *n, uint64_t kib)
{
        if (*n < 16 && !ng_kib_listed(v, *n, kib))
                v[(*n)++] = kib;
}

/* The kernel's own rules (mm/hugetlb.c: hugepagesz_setup, hugepages_setup
 * and hugetlb_init), which it applies with a warning in dmesg that nobody
 * reads: a hugepages= goes to the size of the hugepagesz= before it, and
 * the first hugepages= of a size is the one that counts; a second
 * hugepagesz= of one size (unless it names the default size whose pages
 * are not set yet) is ignored, with the hugepages= after it; so is a
 * hugepages= after an unreadable size. */
int ng_parse_hugepages_cmdline(const char *cmdline, uint64_t default_kib, struct ng_boot_pool **pools, size_t *n)
{
        if (!cmdline || !pools || !n)
                return -EINVAL;
        /* default_hugepagesz= may come anywhere */
        bool explicit_default = false;
        for (const char *p = cmdline; (p = strstr(p, "default_hugepagesz=")); p++)
                if (p == cmdline || p[-1] == ' ') {
                        const char *v = p + strlen("default_hugepagesz=");
                        uint64_t k = size_kib(v, strcspn(v, " \n"));
                        if (k) {
                                default_kib = k;
                                explicit_default = true;
                        }
                }
        /* named: sizes a hugepagesz= named; given: sizes a hugepages= set */
        uint64_t cur = default_kib, named[16], given[16];
        size_t n_named = 0, n_given = 0;
        bool valid = true;
        for (const char *p = cmdline; *p;) {
                p += strspn(p, " \n\t");
                size_t len = strcspn(p, " \n\t");
                if (len > 11 && !strncmp(p, "hugepagesz=", 11)) {
                        uint64_t k = size_kib(p + 11, len - 11);
                        valid = k && (!ng_kib_listed(named, n_named, k) ||
                                      (explicit_default && k == default_kib && !ng_kib_listed(given, n_given, k)));
                        if (valid) {
                                list_kib(named, &n_named, k);
                                cur = k;
                        }
                } else if (len > 10 && !strncmp(p, "hugepages=", 10)) {
                        if (!valid)
                                valid = true;   /* ignored, as its hugepagesz= was */
                        else if (!ng_kib_listed(given, n_given, cur)) {
                                size_t before = *n;
                                int r = per_node(p + 10, len - 10, cur, pools, n);
                                if (r < 0)
                                        return r;
                                if (*n > before)
                                        list_kib(given, &n_given, cur);
                        }
                } else if ((len > 23 && !strncmp(p, "sysctl.vm.nr_hugepages=", 23)) ||
                           (len > 23 && !strncmp(p, "sysctl.vm/nr_hugepages=", 23))) {
                        /* Linux >= 5.8 writes it to /proc/sys before init runs:
                         * the default size only, whatever hugepagesz= came before */
                        uint64_t pages;
                        int r = total(p + 23, len - 23, &pages) && default_kib
                                        ? push(pools, n, (struct ng_boot_pool) {
                                                  .node = NG_BOOT_ALL_NODES, .page_kib = default_kib, .pages = pages,
                                                  .setting = pages, .source = NG_BOOT_CMDLINE_SYSCTL })
                                        : 0;
                        if (r < 0)
                                return r;
                }
                p += len;
        }
        return 0;
}

/* "w /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages - - - - 512" */
static int tmpfiles_line(char *line, void *item, void *userdata)
{
        unsigned *lineno = userdata;
        ++*lineno;
        struct ng_boot_pool *bp = item;
        char type[8], path[256], f[4][8];
        uint64_t pages;
        int node;
        unsigned long kib;
        char tail;
        if (sscanf(line, "%7s %255s %7s %7s %7s %7s %" SCNu64 " %c", type, path, f[0], f[1], f[2], f[3], &pages,
                   &tail) != 7 || strcmp(type, "w"))
                return 0;
        if (sscanf(path, "/sys/devices/system/node/node%d/hugepages/hugepages-%lukB/nr_hugepages%c", &node, &kib,
                   &tail) != 2 || node < 0 || node > 4095 || kib == 0)
                return 0;
        *bp = (struct ng_boot_pool) { .node = node, .page_kib = kib, .pages = pages, .from_file = true,
                                      .line = *lineno, .source = NG_BOOT_TMPFILES };
        return 1;
}

static void free_pools(void *a, size_t n)
{
        (void) n;
        free(a);
}

int ng_parse_hugepages_tmpfiles(const char *text, struct ng_boot_pool **pools, size_t *n)
{
        if (!text || !pools || !n)
                return -EINVAL;
        _cleanup_free_ struct ng_boot_pool *v = NULL;
        size_t k = 0;
        unsigned lineno = 0;
        int r = ng_parse_lines(text, sizeof(*v), tmpfiles_line, &lineno, free_pools, (void **) &v, &k, NULL);
        if (r < 0)
                return r;
        size_t i;
        for (i = 0; i < k && r >= 0; i++)
                r = push(pools, n, v[i]);
        return r;
}

/* "vm.nr_hugepages", "vm/nr_hugepages", "-vm.nr_hugepages_mempolicy" */
static bool hugepages_key(const char *k, size_t len)
{
        if (len && *k == '-')
                k++, len--;
        static const char *const keys[] = { "vm.nr_hugepages", "vm.nr_hugepages_mempolicy" };
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                if (strlen(keys[i]) != len)
                        continue;
                size_t j = 0;
                while (j < len && (k[j] == keys[i][j] || (keys[i][j] == '.' && k[j] == '/')))
                        j++;
                if (j == len)
                        return true;
        }
        return false;
}

int ng_parse_sysctl_hugepages(const char *text, uint64_t *ret_pages, unsigned *ret_line)
{
        if (!text || !ret_pages || !ret_line)
                return -EINVAL;
        unsigned lineno = 0;
        int found = 0;
        for (const char *p = text; *p;) {
                size_t len = strcspn(p, "\n");
                const char *l = p, *end = p + len;
                lineno++;
                p = *end ? end + 1 : end;
                while (l < end && (*l == ' ' || *l == '\t'))
                        l++;
                if (l == end || *l == '#' || *l == ';')
                        continue;
                const char *eq = memchr(l, '=', (size_t) (end - l));
                if (!eq)
                        continue;
                const char *ke = eq;
                while (ke > l && (ke[-1] == ' ' || ke[-1] == '\t'))
                        ke--;
                if (!hugepages_key(l, (size_t) (ke - l)))
                        continue;
                const char *v = eq + 1, *ve = end;
                while (v < ve && (*v == ' ' || *v == '\t'))
                        v++;
                while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
                        ve--;
                uint64_t pages;
                if (!total(v, (size_t) (ve - v), &pages))
                        continue;
                *ret_pages = pages;
                *ret_line = lineno;
                found = 1;
        }
        return found;
}

void ng_boot_pool_describe(const struct ng_boot_pool *bp, char *buf, size_t size)
{
        const char *split = bp->split ? ", split by the kernel" : "";
        switch (bp->source) {
        case NG_BOOT_CMDLINE:
                if (bp->split)
                        snprintf(buf, size, "the kernel command line: hugepages=%" PRIu64 "%s", bp->setting, split);
                else
                        snprintf(buf, size, "the kernel command line");
                break;
        case NG_BOOT_CMDLINE_SYSCTL:
                snprintf(buf, size, "the kernel command line: sysctl.vm.nr_hugepages=%" PRIu64 "%s", bp->setting,
                         split);
                break;
        case NG_BOOT_SYSCTL:
                snprintf(buf, size, "%s line %u: vm.nr_hugepages = %" PRIu64 "%s", bp->file, bp->line, bp->setting,
                         split);
                break;
        case NG_BOOT_TMPFILES:
                snprintf(buf, size, "%s line %u", NG_HUGEPAGES_BOOT_FILE, bp->line);
                break;
        }
}

const struct ng_boot_pool *ng_boot_pool_find(const struct ng_boot_pool *pools, size_t n, int node, uint64_t page_kib)
{
        const struct ng_boot_pool *cmd = NULL, *file = NULL;
        for (size_t i = 0; i < n; i++)
                if (pools[i].node == node && pools[i].page_kib == page_kib)
                        *(pools[i].from_file ? &file : &cmd) = &pools[i];
        return file ? file : cmd;
}

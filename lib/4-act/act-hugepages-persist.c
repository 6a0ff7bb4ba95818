/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hugepage pools that last (ng-act-hugepages.h, --persist): a pool grown at
 * runtime is gone after a reboot unless the boot configuration asks for it.
 * numaguard owns one tmpfiles.d file for that; systemd-tmpfiles-setup
 * writes its lines before sysinit.target, early enough for a database
 * started later.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action-internal.h"
#include "cleanup.h"
#include "ng-act-cpuset.h"
#include "ng-act-hugepages.h"
#include "owner.h"
#include "util.h"

#define HEADER "# Hugepage pools per node at boot, written by numaguardctl hugepages apply|reserve --persist.\n" \
               "# systemd-tmpfiles writes each line early in boot (tmpfiles.d(5), type w).\n"

static void line_for(const struct ng_boot_pool *bp, char *buf, size_t size)
{
        snprintf(buf, size, "w /sys/devices/system/node/node%d/hugepages/hugepages-%" PRIu64 "kB/nr_hugepages - - - - %"
                 PRIu64, bp->node, bp->page_kib, bp->pages);
}

static int cmp_pool(const void *x, const void *y)
{
        const struct ng_boot_pool *a = x, *b = y;
        if (a->page_kib != b->page_kib)
                return a->page_kib < b->page_kib ? -1 : 1;
        return a->node < b->node ? -1 : a->node > b->node;
}

/* The file's pools with the plan's targets over them, sorted. */
static int merge(const struct ng_act_hugepages *a, const char *old, struct ng_boot_pool **ret, size_t *ret_n)
{
        _cleanup_free_ struct ng_boot_pool *v = NULL;
        size_t n = 0;
        int r = old ? ng_parse_hugepages_tmpfiles(old, &v, &n) : 0;
        size_t cap = n;         /* what the parser allocated holds n at least */
        for (size_t i = 0; i < a->n_nodes && r >= 0; i++) {
                struct ng_boot_pool want = { .node = a->nodes[i].id, .page_kib = a->page_kib,
                                             .pages = a->nodes[i].target_pages, .from_file = true };
                bool found = false;
                for (size_t k = 0; k < n; k++)
                        if (v[k].node == want.node && v[k].page_kib == want.page_kib) {
                                v[k].pages = want.pages;
                                found = true;
                        }
                if (found)
                        continue;
                r = ng_grow(&v, &cap, n, sizeof(*v), 0);
                if (r >= 0)
                        v[n++] = want;
        }
        if (r < 0)
                return r;
        qsort(v, n, sizeof(*v), cmp_pool);
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

static int render(const struct ng_boot_pool *v, size_t n, char **ret)
{
        size_t size = sizeof(HEADER) + n * 128;
        char *out = malloc(size), line[128];
        if (!out)
                return -ENOMEM;
        size_t len = (size_t) snprintf(out, size, "%s", HEADER);
        for (size_t i = 0; i < n; i++) {
                line_for(&v[i], line, sizeof(line));
                len += (size_t) snprintf(out + len, size - len, "%s\n", line);
        }
        *ret = out;
        return 0;
}

/* One write per node of the plan whose line is new or changes (those past
 * a full res are not recorded). 0 or -ENOMEM. */
static int record(struct ng_action_result *res, const struct ng_act_hugepages *a, const struct ng_boot_pool *old,
                  size_t n_old, const struct ng_boot_pool *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                bool ours = false;
                for (size_t k = 0; k < a->n_nodes; k++)
                        ours |= a->nodes[k].id == v[i].node && a->page_kib == v[i].page_kib;
                const struct ng_boot_pool *was = ng_boot_pool_find(old, n_old, v[i].node, v[i].page_kib);
                if (!ours || (was && was->pages == v[i].pages))
                        continue;
                struct ng_write *w;
                int r = ng_action_result_add(res, NG_WRITE_CONFIG_LINE, &w);
                if (r == -E2BIG)
                        continue;
                if (r < 0)
                        return r;
                snprintf(w->path, sizeof(w->path), "%s:%zu", NG_HUGEPAGES_BOOT_FILE, i + 3);
                line_for(&v[i], w->value, sizeof(w->value));
                if (was)
                        line_for(was, w->before, sizeof(w->before));
        }
        return 0;
}

/* "hugepagesz=2M hugepages=0:512,1:512" for the file's pools of a's size. */
static void cmdline_form(const struct ng_act_hugepages *a, const struct ng_boot_pool *v, size_t n, char *buf,
                         size_t size)
{
        char sz[16];
        ng_hugepage_size_format(a->page_kib, sz, sizeof(sz));
        size_t len = (size_t) snprintf(buf, size, "hugepagesz=%s hugepages=", sz);
        const char *sep = "";
        for (size_t i = 0; i < n && len < size; i++)
                if (v[i].page_kib == a->page_kib) {
                        len += (size_t) snprintf(buf + len, size - len, "%s%d:%" PRIu64, sep, v[i].node, v[i].pages);
                        sep = ",";
                }
}

/* The file parsed back holds every line written. */
static int verify(const struct ng_action_ops *ops, const struct ng_path *p, const struct ng_boot_pool *v, size_t n,
                  struct ng_action_result *res)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ struct ng_boot_pool *back = NULL;
        size_t nb = 0;
        int r = ops->read_text(ops->userdata, p, NG_HUGEPAGES_BOOT_FILE, &text);
        if (r >= 0)
                r = ng_parse_hugepages_tmpfiles(text, &back, &nb);
        for (size_t i = 0; i < n && r >= 0; i++) {
                const struct ng_boot_pool *b = ng_boot_pool_find(back, nb, v[i].node, v[i].page_kib);
                if (!b || b->pages != v[i].pages)
                        r = -EIO;
        }
        for (size_t i = 0; i < res->n_writes && r >= 0; i++)
                if (res->writes[i].kind == NG_WRITE_CONFIG_LINE)
                        snprintf(res->writes[i].after, sizeof(res->writes[i].after), "%s", res->writes[i].value);
        return r;
}

static void appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
        size_t n = strlen(buf);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + n, size - n, fmt, ap);
        va_end(ap);
}

int ng_act_hugepages_persist(const struct ng_act_hugepages *a, const struct ng_path *p,
                             const struct ng_action_ops *ops, bool dry_run, struct ng_action_result *res)
{
        struct ng_action_ops o;
        if (!a || !ops || !res || ng_action_ops_complete(ops, &o) < 0)
                return -EINVAL;
        _cleanup_free_ char *old = NULL, *text = NULL;
        _cleanup_free_ struct ng_boot_pool *was = NULL, *v = NULL;
        char cmd[256];
        size_t n_was = 0, n = 0;
        int r = o.read_text(o.userdata, p, NG_HUGEPAGES_BOOT_FILE, &old);
        if (r == -ENOENT)
                r = 0;
        if (r >= 0 && old)
                r = ng_parse_hugepages_tmpfiles(old, &was, &n_was);
        if (r >= 0)
                r = merge(a, old, &v, &n);
        if (r >= 0)
                r = render(v, n, &text);
        if (r >= 0)
                r = record(res, a, was, n_was, v, n);
        if (r >= 0) {
                if (!dry_run && (!old || strcmp(old, text)))
                        r = o.replace_file(o.userdata, p, NG_HUGEPAGES_BOOT_FILE, text);
                if (r >= 0 && !dry_run)
                        r = verify(&o, p, v, n, res);
        }
        if (r >= 0) {
                cmdline_form(a, v, n, cmd, sizeof(cmd));
                appendf(res->summary, sizeof(res->summary), "; at boot: %s %s (kernel command line form: %s%s)",
                        dry_run ? "would be in" : "in", NG_HUGEPAGES_BOOT_FILE, cmd,
                        a->page_kib >= 1048576 ? ", better for 1 GiB pages: only a fresh kernel reliably finds them" : "");
        } else {
                res->outcome = ng_outcome_for_errno(r);
                if (!res->error)
                        res->error = r;
                appendf(res->summary, sizeof(res->summary), "; recording the pools for boot in %s failed: %s",
                        NG_HUGEPAGES_BOOT_FILE, strerror(-r));
        }
        return 0;
}

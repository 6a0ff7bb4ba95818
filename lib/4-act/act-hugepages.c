/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hugepage pools per node: targets checked against supply (pure), then
 * written per node, read back, compacted and retried when short. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "action-internal.h"
#include "cleanup.h"
#include "ng-act-hugepages.h"
#include "ng-reserve.h"
#include "units.h"
#include "util.h"

#define MIB (UINT64_C(1) << 20)
/* Larger than any hugepage size a kernel offers (16 GiB on POWER). */
#define MAX_PAGE_KIB (UINT64_C(16) << 20)

static void appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
        size_t n = strnlen(buf, size);
        if (n + 1 >= size)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + n, size - n, fmt, ap);
        va_end(ap);
}

/* "; " between the parts of a note or summary. */
static const char *sep(const char *buf)
{
        return buf[0] ? "; " : "";
}

int ng_hugepage_size_parse(const char *s, uint64_t *ret_kib)
{
        static const struct {
                const char *suffix;
                uint64_t kib;
        } units[] = {
                { "k", 1 }, { "kb", 1 }, { "kib", 1 },
                { "m", 1024 }, { "mb", 1024 }, { "mib", 1024 },
                { "g", 1024 * 1024 }, { "gb", 1024 * 1024 }, { "gib", 1024 * 1024 },
        };
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || v == 0 || v > MAX_PAGE_KIB)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (strcasecmp(end, units[i].suffix) != 0)
                        continue;
                if (v * units[i].kib > MAX_PAGE_KIB)
                        return -EINVAL;
                *ret_kib = v * units[i].kib;
                return 0;
        }
        return -EINVAL;
}

void ng_hugepage_size_format(uint64_t kib, char *buf, size_t size)
{
        if (kib && kib % (1024 * 1024) == 0)
                snprintf(buf, size, "%" PRIu64 "G", kib / (1024 * 1024));
        else if (kib && kib % 1024 == 0)
                snprintf(buf, size, "%" PRIu64 "M", kib / 1024);
        else
                snprintf(buf, size, "%" PRIu64 "K", kib);
}

/* ------------------------------------------------------------ planning */

static struct ng_act_hugepages *act_new(size_t n_nodes, uint64_t page_kib, uint64_t floor_bytes)
{
        _ng_cleanup_(ng_act_hugepages_freep) struct ng_act_hugepages *a = calloc(1, sizeof(*a));
        if (!a)
                return NULL;
        a->nodes = calloc(n_nodes ? n_nodes : 1, sizeof(*a->nodes));
        if (!a->nodes)
                return NULL;
        a->page_kib = page_kib;
        a->floor_bytes = floor_bytes;
        return ng_steal_ptr(&a);
}

void ng_act_hugepages_free(struct ng_act_hugepages *a)
{
        if (!a)
                return;
        free(a->nodes);
        free(a);
}

/* Every row of the plan with a pool of the size is in the action, those
 * not asked for at their current size, so that the boot line names them
 * all. The rows carry the supply (ng_node_supply()): nothing here reads
 * the snapshot's memory again. */
static void add_nodes(struct ng_act_hugepages *a, const struct ng_plan *p)
{
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_node_supply *sup = &p->nodes[i].supply;
                if (!sup->has_pool)
                        continue;
                struct ng_act_hugepages_node *an = &a->nodes[a->n_nodes++];
                an->id = sup->id;
                an->pool_unknown = !sup->nr_pages.known || !sup->free_pages.known;
                an->nr_pages = sup->nr_pages.v;
                an->free_pages = sup->free_pages.v;
                an->in_use_pages = an->nr_pages - an->free_pages;
                an->supply = *sup;
                an->asked_pages = an->target_pages = an->nr_pages;
        }
}

static struct ng_act_hugepages_node *act_node(struct ng_act_hugepages *a, int id)
{
        for (size_t i = 0; i < a->n_nodes; i++)
                if (a->nodes[i].id == id)
                        return &a->nodes[i];
        return NULL;
}

static int ask(struct ng_act_hugepages *a, int id, uint64_t pages)
{
        struct ng_act_hugepages_node *an = act_node(a, id);
        if (!an)
                return -EOPNOTSUPP;
        an->asked_pages = an->target_pages = pages;
        an->asked = true;
        return 0;
}

static int reserve_spread(struct ng_act_hugepages *a, const struct ng_snapshot *s, uint64_t pages)
{
        struct ng_bitmap ids = {0};
        uint64_t n = 0, k = 0;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (s->topo.nodes[i].has_memory) {
                        ng_bitmap_set(&ids, (unsigned) s->topo.nodes[i].id);
                        n++;
                }
        if (n == 0)
                return -ENXIO;
        NG_BITMAP_FOREACH(id, &ids) {
                int r = ask(a, id, pages / n + (k++ < pages % n ? 1 : 0));
                if (r < 0)
                        return r;
        }
        char list[256];
        ng_bitmap_format_list(&ids, list, sizeof(list));
        appendf(a->note, sizeof(a->note), "%" PRIu64 " pages spread evenly over the nodes with memory %s (%" PRIu64
                " each%s)", pages, list, pages / n, pages % n ? ", one more on the lowest" : "");
        return 0;
}

/* Never below the pages in use; growth must fit in the row's memory above
 * the floor (ng_node_supply()). */
static void check_supply(struct ng_act_hugepages *a)
{
        uint64_t page_bytes = ng_kib_bytes_sat(a->page_kib);
        char sz[16];
        ng_hugepage_size_format(a->page_kib, sz, sizeof(sz));
        for (size_t i = 0; i < a->n_nodes; i++) {
                struct ng_act_hugepages_node *an = &a->nodes[i];
                if (an->pool_unknown) {
                        /* Never size a pool nobody could read. */
                        if (an->asked) {
                                a->refused = a->unknown = true;
                                appendf(a->reason, sizeof(a->reason), "%snode %d: its %s pool is unknown (a counter "
                                        "is missing or cannot be true), so %" PRIu64 " pages cannot be planned",
                                        sep(a->reason), an->id, sz, an->asked_pages);
                        }
                        continue;
                }
                if (an->target_pages < an->in_use_pages) {
                        appendf(a->note, sizeof(a->note), "%snode %d: %" PRIu64 " pages in use, kept %" PRIu64
                                " instead of %" PRIu64, sep(a->note), an->id, an->in_use_pages, an->in_use_pages,
                                an->asked_pages);
                        an->target_pages = an->in_use_pages;
                }
                if (an->target_pages <= an->nr_pages)
                        continue;
                uint64_t more = an->target_pages - an->nr_pages, need = ng_mul_sat(more, page_bytes);
                const struct ng_node_supply *sup = &an->supply;
                if (!sup->avail_bytes.known) {
                        /* Never plan on supply nobody could read. */
                        a->refused = a->unknown = true;
                        appendf(a->reason, sizeof(a->reason), "%snode %d: %" PRIu64 " more %s pages, but the "
                                "node's free memory is unknown (its meminfo is missing or cannot be true)",
                                sep(a->reason), an->id, more, sz);
                        continue;
                }
                if (need <= sup->avail_bytes.v)
                        continue;
                a->refused = true;
                appendf(a->reason, sizeof(a->reason), "%snode %d: %" PRIu64 " more %s pages need %" PRIu64
                        " MiB, MemFree is %" PRIu64 " MiB, floor %" PRIu64 " MiB", sep(a->reason), an->id, more,
                        sz, need / MIB, sup->free_bytes.v / MIB, sup->floor_bytes / MIB);
        }
}

int ng_act_hugepages_plan_reserve(const struct ng_snapshot *s, uint64_t floor_bytes, uint64_t page_kib,
                                  uint64_t pages, int node, struct ng_act_hugepages **ret)
{
        assert(s && ret);
        _ng_cleanup_(ng_plan_freep) struct ng_plan *rows = NULL;
        if (ng_plan_supply(s, floor_bytes, page_kib, &rows) < 0)
                return -ENOMEM;
        _ng_cleanup_(ng_act_hugepages_freep) struct ng_act_hugepages *a = act_new(s->topo.n_nodes, page_kib,
                                                                                   floor_bytes);
        if (!a)
                return -ENOMEM;
        add_nodes(a, rows);
        int r;
        if (node >= 0) {
                const struct ng_node *nd = ng_snapshot_node(s, node);
                r = nd && nd->has_memory ? ask(a, node, pages) : -ENXIO;
        } else
                r = reserve_spread(a, s, pages);
        if (r < 0)
                return r;
        check_supply(a);
        *ret = ng_steal_ptr(&a);
        return 0;
}

int ng_act_hugepages_plan_apply(const struct ng_snapshot *s, uint64_t floor_bytes, const struct ng_plan *p,
                                struct ng_act_hugepages **ret)
{
        assert(s && p && ret);
        _ng_cleanup_(ng_act_hugepages_freep) struct ng_act_hugepages *a = act_new(p->n_nodes, p->page_kib, floor_bytes);
        if (!a)
                return -ENOMEM;
        add_nodes(a, p);
        /* A size nobody could read plans nothing: refuse rather than call
         * the pools enough. */
        for (size_t i = 0; i < p->n_instances; i++)
                if (p->instances[i].bytes_unknown) {
                        a->refused = a->unknown = true;
                        appendf(a->reason, sizeof(a->reason), "%sthe shared memory of %s has a segment of unknown "
                                "size (see AUDIT_INCOMPLETE): its pages cannot be planned", sep(a->reason),
                                p->instances[i].name);
                }
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_plan_node *pn = &p->nodes[i];
                if (pn->target_pages == pn->nr_pages)
                        continue;
                int r = ask(a, pn->id, pn->target_pages);
                if (r < 0)
                        return r;
        }
        appendf(a->note, sizeof(a->note), "targets of hugepages plan: %" PRIu64 " pages needed, %" PRIu64
                " in the pools", p->need_pages, p->nr_pages);
        check_supply(a);
        *ret = ng_steal_ptr(&a);
        return 0;
}

/* ----------------------------------------------------------- carrying out */

struct run {
        const struct ng_act_hugepages *a;
        const struct ng_path *p;
        const struct ng_action_ops *ops;
        struct ng_action_result *res;
        char size[16];
        char parts[512];        /* per node, joined into the summary */
        bool e2big;
};

static void chomp(char *s)
{
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
}

static int parse_pages(const char *s, uint64_t *ret)
{
        char *end;
        if (*s < '0' || *s > '9')
                return -EIO;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || (*end && *end != '\n'))
                return -EIO;
        *ret = v;
        return 0;
}

/* The node's own compaction file (CONFIG_COMPACTION with CONFIG_NUMA, since
 * 2.6.35), else the global one; false when the kernel has neither. Both
 * compact synchronously: the write returns when the pass is over. */
static bool compact_path(const struct run *x, int id, char *buf, size_t size)
{
        uint64_t bytes;
        snprintf(buf, size, NG_SYS_NODE_DIR "/node%d/compact", id);
        if (ng_path_file_size(x->p, &bytes, "%s", buf) >= 0)
                return true;
        snprintf(buf, size, NG_PROC_DIR "/sys/vm/compact_memory");
        return ng_path_file_size(x->p, &bytes, "%s", buf) >= 0;
}

/* Rewrites the target until the node reads it back, at most
 * NG_ACT_HP_RETRIES times, each after a compaction (shown once per node)
 * and a doubling sleep. Returns the retries made. */
static unsigned retry_short(struct run *x, const struct ng_act_hugepages_node *an, const char *path,
                            size_t w_idx, uint64_t *granted)
{
        char cpath[PATH_MAX], value[32], buf[256];
        bool can_compact = compact_path(x, an->id, cpath, sizeof(cpath));
        uint64_t sleep_usec = NG_ACT_HP_BACKOFF_USEC;
        unsigned k;
        snprintf(value, sizeof(value), "%" PRIu64, an->target_pages);
        for (k = 0; k < NG_ACT_HP_RETRIES && *granted < an->target_pages; k++, sleep_usec *= 2) {
                if (can_compact && k == 0) {
                        /* not recorded, so not done: res->error says why */
                        if (ng_action_write(x->ops, x->p, x->res, false, cpath, "1") == -ENOMEM)
                                break;
                } else if (can_compact)
                        x->ops->write(x->ops->userdata, x->p, cpath, "1");
                x->ops->sleep_usec(x->ops->userdata, sleep_usec);
                int r = x->ops->write(x->ops->userdata, x->p, path, value);
                uint64_t g;
                if (x->ops->read(x->ops->userdata, x->p, path, buf, sizeof(buf)) >= 0 && parse_pages(buf, &g) >= 0) {
                        *granted = g;
                        chomp(buf);
                        snprintf(x->res->writes[w_idx].after, sizeof(x->res->writes[w_idx].after), "%s", buf);
                }
                if (r < 0) {
                        if (x->res->error == 0)
                                x->res->error = r;
                        k++;
                        break;
                }
        }
        return k;
}

static void pool_path(const struct ng_act_hugepages *a, const struct ng_act_hugepages_node *an, char *path,
                      size_t path_size, char *value, size_t value_size)
{
        snprintf(path, path_size, NG_SYS_NODE_DIR "/node%d/hugepages/hugepages-%" PRIu64 "kB/nr_hugepages", an->id,
                 a->page_kib);
        snprintf(value, value_size, "%" PRIu64, an->target_pages);
}

/* Per-node counts on the command line need Linux 5.16; every node is named
 * since the ones left out would get none. */
static void boot_line(const struct ng_act_hugepages *a, const char *size, char *buf, size_t len)
{
        snprintf(buf, len, "hugepagesz=%s hugepages=", size);
        for (size_t i = 0; i < a->n_nodes; i++)
                appendf(buf, len, "%s%d:%" PRIu64, i ? "," : "", a->nodes[i].id, a->nodes[i].target_pages);
}

/* Writes one node; false when the action must stop (a failed write). */
static bool run_node(struct run *x, const struct ng_act_hugepages_node *an, bool *short_grant)
{
        struct ng_action_result *res = x->res;
        char path[PATH_MAX], value[32];
        pool_path(x->a, an, path, sizeof(path), value, sizeof(value));
        size_t w_idx = res->n_writes;
        int r = ng_action_write(x->ops, x->p, res, false, path, value);
        if (r < 0) {
                x->e2big = r == -E2BIG;
                res->outcome = x->e2big ? NG_OUTCOME_PERMANENT : ng_outcome_for_errno(r);
                appendf(x->parts, sizeof(x->parts), "%swriting %s to node %d failed: %s (%s)", sep(x->parts), value,
                        an->id, strerror(-r), res->outcome == NG_OUTCOME_TRANSIENT ? "transient, retry later" : "permanent");
                return false;
        }
        uint64_t granted;
        if (parse_pages(res->writes[w_idx].after, &granted) < 0) {
                res->outcome = NG_OUTCOME_PERMANENT;
                if (res->error == 0)
                        res->error = -EIO;
                appendf(x->parts, sizeof(x->parts), "%snode %d: could not read back %s", sep(x->parts), an->id, path);
                return false;
        }
        unsigned retries = 0;
        if (granted < an->target_pages && an->target_pages > an->nr_pages)
                retries = retry_short(x, an, path, w_idx, &granted);
        if (granted == an->target_pages) {
                appendf(x->parts, sizeof(x->parts), "%snode %d %" PRIu64 " -> %" PRIu64 "%s", sep(x->parts), an->id,
                        an->nr_pages, granted, retries ? " after compaction" : "");
                return true;
        }
        *short_grant = true;
        appendf(x->parts, sizeof(x->parts), "%sasked %" PRIu64 ", granted %" PRIu64 " on node %d after %u %s",
                sep(x->parts), an->target_pages, granted, an->id, retries, retries == 1 ? "retry" : "retries");
        return true;
}

static void run_dry(struct run *x)
{
        for (size_t i = 0; i < x->a->n_nodes; i++) {
                const struct ng_act_hugepages_node *an = &x->a->nodes[i];
                if (an->target_pages == an->nr_pages)
                        continue;
                char path[PATH_MAX], value[32];
                pool_path(x->a, an, path, sizeof(path), value, sizeof(value));
                int r = ng_action_write(x->ops, x->p, x->res, true, path, value);
                if (r == -E2BIG)
                        x->e2big = true;
                else if (r < 0) {
                        x->res->outcome = ng_outcome_for_errno(r);
                        appendf(x->parts, sizeof(x->parts), "%srecording node %d failed: %s", sep(x->parts), an->id,
                                strerror(-r));
                        return;
                }
                appendf(x->parts, sizeof(x->parts), "%swould set node %d to %" PRIu64 " (now %" PRIu64 ")",
                        sep(x->parts), an->id, an->target_pages, an->nr_pages);
        }
}

static size_t n_changes(const struct ng_act_hugepages *a)
{
        size_t n = 0;
        for (size_t i = 0; i < a->n_nodes; i++)
                n += a->nodes[i].target_pages != a->nodes[i].nr_pages;
        return n;
}

static void run_writes(struct run *x)
{
        bool short_grant = false, ok = true;
        x->res->outcome = NG_OUTCOME_DONE;
        for (size_t i = 0; ok && i < x->a->n_nodes; i++)
                if (x->a->nodes[i].target_pages != x->a->nodes[i].nr_pages)
                        ok = run_node(x, &x->a->nodes[i], &short_grant);
        if (ok && short_grant) {
                char boot[256];
                boot_line(x->a, x->size, boot, sizeof(boot));
                x->res->outcome = NG_OUTCOME_PARTIAL;
                appendf(x->parts, sizeof(x->parts), " (no more free %s blocks after compaction: reserve at boot with %s)",
                        x->size, boot);
        }
}

int ng_act_hugepages_run(const struct ng_act_hugepages *a, const struct ng_path *p, const struct ng_action_ops *ops,
                         bool dry_run, struct ng_action_result *res)
{
        assert(a && ops && res);
        struct ng_action_ops o;
        if (ng_action_ops_complete(ops, &o) < 0)
                return -EINVAL;
        struct run x = { .a = a, .p = p, .ops = &o, .res = res };
        ng_hugepage_size_format(a->page_kib, x.size, sizeof(x.size));
        ng_action_result_reset(res);
        snprintf(res->check, sizeof(res->check), "%s", a->check);
        res->check_refused = a->check_refused;
        if (a->refused) {
                res->outcome = NG_OUTCOME_REFUSED;
                appendf(x.parts, sizeof(x.parts), "%s: %s", a->check_refused ? "would take free pages a reservation needs"
                        : a->unknown ? "would size pools on what could not be read"
                        : "would push a node below its free-memory floor", a->reason);
        } else if (n_changes(a) == 0) {
                res->outcome = NG_OUTCOME_NOOP;
                snprintf(x.parts, sizeof(x.parts), "every node already holds its target");
        } else if (dry_run) {
                res->outcome = NG_OUTCOME_DRY_RUN;
                run_dry(&x);
        } else
                run_writes(&x);
        /* Truncated at 511 characters at worst: the numbers come first. */
        appendf(res->summary, sizeof(res->summary), "%s pages: %s%s%s", x.size, x.parts, a->note[0] ? "; " : "",
                a->note);
        return x.e2big ? -E2BIG : 0;
}

int ng_act_hugepages_check(const struct ng_snapshot *s, const struct ng_audit *audit, struct ng_act_hugepages *a)
{
        if (!s || !audit || !a)
                return -EINVAL;
        a->check[0] = '\0';
        if (a->refused)
                return 0;
        _cleanup_free_ struct ng_resv_delta *d = calloc(a->n_nodes + 1, sizeof(*d));
        size_t n = 0;
        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_nodes; i++) {
                const struct ng_act_hugepages_node *an = &a->nodes[i];
                /* A shrink takes free pages only; growth may be granted short. */
                uint64_t cut = an->target_pages < an->nr_pages ? an->nr_pages - an->target_pages : 0;
                if (cut > an->free_pages)
                        cut = an->free_pages;
                if (cut)
                        d[n++] = (struct ng_resv_delta) { .node = an->id, .pages = -(int64_t) cut };
        }
        if (n == 0)
                return 0;
        struct ng_resv_change chg = { .page_kib = a->page_kib, .delta = d, .n_delta = n };
        struct ng_resv_verdict v;
        int r = ng_resv_check(s, audit, &chg, &v);
        if (r < 0)
                return r;
        snprintf(a->check, sizeof(a->check), "%s", v.message);
        if (!v.ok) {
                a->refused = a->check_refused = true;
                a->unknown |= v.unknown;
                snprintf(a->reason, sizeof(a->reason), "%.*s", (int) sizeof(a->reason) - 1, v.message);
        }
        return 0;
}

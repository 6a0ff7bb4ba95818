/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: what MariaDB and Oracle ask of the pools at their next start
 * (rehearse-internal.h); the pools' side is rehearse.c's.
 *
 * MariaDB under large_pages maps its InnoDB buffer pool MAP_PRIVATE |
 * MAP_HUGETLB (mysys/my_largepage.c), trying the host's hugepage sizes
 * from the largest that is not larger than the pool, each failing with
 * ENOMEM moving on to the next, and the last to 4 KiB pages with a warning
 * in its error log. A private hugetlb mapping is reserved whole at mmap as
 * a shared one is (mm/hugetlb.c: hugetlb_reserve_pages() charges the
 * range to the mapping's resv_map and the pool's resv_huge_pages, through
 * hugetlb_acct_memory() with its check of the free pages on the nodes the
 * task's cpuset and bind policy allow), so a short pool is ENOMEM, never a
 * failed start; and its pages are taken at first touch from those nodes
 * by the same dequeue (alloc_hugetlb_folio(): dequeue_hugetlb_folio_vma(),
 * then surplus pages only within nr_overcommit_hugepages), so a
 * reservation that other confined processes will take first, or a hugetlb
 * cgroup limit on faults, ends in SIGBUS as for a shared segment. MySQL
 * makes the pool a SysV SHM_HUGETLB segment of the default size, reserved
 * at shmget: the same outcomes.
 *
 * Oracle makes its SGA SysV SHM_HUGETLB segments of the default size;
 * use_large_pages = TRUE puts what the kernel reserves in hugepages and
 * the rest in 4 KiB pages (11.2.0.3 and later), ONLY refuses to start
 * short of the whole SGA, FALSE takes none, AUTO and AUTO_ONLY first ask
 * the kernel for the pages they lack. Automatic memory management
 * (memory_target) keeps the SGA in /dev/shm files, never in hugepages, and
 * with ONLY does not start.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ng-format.h"
#include "rehearse-internal.h"
#include "units.h"

#define MiB (UINT64_C(1) << 20)
/* innodb_buffer_pool_size when not set (MariaDB's documented default). */
#define MARIADB_DEFAULT_POOL (128 * MiB)
/* Address space beyond any host's memory: a reservation, not a pool. */
#define MARIADB_HUGE_RESERVE_KIB (UINT64_C(1) << 30)
/* MariaDB 10.11.12 and later align the pool's mapping to this extent. */
#define MARIADB_EXTENT (8 * MiB)

/* The largest segment of kind the main process maps, or NULL. */
static const struct ng_segment *largest(const struct stage *st, enum ng_seg_kind kind)
{
        const struct ng_segment *best = NULL;
        for (size_t k = 0; k < st->in->n_segs; k++) {
                const struct ng_segment *seg = &st->a->segments[st->in->segs[k]];
                bool mapped = false;
                for (size_t i = 0; i < seg->n_pids && !mapped; i++)
                        mapped = seg->pids[i] == st->in->main_pid;
                if (seg->kind == kind && mapped && !seg->bytes_unknown && (!best || seg->bytes > best->bytes))
                        best = seg;
        }
        return best;
}

static void setting(struct ng_rehearsal *r, const struct ng_db_settings *cfg, const char *name, const char *deflt)
{
        snprintf(r->setting_name, sizeof(r->setting_name), "%s", name);
        snprintf(r->setting_value, sizeof(r->setting_value), "%s",
                 cfg->huge_pages_word[0] ? cfg->huge_pages_word : deflt);
        snprintf(r->setting_from, sizeof(r->setting_from), "%.*s", (int) sizeof(r->setting_from) - 1,
                 cfg->huge_pages == NG_HUGE_UNSET ? "the default" : cfg->huge_pages_from);
}

static uint64_t pages_of(uint64_t bytes, uint64_t page_kib)
{
        uint64_t page = ng_kib_bytes_sat(page_kib);
        return bytes / page + (bytes % page != 0);
}

/* MariaDB's buffer pool when none of the host's page sizes holds it: the
 * reasoning of the default size (what a DBA reserves), else the smallest
 * tried. */
static int mariadb_short(struct stage *st, const struct ng_rehearsal *base, uint64_t default_kib, uint64_t last_kib,
                         unsigned tried)
{
        struct ng_rehearsal *r = st->r;
        uint64_t kib = last_kib;
        for (size_t i = 0; i < st->s->n_pools; i++)
                if (st->s->pools[i].page_kib == default_kib && ng_kib_bytes_sat(default_kib) <= r->bytes)
                        kib = default_kib;
        if (kib != r->page_kib) {
                *r = *base;
                r->page_kib = kib;
                int e = ng_rehearse_pool(st, pages_of(r->bytes, kib));
                if (e < 0)
                        return e;
        }
        if (tried > 1 && r->outcome == NG_REHEARSE_SMALL)
                ng_rehearse_appendf(r->why, sizeof(r->why), "; MariaDB tries each of the host's %u page sizes that "
                                    "fit, from the largest, and none holds it", tried);
        return 0;
}

int ng_rehearse_mariadb(struct stage *st, const struct ng_db_settings *cfg)
{
        struct ng_rehearsal *r = st->r;
        bool on = cfg->huge_pages == NG_HUGE_TRY;
        r->setting = on ? NG_HUGE_TRY : NG_HUGE_OFF;
        setting(r, cfg, "large_pages", "OFF");
        r->bytes = cfg->size_bytes ? cfg->size_bytes : MARIADB_DEFAULT_POOL;
        snprintf(r->size_from, sizeof(r->size_from), "%s",
                 cfg->size_bytes ? cfg->size_from : "innodb_buffer_pool_size, the default");
        st->refuse = st->fallback = "MariaDB maps its buffer pool in 4 KiB pages (its error log warns that it "
                                    "could not allocate it from HugeTLB memory)";
        ng_rehearse_binding(st, largest(st, NG_SEG_PRIVATE));
        if (!on) {
                r->outcome = NG_REHEARSE_OFF;
                snprintf(r->why, sizeof(r->why), "large_pages = OFF: the buffer pool in 4 KiB pages as asked");
                ng_rehearse_cyclops(st);
                return 0;
        }
        /* Servers that map the pool whole (10.11.12 and later) map
         * innodb_buffer_pool_size_max; those that reserve terabytes of
         * address space for it by default (10.11.17, 11.4.11, 11.8.7 and
         * later: 8 TiB) show it in their size. */
        const struct ng_proc *pr = ng_snapshot_proc(st->s, st->in->main_pid);
        if (strncmp(cfg->size_from, "innodb_buffer_pool_size_max", 27) && pr &&
            pr->status.vm_size_kib >= MARIADB_HUGE_RESERVE_KIB) {
                char vm[32];
                ng_format_kib(pr->status.vm_size_kib, vm, sizeof(vm));
                snprintf(r->fix, sizeof(r->fix), "set innodb_buffer_pool_size_max to innodb_buffer_pool_size");
                snprintf(r->why, sizeof(r->why), "innodb_buffer_pool_size_max is not set and the running server "
                         "reserves %s of address space (MariaDB 10.11.17, 11.4.11, 11.8.7 and later reserve 8 TiB "
                         "for the buffer pool by default): which size its next start maps in hugepages cannot be "
                         "told", vm);
                r->outcome = NG_REHEARSE_UNKNOWN;
                return 0;
        }
        const struct ng_rehearsal base = *r;
        uint64_t last = 0;
        unsigned tried = 0;
        for (size_t i = st->s->n_pools; i-- > 0;) {
                uint64_t kib = st->s->pools[i].page_kib;
                if (ng_kib_bytes_sat(kib) > r->bytes)
                        continue;
                *r = base;
                r->page_kib = last = kib;
                tried++;
                int e = ng_rehearse_pool(st, pages_of(r->bytes, kib));
                if (e < 0)
                        return e;
                if (r->outcome == NG_REHEARSE_UNKNOWN)
                        return 0;
                if (r->outcome != NG_REHEARSE_SMALL)
                        break;
        }
        if (!tried) {
                char size[32];
                ng_format_kib(r->bytes / 1024, size, sizeof(size));
                r->outcome = NG_REHEARSE_SMALL;
                snprintf(r->why, sizeof(r->why), "the host has no hugepage pool of a page size up to its %s buffer "
                         "pool: %s", size, st->fallback);
                ng_rehearse_cyclops(st);
                return 0;
        }
        if (r->outcome == NG_REHEARSE_SMALL) {
                int e = mariadb_short(st, &base, ng_rehearse_default_page_kib(st->s), last, tried);
                if (e < 0)
                        return e;
                if (r->avail_pages && r->free_on_nodes)
                        ng_rehearse_appendf(r->why, sizeof(r->why), "; a server before 10.11.12 maps the pool in "
                                            "chunks (innodb_buffer_pool_chunk_size), each on its own: some may "
                                            "take the pages there are");
        }
        uint64_t page = ng_kib_bytes_sat(r->page_kib), spare = MARIADB_EXTENT > page ? MARIADB_EXTENT / page - 1 : 0;
        uint64_t room = r->avail_pages + r->surplus_pages < r->free_on_nodes ? r->avail_pages + r->surplus_pages
                                                                               : r->free_on_nodes;
        if (r->outcome == NG_REHEARSE_HUGE && spare && room >= r->pages && room < r->pages + spare)
                ng_rehearse_appendf(r->why, sizeof(r->why), "; MariaDB 10.11.12 and later may map up to %" PRIu64
                                    " more pages to align the pool to 8 MiB, and %" PRIu64 " are spare", spare,
                                    room - r->pages);
        ng_rehearse_cyclops(st);
        return 0;
}

int ng_rehearse_oracle(struct stage *st, const struct ng_db_settings *cfg)
{
        struct ng_rehearsal *r = st->r;
        r->setting = cfg->huge_pages == NG_HUGE_UNSET ? NG_HUGE_PARTIAL : cfg->huge_pages;
        setting(r, cfg, "use_large_pages", "TRUE");
        st->refuse = "Oracle refuses to start (ORA-27137: unable to allocate large pages to create a shared memory "
                     "segment)";
        st->fallback = "Oracle puts in hugepages what the pool holds and the rest of the SGA in 4 KiB pages";
        r->page_kib = ng_rehearse_default_page_kib(st->s);
        /* The SGA it runs with, its segments each in whole pages; else
         * what its settings size it by. */
        uint64_t pages = 0;
        unsigned n = 0;
        for (size_t k = 0; k < st->in->n_segs; k++) {
                const struct ng_segment *seg = &st->a->segments[st->in->segs[k]];
                if (seg->kind != NG_SEG_SYSV || seg->bytes_unknown)
                        continue;
                r->bytes += seg->bytes;
                pages += pages_of(seg->bytes, r->page_kib);
                n++;
        }
        if (n)
                snprintf(r->size_from, sizeof(r->size_from), "its running SGA, %u SysV segment%s", n,
                         n == 1 ? "" : "s");
        else if (cfg->size_bytes) {
                r->bytes = cfg->size_bytes;
                pages = pages_of(r->bytes, r->page_kib);
                snprintf(r->size_from, sizeof(r->size_from), "%s", cfg->size_from);
        }
        ng_rehearse_binding(st, largest(st, NG_SEG_SYSV));
        if (cfg->amm_bytes) {
                bool only = r->setting == NG_HUGE_ON;
                r->outcome = only ? NG_REHEARSE_NO_START : NG_REHEARSE_OFF;
                snprintf(r->why, sizeof(r->why), "%.100s sets automatic memory management, which keeps the SGA "
                         "in /dev/shm files that are never in hugepages%s", cfg->amm_from,
                         only ? ": with use_large_pages = ONLY Oracle refuses to start" : "");
                snprintf(r->fix, sizeof(r->fix), "set memory_target and memory_max_target to 0 and size the SGA "
                         "with sga_target (automatic shared memory management works with hugepages)");
                ng_rehearse_cyclops(st);
                return 0;
        }
        if (r->setting == NG_HUGE_OFF) {
                r->outcome = NG_REHEARSE_OFF;
                snprintf(r->why, sizeof(r->why), "use_large_pages = FALSE: the SGA in 4 KiB pages as asked");
                ng_rehearse_cyclops(st);
                return 0;
        }
        if (!pages)
                return ng_rehearse_unknown(r, "it runs no SGA segment and sets neither sga_max_size nor "
                                              "sga_target: nothing to size its next start by");
        int e = ng_rehearse_pool(st, pages);
        if (e < 0 || r->outcome == NG_REHEARSE_UNKNOWN)
                return e;
        if (cfg->huge_auto && r->outcome != NG_REHEARSE_HUGE)
                ng_rehearse_appendf(r->why, sizeof(r->why), "; use_large_pages = %s: Oracle asks the kernel for the "
                                    "pages it lacks at its start (it raises vm.nr_hugepages itself), which may "
                                    "cover them where the nodes have the free memory; not counted here",
                                    r->setting_value);
        if (st->pool)
                ng_rehearse_cyclops(st);
        return 0;
}

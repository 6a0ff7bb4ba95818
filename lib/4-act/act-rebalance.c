/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rebalance: spread a cyclops segment's resident pages over the instance's
 * nodes with move_pages(2).
 *
 * Whose page tables. move_pages(2) and mbind(2) both reach pages through
 * the page tables of one mm: add_page_for_migration() (mm/migrate.c) does
 * vma_lookup() + follow_page(vma, addr, FOLL_GET | FOLL_DUMP) -- a lookup
 * that never faults: no PTE gives -ENOENT, no VMA -EFAULT -- and mbind's
 * queue_pages_range() walks the same present PTEs only. A mapping numaguard
 * attaches itself (shmat SHM_RDONLY, mmap PROT_READ) starts with no PTEs,
 * so either call would move nothing from it. Populating it first is not
 * allowed: a read fault on a hole of tmpfs/SysV shm goes through
 * shmem_fault() -> shmem_get_folio(SGP_CACHE), which allocates a page, and
 * a hugetlb read fault allocates a huge page from the pool -- both grow the
 * segment (MADV_POPULATE_READ faults the same way). mincore(2) could tell
 * tmpfs holes apart, but not hugetlb ones (it reads our own page tables
 * there), and populating would cost numaguard the page tables
 * docs/ARCHITECTURE.md ("Why it exists") warns about (~2 GiB per TiB of
 * 4 KiB pages). mbind on a shared
 * mapping would also install a shared policy on the shmem inode for every
 * attacher (shmem_set_policy), a side effect we do not want here.
 *
 * So the pages are moved through the representative attached process:
 * move_pages(rep_pid, ...) on its addresses of the segment. It maps the
 * pages (it is the attacher with the most shared memory mapped), the lookup
 * faults nothing in, and pages it does not map are reported -ENOENT and left
 * alone. Pages mapped by several processes need MPOL_MF_MOVE_ALL (without
 * it add_page_for_migration() answers -EACCES for page_mapcount > 1), which
 * needs CAP_SYS_NICE; migration unmaps the page from every attacher, copies
 * it and maps the copy back in all of them (rmap walk), so the contents and
 * every process's view stay the same, and nothing is ever written through a
 * mapping of ours. Migration allocates with __GFP_THISNODE
 * (do_move_pages_to_node), so a page lands on the node asked or fails; a
 * hugetlb target comes from the node's free pool when the size's global
 * free - reserved is > 0 (alloc_hugetlb_folio_nodemask), else a 2 MiB page
 * may come from the buddy allocator as a temporary page and a 1 GiB page
 * not at all -- hence the check on free pool pages of both sizes.
 *
 * Which pages. Each node gets an equal share of the resident pages; only
 * the excess of over-target nodes moves, so a segment already spread (by
 * the kernel's interleave, whatever its rotation) is a no-op, and a cyclops
 * moves (n-1)/n of its pages -- the minimum. The page at segment offset
 * i * page goes to dest[i mod n] (or the next node still short), which
 * gives the page-by-page round robin of MPOL_INTERLEAVE; a page of an
 * over-target node that already sits on its own slot stays.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "act-rebalance-internal.h"
#include "act-rebalance-run.h"
#include "cleanup.h"
#include "sample.h"
#include "ng-format.h"
#include "units.h"
#include "util.h"

#define MAX_BATCH_PAGES 65536

/* ---- carrying it out ---- */

static void default_sleep(void *userdata, uint64_t usec)
{
        ng_action_ops_default.sleep_usec(userdata, usec);
}

static uint64_t default_now(void *userdata)
{
        (void) userdata;
        return now_usec(CLOCK_MONOTONIC);
}

const struct ng_rebalance_ops ng_rebalance_ops_default = {
        .move_pages = NULL,
        .sleep_usec = default_sleep,
        .now_usec = default_now,
};


static int query(struct run *r, void **addrs, unsigned long n, int *status)
{
        for (unsigned long i = 0; i < n; i++)
                status[i] = INT_MIN;
        if (r->mp(r->pid, n, addrs, NULL, status, 0) < 0) {
                r->failed_call = "move_pages (query)";
                return errno ? -errno : -EIO;
        }
        return 0;
}

static void index_nodes(struct run *r)
{
        for (size_t i = 0; i < NG_REBALANCE_MAX_NODES; i++)
                r->index_of[i] = -1;
        for (size_t i = 0; i < r->p->n_nodes; i++)
                if (r->p->nodes[i].node >= 0 && r->p->nodes[i].node < NG_REBALANCE_MAX_NODES)
                        r->index_of[r->p->nodes[i].node] = (int16_t) i;
}

static void index_dests(struct run *r)
{
        index_nodes(r);
        for (size_t j = 0; j < r->p->n_dest; j++)
                r->dest_k[j] = (int16_t) ng_rebalance_node_k(r, r->p->dest[j]);
}

static void count_batch(struct run *r, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                int k = ng_rebalance_node_k(r, r->status[i]);
                if (k < 0 && r->status[i] >= 0 && (k = ng_rebalance_node_index_add(r->p, r->status[i])) >= 0)
                        index_nodes(r);         /* a node the plan did not know: indices moved */
                if (k >= 0)
                        r->p->nodes[k].before_pages++;
                else
                        r->st.not_resident_pages++;
        }
}

/* The destination of a page of over-target node k at slot idx, or -1 to
 * leave it: its own slot, or no destination still short. */
static int choose_dest(struct run *r, uint64_t idx, int k)
{
        const struct ng_rebalance_plan *p = r->p;
        size_t first = (size_t) (idx % p->n_dest);
        for (size_t j = 0; j < p->n_dest; j++) {
                int d = r->dest_k[(first + j) % p->n_dest];
                if (d == k) {
                        if (j == 0)
                                return -1;
                        continue;
                }
                if (d >= 0 && r->deficit[d] > 0)
                        return d;
        }
        return -1;
}

static unsigned pick_moves(struct run *r, unsigned n)
{
        unsigned m = 0;
        for (unsigned i = 0; i < n; i++) {
                int k = ng_rebalance_node_k(r, r->status[i]);
                if (r->status[i] < 0)
                        r->st.not_resident_pages++;
                if (k < 0 || r->excess[k] == 0)
                        continue;
                int d = choose_dest(r, r->slot[i], k);
                if (d < 0) {
                        r->left_for_room += r->one_way && !r->p->nodes[k].dest;
                        continue;
                }
                r->maddrs[m] = r->addrs[i];
                r->mnodes[m] = r->p->nodes[d].node;
                r->mfrom[m++] = k;
                r->excess[k]--;
                r->deficit[d]--;
        }
        return m;
}

/* 0 when the kernel attempted every page (status says where each is, or
 * its -errno), 1 when it stopped at a group that failed to migrate (the
 * rest unattempted: status is not to be trusted), or -errno. */
static int move_call(struct run *r, unsigned m)
{
        r->st.move_calls++;
        long k = r->mp(r->pid, m, r->maddrs, r->mnodes, r->status, MPOL_MF_MOVE_ALL);
        if (k >= 0)
                return k > 0;
        r->failed_call = "move_pages";
        return errno ? -errno : -EIO;
}

static void set_aside(struct run *r, unsigned j)
{
        r->aaddrs[r->n_aside] = r->maddrs[j];
        r->anodes[r->n_aside] = r->mnodes[j];
        r->afrom[r->n_aside++] = r->mfrom[j];
}

/* Reads the list back: pages on their node are done; the first one that is
 * not is set aside (the kernel stops a call at the first group that fails
 * to migrate and leaves the rest unattempted, so everything after it goes
 * again). Returns how many are left to try, compacted. */
static int read_back(struct run *r, unsigned m, bool ask, unsigned *ret_left)
{
        /* a call that attempted every page said where each one is */
        int q = ask ? query(r, r->maddrs, m, r->status) : 0;
        if (q < 0)
                return q;
        unsigned left = 0;
        bool aside = false;
        for (unsigned j = 0; j < m; j++) {
                if (r->status[j] == r->mnodes[j]) {
                        int d = ng_rebalance_node_k(r, r->mnodes[j]);
                        r->p->nodes[d].moved_in_pages++;
                        r->p->nodes[r->mfrom[j]].moved_out_pages++;
                        r->st.moved_pages++;
                        r->moved_bytes += r->p->page_bytes;
                } else if (!aside) {
                        set_aside(r, j);
                        aside = true;
                } else {
                        r->maddrs[left] = r->maddrs[j];
                        r->mnodes[left] = r->mnodes[j];
                        r->mfrom[left++] = r->mfrom[j];
                }
        }
        *ret_left = left;
        return 0;
}

/* Moves the list until every page moved or was set aside; on a call error
 * what is left is set aside too. */
static int move_list(struct run *r, unsigned m)
{
        while (m > 0) {
                int err = move_call(r, m);
                int q = err == -ESRCH ? err : read_back(r, m, err != 0, &m);
                if (err < 0 || q < 0) {
                        for (unsigned j = 0; j < m; j++)
                                set_aside(r, j);
                        return err < 0 ? err : q;
                }
        }
        return 0;
}

/* Moves the n pages of the move list, then those set aside busy again, up
 * to the run's retries; what stays busy is counted. */
static int move_retrying(struct run *r, unsigned n)
{
        r->n_aside = 0;
        int err = move_list(r, n);
        for (unsigned attempt = 0; err >= 0 && attempt < r->o->retries && r->n_aside > 0; attempt++) {
                unsigned m = r->n_aside;
                memcpy(r->maddrs, r->aaddrs, m * sizeof(*r->maddrs));
                memcpy(r->mnodes, r->anodes, m * sizeof(*r->mnodes));
                memcpy(r->mfrom, r->afrom, m * sizeof(*r->mfrom));
                r->n_aside = 0;
                err = move_list(r, m);
        }
        r->st.busy_pages += r->n_aside;
        return err;
}

/* Picks the batch's moves, moves them, then gives the pages set aside
 * (busy: EBUSY, EAGAIN after the kernel's own retries) opts->retries more
 * chances before counting them as left for a later run. */
/* The window's pages that are not on the one destination lie on one other
 * node src and fit its room: all n asked to move there in one list, the
 * pages already there answered in place; what is counted moved of those is
 * taken back. 1 done, 0 to go page by page, -errno. */
static int move_window_one_way(struct run *r, unsigned n)
{
        uint64_t counts[NG_REBALANCE_MAX_NODES];
        int w = r->pid > 0 && !r->ops->move_pages ? ng_rebalance_window_counts(r, n, counts) : 0;
        if (w <= 0)
                return w;
        int d = r->dest_k[0], src = -1;
        for (size_t i = 0; i < r->p->n_nodes; i++)
                if ((int) i != d && counts[i]) {
                        if (src >= 0)
                                return 0;       /* several sources: each page's own is asked */
                        src = (int) i;
                }
        if (src >= 0 && counts[src] > r->deficit[d])
                return 0;                       /* not room for all: page by page, up to the floor */
        for (size_t i = 0; i < r->p->n_nodes; i++)
                r->p->nodes[i].before_pages += counts[i];
        if (src < 0)
                return 1;                       /* all there already */
        for (unsigned i = 0; i < n; i++) {
                r->maddrs[i] = r->addrs[i];
                r->mnodes[i] = r->p->nodes[d].node;
                r->mfrom[i] = src;
        }
        uint64_t moved0 = r->st.moved_pages;
        int err = move_retrying(r, n);
        /* the pages that were there already, counted as they answered */
        uint64_t there = counts[d], counted = r->st.moved_pages - moved0;
        uint64_t back = there < counted ? there : counted;
        r->st.moved_pages -= back;
        r->moved_bytes -= back * r->p->page_bytes;
        r->p->nodes[d].moved_in_pages -= back;
        r->p->nodes[src].moved_out_pages -= back;
        r->deficit[d] -= r->st.moved_pages - moved0;
        return err < 0 ? err : 1;
}

static int move_batch(struct run *r, unsigned n)
{
        if (r->one_way) {
                int w = move_window_one_way(r, n);
                if (w != 0)
                        return w < 0 ? w : 0;
        }
        int q = query(r, r->addrs, n, r->status);
        if (q < 0)
                return q;
        if (r->one_way)
                for (unsigned i = 0; i < n; i++) {
                        int k = ng_rebalance_node_k(r, r->status[i]);
                        if (k < 0 && r->status[i] >= 0 && (k = ng_rebalance_node_index_add(r->p, r->status[i])) >= 0) {
                                index_dests(r);
                                r->excess[k] = UINT64_MAX;      /* a node the plan did not know: not the destination */
                        }
                        if (k >= 0)
                                r->p->nodes[k].before_pages++;
                }
        int err = move_retrying(r, pick_moves(r, n));
        return err;
}

static void rate_limit(struct run *r)
{
        uint64_t rate = r->o->rate_bytes_per_sec;
        if (!rate || !r->moved_bytes)
                return;
        uint64_t want = r->moved_bytes / rate * 1000000 + r->moved_bytes % rate * 1000000 / rate;
        uint64_t elapsed = r->ops->now_usec(r->ops->userdata) - r->t_move;
        if (want <= elapsed)
                return;
        r->ops->sleep_usec(r->ops->userdata, want - elapsed);
        r->st.slept_usec += want - elapsed;
}

static int do_batch(struct run *r, unsigned n)
{
        r->st.scanned_pages += n;
        if (!r->moving) {
                int q = query(r, r->addrs, n, r->status);
                if (q >= 0)
                        count_batch(r, n);
                return q;
        }
        if (r->ops->verify && r->p->via == NG_REBALANCE_VIA_ATTACHER && r->st.batches % NG_REBALANCE_VERIFY_EVERY == 0) {
                int v = r->ops->verify(r->ops->userdata, r->p);
                if (v < 0) {
                        r->failed_call = "checking the process still maps the segment";
                        return v;
                }
        }
        r->st.batches++;
        int q = move_batch(r, n);
        rate_limit(r);
        return q;
}

static int segment_batch(void *userdata, void *const *addrs, const uint64_t *pgoff, size_t n)
{
        struct run *r = userdata;
        for (size_t i = 0; i < n; i++) {
                r->addrs[i] = addrs[i];
                r->slot[i] = pgoff[i];
        }
        return do_batch(r, (unsigned) n);
}

/* Every resident page of the segment's file, through a mapping of our own
 * (segment-walk.c; act-rebalance-segment.c opens the file). */
static int walk_segment(struct run *r)
{
        int fd = ng_rebalance_open_segment(r->p, r->ops, &r->failed_call);
        if (fd < 0)
                return fd;
        struct ng_seg_walk_opts o = {
                .batch_pages = r->o->batch_pages < NG_SEG_MAX_BATCH ? r->o->batch_pages : NG_SEG_MAX_BATCH,
                .batch = segment_batch, .userdata = r,
        };
        struct ng_seg_walk_stats st = { 0 };
        /* the kernel's move_pages(2): through a sleeping child's mapping
         * (act-rebalance-mover.c); an injected one, through our own */
        int q = r->ops->move_pages ? ng_segment_walk(fd, &o, &st) : ng_rebalance_walk_mover(fd, &o, &r->pid, &st);
        close(fd);
        r->st.windows += st.windows;
        if (q < 0 && !r->failed_call)
                r->failed_call = "reading which pages of the segment's file are resident";
        return q;
}

/* Walks every page of every range in batches of batch_pages, or every
 * resident page of the segment's file. */
static int walk(struct run *r)
{
        const struct ng_rebalance_plan *p = r->p;
        if (p->via == NG_REBALANCE_VIA_SEGMENT)
                return walk_segment(r);
        unsigned n = 0;
        for (size_t k = 0; k < p->n_ranges; k++) {
                const struct ng_rebalance_range *g = &p->ranges[k];
                for (uint64_t a = g->start; a + p->page_bytes <= g->end; a += p->page_bytes) {
                        r->addrs[n] = (void *) (uintptr_t) a;
                        r->slot[n++] = (g->offset + (a - g->start)) / p->page_bytes;
                        if (n < r->o->batch_pages)
                                continue;
                        int q = do_batch(r, n);
                        n = 0;
                        if (q < 0)
                                return q;
                }
        }
        return n ? do_batch(r, n) : 0;
}

static int run_alloc(struct run *r)
{
        size_t b = r->o->batch_pages;
        r->addrs = calloc(b, sizeof(*r->addrs));
        r->maddrs = calloc(b, sizeof(*r->maddrs));
        r->slot = calloc(b, sizeof(*r->slot));
        r->status = calloc(b, sizeof(*r->status));
        r->mnodes = calloc(b, sizeof(*r->mnodes));
        r->mfrom = calloc(b, sizeof(*r->mfrom));
        r->aaddrs = calloc(b, sizeof(*r->aaddrs));
        r->anodes = calloc(b, sizeof(*r->anodes));
        r->afrom = calloc(b, sizeof(*r->afrom));
        return r->addrs && r->maddrs && r->slot && r->status && r->mnodes && r->mfrom && r->aaddrs && r->anodes &&
                               r->afrom ? 0 : -ENOMEM;
}

static void run_free(struct run *r)
{
        free(r->addrs);
        free(r->maddrs);
        free(r->slot);
        free(r->status);
        free(r->mnodes);
        free(r->mfrom);
        free(r->aaddrs);
        free(r->anodes);
        free(r->afrom);
}

/* What an attacher's page tables did not reach of the kernel's count. */
static void note_unreachable(struct ng_rebalance_plan *p)
{
        if (p->via != NG_REBALANCE_VIA_ATTACHER || p->known_resident_pages <= p->resident_pages)
                return;
        p->unreachable_pages = p->known_resident_pages - p->resident_pages;
        snprintf(p->unreachable_why, sizeof(p->unreachable_why),
                 "pid %d does not map them, and a hugetlb segment is reached only through a process's page "
                 "tables (a fault on a hole of numaguard's own mapping would take a page from the pool)", (int) p->pid);
}

/* Exact count of the pages per node (query only), then the plan again. */
static int count_pass(struct run *r)
{
        for (size_t i = 0; i < r->p->n_nodes; i++)
                r->p->nodes[i].before_pages = 0;
        r->moving = false;
        index_nodes(r);
        int q = walk(r);
        if (q >= 0) {
                ng_rebalance_replan(r->p);
                note_unreachable(r->p);
        }
        return q;
}

/* Every resident page on another node goes to the one destination,
 * whatever the counts: a 4 KiB shmem segment through its own file needs no
 * count first (the hugetlb pool's check does). */
static bool one_way(const struct ng_rebalance_plan *p, const struct ng_rebalance_opts *o)
{
        return !o->dry_run && p->n_dest == 1 && p->via == NG_REBALANCE_VIA_SEGMENT && !p->huge;
}

/* One pass: each batch asked, counted and moved, the destination's room
 * above its floor the bound; then the plan's numbers from what was found. */
static int move_one_way(struct run *r)
{
        struct ng_rebalance_plan *p = r->p;
        for (size_t i = 0; i < p->n_nodes; i++) {
                p->nodes[i].before_pages = 0;
                r->excess[i] = p->nodes[i].dest ? 0 : UINT64_MAX;
                r->deficit[i] = p->nodes[i].dest ? p->nodes[i].avail_pages : 0;
        }
        r->one_way = r->moving = true;
        index_dests(r);
        r->t_move = r->ops->now_usec(r->ops->userdata);
        int q = walk(r);
        p->resident_pages = p->move_pages = 0;
        for (size_t i = 0; i < p->n_nodes; i++) {
                struct ng_rebalance_node *n = &p->nodes[i];
                p->resident_pages += n->before_pages;
                n->out_pages = n->dest ? 0 : n->before_pages;
                p->move_pages += n->out_pages;
        }
        for (size_t i = 0; i < p->n_nodes; i++) {
                struct ng_rebalance_node *n = &p->nodes[i];
                n->target_pages = n->dest ? p->resident_pages : 0;
                if (n->dest)
                        n->in_pages = p->move_pages;
        }
        return q;
}

static int move_pass(struct run *r)
{
        for (size_t i = 0; i < r->p->n_nodes; i++) {
                r->excess[i] = r->p->nodes[i].out_pages;
                r->deficit[i] = r->p->nodes[i].in_pages;
        }
        r->moving = true;
        index_dests(r);
        r->st.not_resident_pages = 0;
        r->t_move = r->ops->now_usec(r->ops->userdata);
        return walk(r);
}

int ng_rebalance_run(struct ng_rebalance_plan *plan, const struct ng_rebalance_opts *opts,
                     const struct ng_rebalance_ops *ops, struct ng_rebalance_stats *ret_stats,
                     struct ng_action_result *res)
{
        if (!plan || !opts || !res || opts->batch_pages == 0 || opts->batch_pages > MAX_BATCH_PAGES ||
            plan->page_bytes == 0)
                return -EINVAL;
        if (!ops)
                ops = &ng_rebalance_ops_default;
        ng_action_result_reset(res);
        snprintf(res->check, sizeof(res->check), "%s", plan->check);
        res->check_refused = plan->check_refused;
        if (plan->verdict != NG_OUTCOME_DRY_RUN || plan->n_dest == 0) {
                ng_rebalance_verdict_result(plan, res);
                if (plan->verdict == NG_OUTCOME_NOOP)
                        ng_rebalance_policy_step(plan, opts, ops, res);
                return 0;
        }
        _ng_cleanup_(run_free) struct run r = { .p = plan, .o = opts, .ops = ops,
                                                .mp = ops->move_pages ? ops->move_pages : move_pages,
                                                .pid = plan->via == NG_REBALANCE_VIA_SEGMENT ? 0 : plan->pid };
        if (run_alloc(&r) < 0)
                return -ENOMEM;
        uint64_t t0 = ops->now_usec(ops->userdata);
        if (one_way(plan, opts)) {
                int err = move_one_way(&r);
                r.st.elapsed_usec = ops->now_usec(ops->userdata) - t0;
                ng_rebalance_finish(&r, err < 0 ? err : 0, res);
                ng_rebalance_policy_step(plan, opts, ops, res);
                if (ret_stats)
                        *ret_stats = r.st;
                return 0;
        }
        int err = count_pass(&r);
        if (err >= 0 && plan->verdict != NG_OUTCOME_DRY_RUN) {
                ng_rebalance_verdict_result(plan, res);
                /* nothing to move of what it reached: not "as wanted" when
                 * resident pages were out of reach */
                if (plan->verdict == NG_OUTCOME_NOOP && plan->unreachable_pages && !opts->dry_run)
                        res->outcome = NG_OUTCOME_PARTIAL;
                char notes[400];
                if (ng_rebalance_tail_notes(&r, notes, sizeof(notes)))
                        strncat(res->summary, notes, sizeof(res->summary) - strlen(res->summary) - 1);
        } else {
                if (err >= 0 && !opts->dry_run)
                        err = move_pass(&r);
                r.st.elapsed_usec = ops->now_usec(ops->userdata) - t0;
                ng_rebalance_finish(&r, err < 0 ? err : 0, res);
        }
        ng_rebalance_policy_step(plan, opts, ops, res);
        if (ret_stats)
                *ret_stats = r.st;
        return 0;
}

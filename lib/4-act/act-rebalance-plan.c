/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rebalance, the plan: which pages of a cyclops segment move to which node
 * (pure; act-rebalance.c says why it is done this way, and moves them). */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act-rebalance-internal.h"
#include "cleanup.h"
#include "ng-reserve.h"
#include "ng-format.h"
#include "units.h"
#include "util.h"

int ng_rebalance_node_index(const struct ng_rebalance_plan *p, int node)
{
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].node == node)
                        return (int) i;
        return -1;
}

/* The node's entry, added (id order) when missing; -1 when full. */
int ng_rebalance_node_index_add(struct ng_rebalance_plan *p, int node)
{
        int k = ng_rebalance_node_index(p, node);
        if (k >= 0 || p->n_nodes == NG_REBALANCE_MAX_NODES)
                return k;
        size_t i = 0;
        while (i < p->n_nodes && p->nodes[i].node < node)
                i++;
        memmove(&p->nodes[i + 1], &p->nodes[i], (p->n_nodes - i) * sizeof(p->nodes[0]));
        p->nodes[i] = (struct ng_rebalance_node) { .node = node };
        p->n_nodes++;
        return (int) i;
}

void ng_rebalance_format_size(uint64_t bytes, char *buf, size_t size)
{
        ng_format_kib(bytes / 1024, buf, size);
}

/* ---- planning (pure) ---- */

/* The representative's VMAs of the segment; a second VMA over offsets
 * already taken (the segment attached twice) is skipped. */
static void plan_ranges(const struct ng_proc *pr, const struct ng_segment *seg, struct ng_rebalance_plan *p)
{
        for (size_t j = 0; j < pr->n_maps && p->n_ranges < NG_REBALANCE_MAX_RANGES; j++) {
                const struct ng_map *m = &pr->maps[j];
                if (seg->kind == NG_SEG_PRIVATE || !ng_segment_maps(seg, pr, m) || m->end <= m->start)
                        continue;
                uint64_t lo = m->offset, hi = m->offset + (m->end - m->start);
                bool overlaps = false;
                for (size_t k = 0; k < p->n_ranges; k++) {
                        const struct ng_rebalance_range *r = &p->ranges[k];
                        if (lo < r->offset + (r->end - r->start) && r->offset < hi)
                                overlaps = true;
                }
                if (!overlaps)
                        p->ranges[p->n_ranges++] = (struct ng_rebalance_range) {
                                .start = m->start, .end = m->end, .offset = m->offset };
        }
}

static const struct ng_shm_file *segment_file(const struct ng_snapshot *s, const struct ng_segment *seg)
{
        for (size_t i = 0; i < s->n_files; i++) {
                const struct ng_shm_file *f = &s->files[i];
                if (f->kind == NG_SHM_FILE_TMPFS && f->inode == seg->inode && f->dev_major == seg->dev_major &&
                    f->dev_minor == seg->dev_minor)
                        return f;
        }
        return NULL;
}

/* A 4 KiB shmem segment, reached through its own file: the map_files link
 * of the representative (every kind), else a /dev/shm file's path in its
 * mount namespace. A SysV or anonymous shared segment nobody maps has no
 * way in: seg_path stays empty and unreachable_* say why. */
static void plan_segment_file(const struct ng_snapshot *s, const struct ng_segment *seg, const struct ng_proc *pr,
                              struct ng_rebalance_plan *p)
{
        p->via = NG_REBALANCE_VIA_SEGMENT;
        p->dev_major = seg->dev_major;
        p->dev_minor = seg->dev_minor;
        p->inode = seg->inode;
        if (seg->kind == NG_SEG_SYSV && seg->dev_major == NG_SEG_DEV_CONFLICT) {
                p->unreachable_pages = seg->resident_bytes / p->page_bytes;
                snprintf(p->unreachable_why, sizeof(p->unreachable_why), "%s",
                         "its attachers' maps lines name it on two devices (one a file named like it): which "
                         "file is the segment is unknown");
                return;
        }
        if (pr && p->n_ranges) {
                /* a SysV segment's device is the kernel's shm mount, which
                 * /proc/sysvipc/shm does not name: the maps line does */
                for (size_t j = 0; j < pr->n_maps; j++) {
                        const struct ng_map *m = &pr->maps[j];
                        if (m->start != p->ranges[0].start)
                                continue;
                        p->dev_major = m->dev_major;
                        p->dev_minor = m->dev_minor;
                        p->inode = m->inode;
                        /* a SysV segment's inode is its shmid: its name
                         * tells it from a memfd given the same number */
                        if (seg->kind == NG_SEG_SYSV)
                                snprintf(p->seg_name, sizeof(p->seg_name), "%s%s", m->path,
                                         m->deleted ? " (deleted)" : "");
                }
                snprintf(p->seg_path, sizeof(p->seg_path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int) pr->pid,
                         p->ranges[0].start, p->ranges[0].end);
                p->seg_follow = true;
                return;
        }
        p->pid = 0;
        const struct ng_shm_file *f = seg->kind == NG_SEG_FILE ? segment_file(s, seg) : NULL;
        if (f && strlen(f->path) < sizeof(p->seg_path)) {
                snprintf(p->seg_path, sizeof(p->seg_path), "%s", f->path);
                p->seg_root_pid = f->ns_pid;
                return;
        }
        p->unreachable_pages = seg->resident_bytes / p->page_bytes;
        snprintf(p->unreachable_why, sizeof(p->unreachable_why), "%s",
                 f ? "its path is longer than numaguard opens"
                   : "no process maps it, and a SysV or anonymous shared segment is opened only through "
                     "/proc/PID/map_files of a process that does");
}

/* The destinations: ng_instance_spread_nodes() (nodes=, else the CPUs'
 * nodes or all; nodes with memory, no slower tier, nothing outside the
 * instance's Mems_allowed: the kernel refuses those to a move through an
 * attacher, and numaguard's own mapping must not do what it may not). */
static void plan_dest(const struct ng_snapshot *s, const struct ng_instance *in, struct ng_rebalance_plan *p)
{
        struct ng_bitmap spread;
        ng_instance_spread_nodes(s, in, &spread);
        for (size_t i = 0; i < p->n_nodes; i++) {
                struct ng_rebalance_node *n = &p->nodes[i];
                n->dest = n->node >= 0 && ng_bitmap_test(&spread, (unsigned) n->node);
                if (n->dest && p->n_dest < NG_REBALANCE_MAX_NODES)
                        p->dest[p->n_dest++] = n->node;
        }
}

/* The policy the segment's new pages are to follow: the instance's, over
 * the nodes its pages spread over. */
static void plan_policy(const struct ng_snapshot *s, const struct ng_instance *in, struct ng_rebalance_plan *p)
{
        p->policy = NG_MPOL_DEFAULT;
        if (p->huge) {
                snprintf(p->policy_note, sizeof(p->policy_note), "a hugetlb segment has no shared policy: its new "
                         "pages follow the faulting process's policy and cpuset, from the pools");
                return;
        }
        struct ng_bitmap b = {0};
        for (size_t i = 0; i < p->n_dest; i++)
                ng_bitmap_set(&b, (unsigned) p->dest[i]);
        p->policy = ng_instance_segment_policy(s, in, &b, p->policy_text, sizeof(p->policy_text));
        if (p->policy != NG_MPOL_WEIGHTED_INTERLEAVE)
                return;
        /* the pages there now are laid out as the kernel lays new ones */
        unsigned w[NG_REBALANCE_MAX_NODES];
        const char *src = ng_instance_interleave_weights(s, in, &b, w, ELEMENTSOF(w));
        snprintf(p->weights_source, sizeof(p->weights_source), "%s", src);
        for (size_t i = 0; i < p->n_nodes; i++)
                p->nodes[i].weight = p->nodes[i].dest && p->nodes[i].node >= 0 &&
                                     (size_t) p->nodes[i].node < ELEMENTSOF(w) ? w[p->nodes[i].node] : 0;
}

static uint64_t node_avail_pages(const struct ng_node *nd, const struct ng_config *cfg, const struct ng_segment *seg,
                                 uint64_t page_bytes)
{
        struct ng_node_supply sup;
        ng_node_supply(nd, cfg->node_free_floor_bytes, seg->huge ? seg->page_kib : 0, &sup);
        /* Unknown supply takes nothing. */
        if (seg->huge)
                return sup.free_pages.v;
        return sup.avail_bytes.known ? sup.avail_bytes.v / page_bytes : 0;
}

static uint64_t global_huge_free(const struct ng_snapshot *s, const struct ng_segment *seg)
{
        if (!seg->huge)
                return UINT64_MAX;
        for (size_t i = 0; i < s->n_pools; i++)
                if (s->pools[i].page_kib == seg->page_kib)
                        return s->pools[i].free_pages > s->pools[i].resv_pages
                                       ? s->pools[i].free_pages - s->pools[i].resv_pages : 0;
        return UINT64_MAX;
}

/* Pages on a node the topology does not list: a placement numaguard does
 * not understand (AUDIT_INCOMPLETE says so) is never corrected. */
static void refuse_foreign(const struct ng_snapshot *s, struct ng_rebalance_plan *p)
{
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_rebalance_node *n = &p->nodes[i];
                if (!n->before_pages || ng_snapshot_node(s, n->node))
                        continue;
                p->verdict = NG_OUTCOME_REFUSED;
                snprintf(p->reason, sizeof(p->reason), "%" PRIu64 " of its pages sit on node %d, which is not in "
                         "the topology (see AUDIT_INCOMPLETE): nothing is moved on a placement that cannot be "
                         "understood", n->before_pages, n->node);
                return;
        }
}

static int plan_refuse(struct ng_rebalance_plan *p, enum ng_outcome verdict, const char *why)
{
        p->verdict = verdict;
        snprintf(p->reason, sizeof(p->reason), "%s", why);
        return 0;
}

/* Resident pages whose nodes nothing read (a numa_maps or maps that could
 * not be used, an attacher that maps none of the kernel's count): planned
 * from its nodes, such a segment would read as "nothing resident, nothing
 * to move". */
static bool placement_unknown(const struct ng_segment *seg)
{
        return seg->placement_source == NG_SOURCE_NONE &&
               (seg->resident_bytes > 0 || seg->resident_source == NG_SOURCE_NONE);
}

static int refuse_unknown(struct ng_rebalance_plan *p, const struct ng_segment *seg)
{
        char sz[24], who[64], pids[80];
        ng_rebalance_format_size(seg->resident_bytes, sz, sizeof(sz));
        p->verdict = NG_OUTCOME_REFUSED;
        if (ng_segment_untrusted_only(seg))
                snprintf(p->reason, sizeof(p->reason), "its placement is unknown: it is attached only by processes "
                         "of other users than %s (%s), whose page tables are not taken for it (see "
                         "AUDIT_INCOMPLETE); nothing is moved on a placement that was not read",
                         ng_segment_speakers_text(seg, who, sizeof(who)),
                         ng_segment_untrusted_text(seg, pids, sizeof(pids)));
        else if (seg->resident_source == NG_SOURCE_NONE)
                snprintf(p->reason, sizeof(p->reason), "its resident pages and their nodes are unknown (see "
                         "AUDIT_INCOMPLETE): nothing is moved on a placement that was not read");
        else
                snprintf(p->reason, sizeof(p->reason), "its placement is unknown: the nodes of its %s resident were "
                         "not read (see AUDIT_INCOMPLETE); nothing is moved on a placement that was not read", sz);
        return 0;
}

static void plan_nodes(const struct ng_snapshot *s, const struct ng_config *cfg, const struct ng_segment *seg,
                       struct ng_rebalance_plan *p)
{
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                if (!nd->has_memory)
                        continue;
                int k = ng_rebalance_node_index_add(p, nd->id);
                if (k >= 0)
                        p->nodes[k].avail_pages = node_avail_pages(nd, cfg, seg, p->page_bytes);
        }
        for (size_t i = 0; i < seg->n_nodes; i++) {
                int k = ng_rebalance_node_index_add(p, seg->nodes[i].node);
                if (k >= 0)
                        p->nodes[k].before_pages += seg->nodes[i].bytes / p->page_bytes;
        }
}

int ng_rebalance_plan_segment(const struct ng_snapshot *s, const struct ng_config *cfg,
                              const struct ng_instance *in, const struct ng_segment *seg,
                              struct ng_rebalance_plan *ret)
{
        if (!s || !cfg || !in || !seg || !ret)
                return -EINVAL;
        struct ng_rebalance_plan *p = ret;
        memset(p, 0, sizeof(*p));
        ng_segment_label(seg, p->label, sizeof(p->label));
        p->pid = seg->rep_pid;
        p->huge = seg->huge;
        p->page_bytes = ng_kib_bytes_sat(seg->page_kib ? seg->page_kib : 4);
        p->huge_free_pages = global_huge_free(s, seg);
        if (s->topo.n_nodes < 2)
                return plan_refuse(p, NG_OUTCOME_NOOP, "one NUMA node: nothing to rebalance");
        if (seg->kind == NG_SEG_PRIVATE)
                return plan_refuse(p, NG_OUTCOME_NOOP, "private memory of one process: not a shared segment");
        /* attached, and yet nothing read where its pages sit: that, not
         * the way in, is why */
        if (seg->n_pids > 0 && placement_unknown(seg))
                return refuse_unknown(p, seg);
        const struct ng_proc *pr = seg->rep_pid ? ng_snapshot_proc(s, seg->rep_pid) : NULL;
        /* pages move only through a process that may speak for it, its
         * maps line the one the placement took (speakers.c) */
        if (pr && !ng_segment_may_speak(seg, pr)) {
                char why[sizeof(p->reason)], who[64];
                snprintf(why, sizeof(why), "pid %d is of another user than %s: its page tables and maps line are "
                         "not taken for it", (int) pr->pid, ng_segment_speakers_text(seg, who, sizeof(who)));
                return plan_refuse(p, NG_OUTCOME_REFUSED, why);
        }
        if (seg->huge && seg->page_kib == 0)
                return plan_refuse(p, NG_OUTCOME_REFUSED, "hugetlb page size unknown");
        if (pr)
                plan_ranges(pr, seg, p);
        if (!seg->huge)
                plan_segment_file(s, seg, pr, p);
        else {
                p->via = NG_REBALANCE_VIA_ATTACHER;
                if (seg->resident_source == NG_SOURCE_SEGMENT || seg->resident_source == NG_SOURCE_COUNTER)
                        p->known_resident_pages = seg->resident_bytes / p->page_bytes;
                if (!pr)
                        return plan_refuse(p, NG_OUTCOME_REFUSED, "no attached process: a hugetlb segment's "
                                           "pages are reached only through an attacher's page tables");
                if (p->n_ranges == 0)
                        return plan_refuse(p, NG_OUTCOME_REFUSED, "the attached process no longer maps it");
        }
        if (p->via == NG_REBALANCE_VIA_SEGMENT && !p->seg_path[0]) {
                char why[sizeof(p->reason)];
                snprintf(why, sizeof(why), "%" PRIu64 " resident pages out of reach: %s", p->unreachable_pages,
                         p->unreachable_why);
                return plan_refuse(p, NG_OUTCOME_REFUSED, why);
        }
        if (placement_unknown(seg))     /* a file nobody maps, nothing kept of it */
                return refuse_unknown(p, seg);
        plan_nodes(s, cfg, seg, p);
        plan_dest(s, in, p);
        plan_policy(s, in, p);
        if (p->n_dest == 0)
                return plan_refuse(p, NG_OUTCOME_REFUSED, "none of the instance's nodes has memory");
        ng_rebalance_replan(p);
        refuse_foreign(s, p);
        return 0;
}

/* The remainder of R / n goes to the destinations holding most already. */
/* Shares in proportion to the weights (weighted interleave); the pages a
 * rounding leaves go to the heaviest nodes first. */
static bool plan_weighted_targets(struct ng_rebalance_plan *p)
{
        uint64_t sum = 0, given = 0;
        for (size_t i = 0; i < p->n_nodes; i++)
                sum += p->nodes[i].dest ? p->nodes[i].weight : 0;
        if (sum == 0)
                return false;
        for (size_t i = 0; i < p->n_nodes; i++) {
                struct ng_rebalance_node *n = &p->nodes[i];
                /* pages x weight / sum, without overflow: weights are <= 255 */
                n->target_pages = n->dest ? p->resident_pages / sum * n->weight +
                                            p->resident_pages % sum * n->weight / sum : 0;
                given += n->target_pages;
        }
        while (given < p->resident_pages) {
                struct ng_rebalance_node *best = NULL;
                for (size_t i = 0; i < p->n_nodes; i++)
                        if (p->nodes[i].dest && (!best || p->nodes[i].weight > best->weight))
                                best = &p->nodes[i];
                best->target_pages++;
                given++;
        }
        return true;
}

static void plan_targets(struct ng_rebalance_plan *p)
{
        if (plan_weighted_targets(p))
                return;
        uint64_t base = p->resident_pages / p->n_dest, extra = p->resident_pages % p->n_dest;
        for (size_t i = 0; i < p->n_nodes; i++)
                p->nodes[i].target_pages = p->nodes[i].dest ? base : 0;
        for (; extra > 0; extra--) {
                struct ng_rebalance_node *best = NULL;
                for (size_t i = 0; i < p->n_nodes; i++) {
                        struct ng_rebalance_node *n = &p->nodes[i];
                        if (n->dest && n->target_pages == base && (!best || n->before_pages > best->before_pages))
                                best = n;
                }
                best->target_pages++;
        }
}

static bool check_supply(struct ng_rebalance_plan *p)
{
        char a[24], b[24];
        for (size_t i = 0; i < p->n_nodes; i++) {
                const struct ng_rebalance_node *n = &p->nodes[i];
                if (n->in_pages <= n->avail_pages)
                        continue;
                if (p->huge)
                        snprintf(p->reason, sizeof(p->reason),
                                 "node %d has %" PRIu64 " free %" PRIu64 " kB hugepages, %" PRIu64 " needed "
                                 "(reserve them there first: numaguardctl hugepages)",
                                 n->node, n->avail_pages, p->page_bytes / 1024, n->in_pages);
                else {
                        ng_rebalance_format_size(n->avail_pages * p->page_bytes, a, sizeof(a));
                        ng_rebalance_format_size(n->in_pages * p->page_bytes, b, sizeof(b));
                        snprintf(p->reason, sizeof(p->reason),
                                 "node %d can take %s above its free-memory floor, %s needed", n->node, a, b);
                }
                return false;
        }
        if (p->huge && p->move_pages > p->huge_free_pages) {
                snprintf(p->reason, sizeof(p->reason),
                         "%" PRIu64 " free unreserved %" PRIu64 " kB hugepages in the pool, %" PRIu64 " needed",
                         p->huge_free_pages, p->page_bytes / 1024, p->move_pages);
                return false;
        }
        return true;
}

void ng_rebalance_replan(struct ng_rebalance_plan *p)
{
        p->resident_pages = p->move_pages = 0;
        for (size_t i = 0; i < p->n_nodes; i++)
                p->resident_pages += p->nodes[i].before_pages;
        plan_targets(p);
        for (size_t i = 0; i < p->n_nodes; i++) {
                struct ng_rebalance_node *n = &p->nodes[i];
                n->in_pages = n->target_pages > n->before_pages ? n->target_pages - n->before_pages : 0;
                n->out_pages = n->before_pages > n->target_pages ? n->before_pages - n->target_pages : 0;
                p->move_pages += n->in_pages;
        }
        p->reason[0] = '\0';
        if (p->resident_pages == 0) {
                p->verdict = NG_OUTCOME_NOOP;
                if (p->via == NG_REBALANCE_VIA_SEGMENT)
                        snprintf(p->reason, sizeof(p->reason), "no page of it is resident");
                else
                        snprintf(p->reason, sizeof(p->reason), "no resident page reachable through pid %d",
                                 (int) p->pid);
        } else if (p->move_pages == 0) {
                p->verdict = NG_OUTCOME_NOOP;
                snprintf(p->reason, sizeof(p->reason), "already spread evenly over its %zu nodes", p->n_dest);
        } else
                p->verdict = check_supply(p) ? NG_OUTCOME_DRY_RUN : NG_OUTCOME_REFUSED;
}

const char *ng_rebalance_format_moves(const struct ng_rebalance_plan *p, bool moved, char *buf, size_t size)
{
        size_t len = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < p->n_nodes && len < size; i++) {
                const struct ng_rebalance_node *n = &p->nodes[i];
                uint64_t in = moved ? n->moved_in_pages : n->in_pages, out = moved ? n->moved_out_pages : n->out_pages;
                if (!in && !out)
                        continue;
                int k = snprintf(buf + len, size - len, "%snode%d %s%" PRIu64, len ? ", " : "", n->node,
                                 in ? "+" : "-", in ? in : out);
                if (k < 0)
                        break;
                len += (size_t) k;
        }
        return buf;
}

int ng_rebalance_plan_check(const struct ng_snapshot *s, const struct ng_audit *a, struct ng_rebalance_plan *plan)
{
        if (!s || !a || !plan)
                return -EINVAL;
        plan->check[0] = '\0';
        if (!plan->huge || plan->verdict != NG_OUTCOME_DRY_RUN || plan->move_pages == 0)
                return 0;
        _cleanup_free_ struct ng_resv_delta *d = calloc(plan->n_nodes + 1, sizeof(*d));
        size_t n = 0;
        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_nodes; i++) {
                const struct ng_rebalance_node *nd = &plan->nodes[i];
                if (nd->in_pages != nd->out_pages)
                        d[n++] = (struct ng_resv_delta) { .node = nd->node,
                                                          .pages = (int64_t) nd->out_pages - (int64_t) nd->in_pages };
        }
        struct ng_resv_change chg = { .page_kib = plan->page_bytes / 1024, .delta = d, .n_delta = n };
        struct ng_resv_verdict v;
        int r = ng_resv_check(s, a, &chg, &v);
        if (r < 0)
                return r;
        snprintf(plan->check, sizeof(plan->check), "%s", v.message);
        if (!v.ok) {
                plan->verdict = NG_OUTCOME_REFUSED;
                plan->check_refused = true;
                snprintf(plan->reason, sizeof(plan->reason), "%.*s", (int) sizeof(plan->reason) - 1, v.message);
        }
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: where the processes' segments' pages sit: numa_maps or tier-1
 * samples of one representative per segment, and each segment asked of
 * itself (collect-whole.c). */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "placement-internal.h"
#include "proc.h"
#include "engine.h"
#include "parse.h"
#include "sample.h"
#include "ng-snapshot.h"
#include "units.h"
#include "util.h"

struct seg_id {
        unsigned major, minor;
        uint64_t inode;
        uint64_t ipc_ns;        /* a SysV shmid is one only in its namespace */
        pid_t private_pid;      /* private mappings belong to one process */
};

static struct seg_id map_id(const struct ng_proc *pr, const struct ng_map *m)
{
        return (struct seg_id) {
                .major = m->dev_major, .minor = m->dev_minor, .inode = m->inode,
                .ipc_ns = m->kind == NG_MAP_SYSV ? pr->ipc_ns : 0,
                .private_pid = m->kind == NG_MAP_ANON_PRIVATE ? pr->pid : 0,
        };
}

/* Member by member: memcmp() would compare the struct's padding too, which
 * a compound literal leaves unset, and then no segment was ever "seen": the
 * daemon sampled a segment in a dozen attachers a poll instead of one. */
static bool same_id(const struct seg_id *a, const struct seg_id *b)
{
        return a->major == b->major && a->minor == b->minor && a->inode == b->inode && a->ipc_ns == b->ipc_ns &&
               a->private_pid == b->private_pid;
}

static bool id_seen(const struct seg_id *ids, size_t n, struct seg_id id)
{
        for (size_t i = 0; i < n; i++)
                if (same_id(&ids[i], &id))
                        return true;
        return false;
}

struct id_set {
        struct seg_id *v;
        size_t n, cap;
};

static int id_set_add(struct id_set *set, struct seg_id id)
{
        if (ng_grow(&set->v, &set->cap, set->n, sizeof(*set->v), 0) < 0)
                return -ENOMEM;
        set->v[set->n++] = id;
        return 0;
}

int ng_proc_rep_cmp(const struct ng_proc *a, const struct ng_proc *b)
{
        uint64_t x = a->status.rss_shmem_kib + a->status.hugetlb_kib, y = b->status.rss_shmem_kib + b->status.hugetlb_kib;
        if (x != y)
                return x > y ? -1 : 1;
        return (a->pid > b->pid) - (a->pid < b->pid);
}

static int rep_cmp_ptr(const void *a, const void *b)
{
        return ng_proc_rep_cmp(**(struct ng_proc **const *) a, **(struct ng_proc **const *) b);
}

/* A mapping of pr's that pr may still be asked for: a segment no earlier
 * representative covered, and one pr may speak for (speakers.c). */
static bool wanted(const struct collector *c, const struct ng_proc *pr, const struct ng_map *m,
                   const struct id_set *seen)
{
        return ng_map_is_segment(m) && !id_seen(seen->v, seen->n, map_id(pr, m)) &&
               ng_snapshot_may_speak(c->s, pr, m);
}

/*
 * Calls fn once for the representative of every segment: the first attacher
 * in ng_proc_rep_cmp() order that may speak for it (speakers.c) and for
 * which fn succeeds (> 0). fn returning 0 means "not this one" (gone, not
 * readable): the next attacher serves. Its uids are read again after fn:
 * what it speaks for is what it may still speak for then, and another
 * attacher serves the rest.
 */
static int for_each_representative(struct collector *c,
                                   int (*fn)(struct collector *c, struct ng_proc *pr, const struct id_set *seen))
{
        struct ng_snapshot *s = c->s;
        struct id_set seen = {0};
        int r = 0;
        _cleanup_free_ struct ng_proc ***order = malloc((s->n_procs + 1) * sizeof(*order));
        if (!order)
                return -ENOMEM;
        /* Only a process with maps can serve. */
        size_t n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                if (s->procs[i]->n_maps)
                        order[n++] = &s->procs[i];
        qsort(order, n, sizeof(*order), rep_cmp_ptr);

        for (size_t i = 0; i < n && r >= 0; i++) {
                struct ng_proc *pr = *order[i];
                bool needed = false;
                for (size_t j = 0; j < pr->n_maps && !needed; j++)
                        needed = wanted(c, pr, &pr->maps[j], &seen);
                if (!needed)
                        continue;
                /* fn annotates the record: s's own, never a picture's
                 * shared one */
                r = ng_snapshot_own_proc(s, (size_t) (order[i] - s->procs));
                if (r < 0)
                        break;
                pr = *order[i];
                /* move_pages(2) reads no file: say whom we wait on first. */
                c->current_pid = pr->pid;
                if (c->o.progress)
                        c->o.progress(c->o.progress_data, pr->pid);
                r = fn(c, pr, &seen);
                if (r <= 0)
                        continue;
                r = ng_collect_reread_uids(c, pr);
                for (size_t j = 0; j < pr->n_maps && r >= 0; j++)
                        if (wanted(c, pr, &pr->maps[j], &seen))
                                r = id_set_add(&seen, map_id(pr, &pr->maps[j]));
        }
        free(seen.v);
        c->current_pid = 0;
        return r;
}

static void numa_maps_unknown(struct ng_proc *pr)
{
        ng_numa_maps_free(pr->numa_maps, pr->n_numa_maps);
        pr->numa_maps = NULL;
        pr->n_numa_maps = 0;
}

/* Tier 2: the representative's numa_maps (a page-table walk of the whole
 * process: never one read per attached process, that stalls databases).
 * What it cannot say is a problem naming it, and the next attacher serves:
 * 0, as for a process gone meanwhile. */
static int read_numa_maps(struct collector *c, struct ng_proc *pr, const struct id_set *seen)
{
        (void) seen;    /* one read covers every mapping of the process */
        char *buf, path[64];
        snprintf(path, sizeof(path), NG_PROC_DIR "/%d/numa_maps", (int) pr->pid);
        int r = ng_collect_read(c, &buf, NULL, "%s", path);
        if (r < 0) {
                /* gone meanwhile is normal; anything else leaves the
                 * placement it would give unknown, and says so */
                if (r != -ENOENT && r != -ESRCH)
                        ng_collect_problem(c, path, "%s: the placement of the segments of pid %d (%s) is unknown",
                                           strerror(-r), (int) pr->pid, pr->name);
                return 0;
        }
        c->s->cost.numa_maps_read++;
        struct ng_parse_skipped bad = {};
        r = ng_parse_numa_maps(buf, &pr->numa_maps, &pr->n_numa_maps, &bad);
        free(buf);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || (pr->n_numa_maps == 0 && pr->n_maps > 0)) {
                numa_maps_unknown(pr);
                ng_collect_problem(c, path, "no line parses: the placement of the segments of pid %d (%s) is "
                                   "unknown", (int) pr->pid, pr->name);
                return 0;
        }
        /* A line that does not parse may be a segment's (its address may
         * be the garbage): none of this process's placement is taken. */
        if (bad.lines) {
                numa_maps_unknown(pr);
                ng_collect_problem(c, path, "line %zu is not one the kernel prints (%zu such line%s): the placement "
                                   "of the segments of pid %d (%s) is unknown", bad.first_line, bad.lines,
                                   bad.lines == 1 ? "" : "s", (int) pr->pid, pr->name);
                return 0;
        }
        /* Page counts whose bytes overflow or exceed any machine, pages on
         * a node the host does not have: the placement of this process's
         * segments is unknown. */
        struct ng_bitmap nodes = {0};
        for (size_t i = 0; i < c->s->topo.n_nodes; i++)
                ng_bitmap_set(&nodes, (unsigned) c->s->topo.nodes[i].id);
        for (size_t i = 0; i < pr->n_numa_maps; i++) {
                const struct ng_numa_map *nm = &pr->numa_maps[i];
                uint64_t sum = 0, bytes;
                for (size_t k = 0; k < nm->n_np; k++) {
                        if (!ng_bitmap_test(&nodes, (unsigned) nm->np[k].node)) {
                                ng_collect_problem(c, path, "N%d=%" PRIu64 " at %" PRIx64 ": node %d is not in the "
                                        "topology: the placement of the segments of pid %d (%s) is unknown",
                                        nm->np[k].node, nm->np[k].pages, nm->start, nm->np[k].node, (int) pr->pid,
                                        pr->name);
                                numa_maps_unknown(pr);
                                return 0;
                        }
                        if (ng_add_u64(sum, nm->np[k].pages, &sum) &&
                            ng_units_bytes(sum, nm->kernelpagesize_kib ? nm->kernelpagesize_kib : 4, &bytes))
                                continue;
                        ng_collect_problem(c, path, "N%d=%" PRIu64 " pages at %" PRIx64 " is more memory than any machine "
                                "holds: this process's placement is unknown", nm->np[k].node, nm->np[k].pages,
                                nm->start);
                        numa_maps_unknown(pr);
                        return 0;
                }
        }
        pr->has_numa_maps = true;
        return 1;
}

/* Tier 0: page size of every segment mapping of the representative, from
 * st_blksize of its map_files link (hugetlbfs reports the huge page size). */
static int read_page_sizes(struct collector *c, struct ng_proc *pr, const struct id_set *seen)
{
        bool any = false;
        for (size_t j = 0; j < pr->n_maps; j++) {
                struct ng_map *m = &pr->maps[j];
                uint64_t bytes;
                if (!wanted(c, pr, m, seen))
                        continue;
                if (ng_path_blksize(c->p, &bytes, NG_PROC_DIR "/%d/map_files/%" PRIx64 "-%" PRIx64,
                                    pr->pid, m->start, m->end) < 0)
                        continue;
                m->page_kib = bytes / 1024;
                any = true;
        }
        return any;
}


/* Tier 1: move_pages(2) on sample_pages addresses of each VMA of the
 * segments no earlier representative covered: never a segment twice. */
static int sample_proc(struct collector *c, struct ng_proc *pr, const struct id_set *seen)
{
        bool any = false;
        for (size_t j = 0; j < pr->n_maps; j++) {
                const struct ng_map *m = &pr->maps[j];
                struct ng_sample smp;
                if (!wanted(c, pr, m, seen) ||
                    ng_collect_whole_done(c, m->kind == NG_MAP_SYSV, pr->ipc_ns, m->dev_major, m->dev_minor, m->inode))
                        continue;
                int r = ng_sample_range(pr->pid, m->start, m->end - m->start, m->page_kib * 1024,
                                        c->o.sample_pages, NULL, &smp);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return any;     /* gone or not permitted: keep what we have */
                c->s->cost.pages_sampled += smp.asked;
                r = ng_collect_add_sample(c->s, &smp);
                if (r < 0) {
                        ng_sample_done(&smp);
                        return r;
                }
                any = true;
        }
        return any;
}

int ng_collect_placement(struct collector *c)
{
        enum ng_placement pl = c->o.placement;
        bool live = ng_path_is_live(c->p);
        bool files_only = pl == NG_PLACEMENT_EXACT_FILES || !live;
        if (pl == NG_PLACEMENT_EXACT_FILES)
                pl = NG_PLACEMENT_EXACT;
        if (pl == NG_PLACEMENT_AUTO || (pl == NG_PLACEMENT_SAMPLED && !live))
                pl = live ? NG_PLACEMENT_SAMPLED : NG_PLACEMENT_EXACT;
        c->s->placement = pl;
        if (c->o.sample_pages == 0)
                c->o.sample_pages = 4096;
        /* Exact placement carries kernelpagesize_kB; probing map_files too
         * would give the live host facts a --root replay cannot have. */
        int r = pl == NG_PLACEMENT_SAMPLED ? for_each_representative(c, read_page_sizes) : 0;
        if (r < 0)
                return r;
        /* Shmem segments are asked of themselves, every resident page
         * counted; what is left (hugetlb, private memory) of an attacher. */
        if (!files_only && (pl == NG_PLACEMENT_SAMPLED || pl == NG_PLACEMENT_EXACT))
                r = ng_collect_whole(c, pl == NG_PLACEMENT_EXACT);
        /* A snapshot (files only, live) keeps the answers of the files
         * nobody maps, which no process's numa_maps can give a tree; a
         * tree replays them. */
        else if (files_only)
                r = ng_collect_whole_kept(c);
        if (r < 0)
                return r;
        switch (pl) {
        case NG_PLACEMENT_SAMPLED:
                return for_each_representative(c, sample_proc);
        case NG_PLACEMENT_EXACT:
                return for_each_representative(c, read_numa_maps);
        default:
                return 0;
        }
}

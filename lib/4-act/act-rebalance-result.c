/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rebalance: what a run says -- its outcome (done, partial, transient,
 * permanent, a verdict of the plan) and the summary users read, with the
 * pages moved per node and what was left and why.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "act-rebalance-run.h"

/* ---- the result ---- */

static enum ng_outcome outcome_for(int err)
{
        /* the process went, or the segment's file is gone or another one:
         * the next poll plans again */
        if (err == -ESRCH || err == -ENOENT || err == -ESTALE || ng_errno_transient(err))
                return NG_OUTCOME_TRANSIENT;
        return NG_OUTCOME_PERMANENT;
}

size_t ng_rebalance_tail_notes(const struct run *r, char *buf, size_t size)
{
        int k = 0;
        if (r->p->unreachable_pages)
                k = snprintf(buf, size, "; %" PRIu64 " resident pages out of reach: %s", r->p->unreachable_pages,
                             r->p->unreachable_why);
        if (k >= 0 && (size_t) k < size && r->st.not_resident_pages && r->p->via == NG_REBALANCE_VIA_ATTACHER)
                k += snprintf(buf + k, size - (size_t) k, "; %" PRIu64 " pages not resident in pid %d left alone",
                              r->st.not_resident_pages, (int) r->p->pid);
        if (k >= 0 && (size_t) k < size && r->left_for_room)
                k += snprintf(buf + k, size - (size_t) k, "; %" PRIu64 " pages left where they are: node %d reached "
                              "its free-memory floor", r->left_for_room, r->p->dest[0]);
        if (k >= 0 && (size_t) k < size && r->st.busy_pages)
                k += snprintf(buf + k, size - (size_t) k, "; %" PRIu64 " pages busy (EBUSY), left for a later run",
                              r->st.busy_pages);
        return k < 0 ? 0 : (size_t) k;
}

static void summarize(const struct run *r, int err, struct ng_action_result *res)
{
        const struct ng_rebalance_plan *p = r->p;
        char moves[256], size[24], notes[400] = "", why[128] = "";
        ng_rebalance_tail_notes(r, notes, sizeof(notes));
        if (err < 0)
                snprintf(why, sizeof(why), "%s: %s%s; ", r->failed_call ? r->failed_call : "move_pages",
                         strerror(-err), err == -EPERM ? " (MPOL_MF_MOVE_ALL needs CAP_SYS_NICE)" : "");
        if (r->o->dry_run) {
                ng_rebalance_format_size(p->move_pages * p->page_bytes, size, sizeof(size));
                snprintf(res->summary, sizeof(res->summary),
                         "would move %" PRIu64 " of %" PRIu64 " resident pages (%s) of %s: %s%s",
                         p->move_pages, p->resident_pages, size, p->label,
                         ng_rebalance_format_moves(p, false, moves, sizeof(moves)), notes);
                return;
        }
        ng_rebalance_format_size(r->st.moved_pages * p->page_bytes, size, sizeof(size));
        snprintf(res->summary, sizeof(res->summary),
                 "%smoved %" PRIu64 " pages (%s) of %s: %s in %" PRIu64 " ms%s", why, r->st.moved_pages, size,
                 p->label, r->st.moved_pages ? ng_rebalance_format_moves(p, true, moves, sizeof(moves)) : "none",
                 r->st.elapsed_usec / 1000, notes);
}

void ng_rebalance_finish(struct run *r, int err, struct ng_action_result *res)
{
        res->error = err;
        struct ng_rebalance_plan *p = r->p;
        /* one way, nothing found elsewhere: as the count would have said */
        if (err >= 0 && r->one_way && p->move_pages == 0 && r->st.busy_pages == 0 && p->unreachable_pages == 0) {
                p->verdict = NG_OUTCOME_NOOP;
                if (p->resident_pages)
                        snprintf(p->reason, sizeof(p->reason), "already spread evenly over its %zu nodes", p->n_dest);
                else
                        snprintf(p->reason, sizeof(p->reason), "no page of it is resident");
                ng_rebalance_verdict_result(p, res);
                return;
        }
        if (err < 0)
                res->outcome = outcome_for(err);
        else if (r->o->dry_run)
                res->outcome = NG_OUTCOME_DRY_RUN;
        else if (r->st.busy_pages == 0 && r->p->unreachable_pages == 0 && r->left_for_room == 0)
                res->outcome = NG_OUTCOME_DONE;
        else if (r->st.busy_pages == 0)
                res->outcome = NG_OUTCOME_PARTIAL;      /* moved what it reached, not all */
        else if (r->st.moved_pages > 0)
                res->outcome = NG_OUTCOME_PARTIAL;
        else {
                res->outcome = NG_OUTCOME_TRANSIENT;
                res->error = -EBUSY;
        }
        summarize(r, err, res);
}

void ng_rebalance_verdict_result(const struct ng_rebalance_plan *p, struct ng_action_result *res)
{
        res->outcome = p->verdict;
        snprintf(res->summary, sizeof(res->summary), "%s: %s", p->label, p->reason);
}


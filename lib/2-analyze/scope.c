/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: which findings bear on one instance (numaguardctl audit
 * --instance, ng_finding_bears_on()). Its own, and of the host-wide ones
 * those about what it uses: its segments, its nodes, the pools it draws
 * from, the host settings that act on its memory, the host files its audit
 * rests on. A finding about other processes (their maps could not be read)
 * or about the host as a whole (its page tables, an idle pool) is left to
 * the audit of the host. Pure: no I/O.
 */

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "ng-audit.h"

/* Whether the finding's segment is one of in's, by the name or the label
 * messages give it (cut to the finding's field as the finding was). */
static bool its_segment(const struct ng_audit *a, const struct ng_finding *f, const struct ng_instance *in)
{
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                char label[sizeof(f->segment)];
                size_t cut = sizeof(f->segment) - 1;
                ng_segment_label(seg, label, sizeof(label));
                if (!strcmp(f->segment, label) ||
                    (!strncmp(f->segment, seg->name, cut) && strlen(f->segment) == strnlen(seg->name, cut)))
                        return true;
        }
        return false;
}

/* The nodes in uses: where its shared memory sits, its CPUs' nodes, and
 * its nodes= (where a correction would put it). */
static void used_nodes(const struct ng_instance *in, struct ng_bitmap *ret)
{
        *ret = in->cpu_nodes;
        ng_bitmap_or(ret, &in->cfg->nodes);
        for (size_t k = 0; k < in->n_nodes; k++)
                if (in->nodes[k].bytes && in->nodes[k].node >= 0 && in->nodes[k].node < NG_BITMAP_BITS)
                        ng_bitmap_set(ret, (unsigned) in->nodes[k].node);
}

static bool has_pages(const struct ng_audit *a, const struct ng_instance *in, bool huge)
{
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (seg->kind != NG_SEG_PRIVATE && seg->huge == huge && (huge || seg->page_kib == 4))
                        return true;
        }
        return huge && in->hugetlb_kib > 0;
}

bool ng_finding_bears_on(const struct ng_audit *a, const struct ng_finding *f, const struct ng_instance *in)
{
        assert(a && f && in);
        if (f->instance[0])
                return !strcmp(f->instance, in->name);
        if (f->segment[0])
                return its_segment(a, f, in);
        struct ng_bitmap nodes;
        used_nodes(in, &nodes);
        bool near = ng_bitmap_intersects(&f->nodes, &nodes);
        switch (f->code) {
        case NG_CODE_ZONE_RECLAIM_ON:   /* every allocation on every node */
        case NG_CODE_NUMAD_RUNNING:     /* moves whole processes */
                return true;
        case NG_CODE_AUTONUMA_ON:       /* moves 4 KiB shared pages, never hugetlb */
                return has_pages(a, in, false);
        case NG_CODE_HUGEPAGE_OVERCOMMIT:
        case NG_CODE_HUGEPAGE_NOT_PERSISTENT:
                return near && has_pages(a, in, true);
        case NG_CODE_AUDIT_INCOMPLETE:
                /* a host file, unless it is some other process's */
                return !f->other_processes && (ng_bitmap_empty(&f->nodes) || near);
        case NG_CODE_PAGETABLE_BLOAT:   /* the host's; the instance's own names it */
        case NG_CODE_HUGEPAGE_IDLE:     /* a pool nobody uses */
                return false;
        default:                        /* NODE_PRESSURE, HIDDEN_HOP, TIERS_IGNORE_HMAT, ... */
                return near;
        }
}

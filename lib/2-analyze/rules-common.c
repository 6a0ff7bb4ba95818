/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analyze, the rules' common ground: adding a finding, and the short
 * human texts (sizes, lists, percentages, prices) their messages use. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-internal.h"
#include "ng-format.h"
#include "units.h"
#include "rules-internal.h"
#include "util.h"

static int vadd(struct audit_ctx *ctx, enum ng_code code, enum ng_severity sev, const struct ng_instance *in,
                const char *segment, const struct ng_bitmap *nodes, double value, const char *advice,
                const char *fmt, va_list ap)
{
        struct ng_audit *a = ctx->a;
        if (ng_grow(&a->findings, NULL, a->n_findings, sizeof(*a->findings), 0) < 0)
                return -ENOMEM;
        struct ng_finding *f = &a->findings[a->n_findings++];
        memset(f, 0, sizeof(*f));
        f->code = code;
        f->severity = sev;
        f->value = value;
        if (in)
                snprintf(f->instance, sizeof(f->instance), "%s", in->name);
        if (in && in->container)
                f->container = *in->container;
        if (segment)
                snprintf(f->segment, sizeof(f->segment), "%s", segment);
        if (nodes)
                f->nodes = *nodes;
        snprintf(f->advice, sizeof(f->advice), "%s", advice);
        vsnprintf(f->message, sizeof(f->message), fmt, ap);
        return 0;
}

int ng_rules_add(struct audit_ctx *ctx, enum ng_code code, const struct ng_instance *in, const char *segment,
                 const struct ng_bitmap *nodes, double value, const char *advice, const char *fmt, ...)
{
        const struct ng_code_info *c = ng_code_info(code);
        if (!c)
                return -EINVAL;
        va_list ap;
        va_start(ap, fmt);
        int r = vadd(ctx, code, c->severity, in, segment, nodes, value, advice, fmt, ap);
        va_end(ap);
        return r;
}

int ng_rules_add_as(struct audit_ctx *ctx, enum ng_code code, enum ng_severity sev, const struct ng_instance *in,
                    const char *segment, const struct ng_bitmap *nodes, double value, const char *advice,
                    const char *fmt, ...)
{
        if (!ng_code_severity_allowed(code, sev, NULL))
                return -EINVAL;         /* an override ng-codes.h does not list */
        va_list ap;
        va_start(ap, fmt);
        int r = vadd(ctx, code, sev, in, segment, nodes, value, advice, fmt, ap);
        va_end(ap);
        return r;
}

struct sz ng_rules_bytes_h(uint64_t bytes)
{
        struct sz r;
        ng_format_kib(bytes / 1024, r.s, sizeof(r.s));
        return r;
}

const char *ng_rules_memory_noun(const struct ng_instance *in)
{
        if (in->private_bytes == 0)
                return "shared memory";
        return in->private_bytes < in->shared_bytes || in->shared_unknown ? "shared and private memory"
                                                                           : "private memory";
}

struct lst ng_rules_list_h(const struct ng_bitmap *b)
{
        struct lst r;
        if (ng_bitmap_format_list(b, r.s, sizeof(r.s)) >= (int) sizeof(r.s))
                strcpy(r.s + sizeof(r.s) - 4, "...");
        return r;
}

uint64_t ng_rules_pct(double f)
{
        return (uint64_t) (f * 100 + 0.5);
}

/* "1", "1.5", "3.98": no trailing zeros. */
struct sz ng_rules_num_h(double v)
{
        struct sz r;
        snprintf(r.s, sizeof(r.s), "%.2f", v);
        char *e = r.s + strlen(r.s);
        while (e > r.s && e[-1] == '0')
                *--e = '\0';
        if (e > r.s && e[-1] == '.')
                e[-1] = '\0';
        return r;
}

/* Where a price's figures come from, in a message's words. */
const char *ng_rules_price_from(const struct ng_price *p)
{
        switch (p->source) {
        case NG_PRICE_MEASURED: return "measured";
        case NG_PRICE_HMAT: return "from the firmware's HMAT";
        case NG_PRICE_SLIT: return "from the SLIT";
        default: return "unknown";
        }
}

/* CYCLOPS: mostly bandwidth and contention. */
struct price_txt ng_rules_bandwidth_h(const struct ng_price *p)
{
        struct price_txt r = { "" };
        if (p->source == NG_PRICE_NONE)
                return r;
        if (p->source == NG_PRICE_MEASURED || p->source == NG_PRICE_HMAT)
                snprintf(r.s, sizeof(r.s), "; bandwidth capped at %s of %u nodes (%s of %s GB/s read, %s), "
                         "%" PRIu64 "%% of accesses remote",
                         ng_rules_num_h(ng_price_ceiling_nodes(p)).s, p->interleave_nodes,
                         ng_rules_num_h(p->bandwidth_ceiling / 1000).s, ng_rules_num_h(p->interleaved_bandwidth_ceiling / 1000).s,
                         ng_rules_price_from(p), ng_rules_pct(p->remote_access_ratio));
        else
                snprintf(r.s, sizeof(r.s), "; bandwidth capped at %s of %u nodes (from the SLIT), %" PRIu64
                         "%% of accesses remote",
                         ng_rules_num_h(ng_price_ceiling_nodes(p)).s, p->interleave_nodes, ng_rules_pct(p->remote_access_ratio));
        return r;
}

/* REMOTE_MEMORY: mostly latency. */
struct price_txt ng_rules_latency_h(const struct ng_price *p)
{
        struct price_txt r = { "" };
        double up = ng_price_latency_pct(p);
        if (p->source == NG_PRICE_NONE || up != up)
                return r;
        char tail[96];
        if (p->source == NG_PRICE_MEASURED || p->source == NG_PRICE_HMAT)
                snprintf(tail, sizeof(tail), "%s vs %s ns, %s", ng_rules_num_h(p->expected_latency).s,
                         ng_rules_num_h(p->local_latency).s, ng_rules_price_from(p));
        else
                snprintf(tail, sizeof(tail), "distance %s vs %s, from the SLIT", ng_rules_num_h(p->expected_latency).s,
                         ng_rules_num_h(p->local_latency).s);
        snprintf(r.s, sizeof(r.s), "; %+.0f %% average memory latency against local (%s)", up, tail);
        return r;
}

bool ng_rules_single_node(const struct ng_bitmap *b, int node)
{
        return ng_bitmap_count(b) == 1 && ng_bitmap_test(b, (unsigned) node);
}

bool ng_rules_same_socket(const struct ng_snapshot *s, const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        bool any = false;
        NG_BITMAP_FOREACH(i, a)
                NG_BITMAP_FOREACH(j, b) {
                        if (i == j)
                                continue;
                        if (!ng_snapshot_same_socket(s, i, j))
                                return false;
                        any = true;
                }
        return any;
}

struct price_txt ng_rules_socket_h(const struct ng_snapshot *s, const struct ng_bitmap *a, const struct ng_bitmap *b)
{
        struct price_txt r = { "" };
        if (!ng_rules_same_socket(s, a, b))
                return r;
        struct ng_bitmap all = *a;
        ng_bitmap_or(&all, b);
        const struct ng_node *nd = ng_snapshot_node(s, ng_bitmap_next(&all, 0));
        snprintf(r.s, sizeof(r.s), "; nodes %.96s are sub-NUMA clusters of one socket (%d): the hop stays inside it",
                 ng_rules_list_h(&all).s, nd ? nd->package_id : -1);
        return r;
}

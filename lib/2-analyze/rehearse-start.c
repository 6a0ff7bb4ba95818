/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: a rehearsal's front (ng-rehearse.h): the settings the
 * instance's next start reads decide which engine's start is rehearsed;
 * PostgreSQL's is here, MariaDB's and Oracle's in rehearse-engines.c, the
 * pools' side of each in rehearse.c.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ng-dbconf.h"
#include "rehearse-internal.h"
#include "units.h"

/* The segment the next start makes again: PostgreSQL's main shared memory,
 * the largest anonymous shared (mmap) or SysV segment the main process maps. */
static const struct ng_segment *main_segment(const struct ng_audit *a, const struct ng_instance *in)
{
        const struct ng_segment *best = NULL;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                bool mapped = false;
                for (size_t i = 0; i < seg->n_pids && !mapped; i++)
                        mapped = seg->pids[i] == in->main_pid;
                if ((seg->kind != NG_SEG_ANON_SHARED && seg->kind != NG_SEG_SYSV) || !mapped || seg->bytes_unknown)
                        continue;
                if (!best || seg->bytes > best->bytes)
                        best = seg;
        }
        return best;
}

/* PostgreSQL's next start: its main segment, mmap (or SysV) of its
 * shared_memory_size, by huge_pages. */
static int rehearse_pg(struct stage *st, const struct ng_db_settings *cfg)
{
        struct ng_rehearsal *r = st->r;
        r->setting = cfg->huge_pages == NG_HUGE_UNSET ? NG_HUGE_TRY : cfg->huge_pages;
        snprintf(r->setting_name, sizeof(r->setting_name), "huge_pages");
        snprintf(r->setting_value, sizeof(r->setting_value), "%s", ng_huge_setting_name(r->setting));
        snprintf(r->setting_from, sizeof(r->setting_from), "%.*s", (int) sizeof(r->setting_from) - 1,
                 cfg->huge_pages == NG_HUGE_UNSET ? "the default" : cfg->huge_pages_from);
        const struct ng_segment *seg = main_segment(st->a, st->in);
        if (!seg)
                return ng_rehearse_unknown(r, "its main process maps no shared segment to size its next start by");
        r->bytes = seg->bytes;
        snprintf(r->size_from, sizeof(r->size_from), "its running segment");
        r->page_kib = cfg->huge_page_size_kib ? cfg->huge_page_size_kib : ng_rehearse_default_page_kib(st->s);
        st->refuse = "PostgreSQL refuses to start (could not map anonymous shared memory)";
        st->fallback = "PostgreSQL falls back to 4 KiB pages";
        ng_rehearse_binding(st, seg);
        if (cfg->shm_sysv || r->setting == NG_HUGE_OFF) {
                bool refuse = cfg->shm_sysv && r->setting == NG_HUGE_ON;
                r->outcome = refuse ? NG_REHEARSE_NO_START : NG_REHEARSE_OFF;
                snprintf(r->why, sizeof(r->why), "%s", !cfg->shm_sysv ? "huge_pages = off: 4 KiB pages as asked"
                         : refuse ? "huge_pages = on with shared_memory_type = sysv: PostgreSQL refuses to start "
                                    "(huge pages not supported with the current shared_memory_type setting)"
                                  : "shared_memory_type = sysv: PostgreSQL makes its main segment in 4 KiB pages");
                if (refuse)
                        snprintf(r->fix, sizeof(r->fix), "set shared_memory_type = mmap (the default)");
                ng_rehearse_cyclops(st);
                return 0;
        }
        uint64_t page = ng_kib_bytes_sat(r->page_kib);
        int e = ng_rehearse_pool(st, seg->bytes / page + (seg->bytes % page != 0));
        if (e >= 0 && r->outcome != NG_REHEARSE_UNKNOWN && st->pool)
                ng_rehearse_cyclops(st);
        return e;
}

int ng_rehearse(const struct ng_snapshot *s, const struct ng_audit *a, const struct ng_instance *in,
                struct ng_rehearsal *ret)
{
        if (!s || !a || !in || !ret)
                return -EINVAL;
        *ret = (struct ng_rehearsal) { .outcome = NG_REHEARSE_UNKNOWN, .cyclops_node = -1 };
        const struct ng_db_settings *cfg = in->main_pid ? ng_snapshot_db_settings(s, in->main_pid) : NULL;
        if (!cfg)
                return ng_rehearse_unknown(ret, in->main_pid ? "its configuration was not read (numaguard reads "
                                                               "PostgreSQL's, MariaDB's and Oracle's)"
                                                             : "it is not running: nothing to size its next start by");
        if (cfg->error) {
                snprintf(ret->why, sizeof(ret->why), "its configuration could not be read: %.200s: %s",
                         cfg->error_path, strerror(-cfg->error));
                return 0;
        }
        if (cfg->unknown[0])
                return ng_rehearse_unknown(ret, cfg->unknown);
        struct stage st = { .s = s, .a = a, .in = in, .r = ret };
        switch (cfg->kind) {
        case NG_DB_CONF_MARIADB:
                return ng_rehearse_mariadb(&st, cfg);
        case NG_DB_CONF_ORACLE:
                return ng_rehearse_oracle(&st, cfg);
        default:
                return rehearse_pg(&st, cfg);
        }
}

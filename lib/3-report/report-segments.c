/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `numaguardctl segments`: every shared segment and where it sits. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cleanup.h"
#include "ng-report.h"
#include "ng-segments.h"
#include "text.h"
#include "util.h"

void ng_report_node_bars(const struct ng_snapshot *s, const struct ng_node_bytes *nb, size_t n, uint64_t whole,
                         const char *indent, FILE *f)
{
        for (size_t k = 0; k < s->topo.n_nodes; k++) {
                int id = s->topo.nodes[k].id;
                uint64_t b = 0;
                for (size_t i = 0; i < n; i++)
                        if (nb[i].node == id)
                                b = nb[i].bytes;
                char bar[NG_FORMAT_BAR_CELLS * 4 + 1], hb[24];
                ng_format_bar(b, whole, bar, sizeof(bar));
                ng_format_kib(b / 1024, hb, sizeof(hb));
                fprintf(f, "%sN%-3d %s %3" PRIu64 "%% %10s\n", indent, id, bar,
                        whole ? (b * 100 + whole / 2) / whole : 0, hb);
        }
}

struct json_object *ng_node_bytes_json(const struct ng_node_bytes *nb, size_t n)
{
        struct json_object *a = json_object_new_array();
        for (size_t k = 0; k < n; k++) {
                struct json_object *o = json_object_new_object();
                json_object_object_add(o, "id", json_object_new_int(nb[k].node));
                json_object_object_add(o, "bytes", json_object_new_uint64(nb[k].bytes));
                json_object_array_add(a, o);
        }
        return a;
}

const char *ng_report_placement_how(const struct ng_segment *seg, char *buf, size_t size)
{
        const char *method = ng_method_name(seg->method);
        int len = 0;
        switch (seg->placement_source) {
        case NG_SOURCE_SEGMENT:
                len = snprintf(buf, size, "%s over the segment's own pages", method);
                if (seg->rep_pid && len >= 0 && (size_t) len < size)
                        len += snprintf(buf + len, size - (size_t) len, " via pid %d", (int) seg->rep_pid);
                break;
        case NG_SOURCE_ATTACHER:
                len = snprintf(buf, size, "%s from pid %d's page tables", method, (int) seg->rep_pid);
                if (seg->placement_coverage >= 0 && seg->placement_coverage < 0.995 && len >= 0 && (size_t) len < size)
                        len += snprintf(buf + len, size - (size_t) len, ", which map %.0f%% of it",
                                        seg->placement_coverage * 100);
                break;
        default:
                len = snprintf(buf, size, "%s", method);
                break;
        }
        if (seg->resident_source == NG_SOURCE_COUNTER && len >= 0 && (size_t) len < size)
                len += snprintf(buf + len, size - (size_t) len, "; resident by the kernel's count");
        if (seg->n_untrusted && len >= 0 && (size_t) len < size) {
                char who[64], pids[80];
                ng_segment_speakers_text(seg, who, sizeof(who));
                ng_segment_untrusted_text(seg, pids, sizeof(pids));
                if (ng_segment_untrusted_only(seg) && seg->placement_source == NG_SOURCE_NONE)
                        snprintf(buf + len, size - (size_t) len, "; where unknown: attached only by processes of "
                                 "other users than %s (%s)", who, pids);
                else
                        snprintf(buf + len, size - (size_t) len, "; not asked through %s (of other users than %s)",
                                 pids, who);
        }
        return buf;
}

/* "2M always, 64K within its size, 16K where madvised". */
static void thp_sizes_text(const struct ng_thp_fold *t, char *buf, size_t size)
{
        static const char *const when[] = {
                [NG_THP_WHEN_ALWAYS] = "always", [NG_THP_WHEN_WITHIN_SIZE] = "within its size",
                [NG_THP_WHEN_ADVISED] = "where madvised",
        };
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < t->n_sizes && o < size; i++) {
                char pg[16];
                ng_format_page_size(t->sizes[i].page_kib, pg, sizeof(pg));
                int n = snprintf(buf + o, size - o, "%s%s %s", i ? ", " : "", pg,
                                 (unsigned) t->sizes[i].when < ELEMENTSOF(when) ? when[t->sizes[i].when] : "?");
                o += n > 0 ? (size_t) n : 0;
        }
}

/* The line under a 4 KiB shmem segment: the page sizes the kernel may
 * fold its pages into (ng_segment_thp()). */
static void print_thp(const struct ng_segment *seg, FILE *f)
{
        const struct ng_thp_fold *t = &seg->thp;
        char sizes[256];
        switch (t->state) {
        case NG_THP_FOLD_KNOWN:
                thp_sizes_text(t, sizes, sizeof(sizes));
                if (t->n_sizes)
                        fprintf(f, "  transparent hugepages: the kernel may fold it into %s (%s)\n", sizes, t->basis);
                else
                        fprintf(f, "  transparent hugepages: none (%s)\n", t->basis);
                break;
        case NG_THP_FOLD_UNKNOWN:
                fprintf(f, "  transparent hugepages: unknown (%s)\n", t->basis);
                break;
        case NG_THP_FOLD_NOT_APPLICABLE:
                break;
        }
}

/* "/dev/shm" or "/dev/shm in mount namespace N", escaped (a mountpoint is
 * anyone's to choose in a namespace of their own). */
static void print_mount(const struct ng_snapshot *s, const struct ng_shm_unlisted *u, FILE *f)
{
        _cleanup_free_ char *mp = ng_text_dup(NG_TEXT_TERM, u->mountpoint);
        fputs(mp ? mp : "(out of memory)", f);
        if (u->mnt_ns && u->mnt_ns != s->mnt_ns)
                fprintf(f, " in mount namespace %" PRIu64, u->mnt_ns);
}

void ng_report_unlisted_text(const struct ng_snapshot *s, FILE *f)
{
        assert(s && f);
        for (size_t i = 0; i < s->n_unlisted; i++) {
                const struct ng_shm_unlisted *u = &s->unlisted[i];
                if (u->small_files) {
                        char min[24], sz[24], al[24];
                        ng_format_kib(s->min_file_bytes / 1024, min, sizeof(min));
                        ng_format_kib(u->small_bytes / 1024, sz, sizeof(sz));
                        ng_format_kib(u->small_allocated_bytes / 1024, al, sizeof(al));
                        print_mount(s, u, f);
                        fprintf(f, ": %" PRIu64 " file%s under %s that no process maps, %s (%s in memory): counted, "
                                "not listed\n", u->small_files, u->small_files == 1 ? "" : "s", min, sz, al);
                }
                if (u->unexamined) {
                        print_mount(s, u, f);
                        fprintf(f, ": %" PRIu64 " entr%s not looked at, past the %d one collection examines "
                                "(see AUDIT_INCOMPLETE)\n", u->unexamined, u->unexamined == 1 ? "y" : "ies",
                                NG_SHM_MAX_EXAMINED);
                }
        }
}

struct json_object *ng_report_unlisted_json(const struct ng_snapshot *s)
{
        assert(s);
        struct json_object *a = json_object_new_array();
        for (size_t i = 0; i < s->n_unlisted; i++) {
                const struct ng_shm_unlisted *u = &s->unlisted[i];
                if (!u->small_files && !u->unexamined)
                        continue;
                struct json_object *o = json_object_new_object();
                json_object_object_add(o, "mountpoint", json_object_new_string(u->mountpoint));
                if (u->mnt_ns)
                        json_object_object_add(o, "mnt_ns", json_object_new_uint64(u->mnt_ns));
                json_object_object_add(o, "small_under_bytes", json_object_new_uint64(s->min_file_bytes));
                json_object_object_add(o, "small_files", json_object_new_uint64(u->small_files));
                json_object_object_add(o, "small_bytes", json_object_new_uint64(u->small_bytes));
                json_object_object_add(o, "small_allocated_bytes", json_object_new_uint64(u->small_allocated_bytes));
                json_object_object_add(o, "unexamined", json_object_new_uint64(u->unexamined));
                json_object_array_add(a, o);
        }
        return a;
}

int ng_report_segments_text(const struct ng_snapshot *s, const struct ng_segment *v, size_t n, FILE *f)
{
        assert(s && (v || n == 0) && f);
        if (n == 0)
                fprintf(f, "no shared memory segments\n");
        for (size_t i = 0; i < n; i++) {
                const struct ng_segment *seg = &v[i];
                char sz[24], res[24], name[NG_TEXT_SIZE(sizeof(seg->name))];
                ng_format_bytes_or(seg->bytes, seg->bytes_unknown, "size unknown", sz, sizeof(sz));
                ng_format_kib(seg->resident_bytes / 1024, res, sizeof(res));
                fprintf(f, "%s%s %s", i ? "\n" : "", seg->kind == NG_SEG_PRIVATE ? "private mapping" :
                        ng_seg_kind_name(seg->kind), ng_text_escape(NG_TEXT_TERM, seg->name, name, sizeof(name)));
                if (seg->kind == NG_SEG_PRIVATE)
                        fprintf(f, " at 0x%" PRIx64 " of pid %d", seg->rep_start, seg->n_pids ? (int) seg->pids[0] : 0);
                if (seg->kind == NG_SEG_SYSV)
                        fprintf(f, " shmid %" PRId32, seg->shmid);
                if (seg->other_ns)
                        fprintf(f, " in %s namespace %" PRIu64, seg->kind == NG_SEG_SYSV ? "IPC" : "mount",
                                seg->kind == NG_SEG_SYSV ? seg->ipc_ns : seg->mnt_ns);
                fprintf(f, ": %s, %s resident, ", sz, res);
                if (seg->page_kib) {
                        char pg[16];
                        ng_format_page_size(seg->page_kib, pg, sizeof(pg));
                        fprintf(f, "%s pages, ", pg);
                }
                char how[320];
                fprintf(f, "%" PRIu64 " attached%s%s, placement %s\n", seg->nattch,
                        seg->dest ? ", removed (dest)" : "", seg->locked ? ", locked" : "",
                        ng_report_placement_how(seg, how, sizeof(how)));
                print_thp(seg, f);
                if (seg->method == NG_METHOD_NONE || seg->method == NG_METHOD_COUNTERS)
                        continue;
                ng_report_node_bars(s, seg->nodes, seg->n_nodes, seg->resident_bytes, "  ", f);
        }
        bool any = false;
        for (size_t i = 0; i < s->n_unlisted; i++)
                any |= s->unlisted[i].small_files || s->unlisted[i].unexamined;
        if (any) {
                fputc('\n', f);
                ng_report_unlisted_text(s, f);
        }
        return ferror(f) ? -EIO : 0;
}

/* {"state", "sizes": [{"page_kib", "when"}] (null unless known), "per_size", "basis"} */
static struct json_object *thp_json(const struct ng_thp_fold *t)
{
        struct json_object *o = json_object_new_object(), *sizes = NULL;
        json_object_object_add(o, "state", json_object_new_string(ng_thp_fold_state_name(t->state)));
        if (t->state == NG_THP_FOLD_KNOWN) {
                sizes = json_object_new_array();
                for (size_t i = 0; i < t->n_sizes; i++) {
                        struct json_object *e = json_object_new_object();
                        json_object_object_add(e, "page_kib", json_object_new_uint64(t->sizes[i].page_kib));
                        json_object_object_add(e, "when", json_object_new_string(ng_thp_when_name(t->sizes[i].when)));
                        json_object_array_add(sizes, e);
                }
        }
        json_object_object_add(o, "sizes", sizes);
        json_object_object_add(o, "per_size", json_object_new_string(ng_thp_per_size_name(t->per_size)));
        json_object_object_add(o, "basis", json_object_new_string(t->basis));
        return o;
}

struct json_object *ng_segment_json(const struct ng_segment *seg)
{
        struct json_object *o = json_object_new_object(), *pids = json_object_new_array();
        json_object_object_add(o, "kind", json_object_new_string(ng_seg_kind_name(seg->kind)));
        json_object_object_add(o, "name", json_object_new_string(seg->name));
        /* -1 for what is not System V, as documented */
        json_object_object_add(o, "shmid", json_object_new_int(seg->kind == NG_SEG_SYSV ? seg->shmid : -1));
        json_object_object_add(o, "key", json_object_new_int(seg->kind == NG_SEG_SYSV ? seg->key : -1));
        if (seg->kind == NG_SEG_SYSV) {
                json_object_object_add(o, "dest", json_object_new_boolean(seg->dest));
                json_object_object_add(o, "locked", json_object_new_boolean(seg->locked));
        }
        /* Where a SysV segment's shmid, a file's path, means it. */
        if (seg->kind == NG_SEG_SYSV && seg->ipc_ns)
                json_object_object_add(o, "ipc_ns", json_object_new_uint64(seg->ipc_ns));
        if (seg->kind == NG_SEG_FILE && seg->mnt_ns)
                json_object_object_add(o, "mnt_ns", json_object_new_uint64(seg->mnt_ns));
        json_object_object_add(o, "uid", json_object_new_int64(seg->uid));
        json_object_object_add(o, "bytes", seg->bytes_unknown ? NULL : json_object_new_uint64(seg->bytes));
        json_object_object_add(o, "page_kib", json_object_new_uint64(seg->page_kib));
        json_object_object_add(o, "huge", json_object_new_boolean(seg->huge));
        json_object_object_add(o, "nattch", json_object_new_uint64(seg->nattch));
        for (size_t k = 0; k < seg->n_pids; k++)
                json_object_array_add(pids, json_object_new_int(seg->pids[k]));
        json_object_object_add(o, "pids", pids);
        /* attachers that may not speak for it: only where there are */
        if (seg->n_untrusted) {
                struct json_object *u = json_object_new_array();
                for (size_t k = 0; k < seg->n_untrusted; k++)
                        json_object_array_add(u, json_object_new_int(seg->untrusted[k]));
                json_object_object_add(o, "untrusted_pids", u);
        }
        json_object_object_add(o, "representative_pid", json_object_new_int(seg->rep_pid));
        json_object_object_add(o, "method", json_object_new_string(ng_method_name(seg->method)));
        json_object_object_add(o, "resident_bytes", json_object_new_uint64(seg->resident_bytes));
        json_object_object_add(o, "resident_source", json_object_new_string(ng_source_name(seg->resident_source)));
        json_object_object_add(o, "placement_source", json_object_new_string(ng_source_name(seg->placement_source)));
        json_object_object_add(o, "placement_coverage", seg->placement_coverage >= 0 ?
                               json_object_new_double(seg->placement_coverage) : NULL);
        json_object_object_add(o, "nodes", ng_node_bytes_json(seg->nodes, seg->n_nodes));
        json_object_object_add(o, "policy", seg->policy[0] ? json_object_new_string(seg->policy) : NULL);
        json_object_object_add(o, "shmem_thp", thp_json(&seg->thp));
        return ng_json_utf8(o);
}

struct json_object *ng_report_segments_json(const struct ng_snapshot *s, const struct ng_segment *v, size_t n)
{
        struct json_object *o = json_object_new_object(), *a = json_object_new_array();
        json_object_object_add(o, "schema", json_object_new_int(NG_JSON_SCHEMA));
        for (size_t i = 0; i < n; i++)
                json_object_array_add(a, ng_segment_json(&v[i]));
        json_object_object_add(o, "segments", a);
        json_object_object_add(o, "unlisted_files", ng_report_unlisted_json(s));
        return ng_json_utf8(o);
}

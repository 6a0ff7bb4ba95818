/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `numaguardctl status` shows: the daemon's own state (last poll and its
 * cost, reloads), a topology summary, per-instance per-node placement bars
 * and the active alerts with the time they were raised. The JSON form is the
 * document of `numaguardctl audit --json` plus a "daemon" object. Names in
 * either are escaped for where they go (text.h): the text lands on the
 * terminal of whoever runs `numaguardctl status`.
 */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alerts.h"
#include "bitmap-json.h"
#include "cleanup-json.h"
#include "manager.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-codes.h"
#include "ng-config.h"
#include "ng-format.h"
#include "ng-report.h"
#include "ng-snapshot.h"
#include "poll.h"
#include "server.h"
#include "sink.h"
#include "status-reply.h"
#include "text.h"
#include "util.h"

static void format_time(uint64_t usec, char *buf, size_t size)
{
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;
        if (!usec || !localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
                snprintf(buf, size, "never");
}

static void format_span(uint64_t usec, char *buf, size_t size)
{
        uint64_t s = usec / USEC_PER_SEC;
        if (s < 120)
                snprintf(buf, size, "%" PRIu64 " s", s);
        else if (s < 7200)
                snprintf(buf, size, "%" PRIu64 " min", s / 60);
        else if (s < 172800)
                snprintf(buf, size, "%" PRIu64 " h", s / 3600);
        else
                snprintf(buf, size, "%" PRIu64 " d", s / 86400);
}

/* A poll that reads nothing for longer than stuck_after: shown whether or
 * not an earlier one completed. */
static void text_stuck(const struct manager *m, FILE *f)
{
        if (!m->job.stuck_reported)
                return;
        fprintf(f, "Poll stuck: nothing read for %.1f s, waiting on %s %d; status shows the last complete poll\n",
                (double) manager_stalled_usec(m) / 1e6, m->job.stuck_pid > 0 ? "process" : "a host file, pid",
                (int) m->job.stuck_pid);
}

/* The primary first, then its fallback. */
static void text_sinks(const struct alert_sink *s, FILE *f)
{
        enum sink_kind order[] = { s->kind, s->kind == SINK_JOURNAL ? SINK_SYSLOG : SINK_JOURNAL };
        const char *sep = "";
        fprintf(f, "Alerts to:");
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                const struct sink_health *h = &s->health[order[i]];
                if (!h->used)
                        continue;
                fprintf(f, "%s %s%s %s", sep, sink_kind_name(order[i]), i ? "" : " (primary)", h->up ? "up" : "down");
                if (!h->up && h->error)
                        fprintf(f, " (%s: %s)", sink_kind_path(order[i]), strerror(-h->error));
                if (h->failures)
                        fprintf(f, ", %" PRIu64 " failed", h->failures);
                sep = ";";
        }
        if (s->lost)
                fprintf(f, "; %" PRIu64 " only on standard error", s->lost);
        fputc('\n', f);
}

static void text_daemon(const struct manager *m, FILE *f, uint64_t now)
{
        char when[64], ago[32], up[32];
        format_span(now - m->started_usec, up, sizeof(up));
        fprintf(f, "numaguardd %s, pid %d, up %s, config %s, %" PRIu64 " reload(s), %" PRIu64 " failed\n",
                NG_VERSION, (int) getpid(), up, m->config_path, m->reloads, m->reload_failures);
        if (m->last_reload_error[0]) {
                char e[NG_TEXT_SIZE(sizeof(m->last_reload_error))];
                fprintf(f, "Last reload error: %s\n",
                        ng_text_escape(NG_TEXT_TERM, m->last_reload_error, e, sizeof(e)));
        }
        text_sinks(&m->sink, f);
        text_stuck(m, f);
        if (!m->snapshot) {
                fprintf(f, "Last poll: none yet%s%s\n", m->last_poll_error ? ", failed: " : "",
                        m->last_poll_error ? strerror(-m->last_poll_error) : "");
                return;
        }
        const struct ng_collect_cost *c = &m->snapshot->cost;
        format_time(m->last_poll_usec, when, sizeof(when));
        format_span(now > m->last_poll_usec ? now - m->last_poll_usec : 0, ago, sizeof(ago));
        fprintf(f, "Last poll: %s (%s ago), %.1f ms wall, %.1f ms CPU; %" PRIu64 " files, %" PRIu64
                " processes, %" PRIu64 " numa_maps; %" PRIu64 " polls, %" PRIu64 " failed\n",
                when, ago, (double) m->last_poll_wall_usec / 1000.0, (double) m->last_poll_cpu_usec / 1000.0,
                c->files_read, c->procs_scanned, c->numa_maps_read, m->polls, m->poll_failures);
        if (m->last_poll_error)
                fprintf(f, "The latest poll failed (%s); showing the last good one.\n",
                        strerror(-m->last_poll_error));
        const char *how = m->last_picture.full              ? ""
                          : m->last_picture.events          ? ", new ones from process events"
                          : m->last_picture.listing_skipped ? ", no process started or ended"
                                                            : ", new ones from a /proc listing";
        fprintf(f, "Processes: %" PRIu64 " held, the last poll %s%s (%" PRIu64 " new, %" PRIu64 " gone, %" PRIu64
                " reread, %" PRIu64 " counters reread)\n", m->last_picture.procs,
                m->last_picture.full ? "read every one" : "read what changed", how, m->last_picture.procs_new,
                m->last_picture.procs_gone, m->last_picture.procs_reread, m->last_picture.status_reread);
        fprintf(f, "CPU time: %" PRIu64 " of %" PRIu64 " segment holders read, each at least every %u polls\n",
                m->last_picture.cpu_reads, m->last_picture.cpu_holders, m->last_picture.cpu_read_every);
}


static void text_topology(const struct ng_snapshot *s, FILE *f)
{
        char tot[32], fr[32];
        fprintf(f, "\nTopology: %zu node(s)\n", s->topo.n_nodes);
        for (size_t i = 0; i < s->topo.n_nodes; i++) {
                const struct ng_node *nd = &s->topo.nodes[i];
                struct ng_node_supply sup;
                ng_node_supply(nd, 0, 0, &sup);
                snprintf(tot, sizeof(tot), "unknown");
                snprintf(fr, sizeof(fr), "unknown");
                if (sup.total_bytes.known)
                        ng_format_kib(sup.total_bytes.v / 1024, tot, sizeof(tot));
                if (sup.free_bytes.known)
                        ng_format_kib(sup.free_bytes.v / 1024, fr, sizeof(fr));
                fprintf(f, "  node %-3d %4u CPUs %10s, %10s free", nd->id, ng_bitmap_count(&nd->cpus), tot, fr);
                for (size_t j = 0; j < nd->n_pools; j++) {
                        char pg[16];
                        ng_format_page_size(nd->pools[j].page_kib, pg, sizeof(pg));
                        if (nd->pools[j].unknown)
                                fprintf(f, "; %s pages unknown", pg);
                        else
                                fprintf(f, "; %s pages %" PRIu64 "/%" PRIu64 " free", pg, nd->pools[j].free_pages,
                                        nd->pools[j].nr_pages);
                }
                fputc('\n', f);
        }
        char note[512];
        if (ng_report_memory_note(s, note, sizeof(note)))
                fprintf(f, "  %s\n", note);
}

/* "8 GiB shared", "160 MiB private" (InnoDB's buffer pool, a private
 * mapping, is no shared memory), or both. */
static void sizes_text(const struct ng_instance *in, char *buf, size_t size)
{
        char sh[32], pr[32];
        ng_format_bytes_or(in->shared_bytes - in->private_bytes, in->shared_unknown, "unknown", sh, sizeof(sh));
        ng_format_kib(in->private_bytes / 1024, pr, sizeof(pr));
        if (!in->private_bytes)
                snprintf(buf, size, "%s shared", sh);
        else if (in->shared_unknown || in->shared_bytes > in->private_bytes)
                snprintf(buf, size, "%s shared, %s private", sh, pr);
        else
                snprintf(buf, size, "%s private", pr);
}

static void text_instances(const struct ng_audit *a, FILE *f)
{
        char sz[80], res[32], bar[128], name[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)];
        fprintf(f, "\nInstances: %zu\n", a->n_instances);
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_instance *in = &a->instances[i];
                sizes_text(in, sz, sizeof(sz));
                ng_format_bytes_or(in->resident_bytes, in->resident_unknown, "unknown", res, sizeof(res));
                fprintf(f, "  %s (%s, pid %d): %s, %s resident\n",
                        ng_text_escape(NG_TEXT_TERM, in->name, name, sizeof(name)),
                        in->type ? in->type : "?", (int) in->main_pid, sz, res);
                for (size_t j = 0; j < in->n_nodes; j++) {
                        uint64_t b = in->nodes[j].bytes, w = in->resident_bytes;
                        ng_format_bar(b, w, bar, sizeof(bar));
                        ng_format_kib(b / 1024, res, sizeof(res));
                        fprintf(f, "    N%-3d %s %3" PRIu64 "%% %10s\n", in->nodes[j].node, bar,
                                w ? (b * 100 + w / 2) / w : 0, res);
                }
        }
}

static void text_alerts(const struct manager *m, FILE *f, uint64_t now)
{
        char when[64], ago[32], nodes[256], inst[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)],
                msg[NG_TEXT_SIZE(sizeof(m->alerts.v[0].message))];
        fprintf(f, "\nActive alerts: %zu\n", alerts_active(&m->alerts));
        for (size_t i = 0; i < m->alerts.n; i++) {
                const struct alert *a = &m->alerts.v[i];
                if (a->state != ALERT_ACTIVE)
                        continue;
                format_time(a->raised_usec, when, sizeof(when));
                format_span(now > a->raised_usec ? now - a->raised_usec : 0, ago, sizeof(ago));
                alert_nodes_format(&a->nodes, nodes, sizeof(nodes));
                fprintf(f, "  %-8s %s %s%s%s since %s (%s): %s\n", ng_severity_name(a->severity),
                        ng_code_name(a->code),
                        a->instance[0] ? ng_text_escape(NG_TEXT_TERM, a->instance, inst, sizeof(inst)) : "host",
                        nodes[0] ? " nodes " : "", nodes, when, ago,
                        ng_text_escape(NG_TEXT_TERM, a->message, msg, sizeof(msg)));
        }
}

int status_render_text(const struct manager *m, FILE *f)
{
        uint64_t now = now_usec(CLOCK_REALTIME);
        text_daemon(m, f, now);
        if (m->snapshot)
                text_topology(m->snapshot, f);
        if (m->audit)
                text_instances(m->audit, f);
        if (m->audit && m->audit->n_acknowledged) {
                fputc('\n', f);
                ng_report_acknowledged_text(m->audit, f);
        }
        text_alerts(m, f, now);
        return ferror(f) ? -EIO : 0;
}

static struct json_object *json_u64(uint64_t v)
{
        return json_object_new_uint64(v);
}

static struct json_object *json_alerts(const struct manager *m)
{
        struct json_object *arr = json_object_new_array();
        for (size_t i = 0; arr && i < m->alerts.n; i++) {
                const struct alert *a = &m->alerts.v[i];
                if (a->state != ALERT_ACTIVE)
                        continue;
                struct json_object *o = json_object_new_object();
                if (!o)
                        break;
                json_object_object_add(o, "code", json_object_new_string(ng_code_name(a->code)));
                json_object_object_add(o, "severity", json_object_new_string(ng_severity_name(a->severity)));
                json_object_object_add(o, "instance", json_object_new_string(a->instance));
                json_object_object_add(o, "nodes", ng_bitmap_json_ids(&a->nodes));
                json_object_object_add(o, "segment", json_object_new_string(a->segment));
                json_object_object_add(o, "message", json_object_new_string(a->message));
                json_object_object_add(o, "message_id",
                                       json_object_new_string(sink_message_id(ALERT_EVENT_RAISED, a->code)));
                json_object_object_add(o, "raised_usec", json_u64(a->raised_usec));
                json_object_array_add(arr, o);
        }
        return arr;
}

static struct json_object *json_last_poll(const struct manager *m)
{
        struct json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "timestamp_usec", json_u64(m->last_poll_usec));
        json_object_object_add(o, "wall_usec", json_u64(m->last_poll_wall_usec));
        json_object_object_add(o, "cpu_usec", json_u64(m->last_poll_cpu_usec));
        if (m->snapshot) {
                const struct ng_collect_cost *c = &m->snapshot->cost;
                json_object_object_add(o, "collect_wall_usec", json_u64(c->wall_usec));
                json_object_object_add(o, "collect_cpu_usec", json_u64(c->cpu_usec));
                json_object_object_add(o, "files_read", json_u64(c->files_read));
                json_object_object_add(o, "bytes_read", json_u64(c->bytes_read));
                json_object_object_add(o, "procs_scanned", json_u64(c->procs_scanned));
                json_object_object_add(o, "numa_maps_read", json_u64(c->numa_maps_read));
                json_object_object_add(o, "full_scan", json_object_new_boolean(m->last_picture.full));
                json_object_object_add(o, "process_events", json_object_new_boolean(m->last_picture.events));
                json_object_object_add(o, "listing_skipped", json_object_new_boolean(m->last_picture.listing_skipped));
                json_object_object_add(o, "procs_held", json_u64(m->last_picture.procs));
                json_object_object_add(o, "procs_new", json_u64(m->last_picture.procs_new));
                json_object_object_add(o, "procs_gone", json_u64(m->last_picture.procs_gone));
                json_object_object_add(o, "procs_reread", json_u64(m->last_picture.procs_reread));
                json_object_object_add(o, "status_reread", json_u64(m->last_picture.status_reread));
                json_object_object_add(o, "cpu_holders", json_u64(m->last_picture.cpu_holders));
                json_object_object_add(o, "cpu_reads", json_u64(m->last_picture.cpu_reads));
                json_object_object_add(o, "cpu_read_every", json_u64(m->last_picture.cpu_read_every));
        }
        json_object_object_add(o, "error", m->last_poll_error ?
                               json_object_new_string(strerror(-m->last_poll_error)) : NULL);
        return o;
}

static struct json_object *json_sinks(const struct alert_sink *s)
{
        struct json_object *arr = json_object_new_array();
        for (int k = 0; arr && k < SINK_KINDS_; k++) {
                const struct sink_health *h = &s->health[k];
                struct json_object *o = h->used ? json_object_new_object() : NULL;
                if (!o)
                        continue;
                json_object_object_add(o, "sink", json_object_new_string(sink_kind_name((enum sink_kind) k)));
                json_object_object_add(o, "primary", json_object_new_boolean(s->kind == (enum sink_kind) k));
                json_object_object_add(o, "up", json_object_new_boolean(h->up));
                json_object_object_add(o, "error", h->error ? json_object_new_string(strerror(-h->error)) : NULL);
                json_object_object_add(o, "failures", json_u64(h->failures));
                json_object_array_add(arr, o);
        }
        return arr;
}

static struct json_object *json_daemon(const struct manager *m)
{
        struct json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "version", json_object_new_string(NG_VERSION));
        json_object_object_add(o, "pid", json_object_new_int((int) getpid()));
        json_object_object_add(o, "started_usec", json_u64(m->started_usec));
        json_object_object_add(o, "config", json_object_new_string(m->config_path));
        json_object_object_add(o, "interval_usec", json_u64(m->config->interval_usec));
        json_object_object_add(o, "socket", json_object_new_string(server_path(m->server)));
        json_object_object_add(o, "metrics_file", json_object_new_string(m->config->metrics_file));
        json_object_object_add(o, "alert_sink", json_object_new_string(sink_name(&m->sink)));
        json_object_object_add(o, "alert_sinks", json_sinks(&m->sink));
        json_object_object_add(o, "alerts_lost", json_u64(m->sink.lost));
        json_object_object_add(o, "polls", json_u64(m->polls));
        json_object_object_add(o, "poll_failures", json_u64(m->poll_failures));
        json_object_object_add(o, "last_poll", json_last_poll(m));
        json_object_object_add(o, "polls_stuck", json_u64(m->polls_stuck));
        struct json_object *st = NULL;
        if (m->job.stuck_reported && (st = json_object_new_object())) {
                json_object_object_add(st, "pid", json_object_new_int((int) m->job.stuck_pid));
                json_object_object_add(st, "stalled_usec", json_u64(manager_stalled_usec(m)));
        }
        json_object_object_add(o, "poll_stuck", st);
        json_object_object_add(o, "reloads", json_u64(m->reloads));
        json_object_object_add(o, "reload_failures", json_u64(m->reload_failures));
        json_object_object_add(o, "last_reload_error", m->last_reload_error[0] ?
                               json_object_new_string(m->last_reload_error) : NULL);
        json_object_object_add(o, "alerts", json_alerts(m));
        return o;
}

int status_render_json(const struct manager *m, FILE *f)
{
        _cleanup_json_ struct json_object *doc = m->snapshot && m->audit ? ng_report_audit_json(m->snapshot, m->audit)
                                                                         : json_object_new_object();
        if (!doc)
                return -ENOMEM;
        if (!json_object_object_get_ex(doc, "schema", NULL))
                json_object_object_add(doc, "schema", json_object_new_int(NG_JSON_SCHEMA));
        struct json_object *d = json_daemon(m);
        if (!d)
                return -ENOMEM;
        json_object_object_add(doc, "daemon", ng_json_utf8(d));
        fputs(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
        fputc('\n', f);
        return ferror(f) ? -EIO : 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prometheus text exposition of a snapshot + audit. Gauges in base units
 * (bytes, seconds, pages) as Prometheus naming asks; hugepage pools keep
 * pages because that is what operators reserve, with the page size as label.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ng-latency.h"
#include "ng-metrics.h"
#include "text.h"
#include "units.h"
#include "util.h"

void ng_metrics_escape(const char *v, char *buf, size_t size)
{
        if (size > 0)
                ng_text_escape(NG_TEXT_LABEL, v, buf, size);
}

void ng_metrics_family(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP numaguard_%s %s\n# TYPE numaguard_%s %s\n", name, help, name, type);
}

static void pools(FILE *f, const struct ng_snapshot *s)
{
        static const struct {
                const char *name, *help;
                size_t off;
        } kinds[] = {
                { "node_hugepages", "Hugepages in the node's pool (nr_hugepages).",
                  offsetof(struct ng_hugepool, nr_pages) },
                { "node_hugepages_free", "Free hugepages on the node.",
                  offsetof(struct ng_hugepool, free_pages) },
                { "node_hugepages_surplus", "Surplus (overcommitted) hugepages on the node.",
                  offsetof(struct ng_hugepool, surplus_pages) },
        };
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                ng_metrics_family(f, kinds[k].name, "gauge", kinds[k].help);
                for (size_t i = 0; i < s->topo.n_nodes; i++) {
                        const struct ng_node *nd = &s->topo.nodes[i];
                        for (size_t j = 0; j < nd->n_pools; j++) {
                                const struct ng_hugepool *hp = &nd->pools[j];
                                uint64_t v = *(const uint64_t *) ((const char *) hp + kinds[k].off);
                                fprintf(f, "numaguard_%s{node=\"%d\",page_size_bytes=\"%" PRIu64 "\"} %" PRIu64 "\n",
                                        kinds[k].name, nd->id, ng_kib_bytes_sat(hp->page_kib), v);
                        }
                }
        }
}

static void node_memory(FILE *f, const struct ng_snapshot *s)
{
        /* key NULL: total (total set) or free memory, from the node's supply. */
        static const struct {
                const char *name, *key, *help;
                bool total;
        } kinds[] = {
                { "node_memory_total_bytes", NULL, "Memory of the node.", true },
                { "node_memory_free_bytes", NULL, "Free memory of the node.", false },
                { "node_shmem_bytes", "Shmem", "Shared memory (tmpfs, SysV, shared anonymous) on the node.", false },
                { "node_page_tables_bytes", "PageTables", "Page tables allocated on the node.", false },
        };
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                ng_metrics_family(f, kinds[k].name, "gauge", kinds[k].help);
                for (size_t i = 0; i < s->topo.n_nodes; i++) {
                        const struct ng_node *nd = &s->topo.nodes[i];
                        if (!nd->has_meminfo)
                                continue;
                        struct ng_node_supply sup;
                        ng_node_supply(nd, 0, 0, &sup);
                        uint64_t bytes = kinds[k].key ? ng_meminfo_bytes(s, nd, kinds[k].key).v
                                       : kinds[k].total ? sup.total_bytes.v : sup.free_bytes.v;
                        fprintf(f, "numaguard_%s{node=\"%d\"} %" PRIu64 "\n", kinds[k].name, nd->id, bytes);
                }
        }
}

/* The container of each instance that runs in one, as labels of an info
 * series (1): joined on db_instance, it labels every instance series
 * without changing theirs. Absent on a host without containers. */
static void container_info(FILE *f, const struct ng_audit *a)
{
        bool any = false;
        for (size_t i = 0; i < a->n_instances; i++)
                any |= a->instances[i].container != NULL;
        if (!any)
                return;
        ng_metrics_family(f, "instance_container_info", "gauge",
               "The container an instance runs in: its runtime, name and id, and its Kubernetes pod.");
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_container *ct = a->instances[i].container;
                if (!ct)
                        continue;
                char name[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)], cname[NG_TEXT_SIZE(sizeof(ct->name))],
                        pod[NG_TEXT_SIZE(sizeof(ct->pod))], ns[NG_TEXT_SIZE(sizeof(ct->pod_namespace))];
                ng_metrics_escape(a->instances[i].name, name, sizeof(name));
                ng_metrics_escape(ct->name, cname, sizeof(cname));
                ng_metrics_escape(ct->pod, pod, sizeof(pod));
                ng_metrics_escape(ct->pod_namespace, ns, sizeof(ns));
                fprintf(f, "numaguard_instance_container_info{db_instance=\"%s\",runtime=\"%s\",container=\"%s\","
                        "container_id=\"%s\",pod=\"%s\",pod_namespace=\"%s\",pod_uid=\"%s\"} 1\n",
                        name, ct->runtime, cname, ct->id, pod, ns, ct->pod_uid);
        }
}

static void instances(FILE *f, const struct ng_audit *a)
{
        char name[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)];
        ng_metrics_family(f, "instance_resident_bytes", "gauge",
               "Resident shared memory of the instance per node.");
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_instance *in = &a->instances[i];
                /* an unknown resident size is no sample, never a part of it */
                if (in->resident_unknown)
                        continue;
                ng_metrics_escape(in->name, name, sizeof(name));
                for (size_t j = 0; j < in->n_nodes; j++)
                        fprintf(f, "numaguard_instance_resident_bytes{db_instance=\"%s\",node=\"%d\"} %" PRIu64 "\n",
                                name, in->nodes[j].node, in->nodes[j].bytes);
        }
        ng_metrics_family(f, "instance_resident_by_placement_source_bytes", "gauge",
               "Resident shared memory of the instance by where its placement was measured: the segments' own "
               "pages (segment), what an attacher maps (attacher), or not at all (none).");
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_instance *in = &a->instances[i];
                uint64_t by[NG_SOURCE_COUNT_];
                if (in->resident_unknown)
                        continue;
                ng_metrics_escape(in->name, name, sizeof(name));
                ng_segments_resident_by_source(a->segments, in->segs, in->n_segs, by);
                for (enum ng_source k = NG_SOURCE_NONE; k < NG_SOURCE_COUNT_; k++)
                        if (k != NG_SOURCE_COUNTER)
                                fprintf(f, "numaguard_instance_resident_by_placement_source_bytes{db_instance=\"%s\","
                                        "source=\"%s\"} %" PRIu64 "\n", name, ng_source_name(k), by[k]);
        }
        container_info(f, a);
        ng_metrics_family(f, "instance_shared_bytes", "gauge", "Size of the instance's segments: its shared memory, and "
               "its large private mappings where it keeps its buffer pool there (InnoDB).");
        for (size_t i = 0; i < a->n_instances; i++) {
                /* an unknown size is no sample, never 0 */
                if (a->instances[i].shared_unknown)
                        continue;
                ng_metrics_escape(a->instances[i].name, name, sizeof(name));
                fprintf(f, "numaguard_instance_shared_bytes{db_instance=\"%s\",type=\"%s\"} %" PRIu64 "\n",
                        name, a->instances[i].type ? a->instances[i].type : "",
                        a->instances[i].shared_bytes);
        }
        ng_metrics_family(f, "instance_page_tables_bytes", "gauge",
               "Page tables of the instance's processes (sum of VmPTE).");
        for (size_t i = 0; i < a->n_instances; i++) {
                ng_metrics_escape(a->instances[i].name, name, sizeof(name));
                fprintf(f, "numaguard_instance_page_tables_bytes{db_instance=\"%s\"} %" PRIu64 "\n",
                        name, ng_kib_bytes_sat(a->instances[i].vm_pte_kib));
        }
}

/* What each instance's placement costs (ng-price.h); latency only when
 * measured or from the HMAT, since SLIT units are no seconds. */
static void prices(FILE *f, const struct ng_audit *a)
{
        char name[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)];
        ng_metrics_family(f, "instance_remote_access_ratio", "gauge",
               "Share of the instance's memory accesses that go to another node (CPU time x resident memory).");
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_price *p = &a->instances[i].price;
                if (p->source == NG_PRICE_NONE)
                        continue;
                ng_metrics_escape(a->instances[i].name, name, sizeof(name));
                fprintf(f, "numaguard_instance_remote_access_ratio{db_instance=\"%s\",source=\"%s\"} %.6g\n", name,
                        ng_price_source_name(p->source), p->remote_access_ratio);
        }
        ng_metrics_family(f, "instance_expected_latency_seconds", "gauge",
               "Expected average memory latency of the instance's placement, from the measured matrix or the "
               "firmware's HMAT.");
        for (size_t i = 0; i < a->n_instances; i++) {
                const struct ng_price *p = &a->instances[i].price;
                if (p->source != NG_PRICE_MEASURED && p->source != NG_PRICE_HMAT)
                        continue;
                ng_metrics_escape(a->instances[i].name, name, sizeof(name));
                fprintf(f, "numaguard_instance_expected_latency_seconds{db_instance=\"%s\"} %.6g\n", name,
                        p->expected_latency / 1e9);
        }
}

/* The matrices numaguardctl probe saved. */
static void matrices(FILE *f, const struct ng_latency *m)
{
        ng_metrics_family(f, "node_latency_seconds", "gauge",
               "Measured dependent-load latency from a CPU of cpu_node to memory on memory_node.");
        for (size_t r = 0; r < m->n_cpu_nodes; r++)
                for (size_t c = 0; c < m->n_nodes; c++)
                        if (m->latency_ns[r * m->n_nodes + c] == m->latency_ns[r * m->n_nodes + c])
                                fprintf(f, "numaguard_node_latency_seconds{cpu_node=\"%d\",memory_node=\"%d\"} "
                                        "%.6g\n", m->cpu_nodes[r], m->nodes[c], m->latency_ns[r * m->n_nodes + c] / 1e9);
        ng_metrics_family(f, "node_read_bandwidth_bytes_per_second", "gauge",
               "Measured read bandwidth of all CPUs of cpu_node from memory on memory_node.");
        for (size_t r = 0; r < m->n_cpu_nodes; r++)
                for (size_t c = 0; c < m->n_nodes; c++)
                        if (m->bandwidth_mbps[r * m->n_nodes + c] == m->bandwidth_mbps[r * m->n_nodes + c])
                                fprintf(f, "numaguard_node_read_bandwidth_bytes_per_second{cpu_node=\"%d\","
                                        "memory_node=\"%d\"} %.6g\n", m->cpu_nodes[r], m->nodes[c],
                                        m->bandwidth_mbps[r * m->n_nodes + c] * 1e6);
}

/* Findings grouped by (code, severity, instance); the list is short. */
static void findings(FILE *f, const struct ng_audit *a)
{
        char name[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)];
        ng_metrics_family(f, "findings_active", "gauge",
               "Findings of the last poll by code, severity and database instance (\"\" = host).");
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *x = &a->findings[i];
                bool dup = false;
                for (size_t j = 0; j < i && !dup; j++)
                        dup = a->findings[j].code == x->code && a->findings[j].severity == x->severity &&
                              !strcmp(a->findings[j].instance, x->instance);
                if (dup)
                        continue;
                unsigned n = 0;
                for (size_t j = i; j < a->n_findings; j++)
                        n += a->findings[j].code == x->code && a->findings[j].severity == x->severity &&
                             !strcmp(a->findings[j].instance, x->instance);
                ng_metrics_escape(x->instance, name, sizeof(name));
                fprintf(f, "numaguard_findings_active{code=\"%s\",severity=\"%s\",db_instance=\"%s\"} %u\n",
                        ng_code_name(x->code), ng_severity_name(x->severity), name, n);
        }
        ng_metrics_family(f, "findings_by_code", "gauge", "Findings of the last poll per code, zeros included.");
        for (int c = 0; c < NG_CODE_MAX_; c++) {
                unsigned n = 0;
                for (size_t j = 0; j < a->n_findings; j++)
                        n += a->findings[j].code == (enum ng_code) c;
                fprintf(f, "numaguard_findings_by_code{code=\"%s\"} %u\n", ng_code_name((enum ng_code) c), n);
        }
}

static int cmp_u32(const void *x, const void *y)
{
        uint32_t a = *(const uint32_t *) x, b = *(const uint32_t *) y;
        return (a > b) - (a < b);
}

static int cmp_acknowledged(const void *x, const void *y)
{
        const struct ng_acknowledged *a = x, *b = y;
        return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Whether a acknowledges pid (its list is in pid order). */
static bool acknowledged(const struct ng_audit *a, pid_t pid)
{
        struct ng_acknowledged key = { .pid = pid };
        return a && a->n_acknowledged &&
               bsearch(&key, a->acknowledged, a->n_acknowledged, sizeof(key), cmp_acknowledged);
}

/* What AUDIT_INCOMPLETE says in words, as numbers a fleet can alert on:
 * the processes whose maps the poll could not read, per owner, but those
 * unreadable_ok acknowledges, which are counted on their own. */
static int unreadable(FILE *f, const struct ng_snapshot *s, const struct ng_audit *a)
{
        if (a) {
                ng_metrics_family(f, "audit_acknowledged_unreadable_processes", "gauge",
                       "Processes whose memory maps the last poll could not read and unreadable_ok acknowledges: "
                       "not AUDIT_INCOMPLETE.");
                fprintf(f, "numaguard_audit_acknowledged_unreadable_processes %zu\n", a->n_acknowledged);
        }
        ng_metrics_family(f, "audit_unreadable_processes", "gauge",
               "Processes whose memory maps the last poll could not read, per uid: what they attach is unknown.");
        size_t n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                n += s->procs[i]->maps_errno != 0;
        if (!n)
                return 0;
        _cleanup_free_ uint32_t *uids = malloc(n * sizeof(*uids));
        if (!uids)
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                if (s->procs[i]->maps_errno && !acknowledged(a, s->procs[i]->pid))
                        uids[n++] = s->procs[i]->status.uid;
        qsort(uids, n, sizeof(*uids), cmp_u32);
        for (size_t i = 0, j; i < n; i = j) {
                for (j = i; j < n && uids[j] == uids[i]; j++)
                        ;
                fprintf(f, "numaguard_audit_unreadable_processes{uid=\"%" PRIu32 "\"} %zu\n", uids[i], j - i);
        }
        return 0;
}

static void gauge(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
        ng_metrics_family(f, name, type, help);
        fprintf(f, "numaguard_%s %" PRIu64 "\n", name, v);
}

void ng_metrics_seconds(FILE *f, const char *name, const char *help, uint64_t usec)
{
        ng_metrics_family(f, name, "gauge", help);
        fprintf(f, "numaguard_%s %" PRIu64 ".%06" PRIu64 "\n", name, usec / USEC_PER_SEC, usec % USEC_PER_SEC);
}

static void poll_cost(FILE *f, const struct ng_snapshot *s, const struct ng_metrics_poll *p)
{
        const struct ng_collect_cost *c = &s->cost;
        ng_metrics_seconds(f, "last_poll_timestamp_seconds", "End of the last poll (Unix time).", p->timestamp_usec);
        ng_metrics_seconds(f, "poll_duration_seconds", "Wall time of the last poll.", p->duration_usec);
        ng_metrics_seconds(f, "poll_cpu_seconds", "CPU time of the last poll.", p->cpu_usec);
        ng_metrics_seconds(f, "poll_collect_seconds", "Wall time of the last collection.", c->wall_usec);
        gauge(f, "poll_files_read", "gauge", "Files read by the last poll.", c->files_read);
        gauge(f, "poll_read_bytes", "gauge", "Bytes read by the last poll.", c->bytes_read);
        gauge(f, "poll_processes_scanned", "gauge", "Processes read by the last poll.", c->procs_scanned);
        gauge(f, "poll_numa_maps_read", "gauge",
              "numa_maps files read by the last poll (tier 2, one per segment at most).", c->numa_maps_read);
        gauge(f, "poll_pages_sampled", "gauge", "Pages sampled with move_pages() by the last poll.",
              c->pages_sampled);
        gauge(f, "poll_full_scan", "gauge",
              "1 when the last poll read every process, 0 when it read only what changed (full_scan_every).",
              p->full_scan);
        gauge(f, "poll_process_events", "gauge",
              "1 when the last poll learnt of new processes from the kernel's process events, 0 when it listed /proc.",
              p->process_events);
        gauge(f, "poll_listing_skipped", "gauge",
              "1 when the last poll did not list /proc: /proc/loadavg showed no process or thread started or ended since the one before.",
              p->listing_skipped);
        gauge(f, "poll_processes_held", "gauge", "User processes in the daemon's picture after the last poll.",
              p->procs_held);
        gauge(f, "poll_cpu_holders", "gauge",
              "Processes mapping a segment, whose threads' CPU time weighs instance prices.", p->cpu_holders);
        gauge(f, "poll_cpu_reads", "gauge",
              "Of those, processes whose CPU time the last poll read (new, changed, or their turn: attacher_read_budget).",
              p->cpu_reads);
        gauge(f, "poll_cpu_read_every", "gauge",
              "Polls in which every process mapping a segment has its CPU time read at least once.",
              p->cpu_read_every);
        gauge(f, "poll_stuck", "gauge",
              "1 while a poll has read nothing for longer than stuck_after (status names the process).",
              p->stalled_usec > 0);
        ng_metrics_seconds(f, "poll_stalled_seconds", "How long the stuck poll has read nothing, 0 when none is stuck.",
                p->stalled_usec);
        gauge(f, "polls_stuck_total", "counter", "Polls reported stuck since the daemon started.",
              p->polls_stuck_total);
        gauge(f, "polls_total", "counter", "Polls since the daemon started.", p->polls_total);
        gauge(f, "poll_failures_total", "counter", "Polls that could not read the host.", p->poll_failures_total);
        gauge(f, "alerts_raised_total", "counter", "Alerts raised since the daemon started.", p->alerts_raised_total);
        gauge(f, "alerts_cleared_total", "counter", "Alerts cleared since the daemon started.", p->alerts_cleared_total);
        gauge(f, "alerts_active", "gauge", "Alerts raised and not cleared.", p->alerts_active);
}

int ng_metrics_render(const struct ng_snapshot *s, const struct ng_audit *a,
                      const struct ng_metrics_poll *p, FILE *f)
{
        assert(s && f);
        gauge(f, "nodes", "gauge", "Online NUMA nodes.", s->topo.n_nodes);
        pools(f, s);
        node_memory(f, s);
        if (s->latency)
                matrices(f, s->latency);
        if (a) {
                instances(f, a);
                prices(f, a);
                findings(f, a);
        }
        int r = unreadable(f, s, a);
        if (r < 0)
                return r;
        poll_cost(f, s, p);
        return ferror(f) ? -EIO : 0;
}

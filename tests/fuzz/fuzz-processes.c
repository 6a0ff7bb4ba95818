/* libFuzzer target for what other users choose about their processes and
 * numaguard reads as text: command names and command lines (the name a
 * process is known by, ng_proc_set_name(); the engine it runs,
 * ng_engine_of_process(); the instance discovered from it, its SID or its
 * data directory taken from its arguments), /dev/shm file names
 * (ng_engine_of_granule()), and why its maps were refused: its security
 * label, numaguard's uid_map and the active security modules
 * (ng_refusal_decide()). The audit of a one-node host holding those
 * processes must run, its text must hold no control character but
 * newlines, its JSON must be UTF-8 that parses back, and its metrics must
 * render. The input is lines: the security modules, numaguard's uid_map,
 * then one process a line, "COMM|CMDLINE|LABEL"; a first byte 'T' makes it
 * a tree (numaguard's credentials unknown). */

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-audit.h"
#include "ng-config.h"
#include "engine.h"
#include "ng-metrics.h"
#include "refusal.h"
#include "ng-report.h"
#include "ng-snapshot.h"
#include "proc.h"
#include "snapshot.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PROCS 12

static void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n, size);
        if (!p)
                abort();
        return p;
}

static struct ng_snapshot *one_node_host(void)
{
        struct ng_snapshot *s = ng_snapshot_alloc();
        if (!s)
                abort();
        s->topo.numa_sysfs = true;
        s->topo.nodes = xcalloc(1, sizeof(*s->topo.nodes));
        s->topo.n_nodes = 1;
        struct ng_node *nd = &s->topo.nodes[0];
        nd->package_id = 0;
        nd->tier = -1;
        nd->has_cpu = nd->has_memory = true;
        ng_bitmap_set(&nd->cpus, 0);
        ng_bitmap_set(&s->topo.online, 0);
        ng_bitmap_set(&s->topo.cpus_online, 0);
        nd->distance = xcalloc(1, sizeof(*nd->distance));
        nd->distance[0] = 10;
        nd->n_distance = 1;
        s->knobs.numa_balancing = 0;
        s->knobs.zone_reclaim_mode = -1;
        s->topo.demotion_enabled = -1;
        s->libnuma_so = -1;
        s->placement = NG_PLACEMENT_EXACT;
        return s;
}

/* The next field of *p up to sep or its end ("" past the end); *p moves
 * past it, to NULL at the end. */
static char *field(char **p, const char *sep)
{
        char *f = *p ? strsep(p, sep) : NULL;
        return f ? f : (char *) "";
}

static uint64_t hash(const char *s)
{
        uint64_t h = 1469598103934665603u;
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211u;
        return h;
}

static void add_proc(struct ng_snapshot *s, size_t i, const char *comm, const char *cmdline, const char *label)
{
        struct ng_proc *pr = ng_proc_alloc();
        if (!pr)
                abort();
        s->procs[s->n_procs++] = pr;
        uint64_t h = hash(cmdline) ^ hash(comm);
        pr->pid = pr->stat.pid = (pid_t) (100 + i);
        pr->stat.ppid = i ? (pid_t) (100 + (i - 1) / 2) : 1;
        snprintf(pr->stat.comm, sizeof(pr->stat.comm), "%.*s", NG_COMM_MAX, comm);
        pr->cmdline = strdup(cmdline);
        if (!pr->cmdline)
                abort();
        ng_proc_set_name(pr);
        if (strlen(pr->name) >= sizeof(pr->name))
                abort();
        pr->status.uid = pr->status.euid = h % 3 ? 0 : (uint32_t) (1000 + i);
        pr->status.has_cap_prm = h & 8;
        pr->status.cap_prm = h >> 4;
        pr->maps_errno = h & 16 ? EACCES : 0;
        pr->userns_other = (int) (h >> 40) % 3 - 1;
        snprintf(pr->lsm_label, sizeof(pr->lsm_label), "%s", label);
        (void) ng_engine_of_process(pr->name);
        (void) ng_engine_of_granule(cmdline);
        struct ng_refusal_why w = ng_refusal_decide(&s->self, pr);
        if (w.kind >= NG_REFUSAL_COUNT_ || (w.missing_caps & ~pr->status.cap_prm))
                abort();
        char reason[400], advice[256];
        ng_refusal_explain(w.kind, &s->self, w.missing_caps, pr->lsm_label, reason, sizeof(reason), advice,
                           sizeof(advice));
        /* root is never told to run as root */
        if (s->self.known && s->self.euid == 0 && strstr(advice, "run as root"))
                abort();
}

/* No C0 control but newline and tab, no DEL: what a terminal may show. */
static void check_text(const char *t, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (((unsigned char) t[i] < 0x20 && t[i] != '\n' && t[i] != '\t') || t[i] == 0x7f)
                        abort();
}

static void render(const struct ng_snapshot *s, const struct ng_audit *a)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                abort();
        if (ng_report_audit_text(s, a, f) < 0)
                abort();
        fclose(f);
        check_text(buf, len);
        free(buf);
        struct json_object *j = ng_report_audit_json(s, a);
        if (!j)
                abort();
        const char *js = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
        struct json_object *back = json_tokener_parse(js);
        if (!ng_utf8_valid(js) || !back)
                abort();
        json_object_put(back);
        json_object_put(j);
        f = open_memstream(&buf, &len);
        if (!f)
                abort();
        struct ng_metrics_poll poll = {0};
        if (ng_metrics_render(s, a, &poll, f) < 0)
                abort();
        fclose(f);
        if (!ng_utf8_valid(buf))
                abort();
        free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        struct ng_snapshot *s = one_node_host();
        s->procs = xcalloc(MAX_PROCS, sizeof(*s->procs));
        char *p = buf;
        bool tree = *p == 'T';
        const char *lsm = field(&p, "\n"), *map = field(&p, "\n");
        if (!tree) {
                s->self.known = true;
                s->self.euid = hash(lsm) & 1 ? 0 : 65534;
                s->self.has_cap_eff = !(hash(map) & 2);
                s->self.cap_eff = hash(map) >> 2;
                snprintf(s->self.lsm, sizeof(s->self.lsm), "%s", lsm);
                snprintf(s->self.uid_map, sizeof(s->self.uid_map), "%s", map);
        }
        (void) ng_lsm_checks_ptrace(lsm);
        for (size_t i = 0; p && i < MAX_PROCS; i++) {
                char *line = field(&p, "\n");
                const char *comm = field(&line, "|"), *cmdline = field(&line, "|"), *label = field(&line, "");
                add_proc(s, i, comm, cmdline, label);
        }
        struct ng_config *cfg = NULL;
        struct ng_audit *a = NULL;
        if (ng_config_load_string("", "fuzz.conf", NULL, NULL, &cfg) < 0)
                abort();
        if (ng_audit_run(s, cfg, &a) == 0) {
                render(s, a);
                ng_audit_free(a);
        }
        ng_config_free(cfg);
        ng_snapshot_free(s);
        free(buf);
        return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What numaguardctl's commands share: failing with a message, loading the
 * configuration, collecting and auditing, printing JSON. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "cleanup.h"
#include "common.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-report.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "term.h"
#include "text.h"

int ctl_usage_error(const char *command, const char *fmt, ...)
{
        va_list ap;
        fputs("numaguardctl: ", stderr);
        if (command)
                fprintf(stderr, "%s: ", command);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        if (command)
                fprintf(stderr, " (see 'numaguardctl help %s')\n", command);
        else
                fputs(" (see 'numaguardctl --help')\n", stderr);
        return NG_EXIT_UNKNOWN;
}

int ctl_fail(const char *what, int r)
{
        fprintf(stderr, "numaguardctl: %s: %s\n", what, strerror(r < 0 ? -r : r));
        return NG_EXIT_UNKNOWN;
}

int ctl_fail_read(const struct ctl_opts *o, int r)
{
        if (!o->root)
                return ctl_fail("reading the host", r);
        struct stat st;
        if (stat(o->root, &st) < 0)
                r = -errno;
        else if (!S_ISDIR(st.st_mode))
                r = -ENOTDIR;
        else if (r == -ENOENT) {
                fprintf(stderr, "numaguardctl: --root %s: no proc/ or sys/ under it (unpack a snapshot there)\n",
                        o->root);
                return NG_EXIT_UNKNOWN;
        }
        fprintf(stderr, "numaguardctl: --root %s: %s\n", o->root, strerror(-r));
        return NG_EXIT_UNKNOWN;
}

int ctl_print_json(struct json_object *o, FILE *f)
{
        if (!o)
                return -ENOMEM;
        /* Names in it may be any bytes; JSON is UTF-8 (text.h). */
        ng_json_utf8(o);
        fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
        fputc('\n', f);
        json_object_put(o);
        return ferror(f) ? -EIO : 0;
}

int ctl_render_topology(const struct ng_snapshot *s, bool json, FILE *f)
{
        return json ? ctl_print_json(ng_report_topology_json(s), f) : ng_report_topology_text(s, f);
}

int ctl_render_segments(const struct ng_snapshot *s, bool json, FILE *f)
{
        struct ng_segment *v;
        size_t n;
        int r = ng_segments_build(s, &v, &n);
        if (r < 0)
                return r;
        r = json ? ctl_print_json(ng_report_segments_json(s, v, n), f) : ng_report_segments_text(s, v, n, f);
        ng_segments_free(v, n);
        return r;
}

static void config_diag(void *userdata, int level, const char *file, unsigned line, const char *msg)
{
        (void) userdata;
        const char *warn = level <= LOG_ERR ? "" : "warning: ";
        if (line)
                fprintf(stderr, "numaguardctl: %s:%u: %s%s\n", file, line, warn, msg);
        else    /* about the file as a whole: "is a FIFO, ..." */
                fprintf(stderr, "numaguardctl: %s %s%s\n", file, warn, msg);
}

/* The online nodes of the host (or the --root tree) the command reads, for
 * the configuration's nodes = to be checked against; false when unknown. */
static bool online_nodes(const struct ctl_opts *o, struct ng_bitmap *ret)
{
        _ng_cleanup_(ng_path_freep) struct ng_path *p = NULL;
        _cleanup_free_ char *buf = NULL;
        if (ng_path_new(o->root, &p) < 0)
                return false;
        int r = ng_path_read(p, &buf, NULL, NG_SYS_NODE_DIR "/online");
        *ret = (struct ng_bitmap) {0};
        if (r == -ENOENT) {
                ng_bitmap_set(ret, 0);  /* a kernel without NUMA: node 0 */
                return true;
        }
        r = r < 0 ? r : ng_bitmap_parse_list(buf, ret);
        return r >= 0 && !ng_bitmap_empty(ret);
}

/* The default file may be absent (built-in defaults); an explicit one not.
 * A nodes = the host lacks is a warning (nodes = 0-3 on a one-node host). */
int ctl_load_config(const struct ctl_opts *o, struct ng_config **ret)
{
        struct ng_bitmap nodes;
        bool known = online_nodes(o, &nodes);
        int r = ng_config_load_checked(o->config ? o->config : NG_CONFIG_DEFAULT_PATH, known ? &nodes : NULL,
                                       config_diag, NULL, ret);
        if (r == -ENOENT && !o->config)
                r = ng_config_new_default(ret);
        if (r < 0)
                fprintf(stderr, "numaguardctl: configuration %s is not usable%s%s\n",
                        o->config ? o->config : NG_CONFIG_DEFAULT_PATH, r == -EINVAL ? "" : ": ",
                        r == -EINVAL ? "" : strerror(-r));
        return r;
}

struct counting {
        ng_path_recorder_t inner;
        void *userdata;
        struct ctl_progress *progress;
};

static void count_read(void *userdata, char kind, const char *path, const char *buf, size_t len)
{
        struct counting *c = userdata;
        if (kind == 'f')
                ctl_progress_file(c->progress);
        if (c->inner)
                c->inner(c->userdata, kind, path, buf, len);
}

/* Collects what an audit needs: the pidfiles the configuration names.
 * --exact reads one numa_maps per segment: seconds on a large host, so it
 * shows progress (files read) on a terminal. */
int ctl_collect_for_audit_recorded(const struct ctl_opts *o, const struct ng_config *cfg,
                                   ng_path_recorder_t recorder, void *userdata, struct ng_snapshot **ret)
{
        struct ng_path *p;
        int r = ng_path_new(o->root, &p);
        if (r < 0)
                return r;
        struct counting c = { recorder, userdata, o->exact ? ctl_progress_start(o->term, "reading numa_maps") : NULL };
        if (c.progress)
                ng_path_set_recorder(p, count_read, &c);
        else
                ng_path_set_recorder(p, recorder, userdata);
        enum ng_placement pl = o->replayable ? NG_PLACEMENT_EXACT_FILES : o->exact ? NG_PLACEMENT_EXACT : NG_PLACEMENT_AUTO;
        r = ng_collect_for_config(p, cfg, pl, ret);
        ctl_progress_stop(c.progress);
        ng_path_free(p);
        return r;
}

int ctl_collect_for_audit(const struct ctl_opts *o, const struct ng_config *cfg, struct ng_snapshot **ret)
{
        return ctl_collect_for_audit_recorded(o, cfg, NULL, NULL, ret);
}

int ctl_audit_instance(const struct ctl_opts *o, const char *name, struct ng_config **ret_cfg,
                       struct ng_snapshot **ret_s, struct ng_audit **ret_a, const struct ng_instance **ret_in)
{
        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        _ng_cleanup_(ng_snapshot_freep) struct ng_snapshot *s = NULL;
        _ng_cleanup_(ng_audit_freep) struct ng_audit *a = NULL;
        const struct ng_instance *in = NULL;
        if (ctl_load_config(o, &cfg) < 0)
                return NG_EXIT_UNKNOWN;
        int r = ctl_collect_for_audit(o, cfg, &s);
        if (r < 0)
                r = ctl_fail_read(o, r);
        else if ((r = ng_audit_run(s, cfg, &a)) < 0)
                r = ctl_fail("auditing", r);
        else if (!(in = ng_audit_instance(a, name))) {
                char e[NG_TEXT_SIZE(NG_INSTANCE_NAME_MAX)];
                fprintf(stderr, "numaguardctl: no instance '%s'; known instances:", name);
                for (size_t i = 0; i < a->n_instances; i++)
                        fprintf(stderr, " %s", ng_text_escape(NG_TEXT_TERM, a->instances[i].name, e, sizeof(e)));
                fprintf(stderr, "%s\n", a->n_instances ? "" : " (none)");
                r = NG_EXIT_UNKNOWN;
        }
        if (r != 0)
                return r;
        *ret_cfg = ng_steal_ptr(&cfg);
        *ret_s = ng_steal_ptr(&s);
        *ret_a = ng_steal_ptr(&a);
        *ret_in = in;
        return 0;
}

void ctl_audit_done(struct ng_config *cfg, struct ng_snapshot *s, struct ng_audit *a)
{
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
}

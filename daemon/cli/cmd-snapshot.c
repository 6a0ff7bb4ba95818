/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numaguardctl snapshot`: run one full collection with the path layer's
 * recorder on, copy exactly what was read into a staging tree, and pack it.
 * /proc files report size 0, so tar cannot copy them from the live host:
 * their contents come from the reads themselves. A file numaguard only
 * stats (a /dev/shm or hugetlbfs file: segment contents are never read) is
 * an empty file of its name; what stat said of it is a record the
 * collection keeps (collect-shm.c), so that a sparse file of any size costs
 * nothing and is never staged at that size. A file the staging tree cannot
 * hold is noted in the tree's NG_PATH_INCOMPLETE_FILE, and the snapshot
 * goes on.
 */

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "cleanup.h"
#include "cmd-snapshot.h"
#include "common.h"
#include "engine.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-dbconf.h"
#include "ng-path.h"
#include "ng-report.h"
#include "ng-snapshot.h"
#include "path.h"
#include "term.h"
#include "util.h"

struct stage {
        char dir[PATH_MAX];
        /* The staging tree: what the host's paths name is written inside
         * it whatever they hold ("..": cgroup paths, mount points of a
         * tree), as --root reads it back (ng-path.h). */
        struct ng_path *tree;
        int error;              /* first -errno met while staging */
        struct ctl_notes notes; /* what the tree lacks */
        struct ctl_progress *progress;
};

/* A file of the staging tree, its directories made. */
static int stage_open(const struct stage *st, const char *path, int flags)
{
        char name[NAME_MAX + 1];
        _cleanup_close_ int dir = ng_path_open_parent(st->tree, true, name, sizeof(name), "%s", path);
        if (dir < 0)
                return dir;
        int fd = openat(dir, name, flags | O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        return fd < 0 ? -errno : fd;
}

static int write_all(int fd, const char *buf, size_t len)
{
        for (size_t o = 0; o < len;) {
                ssize_t k = write(fd, buf + o, len - o);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0)
                        o += (size_t) k;
        }
        return 0;
}

/* A refused read is listed, so that --root on the tree is refused the same
 * (a path with a newline cannot be a line of the list: noted). */
static int stage_denied(struct stage *st, const char *path)
{
        if (strchr(path, '\n'))
                return ctl_note(&st->notes, path, "not in this snapshot: the live host refused to read it");
        int fd = stage_open(st, NG_PATH_DENIED_FILE, O_APPEND);
        if (fd < 0)
                return fd;
        int r = write_all(fd, path, strlen(path));
        if (r >= 0)
                r = write_all(fd, "\n", 1);
        close(fd);
        return r;
}

static int stage_dir(struct stage *st, const char *path)
{
        char name[NAME_MAX + 1];
        _cleanup_close_ int dir = ng_path_open_parent(st->tree, true, name, sizeof(name), "%s", path);
        if (dir == -EINVAL)
                return 0;       /* "/" */
        if (dir < 0)
                return dir;
        return mkdirat(dir, name, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int stage_file(struct stage *st, char kind, const char *path, const char *buf, size_t len)
{
        if (kind == 'e')
                return stage_denied(st, path);
        if (kind == 'd')
                return stage_dir(st, path);
        /* only stat'ed ('s'): its name, and what it holds if it was read too */
        int fd = stage_open(st, path, kind == 's' ? 0 : O_TRUNC);
        if (fd < 0)
                return fd;
        int r = kind == 's' ? 0 : write_all(fd, buf, len);
        close(fd);
        return r;
}

/* What the staging tree cannot hold as the host had it (a name its file
 * system refuses, a path another file took): noted, and the snapshot goes
 * on. A full or failing disk ends it. */
static bool per_file(int r)
{
        return r == -ENAMETOOLONG || r == -EEXIST || r == -ENOTDIR || r == -EISDIR || r == -EILSEQ ||
               r == -EINVAL || r == -EFBIG || r == -ELOOP;
}

static void recorder(void *userdata, char kind, const char *path, const char *buf, size_t len)
{
        struct stage *st = userdata;
        _cleanup_free_ char *kept = NULL;
        if (kind == 'f')
                ctl_progress_file(st->progress);
        /* A database's configuration: only the settings numaguard reads;
         * a process's environment: only the variables it reads. */
        if (kind == 'f' && (ng_db_conf_path(path) || ng_db_environ_path(path))) {
                int r = ng_db_environ_path(path) ? ng_db_environ_redact(buf, len, &kept, &len)
                                                 : ng_db_conf_redact(buf, len, &kept, &len);
                if (r < 0) {
                        if (st->error == 0)
                                st->error = -ENOMEM;
                        return;
                }
                buf = kept;
        }
        int r = stage_file(st, kind, path, buf, len);
        if (r < 0 && per_file(r))
                r = ctl_note(&st->notes, path, "not in this snapshot: staging it failed (%s)", strerror(-r));
        if (r < 0 && st->error == 0)
                st->error = r;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
        (void) sb, (void) flag, (void) ftw;
        return remove(path) < 0 ? -1 : 0;
}

static int write_info(const struct stage *st, const struct ng_snapshot *s)
{
        char path[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/numaguard/snapshot.txt", st->dir);
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        struct utsname u;
        uname(&u);
        fprintf(f, "numaguard %s snapshot\nkernel: %s %s %s\nhost: %s\ntaken_usec: %llu\n"
                "files: %llu (%llu bytes), processes scanned: %llu, numa_maps read: %llu\n",
                NG_VERSION, u.sysname, u.release, u.machine, u.nodename,
                (unsigned long long) s->taken_usec, (unsigned long long) s->cost.files_read,
                (unsigned long long) s->cost.bytes_read, (unsigned long long) s->cost.procs_scanned,
                (unsigned long long) s->cost.numa_maps_read);
        return fclose(f) == 0 ? 0 : -errno;
}

/* ---- command lines: kept for the databases only ---- */

/* What a redacted command line keeps: the last path component of argv[0]'s
 * first word, which is all the process's full name (ng_proc.name) takes
 * from it, so names, and the audit, come out the same from the tree. */
static size_t program_name(const char *raw, size_t len, const char **ret)
{
        size_t end = 0, start;
        while (end < len && raw[end] && raw[end] != ' ')
                end++;
        for (start = end; start > 0 && raw[start - 1] != '/';)
                start--;
        *ret = raw + start;
        return end - start;
}

/* A process the audit reads the command line of: one the engine table
 * recognises (a dedicated server by its prefix), or one a configured
 * instance has or might match by its command line. */
static bool keeps_cmdline(const struct ng_proc *pr, const struct ng_config *cfg, const struct ng_audit *a,
                          const char *redacted)
{
        if (ng_engine_of_process(pr->name))
                return true;
        for (size_t i = 0; i < ng_n_engines; i++) {
                const char *pre[] = { ng_engines[i].main_prefix, ng_engines[i].dedicated_prefix };
                for (size_t k = 0; k < 2; k++)
                        if (pre[k] && !strncmp(pr->stat.comm, pre[k], strlen(pre[k])))
                                return true;
        }
        for (size_t i = 0; i < cfg->n_instances; i++) {
                const char *g = cfg->instances[i].match_cmdline;
                if (g && (!fnmatch(g, pr->cmdline ? pr->cmdline : "", 0) || !fnmatch(g, redacted, 0)))
                        return true;
        }
        for (size_t i = 0; i < a->n_instances; i++)
                for (size_t k = 0; k < a->instances[i].n_pids; k++)
                        if (a->instances[i].pids[k] == pr->pid)
                                return true;
        return false;
}

static int redact_one(const struct stage *st, const struct ng_snapshot *s, const struct ng_config *cfg,
                      const struct ng_audit *a, const char *pid)
{
        _cleanup_free_ char *raw = NULL;
        size_t len;
        int r = ng_path_read(st->tree, &raw, &len, NG_PROC_DIR "/%s/cmdline", pid);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        const char *name;
        size_t n = program_name(raw, len, &name);
        char redacted[NAME_MAX + 1];
        snprintf(redacted, sizeof(redacted), "%.*s", (int) n, name);
        const struct ng_proc *pr = ng_snapshot_proc(s, (pid_t) atoi(pid));
        if (len == 0 || (pr && keeps_cmdline(pr, cfg, a, redacted)))
                return 0;
        _cleanup_close_ int fd = ng_path_open(st->tree, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0,
                                              NG_PROC_DIR "/%s/cmdline", pid);
        if (fd < 0)
                return fd;
        /* NUL-terminated, as the kernel gives a command line */
        return write_all(fd, redacted, strlen(redacted) + 1);
}

/* Every other process's command line becomes its program name: a support
 * bundle is not where another tool's secrets in its arguments go. */
static int redact_cmdlines(const struct stage *st, const struct ng_snapshot *s, const struct ng_config *cfg)
{
        _ng_cleanup_(ng_audit_freep) struct ng_audit *a = NULL;
        int r = ng_audit_run(s, cfg, &a);
        if (r < 0)
                return r;
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        r = ng_path_list(st->tree, &names, NULL, NG_PROC_DIR);
        if (r == -ENOENT)
                r = 0;
        for (char **n = names; n && *n && r >= 0; n++)
                if (strspn(*n, "0123456789") == strlen(*n))
                        r = redact_one(st, s, cfg, a, *n);
        return r;
}

static int render_audit(const struct ng_snapshot *s, const struct ng_config *cfg, bool json, FILE *f)
{
        struct ng_audit *a;
        int r = ng_audit_run(s, cfg, &a);
        if (r < 0)
                return r;
        if (json) {
                struct json_object *o = ng_report_audit_json(s, a);
                r = o ? 0 : -ENOMEM;
                if (o)
                        fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else
                r = ng_report_audit_text(s, a, f);
        ng_audit_free(a);
        return r;
}

/* What the live host printed from these very reads: `--root` on the
 * unpacked tree must print the same, byte for byte (the audit's "cost"
 * object aside), with --config numaguard/numaguard.conf. */
static int write_outputs(const struct stage *st, const struct ng_snapshot *s, const struct ng_config *cfg)
{
        static const char *const names[] = { "topology.txt", "topology.json", "segments.txt", "segments.json",
                                             "audit.txt", "audit.json", "numaguard.conf" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char path[PATH_MAX + 64];
                snprintf(path, sizeof(path), "%s/numaguard/%s", st->dir, names[i]);
                FILE *f = fopen(path, "we");
                if (!f)
                        return -errno;
                bool json = strstr(names[i], ".json") != NULL;
                int r;
                if (i < 2)
                        r = ctl_render_topology(s, json, f);
                else if (i < 4)
                        r = ctl_render_segments(s, json, f);
                else if (i < 6)
                        r = render_audit(s, cfg, json, f);
                else
                        r = ng_config_dump(cfg, f);
                if (fclose(f) != 0 && r >= 0)
                        r = -errno;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A tree's own notes (a snapshot of a snapshot) are this one's too: the
 * tree's copy of them leaves the staging tree, the notes are written last
 * when packed. */
static int take_notes(struct stage *st)
{
        _cleanup_free_ char *old = NULL;
        size_t len;
        int r = ng_path_read(st->tree, &old, &len, NG_PATH_INCOMPLETE_FILE);
        if (r == -ENOENT)
                return 0;
        if (r < 0 || (r = ctl_notes_append(&st->notes, old, len)) < 0)
                return r;
        char name[NAME_MAX + 1];
        _cleanup_close_ int dir = ng_path_open_parent(st->tree, false, name, sizeof(name), NG_PATH_INCOMPLETE_FILE);
        if (dir < 0)
                return dir;
        return unlinkat(dir, name, 0) < 0 ? -errno : 0;
}

static int collect_staged(const struct ctl_opts *o, const struct ng_config *cfg, struct stage *st)
{
        /* Tier 2 for every segment, from files: the tree must carry
         * placement, and the answers of move_pages(2) or of the segment
         * itself cannot be replayed from files. */
        struct ctl_opts exact = *o;
        exact.exact = true;
        exact.replayable = true;
        exact.term = NULL;      /* the snapshot's own progress counts the files */
        struct ng_snapshot *s;
        int r = ctl_collect_for_audit_recorded(&exact, cfg, recorder, st, &s);
        if (r < 0)
                return r;
        r = st->error ? st->error : stage_dir(st, "/numaguard");
        if (r >= 0)
                r = take_notes(st);
        if (r >= 0)
                r = redact_cmdlines(st, s, cfg);
        if (r >= 0)
                r = write_info(st, s);
        if (r >= 0)
                r = write_outputs(st, s, cfg);
        ng_snapshot_free(s);
        return r;
}

int ctl_snapshot(const struct ctl_opts *o)
{
        char def[128];
        const char *out = o->output;
        if (!out) {
                time_t t = time(NULL);
                struct tm tm;
                strftime(def, sizeof(def), "numaguard-snapshot-%Y%m%d-%H%M%S.tar.gz", gmtime_r(&t, &tm));
                out = def;
        }
        const char *tmp = getenv("TMPDIR");
        struct stage st = {0};
        snprintf(st.dir, sizeof(st.dir), "%s/numaguard-snapshot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(st.dir))
                return ctl_fail("creating a staging directory", -errno);
        int e = ng_path_new(st.dir, &st.tree);
        if (e < 0) {
                rmdir(st.dir);
                return ctl_fail("opening the staging directory", e);
        }

        _ng_cleanup_(ng_config_freep) struct ng_config *cfg = NULL;
        if (ctl_load_config(o, &cfg) < 0) {
                ng_path_free(st.tree);
                rmdir(st.dir);
                return NG_EXIT_UNKNOWN;
        }
        st.progress = ctl_progress_start(o->term, "capturing the host");
        int r = collect_staged(o, cfg, &st);
        char what[PATH_MAX + 16] = "capturing the host";
        if (r >= 0) {
                snprintf(what, sizeof(what), "writing %s", strcmp(out, "-") ? out : "standard output");
                r = ctl_pack_tree(out, st.dir, &st.notes);
        }
        ctl_progress_stop(st.progress);
        if (r == -EEXIST) {
                fprintf(stderr, "numaguardctl: %s: it exists and is not a regular file; not replaced\n", what);
                r = NG_EXIT_UNKNOWN;
        } else if (r < 0)
                r = ctl_fail(what, r);
        else {
                fprintf(stderr, "numaguardctl: snapshot written to %s\n", out);
                r = NG_EXIT_OK;
        }
        ng_path_free(st.tree);
        ctl_notes_done(&st.notes);
        nftw(st.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return r;
}

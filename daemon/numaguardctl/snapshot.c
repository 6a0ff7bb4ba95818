/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numaguardctl snapshot`: run one full collection with the path layer's
 * recorder on, copy exactly what was read into a staging tree, and pack it.
 * /proc files report size 0, so tar cannot copy them from the live host:
 * their contents come from the reads themselves. /dev/shm and hugetlbfs files
 * are recreated as sparse files of the same size: segment contents are never
 * read.
 */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-report.h"
#include "ng-snapshot.h"

extern char **environ;

struct stage {
        char dir[PATH_MAX];
        int error;              /* first -errno met while staging */
        struct ctl_progress *progress;
};

static int mkdir_p(char *path)
{
        for (char *s = path + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                int r = mkdir(path, 0755);
                *s = '/';
                if (r < 0 && errno != EEXIST)
                        return -errno;
        }
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* A refused read is listed, so that --root on the tree is refused the same. */
static int stage_denied(struct stage *st, const char *path)
{
        char full[PATH_MAX * 2];
        snprintf(full, sizeof(full), "%s/numaguard", st->dir);
        int r = mkdir_p(full);
        if (r < 0)
                return r;
        snprintf(full, sizeof(full), "%s%s", st->dir, NG_PATH_DENIED_FILE);
        FILE *f = fopen(full, "ae");
        if (!f)
                return -errno;
        fprintf(f, "%s\n", path);
        return fclose(f) < 0 ? -errno : 0;
}

static int stage_file(struct stage *st, char kind, const char *path, const char *buf, size_t len)
{
        char full[PATH_MAX * 2];
        if (kind == 'e')
                return stage_denied(st, path);
        if (snprintf(full, sizeof(full), "%s%s", st->dir, path) >= (int) sizeof(full))
                return -ENAMETOOLONG;
        if (kind == 'd')
                return mkdir_p(full);
        char *slash = strrchr(full, '/');
        *slash = '\0';
        int r = mkdir_p(full);
        *slash = '/';
        if (r < 0)
                return r;
        int fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        if (kind == 's')
                r = ftruncate(fd, (off_t) len) < 0 ? -errno : 0;
        else
                for (size_t o = 0; o < len && r >= 0;) {
                        ssize_t k = write(fd, buf + o, len - o);
                        if (k < 0)
                                r = -errno;
                        else
                                o += (size_t) k;
                }
        close(fd);
        return r;
}

static void recorder(void *userdata, char kind, const char *path, const char *buf, size_t len)
{
        struct stage *st = userdata;
        if (kind == 'f')
                ctl_progress_file(st->progress);
        int r = stage_file(st, kind, path, buf, len);
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
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
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

static int run_tar(const char *out, const char *dir)
{
        char *const argv[] = { "tar", "--sparse", "--numeric-owner", "-czf", (char *) out, "-C", (char *) dir, ".", NULL };
        pid_t pid;
        int r = posix_spawnp(&pid, "tar", NULL, NULL, argv, environ);
        if (r != 0)
                return -r;
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
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
        char meta[PATH_MAX + 16];
        snprintf(meta, sizeof(meta), "%s/numaguard", st->dir);
        r = st->error ? st->error : mkdir_p(meta);
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

        struct ng_config *cfg;
        if (ctl_load_config(o, &cfg) < 0) {
                rmdir(st.dir);
                return NG_EXIT_UNKNOWN;
        }
        st.progress = ctl_progress_start(o->term, "capturing the host");
        int r = collect_staged(o, cfg, &st);
        const char *what = "capturing the host";
        ng_config_free(cfg);
        if (r >= 0) {
                what = "packing with tar";
                r = run_tar(out, st.dir);
        }
        ctl_progress_stop(st.progress);
        if (r < 0)
                r = ctl_fail(what, r);
        else {
                fprintf(stderr, "numaguardctl: snapshot written to %s\n", out);
                r = NG_EXIT_OK;
        }
        nftw(st.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return r;
}

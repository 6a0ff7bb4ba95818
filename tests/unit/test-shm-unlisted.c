/* What a /dev/shm holds that is not listed as segments: the files under
 * min_file_bytes that no process maps (counted per mount, not listed), and
 * the entries past the bound a collection examines (replayed from a
 * snapshot's record: an AUDIT_INCOMPLETE that names the mount and the uid
 * owning most of its files). On a copy of a committed tree
 * (tests/fixtures/trees/guest4-v2, whose /dev/shm granule two Oracle
 * processes map), with the snapshot's records written here. Also the
 * bounded directory listing, the index of whole samples against the walk
 * it replaces, and (as root, live) the picture's copy of a listing. */

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ng-audit.h"
#include "ng-config.h"
#include "ng-report.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "ng-test.h"
#include "path.h"
#include "snapshot-builder.h"
#include "util.h"
#include "snapshot.h"

#define TREES NG_FIXTURES "/trees/"

static char dir[64], tree[128];

static void write_file(const char *rel, const char *text)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", tree, rel);
        FILE *f = fopen(path, "w");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

/* A copy of guest4-v2 with these files in its /dev/shm (empty copies) and
 * the snapshot's record of them: "UID SIZE ALLOCATED PATH" lines. */
static void make_tree(const char *const *names, const char *record)
{
        char cmd[512];
        snprintf(dir, sizeof(dir), "/tmp/ng-test-unlisted.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(tree, sizeof(tree), "%s/t", dir);
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", TREES "guest4-v2", tree);
        ck_assert_int_eq(system(cmd), 0);
        for (const char *const *n = names; *n; n++) {
                char rel[256];
                snprintf(rel, sizeof(rel), "dev/shm/%s", *n);
                write_file(rel, "");
        }
        write_file("numaguard/shm-files-0-30", record);
}

static void remove_tree(void)
{
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

static struct ng_snapshot *collect(uint64_t min_file_bytes)
{
        struct ng_path *p;
        struct ng_snapshot *s;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.min_file_bytes = min_file_bytes;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ng_path_free(p);
        return s;
}

static const struct ng_shm_file *file_named(const struct ng_snapshot *s, const char *path)
{
        for (size_t i = 0; i < s->n_files; i++)
                if (!strcmp(s->files[i].path, path))
                        return &s->files[i];
        return NULL;
}

static const struct ng_shm_unlisted *dev_shm(const struct ng_snapshot *s)
{
        for (size_t i = 0; i < s->n_unlisted; i++)
                if (!strcmp(s->unlisted[i].mountpoint, "/dev/shm"))
                        return &s->unlisted[i];
        ck_abort_msg("no /dev/shm among the mounts scanned");
        return NULL;
}

static const char *const names[] = { "ora_ORCL_granule_1", "dsm.1", "dsm.2", "dsm.3", "big", "at-limit", NULL };
static const char record[] =
        /* 4 KiB, but mapped by pids 193 and 195: listed */
        "54321 4096 4096 /dev/shm/ora_ORCL_granule_1\n"
        "1000 0 0 /dev/shm/dsm.1\n"
        "1000 1048576 8192 /dev/shm/dsm.2\n"
        "1001 67108863 4096 /dev/shm/dsm.3\n"
        "1002 1073741824 0 /dev/shm/big\n"
        "1002 67108864 0 /dev/shm/at-limit\n";

/* Under 64 MiB and mapped by nobody: counted with their sizes and pages,
 * not listed; at or above the size, or mapped, listed as before. */
START_TEST(test_small_unmapped_files_counted)
{
        make_tree(names, record);
        struct ng_snapshot *s = collect(64u << 20);
        ck_assert_uint_eq(s->min_file_bytes, 64u << 20);
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/ora_ORCL_granule_1"));
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/big"));
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/at-limit"));
        ck_assert_ptr_null(file_named(s, "/dev/shm/dsm.1"));
        ck_assert_ptr_null(file_named(s, "/dev/shm/dsm.2"));
        ck_assert_ptr_null(file_named(s, "/dev/shm/dsm.3"));
        const struct ng_shm_unlisted *u = dev_shm(s);
        ck_assert_uint_eq(u->small_files, 3);
        ck_assert_uint_eq(u->small_bytes, 1048576 + 67108863);
        ck_assert_uint_eq(u->small_allocated_bytes, 8192 + 4096);
        ck_assert_uint_eq(u->unexamined, 0);

        /* the segments: the granule with its attachers, no small file */
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        bool granule = false;
        for (size_t i = 0; i < n; i++) {
                ck_assert(strncmp(v[i].name, "/dev/shm/dsm.", 13) != 0);
                if (!strcmp(v[i].name, "/dev/shm/ora_ORCL_granule_1")) {
                        granule = true;
                        ck_assert_uint_eq(v[i].n_pids, 2);
                }
        }
        ck_assert(granule);
        ng_segments_free(v, n);

        /* said in the text and the JSON */
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        ng_report_unlisted_text(s, f);
        fclose(f);
        ck_assert_msg(strstr(text, "/dev/shm: 3 files under 64 MiB that no process maps") != NULL, "%s", text);
        free(text);
        struct json_object *j = ng_report_unlisted_json(s), *e, *x;
        ck_assert_uint_eq(json_object_array_length(j), 1);
        e = json_object_array_get_idx(j, 0);
        ck_assert(json_object_object_get_ex(e, "small_files", &x));
        ck_assert_int_eq(json_object_get_int64(x), 3);
        ck_assert(json_object_object_get_ex(e, "small_under_bytes", &x));
        ck_assert_int_eq(json_object_get_int64(x), 64 << 20);
        json_object_put(j);
        ng_snapshot_free(s);

        /* 0: every file listed, nothing counted */
        s = collect(0);
        ck_assert_uint_eq(s->n_files, 6);
        ck_assert_uint_eq(dev_shm(s)->small_files, 0);
        j = ng_report_unlisted_json(s);
        ck_assert_uint_eq(json_object_array_length(j), 0);
        json_object_put(j);
        ng_snapshot_free(s);

        /* an instance's shm_owner claims its files: 1000's listed whatever
         * their size, 1001's still counted */
        struct ng_path *p;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        const uint32_t owners[] = { 1000 };
        o.claimed_uids = owners;
        o.n_claimed_uids = ELEMENTSOF(owners);
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ng_path_free(p);
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/dsm.1"));
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/dsm.2"));
        ck_assert_ptr_null(file_named(s, "/dev/shm/dsm.3"));
        ck_assert_uint_eq(dev_shm(s)->small_files, 1);
        ng_snapshot_free(s);
        remove_tree();
}
END_TEST

/* The live host's count of the entries past the bound, kept by its
 * snapshot: an AUDIT_INCOMPLETE naming the mount and the uid that owns
 * most of the files examined there, with advice of its own; a record that
 * is no count is a problem of its own. */
START_TEST(test_unexamined_replayed)
{
        make_tree(names, record);
        write_file("numaguard/shm-unexamined-0-30", "7\n");
        struct ng_snapshot *s = collect(64u << 20);
        ck_assert_uint_eq(dev_shm(s)->unexamined, 7);
        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_load_string("", "t.conf", NULL, NULL, &cfg), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        size_t found = 0;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *fd = &a->findings[i];
                if (fd->code != NG_CODE_AUDIT_INCOMPLETE || !strstr(fd->message, "/dev/shm: 7 entries"))
                        continue;
                found++;
                /* dsm.1, dsm.2 of 1000 against one each of the others */
                ck_assert_msg(strstr(fd->message, "uid 1000 owns 2 of the 6 files examined there") != NULL, "%s",
                              fd->message);
                ck_assert_msg(strstr(fd->advice, "remove the files no database needs") != NULL, "%s", fd->advice);
        }
        ck_assert_uint_eq(found, 1);
        ng_audit_free(a);
        ng_snapshot_free(s);

        write_file("numaguard/shm-unexamined-0-30", "many\n");
        s = collect(64u << 20);
        ck_assert_uint_eq(dev_shm(s)->unexamined, 0);
        bool problem = false;
        for (size_t i = 0; i < s->n_problems && i < NG_MAX_PROBLEMS; i++)
                problem |= strstr(s->problems[i].path, "shm-unexamined-0-30") &&
                           strstr(s->problems[i].reason, "not a count");
        ck_assert(problem);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        remove_tree();
}
END_TEST

/* At most max names, those past them counted; 0 names none. */
START_TEST(test_list_bounded)
{
        snprintf(dir, sizeof(dir), "/tmp/ng-test-list.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(tree, sizeof(tree), "%s", dir);
        for (int i = 0; i < 5; i++) {
                char rel[16];
                snprintf(rel, sizeof(rel), "f%d", i);
                write_file(rel, "");
        }
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(NULL, &p), 0);
        char **names_v;
        size_t n, total;
        struct stat st;
        ck_assert_int_eq(ng_path_list_bounded(p, 2, &names_v, &n, &total, &st, "%s", dir), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(total, 5);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_ptr_null(names_v[2]);
        ck_assert_int_lt(strcmp(names_v[0], names_v[1]), 0);
        ng_strv_free(names_v);
        ck_assert_int_eq(ng_path_list_bounded(p, 0, &names_v, &n, &total, NULL, "%s", dir), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_uint_eq(total, 5);
        ng_strv_free(names_v);
        ck_assert_int_eq(ng_path_list_bounded(p, 100, &names_v, &n, &total, NULL, "%s", dir), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_uint_eq(total, 5);
        ng_strv_free(names_v);
        ng_path_free(p);
        remove_tree();
}
END_TEST

/* The index answers what the walk of every sample answers, for SysV
 * (namespace, shmid, a device or none) and files (device, inode), with
 * repeated identities (the first wins) and samples that are not whole. */
START_TEST(test_whole_index_as_the_walk)
{
        struct ng_snapshot *s = ng_snapshot_alloc();
        ck_assert_ptr_nonnull(s);
        s->ipc_ns = 9;
        s->n_samples = 400;
        s->samples = xcalloc(s->n_samples, sizeof(*s->samples));
        unsigned seed = 12345;
        for (size_t i = 0; i < s->n_samples; i++) {
                seed = seed * 1103515245 + 12345;
                struct ng_sample *w = &s->samples[i];
                w->whole = (seed >> 3) % 5 != 0;
                w->sysv = (seed >> 7) % 2;
                w->inode = (seed >> 9) % 40;
                w->ipc_ns = w->sysv ? 8 + (seed >> 15) % 3 : 0;
                w->dev_major = (seed >> 17) % 2;
                w->dev_minor = (seed >> 19) % 3;
        }
        struct ng_whole_index ix;
        ck_assert_int_eq(ng_whole_index_build(s, &ix), 0);
        size_t found = 0;
        for (int sysv = 0; sysv < 2; sysv++)
                for (uint64_t inode = 0; inode < 42; inode++)
                        for (uint64_t ns = 7; ns < 11; ns++)
                                for (unsigned major = 0; major < 2; major++)
                                        for (unsigned minor = 0; minor < 4; minor++) {
                                                const struct ng_sample *a = ng_snapshot_whole_sample_ns(
                                                        s, sysv, ns, major, minor, inode),
                                                        *b = ng_whole_index_find(&ix, sysv, ns, major, minor, inode);
                                                ck_assert_ptr_eq(a, b);
                                                found += a != NULL;
                                        }
        ck_assert_uint_gt(found, 100);
        ng_whole_index_free(&ix);
        ng_snapshot_free(s);
}
END_TEST

/* ---- the picture's copy of a listing, on the live host ---- */

static struct ng_snapshot *collect_live(struct ng_picture *pic, struct ng_picture_stats *st)
{
        struct ng_path *p;
        struct ng_snapshot *s;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        ck_assert_int_eq(ng_path_new(NULL, &p), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ng_path_free(p);
        ng_picture_get_stats(pic, st);
        return s;
}

static const struct ng_shm_unlisted *own_shm(const struct ng_snapshot *s)
{
        for (size_t i = 0; i < s->n_unlisted; i++)
                if (!strcmp(s->unlisted[i].mountpoint, "/dev/shm") && s->unlisted[i].mnt_ns == s->mnt_ns)
                        return &s->unlisted[i];
        ck_abort_msg("no /dev/shm of numaguard's own mount namespace");
        return NULL;
}

static void touch_files(const char *prefix, int n)
{
        for (int i = 0; i < n; i++) {
                char path[64];
                snprintf(path, sizeof(path), "%s%d", prefix, i);
                int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                ck_assert_int_ge(fd, 0);
                close(fd);
        }
}

/* A collection through a picture takes the files it counted from the last
 * listing while nothing changed in the mount, and lists it again when a
 * file is added, when a counted file is written to, and when a process
 * maps one (that file listed at once). In a mount namespace of the test's
 * own (a child process of check's), with a tmpfs of its own on /dev/shm. */
START_TEST(test_copy_follows_changes)
{
        if (getuid() != 0 || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=16m") < 0) {
                fprintf(stderr, "*** SKIPPED copy_follows_changes: needs root and a mount namespace of its own (%s)\n",
                        strerror(errno));
                return;
        }
        touch_files("/dev/shm/s", 50);
        int fd = open("/dev/shm/big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 128 << 20), 0);
        close(fd);
        usleep(200000);         /* a directory changed in the last 100 ms is never copied */
        struct ng_picture *pic;
        struct ng_picture_stats st;
        ck_assert_int_eq(ng_picture_new(1000, &pic), 0);
        struct ng_snapshot *s = collect_live(pic, &st);
        ck_assert_uint_eq(own_shm(s)->small_files, 50);
        ck_assert_uint_eq(st.shm_copied, 0);
        ng_snapshot_free(s);

        /* nothing changed: the same, from the copy */
        s = collect_live(pic, &st);
        ck_assert_uint_ge(st.shm_copied, 1);
        ck_assert_uint_eq(own_shm(s)->small_files, 50);
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/big"));
        ck_assert_uint_eq(file_named(s, "/dev/shm/big")->size_bytes, 128 << 20);
        ng_snapshot_free(s);

        /* a counted file written to: its pages show in the file system's use */
        fd = open("/dev/shm/s7", O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        char page[8192] = { 1 };
        ck_assert_int_eq(write(fd, page, sizeof(page)), (ssize_t) sizeof(page));
        close(fd);
        s = collect_live(pic, &st);
        ck_assert_uint_eq(own_shm(s)->small_allocated_bytes, 8192);
        ng_snapshot_free(s);
        s = collect_live(pic, &st);
        ck_assert_uint_ge(st.shm_copied, 1);
        ck_assert_uint_eq(own_shm(s)->small_allocated_bytes, 8192);
        ng_snapshot_free(s);

        /* a process maps a counted file: listed with it */
        int pipefd[2];
        ck_assert_int_eq(pipe(pipefd), 0);
        pid_t kid = fork();
        ck_assert_int_ge(kid, 0);
        if (kid == 0) {
                int f = open("/dev/shm/s3", O_RDWR | O_CLOEXEC);
                void *m = f < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
                (void) !write(pipefd[1], m == MAP_FAILED ? "n" : "y", 1);
                pause();
                _exit(0);
        }
        char ok = 0;
        ck_assert_int_eq(read(pipefd[0], &ok, 1), 1);
        ck_assert_int_eq(ok, 'y');
        s = collect_live(pic, &st);
        ck_assert_uint_ge(st.shm_copied, 1);    /* the mount unchanged: the file from the copy's record */
        const struct ng_shm_file *f = file_named(s, "/dev/shm/s3");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(own_shm(s)->small_files, 49);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        bool attached = false;
        for (size_t i = 0; i < n; i++)
                attached |= !strcmp(v[i].name, "/dev/shm/s3") && v[i].n_pids == 1 && v[i].pids[0] == kid;
        ck_assert(attached);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
        s = collect_live(pic, &st);
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/s3"));
        ck_assert_uint_eq(own_shm(s)->small_files, 49);
        ng_snapshot_free(s);
        kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);

        /* a file added: listed */
        fd = open("/dev/shm/big2", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 128 << 20), 0);
        close(fd);
        s = collect_live(pic, &st);
        ck_assert_ptr_nonnull(file_named(s, "/dev/shm/big2"));
        ng_snapshot_free(s);
        ng_picture_free(pic);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("shm-unlisted");
        TCase *tc = tcase_create("shm-unlisted");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_small_unmapped_files_counted);
        tcase_add_test(tc, test_unexamined_replayed);
        tcase_add_test(tc, test_list_bounded);
        tcase_add_test(tc, test_whole_index_as_the_walk);
        tcase_add_test(tc, test_copy_follows_changes);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

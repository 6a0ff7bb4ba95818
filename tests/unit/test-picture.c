/* The process picture (incremental collection) against a full collection
 * on the same changing workload, on this live host: children of the test
 * attach, detach, map a /dev/shm file, start, exec() and exit between
 * collections; after every step the incremental snapshot shows the
 * children and the segment exactly as a full scan does. Twice: learning of
 * new processes from the kernel's process events (as root in the initial
 * namespaces; under CI they must be there), and from the /proc listing. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ng-test.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "ns-internal.h"
#include "picture-internal.h"

#define KIDS 5
#define SEG_BYTES (4u << 20)

struct kid {
        pid_t pid;
        int cmd, ack;
        bool execed;
};

static int shmid = -1;
static char shm_file[64];
static struct kid kids[KIDS + 1];
static int incremental_steps;
static bool want_events;        /* the incremental steps must use process events */

/* A child doing what its pipe says: a attach, d detach, m map the file,
 * x exec() a sleep (which ends with the test's pipe), q exit. */
static void kid_loop(int cmd, int ack)
{
        void *seg = NULL;
        char c;
        while (read(cmd, &c, 1) == 1) {
                if (c == 'a')
                        seg = shmat(shmid, NULL, 0);
                else if (c == 'd' && seg)
                        shmdt(seg);
                else if (c == 'm') {
                        int fd = open(shm_file, O_RDWR);
                        if (fd >= 0)
                                (void) !mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
                } else if (c == 'x') {
                        (void) !write(ack, &c, 1);
                        dup2(cmd, 0);
                        execl("/bin/sh", "sh", "-c", "read x", (char *) NULL);
                        _exit(1);
                } else if (c == 'q')
                        _exit(0);
                (void) !write(ack, &c, 1);
        }
        _exit(0);
}

static void kid_do(int i, char c);

static bool comm_is(pid_t pid, const char *comm)
{
        char path[64], buf[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        bool same = fgets(buf, sizeof(buf), f) && !strncmp(buf, comm, strlen(comm)) && buf[strlen(comm)] == '\n';
        fclose(f);
        return same;
}

static void kid_start(int i, bool attached)
{
        int c[2], a[2];
        ck_assert_int_eq(pipe(c), 0);
        ck_assert_int_eq(pipe(a), 0);
        pid_t p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0) {
                close(c[1]);
                close(a[0]);
                kid_loop(c[0], a[1]);
        }
        close(c[0]);
        close(a[1]);
        kids[i] = (struct kid) { .pid = p, .cmd = c[1], .ack = a[0] };
        if (attached)
                kid_do(i, 'a');
}

static void kid_do(int i, char c)
{
        ck_assert_int_eq(write(kids[i].cmd, c == 'q' && kids[i].execed ? "\n" : &c, 1), 1);
        if (c == 'q') {
                waitpid(kids[i].pid, NULL, 0);
                kids[i].pid = 0;
                return;
        }
        ck_assert_int_eq(read(kids[i].ack, &c, 1), 1);
        if (c == 'x') {
                kids[i].execed = true;
                /* the exec itself follows the answer: wait for it */
                for (int k = 0; k < 500 && !comm_is(kids[i].pid, "sh"); k++)
                        usleep(10000);
        }
}

static void same_proc(const struct ng_snapshot *si, const struct ng_snapshot *sf, pid_t pid)
{
        const struct ng_proc *a = ng_snapshot_proc(si, pid), *b = ng_snapshot_proc(sf, pid);
        ck_assert_msg((a == NULL) == (b == NULL), "pid %d: %s in the incremental snapshot, %s in the full one",
                      (int) pid, a ? "present" : "absent", b ? "present" : "absent");
        if (!a)
                return;
        ck_assert_uint_eq(a->stat.starttime_ticks, b->stat.starttime_ticks);
        ck_assert_str_eq(a->stat.comm, b->stat.comm);
        ck_assert_uint_eq(a->n_maps, b->n_maps);
        for (size_t j = 0; j < a->n_maps; j++) {
                ck_assert_uint_eq(a->maps[j].start, b->maps[j].start);
                ck_assert_uint_eq(a->maps[j].end, b->maps[j].end);
                ck_assert_uint_eq(a->maps[j].inode, b->maps[j].inode);
                ck_assert_int_eq(a->maps[j].kind, b->maps[j].kind);
        }
}

static const struct ng_segment *find_seg(const struct ng_segment *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].kind == NG_SEG_SYSV && v[i].shmid == shmid)
                        return &v[i];
        return NULL;
}

/* The children and the segment, incremental against full. */
static void compare(struct ng_picture *pic, const struct ng_path *p, const char *step, bool want_incremental)
{
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT, fo = NG_COLLECT_OPTS_DEFAULT;
        struct ng_snapshot *si, *sf;
        struct ng_picture_stats st;
        o.placement = fo.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &si), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, &fo, &sf), 0);
        ng_picture_get_stats(pic, &st);
        /* Other work on the host can make a step rescan (two attaches to
         * one of its segments in one interval): counted, not failed. */
        if (!want_incremental)
                ck_assert_msg(st.full, "%s: not a full collection", step);
        incremental_steps += !st.full;
        if (!st.full && want_events && !st.events) {
                ck_assert_msg(!getenv("CI"), "%s: no process events under CI (%s)", step, strerror(st.events_errno));
                fprintf(stderr, "*** SKIPPED (%s): the kernel delivers no process events here (%s); the listing "
                        "served\n", step, strerror(st.events_errno));
                want_events = false;
        }
        if (!st.full && !want_events)
                ck_assert_msg(!st.events, "%s: process events used where the listing was asked for", step);
        if (!st.full)
                ck_assert_msg(si->cost.procs_scanned < sf->cost.procs_scanned,
                              "%s: the incremental collection read %llu processes, the full one %llu", step,
                              (unsigned long long) si->cost.procs_scanned, (unsigned long long) sf->cost.procs_scanned);
        for (int i = 0; i <= KIDS; i++)
                if (kids[i].pid)
                        same_proc(si, sf, kids[i].pid);
        struct ng_segment *vi, *vf;
        size_t ni, nf;
        ck_assert_int_eq(ng_segments_build(si, &vi, &ni), 0);
        ck_assert_int_eq(ng_segments_build(sf, &vf, &nf), 0);
        const struct ng_segment *gi = find_seg(vi, ni), *gf = find_seg(vf, nf);
        ck_assert_msg(gi && gf, "%s: shmid %d missing", step, shmid);
        ck_assert_msg(gi->n_pids == gf->n_pids, "%s: %zu attachers incrementally, %zu in full", step, gi->n_pids,
                      gf->n_pids);
        for (size_t k = 0; k < gi->n_pids; k++)
                ck_assert_int_eq(gi->pids[k], gf->pids[k]);
        ng_segments_free(vi, ni);
        ng_segments_free(vf, nf);
        ng_snapshot_free(si);
        ng_snapshot_free(sf);
}

/* Tier 1 samples a segment once (itself, or in one of its attachers),
 * however many attachers there are: each attacher sampled would multiply a
 * poll's move_pages(2) work by their number. */
static void one_representative(struct ng_picture *pic, const struct ng_path *p, const char *step)
{
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        struct ng_snapshot *s;
        o.placement = NG_PLACEMENT_SAMPLED;
        o.picture = pic;
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        size_t n = 0;
        for (size_t i = 0; i < s->n_samples; i++) {
                /* asked of the segment itself (through one attacher's map_files) */
                if (s->samples[i].whole) {
                        n += s->samples[i].sysv && s->samples[i].inode == (uint64_t) shmid;
                        continue;
                }
                const struct ng_proc *pr = ng_snapshot_proc(s, s->samples[i].pid);
                for (size_t j = 0; pr && j < pr->n_maps; j++)
                        n += pr->maps[j].kind == NG_MAP_SYSV && pr->maps[j].inode == (uint64_t) shmid &&
                             pr->maps[j].start == s->samples[i].start;
        }
        ck_assert_msg(n == 1, "%s: shmid %d sampled in %zu attachers", step, shmid, n);
        ng_snapshot_free(s);
}

static size_t attachers_seen(struct ng_picture *pic, const struct ng_path *p)
{
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        struct ng_snapshot *s;
        struct ng_segment *v;
        size_t n;
        o.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        const struct ng_segment *g = find_seg(v, n);
        size_t k = g ? g->n_pids : 0;
        ng_segments_free(v, n);
        ng_snapshot_free(s);
        return k;
}

/* The segment and the file are made and removed by the process that runs
 * the tests, so that they never outlive a test that failed (a failed check
 * ends the test's own process at once). */
static void segments_make(void)
{
        shmid = shmget(IPC_PRIVATE, SEG_BYTES, IPC_CREAT | 0600);
        snprintf(shm_file, sizeof(shm_file), "/dev/shm/ng-test-picture.%d", (int) getpid());
}

static void segments_remove(void)
{
        if (shmid >= 0)
                shmctl(shmid, IPC_RMID, NULL);
        unlink(shm_file);
}

static void workload(bool events)
{
        struct ng_path *p;
        struct ng_picture *pic;
        want_events = events;
        incremental_steps = 0;
        memset(kids, 0, sizeof(kids));
        ck_assert_int_ge(shmid, 0);
        unlink(shm_file);
        ck_assert_int_eq(ng_path_new(NULL, &p), 0);
        ck_assert_int_eq(ng_picture_new(1000, &pic), 0);
        ng_picture_use_events(pic, events);

        kid_start(0, true);
        kid_start(1, false);
        kid_start(2, true);
        compare(pic, p, "first (full)", false);

        kid_start(3, true);                     /* a new attacher */
        compare(pic, p, "new attacher", true);
        one_representative(pic, p, "three attachers");
        kid_do(1, 'a');                         /* a known idle process attaches */
        compare(pic, p, "late attach", true);
        kid_do(0, 'q');                         /* an attacher exits */
        compare(pic, p, "exit", true);
        kid_do(2, 'd');                         /* an attacher detaches */
        compare(pic, p, "detach", true);
        int fd = open(shm_file, O_RDWR | O_CREAT | O_EXCL, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 4096), 0);
        close(fd);
        kid_do(3, 'm');                         /* a segment mapper maps a new /dev/shm file */
        compare(pic, p, "new file", true);

        /* Two known processes attach in one interval: the picture sees one
         * (the last attacher), knows it missed one, and the next
         * collection rescans. */
        kid_start(4, false);
        compare(pic, p, "idle child", true);
        /* A known process exec()s: its name changes, no segment does. The
         * listing learns of it at the next full scan only. */
        kid_start(5, false);
        compare(pic, p, "child to exec", true);
        kid_do(5, 'x');
        if (want_events)
                compare(pic, p, "exec", true);
        kid_do(2, 'a');
        kid_do(4, 'a');
        (void) attachers_seen(pic, p);
        compare(pic, p, "rescan after a missed attach", false);

        ck_assert_msg(incremental_steps >= 5, "only %d of 8 steps were incremental", incremental_steps);
        for (int i = 0; i <= KIDS; i++)
                if (kids[i].pid)
                        kid_do(i, 'q');
        unlink(shm_file);
        ng_picture_free(pic);
        ng_path_free(p);
}

START_TEST(incremental_equals_full_events)
{
        workload(true);
}
END_TEST

START_TEST(incremental_equals_full_listing)
{
        workload(false);
}
END_TEST

/* On a captured tree, which does not change. */
START_TEST(every_collection_full_when_asked)
{
        struct ng_path *p;
        struct ng_picture *pic;
        struct ng_picture_stats st;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        struct ng_snapshot *s;
        ck_assert_int_eq(ng_path_new(NG_FIXTURES "/trees/guest4-v2", &p), 0);
        ck_assert_int_eq(ng_picture_new(3, &pic), 0);
        o.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        bool full[7];
        for (int i = 0; i < 7; i++) {
                ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
                ng_snapshot_free(s);
                ng_picture_get_stats(pic, &st);
                full[i] = st.full;
                ck_assert_uint_gt(st.procs, 0);
                if (!st.full)
                        ck_assert_uint_eq(st.procs_new + st.procs_gone + st.procs_reread, 0);
        }
        /* the first, then every third */
        ck_assert(full[0] && !full[1] && !full[2] && full[3] && !full[4] && !full[5] && full[6]);
        ck_assert_uint_eq(st.full_scans, 3);
        ng_picture_invalidate(pic);
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ng_snapshot_free(s);
        ng_picture_get_stats(pic, &st);
        ck_assert(st.full);
        /* records read without every process's namespaces lack them: a
         * configuration that asks for them (an [instance] added by a
         * reload) reads every process again, once */
        o.all_namespaces = true;
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
                ng_snapshot_free(s);
                ng_picture_get_stats(pic, &st);
                ck_assert(st.full == (i == 0));
        }
        o.all_namespaces = false;
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ng_snapshot_free(s);
        ng_picture_get_stats(pic, &st);
        ck_assert(st.full);
        ng_picture_free(pic);
        ng_path_free(p);
}
END_TEST

/* Without events, /proc/loadavg tells a poll whether any process started
 * or ended since the last listing. On a copy of a captured tree: while it
 * says nothing did, a pid added to the tree is not listed (the listing was
 * skipped); once the last pid handed out moves, or the number of threads
 * does, the listing finds what changed. A malformed file never skips. */
static void write_loadavg(const char *root, const char *text)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/proc/loadavg", root);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* A writable copy of the guest4-v2 tree in root (a mkdtemp template),
 * with a known /proc/loadavg. */
static void tree_copy(char *root)
{
        char cmd[1024];
        ck_assert_ptr_nonnull(mkdtemp(root));
        snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s'", NG_FIXTURES "/trees/guest4-v2", root);
        ck_assert_int_eq(system(cmd), 0);
        write_loadavg(root, "0.00 0.01 0.05 1/120 4000\n");
}

static void collect_tree(struct ng_path *p, struct ng_collect_opts *o, struct ng_picture_stats *st, pid_t pid,
                         bool skipped, bool present)
{
        struct ng_snapshot *s;
        ck_assert_int_eq(ng_snapshot_collect(p, o, &s), 0);
        ng_picture_get_stats(o->picture, st);
        ck_assert_msg(st->listing_skipped == skipped, "listing %s", st->listing_skipped ? "skipped" : "read");
        ck_assert_msg((ng_snapshot_proc(s, pid) != NULL) == present, "pid %d %s", (int) pid,
                      present ? "missing" : "listed");
        ng_snapshot_free(s);
}

START_TEST(listing_skipped_while_nothing_starts_or_ends)
{
        char root[] = "/tmp/ng-picture-XXXXXX", cmd[1024];
        tree_copy(root);
        struct ng_path *p;
        struct ng_picture *pic;
        struct ng_picture_stats st;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        ck_assert_int_eq(ng_path_new(root, &p), 0);
        ck_assert_int_eq(ng_picture_new(1000, &pic), 0);
        o.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        const pid_t added = 4001;
        collect_tree(p, &o, &st, added, false, false);  /* the first collection is full */
        ck_assert(st.full);
        collect_tree(p, &o, &st, added, true, false);
        uint64_t held = st.procs;

        /* a process appears in the tree, loadavg unchanged: not looked for */
        snprintf(cmd, sizeof(cmd),
                 "cp -a '%s/proc/1' '%s/proc/%d' && sed -i 's/^\\(Pid\\|Tgid\\):.*/\\1:\t%d/' '%s/proc/%d/status'"
                 " && sed -i 's/^1 /%d /' '%s/proc/%d/stat'",
                 root, root, (int) added, (int) added, root, (int) added, (int) added, root, (int) added);
        ck_assert_int_eq(system(cmd), 0);
        collect_tree(p, &o, &st, added, true, false);
        ck_assert_uint_eq(st.procs, held);
        /* the kernel handed out its pid: listed and read */
        write_loadavg(root, "0.00 0.01 0.05 1/121 4001\n");
        collect_tree(p, &o, &st, added, false, true);
        ck_assert_uint_eq(st.procs_new, 1);
        collect_tree(p, &o, &st, added, true, true);
        /* it ends: only the number of threads says so */
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d'", root, (int) added);
        ck_assert_int_eq(system(cmd), 0);
        write_loadavg(root, "0.00 0.01 0.05 1/120 4001\n");
        collect_tree(p, &o, &st, added, false, false);
        ck_assert_uint_eq(st.procs_gone, 1);
        ck_assert_uint_eq(st.procs, held);
        /* a file that cannot be read as loadavg never skips */
        write_loadavg(root, "0.00 0.01 0.05 120 4001\n");
        collect_tree(p, &o, &st, added, false, false);
        collect_tree(p, &o, &st, added, false, false);
        ck_assert(!st.full);

        ng_picture_free(pic);
        ng_path_free(p);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The pids numaguard's own threads take between two collections do not
 * make the host look busy: each reader that joins another IPC namespace
 * (counted by ng_ns_readers_started(), here started for real) and the
 * collecting thread itself. Any other pid handed out, or a thread more or
 * less, does. */
START_TEST(witness_counts_own_threads_out)
{
        const struct ng_pid_witness was = { .threads = 120, .last_pid = 4000, .own = 5 };
        struct ng_pid_witness now = { .threads = 120, .last_pid = 4000, .own = 5 };
        ck_assert(ng_pid_witness_quiet(&was, &now, 0));
        now.last_pid = 4003, now.own = 8;       /* three readers of ours */
        ck_assert(ng_pid_witness_quiet(&was, &now, 0));
        ck_assert(ng_pid_witness_quiet(&was, &now, 4009));
        now.last_pid = 4004;                    /* ... and a fourth pid */
        ck_assert(!ng_pid_witness_quiet(&was, &now, 0));
        ck_assert(ng_pid_witness_quiet(&was, &now, 4004));      /* the caller's */
        ck_assert(!ng_pid_witness_quiet(&was, &now, 4003));
        now.last_pid = 4005;
        ck_assert(!ng_pid_witness_quiet(&was, &now, 4005));
        now.last_pid = 4003, now.threads = 121;
        ck_assert(!ng_pid_witness_quiet(&was, &now, 0));
        now.threads = 120, now.last_pid = 3999, now.own = 5;
        ck_assert(!ng_pid_witness_quiet(&was, &now, 0));        /* pids wrapped */

        /* each live read of an IPC namespace's table starts one thread,
         * whether or not it may join the namespace (EPERM as non-root) */
        struct ng_path *p;
        struct stat st;
        ck_assert_int_eq(ng_path_new("/", &p), 0);
        ck_assert_int_eq(stat("/proc/self/ns/ipc", &st), 0);
        uint64_t before = ng_ns_readers_started();
        for (int i = 0; i < 3; i++) {
                char *buf = NULL;
                size_t len;
                int r = ng_path_read_ipc_ns(p, getpid(), (uint64_t) st.st_ino, &buf, &len);
                ck_assert_msg(r == 0 || r == -EPERM, "read: %d", r);
                free(buf);
        }
        ck_assert_uint_eq(ng_ns_readers_started() - before, 3);
        ng_path_free(p);
}
END_TEST

/* A snapshot made through the picture points at the picture's record of
 * each process with no maps instead of copying it (a poll's cost does not
 * grow with idle processes), and at the same copy of a process with maps
 * as the snapshot before while the process was not read again (nor with
 * thousands of attachers read by turns); one read again (its CPU time, at
 * its turn) is a new copy. A record the picture lets go of (its process
 * ended) stays whole for as long as an older snapshot may point at it:
 * here after two newer snapshots and the picture itself are freed. */
START_TEST(snapshots_share_records_and_keep_them)
{
        char root[] = "/tmp/ng-picture-XXXXXX", cmd[1024];
        tree_copy(root);
        struct ng_path *p;
        struct ng_picture *pic;
        struct ng_picture_stats st;
        struct ng_snapshot *s1, *s2, *s3;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        ck_assert_int_eq(ng_path_new(root, &p), 0);
        ck_assert_int_eq(ng_picture_new(1000, &pic), 0);
        o.placement = NG_PLACEMENT_COUNTERS;
        o.picture = pic;
        ng_picture_set_read_budget(pic, 1);     /* one holder's CPU time a collection */
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s1), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s2), 0);
        ck_assert_uint_eq(s1->n_procs, s2->n_procs);

        /* the last process without maps whose cmdline is long enough to
         * show a free (the allocator writes over a freed block's start) */
        const struct ng_proc *idle = NULL, *kept = NULL;
        size_t mapped = 0, reread = 0;
        for (size_t i = 0; i < s1->n_procs; i++) {
                const struct ng_proc *a = s1->procs[i], *b = ng_snapshot_proc(s2, a->pid);
                ck_assert_ptr_nonnull(b);
                if (a->n_maps) {
                        ck_assert_uint_eq(a->n_maps, b->n_maps);
                        mapped++;
                        if (proc_rec_of(b)->cpu_read_seq != proc_rec_of(a)->cpu_read_seq) {
                                ck_assert_msg(a != b, "pid %d: read again, yet the same record", (int) a->pid);
                                ck_assert_ptr_ne(a->maps, b->maps);
                                reread++;
                                continue;
                        }
                        ck_assert_msg(a == b, "pid %d: unchanged, yet copied", (int) a->pid);
                        ck_assert(proc_rec_of(a)->shared);
                        kept = a;
                        continue;
                }
                ck_assert_msg(a == b, "pid %d: a record without maps is copied", (int) a->pid);
                if (a->cmdline && strlen(a->cmdline) >= 24)
                        idle = a;
        }
        ck_assert_uint_gt(mapped, 0);
        ck_assert_uint_eq(reread, 1);
        ck_assert_ptr_nonnull(kept);
        ck_assert_ptr_nonnull(idle);
        pid_t kept_pid = kept->pid;
        size_t kept_maps = kept->n_maps;
        char kept_path[256];
        snprintf(kept_path, sizeof(kept_path), "%s", kept->maps[kept_maps - 1].path);
        char name[sizeof(idle->name)], cmdline[256];
        pid_t pid = idle->pid;
        snprintf(name, sizeof(name), "%s", idle->name);
        snprintf(cmdline, sizeof(cmdline), "%s", idle->cmdline);

        /* it ends: the next collection drops it */
        snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d'", root, (int) pid);
        ck_assert_int_eq(system(cmd), 0);
        write_loadavg(root, "0.00 0.01 0.05 1/119 4000\n");
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s3), 0);
        ng_picture_get_stats(pic, &st);
        ck_assert_uint_eq(st.procs_gone, 1);
        ck_assert_ptr_null(ng_snapshot_proc(s3, pid));
        ng_snapshot_free(s2);
        ng_snapshot_free(s3);
        ng_picture_free(pic);

        /* s1's record of it is still whole, and so is the one with maps
         * s1 and s2 shared */
        idle = ng_snapshot_proc(s1, pid);
        ck_assert_ptr_nonnull(idle);
        ck_assert_str_eq(idle->name, name);
        ck_assert_str_eq(idle->cmdline, cmdline);
        kept = ng_snapshot_proc(s1, kept_pid);
        ck_assert_uint_eq(kept->n_maps, kept_maps);
        ck_assert_str_eq(kept->maps[kept_maps - 1].path, kept_path);
        ng_snapshot_free(s1);
        ng_path_free(p);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("picture");
        TCase *tc = tcase_create("picture");
        tcase_add_unchecked_fixture(tc, segments_make, segments_remove);
        tcase_add_test(tc, incremental_equals_full_events);
        tcase_add_test(tc, incremental_equals_full_listing);
        tcase_add_test(tc, every_collection_full_when_asked);
        tcase_add_test(tc, listing_skipped_while_nothing_starts_or_ends);
        tcase_add_test(tc, witness_counts_own_threads_out);
        tcase_add_test(tc, snapshots_share_records_and_keep_them);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* Whose processes may speak for a segment (ng-snapshot.h, struct
 * ng_speakers): only those whose real and effective uid are root's or the
 * segment's owner's (a SysV segment's owner and creator, a file's owner).
 * Another user's process that attaches root's segment may put a file of
 * its own at the same address, named like it, and fill it: its maps line
 * and page tables are never the segment's placement (#36), and rebalance
 * never moves pages through it. */

#include <limits.h>

#include "snapshot-builder.h"
#include "ng-act-rebalance.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-path.h"
#include "ng-segments.h"
#include "parse.h"
#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define HOST_IPC UINT64_C(4026531839)
#define CTR_IPC UINT64_C(4026532301)
#define START UINT64_C(0x7f0000000000)
#define USER 65534u
#define ORACLE 54321u

static struct ng_pid_status creds(uint32_t uid, uint32_t euid)
{
        return (struct ng_pid_status) { .uid = uid, .euid = euid };
}

static bool admit(const struct ng_speakers *sp, uint32_t uid, uint32_t euid)
{
        struct ng_pid_status st = creds(uid, euid);
        return ng_speakers_admit(sp, &st);
}

START_TEST(root_and_the_owners_speak)
{
        const struct ng_speakers owners = { .n = 2, .uid = { ORACLE, 1001 } };
        ck_assert(admit(&owners, 0, 0));
        ck_assert(admit(&owners, ORACLE, ORACLE));
        ck_assert(admit(&owners, 1001, 1001));
        ck_assert(admit(&owners, ORACLE, 0));          /* the owner's set-user-ID root program */
        ck_assert(admit(&owners, 0, ORACLE));          /* root, for the moment as the owner */
        ck_assert(admit(&owners, ORACLE, 1001));
        /* another user, even running a set-user-ID program of root's or
         * the owner's: its real uid is still its own */
        ck_assert(!admit(&owners, USER, USER));
        ck_assert(!admit(&owners, USER, 0));
        ck_assert(!admit(&owners, USER, ORACLE));
        ck_assert(!admit(&owners, 0, USER));
        ck_assert(!admit(&owners, NG_UID_UNKNOWN, NG_UID_UNKNOWN));
        ck_assert(!admit(&owners, ORACLE, NG_UID_UNKNOWN));

        /* no owner known: root's processes alone */
        const struct ng_speakers unknown = { .n = 0 };
        ck_assert(admit(&unknown, 0, 0));
        ck_assert(!admit(&unknown, ORACLE, ORACLE));
        ck_assert(!admit(&unknown, 0, ORACLE));

        /* anonymous shared and private memory: no owner to tell by */
        const struct ng_speakers anyone = { .anyone = true };
        ck_assert(admit(&anyone, USER, USER));
}
END_TEST

static void shm_row(struct ng_snapshot *s, int32_t shmid, uint64_t ipc_ns, uint32_t uid, uint32_t cuid)
{
        snap_shm(s, shmid, 16 * MiB, 1, 0);
        struct ng_shm_seg *sh = &s->shm[s->n_shm - 1];
        sh->ipc_ns = ipc_ns;
        sh->uid = uid;
        sh->cuid = cuid;
}

static void shm_file(struct ng_snapshot *s, const char *path, unsigned minor, uint64_t inode, uint32_t uid)
{
        s->files = realloc(s->files, (s->n_files + 1) * sizeof(*s->files));
        ck_assert_ptr_nonnull(s->files);
        s->files[s->n_files++] = (struct ng_shm_file) {
                .path = strdup(path), .kind = NG_SHM_FILE_TMPFS, .size_bytes = MiB, .page_kib = 4,
                .dev_minor = minor, .inode = inode, .allocated_bytes = MiB, .uid = uid };
}

START_TEST(owners_from_sysvipc_and_the_files)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 1 << 20);
        shm_row(s, 7, HOST_IPC, ORACLE, 0);            /* root made it, IPC_SET gave it to oracle */
        shm_row(s, 7, CTR_IPC, 999, 999);              /* a container's shmid 7 */
        shm_row(s, 8, HOST_IPC, ORACLE, ORACLE);
        s->shm[s->n_shm - 1].unknown = true;           /* its uids did not parse */
        shm_file(s, "/dev/shm/PostgreSQL.1", 25, 11, 26);
        shm_file(s, "/dev/shm/ora_T_1", 25, 0, ORACLE);        /* a tree's copy: no inode */

        struct ng_speakers sp;
        ng_speakers_of_sysv(s, HOST_IPC, 7, &sp);
        ck_assert(!sp.anyone);
        ck_assert_uint_eq(sp.n, 2);
        ck_assert_uint_eq(sp.uid[0], ORACLE);
        ck_assert_uint_eq(sp.uid[1], 0);
        ng_speakers_of_sysv(s, CTR_IPC, 7, &sp);
        ck_assert_uint_eq(sp.n, 1);
        ck_assert_uint_eq(sp.uid[0], 999);
        ng_speakers_of_sysv(s, HOST_IPC, 8, &sp);
        ck_assert_uint_eq(sp.n, 0);
        ng_speakers_of_sysv(s, HOST_IPC, 9, &sp);      /* no row */
        ck_assert(!sp.anyone);
        ck_assert_uint_eq(sp.n, 0);

        ng_speakers_of_file(s, 0, 25, 11, "/dev/shm/renamed", &sp);
        ck_assert_uint_eq(sp.n, 1);
        ck_assert_uint_eq(sp.uid[0], 26);
        ng_speakers_of_file(s, 0, 25, 0, "/dev/shm/ora_T_1", &sp);
        ck_assert_uint_eq(sp.n, 1);
        ck_assert_uint_eq(sp.uid[0], ORACLE);
        ng_speakers_of_file(s, 0, 26, 11, "/dev/shm/PostgreSQL.1", &sp);       /* another device */
        ck_assert_uint_eq(sp.n, 0);

        /* by a process's mapping: its IPC namespace names the row */
        struct ng_proc *pr = snap_proc(s, 300, 1, "postgres", "0-1", "0-1");
        pr->ipc_ns = CTR_IPC;
        pr->status.uid = pr->status.euid = 999;
        snap_map_sysv(pr, 7, START, 16 * MiB, 4, NULL, 0);
        ck_assert(ng_snapshot_may_speak(s, pr, &pr->maps[0]));
        pr->ipc_ns = HOST_IPC;
        ck_assert(!ng_snapshot_may_speak(s, pr, &pr->maps[0]));
        struct ng_map anon = { .kind = NG_MAP_ANON_SHARED }, heap = { .kind = NG_MAP_ANON_PRIVATE };
        ng_speakers_of_map(s, pr, &anon, &sp);
        ck_assert(sp.anyone);
        ng_speakers_of_map(s, pr, &heap, &sp);
        ck_assert(sp.anyone);
        ng_snapshot_free(s);
}
END_TEST

/* The kernel prints a Uid: line in every status; one without it is not
 * the kernel's, and its process speaks for nothing. */
START_TEST(status_without_uid_is_unknown)
{
        struct ng_pid_status st;
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\nPid:\t5\n", &st), 0);
        ck_assert_uint_eq(st.uid, NG_UID_UNKNOWN);
        ck_assert_uint_eq(st.euid, NG_UID_UNKNOWN);
        ng_pid_status_done(&st);
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\nPid:\t5\nUid:\t54321\t0\t0\t0\n", &st), 0);
        ck_assert_uint_eq(st.uid, ORACLE);
        ck_assert_uint_eq(st.euid, 0);
        ng_pid_status_done(&st);
}
END_TEST

/* Root's 32 MiB segment (shmid 7, 2 nodes, every page on node 0). pid 99
 * is another user's (started first: the lower pid) with a file of its own
 * named like the segment mapped at the same address, on another device,
 * its pages on node 1; pid 100, root's, maps the segment. */
static struct ng_snapshot *forged(bool holder)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 1 << 20);
        s->ipc_ns = HOST_IPC;
        shm_row(s, 7, HOST_IPC, 0, 0);
        s->shm[0].size_bytes = s->shm[0].rss_bytes = 32 * MiB;
        s->shm[0].nattch = holder ? 2 : 1;
        static const struct ng_node_pages mine[] = { { 1, 8192 } }, kernel[] = { { 0, 8192 } };
        struct ng_proc *u = snap_proc(s, 99, 1, "ora_pmon_ORCL", "0-1", "0-1");
        u->ipc_ns = HOST_IPC;
        u->status.uid = u->status.euid = USER;
        snap_map_sysv(u, 7, START, 32 * MiB, 4, mine, 1);
        u->maps[0].dev_minor = 38;
        if (holder) {
                struct ng_proc *h = snap_proc(s, 100, 1, "ora_dbw0_ORCL", "0-1", "0-1");
                h->ipc_ns = HOST_IPC;
                snap_map_sysv(h, 7, START, 32 * MiB, 4, kernel, 1);
        }
        return s;
}

static struct ng_config *config(void)
{
        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_load_string("[global]\nmin_segment_size = 4M\n[instance ORCL]\n"
                                               "match_comm = ora_*\n", "test.conf", NULL, NULL, &cfg), 0);
        return cfg;
}

START_TEST(root_attacher_speaks_not_the_user)
{
        struct ng_snapshot *s = forged(true);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(n, 1);
        const struct ng_segment *seg = &v[0];
        ck_assert_uint_eq(seg->n_pids, 2);
        ck_assert_uint_eq(seg->n_untrusted, 1);
        ck_assert_int_eq(seg->untrusted[0], 99);
        ck_assert(!ng_segment_untrusted_only(seg));
        ck_assert_int_eq(seg->rep_pid, 100);
        ck_assert_int_eq(seg->placement_source, NG_SOURCE_ATTACHER);
        ck_assert_uint_eq(ng_segment_node_bytes(seg, 0), 32 * MiB);
        ck_assert_uint_eq(ng_segment_node_bytes(seg, 1), 0);
        /* the user's line on another device is no conflict: not the
         * segment's line to begin with */
        ck_assert_uint_eq(seg->dev_minor, 1);
        ng_segments_free(v, n);

        /* the owner's processes speak: give the segment to the user */
        s->shm[0].uid = USER;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(v[0].n_untrusted, 0);
        ck_assert_int_eq(v[0].rep_pid, 99);    /* the lower pid, as much mapped */
        ck_assert_uint_eq(v[0].dev_minor, NG_SEG_DEV_CONFLICT);
        ng_segments_free(v, n);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(user_alone_leaves_the_placement_unknown)
{
        struct ng_snapshot *s = forged(false);
        struct ng_config *cfg = config();
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        ck_assert_uint_eq(a->n_segments, 1);
        const struct ng_segment *seg = &a->segments[0];
        ck_assert(ng_segment_untrusted_only(seg));
        ck_assert_int_eq(seg->rep_pid, 0);
        ck_assert_int_eq(seg->placement_source, NG_SOURCE_NONE);
        ck_assert_uint_eq(seg->n_nodes, 0);
        ck_assert(seg->placement_coverage == 0);
        ck_assert_uint_eq(seg->resident_bytes, 32 * MiB);      /* the kernel's count still counts */
        size_t incomplete = 0;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *f = &a->findings[i];
                ck_assert_int_ne(f->code, NG_CODE_CYCLOPS);
                if (f->code != NG_CODE_AUDIT_INCOMPLETE)
                        continue;
                incomplete++;
                ck_assert_str_eq(f->segment, "shmid 7 (key 0x00001007)");
                ck_assert_str_eq(f->message, "shmid 7 (key 0x00001007) is attached only by processes of other users "
                                 "than root (pid 99): neither their maps lines nor their page tables are taken for "
                                 "it, and its placement is unknown");
        }
        ck_assert_uint_eq(incomplete, 1);

        const struct ng_instance *in = ng_audit_instance(a, "ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_segs, 1);
        struct ng_rebalance_plan p;
        ck_assert_int_eq(ng_rebalance_plan_segment(s, cfg, in, &a->segments[in->segs[0]], &p), 0);
        ck_assert_int_eq(p.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(p.reason, "its placement is unknown: it is attached only by processes of other users "
                             "than root (pid 99), whose page tables are not taken for it"), "%s", p.reason);
        ck_assert_uint_eq(p.move_pages, 0);

        /* a segment whose representative is another user's process, had
         * anything made it one: rebalance does not move through it */
        struct ng_segment copy = a->segments[in->segs[0]];
        copy.rep_pid = 99;
        copy.placement_source = NG_SOURCE_ATTACHER;
        copy.n_untrusted = 0;
        ck_assert_int_eq(ng_rebalance_plan_segment(s, cfg, in, &copy, &p), 0);
        ck_assert_int_eq(p.verdict, NG_OUTCOME_REFUSED);
        ck_assert_msg(strstr(p.reason, "pid 99 is of another user than root"), "%s", p.reason);
        ng_audit_free(a);
        ng_config_free(cfg);
        ng_snapshot_free(s);
}
END_TEST

/* The texts that name them. */
START_TEST(speakers_and_attachers_said)
{
        struct ng_segment seg = { .speakers = { .n = 2, .uid = { ORACLE, 0 } } };
        char buf[128];
        ck_assert_str_eq(ng_segment_speakers_text(&seg, buf, sizeof(buf)), "root and uid 54321");
        seg.speakers = (struct ng_speakers) { .n = 2, .uid = { ORACLE, 1001 } };
        ck_assert_str_eq(ng_segment_speakers_text(&seg, buf, sizeof(buf)), "root and uids 54321, 1001");
        seg.speakers = (struct ng_speakers) { .n = 1, .uid = { 0 } };
        ck_assert_str_eq(ng_segment_speakers_text(&seg, buf, sizeof(buf)), "root");
        seg.speakers = (struct ng_speakers) { .n = 0 };
        ck_assert_str_eq(ng_segment_speakers_text(&seg, buf, sizeof(buf)), "root (its owner is unknown)");

        pid_t pids[] = { 11, 12, 13, 14, 15 };
        seg.untrusted = pids;
        static const char *const want[] = { "", "pid 11", "pids 11 and 12", "pids 11, 12 and 13",
                                            "pids 11, 12, 13 and 1 more", "pids 11, 12, 13 and 2 more" };
        for (size_t k = 0; k < ELEMENTSOF(want); k++) {
                seg.n_untrusted = k;
                ck_assert_str_eq(ng_segment_untrusted_text(&seg, buf, sizeof(buf)), want[k]);
        }
        /* cut short, never past the buffer */
        seg.n_untrusted = 5;
        ck_assert_str_eq(ng_segment_untrusted_text(&seg, buf, 12), "pids 11, 12");
}
END_TEST

/* ---- a collection from a tree, its status edited while it runs ---- */

struct edit {
        char tree[PATH_MAX];
        unsigned calls, at;     /* reads for pid 179 so far; edit before read number at (0: never) */
};

static void edit_status(void *userdata, pid_t pid)
{
        struct edit *e = userdata;
        if (pid != 179 || ++e->calls != e->at)
                return;
        char path[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/proc/179/status", e->tree);
        char *text = ng_test_read(path, NULL), *uid = strstr(text, "\nUid:\t0\t0\t0\t0\n");
        ck_assert_ptr_nonnull(uid);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%.*s\nUid:\t%u\t%u\t%u\t%u\n%s", (int) (uid - text), text, USER, USER, USER, USER,
                uid + strlen("\nUid:\t0\t0\t0\t0\n"));
        ck_assert_int_eq(fclose(f), 0);
        free(text);
}

/* guest4-v2's shmid 0, all 8 MiB on node 3 in the numa_maps of pid 179
 * (root's); its child 181 maps it without a page. */
static const struct ng_segment *shmid0(const struct ng_segment *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].kind == NG_SEG_SYSV && v[i].shmid == 0)
                        return &v[i];
        ck_abort_msg("no shmid 0");
        return NULL;
}

static void collect(struct edit *e, struct ng_segment **v, size_t *n)
{
        struct ng_path *p;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        struct ng_snapshot *s;
        o.progress = edit_status;
        o.progress_data = e;
        e->calls = 0;
        ck_assert_int_eq(ng_path_new(e->tree, &p), 0);
        ck_assert_int_eq(ng_snapshot_collect(p, &o, &s), 0);
        ck_assert_int_eq(ng_segments_build(s, v, n), 0);
        ng_snapshot_free(s);
        ng_path_free(p);
}

/* A process's status is read before its maps, its page tables later: one
 * of root's that another user comes to drive in between (its uids dropped
 * to the user's) would speak with what its first status said. Its uids
 * are read again after its page tables: then it speaks for nothing of
 * root's. */
START_TEST(uids_read_again_after_the_page_tables)
{
        struct edit e = { 0 };
        char dir[] = "/tmp/ng-test-speakers.XXXXXX", cmd[PATH_MAX * 2];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(e.tree, sizeof(e.tree), "%s/t", dir);
        snprintf(cmd, sizeof(cmd), "cp -a " NG_FIXTURES "/trees/guest4-v2 %s", e.tree);
        ck_assert_int_eq(system(cmd), 0);

        struct ng_segment *v;
        size_t n;
        collect(&e, &v, &n);
        const struct ng_segment *seg = shmid0(v, n);
        ck_assert_int_eq(seg->rep_pid, 179);
        ck_assert_uint_eq(ng_segment_node_bytes(seg, 3), 8 * MiB);
        ck_assert_uint_eq(seg->n_untrusted, 0);
        unsigned last = e.calls;       /* the last read of pid 179's files: its status again */
        ck_assert_uint_gt(last, 3);
        ng_segments_free(v, n);

        e.at = last;
        collect(&e, &v, &n);
        seg = shmid0(v, n);
        ck_assert_uint_eq(e.calls, last);
        ck_assert_uint_eq(seg->n_untrusted, 1);
        ck_assert_int_eq(seg->untrusted[0], 179);
        ck_assert_int_ne(seg->rep_pid, 179);
        ck_assert_uint_eq(ng_segment_node_bytes(seg, 3), 0);
        ck_assert_int_eq(seg->placement_source, NG_SOURCE_NONE);
        ng_segments_free(v, n);

        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("speakers");
        TCase *tc = tcase_create("speakers");
        tcase_add_test(tc, root_and_the_owners_speak);
        tcase_add_test(tc, owners_from_sysvipc_and_the_files);
        tcase_add_test(tc, status_without_uid_is_unknown);
        tcase_add_test(tc, root_attacher_speaks_not_the_user);
        tcase_add_test(tc, user_alone_leaves_the_placement_unknown);
        tcase_add_test(tc, speakers_and_attachers_said);
        tcase_add_test(tc, uids_read_again_after_the_page_tables);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

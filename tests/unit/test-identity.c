/* A segment's identity (docs/ARCHITECTURE.md, "Namespaces"): a file is its
 * device and inode, a SysV segment its IPC namespace and shmid. Two files
 * of one name in two mount namespaces, and two segments of one shmid in
 * two IPC namespaces, are two segments, each with its own attachers, size
 * and orphan state. */

#include "snapshot-builder.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "parse.h"
#include "ng-segments.h"

#define MiB (UINT64_C(1) << 20)
#define HOST_IPC UINT64_C(4026531839)
#define HOST_MNT UINT64_C(4026531841)
#define CTR_IPC UINT64_C(4026532301)
#define CTR_MNT UINT64_C(4026532299)

static void snap_file(struct ng_snapshot *s, const char *path, unsigned minor, uint64_t inode, uint64_t bytes,
                      uint64_t mnt_ns, pid_t ns_pid)
{
        s->files = realloc(s->files, (s->n_files + 1) * sizeof(*s->files));
        ck_assert_ptr_nonnull(s->files);
        s->files[s->n_files++] = (struct ng_shm_file) {
                .path = strdup(path), .kind = NG_SHM_FILE_TMPFS, .size_bytes = bytes, .page_kib = 4,
                .dev_minor = minor, .inode = inode, .allocated_bytes = bytes, .mnt_ns = mnt_ns, .ns_pid = ns_pid };
}

static void map_file(struct ng_proc *pr, const char *path, unsigned minor, uint64_t inode, uint64_t start,
                     uint64_t bytes)
{
        pr->maps = realloc(pr->maps, (pr->n_maps + 1) * sizeof(*pr->maps));
        ck_assert_ptr_nonnull(pr->maps);
        pr->maps[pr->n_maps++] = (struct ng_map) {
                .start = start, .end = start + bytes, .read = true, .write = true, .shared = true,
                .dev_minor = minor, .inode = inode, .path = strdup(path), .kind = NG_MAP_FILE_SHARED };
}

static struct ng_proc *proc_in(struct ng_snapshot *s, pid_t pid, const char *comm, uint64_t ipc, uint64_t mnt)
{
        struct ng_proc *pr = snap_proc(s, pid, 1, comm, "0-1", "0-1");
        pr->ipc_ns = ipc;
        pr->mnt_ns = mnt;
        return pr;
}

static const struct ng_segment *find(const struct ng_segment *v, size_t n, enum ng_seg_kind kind, const char *name,
                                     uint64_t ns)
{
        const struct ng_segment *hit = NULL;
        for (size_t i = 0; i < n; i++)
                if (v[i].kind == kind && !strcmp(v[i].name, name) &&
                    (kind == NG_SEG_SYSV ? v[i].ipc_ns : v[i].mnt_ns) == ns) {
                        ck_assert_ptr_null(hit);
                        hit = &v[i];
                }
        ck_assert_msg(hit != NULL, "no segment %s in namespace %llu", name, (unsigned long long) ns);
        return hit;
}

/* The host's /dev/shm is tmpfs 0:25, the container's 0:80; tmpfs numbers
 * inodes per instance, so both files may have the same inode too. */
static struct ng_snapshot *files_snap(bool tree)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 1 << 20);
        s->ipc_ns = HOST_IPC;
        s->mnt_ns = HOST_MNT;
        uint64_t ino = tree ? 0 : 11, ino2 = tree ? 0 : 12;
        snap_file(s, "/dev/shm/PostgreSQL.1", 25, ino, 4 * MiB, HOST_MNT, 0);
        snap_file(s, "/dev/shm/PostgreSQL.2", 25, ino2, 2 * MiB, HOST_MNT, 0);
        snap_file(s, "/dev/shm/PostgreSQL.1", 80, ino, 8 * MiB, CTR_MNT, 300);
        snap_file(s, "/dev/shm/PostgreSQL.2", 80, ino2, 6 * MiB, CTR_MNT, 300);
        struct ng_proc *h = proc_in(s, 10, "postgres", HOST_IPC, HOST_MNT);
        map_file(h, "/dev/shm/PostgreSQL.1", 25, 11, 0x7f0000000000, 4 * MiB);
        for (pid_t pid = 300; pid <= 301; pid++) {
                struct ng_proc *c = proc_in(s, pid, "postgres", CTR_IPC, CTR_MNT);
                map_file(c, "/dev/shm/PostgreSQL.1", 80, 11, 0x7f1000000000, 8 * MiB);
                map_file(c, "/dev/shm/PostgreSQL.2", 80, 12, 0x7f2000000000, 6 * MiB);
        }
        return s;
}

static void check_files(bool tree)
{
        struct ng_snapshot *s = files_snap(tree);
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(n, 4);
        const struct ng_segment *h1 = find(v, n, NG_SEG_FILE, "/dev/shm/PostgreSQL.1", HOST_MNT);
        const struct ng_segment *c1 = find(v, n, NG_SEG_FILE, "/dev/shm/PostgreSQL.1", CTR_MNT);
        const struct ng_segment *h2 = find(v, n, NG_SEG_FILE, "/dev/shm/PostgreSQL.2", HOST_MNT);
        const struct ng_segment *c2 = find(v, n, NG_SEG_FILE, "/dev/shm/PostgreSQL.2", CTR_MNT);
        ck_assert_uint_eq(h1->bytes, 4 * MiB);
        ck_assert_uint_eq(h1->n_pids, 1);
        ck_assert_int_eq(h1->pids[0], 10);
        ck_assert(!h1->other_ns);
        ck_assert_uint_eq(c1->bytes, 8 * MiB);
        ck_assert_uint_eq(c1->n_pids, 2);
        ck_assert_int_eq(c1->pids[0], 300);
        ck_assert_int_eq(c1->pids[1], 301);
        ck_assert(c1->other_ns);
        /* the host's PostgreSQL.2 is an orphan, the container's is not */
        ck_assert_uint_eq(h2->n_pids, 0);
        ck_assert_uint_eq(c2->n_pids, 2);
        char label[600];
        ck_assert_str_eq(ng_segment_label(c2, label, sizeof(label)),
                         "/dev/shm/PostgreSQL.2 in mount namespace 4026532299");
        ck_assert_str_eq(ng_segment_label(h2, label, sizeof(label)), "/dev/shm/PostgreSQL.2");
        ng_segments_free(v, n);

        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_new_default(&cfg), 0);
        cfg->min_segment_size_bytes = MiB;
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        size_t orphans = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_ORPHAN_SEGMENT) {
                        orphans++;
                        ck_assert_str_eq(a->findings[i].segment, "/dev/shm/PostgreSQL.2");
                }
        ck_assert_uint_eq(orphans, 1);
        ng_audit_free(a);
        ng_config_free(cfg);
        ng_snapshot_free(s);
}

START_TEST(same_name_in_two_mount_namespaces)
{
        check_files(false);
}
END_TEST

/* A captured tree holds copies, whose inodes are not the host's (0): the
 * device, the mount namespace and the path still tell the files apart. */
START_TEST(same_name_in_two_mount_namespaces_in_a_tree)
{
        check_files(true);
}
END_TEST

static void snap_shm_in(struct ng_snapshot *s, int32_t shmid, uint64_t bytes, uint64_t nattch, uint64_t ipc_ns)
{
        snap_shm(s, shmid, bytes, nattch, 0);
        s->shm[s->n_shm - 1].ipc_ns = ipc_ns;
}

/* Both namespaces hand out shmids from 0: shmid 0 here and there. */
static struct ng_snapshot *sysv_snap(void)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 1 << 20);
        s->ipc_ns = HOST_IPC;
        s->mnt_ns = HOST_MNT;
        snap_shm_in(s, 0, 4 * MiB, 1, HOST_IPC);
        snap_shm_in(s, 1, 2 * MiB, 0, HOST_IPC);
        snap_shm_in(s, 0, 16 * MiB, 2, CTR_IPC);
        snap_shm_in(s, 1, 2 * MiB, 1, CTR_IPC);
        snap_map_sysv(proc_in(s, 10, "ora_pmon_HOST", HOST_IPC, HOST_MNT), 0, 0x7f0000000000, 4 * MiB, 4, NULL, 0);
        for (pid_t pid = 300; pid <= 301; pid++)
                snap_map_sysv(proc_in(s, pid, pid == 300 ? "ora_pmon_CTR" : "ora_dbw0_CTR", CTR_IPC, CTR_MNT), 0,
                              0x7f1000000000, 16 * MiB, 4, NULL, 0);
        snap_map_sysv(s->procs[1], 1, 0x7f2000000000, 2 * MiB, 4, NULL, 0);
        return s;
}

START_TEST(same_shmid_in_two_ipc_namespaces)
{
        struct ng_snapshot *s = sysv_snap();
        /* tier 1 asked the container's shmid 0 itself: 16 MiB, all on node 1 */
        s->placement = NG_PLACEMENT_SAMPLED;
        s->samples = xcalloc(1, sizeof(*s->samples));
        s->samples[0] = (struct ng_sample) { .pid = 300, .len = 16 * MiB, .asked = 64, .present = 64, .whole = true,
                                             .sysv = true, .dev_minor = 1, .inode = 0, .ipc_ns = CTR_IPC };
        s->samples[0].np = xcalloc(1, sizeof(struct ng_node_pages));
        s->samples[0].np[0] = (struct ng_node_pages) { 1, 64 };
        s->samples[0].n_np = 1;
        s->n_samples = 1;
        struct ng_segment *v;
        size_t n;
        ck_assert_int_eq(ng_segments_build(s, &v, &n), 0);
        ck_assert_uint_eq(n, 4);
        const struct ng_segment *h = find(v, n, NG_SEG_SYSV, "SYSV00001000", HOST_IPC);
        const struct ng_segment *c = find(v, n, NG_SEG_SYSV, "SYSV00001000", CTR_IPC);
        ck_assert_uint_eq(h->bytes, 4 * MiB);
        ck_assert_uint_eq(h->n_pids, 1);
        ck_assert_int_eq(h->pids[0], 10);
        ck_assert_uint_eq(c->bytes, 16 * MiB);
        ck_assert_uint_eq(c->n_pids, 2);
        ck_assert_int_eq(c->pids[0], 300);
        ck_assert_int_eq(c->placement_source, NG_SOURCE_SEGMENT);
        ck_assert_uint_eq(ng_segment_node_bytes(c, 1), c->resident_bytes);
        ck_assert_int_ne(h->placement_source, NG_SOURCE_SEGMENT);      /* the sample is not the host's */
        ck_assert_ptr_null(ng_snapshot_whole_sample(s, true, 0, 1, 0));
        ck_assert_ptr_nonnull(ng_snapshot_whole_sample_ns(s, true, CTR_IPC, 0, 1, 0));
        char label[128];
        ck_assert_str_eq(ng_segment_label(c, label, sizeof(label)),
                         "shmid 0 (key 0x00001000) in IPC namespace 4026532301");
        ng_segments_free(v, n);

        /* shmid 1 has no attacher on the host, one in the container */
        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_new_default(&cfg), 0);
        cfg->min_segment_size_bytes = MiB;
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        size_t orphans = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_ORPHAN_SEGMENT) {
                        orphans++;
                        ck_assert_str_eq(a->findings[i].segment, "shmid 1 (key 0x00001001)");
                }
        ck_assert_uint_eq(orphans, 1);
        ng_audit_free(a);
        ng_config_free(cfg);
        ng_snapshot_free(s);
}
END_TEST

/* A process whose namespace could not be read counts as numaguard's. */
START_TEST(namespace_link_text)
{
        uint64_t ino = 0;
        ck_assert_int_eq(ng_parse_ns_link("ipc:[4026531839]", "ipc", &ino), 0);
        ck_assert_uint_eq(ino, HOST_IPC);
        ck_assert_int_eq(ng_parse_ns_link("mnt:[4026532299]\n", "mnt", &ino), 0);
        ck_assert_uint_eq(ino, CTR_MNT);
        ck_assert_int_eq(ng_parse_ns_link("mnt:[4026532299]", "ipc", &ino), -EINVAL);
        ck_assert_int_eq(ng_parse_ns_link("ipc:[]", "ipc", &ino), -EINVAL);
        ck_assert_int_eq(ng_parse_ns_link("ipc:[12]x", "ipc", &ino), -EINVAL);
        ck_assert_int_eq(ng_parse_ns_link("ipc:[0]", "ipc", &ino), -EINVAL);
        ck_assert_int_eq(ng_parse_ns_link("", "ipc", &ino), -EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("identity");
        TCase *tc = tcase_create("identity");
        tcase_add_test(tc, same_name_in_two_mount_namespaces);
        tcase_add_test(tc, same_name_in_two_mount_namespaces_in_a_tree);
        tcase_add_test(tc, same_shmid_in_two_ipc_namespaces);
        tcase_add_test(tc, namespace_link_text);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* Unit tests for the mountinfo parser and cgroup numa_stat (v1, v2,
 * hugetlb) against text from 4-node guests and the build host. */

#include "parse.h"
#include "ng-test.h"

#define FX "tests/fixtures/text/"

static const struct ng_mount *mount_at(const struct ng_mount *m, size_t n, const char *mountpoint)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(m[i].mountpoint, mountpoint) == 0)
                        return &m[i];
        ck_abort_msg("no mount at %s", mountpoint);
        return NULL;
}

static const struct ng_numa_stat_line *stat_key(const struct ng_numa_stat_line *l, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(l[i].key, key) == 0)
                        return &l[i];
        ck_abort_msg("no numa_stat line %s", key);
        return NULL;
}

START_TEST(test_mountinfo_v2)
{
        char *buf = ng_test_read(FX "guest4-mountinfo", NULL);
        struct ng_mount *m = NULL;
        const struct ng_mount *x;
        char val[32];
        size_t n = 0;

        ck_assert_int_eq(ng_parse_mountinfo(buf, &m, &n), 0);
        ck_assert_uint_eq(n, 15);
        ck_assert_int_eq(m[0].id, 25);
        ck_assert_int_eq(m[0].parent_id, 38);

        x = mount_at(m, n, "/sys/fs/cgroup");
        ck_assert_str_eq(x->fstype, "cgroup2");
        ck_assert(ng_mount_has_option(x, "nsdelegate"));
        ck_assert(ng_mount_has_option(x, "relatime"));
        ck_assert(!ng_mount_has_option(x, "cpuset"));
        ck_assert_uint_eq(x->major, 0);
        ck_assert_uint_eq(x->minor, 34);

        x = mount_at(m, n, "/tmp/huge 2M");     /* \040 in the mount point */
        ck_assert_str_eq(x->fstype, "hugetlbfs");
        ck_assert_str_eq(x->source, "none");
        ck_assert_str_eq(x->root, "/");
        ck_assert_int_eq(ng_mount_option_value(x, "pagesize", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "2M");
        ck_assert_int_eq(ng_mount_option_value(x, "min_size", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "4194304");
        ck_assert_int_eq(ng_mount_option_value(x, "mpol", val, sizeof(val)), -ENOENT);
        ck_assert_int_eq(ng_mount_option_value(x, "pagesize", val, 2), -ENOBUFS);

        x = mount_at(m, n, "/tmp/ngtmpfs");
        ck_assert_str_eq(x->fstype, "tmpfs");
        ck_assert_int_eq(ng_mount_option_value(x, "mpol", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "interleave:0-3");
        ck_assert_int_eq(ng_mount_option_value(x, "size", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "65536k");

        x = mount_at(m, n, "/dev/hugepages");
        ck_assert_int_eq(ng_mount_option_value(x, "pagesize", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "2M");
        x = mount_at(m, n, "/dev/shm");
        ck_assert(ng_mount_has_option(x, "nosuid") && ng_mount_has_option(x, "inode64"));
        ng_mounts_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_mountinfo_v1)
{
        char *buf = ng_test_read(FX "guest4v1-mountinfo", NULL);
        struct ng_mount *m = NULL;
        const struct ng_mount *x;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_mountinfo(buf, &m, &n), 0);
        ck_assert_uint_eq(n, 24);
        x = mount_at(m, n, "/sys/fs/cgroup/cpuset");
        ck_assert_str_eq(x->fstype, "cgroup");
        ck_assert(ng_mount_has_option(x, "cpuset"));
        ck_assert(!ng_mount_has_option(x, "cpu"));
        x = mount_at(m, n, "/sys/fs/cgroup/cpu,cpuacct");
        ck_assert(ng_mount_has_option(x, "cpu"));
        ck_assert(ng_mount_has_option(x, "cpuacct"));
        x = mount_at(m, n, "/sys/fs/cgroup/hugetlb");
        ck_assert(ng_mount_has_option(x, "hugetlb"));
        ng_mounts_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_mountinfo_host_hybrid)
{
        char *buf = ng_test_read(FX "host-mountinfo", NULL);
        struct ng_mount *m = NULL;
        const struct ng_mount *x;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_mountinfo(buf, &m, &n), 0);
        ck_assert_uint_eq(n, 20);
        x = mount_at(m, n, "/sys/fs/cgroup/unified");
        ck_assert_str_eq(x->fstype, "cgroup2");
        x = mount_at(m, n, "/sys/fs/cgroup/systemd");
        ck_assert(ng_mount_has_option(x, "name=systemd"));
        x = mount_at(m, n, "/");
        ck_assert_str_eq(x->source, "/dev/vda");
        ck_assert_uint_eq(x->major, 254);
        ng_mounts_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_mountinfo_edge)
{
        /* optional fields, an escaped comma in an option value, an empty
         * source (two blanks), nsfs root, a tab in a name; then junk */
        const char *text =
                "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue\n"
                "37 35 0:50 / /m\\011t rw - tmpfs my\\040src rw,x=a\\054b\n"
                "38 35 0:51 / /e rw - fuse  rw\n"
                "39 35 0:4 net:[4026532239] /run/netns/a rw - nsfs nsfs rw\n"
                "40 35 0:52 / /no-separator rw ext4 /dev/x rw\n"
                "41 35 0:52 / /extra rw - ext4 /dev/x rw extra\n"
                "x 35 0:52 / /badid rw - ext4 /dev/x rw\n"
                "42 35 0:52:1 / /baddev rw - ext4 /dev/x rw\n"
                "43 35 0:52 / relative rw - ext4 /dev/x rw\n"
                "44 35 99999999999:0 / /bigdev rw - ext4 /dev/x rw\n"
                "45 35 0:52 / /nofstype rw -  /dev/x rw\n"
                "\x01\xff - \x02\n"
                "46 35 0:53 / /last rw - xfs /dev/y rw";
        struct ng_mount *m = (void *)0x1;
        char val[16];
        size_t n = 9;

        ck_assert_int_eq(ng_parse_mountinfo("", &m, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(m);
        ck_assert_int_eq(ng_parse_mountinfo(text, &m, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_str_eq(m[0].root, "/mnt1");
        ck_assert_str_eq(m[0].mountpoint, "/mnt2");
        ck_assert_str_eq(m[0].fstype, "ext3");
        ck_assert_str_eq(m[0].super_options, "rw,errors=continue");
        ck_assert_int_eq(ng_mount_option_value(&m[0], "errors", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "continue");
        ck_assert(ng_mount_has_option(&m[0], "noatime"));
        ck_assert(!ng_mount_has_option(&m[0], "master:1"));
        ck_assert_str_eq(m[1].mountpoint, "/m\tt");
        ck_assert_str_eq(m[1].source, "my src");
        ck_assert_int_eq(ng_mount_option_value(&m[1], "x", val, sizeof(val)), 0);
        ck_assert_str_eq(val, "a,b");
        ck_assert_str_eq(m[2].source, "");
        ck_assert_str_eq(m[2].fstype, "fuse");
        ck_assert_str_eq(m[3].root, "net:[4026532239]");
        ck_assert_str_eq(m[4].mountpoint, "/last");
        ck_assert(!ng_mount_has_option(&m[4], ""));
        ck_assert_int_eq(ng_mount_option_value(&m[4], "", val, sizeof(val)), -ENOENT);
        ng_mounts_free(m, n);
        ng_mounts_free(NULL, 0);
}
END_TEST

/* ---- numa_stat ---- */

START_TEST(test_numa_stat_v2)
{
        char *buf = ng_test_read(FX "guest4-cgroup-v2-memory.numa_stat", NULL);
        struct ng_numa_stat_line *l = NULL;
        const struct ng_numa_stat_line *x;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_numa_stat(buf, &l, &n), 0);
        ck_assert_uint_eq(n, 27);
        x = stat_key(l, n, "anon");
        ck_assert(!x->has_total);
        ck_assert_uint_eq(x->n_np, 4);
        ck_assert_int_eq(x->np[1].node, 1);
        ck_assert_uint_eq(x->np[1].pages, 9691136);    /* bytes on v2 */
        ck_assert_uint_eq(x->np[2].pages, 4231168);
        x = stat_key(l, n, "shmem");
        ck_assert_uint_eq(x->np[3].pages, 7340032);
        x = stat_key(l, n, "workingset_nodereclaim");
        ck_assert_uint_eq(x->np[0].pages, 0);
        ng_numa_stat_free(l, n);
        free(buf);
}
END_TEST

START_TEST(test_numa_stat_v1)
{
        char *buf = ng_test_read(FX "guest4v1-cgroup-v1-memory.numa_stat", NULL);
        struct ng_numa_stat_line *l = NULL;
        const struct ng_numa_stat_line *x;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_numa_stat(buf, &l, &n), 0);
        ck_assert_uint_eq(n, 8);
        ck_assert_str_eq(l[0].key, "total");
        ck_assert(l[0].has_total);
        ck_assert_uint_eq(l[0].total, 12432);
        ck_assert_uint_eq(l[0].np[2].pages, 5435);
        x = stat_key(l, n, "hierarchical_anon");
        ck_assert_uint_eq(x->total, 12350);
        ck_assert_uint_eq(x->np[3].pages, 2811);
        ng_numa_stat_free(l, n);
        free(buf);
}
END_TEST

START_TEST(test_numa_stat_hugetlb)
{
        char *buf = ng_test_read(FX "guest4v1-cgroup-v1-hugetlb.2MB.numa_stat", NULL);
        struct ng_numa_stat_line *l = NULL;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_numa_stat(buf, &l, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(l[1].key, "hierarchical_total");
        ck_assert_uint_eq(l[1].total, 16777216);
        ck_assert_uint_eq(l[1].np[1].pages, 10485760);
        ng_numa_stat_free(l, n);
        free(buf);
        buf = ng_test_read(FX "guest4-cgroup-v2-hugetlb.2MB.numa_stat", NULL);
        ck_assert_int_eq(ng_parse_numa_stat(buf, &l, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(l[0].total, 16777216);
        ck_assert_uint_eq(l[0].np[0].pages, 6291456);
        ng_numa_stat_free(l, n);
        free(buf);
}
END_TEST

START_TEST(test_numa_stat_edge)
{
        const char *text =
                "N0=5 N1=6\n"
                "total=x N0=1\n"
                "total=99999999999999999999 N0=1\n"
                "anon N0=1 junk\n"
                "anon N0=1 N1\n"
                "anon N99999=1\n"
                "averyveryveryverylongkeythatdoesnotfitinfortyeightbytes N0=1\n"
                "\x01\x02\xff\n"
                "file\n"
                "anon N0=1 N1=18446744073709551615";
        struct ng_numa_stat_line *l = (void *)0x1;
        size_t n = 4;

        ck_assert_int_eq(ng_parse_numa_stat("", &l, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(l);
        ck_assert_int_eq(ng_parse_numa_stat(text, &l, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(l[0].key, "file");             /* a key without nodes */
        ck_assert_uint_eq(l[0].n_np, 0);
        ck_assert_str_eq(l[1].key, "anon");
        ck_assert(l[1].np[1].pages == UINT64_MAX);
        ng_numa_stat_free(l, n);
        ng_numa_stat_free(NULL, 0);
}
END_TEST

static Suite *mountinfo_suite(void)
{
        Suite *s = suite_create("parse-mountinfo");
        TCase *tc = tcase_create("mountinfo");

        tcase_add_test(tc, test_mountinfo_v2);
        tcase_add_test(tc, test_mountinfo_v1);
        tcase_add_test(tc, test_mountinfo_host_hybrid);
        tcase_add_test(tc, test_mountinfo_edge);
        suite_add_tcase(s, tc);
        tc = tcase_create("numa_stat");
        tcase_add_test(tc, test_numa_stat_v2);
        tcase_add_test(tc, test_numa_stat_v1);
        tcase_add_test(tc, test_numa_stat_hugetlb);
        tcase_add_test(tc, test_numa_stat_edge);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(mountinfo_suite());
}

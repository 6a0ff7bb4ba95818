/* Unit tests for lib/1-collect/kernel-text/parse.c and the /proc parsers of
 * lib/1-collect/kernel-text/parse-proc.c and parse-sysvipc.c (sysvipc/shm,
 * stat, status, cmdline, cgroup) against real kernel text captured in
 * tests/fixtures/text (see its README). */

#include <limits.h>

#include "parse.h"
#include "ng-test.h"
#include "util.h"

#define FX "tests/fixtures/text/"

/* ---- helpers ---- */

START_TEST(test_u64)
{
        const char *s = "  42 rest", *bad = "x1";
        uint64_t v = 7;

        ck_assert_int_eq(ng_parse_u64(&s, &v), 0);
        ck_assert_uint_eq(v, 42);
        ck_assert_str_eq(s, " rest");
        ck_assert_int_eq(ng_parse_u64(&bad, &v), -EINVAL);
        ck_assert_str_eq(bad, "x1");
        ck_assert_uint_eq(v, 42);
        s = "18446744073709551615";
        ck_assert_int_eq(ng_parse_u64(&s, &v), 0);
        ck_assert(v == UINT64_MAX);
        s = "18446744073709551616";
        ck_assert_int_eq(ng_parse_u64(&s, &v), -ERANGE);
        s = "99999999999999999999999999";
        ck_assert_int_eq(ng_parse_u64(&s, &v), -ERANGE);
        ck_assert(v == UINT64_MAX);
        s = "";
        ck_assert_int_eq(ng_parse_u64(&s, &v), -EINVAL);
        s = "-1";
        ck_assert_int_eq(ng_parse_u64(&s, &v), -EINVAL);
}
END_TEST

START_TEST(test_u64_full)
{
        uint64_t v = 3;

        ck_assert_int_eq(ng_parse_u64_full("2048\n", &v), 0);
        ck_assert_uint_eq(v, 2048);
        ck_assert_int_eq(ng_parse_u64_full("16", &v), 0);
        ck_assert_uint_eq(v, 16);
        ck_assert_int_eq(ng_parse_u64_full("16 kB", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_u64_full("", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_u64_full("\n", &v), -EINVAL);
        ck_assert_int_eq(ng_parse_u64_full("1\0002", &v), 0);
        ck_assert_int_eq(ng_parse_u64_full("36893488147419103232", &v), -ERANGE);
        ck_assert_uint_eq(v, 1);
}
END_TEST

START_TEST(test_u64_row)
{
        char *buf = ng_test_read(FX "guest4-node0-distance", NULL);
        uint64_t row[8] = { 99, 99, 99, 99, 99, 99, 99, 99 };
        size_t n = 0;

        ck_assert_int_eq(ng_parse_u64_row(buf, row, 8, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(row[0], 10);
        ck_assert_uint_eq(row[1], 21);
        ck_assert_uint_eq(row[3], 21);
        ck_assert_uint_eq(row[4], 99);
        free(buf);

        /* too many for the array: nothing written */
        row[0] = 7;
        ck_assert_int_eq(ng_parse_u64_row("10 21 21 21\n", row, 3, &n), -E2BIG);
        ck_assert_uint_eq(row[0], 7);
        ck_assert_int_eq(ng_parse_u64_row("10 2x 21", row, 8, &n), -EINVAL);
        ck_assert_int_eq(ng_parse_u64_row("10 -1", row, 8, &n), -EINVAL);
        ck_assert_int_eq(ng_parse_u64_row("", row, 8, &n), -EINVAL);
        ck_assert_int_eq(ng_parse_u64_row("10 99999999999999999999", row, 8, &n), -ERANGE);
        ck_assert_uint_eq(row[0], 7);
        ck_assert_uint_eq(n, 4);
        ck_assert_int_eq(ng_parse_u64_row("10", row, 8, &n), 0);
        ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_hugepages_dirname)
{
        uint64_t kib = 5;

        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-2048kB", &kib), 0);
        ck_assert_uint_eq(kib, 2048);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-1048576kB", &kib), 0);
        ck_assert_uint_eq(kib, 1048576);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-2048", &kib), -EINVAL);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-kB", &kib), -EINVAL);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages- 2048kB", &kib), -EINVAL);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-2048kBx", &kib), -EINVAL);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-0kB", &kib), -EINVAL);
        ck_assert_int_eq(ng_parse_hugepages_dirname("nr_hugepages", &kib), -EINVAL);
        ck_assert_int_eq(ng_parse_hugepages_dirname("hugepages-99999999999999999999kB", &kib), -EINVAL);
        ck_assert_uint_eq(kib, 1048576);
}
END_TEST

START_TEST(test_bracketed)
{
        char *buf = ng_test_read(FX "guest4-thp-enabled", NULL);
        char out[16] = "unchanged";

        ck_assert_int_eq(ng_parse_bracketed_choice(buf, out, sizeof(out)), 0);
        ck_assert_str_eq(out, "always");
        free(buf);
        buf = ng_test_read(FX "host-thp-enabled", NULL);
        ck_assert_int_eq(ng_parse_bracketed_choice(buf, out, sizeof(out)), 0);
        ck_assert_str_eq(out, "madvise");
        free(buf);
        ck_assert_int_eq(ng_parse_bracketed_choice("always [madvise] never", out, 7), -ENOBUFS);
        ck_assert_int_eq(ng_parse_bracketed_choice("always madvise never", out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(ng_parse_bracketed_choice("always [madvise", out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(ng_parse_bracketed_choice("[]", out, sizeof(out)), -EINVAL);
        ck_assert_str_eq(out, "madvise");
}
END_TEST

START_TEST(test_unescape)
{
        char a[] = "/dev/shm/ng\\040granule\\0401", b[] = "x\\012y\\011z\\075\\134",
             c[] = "keep\\09\\04\\", d[] = "\\000stay\\777", e[] = "";

        ng_unescape_octal(a);
        ck_assert_str_eq(a, "/dev/shm/ng granule 1");
        ng_unescape_octal(b);
        ck_assert_str_eq(b, "x\ny\tz=\\");
        ng_unescape_octal(c);
        ck_assert_str_eq(c, "keep\\09\\04\\");
        ng_unescape_octal(d);
        ck_assert_str_eq(d, "\\000stay\\777");
        ng_unescape_octal(e);
        ck_assert_str_eq(e, "");
        ng_unescape_octal(NULL);
}
END_TEST

/* A line of a snapshot's record of a /dev/shm mount's files: the name
 * decoded, sizes up to what stat(2) can say (2^63-1), nothing else. */
START_TEST(test_shm_file_line)
{
        struct ng_shm_file_line l;
        char a[] = "54321 9223372036854775807 4096 /dev/shm/new\\x0aline \\\\ \\xff";
        ck_assert_int_eq(ng_parse_shm_file_line(a, &l), 0);
        ck_assert_uint_eq(l.uid, 54321);
        ck_assert_uint_eq(l.size_bytes, INT64_MAX);
        ck_assert_uint_eq(l.allocated_bytes, 4096);
        ck_assert_str_eq(l.path, "/dev/shm/new\nline \\ \xff");
        char b[] = "0 0 0 /";
        ck_assert_int_eq(ng_parse_shm_file_line(b, &l), 0);
        ck_assert_str_eq(l.path, "/");
        static const char *const bad[] = {
                "", "0 0 0", "0 0 0 ", "0 0 0 relative", "0 0 /dev/shm/x", "-1 0 0 /x", "4294967296 0 0 /x",
                "0 9223372036854775808 0 /x", "0 0 9223372036854775808 /x", "0  0 0 /x", "0 0 0  /x",
                "0 +1 0 /x", "0 0 0 /x\\", "0 0 0 /x\\x00", "0 0 0 /x\\q", "x 0 0 /x",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char buf[64];
                snprintf(buf, sizeof(buf), "%s", bad[i]);
                ck_assert_msg(ng_parse_shm_file_line(buf, &l) == -EINVAL, "'%s' parsed", bad[i]);
        }
}
END_TEST

/* ---- meminfo ---- */

START_TEST(test_meminfo_host)
{
        char *buf = ng_test_read(FX "host-meminfo", NULL);
        struct ng_meminfo *m = calloc(1, sizeof(*m));
        uint64_t v = 0;

        ck_assert_int_eq(ng_parse_meminfo(buf, m), 0);
        ck_assert_uint_eq(m->n, 54);
        ck_assert_uint_eq(ng_meminfo_value(m, "MemTotal"), 24684084);
        ck_assert_uint_eq(ng_meminfo_value(m, "Shmem"), 36520);
        ck_assert_int_eq(ng_meminfo_get(m, "HugePages_Total", &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_uint_eq(ng_meminfo_value(m, "Hugepagesize"), 2048);
        ck_assert_int_eq(ng_meminfo_get(m, "NoSuchKey", &v), -ENOENT);
        ck_assert_uint_eq(ng_meminfo_value(m, "NoSuchKey"), 0);
        for (size_t i = 0; i < m->n; i++)
                if (strcmp(m->f[i].key, "HugePages_Total") == 0)
                        ck_assert(!m->f[i].kib);
                else if (strcmp(m->f[i].key, "Active(anon)") == 0)
                        ck_assert(m->f[i].kib);
        free(m);
        free(buf);
}
END_TEST

START_TEST(test_meminfo_node)
{
        char *buf = ng_test_read(FX "guest4v1-node2-meminfo", NULL);
        struct ng_meminfo *m = calloc(1, sizeof(*m));

        ck_assert_int_eq(ng_parse_meminfo(buf, m), 0);
        ck_assert_uint_eq(m->n, 36);
        ck_assert_str_eq(m->f[0].key, "MemTotal");
        ck_assert_uint_eq(m->f[0].value, 1031768);
        ck_assert(m->f[0].kib);
        ck_assert_uint_eq(ng_meminfo_value(m, "Shmem"), 16388);
        ck_assert_uint_eq(ng_meminfo_value(m, "HugePages_Total"), 16);
        ck_assert_uint_eq(ng_meminfo_value(m, "PageTables"), 200);
        free(buf);
        buf = ng_test_read(FX "host-node0-meminfo", NULL);
        ck_assert_int_eq(ng_parse_meminfo(buf, m), 0);
        ck_assert_uint_eq(ng_meminfo_value(m, "MemTotal"), 5335244);
        free(m);
        free(buf);
}
END_TEST

START_TEST(test_meminfo_malformed)
{
        struct ng_meminfo *m = calloc(1, sizeof(*m));
        const char *junk = "MemTotal 12 kB\n: 5 kB\nMemFree: x kB\nA B: 1 kB\n"
                           "Cached: 99999999999999999999999 kB\nShmem: 12 MB\n"
                           "Node x Dirty: 3 kB\nThisKeyIsFarTooLongForTheFixedKeyBufferX: 1\n"
                           "Buffers: 7 kB\nBuffers: 8 kB\nMlocked:\t5";

        m->n = 12345;
        ck_assert_int_eq(ng_parse_meminfo("", m), -EINVAL);
        ck_assert_int_eq(ng_parse_meminfo("garbage\n\x01\x02\xff\n", m), -EINVAL);
        ck_assert_uint_eq(m->n, 12345);
        ck_assert_int_eq(ng_parse_meminfo(junk, m), 0);
        ck_assert_uint_eq(m->n, 2);
        ck_assert_uint_eq(ng_meminfo_value(m, "Buffers"), 7);
        ck_assert_uint_eq(ng_meminfo_value(m, "Mlocked"), 5);   /* no trailing newline */
        ck_assert_int_eq(ng_meminfo_get(m, "Cached", NULL), -ENOENT);
        free(m);
}
END_TEST

START_TEST(test_meminfo_cap)
{
        struct ng_meminfo *m = calloc(1, sizeof(*m));
        size_t cap = 300 * 32;
        char *buf = malloc(cap), *p = buf;

        for (int i = 0; i < 300; i++)
                p += sprintf(p, "Key%d: %d kB\n", i, i);
        ck_assert_int_eq(ng_parse_meminfo(buf, m), 0);
        ck_assert_uint_eq(m->n, NG_MEMINFO_MAX_FIELDS);
        ck_assert_uint_eq(ng_meminfo_value(m, "Key127"), 127);
        ck_assert_int_eq(ng_meminfo_get(m, "Key128", NULL), -ENOENT);
        free(buf);
        free(m);
}
END_TEST

/* ---- /proc/sysvipc/shm ---- */

START_TEST(test_shm_guest)
{
        char *buf = ng_test_read(FX "guest4-sysvipc-shm", NULL);
        struct ng_shm_seg *s = NULL;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_sysvipc_shm(buf, &s, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_int_eq(s[0].key, 0x4e470001);
        ck_assert_int_eq(s[0].shmid, 0);
        ck_assert_uint_eq(s[0].perms, 0640);
        ck_assert_uint_eq(s[0].size_bytes, 8388608);
        ck_assert_int_eq(s[0].cpid, 177);
        ck_assert_int_eq(s[0].lpid, 177);
        ck_assert_uint_eq(s[0].nattch, 1);
        ck_assert_int_eq(s[0].atime, 1795223784);
        ck_assert_int_eq(s[0].dtime, 0);
        ck_assert(s[0].has_rss);
        ck_assert_uint_eq(s[0].rss_bytes, 8388608);
        ck_assert_uint_eq(s[0].swap_bytes, 0);
        /* removed while attached: key reads 0, SHM_DEST set */
        ck_assert_int_eq(s[3].key, 0);
        ck_assert_int_eq(s[3].shmid, 3);
        ck_assert_uint_eq(s[3].perms, NG_SHM_DEST | 0640);
        ck_assert_uint_eq(s[3].size_bytes, 2097152);
        ck_assert_int_eq(s[4].key, 0x4e470005);
        ck_assert_uint_eq(s[4].perms, NG_SHM_LOCKED | 0640);
        free(s);
        free(buf);
}
END_TEST

START_TEST(test_shm_host)
{
        char *buf = ng_test_read(FX "host-sysvipc-shm", NULL);
        struct ng_shm_seg *s = NULL;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_sysvipc_shm(buf, &s, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_int_eq(s[1].key, 0x4e470002);
        ck_assert_int_eq(s[1].shmid, 3);
        ck_assert_int_eq(s[1].cpid, 6748);
        free(s);
        free(buf);
}
END_TEST

START_TEST(test_shm_edge)
{
        static const char header[] =
                "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n";
        struct ng_shm_seg *s = (void *)0x1;
        size_t n = 77;
        /* negative key, pre-2.6.29 row without rss/swap, no trailing
         * newline; then junk: short row, 15 columns, bad octal, key out of
         * int32, size overflow, uid > 32 bits */
        const char *text =
                "-559038737      32769   600               4096   10   11      2  1000  1000  1000  1000 0 0 1700000000 4096 0\n"
                "5 6 3666 4096 1 1 0 0 0 0 0 1 2 3\n"
                "1 2 600 4096\n"
                "1 2 600 4096 1 1 0 0 0 0 0 1 2 3 4\n"
                "1 2 689 4096 1 1 0 0 0 0 0 1 2 3 4 5\n"
                "2147483648 2 600 4096 1 1 0 0 0 0 0 1 2 3 4 5\n"
                "1 2 600 18446744073709551616 1 1 0 0 0 0 0 1 2 3 4 5\n"
                "1 3 600 4096 1 1 0 4294967296 0 0 0 1 2 3 4 5\n"
                "\x01\x02\xfe\xff\n"
                "7 8 600 8192 1 1 0 0 0 0 0 1 2 3 8192 0";

        ck_assert_int_eq(ng_parse_sysvipc_shm(header, &s, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(s);
        ck_assert_int_eq(ng_parse_sysvipc_shm("", &s, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(ng_parse_sysvipc_shm(text, &s, &n), 0);
        /* the rows whose ids parse and a later number does not (size
         * overflow, uid > 32 bits) are kept, unknown: never dropped */
        ck_assert_uint_eq(n, 5);
        ck_assert(!s[0].unknown && !s[1].unknown && !s[4].unknown);
        ck_assert(s[2].unknown && s[3].unknown);
        ck_assert_int_eq(s[2].shmid, 2);
        ck_assert_int_eq(s[3].shmid, 3);
        ck_assert_uint_eq(s[2].size_bytes, 0);
        ck_assert_uint_eq(s[3].nattch, 0);
        ck_assert_int_eq(s[0].key, -559038737);
        ck_assert_int_eq(s[0].shmid, 32769);
        ck_assert_uint_eq(s[0].perms, 0600);
        ck_assert_uint_eq(s[0].nattch, 2);
        ck_assert_uint_eq(s[0].uid, 1000);
        ck_assert_int_eq(s[0].ctime, 1700000000);
        ck_assert(!s[1].has_rss);
        ck_assert_uint_eq(s[1].perms, NG_SHM_DEST | NG_SHM_LOCKED | 0666);
        ck_assert_int_eq(s[4].key, 7);
        ck_assert_uint_eq(s[4].rss_bytes, 8192);
        free(s);
}
END_TEST

/* A shmid the kernel lists once, listed again (#36: a copied row made a
 * phantom second segment): one entry, the first row's, unknown, the rows
 * after it counted; every other row as it was. */
START_TEST(test_shm_duplicate_shmid)
{
        const char *text =
                "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n"
                "         0          0   600               8388608   179   179      2     0     0     0     0 1795225561          0 1795225560               8388608                     0\n"
                "         0          1   600              16777216   183   183      2     0     0     0     0 1795225562          0 1795225561              16777216                     0\n"
                "         0          0   600               8388608   179   179      2     0     0     0     0 1795225561          0 1795225560               8388608                     0\n"
                "         5          1   600               4096      1     1        0     0     0     0     0 1795225562          0 1795225561                     0                     0\n"
                "         0          1   600              16777216   183   183      2     0     0     0     0 1795225562          0 1795225561              16777216                     0\n"
                "         0          3   600               8388608   204   204      2     0     0     0     0 1795225567          0 1795225567               8388608                     0\n";
        struct ng_shm_seg *s = NULL;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_sysvipc_shm(text, &s, &n), 0);
        ck_assert_uint_eq(n, 3);
        /* in the order of their first rows */
        ck_assert_int_eq(s[0].shmid, 0);
        ck_assert_int_eq(s[1].shmid, 1);
        ck_assert_int_eq(s[2].shmid, 3);
        ck_assert(s[0].unknown && s[1].unknown && !s[2].unknown);
        ck_assert_uint_eq(s[0].duplicates, 1);
        ck_assert_uint_eq(s[1].duplicates, 2);
        ck_assert_uint_eq(s[2].duplicates, 0);
        /* which of the rows is true cannot be told: no size is taken */
        ck_assert_uint_eq(s[0].size_bytes, 0);
        ck_assert(!s[0].has_rss);
        ck_assert_uint_eq(s[2].size_bytes, 8388608);
        free(s);

        /* many rows of one shmid stay linear (sorted, not compared pairwise) */
        size_t rows = 200000, len = rows * 48 + 1;
        char *big = malloc(len), *p = big;
        ck_assert_ptr_nonnull(big);
        for (size_t i = 0; i < rows; i++)
                p += sprintf(p, "%d 7 600 4096 1 1 0 0 0 0 0 1 2 3 0 0\n", (int) (i % 3));
        ck_assert_int_eq(ng_parse_sysvipc_shm(big, &s, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(s[0].duplicates, rows - 1);
        free(s);
        free(big);
}
END_TEST

/* ---- /proc/<pid>/stat ---- */

START_TEST(test_stat_guest)
{
        char *buf = ng_test_read(FX "guest4-stat", NULL);
        struct ng_pid_stat st;

        ck_assert_int_eq(ng_parse_pid_stat(buf, &st), 0);
        ck_assert_int_eq(st.pid, 177);
        ck_assert_str_eq(st.comm, "ngcap");
        ck_assert_int_eq(st.state, 'S');
        ck_assert_int_eq(st.ppid, 170);
        ck_assert_uint_eq(st.flags, 4194560);
        ck_assert(!(st.flags & NG_PF_KTHREAD));
        ck_assert_uint_eq(st.starttime_ticks, 544);
        ck_assert_int_eq(st.processor, 1);
        ck_assert_uint_eq(st.utime_ticks, 3);
        ck_assert_uint_eq(st.stime_ticks, 68);
        free(buf);
}
END_TEST

START_TEST(test_stat_weird_comm)
{
        char *buf = ng_test_read(FX "guest4-stat-weird-comm", NULL);
        struct ng_pid_stat st;

        ck_assert_int_eq(ng_parse_pid_stat(buf, &st), 0);
        ck_assert_int_eq(st.pid, 179);
        ck_assert_str_eq(st.comm, "ng) (cap x");
        ck_assert_int_eq(st.ppid, 177);
        ck_assert_uint_eq(st.starttime_ticks, 553);
        ck_assert_int_eq(st.processor, 2);
        free(buf);
        buf = ng_test_read(FX "host-stat-weird-comm", NULL);
        ck_assert_int_eq(ng_parse_pid_stat(buf, &st), 0);
        ck_assert_str_eq(st.comm, "ng) (cap x");
        ck_assert_int_eq(st.ppid, 6748);
        ck_assert_uint_eq(st.starttime_ticks, 38725);
        free(buf);
}
END_TEST

START_TEST(test_stat_edge)
{
        struct ng_pid_stat st = { .pid = 4242 };
        /* a kthread, cut before field 39 */
        const char *kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3";
        char longcomm[256];

        ck_assert_int_eq(ng_parse_pid_stat(kthread, &st), 0);
        ck_assert(st.flags & NG_PF_KTHREAD);
        ck_assert_int_eq(st.processor, -1);
        ck_assert_uint_eq(st.starttime_ticks, 3);

        st.pid = 4242;
        ck_assert_int_eq(ng_parse_pid_stat("", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("12 (x", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("12 (x) S 1 0 0", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("12 x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("99999999999 (x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("12 (x) S 1 0 0 0 -1 99999999999 0 0 0 0 0 0 0 0 20 0 1 0 3", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("12 (x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("12 (x) SS 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3", &st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_stat("\xff\xfe (\x01) \x02", &st), -EINVAL);
        ck_assert_int_eq(st.pid, 4242);

        /* a comm longer than the buffer is cut, not overflowed */
        memset(longcomm, 0, sizeof(longcomm));
        strcpy(longcomm, "5 (");
        memset(longcomm + 3, 'a', 100);
        strcat(longcomm, ") R 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 3\n");
        ck_assert_int_eq(ng_parse_pid_stat(longcomm, &st), 0);
        ck_assert_uint_eq(strlen(st.comm), sizeof(st.comm) - 1);
}
END_TEST

/* ---- /proc/<pid>/status ---- */

START_TEST(test_status_guest)
{
        char *buf = ng_test_read(FX "guest4-status", NULL);
        struct ng_pid_status *st = calloc(1, sizeof(*st));
        char list[64];

        ck_assert_int_eq(ng_parse_pid_status(buf, st), 0);
        ck_assert_str_eq(st->name, "ngcap");
        ck_assert(st->has_cap_prm && st->has_cap_eff);
        ck_assert_uint_eq(st->cap_prm, UINT64_C(0x000001ffffffffff));
        ck_assert_uint_eq(st->cap_eff, UINT64_C(0x000001ffffffffff));
        ck_assert_int_eq(st->tgid, 177);
        ck_assert_int_eq(st->ppid, 170);
        ck_assert_uint_eq(st->uid, 0);
        ck_assert_uint_eq(st->vm_size_kib, 68004);
        ck_assert_uint_eq(st->vm_rss_kib, 50212);
        ck_assert_uint_eq(st->rss_anon_kib, 21576);
        ck_assert_uint_eq(st->rss_file_kib, 988);
        ck_assert(st->has_rss_shmem);
        ck_assert_uint_eq(st->rss_shmem_kib, 27648);
        ck_assert(st->has_vm_pte);
        ck_assert_uint_eq(st->vm_pte_kib, 144);
        ck_assert(st->has_hugetlb);
        ck_assert_uint_eq(st->hugetlb_kib, 16384);
        ck_assert_uint_eq(st->threads, 1);
        ck_assert(st->has_cpus_allowed && st->has_mems_allowed);
        struct ng_bitmap *b = malloc(sizeof(*b));
        ng_idset_to_bitmap(&st->cpus_allowed, b);
        ng_bitmap_format_list(b, list, sizeof(list));
        ck_assert_str_eq(list, "1-3");
        ng_idset_to_bitmap(&st->mems_allowed, b);
        ng_bitmap_format_list(b, list, sizeof(list));
        ck_assert_str_eq(list, "0-3");
        /* sized to the highest id, not 1 KiB */
        ck_assert_uint_eq(st->cpus_allowed.n_words, 1);
        free(b);
        ng_pid_status_done(st);
        free(st);
        free(buf);
}
END_TEST

START_TEST(test_status_host_and_weird)
{
        char *buf = ng_test_read(FX "host-status", NULL);
        struct ng_pid_status *st = calloc(1, sizeof(*st));

        ck_assert_int_eq(ng_parse_pid_status(buf, st), 0);
        ck_assert_str_eq(st->name, "ngcap");
        ck_assert_int_eq(st->tgid, 6748);
        struct ng_bitmap *b = malloc(sizeof(*b));
        ng_idset_to_bitmap(&st->mems_allowed, b);
        ck_assert_uint_eq(ng_bitmap_count(b), 1);
        ck_assert(ng_idset_test(&st->mems_allowed, 0));
        ng_idset_to_bitmap(&st->cpus_allowed, b);
        ck_assert_uint_eq(ng_bitmap_count(b), 2);
        free(b);
        ng_pid_status_done(st);
        free(buf);
        buf = ng_test_read(FX "guest4-status-weird-comm", NULL);
        ck_assert_int_eq(ng_parse_pid_status(buf, st), 0);
        ck_assert_str_eq(st->name, "ng) (cap x");
        ck_assert_int_eq(st->ppid, 177);
        ng_pid_status_done(st);
        free(st);
        free(buf);
}
END_TEST

START_TEST(test_status_edge)
{
        struct ng_pid_status *st = calloc(1, sizeof(*st));
        /* an old kernel: no RssShmem/VmPTE/HugetlbPages; a node id past the
         * bitmap; garbage numbers; no trailing newline */
        const char *old = "Name:\tpostgres\nPid:\t4\nVmRSS:\tjunk kB\nVmSize:\t  100 kB\n"
                          "Cpus_allowed_list:\t0-8192\nMems_allowed_list:\t0,63";

        strcpy(st->name, "keep");
        ck_assert_int_eq(ng_parse_pid_status("", st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\n", st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_status("Pid:\t1\n", st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\nPid:\tabc\n", st), -EINVAL);
        ck_assert_int_eq(ng_parse_pid_status("\x01\x02:\xff\n\n\n", st), -EINVAL);
        ck_assert_str_eq(st->name, "keep");
        ck_assert_int_eq(ng_parse_pid_status(old, st), 0);
        ck_assert_str_eq(st->name, "postgres");
        ck_assert(!st->has_rss_shmem && !st->has_vm_pte && !st->has_hugetlb);
        ck_assert_uint_eq(st->vm_rss_kib, 0);
        ck_assert_uint_eq(st->vm_size_kib, 100);
        ck_assert(!st->has_cpus_allowed);
        ck_assert_ptr_null(st->cpus_allowed.w);
        ck_assert(st->has_mems_allowed);
        ck_assert(ng_idset_test(&st->mems_allowed, 63));
        ck_assert(!ng_idset_test(&st->mems_allowed, 64));
        ng_pid_status_done(st);
        /* capability sets: more than 16 hex digits, no digit or garbage
         * after them leave a set unknown, never 0 */
        memset(st, 0, sizeof(*st));
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\nPid:\t1\nCapPrm:\t0000001ffffffffff\n"
                                             "CapEff:\t1fg\n", st), 0);
        ck_assert(!st->has_cap_prm && !st->has_cap_eff);
        ck_assert_int_eq(ng_parse_pid_status("Name:\tx\nPid:\t1\nCapPrm:\t\nCapEff:\tFFFFFFFFFFFFFFFF\n", st), 0);
        ck_assert(!st->has_cap_prm && st->has_cap_eff);
        ck_assert_uint_eq(st->cap_eff, UINT64_MAX);
        ng_pid_status_done(st);
        free(st);
}
END_TEST

/* ---- /proc/zoneinfo ---- */

START_TEST(test_zoneinfo_high)
{
        size_t len;
        char *buf = ng_test_read(FX "host-zoneinfo", &len);
        uint64_t pages = 0;
        /* high 38 + 7896 + 17407 + 32 + 0 over DMA, DMA32, Normal, Movable,
         * Device; the per-cpu "high:" lines are not watermarks. */
        ck_assert_int_eq(ng_parse_zoneinfo_high(buf, 0, &pages), 0);
        ck_assert_uint_eq(pages, 25373);
        ck_assert_int_eq(ng_parse_zoneinfo_high(buf, 1, &pages), -ENOENT);
        /* promo 44 + 9212 + 20308 + 32 + 0 (Linux 5.18 and later). */
        ck_assert_int_eq(ng_parse_zoneinfo_promo(buf, 0, &pages), 0);
        ck_assert_uint_eq(pages, 29596);
        free(buf);
        /* A kernel before 5.18: no promo line. */
        ck_assert_int_eq(ng_parse_zoneinfo_promo("Node 0, zone Normal\n        high     9\n", 0, &pages), -ENOENT);
        ck_assert_int_eq(ng_parse_zoneinfo_high("Node 1, zone Normal\n  pages free 5\n        high     7\n"
                                                "Node 2, zone Normal\n        high     9\n", 1, &pages), 0);
        ck_assert_uint_eq(pages, 7);
        ck_assert_int_eq(ng_parse_zoneinfo_high("Node 0, zone Normal\n high 18446744073709551615\n"
                                                "Node 0, zone Movable\n high 1\n", 0, &pages), -ERANGE);
        ck_assert_int_eq(ng_parse_zoneinfo_high("", 0, &pages), -ENOENT);
}
END_TEST

/* ---- /proc/<pid>/cmdline ---- */

START_TEST(test_cmdline)
{
        size_t len;
        char *buf = ng_test_read(FX "guest4-cmdline", &len), *s = NULL;

        ck_assert_int_eq(ng_parse_cmdline(buf, len, &s), 0);
        ck_assert_str_eq(s, "./ngcap");
        free(s);
        free(buf);
        ck_assert_int_eq(ng_parse_cmdline("postgres\0-D\0/var/lib/pg\0\0", 25, &s), 0);
        ck_assert_str_eq(s, "postgres -D /var/lib/pg");
        free(s);
        ck_assert_int_eq(ng_parse_cmdline("", 0, &s), 0);
        ck_assert_str_eq(s, "");
        free(s);
        ck_assert_int_eq(ng_parse_cmdline("\0\0\0", 3, &s), 0);
        ck_assert_str_eq(s, "");
        free(s);
        /* setproctitle() style: no NUL at all */
        ck_assert_int_eq(ng_parse_cmdline("postgres: checkpointer", 22, &s), 0);
        ck_assert_str_eq(s, "postgres: checkpointer");
        free(s);
        s = (char *)"keep";
        ck_assert_int_eq(ng_parse_cmdline(NULL, 3, &s), -EINVAL);
        ck_assert_str_eq(s, "keep");
}
END_TEST

/* ---- /proc/<pid>/cgroup ---- */

START_TEST(test_cgroup_v1)
{
        char *buf = ng_test_read(FX "guest4v1-cgroup", NULL);
        struct ng_pid_cgroup c = {};

        ck_assert_int_eq(ng_parse_pid_cgroup(buf, &c), 0);
        ck_assert_uint_eq(c.n, 9);
        ck_assert_uint_eq(c.e[0].hierarchy_id, 9);
        ck_assert_str_eq(c.e[0].controllers, "perf_event");
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "cpuset"), "/ngdb");
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "memory"), "/ngdb");
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "hugetlb"), "/ngdb");
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "cpuacct"), "/");
        ck_assert_ptr_null(ng_pid_cgroup_v1_path(&c, "cpu,cpuacct"));
        ck_assert_ptr_null(ng_pid_cgroup_v1_path(&c, "cpus"));
        ck_assert_ptr_null(ng_pid_cgroup_v2_path(&c));
        ng_pid_cgroup_done(&c);
        ck_assert_uint_eq(c.n, 0);
        ng_pid_cgroup_done(&c);
        ng_pid_cgroup_done(NULL);
        free(buf);
}
END_TEST

START_TEST(test_cgroup_v2_and_hybrid)
{
        char *buf = ng_test_read(FX "guest4-cgroup", NULL);
        struct ng_pid_cgroup c = {};

        ck_assert_int_eq(ng_parse_pid_cgroup(buf, &c), 0);
        ck_assert_uint_eq(c.n, 1);
        ck_assert_str_eq(ng_pid_cgroup_v2_path(&c), "/ngdb");
        ck_assert_ptr_null(ng_pid_cgroup_v1_path(&c, "cpuset"));
        ck_assert_ptr_null(ng_pid_cgroup_v1_path(&c, ""));
        ng_pid_cgroup_done(&c);
        free(buf);
        buf = ng_test_read(FX "host-cgroup", NULL);
        ck_assert_int_eq(ng_parse_pid_cgroup(buf, &c), 0);
        ck_assert_uint_eq(c.n, 10);
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "name=systemd"), "/");
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "memory"), "/process_api/2777abc6e3e241177b67f69306bf8441");
        ck_assert_str_eq(ng_pid_cgroup_v2_path(&c), "/");
        ng_pid_cgroup_done(&c);
        free(buf);
}
END_TEST

START_TEST(test_cgroup_edge)
{
        struct ng_pid_cgroup c = { .n = 99 };
        const char *text = "x:cpuset:/a\n3:cpuset\n4294967296:cpuset:/b\n5:memory:relative\n"
                           "\n\x01\xff\n6:cpuset:/with:colon\n0::/tail";

        ck_assert_int_eq(ng_parse_pid_cgroup("", &c), 0);
        ck_assert_uint_eq(c.n, 0);
        ng_pid_cgroup_done(&c);
        ck_assert_int_eq(ng_parse_pid_cgroup(text, &c), 0);
        ck_assert_uint_eq(c.n, 2);
        ck_assert_str_eq(ng_pid_cgroup_v1_path(&c, "cpuset"), "/with:colon");
        ck_assert_str_eq(ng_pid_cgroup_v2_path(&c), "/tail");
        ng_pid_cgroup_done(&c);
}
END_TEST

/* /proc/loadavg as Linux 6.1 writes it ("%lu.%02lu %lu.%02lu %lu.%02lu
 * %u/%d %d\n", fs/proc/loadavg.c): this host's, read on 2026-11-23. */
START_TEST(test_loadavg)
{
        uint64_t threads = 7, last = 7;

        ck_assert_int_eq(ng_parse_loadavg("0.51 0.42 0.96 1/83 1592\n", &threads, &last), 0);
        ck_assert_uint_eq(threads, 83);
        ck_assert_uint_eq(last, 1592);
        ck_assert_int_eq(ng_parse_loadavg("12.00 8.50 3.25 40/4170 4194303\n", &threads, &last), 0);
        ck_assert_uint_eq(threads, 4170);
        ck_assert_uint_eq(last, 4194303);

        static const char *const bad[] = {
                "", "\n", "0.51 0.42 0.96 1/83 1592",          /* no newline: cut short */
                "0.51 0.42 0.96 83 1592\n", "0.51 0.42 0.96 1/83\n", "0.51 0.42 0.96 1/83 1592 7\n",
                "0.51 0.42 0.96 1/-83 1592\n", "0.51 0.42 0.96 1/83 -1\n", "0.51 0.42 0.96 /83 1592\n",
                "0.51 0.42 0.96 1/83 4294967296\n", "0.51 0.42 0.96 1/99999999999999999999 1\n",
                "0.51 0.42 0.96 1/83x 1592\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                threads = last = 7;
                ck_assert_msg(ng_parse_loadavg(bad[i], &threads, &last) == -EINVAL, "accepted \"%s\"", bad[i]);
                ck_assert_uint_eq(threads + last, 14);
        }
        /* longer than any line the kernel writes */
        char lng[300];
        memset(lng, '1', sizeof(lng) - 2);
        lng[sizeof(lng) - 2] = '\n';
        lng[sizeof(lng) - 1] = '\0';
        ck_assert_int_eq(ng_parse_loadavg(lng, &threads, &last), -EINVAL);
}
END_TEST

static Suite *parse_suite(void)
{
        Suite *s = suite_create("parse");
        TCase *tc = tcase_create("helpers");

        tcase_add_test(tc, test_u64);
        tcase_add_test(tc, test_u64_full);
        tcase_add_test(tc, test_u64_row);
        tcase_add_test(tc, test_hugepages_dirname);
        tcase_add_test(tc, test_bracketed);
        tcase_add_test(tc, test_unescape);
        suite_add_tcase(s, tc);
        tc = tcase_create("meminfo");
        tcase_add_test(tc, test_meminfo_host);
        tcase_add_test(tc, test_meminfo_node);
        tcase_add_test(tc, test_meminfo_malformed);
        tcase_add_test(tc, test_meminfo_cap);
        suite_add_tcase(s, tc);
        tc = tcase_create("sysvipc");
        tcase_add_test(tc, test_shm_guest);
        tcase_add_test(tc, test_shm_host);
        tcase_add_test(tc, test_shm_edge);
        tcase_add_test(tc, test_shm_duplicate_shmid);
        suite_add_tcase(s, tc);
        tc = tcase_create("pid");
        tcase_add_test(tc, test_stat_guest);
        tcase_add_test(tc, test_stat_weird_comm);
        tcase_add_test(tc, test_stat_edge);
        tcase_add_test(tc, test_status_guest);
        tcase_add_test(tc, test_status_host_and_weird);
        tcase_add_test(tc, test_status_edge);
        tcase_add_test(tc, test_cmdline);
        tcase_add_test(tc, test_zoneinfo_high);
        tcase_add_test(tc, test_cgroup_v1);
        tcase_add_test(tc, test_cgroup_v2_and_hybrid);
        tcase_add_test(tc, test_cgroup_edge);
        tcase_add_test(tc, test_loadavg);
        tcase_add_test(tc, test_shm_file_line);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(parse_suite());
}

/* Unit tests for the /proc/<pid>/maps and numa_maps parsers against text
 * captured on a 4-node guest (tests/fixtures/text/README). */

#include "parse.h"
#include "ng-test.h"
#include "util.h"

#define FX "tests/fixtures/text/"

static const struct ng_map *map_at(const struct ng_map *m, size_t n, uint64_t start)
{
        for (size_t i = 0; i < n; i++)
                if (m[i].start == start)
                        return &m[i];
        ck_abort_msg("no mapping at %#llx", (unsigned long long)start);
        return NULL;
}

static const struct ng_numa_map *numa_at(const struct ng_numa_map *m, size_t n, uint64_t start)
{
        for (size_t i = 0; i < n; i++)
                if (m[i].start == start)
                        return &m[i];
        ck_abort_msg("no numa_maps line at %#llx", (unsigned long long)start);
        return NULL;
}

static uint64_t pages_on(const struct ng_numa_map *m, int node)
{
        for (size_t i = 0; i < m->n_np; i++)
                if (m->np[i].node == node)
                        return m->np[i].pages;
        return 0;
}

/* ---- maps ---- */

START_TEST(test_maps_guest_shared)
{
        char *buf = ng_test_read(FX "guest4-maps", NULL);
        struct ng_map *m = NULL;
        const struct ng_map *x;
        size_t n = 0;
        struct ng_parse_skipped bad;

        ck_assert_int_eq(ng_parse_maps(buf, 0, &m, &n, &bad), 0);
        ck_assert_uint_eq(bad.lines, 0);
        ck_assert_uint_eq(n, 9);
        for (size_t i = 0; i < n; i++)
                ck_assert(m[i].shared);

        x = map_at(m, n, 0x7f5d63c0a000);
        ck_assert_int_eq(x->kind, NG_MAP_SYSV);
        ck_assert_uint_eq(x->end, 0x7f5d6440a000);
        ck_assert_int_eq(x->sysv_key, 0x4e470001);
        ck_assert_uint_eq(x->inode, 0);         /* inode = shmid */
        ck_assert_str_eq(x->path, "/SYSV4e470001");
        ck_assert(x->deleted && x->read && x->write && !x->exec);

        x = map_at(m, n, 0x7f5d62c00000);       /* SHM_HUGETLB: hugetlbfs dev */
        ck_assert_int_eq(x->kind, NG_MAP_SYSV);
        ck_assert_int_eq(x->sysv_key, 0x4e470003);
        ck_assert_uint_eq(x->inode, 2);
        ck_assert_uint_eq(x->dev_major, 0);
        ck_assert_uint_eq(x->dev_minor, 0x0f);

        x = map_at(m, n, 0x7f5d61800000);
        ck_assert_int_eq(x->kind, NG_MAP_ANON_SHARED);
        ck_assert_str_eq(x->path, "/anon_hugepage");
        x = map_at(m, n, 0x7f5d61c00000);
        ck_assert_int_eq(x->kind, NG_MAP_ANON_SHARED);
        ck_assert_str_eq(x->path, "/dev/zero");
        ck_assert_uint_eq(x->dev_minor, 1);

        x = map_at(m, n, 0x7f5d62500000);       /* a blank in a /dev/shm name */
        ck_assert_int_eq(x->kind, NG_MAP_FILE_SHARED);
        ck_assert_str_eq(x->path, "/dev/shm/ng granule 1");
        ck_assert(!x->deleted);
        ck_assert_int_eq(x->sysv_key, 0);
        x = map_at(m, n, 0x7f5d62000000);
        ck_assert_int_eq(x->kind, NG_MAP_FILE_SHARED);
        ck_assert_str_eq(x->path, "/dev/hugepages/ngfile");
        ng_maps_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_maps_guest_private)
{
        char *buf = ng_test_read(FX "guest4-maps", NULL);
        struct ng_map *m = NULL;
        const struct ng_map *x;
        size_t n = 0;

        /* only the 16 MiB interleaved private region reaches 16 MiB */
        ck_assert_int_eq(ng_parse_maps(buf, 16u << 20, &m, &n, NULL), 0);
        ck_assert_uint_eq(n, 10);
        x = map_at(m, n, 0x7f5d60800000);
        ck_assert_int_eq(x->kind, NG_MAP_ANON_PRIVATE);
        ck_assert_str_eq(x->path, "");
        ck_assert(!x->shared);
        ng_maps_free(m, n);

        /* every private anonymous region incl. [heap], never [stack] */
        ck_assert_int_eq(ng_parse_maps(buf, 1, &m, &n, NULL), 0);
        ck_assert_uint_eq(n, 17);
        x = map_at(m, n, 0x55a100882000);
        ck_assert_str_eq(x->path, "[heap]");
        for (size_t i = 0; i < n; i++)
                ck_assert_str_ne(m[i].path, "[stack]");
        ng_maps_free(m, n);
        free(buf);
}
END_TEST

/* A real mariadbd (10.11, Debian 12) with a 128 MiB buffer pool: the pool
 * is the 160 MiB rw-p mapping; the 8 TiB "---p" behind it reserves address
 * space for innodb_buffer_pool_size_max, and glibc's arena tails are
 * "---p" too. Neither holds memory, so neither is a segment. */
START_TEST(test_maps_mariadb)
{
        char *buf = ng_test_read(FX "guest4-mariadb-bound-maps", NULL);
        struct ng_map *m = NULL;
        const struct ng_map *x;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_maps(buf, 4u << 20, &m, &n, NULL), 0);
        x = map_at(m, n, 0x77ef96000000);
        ck_assert_int_eq(x->kind, NG_MAP_ANON_PRIVATE);
        ck_assert_uint_eq(x->end - x->start, 160u << 20);
        ck_assert(x->read && x->write && !x->shared);
        for (size_t i = 0; i < n; i++) {
                ck_assert_msg(m[i].read || m[i].write, "no-access mapping at %#llx kept",
                              (unsigned long long) m[i].start);
                ck_assert_uint_ne(m[i].start, 0x77efa0000000);
        }
        /* [heap] (7 MiB), the 8.8 MiB after the binary's data, ten 8 MiB
         * thread stacks, an arena's 10.8 MiB in use, the pool and regions of
         * 239 and 39.5 MiB: 16; the 18 "---p" of 4 MiB and more are not */
        size_t private = 0;
        for (size_t i = 0; i < n; i++)
                private += m[i].kind == NG_MAP_ANON_PRIVATE;
        ck_assert_uint_eq(private, 16);
        ng_maps_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_maps_pg)
{
        char *buf = ng_test_read(FX "guest4-pg15-sysv-maps", NULL);
        struct ng_map *m = NULL;
        const struct ng_map *x;
        size_t n = 0;
        struct ng_parse_skipped bad;

        ck_assert_int_eq(ng_parse_maps(buf, 0, &m, &n, &bad), 0);
        ck_assert_uint_eq(bad.lines, 0);
        x = map_at(m, n, 0x7f5a78e48000);
        ck_assert_int_eq(x->kind, NG_MAP_SYSV);
        ck_assert_int_eq(x->sysv_key, 4);
        ck_assert_uint_eq(x->inode, 5);
        /* the whole segment, as /proc/sysvipc/shm sizes it */
        ck_assert_uint_eq(x->end - x->start, 149520384);
        ng_maps_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_maps_edge)
{
        struct ng_map *m = (void *)0x1;
        struct ng_parse_skipped bad;
        size_t n = 5;
        const char *text =
                "1000-2000 rw-s 00000000 08:01 12 /path with  two (deleted) (deleted)\n"
                "2000-1000 rw-s 00000000 08:01 12 /backwards\n"
                "3000-4000 rw-x 00000000 08:01 12 /badperm\n"
                "3000-4000 rw-s 0000zz00 08:01 12 /badoff\n"
                "3000-4000 rw-s 00000000 0801 12 /baddev\n"
                "3000-4000 rw-s 00000000 08:01 -1 /badinode\n"
                "11111111111111111111-4000 rw-s 00000000 08:01 1 /huge\n"
                "3000-4000 rw-s\n"
                "\x01\xff\xfe\n"
                "5000-6000 rw-s 00000000 00:01 7 /SYSV0000000g (deleted)\n"
                "6000-7000 rw-s 00000000 00:01 8 /SYSVffffffff (deleted)\n"
                "7000-8000 rw-s 00000000 00:01 9 /SYSV00000001\n"
                "8000-9000 rw-s 00000000 00:00 0 \n"
                "9000-a000 rw-p 00000000 00:00 0   [anon:buffer pool]\n"
                "200000-400000 rw-p 00000000 00:0f 4711                       /anon_hugepage (deleted)\n"
                "400000-600000 rw-p 00000000 08:01 4712 /anon_hugepage\n"
                "a000-b000 rw-p 00000000 00:00 0 [stack]\n"
                "b000-c000 r--p 00000000 08:01 5 /lib/x.so\n"
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

        ck_assert_int_eq(ng_parse_maps("", 0, &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(m);
        ck_assert_uint_eq(bad.lines, 0);
        ck_assert_uint_eq(bad.first_line, 0);
        ck_assert_int_eq(ng_parse_maps(text, 1, &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 7);
        /* lines 2 to 9 are no mapping the kernel prints; the mappings
         * merely not kept (private, a file's) are not counted */
        ck_assert_uint_eq(bad.lines, 8);
        ck_assert_uint_eq(bad.first_line, 2);
        ck_assert_str_eq(m[0].path, "/path with  two (deleted)");
        ck_assert(m[0].deleted);
        ck_assert_int_eq(m[0].kind, NG_MAP_FILE_SHARED);
        ck_assert_int_eq(m[1].kind, NG_MAP_FILE_SHARED);        /* bad hex: not SysV */
        ck_assert_int_eq(m[2].kind, NG_MAP_SYSV);
        ck_assert_int_eq(m[2].sysv_key, -1);
        ck_assert_int_eq(m[3].kind, NG_MAP_FILE_SHARED);        /* not deleted */
        ck_assert_int_eq(m[4].kind, NG_MAP_OTHER);              /* shared, nameless */
        ck_assert_int_eq(m[5].kind, NG_MAP_ANON_PRIVATE);
        ck_assert_str_eq(m[5].path, "[anon:buffer pool]");
        /* MAP_PRIVATE | MAP_HUGETLB is private anonymous memory too; a
         * private mapping of a file of that name is not */
        ck_assert_int_eq(m[6].kind, NG_MAP_ANON_PRIVATE);
        ck_assert_str_eq(m[6].path, "/anon_hugepage");
        ck_assert_uint_eq(m[6].inode, 4711);
        ng_maps_free(m, n);
        ng_maps_free(NULL, 0);
}
END_TEST

/* ---- numa_maps ---- */

START_TEST(test_numa_maps_sysv)
{
        char *buf = ng_test_read(FX "guest4-numa_maps", NULL);
        struct ng_numa_map *m = NULL;
        const struct ng_numa_map *x;
        size_t n = 0;
        struct ng_parse_skipped bad;

        ck_assert_int_eq(ng_parse_numa_maps(buf, &m, &n, &bad), 0);
        ck_assert_uint_eq(bad.lines, 0);
        ck_assert_uint_eq(n, 35);

        x = numa_at(m, n, 0x7f5d63c0a000);      /* numactl-style membind=2 */
        ck_assert_int_eq(x->policy, NG_MPOL_BIND);
        ck_assert_str_eq(x->policy_nodes, "2");
        ck_assert_str_eq(x->file, "/SYSV4e470001 (deleted)");
        ck_assert_uint_eq(x->dirty, 2048);
        ck_assert_uint_eq(x->n_np, 1);
        ck_assert_int_eq(x->np[0].node, 2);
        ck_assert_uint_eq(x->np[0].pages, 2048);
        ck_assert_uint_eq(x->kernelpagesize_kib, 4);
        ck_assert(!x->huge);

        x = numa_at(m, n, 0x7f5d6340a000);      /* interleave over 4 nodes */
        ck_assert_int_eq(x->policy, NG_MPOL_INTERLEAVE);
        ck_assert_str_eq(x->policy_nodes, "0-3");
        ck_assert_uint_eq(x->n_np, 4);
        for (int node = 0; node < 4; node++) {
                ck_assert_int_eq(x->np[node].node, node);
                ck_assert_uint_eq(x->np[node].pages, 512);
        }

        x = numa_at(m, n, 0x7f5d62c00000);      /* SHM_HUGETLB bound to node 1 */
        ck_assert(x->huge);
        ck_assert_int_eq(x->policy, NG_MPOL_BIND);
        ck_assert_uint_eq(pages_on(x, 1), 4);
        ck_assert_uint_eq(x->kernelpagesize_kib, 2048);
        ck_assert_uint_eq(x->anon, 0);
        ng_numa_maps_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_numa_maps_policies)
{
        char *buf = ng_test_read(FX "guest4-numa_maps", NULL);
        struct ng_numa_map *m = NULL;
        const struct ng_numa_map *x;
        size_t n = 0;
        struct ng_parse_skipped bad;

        ck_assert_int_eq(ng_parse_numa_maps(buf, &m, &n, &bad), 0);
        ck_assert_uint_eq(bad.lines, 0);
        x = numa_at(m, n, 0x7f5d60400000);
        ck_assert_int_eq(x->policy, NG_MPOL_PREFERRED_MANY);
        ck_assert_str_eq(x->policy_nodes, "0-1");
        ck_assert_uint_eq(x->anon, 512);
        ck_assert_uint_eq(pages_on(x, 1), 512);
        x = numa_at(m, n, 0x7f5d60600000);
        ck_assert_int_eq(x->policy, NG_MPOL_BIND);
        ck_assert_str_eq(x->policy_nodes, "1");
        x = numa_at(m, n, 0x7f5d60800000);
        ck_assert_int_eq(x->policy, NG_MPOL_INTERLEAVE);
        ck_assert_str_eq(x->policy_nodes, "0-3");
        ck_assert_uint_eq(pages_on(x, 3), 1024);
        x = numa_at(m, n, 0x7f5d62400000);
        ck_assert_int_eq(x->policy, NG_MPOL_LOCAL);
        ck_assert_str_eq(x->policy_nodes, "");
        x = numa_at(m, n, 0x7f5d62500000);
        ck_assert_int_eq(x->policy, NG_MPOL_PREFERRED);
        ck_assert_str_eq(x->policy_nodes, "3");
        ck_assert_str_eq(x->file, "/dev/shm/ng granule 1");
        ck_assert_uint_eq(pages_on(x, 3), 1024);
        x = numa_at(m, n, 0x7f5d61800000);
        ck_assert_str_eq(x->file, "/anon_hugepage (deleted)");
        ck_assert(x->huge);
        ck_assert_uint_eq(pages_on(x, 0), 2);
        x = numa_at(m, n, 0x55a100882000);
        ck_assert(x->heap && !x->stack);
        ck_assert_ptr_null(x->file);
        x = numa_at(m, n, 0x7ffc9fb82000);
        ck_assert(x->stack);
        x = numa_at(m, n, 0x7f5d6440d000);
        ck_assert_uint_eq(x->mapped, 37);
        ck_assert_uint_eq(x->mapmax, 4);
        x = numa_at(m, n, 0x7ffc9fbb6000);      /* no pages: nothing after policy */
        ck_assert_int_eq(x->policy, NG_MPOL_DEFAULT);
        ck_assert_uint_eq(x->n_np, 0);
        ck_assert_uint_eq(x->kernelpagesize_kib, 0);
        ng_numa_maps_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_numa_maps_pg)
{
        char *buf = ng_test_read(FX "guest4-pg15-sysv-numa_maps", NULL);
        struct ng_numa_map *m = NULL;
        const struct ng_numa_map *x;
        size_t n = 0;
        struct ng_parse_skipped bad;

        ck_assert_int_eq(ng_parse_numa_maps(buf, &m, &n, &bad), 0);
        ck_assert_uint_eq(bad.lines, 0);
        ck_assert_uint_eq(n, 242);
        x = numa_at(m, n, 0x7f5a78e48000);
        ck_assert_str_eq(x->file, "/SYSV00000004 (deleted)");
        ck_assert_uint_eq(x->dirty, 2699);
        ck_assert_uint_eq(x->mapmax, 6);
        ck_assert_uint_eq(x->active, 18);
        ck_assert_uint_eq(pages_on(x, 0) + pages_on(x, 1) + pages_on(x, 2) + pages_on(x, 3), 2699);
        ck_assert_uint_eq(pages_on(x, 3), 678);
        ng_numa_maps_free(m, n);
        free(buf);
        buf = ng_test_read(FX "guest4-pg15-mmap-numa_maps", NULL);
        ck_assert_int_eq(ng_parse_numa_maps(buf, &m, &n, &bad), 0);
        ck_assert_uint_eq(bad.lines, 0);
        x = numa_at(m, n, 0x7f4ba6000000);
        ck_assert_str_eq(x->file, "/anon_hugepage (deleted)");
        ck_assert(x->huge);
        ck_assert_uint_eq(x->kernelpagesize_kib, 2048);
        ck_assert_uint_eq(pages_on(x, 2), 2);
        ng_numa_maps_free(m, n);
        free(buf);
}
END_TEST

START_TEST(test_numa_maps_synthetic_policies)
{
        struct ng_parse_skipped bad;
        /* forms the 6.1 guest cannot print: weighted interleave (6.9+),
         * balancing flag (6.7+), prefer (many) with a flag */
        const char *text =
                "1000 weighted interleave:0-3 anon=8 dirty=8 N0=2 N1=2 N2=2 N3=2 kernelpagesize_kB=4\n"
                "2000 bind=static|balancing:0-1 anon=1 N1=1 kernelpagesize_kB=4\n"
                "3000 prefer (many)=relative:2-3 anon=1 N2=1 kernelpagesize_kB=4\n"
                "4000 interleave=static:0-3 file=/dev/shm/a\\075b\\012c\\011d swapcache=3 writeback=2 newfield=9 N1=1\n"
                "5000 futurepolicy:7 anon=1 N7=1\n"
                "6000 prefer (\n"
                "7000 weighted\n";
        struct ng_numa_map *m = NULL;
        size_t n = 0;

        ck_assert_int_eq(ng_parse_numa_maps(text, &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 7);
        ck_assert_uint_eq(bad.lines, 0);        /* unknown policies and tokens are a newer kernel's */
        ck_assert_int_eq(m[0].policy, NG_MPOL_WEIGHTED_INTERLEAVE);
        ck_assert_str_eq(m[0].policy_nodes, "0-3");
        ck_assert_uint_eq(m[0].n_np, 4);
        ck_assert_int_eq(m[1].policy, NG_MPOL_BIND);
        ck_assert_str_eq(m[1].policy_nodes, "0-1");
        ck_assert_int_eq(m[2].policy, NG_MPOL_PREFERRED_MANY);
        ck_assert_str_eq(m[2].policy_nodes, "2-3");
        ck_assert_str_eq(m[3].file, "/dev/shm/a=b\nc\td");
        ck_assert_uint_eq(m[3].swapcache, 3);
        ck_assert_uint_eq(m[3].writeback, 2);
        ck_assert_int_eq(m[4].policy, NG_MPOL_UNKNOWN);
        ck_assert_uint_eq(pages_on(&m[4], 7), 1);
        ck_assert_int_eq(m[5].policy, NG_MPOL_PREFERRED);      /* "(" is an unknown token */
        ck_assert_int_eq(m[6].policy, NG_MPOL_UNKNOWN);
        ck_assert_str_eq(ng_mpol_name(NG_MPOL_PREFERRED_MANY), "prefer (many)");
        ck_assert_str_eq(ng_mpol_name(NG_MPOL_WEIGHTED_INTERLEAVE), "weighted interleave");
        ck_assert_str_eq(ng_mpol_name(NG_MPOL_BIND), "bind");
        ck_assert_str_eq(ng_mpol_name((enum ng_mpol)99), "unknown");
        ng_numa_maps_free(m, n);
}
END_TEST

START_TEST(test_numa_maps_malformed)
{
        struct ng_parse_skipped bad;
        struct ng_numa_map *m = (void *)0x1;
        size_t n = 3, len;
        char *big, *p;
        const char *text =
                "zzzz default anon=1\n"
                "1000\n"
                "2000 default anon=x N0=1\n"
                "3000 default anon=99999999999999999999 N0=1\n"
                "4000 default N0=\n"
                "5000 default N8192=1\n"
                "6000 default N1x=1\n"
                "7000 default file=/a file=/b\n"
                "\x01\x02\xff\n"
                "\n"
                "8000 default N8191=5";

        ck_assert_int_eq(ng_parse_numa_maps("", &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(m);
        ck_assert_uint_eq(bad.lines, 0);
        ck_assert_int_eq(ng_parse_numa_maps(text, &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(bad.lines, 10);
        ck_assert_uint_eq(bad.first_line, 1);
        ck_assert_uint_eq(m[0].start, 0x8000);
        ck_assert_int_eq(m[0].np[0].node, 8191);
        ck_assert_uint_eq(m[0].np[0].pages, 5);
        ng_numa_maps_free(m, n);

        /* 64 nodes on one line; then a 100 KiB line that is skipped whole */
        len = 200 * 1024;
        big = malloc(len);
        p = big + sprintf(big, "a000 interleave:0-63");
        for (int i = 0; i < 64; i++)
                p += sprintf(p, " N%d=%d", i, i + 1);
        p += sprintf(p, " kernelpagesize_kB=4\nb000 default file=/");
        memset(p, 'x', 100 * 1024);
        p += 100 * 1024;
        strcpy(p, " anon=1\nc000 default");
        ck_assert_int_eq(ng_parse_numa_maps(big, &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(bad.lines, 1);
        ck_assert_uint_eq(bad.first_line, 2);
        ck_assert_uint_eq(m[0].n_np, 64);
        ck_assert_int_eq(m[0].np[63].node, 63);
        ck_assert_uint_eq(m[0].np[63].pages, 64);
        ck_assert_uint_eq(m[1].start, 0xc000);
        ng_numa_maps_free(m, n);
        free(big);
        ng_numa_maps_free(NULL, 0);
}
END_TEST

/* A node token whose id no host can have (#36: "N-1=2048",
 * "N2147483648=2048" on the SysV segment's line of guest4-v2's pid 179) is
 * no placement: the line is skipped and said, never kept as "no pages". */
START_TEST(test_numa_maps_impossible_nodes)
{
        static const char *const bad_tokens[] = { "N-1=2048", "N2147483648=2048", "N=2048", "Nx=2048", "N3=-1",
                                                  "N3=2048x", "N+3=2048" };
        for (size_t i = 0; i < ELEMENTSOF(bad_tokens); i++) {
                char text[512];
                snprintf(text, sizeof(text),
                         "7f3cd6cad000 bind:3 file=/SYSV00000000\\040(deleted) dirty=2048 active=0 %s "
                         "kernelpagesize_kB=4\n"
                         "7f3cd74ad000 bind:3 anon=2 dirty=2 active=0 N3=2 kernelpagesize_kB=4\n", bad_tokens[i]);
                struct ng_numa_map *m = NULL;
                struct ng_parse_skipped bad;
                size_t n = 0;
                ck_assert_int_eq(ng_parse_numa_maps(text, &m, &n, &bad), 0);
                ck_assert_msg(n == 1 && m[0].start == 0x7f3cd74ad000, "%s: %zu lines kept", bad_tokens[i], n);
                ck_assert_uint_eq(bad.lines, 1);
                ck_assert_uint_eq(bad.first_line, 1);
                ng_numa_maps_free(m, n);
        }
}
END_TEST

/* Garbage where maps is (random bytes, a file that is not maps): every
 * line is counted, none taken for a mapping. */
START_TEST(test_maps_garbage)
{
        const char *text = "\x7f" "ELF\x02\x01\x01\n"
                           "not a mapping\n"
                           "7f3cd6cad000-7f3cd74ad000 rw-s 00000000 00:01 0 /SYSV00000000 (deleted)\n"
                           "7f3cd6cad000 7f3cd74ad000 rw-s 00000000 00:01 0 /SYSV00000000 (deleted)\n";
        struct ng_map *m = NULL;
        struct ng_parse_skipped bad;
        size_t n = 0;
        ck_assert_int_eq(ng_parse_maps(text, 0, &m, &n, &bad), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(m[0].kind, NG_MAP_SYSV);
        ck_assert_uint_eq(bad.lines, 3);
        ck_assert_uint_eq(bad.first_line, 1);
        ng_maps_free(m, n);
        /* NULL: the caller does not ask */
        ck_assert_int_eq(ng_parse_maps(text, 0, &m, &n, NULL), 0);
        ng_maps_free(m, n);
}
END_TEST

static Suite *maps_suite(void)
{
        Suite *s = suite_create("parse-maps");
        TCase *tc = tcase_create("maps");

        tcase_add_test(tc, test_maps_guest_shared);
        tcase_add_test(tc, test_maps_guest_private);
        tcase_add_test(tc, test_maps_mariadb);
        tcase_add_test(tc, test_maps_pg);
        tcase_add_test(tc, test_maps_edge);
        tcase_add_test(tc, test_maps_garbage);
        suite_add_tcase(s, tc);
        tc = tcase_create("numa_maps");
        tcase_add_test(tc, test_numa_maps_sysv);
        tcase_add_test(tc, test_numa_maps_policies);
        tcase_add_test(tc, test_numa_maps_pg);
        tcase_add_test(tc, test_numa_maps_synthetic_policies);
        tcase_add_test(tc, test_numa_maps_malformed);
        tcase_add_test(tc, test_numa_maps_impossible_nodes);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(maps_suite());
}

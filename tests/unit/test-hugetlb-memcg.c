/* Hugetlb charged to a memory cgroup (Linux 6.6, the cgroup2 mount option
 * memory_hugetlb_accounting) in the hugepage checks, end to end on copies
 * of the captured 6.12 tree guest4-6.12: the mount option read from
 * mountinfo, the cgroup's memory.max, memory.current and memory.stat read
 * (and kept by a snapshot), HUGEPAGE_SIGBUS_RISK raised from them. The
 * bounds themselves are in test-reserve.c and test-rehearse.c.
 *
 * What a copy changes, and why the kernel would show it so:
 *   - proc/self/mountinfo: the cgroup2 line ends in
 *     ",memory_hugetlb_accounting", as cgroup_show_options() prints it once
 *     /sys/fs/cgroup is (re)mounted with it;
 *   - shmid 2 (8 MiB SHM_HUGETLB, --membind=1, 4 pages of 2 MiB) has had
 *     its first page touched only: /proc/sysvipc/shm's rss is that page,
 *     the pool keeps the other three free and reserved (free_hugepages 13
 *     of 14, resv_hugepages 3, /proc/meminfo's HugePages_Free and
 *     HugePages_Rsvd alike: shmget reserved 4, each fault took one), node
 *     1 keeps them free (7 of 8), and pid 231, which touched it, maps one
 *     page (numa_maps dirty=1 N1=1, HugetlbPages 2048 kB);
 *   - pids 231 and its child 233 (the workload of shmid 2) run in cgroup
 *     /hugedb (their cgroup files "0::/hugedb"; no cpuset of its own, so
 *     their Mems_allowed stay), whose memory.current counts the one
 *     hugetlb page charged at its fault and 512 KiB besides, memory.stat
 *     the same (hugetlb 2097152: the line is printed only with the
 *     option), memory.max what each case sets. */

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-audit.h"
#include "ng-config.h"
#include "ng-reserve.h"
#include "ng-snapshot.h"
#include "ng-test.h"

#define TREES NG_FIXTURES "/trees/"
#define MiB (UINT64_C(1) << 20)

static char tmpl[] = "/tmp/ng-test-memcg.XXXXXX";
static const char *troot;

static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", troot, rel);
        for (char *q = path + strlen(troot) + 1; (q = strchr(q, '/')); q++) {
                *q = '\0';
                mkdir(path, 0755);
                *q = '/';
        }
        FILE *f = fopen(path, "we");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        ck_assert_int_eq(fclose(f), 0);
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
        char cmd[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

#define MEMORY_STAT \
        "anon 262144\nfile 0\nkernel 262144\nkernel_stack 32768\npagetables 65536\nsec_pagetables 0\n" \
        "percpu 0\nsock 0\nvmalloc 0\nshmem 0\nzswap 0\nzswapped 0\nfile_mapped 0\nfile_dirty 0\n" \
        "file_writeback 0\nswapcached 0\nanon_thp 0\nfile_thp 0\nshmem_thp 0\ninactive_anon 0\n" \
        "active_anon 262144\ninactive_file 0\nactive_file 0\nunevictable 0\nslab_reclaimable 4096\n" \
        "slab_unreclaimable 16384\nhugetlb %s\nworkingset_refault_anon 0\nworkingset_refault_file 0\n" \
        "workingset_activate_anon 0\nworkingset_activate_file 0\nworkingset_restore_anon 0\n" \
        "workingset_restore_file 0\nworkingset_nodereclaim 0\npgdemote_kswapd 0\npgdemote_direct 0\n" \
        "pgdemote_khugepaged 0\npgpromote_success 0\npgscan 0\npgsteal 0\npgscan_kswapd 0\npgscan_direct 0\n" \
        "pgscan_khugepaged 0\npgsteal_kswapd 0\npgsteal_direct 0\npgsteal_khugepaged 0\npgfault 412\n" \
        "pgmajfault 0\npgrefill 0\npgactivate 0\npgdeactivate 0\npglazyfree 0\npglazyfreed 0\n" \
        "thp_fault_alloc 0\nthp_collapse_alloc 0\nthp_swpout 0\nthp_swpout_fallback 0\n"

/* The copy described above, with memory.max max_text. */
static void derive(const char *max_text, bool option)
{
        strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
        troot = mkdtemp(tmpl);
        ck_assert_ptr_nonnull(troot);
        sh("cp -a '%sguest4-6.12'/. '%s' && rm -f '%s'/numaguard/*.txt '%s'/numaguard/*.json", TREES, troot, troot,
           troot);
        const char *t = troot;
        if (option)
                sh("sed -i -e '/ - cgroup2 /s/$/,memory_hugetlb_accounting/' '%s/proc/self/mountinfo'", t);
        sh("sed -i -e '/^ *0 *2 /s/8388608 *0$/2097152                     0/' '%s/proc/sysvipc/shm'", t);
        put("sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "13\n");
        put("sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages", "3\n");
        put("sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages", "7\n");
        sh("sed -i -e 's/^HugePages_Free: *10$/HugePages_Free:       13/' -e 's/^HugePages_Rsvd: *0$/HugePages_Rsvd:  "
           "      3/' '%s/proc/meminfo'", t);
        sh("sed -i -e 's/^Node 1 HugePages_Free: *4$/Node 1 HugePages_Free:      7/' "
           "'%s/sys/devices/system/node/node1/meminfo'", t);
        sh("sed -i -e '/SYSV/s/dirty=4 N1=4/dirty=1 N1=1/' '%s/proc/231/numa_maps'", t);
        sh("sed -i -e 's/^HugetlbPages:.*/HugetlbPages:\t    2048 kB/' '%s/proc/231/status'", t);
        put("proc/231/cgroup", "0::/hugedb\n");
        put("proc/233/cgroup", "0::/hugedb\n");
        put("sys/fs/cgroup/hugedb/memory.max", "%s\n", max_text);
        put("sys/fs/cgroup/hugedb/memory.current", "%" PRIu64 "\n", 2 * MiB + 512 * 1024);
        put("sys/fs/cgroup/hugedb/memory.stat", MEMORY_STAT, "2097152");
        if (!option)    /* no hugetlb line without the option */
                sh("sed -i '/^hugetlb /d' '%s/sys/fs/cgroup/hugedb/memory.stat'", t);
}

static void rm_copy(void)
{
        sh("rm -rf '%s'", troot);
}

struct seen {
        bool max, current, stat;
};

static void saw(void *userdata, char kind, const char *path, const char *buf, size_t len)
{
        struct seen *w = userdata;
        (void) buf;
        (void) len;
        if (kind != 'f' || !strstr(path, "/sys/fs/cgroup/hugedb/"))
                return;
        w->max |= strstr(path, "/memory.max") != NULL;
        w->current |= strstr(path, "/memory.current") != NULL;
        w->stat |= strstr(path, "/memory.stat") != NULL;
}

struct run {
        struct ng_snapshot *s;
        struct ng_audit *a;
        struct seen seen;
};

static struct run audit(void)
{
        struct run r = { 0 };
        struct ng_path *p = NULL;
        ck_assert_int_eq(ng_path_new(troot, &p), 0);
        ng_path_set_recorder(p, saw, &r.seen);
        int e = ng_snapshot_collect(p, NULL, &r.s);
        ck_assert_msg(e == 0, "collecting %s: %s", troot, strerror(-e));
        ng_path_free(p);
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string("[global]\nmin_segment_size = 1M\n[instance hugedb]\ncgroup = /hugedb\n",
                                               "t.conf", NULL, NULL, &c), 0);
        ck_assert_int_eq(ng_audit_run(r.s, c, &r.a), 0);
        ng_config_free(c);
        return r;
}

static void done(struct run *r)
{
        ng_audit_free(r->a);
        ng_snapshot_free(r->s);
}

static const struct ng_finding *risk(const struct ng_audit *a)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_HUGEPAGE_SIGBUS_RISK)
                        return &a->findings[i];
        return NULL;
}

/* As captured the option is off: the memory files are not read, nothing
 * bounds the faults. */
START_TEST(off_as_captured)
{
        derive("6291456", false);
        struct run r = audit();
        ck_assert_int_eq(ng_snapshot_hugetlb_memcg(r.s), 0);
        const struct ng_cgroup *cg = ng_snapshot_cgroup(r.s, "/hugedb");
        ck_assert_ptr_nonnull(cg);
        ck_assert(!cg->memory.known);
        ck_assert(!r.seen.max && !r.seen.stat);
        const struct ng_instance *in = ng_audit_instance(r.a, "hugedb");
        ck_assert_ptr_nonnull(in);
        struct ng_resv_memcg m;
        ng_resv_memcg(r.s, r.a, in, &m);
        ck_assert_int_eq(m.state, NG_RESV_MEMCG_NONE);
        ck_assert_ptr_null(risk(r.a));
        done(&r);
        rm_copy();
}
END_TEST

/* memory.max 6 MiB: the 3 pages still to fault (6 MiB) beside the 2 MiB
 * charged: critical, whatever else is reclaimed. The node holds them. */
START_TEST(beyond_the_limit)
{
        derive("6291456", true);
        struct run r = audit();
        ck_assert_int_eq(ng_snapshot_hugetlb_memcg(r.s), 1);
        const struct ng_cgroup *cg = ng_snapshot_cgroup(r.s, "/hugedb");
        ck_assert_ptr_nonnull(cg);
        ck_assert(cg->memory.known && cg->memory.hugetlb_known);
        ck_assert_uint_eq(cg->memory.max_bytes, 6 * MiB);
        ck_assert_uint_eq(cg->memory.current_bytes, 2 * MiB + 512 * 1024);
        ck_assert_uint_eq(cg->memory.hugetlb_bytes, 2 * MiB);
        ck_assert(r.seen.max && r.seen.current && r.seen.stat);         /* a snapshot keeps them */
        struct ng_resv_memcg m;
        ng_resv_memcg(r.s, r.a, ng_audit_instance(r.a, "hugedb"), &m);
        ck_assert_int_eq(m.state, NG_RESV_MEMCG_BEYOND);
        ck_assert_uint_eq(m.unfaulted_bytes, 6 * MiB);
        ck_assert(!m.at_most);
        const struct ng_finding *f = risk(r.a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert_str_eq(f->instance, "hugedb");
        ck_assert(f->value == 2 * MiB);
        ck_assert_msg(strstr(f->message, "6 MiB of hugepages not yet faulted (shmid 2 (key 0x00000000)) are charged "
                             "at first touch to cgroup /hugedb (memory_hugetlb_accounting), whose memory.max 6 MiB "
                             "leaves 3.5 MiB (it holds 2.5 MiB, 2 MiB of it hugetlb)"), "%s", f->message);
        /* only one: node 1's free pages cover the three */
        for (size_t i = 0; i < r.a->n_findings; i++)
                ck_assert(r.a->findings[i].code != NG_CODE_HUGEPAGE_SIGBUS_RISK || &r.a->findings[i] == f);
        done(&r);
        rm_copy();
}
END_TEST

/* 8.25 MiB: 5.75 MiB free, 6.25 MiB beside its hugetlb: the faults must
 * reclaim the rest first, a warning; 9 MiB: room. */
START_TEST(reclaim_then_room)
{
        derive("8650752", true);
        struct run r = audit();
        const struct ng_finding *f = risk(r.a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(f->value == 256 * 1024);
        ck_assert_ptr_nonnull(strstr(f->message, "only if the charge first reclaims"));
        done(&r);
        put("sys/fs/cgroup/hugedb/memory.max", "9437184\n");
        r = audit();
        ck_assert_ptr_null(risk(r.a));
        done(&r);
        put("sys/fs/cgroup/hugedb/memory.max", "max\n");
        r = audit();
        ck_assert_uint_eq(ng_snapshot_cgroup(r.s, "/hugedb")->memory.max_bytes, UINT64_MAX);
        ck_assert(!r.seen.stat);                /* no limit: memory.stat is not needed */
        ck_assert_ptr_null(risk(r.a));
        done(&r);
        rm_copy();
}
END_TEST

/* A memory.max that holds no limit the kernel prints: a problem of the
 * snapshot (AUDIT_INCOMPLETE), and no bound made of it. */
START_TEST(garbage_limit)
{
        derive("lots", true);
        struct run r = audit();
        ck_assert(!ng_snapshot_cgroup(r.s, "/hugedb")->memory.known);
        bool said = false;
        for (size_t i = 0; i < r.s->n_problems && i < NG_MAX_PROBLEMS; i++)
                said |= strstr(r.s->problems[i].path, "/hugedb/memory.max") != NULL;
        ck_assert(said);
        struct ng_resv_memcg m;
        ng_resv_memcg(r.s, r.a, ng_audit_instance(r.a, "hugedb"), &m);
        ck_assert_int_eq(m.state, NG_RESV_MEMCG_UNKNOWN);
        ck_assert_ptr_null(risk(r.a));
        bool incomplete = false;
        for (size_t i = 0; i < r.a->n_findings; i++)
                incomplete |= r.a->findings[i].code == NG_CODE_AUDIT_INCOMPLETE;
        ck_assert(incomplete);
        done(&r);
        rm_copy();
}
END_TEST

int main(void)
{
        Suite *s = suite_create("hugetlb-memcg");
        TCase *tc = tcase_create("trees");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, off_as_captured);
        tcase_add_test(tc, beyond_the_limit);
        tcase_add_test(tc, reclaim_then_room);
        tcase_add_test(tc, garbage_limit);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* The page sizes the kernel may fold a 4 KiB shmem segment into
 * (ng_segment_thp(), lib/2-analyze/shmem-thp.c), on the captured trees
 * guest4-6.12 (Debian 13's 6.12: per-size shmem_enabled files, all never
 * but 2048kB inherit) and guest4-v2 (Debian 12's 6.1: the top-level
 * setting alone, which that capture did not keep), and on copies of them
 * with the settings changed. A copy changes only the files concerned, each
 * as the kernel shows it after the write named beside it: a sysfs choice
 * file brackets the value written (mm/huge_memory.c and mm/shmem.c print
 * every choice and bracket the current one), a tmpfs mount shows huge= in
 * its super options once mounted with it (shmem_show_options, nothing for
 * never), a node's meminfo counts shmem in PMD-size pages as
 * ShmemHugePages. */

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-report.h"
#include "ng-segments.h"
#include "ng-snapshot.h"
#include "ng-test.h"
#include "util.h"

#define TREES NG_FIXTURES "/trees/"
#define THP "sys/kernel/mm/transparent_hugepage/"

static char tmpl[] = "/tmp/ng-test-thp.XXXXXX";
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
        char cmd[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/* A copy of a captured tree, its golden outputs left out. */
static void copy_of(const char *tree)
{
        strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
        troot = mkdtemp(tmpl);
        ck_assert_ptr_nonnull(troot);
        sh("cp -a '%s%s'/. '%s' && rm -f '%s'/numaguard/*.txt '%s'/numaguard/*.json", TREES, tree, troot, troot,
           troot);
}

static void rm_copy(void)
{
        sh("rm -rf '%s'", troot);
}

/* shmem_enabled as the kernel prints it after "echo VALUE >" it: the
 * top-level file offers deny and force, a size's offers inherit. */
static void top_is(const char *value)
{
        static const char *const words[] = { "always", "within_size", "advise", "never", "deny", "force" };
        char line[128] = "";
        for (size_t i = 0; i < 6; i++)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), strcmp(words[i], value) ? "%s%s" : "%s[%s]",
                         i ? " " : "", words[i]);
        put(THP "shmem_enabled", "%s\n", line);
}

static void size_is(unsigned kib, const char *value)
{
        static const char *const words[] = { "always", "inherit", "within_size", "advise", "never" };
        char line[128] = "", rel[128];
        for (size_t i = 0; i < 5; i++)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), strcmp(words[i], value) ? "%s%s" : "%s[%s]",
                         i ? " " : "", words[i]);
        snprintf(rel, sizeof(rel), THP "hugepages-%ukB/shmem_enabled", kib);
        put(rel, "%s\n", line);
}

/* /dev/shm mounted (or remounted) with huge=VALUE: the option ends its
 * super options in mountinfo. */
static void dev_shm_huge(const char *value)
{
        sh("sed -i -e '/ \\/dev\\/shm /s/$/,huge=%s/' '%s/proc/self/mountinfo'", value, troot);
}

struct tree {
        struct ng_snapshot *s;
        struct ng_segment *v;
        size_t n;
};

static struct tree load(const char *root)
{
        struct tree t = { 0 };
        struct ng_path *p = NULL;
        ck_assert_int_eq(ng_path_new(root, &p), 0);
        int r = ng_snapshot_collect(p, NULL, &t.s);
        ck_assert_msg(r == 0, "collecting %s: %s", root, strerror(-r));
        ng_path_free(p);
        ck_assert_int_eq(ng_segments_build(t.s, &t.v, &t.n), 0);
        return t;
}

static void drop(struct tree *t)
{
        ng_segments_free(t->v, t->n);
        ng_snapshot_free(t->s);
}

static const struct ng_segment *seg_of(const struct tree *t, enum ng_seg_kind kind, int32_t shmid)
{
        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].kind == kind && (kind != NG_SEG_SYSV || t->v[i].shmid == shmid))
                        return &t->v[i];
        ck_abort_msg("no segment of kind %d (shmid %d)", kind, shmid);
        return NULL;
}

#define SYSV(t) seg_of(t, NG_SEG_SYSV, 0)       /* 8 MiB of 4 KiB pages */
#define HUGE(t) seg_of(t, NG_SEG_SYSV, 2)       /* 8 MiB SHM_HUGETLB */
#define FILE_(t) seg_of(t, NG_SEG_FILE, 0)      /* /dev/shm/ora_ORCL_granule_1, 4 MiB */
#define ANON(t) seg_of(t, NG_SEG_ANON_SHARED, 0) /* 8 MiB /dev/zero */

/* "2048:always,64:advised", "none", or "unknown". */
static const char *sizes(const struct ng_segment *seg)
{
        static char buf[256];
        const struct ng_thp_fold *f = &seg->thp;
        if (f->state == NG_THP_FOLD_UNKNOWN)
                return "unknown";
        if (f->state == NG_THP_FOLD_NOT_APPLICABLE)
                return "n/a";
        if (!f->n_sizes)
                return "none";
        buf[0] = '\0';
        for (size_t i = 0; i < f->n_sizes; i++)
                snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%" PRIu64 ":%s", i ? "," : "",
                         f->sizes[i].page_kib, ng_thp_when_name(f->sizes[i].when));
        return buf;
}

#define FOLDS(seg, want) do { \
        const struct ng_segment *seg_ = (seg); \
        ck_assert_msg(!strcmp(sizes(seg_), want), "%s: %s, expected %s (%s)", seg_->name, sizes(seg_), want, \
                      seg_->thp.basis); \
} while (0)

/* ---- as captured ---- */

START_TEST(captured_6_12)
{
        struct tree t = load(TREES "guest4-6.12");
        const struct ng_shmem_thp *k = &t.s->knobs.shmem_thp;
        ck_assert_int_eq(k->top, NG_SHMEM_HUGE_NEVER);
        ck_assert_uint_eq(k->n_sizes, 9);
        ck_assert_uint_eq(k->sizes[0].page_kib, 8);
        ck_assert_uint_eq(k->sizes[8].page_kib, 2048);
        ck_assert_int_eq(k->sizes[8].setting, NG_SHMEM_HUGE_INHERIT);
        ck_assert_int_eq(k->sizes[3].setting, NG_SHMEM_HUGE_NEVER);
        /* no hpage_pmd_size in this capture: the largest size is the PMD's */
        ck_assert_uint_eq(k->pmd_kib, 2048);
        FOLDS(SYSV(&t), "none");
        FOLDS(FILE_(&t), "none");
        FOLDS(ANON(&t), "none");
        FOLDS(HUGE(&t), "n/a");
        ck_assert_int_eq(SYSV(&t)->thp.per_size, NG_THP_PER_SIZE_NOT_USED);
        ck_assert_int_eq(ANON(&t)->thp.per_size, NG_THP_PER_SIZE_APPLIED);
        ck_assert_int_eq(FILE_(&t)->tmpfs_huge, NG_SHMEM_HUGE_NEVER);
        ck_assert_ptr_nonnull(strstr(ANON(&t)->thp.basis, "2048kB inherit, the others never"));
        drop(&t);
}
END_TEST

/* 6.1 captured before numaguard read shmem_enabled: unknown, never none. */
START_TEST(captured_6_1)
{
        struct tree t = load(TREES "guest4-v2");
        ck_assert_int_eq(t.s->knobs.shmem_thp.top, NG_SHMEM_HUGE_UNKNOWN);
        FOLDS(SYSV(&t), "unknown");
        FOLDS(FILE_(&t), "unknown");
        FOLDS(ANON(&t), "unknown");
        ck_assert_ptr_nonnull(strstr(SYSV(&t)->thp.basis, "shmem_enabled is not in this tree"));
        ck_assert_int_eq(ANON(&t)->thp.per_size, NG_THP_PER_SIZE_UNKNOWN);
        FOLDS(HUGE(&t), "n/a");
        drop(&t);
}
END_TEST

/* 5.10 kept its top-level never and says it has no per-size files. */
START_TEST(captured_5_10)
{
        struct tree t = load(TREES "guest4-5.10");
        FOLDS(SYSV(&t), "none");
        FOLDS(ANON(&t), "none");
        ck_assert_int_eq(ANON(&t)->thp.per_size, NG_THP_PER_SIZE_ABSENT);
        drop(&t);
}
END_TEST

/* ---- 6.12 with the settings changed ---- */

/* echo always > shmem_enabled: SysV and anonymous shared memory get 2 MiB
 * pages (hugepages-2048kB inherits); the /dev/shm file does not, its
 * mount says never. */
START_TEST(top_always)
{
        copy_of("guest4-6.12");
        top_is("always");
        struct tree t = load(troot);
        FOLDS(SYSV(&t), "2048:always");
        FOLDS(ANON(&t), "2048:always");
        FOLDS(FILE_(&t), "none");
        drop(&t);
        rm_copy();
}
END_TEST

/* within_size: a PMD page where it lies within the 8 MiB segment;
 * advise: only a mapping madvise()d MADV_HUGEPAGE. */
START_TEST(top_within_size_and_advise)
{
        copy_of("guest4-6.12");
        top_is("within_size");
        struct tree t = load(troot);
        FOLDS(SYSV(&t), "2048:within_size");
        FOLDS(ANON(&t), "2048:within_size");
        /* A segment smaller than the PMD size has no such page: as advise. */
        struct ng_segment small = *SYSV(&t);
        small.bytes = 1 << 20;
        ng_segment_thp(t.s, &small, &small.thp);
        FOLDS(&small, "2048:advised");
        drop(&t);
        top_is("advise");
        t = load(troot);
        FOLDS(SYSV(&t), "2048:advised");
        FOLDS(ANON(&t), "2048:advised");
        drop(&t);
        rm_copy();
}
END_TEST

/* force: every shmem, tmpfs files whatever their mount says, at the PMD
 * size; anonymous shared memory gets exactly the sizes set to inherit.
 * deny: nothing, whatever a size says. */
START_TEST(top_force_and_deny)
{
        copy_of("guest4-6.12");
        top_is("force");
        size_is(64, "always");
        struct tree t = load(troot);
        FOLDS(SYSV(&t), "2048:always");
        FOLDS(FILE_(&t), "2048:always");
        FOLDS(ANON(&t), "2048:always");         /* not 64K: force takes inherit alone */
        drop(&t);
        top_is("deny");
        t = load(troot);
        FOLDS(SYSV(&t), "none");
        FOLDS(FILE_(&t), "none");
        FOLDS(ANON(&t), "none");
        ck_assert_ptr_nonnull(strstr(ANON(&t)->thp.basis, "deny"));
        drop(&t);
        rm_copy();
}
END_TEST

/* Per size, top never: anonymous shared memory takes each size as set
 * (inherit follows never: none); SysV never sees the per-size settings. */
START_TEST(per_size_settings)
{
        copy_of("guest4-6.12");
        size_is(64, "always");
        size_is(32, "advise");
        size_is(16, "within_size");
        size_is(1024, "never");
        struct tree t = load(troot);
        FOLDS(ANON(&t), "64:always,32:advised,16:within_size");
        FOLDS(SYSV(&t), "none");
        FOLDS(FILE_(&t), "none");
        /* A segment smaller than a size does not get it: the page must
         * fit in the mapping (and within i_size for within_size). */
        struct ng_segment small = *ANON(&t);
        small.bytes = 24 << 10;
        ng_segment_thp(t.s, &small, &small.thp);
        FOLDS(&small, "16:within_size");
        drop(&t);
        /* inherit follows the top-level setting, size by size */
        top_is("advise");
        size_is(1024, "inherit");
        size_is(64, "inherit");
        t = load(troot);
        FOLDS(ANON(&t), "2048:advised,1024:advised,64:advised,32:advised,16:within_size");
        FOLDS(SYSV(&t), "2048:advised");
        drop(&t);
        /* a size whose file says nothing the kernel prints: unknown */
        put(THP "hugepages-128kB/shmem_enabled", "garbage\n");
        t = load(troot);
        FOLDS(ANON(&t), "unknown");
        ck_assert_ptr_nonnull(strstr(ANON(&t)->thp.basis, "hugepages-128kB/shmem_enabled"));
        FOLDS(SYSV(&t), "2048:advised");
        drop(&t);
        rm_copy();
}
END_TEST

/* mount -o remount,huge=... /dev/shm: the mount decides for its files,
 * at the PMD size, unless shmem_enabled is deny or force. */
START_TEST(tmpfs_huge_option)
{
        static const struct {
                const char *huge, *want;
        } cases[] = {
                { "always", "2048:always" }, { "within_size", "2048:within_size" }, { "advise", "2048:advised" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                copy_of("guest4-6.12");
                dev_shm_huge(cases[i].huge);
                struct tree t = load(troot);
                FOLDS(FILE_(&t), cases[i].want);
                FOLDS(SYSV(&t), "none");        /* shmem_enabled never */
                drop(&t);
                if (i == 0) {
                        top_is("deny");
                        t = load(troot);
                        FOLDS(FILE_(&t), "none");
                        drop(&t);
                }
                rm_copy();
        }
}
END_TEST

/* ---- 6.1 with its top-level setting ---- */

/* The files a 6.1 capture by this numaguard would hold: shmem_enabled,
 * hpage_pmd_size (2 MiB on x86-64) and the probes no file shows, as the
 * 6.1 guest answers them (a v1 cpuset may be mounted, no PROCMAP_QUERY
 * before 6.11). No hugepages-<size>kB/shmem_enabled: 6.1 has none. */
static void as_6_1(const char *top)
{
        copy_of("guest4-v2");
        top_is(top);
        put(THP "hpage_pmd_size", "2097152\n");
        put("numaguard/features", "cgroup_v1_cpuset present a v1 cgroup may bind cpuset (fsconfig(2))\n"
            "procmap_query absent the ioctl on /proc/PID/maps answers ENOTTY\n");
}

START_TEST(top_only_kernel)
{
        as_6_1("always");
        struct tree t = load(troot);
        ck_assert_int_eq(t.s->topo.features[NG_FEATURE_SHMEM_THP_SIZES].state, NG_FEATURE_ABSENT);
        FOLDS(SYSV(&t), "2048:always");
        FOLDS(ANON(&t), "2048:always");
        ck_assert_int_eq(ANON(&t)->thp.per_size, NG_THP_PER_SIZE_ABSENT);
        FOLDS(FILE_(&t), "none");
        drop(&t);
        top_is("within_size");
        dev_shm_huge("always");
        t = load(troot);
        FOLDS(SYSV(&t), "2048:within_size");
        FOLDS(ANON(&t), "2048:within_size");
        FOLDS(FILE_(&t), "2048:always");
        drop(&t);
        top_is("never");
        t = load(troot);
        FOLDS(SYSV(&t), "none");
        FOLDS(FILE_(&t), "2048:always");
        drop(&t);
        /* Without the PMD size: none needs no size, a page of it does. */
        sh("rm '%s/" THP "hpage_pmd_size'", troot);
        t = load(troot);
        FOLDS(SYSV(&t), "none");
        FOLDS(FILE_(&t), "unknown");
        ck_assert_ptr_nonnull(strstr(FILE_(&t)->thp.basis, "hpage_pmd_size"));
        drop(&t);
        rm_copy();
}
END_TEST

/* A tree that does not say whether the kernel probed its features: SysV
 * and files are told by shmem_enabled alone, anonymous shared memory
 * would need the per-size files it cannot rule out: unknown. */
START_TEST(per_size_unknown)
{
        as_6_1("advise");
        sh("rm '%s/numaguard/features'", troot);
        struct tree t = load(troot);
        ck_assert_int_eq(t.s->topo.features[NG_FEATURE_SHMEM_THP_SIZES].state, NG_FEATURE_UNKNOWN);
        FOLDS(SYSV(&t), "2048:advised");
        FOLDS(ANON(&t), "unknown");
        ck_assert_int_eq(ANON(&t)->thp.per_size, NG_THP_PER_SIZE_UNKNOWN);
        drop(&t);
        rm_copy();
}
END_TEST

/* ---- what a snapshot keeps ---- */

struct seen {
        bool top, pmd, size64, mountinfo;
};

static void saw(void *userdata, char kind, const char *path, const char *buf, size_t len)
{
        struct seen *w = userdata;
        (void) buf;
        (void) len;
        if (kind != 'f')
                return;
        size_t n = strlen(path);
#define ENDS(s) (n >= strlen(s) && !strcmp(path + n - strlen(s), s))
        w->top |= ENDS("/transparent_hugepage/shmem_enabled");
        w->pmd |= ENDS("/transparent_hugepage/hpage_pmd_size");
        w->size64 |= ENDS("/transparent_hugepage/hugepages-64kB/shmem_enabled");
        w->mountinfo |= ENDS("/proc/self/mountinfo");
#undef ENDS
}

/* numaguardctl snapshot copies what the collection read: the settings the
 * folding rests on are among them. */
START_TEST(snapshot_keeps_the_settings)
{
        copy_of("guest4-6.12");
        put(THP "hpage_pmd_size", "2097152\n");
        struct ng_path *p = NULL;
        ck_assert_int_eq(ng_path_new(troot, &p), 0);
        struct seen w = { 0 };
        ng_path_set_recorder(p, saw, &w);
        struct ng_snapshot *s = NULL;
        ck_assert_int_eq(ng_snapshot_collect(p, NULL, &s), 0);
        ck_assert(w.top && w.pmd && w.size64 && w.mountinfo);
        ck_assert_uint_eq(s->knobs.shmem_thp.pmd_kib, 2048);
        ng_snapshot_free(s);
        ng_path_free(p);
        rm_copy();
}
END_TEST

/* ---- the reports ---- */

static char *render(const struct tree *t, bool segments)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_ptr_nonnull(f);
        if (segments)
                ck_assert_int_eq(ng_report_segments_text(t->s, t->v, t->n, f), 0);
        else
                ck_assert_int_eq(ng_report_topology_text(t->s, f), 0);
        fclose(f);
        return buf;
}

/* shmid 0's 8 MiB on node 3 allocated as 2 MiB pages under shmem_enabled
 * always, all mapped by PMD: node 3's meminfo counts them. */
START_TEST(reports)
{
        copy_of("guest4-6.12");
        top_is("always");
        size_is(64, "advise");
        sh("sed -i -e 's/^\\(Node 3 ShmemHugePages: *\\)0 kB/\\18192 kB/' "
           "-e 's/^\\(Node 3 ShmemPmdMapped: *\\)0 kB/\\18192 kB/' '%s/sys/devices/system/node/node3/meminfo'", troot);
        struct tree t = load(troot);
        char *text = render(&t, true);
        ck_assert_msg(strstr(text, "transparent hugepages: the kernel may fold it into 2M always (shmem_enabled "
                             "always, which decides for System V shared memory"), "%s", text);
        ck_assert_msg(strstr(text, "transparent hugepages: the kernel may fold it into 2M always, 64K where "
                             "madvised (shmem_enabled always; per-size settings"), "%s", text);
        ck_assert_msg(strstr(text, "transparent hugepages: none (huge=never on its mount"), "%s", text);
        free(text);
        text = render(&t, false);
        ck_assert_msg(strstr(text, "\nshmem in transparent hugepages (ShmemHugePages): node 3 8 MiB (8 MiB "
                             "PMD-mapped); none on the others\n"), "%s", text);
        free(text);
        struct json_object *j = ng_segment_json(ANON(&t));
        struct json_object *thp = json_object_object_get(j, "shmem_thp");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(thp, "state")), "known");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(thp, "per_size")), "applied");
        struct json_object *a = json_object_object_get(thp, "sizes");
        ck_assert_uint_eq(json_object_array_length(a), 2);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(json_object_array_get_idx(a, 1), "page_kib")), 64);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(a, 1), "when")),
                         "advised");
        json_object_put(j);
        j = ng_report_topology_json(t.s);
        struct json_object *n3 = json_object_array_get_idx(json_object_object_get(j, "nodes"), 3);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(n3, "shmem_huge_kib")), 8192);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(n3, "shmem_pmd_mapped_kib")), 8192);
        json_object_put(j);
        drop(&t);
        /* a node whose meminfo has no such line (a kernel without
         * transparent hugepages prints none): unknown there */
        sh("sed -i -e '/ShmemHugePages/d' '%s/sys/devices/system/node/node1/meminfo'", troot);
        t = load(troot);
        text = render(&t, false);
        ck_assert_msg(strstr(text, "(ShmemHugePages): node 3 8 MiB (8 MiB PMD-mapped); unknown on node 1; none "
                             "on the others\n"), "%s", text);
        free(text);
        j = ng_report_topology_json(t.s);
        struct json_object *n1 = json_object_array_get_idx(json_object_object_get(j, "nodes"), 1);
        struct json_object *v;
        ck_assert(json_object_object_get_ex(n1, "shmem_huge_kib", &v) && v == NULL);
        json_object_put(j);
        drop(&t);
        rm_copy();
}
END_TEST

int main(void)
{
        Suite *s = suite_create("shmem-thp");
        TCase *tc = tcase_create("trees");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, captured_6_12);
        tcase_add_test(tc, captured_6_1);
        tcase_add_test(tc, captured_5_10);
        tcase_add_test(tc, top_always);
        tcase_add_test(tc, top_within_size_and_advise);
        tcase_add_test(tc, top_force_and_deny);
        tcase_add_test(tc, per_size_settings);
        tcase_add_test(tc, tmpfs_huge_option);
        tcase_add_test(tc, top_only_kernel);
        tcase_add_test(tc, per_size_unknown);
        tcase_add_test(tc, snapshot_keeps_the_settings);
        tcase_add_test(tc, reports);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

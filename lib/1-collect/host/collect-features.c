/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: what the running kernel offers that numaguard reads or relies
 * on (enum ng_feature). Each is probed: a file or directory the kernel
 * exports, a v1 cgroup option it accepts, an ioctl it answers. The two
 * probes no file shows are kept in a snapshot (NG_PATH_FEATURES_FILE) and
 * replayed by a --root collection. Only the hugetlb_shm_group rule goes by
 * the release: nothing else shows it. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

#include "cleanup.h"
#include "host-internal.h"
#include "parse.h"
#include "ng-snapshot.h"
#include "util.h"

static const char *const feature_names[NG_FEATURE_MAX_] = {
        [NG_FEATURE_CGROUP_V1_CPUSET] = "cgroup_v1_cpuset",
        [NG_FEATURE_CGROUP_V2_CPUSET] = "cgroup_v2_cpuset",
        [NG_FEATURE_MEMORY_TIERS] = "memory_tiers",
        [NG_FEATURE_DEMOTION] = "demotion",
        [NG_FEATURE_WEIGHTED_INTERLEAVE] = "weighted_interleave",
        [NG_FEATURE_SHMEM_THP_SIZES] = "shmem_thp_sizes",
        [NG_FEATURE_DAMON] = "damon",
        [NG_FEATURE_PROMO_WMARK] = "promo_watermark",
        [NG_FEATURE_PROCMAP_QUERY] = "procmap_query",
        [NG_FEATURE_HUGETLB_SHM_GROUP_ONLY] = "hugetlb_shm_group_only",
};

const char *ng_feature_name(enum ng_feature f)
{
        return (unsigned) f < NG_FEATURE_MAX_ ? feature_names[f] : NULL;
}

const char *ng_feature_state_name(enum ng_feature_state st)
{
        switch (st) {
        case NG_FEATURE_PRESENT:
                return "present";
        case NG_FEATURE_ABSENT:
                return "absent";
        case NG_FEATURE_UNKNOWN:
                break;
        }
        return "unknown";
}

void ng_feature_set(struct ng_topology *t, enum ng_feature f, enum ng_feature_state st, const char *fmt, ...)
{
        va_list ap;
        t->features[f].state = st;
        va_start(ap, fmt);
        vsnprintf(t->features[f].detail, sizeof(t->features[f].detail), fmt, ap);
        va_end(ap);
}
bool ng_feature_found(struct ng_topology *t, enum ng_feature f, const char *path, int r)
{
        if (r >= 0)
                return true;
        ng_feature_set(t, f, r == -ENOENT ? NG_FEATURE_ABSENT : NG_FEATURE_UNKNOWN, "%s: %s", path,
            r == -ENOENT ? "none" : strerror(-r));
        return false;
}

void ng_feature_add_word(char *buf, size_t size, const char *fmt, ...)
{
        size_t n = strlen(buf);
        if (n + 3 >= size)
                return;
        if (n) {
                memcpy(buf + n, ", ", 3);
                n += 2;
        }
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + n, size - n, fmt, ap);
        va_end(ap);
}

static void probe_v2_cpuset(struct collector *c, struct ng_topology *t)
{
        static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                _cleanup_free_ char *buf = NULL;
                int r = ng_collect_read(c, &buf, NULL, "%s/cgroup.controllers", roots[i]);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        ng_feature_set(t, NG_FEATURE_CGROUP_V2_CPUSET, NG_FEATURE_UNKNOWN, "%s/cgroup.controllers: %s",
                                       roots[i], strerror(-r));
                        return;
                }
                bool has = false;
                for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
                        has |= !strcmp(w, "cpuset");
                ng_feature_set(t, NG_FEATURE_CGROUP_V2_CPUSET, has ? NG_FEATURE_PRESENT : NG_FEATURE_ABSENT,
                    has ? "cpuset in %s/cgroup.controllers" : "no cpuset in %s/cgroup.controllers", roots[i]);
                return;
        }
        ng_feature_set(t, NG_FEATURE_CGROUP_V2_CPUSET, NG_FEATURE_ABSENT, "no cgroup v2 hierarchy at /sys/fs/cgroup or "
            "/sys/fs/cgroup/unified");
}

/* Whether a v1 hierarchy may bind the cpuset controller: a filesystem
 * context for "cgroup" is opened and told "cpuset", which the kernel
 * refuses (EINVAL, "Unknown subsys name") when it has no v1 cpuset
 * (6.12 with CONFIG_CPUSETS_V1=n). Nothing is created or mounted: the
 * context is closed before FSCONFIG_CMD_CREATE. fsopen(2) needs
 * CAP_SYS_ADMIN; the service's system call filter refuses it (EPERM). */
static void probe_v1_cpuset_live(struct ng_topology *t)
{
        _cleanup_close_ int fd = (int) syscall(SYS_fsopen, "cgroup", FSOPEN_CLOEXEC);
        if (fd < 0) {
                ng_feature_set(t, NG_FEATURE_CGROUP_V1_CPUSET, NG_FEATURE_UNKNOWN, "fsopen(2) of a cgroup context: %s",
                    strerror(errno));
                return;
        }
        int r = (int) syscall(SYS_fsconfig, fd, FSCONFIG_SET_FLAG, "cpuset", NULL, 0);
        int e = errno;
        char msg[128] = "";
        ssize_t n = r < 0 ? read(fd, msg, sizeof(msg) - 1) : 0;     /* "e cgroup: Unknown subsys name 'cpuset'" */
        msg[n > 0 ? n : 0] = '\0';
        msg[strcspn(msg, "\n")] = '\0';
        if (r == 0)
                ng_feature_set(t, NG_FEATURE_CGROUP_V1_CPUSET, NG_FEATURE_PRESENT,
                               "a v1 cgroup may bind cpuset (fsconfig(2))");
        else if (e == EINVAL)
                ng_feature_set(t, NG_FEATURE_CGROUP_V1_CPUSET, NG_FEATURE_ABSENT,
                               "the kernel refuses a v1 cpuset (fsconfig(2): %s)",
                               msg[0] == 'e' && msg[1] == ' ' ? msg + 2 : strerror(e));
        else
                ng_feature_set(t, NG_FEATURE_CGROUP_V1_CPUSET, NG_FEATURE_UNKNOWN, "fsconfig(2) cpuset: %s",
                               strerror(e));
}

/* struct procmap_query of <linux/fs.h> (Linux 6.11), for older headers. */
struct procmap_query_v1 {
        uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
        uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
        uint64_t vma_name_addr, build_id_addr;
};
#define NG_PROCMAP_QUERY _IOWR('f', 17, struct procmap_query_v1)

/* Asks /proc/self/maps for the mapping of this function. */
static void probe_procmap_query_live(struct ng_topology *t)
{
        _cleanup_close_ int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                ng_feature_set(t, NG_FEATURE_PROCMAP_QUERY, NG_FEATURE_UNKNOWN, "/proc/self/maps: %s", strerror(errno));
                return;
        }
        struct procmap_query_v1 q = { .size = sizeof(q), .query_addr = (uintptr_t) probe_procmap_query_live };
        int r = ioctl(fd, NG_PROCMAP_QUERY, &q);
        int e = errno;
        if (r == 0)
                ng_feature_set(t, NG_FEATURE_PROCMAP_QUERY, NG_FEATURE_PRESENT,
                               "the PROCMAP_QUERY ioctl on /proc/PID/maps answers");
        else if (e == ENOTTY)
                ng_feature_set(t, NG_FEATURE_PROCMAP_QUERY, NG_FEATURE_ABSENT,
                               "the ioctl on /proc/PID/maps answers ENOTTY");
        else
                ng_feature_set(t, NG_FEATURE_PROCMAP_QUERY, NG_FEATURE_UNKNOWN, "PROCMAP_QUERY: %s", strerror(e));
}

/* The probes no file shows, kept in a snapshot as "NAME STATE DETAIL". */
static const enum ng_feature kept[] = { NG_FEATURE_CGROUP_V1_CPUSET, NG_FEATURE_PROCMAP_QUERY };

static void record_kept(struct collector *c, const struct ng_topology *t)
{
        char text[1024];
        size_t n = 0;
        for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
                const struct ng_feature_probe *fp = &t->features[kept[i]];
                int w = snprintf(text + n, sizeof(text) - n, "%s %s %s\n", ng_feature_name(kept[i]),
                                 ng_feature_state_name(fp->state), fp->detail);
                if (w < 0 || (size_t) w >= sizeof(text) - n)
                        break;
                n += (size_t) w;
        }
        ng_path_record(c->p, NG_PATH_FEATURES_FILE, text, n);
}

/* false when the tree has no NG_PATH_FEATURES_FILE: captured before
 * numaguard probed the kernel's features */
static bool replay_kept(struct collector *c, struct ng_topology *t)
{
        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                ng_feature_set(t, kept[i], NG_FEATURE_UNKNOWN, "not in this tree (%s)", NG_PATH_FEATURES_FILE);
        _cleanup_free_ char *buf = NULL;
        if (ng_collect_read(c, &buf, NULL, "%s", NG_PATH_FEATURES_FILE) < 0)
                return false;
        for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct ng_feature_line fl;
                if (ng_parse_feature_line(line, &fl) < 0)
                        continue;
                enum ng_feature_state st = !strcmp(fl.state, "present") ? NG_FEATURE_PRESENT
                        : !strcmp(fl.state, "absent") ? NG_FEATURE_ABSENT : NG_FEATURE_UNKNOWN;
                for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                        if (!strcmp(fl.name, ng_feature_name(kept[i])))
                                ng_feature_set(t, kept[i], st, "%s", fl.detail);
        }
        return true;
}

static void probe_weighted_interleave(struct collector *c, struct ng_topology *t)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        if (!ng_feature_found(t, NG_FEATURE_WEIGHTED_INTERLEAVE, NG_SYS_WEIGHTED_INTERLEAVE_DIR,
                               ng_path_list(c->reads, &names, &n, NG_SYS_WEIGHTED_INTERLEAVE_DIR)))
                return;
        char list[160] = "";
        for (size_t i = 0; i < n; i++) {
                unsigned node;
                uint64_t w;
                if (ng_parse_prefixed_id(names[i], "node", 1u << 16, &node) == 0 &&
                    ng_path_read_u64(c->reads, &w, NG_SYS_WEIGHTED_INTERLEAVE_DIR "/%s", names[i]) == 0 && w <= 255) {
                        ng_feature_add_word(list, sizeof(list), "node%u %u", node, (unsigned) w);
                        for (size_t k = 0; k < t->n_nodes; k++)
                                if (t->nodes[k].id == (int) node)
                                        t->nodes[k].interleave_weight = (unsigned) w;
                }
                else if (!strcmp(names[i], "auto") &&
                         ng_path_read_u64(c->reads, &w, NG_SYS_WEIGHTED_INTERLEAVE_DIR "/auto") != -ENOENT)
                        ng_feature_add_word(list, sizeof(list), "auto");
        }
        ng_feature_set(t, NG_FEATURE_WEIGHTED_INTERLEAVE, NG_FEATURE_PRESENT, "weights %s",
                       list[0] ? list : "none readable");
}

static int cmp_thp_size(const void *a, const void *b)
{
        const __typeof__(((struct ng_shmem_thp *) 0)->sizes[0]) *x = a, *y = b;
        return (x->page_kib > y->page_kib) - (x->page_kib < y->page_kib);
}

/* The bracketed choice of a shmem_enabled file, UNKNOWN when none is one
 * the kernel prints for it (inherit only per size). */
static enum ng_shmem_huge shmem_choice(const char *buf, bool per_size, char *word, size_t size)
{
        if (ng_parse_bracketed_choice(buf, word, size) < 0)
                return NG_SHMEM_HUGE_UNKNOWN;
        enum ng_shmem_huge h = ng_shmem_huge_from_name(word);
        bool ok = per_size ? h != NG_SHMEM_HUGE_DENY && h != NG_SHMEM_HUGE_FORCE : h != NG_SHMEM_HUGE_INHERIT;
        return ok ? h : NG_SHMEM_HUGE_UNKNOWN;
}

/* Per-size THP for shmem: transparent_hugepage/hugepages-<N>kB/shmem_enabled;
 * the top-level shmem_enabled and the PMD size (hpage_pmd_size) with them,
 * kept in the knobs for the segments' folding (ng_segment_thp()). */
static void probe_shmem_thp(struct collector *c, struct ng_topology *t, struct ng_shmem_thp *k)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        int r = ng_path_list(c->reads, &names, &n, NG_SYS_THP_DIR);
        k->no_thp = r == -ENOENT;
        if (!ng_feature_found(t, NG_FEATURE_SHMEM_THP_SIZES, NG_SYS_THP_DIR, r))
                return;
        char list[160] = "";
        size_t sizes = 0;
        for (size_t i = 0; i < n; i++) {
                uint64_t kib;
                char *buf, choice[16];
                if (ng_parse_hugepages_dirname(names[i], &kib) < 0 ||
                    ng_collect_read(c, &buf, NULL, NG_SYS_THP_DIR "/%s/shmem_enabled", names[i]) < 0)
                        continue;
                sizes++;
                enum ng_shmem_huge h = shmem_choice(buf, true, choice, sizeof(choice));
                if (h != NG_SHMEM_HUGE_UNKNOWN && h != NG_SHMEM_HUGE_NEVER)
                        ng_feature_add_word(list, sizeof(list), "%" PRIu64 "kB %s", kib, choice);
                if (k->n_sizes < NG_MAX_THP_SIZES) {
                        k->sizes[k->n_sizes].page_kib = kib;
                        k->sizes[k->n_sizes++].setting = h;
                }
                free(buf);
        }
        qsort(k->sizes, k->n_sizes, sizeof(k->sizes[0]), cmp_thp_size);
        char top[16] = "unknown", *buf;
        if (ng_collect_read(c, &buf, NULL, NG_SYS_THP_DIR "/shmem_enabled") >= 0) {
                k->top = shmem_choice(buf, false, top, sizeof(top));
                if (k->top == NG_SHMEM_HUGE_UNKNOWN)
                        snprintf(top, sizeof(top), "unreadable");
                free(buf);
        }
        uint64_t pmd;
        if (ng_path_read_u64(c->reads, &pmd, NG_SYS_THP_DIR "/hpage_pmd_size") >= 0 && pmd >= 8192 &&
            pmd % 1024 == 0 && pmd <= (UINT64_C(1) << 40))
                k->pmd_kib = pmd / 1024;
        else if (k->n_sizes)
                k->pmd_kib = k->sizes[k->n_sizes - 1].page_kib;
        if (!sizes)
                ng_feature_set(t, NG_FEATURE_SHMEM_THP_SIZES, NG_FEATURE_ABSENT,
                               "no %s/hugepages-<size>kB/shmem_enabled", NG_SYS_THP_DIR);
        else
                ng_feature_set(t, NG_FEATURE_SHMEM_THP_SIZES, NG_FEATURE_PRESENT,
                               "%zu sizes, shmem_enabled %s; not never: %s", sizes, top, list[0] ? list : "none");
}

/* DAMON's sysfs interface: admin/kdamonds/nr_kdamonds (a file, so that a
 * snapshot keeps the directory). */
static void probe_damon(struct collector *c, struct ng_topology *t)
{
        uint64_t n;
        int r = ng_path_read_u64(c->reads, &n, NG_SYS_DAMON_ADMIN_DIR "/kdamonds/nr_kdamonds");
        if (ng_feature_found(t, NG_FEATURE_DAMON, NG_SYS_DAMON_ADMIN_DIR "/kdamonds/nr_kdamonds", r))
                ng_feature_set(t, NG_FEATURE_DAMON, NG_FEATURE_PRESENT, "%s: %" PRIu64 " kdamonds",
                               NG_SYS_DAMON_ADMIN_DIR, n);
}

void ng_collect_features_zoneinfo(struct ng_topology *t, const char *zoneinfo)
{
        uint64_t pages;
        if (!zoneinfo || t->n_nodes == 0)
                ng_feature_set(t, NG_FEATURE_PROMO_WMARK, NG_FEATURE_UNKNOWN, "/proc/zoneinfo unreadable");
        else if (ng_parse_zoneinfo_promo(zoneinfo, t->nodes[0].id, &pages) >= 0)
                ng_feature_set(t, NG_FEATURE_PROMO_WMARK, NG_FEATURE_PRESENT, "node %d: promo %" PRIu64 " pages",
                               t->nodes[0].id, pages);
        else
                ng_feature_set(t, NG_FEATURE_PROMO_WMARK, NG_FEATURE_ABSENT,
                               "node %d has no promo watermark in /proc/zoneinfo", t->nodes[0].id);
}

void ng_collect_features(struct collector *c)
{
        struct ng_topology *t = &c->s->topo;
        const struct ng_knobs *k = &c->s->knobs;
        bool probed_tree = true;
        if (ng_path_is_live(c->p)) {
                probe_v1_cpuset_live(t);
                probe_procmap_query_live(t);
                record_kept(c, t);
        } else
                probed_tree = replay_kept(c, t);
        probe_v2_cpuset(c, t);
        /* memory_tiers: set by ng_collect_tiers(), where the tiers are read */
        if (t->demotion_enabled >= 0)
                ng_feature_set(t, NG_FEATURE_DEMOTION, NG_FEATURE_PRESENT, "demotion_enabled %s",
                               t->demotion_enabled ? "true" : "false");
        else
                ng_feature_set(t, NG_FEATURE_DEMOTION, NG_FEATURE_ABSENT, "%s: none", NG_SYS_DEMOTION_ENABLED);
        probe_weighted_interleave(c, t);
        probe_shmem_thp(c, t, &c->s->knobs.shmem_thp);
        probe_damon(c, t);
        if (!t->features[NG_FEATURE_PROMO_WMARK].detail[0])
                ng_feature_set(t, NG_FEATURE_PROMO_WMARK, NG_FEATURE_UNKNOWN,
                               "/proc/zoneinfo not read (no NUMA nodes in sysfs)");
        /* Linux 5.16 took the memlock limit out of can_do_hugetlb_shm():
         * no file shows which rule a kernel follows. */
        int since = ng_knobs_release_at_least(k, 5, 16);
        if (since < 0)
                ng_feature_set(t, NG_FEATURE_HUGETLB_SHM_GROUP_ONLY, NG_FEATURE_UNKNOWN,
                               "the kernel release is unknown");
        else
                ng_feature_set(t, NG_FEATURE_HUGETLB_SHM_GROUP_ONLY, since ? NG_FEATURE_PRESENT : NG_FEATURE_ABSENT,
                               "by the release %u.%u (since 5.16 a memlock limit no longer grants SHM_HUGETLB; "
                               "no file shows it)", k->kernel_major, k->kernel_minor);
        /* A tree captured before these probes lacks what they read: a
         * missing file there says nothing about the kernel. */
        if (!probed_tree)
                for (int i = 0; i < NG_FEATURE_MAX_; i++)
                        if (t->features[i].state == NG_FEATURE_ABSENT)
                                ng_feature_set(t, i, NG_FEATURE_UNKNOWN,
                                               "this tree was captured before numaguard probed the "
                                               "kernel's features");
}

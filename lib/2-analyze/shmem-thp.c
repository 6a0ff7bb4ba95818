/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * analyze: the page sizes the kernel may fold a 4 KiB shmem segment's pages
 * into (ng_segment_thp()), from the settings the snapshot holds. Pure.
 *
 * The kernel's rules, as mm/shmem.c of Linux 6.12 has them:
 *
 * - A fault or write on shmem asks shmem_allowable_huge_orders(). It first
 *   asks shmem_huge_global_enabled() (__shmem_huge_global_enabled) about
 *   the PMD size: no for a mapping with VM_NOHUGEPAGE or a process with
 *   MMF_DISABLE_THP (prctl), no when shmem_enabled is "deny", yes when it is
 *   "force"; else the superblock's huge option decides: always yes,
 *   within_size yes where the PMD-aligned page lies within i_size (then on
 *   as advise), advise yes in a mapping with VM_HUGEPAGE (madvise), never
 *   no.
 * - A mapping that is not anonymous shared memory (vma_is_anon_shmem():
 *   vm_ops == &shmem_anon_vm_ops), or a write with no mapping, gets that
 *   answer alone: the PMD size or nothing ("For tmpfs, we now only support
 *   PMD sized THP"). That is a tmpfs file (its mount's huge=, whatever the
 *   per-size settings) and a SysV segment too: shm_mmap() puts shm_vm_ops
 *   in front of the shmem file's vm_ops, so its mapping is never
 *   vma_is_anon_shmem(); its superblock is the kernel's internal shm
 *   mount, whose huge follows shmem_enabled (shmem_enabled_store() sets it
 *   for never/always/within_size/advise; deny and force decide above).
 * - Anonymous shared memory (MAP_SHARED|MAP_ANONYMOUS: shmem_zero_setup()
 *   gives it shmem_anon_vm_ops) gets the per-size settings of
 *   hugepages-<N>kB/shmem_enabled (Linux 6.11): "deny" at the top gives
 *   nothing; "force" gives exactly the sizes set to inherit; otherwise the
 *   sizes set to always, those set to within_size where the page fits
 *   within i_size, those set to advise in a VM_HUGEPAGE mapping, and those
 *   set to inherit when shmem_huge_global_enabled() says yes (the PMD
 *   rule above on the internal mount). shmem_suitable_orders() then keeps
 *   only sizes that fit in the mapping (thp_vma_suitable_orders), which is
 *   the segment.
 * - Before 6.11 there are no per-size settings: every kind gets the PMD
 *   rule alone (shmem_is_huge() in 6.1 is that rule).
 *
 * What a process does to its own mapping (MADV_HUGEPAGE, MADV_NOHUGEPAGE,
 * PR_SET_THP_DISABLE) is not in the snapshot: a size is reported with the
 * condition it needs (ng_thp_when), and "may" is all it says.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ng-format.h"
#include "ng-segments.h"
#include "units.h"
#include "util.h"

const char *ng_thp_when_name(enum ng_thp_when w)
{
        static const char *const names[] = {
                [NG_THP_WHEN_ALWAYS] = "always",
                [NG_THP_WHEN_WITHIN_SIZE] = "within_size",
                [NG_THP_WHEN_ADVISED] = "advised",
        };
        return NG_NAME(names, w, "unknown");
}

const char *ng_thp_fold_state_name(enum ng_thp_fold_state st)
{
        static const char *const names[] = {
                [NG_THP_FOLD_KNOWN] = "known",
                [NG_THP_FOLD_UNKNOWN] = "unknown",
        };
        return NG_NAME(names, st, "not_applicable");
}

const char *ng_thp_per_size_name(enum ng_thp_per_size p)
{
        static const char *const names[] = {
                [NG_THP_PER_SIZE_APPLIED] = "applied",
                [NG_THP_PER_SIZE_NOT_USED] = "not_used",
                [NG_THP_PER_SIZE_ABSENT] = "absent",
                [NG_THP_PER_SIZE_UNKNOWN] = "unknown",
        };
        return NG_NAME(names, p, "not_applicable");
}

/* -1: none; else the condition. */
#define NONE (-1)

static void add(struct ng_thp_fold *f, uint64_t kib, int when)
{
        if (when == NONE)
                return;
        for (size_t i = 0; i < f->n_sizes; i++)
                if (f->sizes[i].page_kib == kib) {
                        if (when < (int) f->sizes[i].when)
                                f->sizes[i].when = (enum ng_thp_when) when;
                        return;
                }
        if (f->n_sizes < ELEMENTSOF(f->sizes)) {
                f->sizes[f->n_sizes].page_kib = kib;
                f->sizes[f->n_sizes++].when = (enum ng_thp_when) when;
        }
}

/* A page of kib fits within the segment's size (its size unknown: may). */
static bool fits(const struct ng_segment *seg, uint64_t kib)
{
        return seg->bytes_unknown || seg->bytes >= ng_kib_bytes_sat(kib);
}

/* shmem_huge_global_enabled(): when a PMD-size page may be had, with the
 * superblock's huge option sb; NONE for never. */
static int global_when(enum ng_shmem_huge top, enum ng_shmem_huge sb, const struct ng_segment *seg, uint64_t pmd_kib)
{
        if (top == NG_SHMEM_HUGE_DENY)
                return NONE;
        if (top == NG_SHMEM_HUGE_FORCE)
                return NG_THP_WHEN_ALWAYS;
        switch (sb) {
        case NG_SHMEM_HUGE_ALWAYS:
                return NG_THP_WHEN_ALWAYS;
        case NG_SHMEM_HUGE_WITHIN_SIZE:
                /* beyond the last PMD-aligned page within i_size: as advise */
                return !pmd_kib || fits(seg, pmd_kib) ? NG_THP_WHEN_WITHIN_SIZE : NG_THP_WHEN_ADVISED;
        case NG_SHMEM_HUGE_ADVISE:
                return NG_THP_WHEN_ADVISED;
        default:
                return NONE;
        }
}

static void sort_sizes(struct ng_thp_fold *f)
{
        for (size_t i = 1; i < f->n_sizes; i++)
                for (size_t j = i; j > 0 && f->sizes[j - 1].page_kib < f->sizes[j].page_kib; j--) {
                        __typeof__(f->sizes[0]) t = f->sizes[j];
                        f->sizes[j] = f->sizes[j - 1];
                        f->sizes[j - 1] = t;
                }
}

/* "64kB always, 2048kB inherit" of the sizes not set to never, or "all
 * never". */
static void per_size_list(const struct ng_shmem_thp *k, char *buf, size_t size)
{
        size_t o = 0;
        bool never = false;
        buf[0] = '\0';
        for (size_t i = 0; i < k->n_sizes && o < size; i++) {
                never |= k->sizes[i].setting == NG_SHMEM_HUGE_NEVER;
                if (k->sizes[i].setting != NG_SHMEM_HUGE_NEVER) {
                        int n = snprintf(buf + o, size - o, "%s%" PRIu64 "kB %s", o ? ", " : "", k->sizes[i].page_kib,
                                         ng_shmem_huge_name(k->sizes[i].setting));
                        o += n > 0 ? (size_t) n : 0;
                }
        }
        if (!buf[0])
                snprintf(buf, size, "all never");
        else if (never && o < size)
                snprintf(buf + o, size - o, ", the others never");
}

/* Unknown, and why (a string constant or the basis itself). */
static void unknown(struct ng_thp_fold *ret, const char *what)
{
        ret->state = NG_THP_FOLD_UNKNOWN;
        ret->n_sizes = 0;
        if (what != ret->basis)
                snprintf(ret->basis, sizeof(ret->basis), "%s", what);
}

/* Anonymous shared memory on a kernel with per-size settings. false when
 * one of them could not be read (ret->basis says which). */
static bool per_size(const struct ng_shmem_thp *k, enum ng_shmem_huge top, const struct ng_segment *seg,
                     struct ng_thp_fold *ret)
{
        int g = global_when(top, top, seg, k->pmd_kib);
        for (size_t i = 0; i < k->n_sizes; i++) {
                uint64_t kib = k->sizes[i].page_kib;
                switch (k->sizes[i].setting) {
                case NG_SHMEM_HUGE_UNKNOWN:
                        snprintf(ret->basis, sizeof(ret->basis), "hugepages-%" PRIu64 "kB/shmem_enabled holds no "
                                 "setting the kernel prints", kib);
                        unknown(ret, ret->basis);
                        return false;
                case NG_SHMEM_HUGE_INHERIT:
                        add(ret, kib, top == NG_SHMEM_HUGE_FORCE ? NG_THP_WHEN_ALWAYS : g);
                        break;
                case NG_SHMEM_HUGE_ALWAYS:
                        add(ret, kib, top == NG_SHMEM_HUGE_FORCE ? NONE : NG_THP_WHEN_ALWAYS);
                        break;
                case NG_SHMEM_HUGE_WITHIN_SIZE:
                        add(ret, kib, top == NG_SHMEM_HUGE_FORCE || !fits(seg, kib) ? NONE : NG_THP_WHEN_WITHIN_SIZE);
                        break;
                case NG_SHMEM_HUGE_ADVISE:
                        add(ret, kib, top == NG_SHMEM_HUGE_FORCE ? NONE : NG_THP_WHEN_ADVISED);
                        break;
                default:
                        break;
                }
        }
        /* only what fits in the mapping, the segment itself */
        size_t w = 0;
        for (size_t i = 0; i < ret->n_sizes; i++)
                if (fits(seg, ret->sizes[i].page_kib))
                        ret->sizes[w++] = ret->sizes[i];
        ret->n_sizes = w;
        char list[160];
        per_size_list(k, list, sizeof(list));
        snprintf(ret->basis, sizeof(ret->basis), "shmem_enabled %s; per-size settings for anonymous shared "
                 "memory: %s", ng_shmem_huge_name(top), list);
        return true;
}

/* The rule for seg; false when it cannot be told (ret says why). */
static bool fold(const struct ng_snapshot *s, const struct ng_segment *seg, struct ng_thp_fold *ret)
{
        const struct ng_shmem_thp *k = &s->knobs.shmem_thp;
        enum ng_feature_state feature = s->topo.features[NG_FEATURE_SHMEM_THP_SIZES].state;
        bool anon = seg->kind == NG_SEG_ANON_SHARED, tree = s->root[0] != '\0';
        ret->per_size = feature == NG_FEATURE_PRESENT ? (anon ? NG_THP_PER_SIZE_APPLIED : NG_THP_PER_SIZE_NOT_USED)
                      : feature == NG_FEATURE_ABSENT ? NG_THP_PER_SIZE_ABSENT : NG_THP_PER_SIZE_UNKNOWN;
        if (!seg->page_kib) {
                unknown(ret, "its page size is unknown, no process maps it: it may be hugetlb");
                return false;
        }
        if (seg->page_kib != 4) {
                unknown(ret, "base pages other than 4 KiB: numaguard knows the kernel's rules for 4 KiB pages");
                return false;
        }
        if (k->no_thp && feature == NG_FEATURE_ABSENT) {
                snprintf(ret->basis, sizeof(ret->basis), "the kernel has no transparent hugepages (no %s)",
                         NG_SYS_THP_DIR);
                return true;
        }
        enum ng_shmem_huge top = k->top;
        if (top == NG_SHMEM_HUGE_UNKNOWN) {
                unknown(ret, tree ? NG_SYS_THP_DIR "/shmem_enabled is not in this tree"
                                  : NG_SYS_THP_DIR "/shmem_enabled could not be read");
                return false;
        }
        if (top == NG_SHMEM_HUGE_DENY) {
                snprintf(ret->basis, sizeof(ret->basis), "shmem_enabled deny: none for any shmem");
                return true;
        }
        if (anon && feature == NG_FEATURE_PRESENT)
                return per_size(k, top, seg, ret);
        if (anon && feature != NG_FEATURE_ABSENT) {
                unknown(ret, "whether the kernel has per-size settings for anonymous shared memory "
                             "(hugepages-<size>kB/shmem_enabled) is unknown: see the feature shmem_thp_sizes");
                return false;
        }
        /* the PMD rule alone, on the internal shm mount or the file's own */
        enum ng_shmem_huge sb = seg->kind == NG_SEG_FILE ? seg->tmpfs_huge : top;
        if (sb == NG_SHMEM_HUGE_UNKNOWN && top != NG_SHMEM_HUGE_FORCE) {
                unknown(ret, "the huge= option of its mount is not one the kernel prints");
                return false;
        }
        if (seg->kind == NG_SEG_FILE && top == NG_SHMEM_HUGE_FORCE)
                snprintf(ret->basis, sizeof(ret->basis), "shmem_enabled force, over its mount's huge=%s, at the PMD "
                         "size only", ng_shmem_huge_name(sb));
        else if (seg->kind == NG_SEG_FILE)
                snprintf(ret->basis, sizeof(ret->basis), "huge=%s on its mount, which decides for its files at the "
                         "PMD size only; shmem_enabled %s", ng_shmem_huge_name(sb), ng_shmem_huge_name(top));
        else
                snprintf(ret->basis, sizeof(ret->basis), "shmem_enabled %s, which decides for %s at the PMD size "
                         "only%s", ng_shmem_huge_name(top), anon ? "anonymous shared memory" : "System V shared memory",
                         anon ? ": no per-size settings in this kernel" : "");
        int w = global_when(top, sb, seg, k->pmd_kib);
        if (w != NONE && !k->pmd_kib) {
                unknown(ret, tree ? "the PMD size: " NG_SYS_THP_DIR "/hpage_pmd_size is not in this tree"
                                  : "the PMD size: " NG_SYS_THP_DIR "/hpage_pmd_size could not be read");
                return false;
        }
        add(ret, k->pmd_kib, w);
        return true;
}

void ng_segment_thp(const struct ng_snapshot *s, const struct ng_segment *seg, struct ng_thp_fold *ret)
{
        *ret = (struct ng_thp_fold) { .state = NG_THP_FOLD_NOT_APPLICABLE };
        if (seg->kind == NG_SEG_PRIVATE) {
                snprintf(ret->basis, sizeof(ret->basis), "private memory: transparent_hugepage/enabled governs it");
                return;
        }
        if (seg->huge) {
                snprintf(ret->basis, sizeof(ret->basis), "hugetlb pages");
                return;
        }
        ret->state = NG_THP_FOLD_KNOWN;
        if (fold(s, seg, ret))
                sort_sizes(ret);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rebalance through the segment's own file: every resident page of a 4 KiB
 * shmem segment, whether or not a living process maps it (PostgreSQL's
 * buffers filled by backends that have exited, a SysV segment whose filler
 * detached, a /dev/shm file nobody maps).
 *
 * The file is opened the way the audit opens it -- a SysV or anonymous
 * shared segment through /proc/PID/map_files of a process that maps it
 * (which reaches the shmem file itself: mapping it there changes neither
 * its attach count nor its last attacher), a /dev/shm file by its path,
 * resolved inside its mount namespace with no symbolic link followed --
 * and its device and inode must be the segment's. segment-walk.c then maps
 * it read-only a window at a time and hands over (to act-rebalance.c) only
 * the pages mincore(2) found resident, each mapped by a one-byte read: a
 * hole is never touched,
 * so the segment does not grow. move_pages(2) on our own addresses (pid 0)
 * with MPOL_MF_MOVE_ALL migrates each page for every process that maps it,
 * as through an attacher; the window is unmapped before the next, so our
 * page tables stay bounded whatever the segment's size.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <numaif.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "act-rebalance-internal.h"
#include "action-internal.h"
#include "cleanup.h"
#include "sample.h"

const char *ng_rebalance_via_name(enum ng_rebalance_via v)
{
        return v == NG_REBALANCE_VIA_ATTACHER ? "attacher" : "segment";
}

struct ng_rebalance_opts ng_rebalance_opts_for(const struct ng_rebalance_plan *p)
{
        struct ng_rebalance_opts o = NG_REBALANCE_OPTS_DEFAULT;
        if (p && p->via == NG_REBALANCE_VIA_SEGMENT)
                o.batch_pages = NG_SEG_MAX_BATCH;
        return o;
}

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* A path inside a mount namespace's root, no link followed on the way. */
static int open_in_root(pid_t root_pid, const char *path)
{
        char root[48];
        snprintf(root, sizeof(root), root_pid > 0 ? "/proc/%d/root" : "/", (int) root_pid);
        _cleanup_close_ int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        struct open_how how = {
                .flags = OPEN_FLAGS,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        while (*path == '/')
                path++;
        int fd = (int) syscall(SYS_openat2, dfd, path, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

static int default_open(const struct ng_rebalance_plan *p)
{
        if (!p->seg_follow)
                return open_in_root(p->seg_root_pid, p->seg_path);
        int fd = open(p->seg_path, OPEN_FLAGS);
        return fd < 0 ? -errno : fd;
}

/* The descriptor is the segment planned: a regular file of 4 KiB pages
 * with its device and inode (and name, for SysV). -ESTALE when it is
 * another file. */
static int check_identity(int fd, const struct ng_rebalance_plan *p)
{
        struct stat st;
        uint64_t page;
        int r = ng_segment_stat(fd, &st, &page);
        if (r < 0)
                return r == -EINVAL ? -ESTALE : r;
        if (p->inode && ((uint64_t) st.st_ino != p->inode || major(st.st_dev) != p->dev_major ||
                         minor(st.st_dev) != p->dev_minor))
                return -ESTALE;
        if (p->seg_name[0] && !ng_segment_named(fd, p->seg_name))
                return -ESTALE;
        return 0;
}

int ng_rebalance_open_segment(const struct ng_rebalance_plan *p, const struct ng_rebalance_ops *ops,
                              const char **ret_failed_call)
{
        _cleanup_close_ int fd = ops && ops->open_segment ? ops->open_segment(ops->userdata, p) : default_open(p);
        if (fd < 0) {
                *ret_failed_call = "opening the segment's file";
                return fd;
        }
        int q = check_identity(fd, p);
        if (q < 0) {
                *ret_failed_call = q == -ESTALE ? "opening the segment's file (another file is there now)"
                                                : "opening the segment's file";
                return q;
        }
        return ng_steal_fd(&fd);
}

/* ---- the policy its new pages follow ---- */

#define MASK_WORDS (NG_REBALANCE_MAX_NODES / 64 + 1)
#define MAXNODE (NG_REBALANCE_MAX_NODES + 1)

static long default_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                          unsigned long maxnode, unsigned flags)
{
        return mbind(addr, len, mode, nodemask, maxnode, flags);
}

static int read_policy(const struct ng_rebalance_ops *ops, void *addr, char *buf, size_t size)
{
        return ng_segment_policy(ops ? ops->get_mempolicy : NULL, addr, buf, size);
}

int ng_rebalance_set_policy(const struct ng_rebalance_plan *p, const struct ng_rebalance_ops *ops, bool dry_run,
                            struct ng_action_result *res)
{
        const char *failed = NULL;
        _cleanup_close_ int fd = ng_rebalance_open_segment(p, ops, &failed);
        if (fd < 0)
                return fd;
        struct stat st;
        uint64_t page;
        int r = ng_segment_stat(fd, &st, &page);
        if (r < 0 || st.st_size == 0)
                return r;
        size_t len = (size_t) (((uint64_t) st.st_size + page - 1) / page * page);
        void *addr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        if (addr == MAP_FAILED)
                return -errno;
        char before[96];
        r = read_policy(ops, addr, before, sizeof(before));
        struct ng_write *w = NULL;
        if (r >= 0 && strcmp(before, p->policy_text)) {
                r = ng_action_result_add(res, NG_WRITE_SEGMENT_POLICY, &w);
                if (r == -E2BIG)
                        r = 0;          /* res full: left alone */
        }
        if (r < 0 || !w) {
                munmap(addr, len);
                return r < 0 ? r : 0;
        }
        snprintf(w->path, sizeof(w->path), "%s", p->label);
        snprintf(w->value, sizeof(w->value), "%s", p->policy_text);
        snprintf(w->before, sizeof(w->before), "%s", before);
        if (!dry_run) {
                unsigned long mask[MASK_WORDS] = {0};
                for (size_t i = 0; i < p->n_dest; i++)
                        if (p->dest[i] >= 0 && p->dest[i] < NG_REBALANCE_MAX_NODES)
                                mask[p->dest[i] / 64] |= 1UL << (p->dest[i] % 64);
                long (*set)(void *, unsigned long, int, const unsigned long *, unsigned long, unsigned) =
                        ops && ops->mbind ? ops->mbind : default_mbind;
                if (set(addr, len, (int) p->policy, mask, MAXNODE, 0) < 0)
                        w->error = errno ? -errno : -EIO;
                if (read_policy(ops, addr, w->after, sizeof(w->after)) < 0)
                        snprintf(w->after, sizeof(w->after), "?");
                if (!w->error && strcmp(w->after, p->policy_text))
                        w->error = -EIO;        /* it did not take */
        }
        munmap(addr, len);
        return w->error < 0 ? w->error : 1;
}

static void appendf_summary(struct ng_action_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf_summary(struct ng_action_result *res, const char *fmt, ...)
{
        size_t l = strlen(res->summary);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->summary + l, sizeof(res->summary) - l, fmt, ap);
        va_end(ap);
}

/* After the moves (or none needed): the policy the segment's new pages are
 * to follow, on the segment itself (opts->set_policy). A failure to
 * install it leaves the run partial at best, with its error. */
void ng_rebalance_policy_step(const struct ng_rebalance_plan *p, const struct ng_rebalance_opts *o,
                        const struct ng_rebalance_ops *ops, struct ng_action_result *res)
{
        if (!o->set_policy || (res->outcome != NG_OUTCOME_NOOP && res->outcome != NG_OUTCOME_DONE &&
                               res->outcome != NG_OUTCOME_PARTIAL && res->outcome != NG_OUTCOME_DRY_RUN))
                return;
        if (p->policy == NG_MPOL_DEFAULT || p->via != NG_REBALANCE_VIA_SEGMENT) {
                if (p->policy_note[0])
                        appendf_summary(res, "; no policy installed: %s", p->policy_note);
                return;
        }
        int r = ng_rebalance_set_policy(p, ops, o->dry_run, res);
        if (r == 0)
                appendf_summary(res, "; its new pages follow %s already", p->policy_text);
        else if (r > 0 && o->dry_run)
                appendf_summary(res, "; would install policy %s on it (now %s)", p->policy_text,
                                res->writes[res->n_writes - 1].before);
        else if (r > 0) {
                appendf_summary(res, "; installed policy %s on it (was %s): its new pages follow it",
                                p->policy_text, res->writes[res->n_writes - 1].before);
                if (res->outcome == NG_OUTCOME_NOOP)
                        res->outcome = NG_OUTCOME_DONE;
        } else {
                appendf_summary(res, "; installing policy %s failed: %s", p->policy_text, strerror(-r));
                if (res->outcome != NG_OUTCOME_DRY_RUN)
                        res->outcome = NG_OUTCOME_PARTIAL;
                if (!res->error)
                        res->error = r;
        }
}

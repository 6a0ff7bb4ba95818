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
 * it read-only a window at a time (act-rebalance.c hands its batches on) and hands over only the pages mincore(2)
 * found resident, each mapped by a one-byte read: a hole is never touched,
 * so the segment does not grow. move_pages(2) on our own addresses (pid 0)
 * with MPOL_MF_MOVE_ALL migrates each page for every process that maps it,
 * as through an attacher; the window is unmapped before the next, so our
 * page tables stay bounded whatever the segment's size.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "act-rebalance-internal.h"

const char *ng_rebalance_via_name(enum ng_rebalance_via v)
{
        return v == NG_REBALANCE_VIA_ATTACHER ? "attacher" : "segment";
}

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* A path inside a mount namespace's root, no link followed on the way. */
static int open_in_root(pid_t root_pid, const char *path)
{
        char root[48];
        snprintf(root, sizeof(root), root_pid > 0 ? "/proc/%d/root" : "/", (int) root_pid);
        int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        struct open_how how = {
                .flags = OPEN_FLAGS,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        while (*path == '/')
                path++;
        int fd = (int) syscall(SYS_openat2, dfd, path, &how, sizeof(how));
        int err = errno;
        close(dfd);
        return fd < 0 ? -err : fd;
}

static int default_open(const struct ng_rebalance_plan *p)
{
        if (!p->seg_follow)
                return open_in_root(p->seg_root_pid, p->seg_path);
        int fd = open(p->seg_path, OPEN_FLAGS);
        return fd < 0 ? -errno : fd;
}

/* The descriptor is the segment planned: a regular file of 4 KiB pages
 * with its device and inode. -ESTALE when it is another file. */
static int check_identity(int fd, const struct ng_rebalance_plan *p)
{
        struct stat st;
        long ps = sysconf(_SC_PAGESIZE);
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ESTALE;
        if (ps > 0 && st.st_blksize > ps)
                return -EOPNOTSUPP;
        if (p->inode && ((uint64_t) st.st_ino != p->inode || major(st.st_dev) != p->dev_major ||
                         minor(st.st_dev) != p->dev_minor))
                return -ESTALE;
        return 0;
}

int ng_rebalance_open_segment(const struct ng_rebalance_plan *p, const struct ng_rebalance_ops *ops,
                              const char **ret_failed_call)
{
        int fd = ops && ops->open_segment ? ops->open_segment(ops->userdata, p) : default_open(p);
        if (fd < 0) {
                *ret_failed_call = "opening the segment's file";
                return fd;
        }
        int q = check_identity(fd, p);
        if (q < 0) {
                *ret_failed_call = q == -ESTALE ? "opening the segment's file (another file is there now)"
                                                : "opening the segment's file";
                close(fd);
                return q;
        }
        return fd;
}

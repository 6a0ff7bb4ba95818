/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the namespaces a database lives in (docs/ARCHITECTURE.md,
 * "Namespaces"). A process's IPC, mount and PID namespaces are the inodes
 * of its /proc/PID/ns links; a segment is named within them: a SysV segment
 * by (IPC namespace, shmid), a file by (device, inode). The segments of
 * each other namespace are scanned by shm/ (shm-namespaces.c).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "ns-internal.h"

/* 0 when unreadable (another user's process without CAP_SYS_PTRACE, a
 * tree taken before namespaces were read) or gone. */
static uint64_t read_ns(struct collector *c, const char *who, const char *type)
{
        char text[64];
        uint64_t ino;
        if (ng_path_read_link(c->reads, text, sizeof(text), NG_PROC_DIR "/%s/ns/%s", who, type) < 0 ||
            ng_parse_ns_link(text, type, &ino) < 0)
                return 0;
        return ino;
}

void ng_collect_own_ns(struct collector *c)
{
        c->s->ipc_ns = read_ns(c, "self", "ipc");
        c->s->mnt_ns = read_ns(c, "self", "mnt");
        c->s->pid_ns = read_ns(c, "self", "pid");
}

void ng_collect_proc_ns(struct collector *c, struct ng_proc *pr)
{
        pr->ipc_ns = c->s->ipc_ns;
        pr->mnt_ns = c->s->mnt_ns;
        pr->pid_ns = c->s->pid_ns;
        char who[24];
        snprintf(who, sizeof(who), "%d", (int) pr->pid);
        uint64_t ipc = read_ns(c, who, "ipc"), mnt = read_ns(c, who, "mnt"), pid = read_ns(c, who, "pid");
        if (ipc)
                pr->ipc_ns = ipc;
        if (mnt)
                pr->mnt_ns = mnt;
        if (pid)
                pr->pid_ns = pid;
}

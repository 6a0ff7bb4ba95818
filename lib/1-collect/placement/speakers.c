/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whose processes may speak for a segment (ng-snapshot.h, struct
 * ng_speakers): collect asks only them (their map_files links, their page
 * tables), the segments' placement takes only theirs, and rebalance moves
 * pages only through them.
 *
 * Attaching a segment does not make a process the segment's: any user a
 * SysV segment's mode lets attach it (0644: every user, read-only) may
 * detach it again and map a file of its own at the same address, a tmpfs
 * file named SYSV<key> and unlinked, whose maps line reads like the
 * segment's, and fill it. Its page tables then hold the user's pages where
 * the segment's would be, and the file its map_files link reaches is the
 * one its own maps line names. A process whose real and effective uid are
 * root's or the segment's owner's is nobody else's to drive: another user
 * may neither ptrace it nor write its memory (the kernel's check wants
 * every one of its uids to be the caller's), and its real uid, once
 * another user's, never returns to root's or the owner's (no exec of a
 * set-user-ID program changes it).
 */

#include <string.h>

#include "ng-snapshot.h"
#include "util.h"

static void owners_unknown(struct ng_speakers *ret)
{
        *ret = (struct ng_speakers) { .anyone = false };
}

void ng_speakers_of_shm_row(const struct ng_shm_seg *sh, struct ng_speakers *ret)
{
        owners_unknown(ret);
        /* a row whose uids did not parse, or listed twice: unknown */
        if (sh->unknown || sh->duplicates)
                return;
        ret->uid[ret->n++] = sh->uid;
        if (sh->cuid != sh->uid)
                ret->uid[ret->n++] = sh->cuid;
}

void ng_speakers_of_sysv(const struct ng_snapshot *s, uint64_t ipc_ns, int32_t shmid, struct ng_speakers *ret)
{
        owners_unknown(ret);
        for (size_t i = 0; i < s->n_shm; i++)
                if (s->shm[i].shmid == shmid && s->shm[i].ipc_ns == ipc_ns) {
                        ng_speakers_of_shm_row(&s->shm[i], ret);
                        return;
                }
}

void ng_speakers_of_shm_file(const struct ng_shm_file *f, struct ng_speakers *ret)
{
        *ret = (struct ng_speakers) { .n = 1, .uid = { f->uid } };
}

void ng_speakers_of_file(const struct ng_snapshot *s, unsigned major, unsigned minor, uint64_t inode,
                         const char *path, struct ng_speakers *ret)
{
        owners_unknown(ret);
        for (size_t i = 0; i < s->n_files; i++) {
                const struct ng_shm_file *f = &s->files[i];
                if (f->dev_major != major || f->dev_minor != minor)
                        continue;
                bool same = f->inode && inode ? f->inode == inode : path && !strcmp(f->path, path);
                if (!same)
                        continue;
                ng_speakers_of_shm_file(f, ret);
                return;
        }
}

void ng_speakers_of_map(const struct ng_snapshot *s, const struct ng_proc *pr, const struct ng_map *m,
                        struct ng_speakers *ret)
{
        switch (m->kind) {
        case NG_MAP_SYSV:
                ng_speakers_of_sysv(s, pr->ipc_ns, (int32_t) m->inode, ret);
                return;
        case NG_MAP_FILE_SHARED:
                ng_speakers_of_file(s, m->dev_major, m->dev_minor, m->inode, m->path, ret);
                return;
        default:
                *ret = (struct ng_speakers) { .anyone = true };
                return;
        }
}

static bool speaks(const struct ng_speakers *sp, uint32_t uid)
{
        if (uid == NG_UID_UNKNOWN)
                return false;
        if (uid == 0)
                return true;
        for (size_t k = 0; k < sp->n && k < ELEMENTSOF(sp->uid); k++)
                if (sp->uid[k] == uid)
                        return true;
        return false;
}

bool ng_speakers_admit(const struct ng_speakers *sp, const struct ng_pid_status *st)
{
        return sp->anyone || (speaks(sp, st->uid) && speaks(sp, st->euid));
}

bool ng_snapshot_may_speak(const struct ng_snapshot *s, const struct ng_proc *pr, const struct ng_map *m)
{
        struct ng_speakers sp;
        ng_speakers_of_map(s, pr, m, &sp);
        return ng_speakers_admit(&sp, &pr->status);
}

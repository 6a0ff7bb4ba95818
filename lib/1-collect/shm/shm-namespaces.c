/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the shared memory of the other namespaces the watched processes
 * live in (docs/ARCHITECTURE.md, "Namespaces"): after the processes, the
 * System V table of every other IPC namespace and the /dev/shm and
 * hugetlbfs files of every other mount namespace that holds one of them,
 * each namespace scanned once, through one of its members.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "namespaces.h"
#include "parse.h"
#include "util.h"
#include "shm-internal.h"

/* The namespaces already scanned in this collection. */
struct ns_set {
        uint64_t *v;
        size_t n;
};

static bool ns_has(const struct ns_set *set, uint64_t ns)
{
        for (size_t i = 0; i < set->n; i++)
                if (set->v[i] == ns)
                        return true;
        return false;
}

static int ns_add(struct ns_set *set, uint64_t ns)
{
        if (ng_grow(&set->v, NULL, set->n, sizeof(*set->v), 0) < 0)
                return -ENOMEM;
        set->v[set->n++] = ns;
        return 0;
}

static int add_table(struct ng_snapshot *s, struct ng_shm_seg *v, size_t n, uint64_t ns)
{
        if (!n)
                return 0;
        size_t cap = s->n_shm;  /* the host's table, as its parser left it */
        for (size_t i = 0; i < n; i++) {
                if (ng_grow(&s->shm, &cap, s->n_shm, sizeof(*s->shm), 0) < 0)
                        return -ENOMEM;
                v[i].ipc_ns = ns;
                s->shm[s->n_shm++] = v[i];
        }
        return 0;
}

/* The System V table of pr's IPC namespace: sizes, attach counts, owners,
 * the segments nobody attaches too. 1 done, 0 not through this process
 * (gone, or it left the namespace): another member may serve. */
static int scan_ipc(struct collector *c, const struct ng_proc *pr)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        c->current_pid = pr->pid;
        if (c->o.progress)
                c->o.progress(c->o.progress_data, pr->pid);
        int r = ng_path_read_ipc_ns(c->reads, pr->pid, pr->ipc_ns, &buf, &len);
        if (r == -ENOENT || r == -ESTALE)
                return ng_path_is_live(c->p) ? 0 : 1;   /* a tree has it or not */
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                char path[96];
                snprintf(path, sizeof(path), NG_PATH_IPC_NS_DIR "/%" PRIu64 "/sysvipc/shm", pr->ipc_ns);
                ng_collect_problem(c, path, "cannot read the System V segments of IPC namespace %" PRIu64
                                   " (through pid %d): %s", pr->ipc_ns, (int) pr->pid, strerror(-r));
                return 1;
        }
        _cleanup_free_ struct ng_shm_seg *v = NULL;
        size_t n = 0;
        r = ng_parse_sysvipc_shm(buf, &v, &n);
        if (r >= 0) {
                char path[96];
                snprintf(path, sizeof(path), NG_PATH_IPC_NS_DIR "/%" PRIu64 "/sysvipc/shm", pr->ipc_ns);
                for (size_t i = 0; i < n; i++)
                        ng_collect_shm_row_check(c, path, &v[i]);
                r = add_table(c->s, v, n, pr->ipc_ns);
        }
        if (r == -ENOMEM)
                return r;
        c->s->has_sysvipc = true;
        return 1;
}

/* A file system scanned through another mount (the host's /dev/shm bound
 * into a container: --ipc=host) is not scanned again: its files are
 * listed once, under the first namespace that showed them. */
struct mount_keys {
        struct { unsigned major, minor; char *root; } *v;
        size_t n;
};

static bool scanned(const struct mount_keys *k, const struct ng_mount *m)
{
        for (size_t i = 0; i < k->n; i++)
                if (k->v[i].major == m->major && k->v[i].minor == m->minor &&
                    (!strcmp(k->v[i].root, "/") || !strcmp(k->v[i].root, m->root)))
                        return true;
        return false;
}

static int remember(struct mount_keys *k, const struct ng_mount *m)
{
        if (ng_grow(&k->v, NULL, k->n, sizeof(*k->v), 0) < 0)
                return -ENOMEM;
        if (!(k->v[k->n].root = strdup(m->root)))
                return -ENOMEM;
        k->v[k->n].major = m->major;
        k->v[k->n++].minor = m->minor;
        return 0;
}

/* The /dev/shm and hugetlbfs mounts of pr's mount namespace, listed
 * through /proc/PID/root. 1 done, 0 not through this process (gone). */
static int scan_mnt(struct collector *c, const struct ng_proc *pr, struct mount_keys *keys)
{
        _cleanup_free_ char *buf = NULL;
        struct ng_mount *mounts = NULL;
        size_t n = 0;
        c->current_pid = pr->pid;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/mountinfo", (int) pr->pid);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        r = ng_parse_mountinfo(buf, &mounts, &n);
        if (r < 0)
                return r == -ENOMEM ? r : 1;
        char prefix[48];
        snprintf(prefix, sizeof(prefix), NG_PROC_DIR "/%d/root", (int) pr->pid);
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (!ng_mount_holds_segments(mounts, n, i) || scanned(keys, &mounts[i]))
                        continue;
                r = remember(keys, &mounts[i]);
                if (r >= 0)
                        r = ng_collect_mount_files(c, &mounts[i], prefix, pr->mnt_ns, pr->pid);
        }
        ng_mounts_free(mounts, n);
        return r < 0 ? r : 1;
}

static int scan_all(struct collector *c, struct mount_keys *keys, struct ns_set *ipc, struct ns_set *mnt)
{
        struct ng_snapshot *s = c->s;
        int r = 0;
        for (size_t i = 0; i < s->n_mounts && r >= 0; i++)
                if (ng_mount_holds_segments(s->mounts, s->n_mounts, i))
                        r = remember(keys, &s->mounts[i]);
        for (size_t i = 0; i < s->n_procs && r >= 0; i++) {
                const struct ng_proc *pr = s->procs[i];
                if (pr->ipc_ns && pr->ipc_ns != s->ipc_ns && !ns_has(ipc, pr->ipc_ns) &&
                    (r = scan_ipc(c, pr)) > 0)
                        r = ns_add(ipc, pr->ipc_ns);
                if (r >= 0 && pr->mnt_ns && pr->mnt_ns != s->mnt_ns && !ns_has(mnt, pr->mnt_ns) &&
                    (r = scan_mnt(c, pr, keys)) > 0)
                        r = ns_add(mnt, pr->mnt_ns);
        }
        c->current_pid = 0;
        return r < 0 ? r : 0;
}

int ng_collect_namespaces(struct collector *c)
{
        struct mount_keys keys = { 0 };
        struct ns_set ipc = { 0 }, mnt = { 0 };
        int r = scan_all(c, &keys, &ipc, &mnt);
        for (size_t i = 0; i < keys.n; i++)
                free(keys.v[i].root);
        free(keys.v);
        free(ipc.v);
        free(mnt.v);
        return r;
}

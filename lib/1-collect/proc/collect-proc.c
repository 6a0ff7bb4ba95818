/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* collect: reading one process, for a full scan of /proc (ng_collect_procs,
 * below) and for the picture kept between polls (picture/); the records a
 * snapshot holds, shared with a picture or its own copy. */

#include <assert.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namespaces.h"
#include "proc.h"
#include "snapshot.h"
#include "engine.h"
#include "parse.h"
#include "util.h"

void ng_proc_set_name(struct ng_proc *pr)
{
        const char *comm = pr->stat.comm;
        size_t cl = strlen(comm);
        snprintf(pr->name, sizeof(pr->name), "%s", comm);
        if (cl != NG_COMM_MAX || !pr->cmdline)
                return;
        size_t wl = strcspn(pr->cmdline, " ");
        const char *w = pr->cmdline;
        for (const char *p = w; p < pr->cmdline + wl; p++)
                if (*p == '/')
                        w = p + 1;
        wl -= (size_t) (w - pr->cmdline);
        if (wl > cl && wl < sizeof(pr->name) && !strncmp(w, comm, cl))
                snprintf(pr->name, sizeof(pr->name), "%.*s", (int) wl, w);
}

/* A process's cgroup list, counted: most processes of a host sit in a
 * few cgroups, and a cgroup v1 host lists a dozen hierarchies each. */
struct cgroup_ref {
        unsigned refs;
        struct ng_pid_cgroup cg;
};

/* What records of one process share (proc_rec.held), counted. */
struct ng_proc_hold {
        unsigned refs;
        char *cmdline;
        struct cgroup_ref *cgroup;      /* NULL when the process has none */
        struct ng_pid_status status;    /* its CPU and node sets only */
};

static bool cgroup_equal(const struct ng_pid_cgroup *a, const struct ng_pid_cgroup *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (a->e[i].hierarchy_id != b->e[i].hierarchy_id || strcmp(a->e[i].controllers, b->e[i].controllers) ||
                    strcmp(a->e[i].path, b->e[i].path))
                        return false;
        return true;
}

static int share_cgroup(struct ng_proc *pr, const struct ng_proc *like, struct ng_proc_hold *h)
{
        if (!pr->cgroup.n)
                return 0;
        const struct ng_proc_hold *lh = like ? proc_rec_of(like)->held : NULL;
        if (lh && lh->cgroup && cgroup_equal(&pr->cgroup, &like->cgroup)) {
                ng_pid_cgroup_done(&pr->cgroup);
                h->cgroup = lh->cgroup;
                __atomic_add_fetch(&h->cgroup->refs, 1, __ATOMIC_RELAXED);
                pr->cgroup = h->cgroup->cg;
                return 0;
        }
        if (!(h->cgroup = malloc(sizeof(*h->cgroup))))
                return -ENOMEM;
        *h->cgroup = (struct cgroup_ref) { .refs = 1, .cg = pr->cgroup };
        return 0;
}

struct ng_proc *ng_proc_alloc(void)
{
        struct proc_rec *rec = calloc(1, sizeof(*rec));
        return rec ? &rec->pr : NULL;
}

int ng_proc_share(struct ng_proc *pr, const struct ng_proc *like)
{
        struct proc_rec *rec = proc_rec_of(pr);
        if (rec->held)
                return 0;
        struct ng_proc_hold *h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        if (share_cgroup(pr, like, h) < 0) {
                free(h);
                return -ENOMEM;
        }
        h->refs = 1;
        h->cmdline = pr->cmdline;
        h->status.cpus_allowed = pr->status.cpus_allowed;
        h->status.mems_allowed = pr->status.mems_allowed;
        rec->held = h;
        return 0;
}

void ng_proc_copy_shared(const struct ng_proc *src, struct ng_proc *dst)
{
        const struct proc_rec *from = proc_rec_of(src);
        assert(from->held);
        *proc_rec_of(dst) = *from;
        dst->maps = NULL;
        dst->n_maps = 0;
        dst->numa_maps = NULL;
        dst->n_numa_maps = 0;
        dst->has_numa_maps = false;
        dst->tasks = NULL;      /* each record weighs its own (ng_snapshot_cpu_since) */
        dst->n_tasks = 0;
        __atomic_add_fetch(&from->held->refs, 1, __ATOMIC_RELAXED);
}

static void hold_release(struct ng_proc_hold *h)
{
        if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) > 0)
                return;
        free(h->cmdline);
        if (h->cgroup && __atomic_sub_fetch(&h->cgroup->refs, 1, __ATOMIC_ACQ_REL) == 0) {
                ng_pid_cgroup_done(&h->cgroup->cg);
                free(h->cgroup);
        }
        ng_pid_status_done(&h->status);
        free(h);
}

void ng_proc_release(struct ng_proc *pr)
{
        struct proc_rec *rec = proc_rec_of(pr);
        if (rec->held) {
                hold_release(rec->held);
        } else {
                free(pr->cmdline);
                ng_pid_cgroup_done(&pr->cgroup);
                ng_pid_status_done(&pr->status);
        }
        free(pr->tasks);
        ng_maps_free(pr->maps, pr->n_maps);
        ng_numa_maps_free(pr->numa_maps, pr->n_numa_maps);
}

void ng_proc_done(struct ng_proc *pr)
{
        ng_proc_release(pr);
        memset(proc_rec_of(pr), 0, sizeof(struct proc_rec));
}

/* ---- a snapshot's own copy of a shared record ---- */

static int copy_maps(const struct ng_proc *src, struct ng_proc *dst)
{
        dst->maps = NULL;
        dst->n_maps = 0;
        if (!src->n_maps)
                return 0;
        if (!(dst->maps = calloc(src->n_maps, sizeof(*dst->maps))))
                return -ENOMEM;
        for (size_t j = 0; j < src->n_maps; j++) {
                dst->maps[dst->n_maps] = src->maps[j];
                dst->maps[dst->n_maps].path = strdup(src->maps[j].path);
                if (!dst->maps[dst->n_maps++].path)
                        return -ENOMEM;
        }
        return 0;
}

static int copy_tasks(const struct ng_proc *src, struct ng_proc *dst)
{
        if (!src->n_tasks)
                return 0;
        if (!(dst->tasks = malloc(src->n_tasks * sizeof(*dst->tasks))))
                return -ENOMEM;
        memcpy(dst->tasks, src->tasks, src->n_tasks * sizeof(*dst->tasks));
        dst->n_tasks = src->n_tasks;
        return 0;
}

/* A record of its own for a snapshot, of a picture's record src (a process
 * with maps): src's shared parts held, its own copy of the maps and
 * threads (collection annotates them), no numa_maps (those belong to one
 * collection). */
int ng_proc_copy_own(const struct ng_proc *src, struct ng_proc *dst)
{
        ng_proc_copy_shared(src, dst);
        proc_rec_of(dst)->shared = false;
        int r = copy_maps(src, dst);
        if (r >= 0)
                r = copy_tasks(src, dst);
        if (r < 0)
                ng_proc_done(dst);
        return r;
}

int ng_snapshot_own_proc(struct ng_snapshot *s, size_t i)
{
        if (!snapshot_rec_of(s)->proc_gen || !proc_rec_of(s->procs[i])->shared)
                return 0;
        struct ng_proc *own = ng_proc_alloc();
        int r = own ? ng_proc_copy_own(s->procs[i], own) : -ENOMEM;
        if (r < 0) {
                free(own);
                return r;
        }
        s->procs[i] = own;
        return 0;
}

/* ---- reading one process ---- */

static bool keeps_private_heaps(const struct collector *c, const char *comm)
{
        if (!c->o.private_comms) {
                const struct ng_engine *e = ng_engine_of_process(comm);
                return e && e->private_heap && ng_engine_in_family(e, comm);
        }
        for (size_t i = 0; i < c->o.n_private_comms; i++)
                if (fnmatch(c->o.private_comms[i], comm, 0) == 0)
                        return true;
        return false;
}

/* Private anonymous mappings are segments only for the buffer-pool
 * holders: every other process's heap would cost a sample each. */
static void drop_private_maps(struct ng_proc *pr)
{
        size_t k = 0;
        for (size_t j = 0; j < pr->n_maps; j++) {
                if (pr->maps[j].kind == NG_MAP_ANON_PRIVATE) {
                        free(pr->maps[j].path);
                        continue;
                }
                pr->maps[k++] = pr->maps[j];
        }
        pr->n_maps = k;
}

int ng_collect_read_stat(struct collector *c, pid_t pid, struct ng_pid_stat *ret)
{
        char *buf;
        c->current_pid = pid;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/stat", pid);
        if (r < 0)
                return r;
        r = ng_parse_pid_stat(buf, ret);
        free(buf);
        return r;
}

bool ng_proc_maps_segment(const struct ng_proc *pr)
{
        for (size_t j = 0; j < pr->n_maps; j++)
                if (ng_map_is_segment(&pr->maps[j]))
                        return true;
        return false;
}

static int task_read(struct collector *c, pid_t pid, pid_t tid, struct ng_task *ret)
{
        char *buf;
        struct ng_pid_stat st;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/task/%d/stat", pid, tid);
        if (r < 0)
                return r;
        r = ng_parse_pid_stat(buf, &st);
        free(buf);
        if (r < 0)
                return r;
        uint64_t ticks;
        if (__builtin_add_overflow(st.utime_ticks, st.stime_ticks, &ticks))
                return -ERANGE;
        *ret = (struct ng_task) { .tid = tid, .processor = st.processor, .ticks = ticks, .weight_ticks = ticks };
        return 0;
}

/* One file per thread and no page walk. A process with one thread is its
 * own task: its stat says all, with no further read. */
int ng_collect_read_tasks(struct collector *c, struct ng_proc *pr)
{
        free(pr->tasks);
        pr->tasks = NULL;
        pr->n_tasks = 0;
        if (pr->stat.num_threads <= 1)
                return 0;
        struct ng_pid_entry *tids;
        size_t n;
        char dir[64];
        snprintf(dir, sizeof(dir), NG_PROC_DIR "/%d/task", (int) pr->pid);
        c->current_pid = pr->pid;
        int r = ng_path_list_pids(c->p, &tids, &n, dir);
        if (r < 0)      /* not readable, or a tree captured without it */
                return r == -ENOMEM ? r : 0;
        struct ng_task *v = calloc(n + 1, sizeof(*v));
        if (!v) {
                free(tids);
                return -ENOMEM;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                r = task_read(c, pr->pid, tids[i].pid, &v[k]);
                if (r == -ENOMEM)
                        break;
                k += r >= 0;    /* a thread that ended meanwhile: gone */
        }
        free(tids);
        if (r == -ENOMEM || k == 0) {
                free(v);
                return r == -ENOMEM ? r : 0;
        }
        pr->tasks = v;
        pr->n_tasks = k;
        return 0;
}

int ng_collect_read_status(struct collector *c, pid_t pid, struct ng_pid_status *ret)
{
        char *buf;
        c->current_pid = pid;
        int r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/status", pid);
        if (r < 0)
                return r == -ENOENT || r == -EACCES ? 0 : r;
        r = ng_parse_pid_status(buf, ret);
        free(buf);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? 0 : 1;
}

int ng_collect_reread_uids(struct collector *c, struct ng_proc *pr)
{
        struct ng_pid_status st;
        int r = ng_collect_read_status(c, pr->pid, &st);
        if (r < 0)
                return r;
        if (r == 0) {
                pr->status.uid = pr->status.euid = NG_UID_UNKNOWN;
                return 0;
        }
        pr->status.uid = st.uid;
        pr->status.euid = st.euid;
        ng_pid_status_done(&st);
        return 0;
}

int ng_collect_read_proc(struct collector *c, pid_t pid, struct ng_proc *pr)
{
        char *buf;
        size_t len;
        int r;

        memset(pr, 0, sizeof(*pr));
        pr->pid = pid;
        c->current_pid = pid;
        r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/stat", pid);
        if (r < 0)
                return r == -ENOENT || r == -EACCES ? 0 : r;
        r = ng_parse_pid_stat(buf, &pr->stat);
        free(buf);
        if (r < 0 || (pr->stat.flags & NG_PF_KTHREAD))
                return 0;
        pr->cpu_weight_ticks = pr->stat.utime_ticks + pr->stat.stime_ticks;

        r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/status", pid);
        if (r < 0)
                return r == -ENOENT || r == -EACCES ? 0 : r;
        r = ng_parse_pid_status(buf, &pr->status);
        free(buf);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;

        if (ng_collect_read(c, &buf, &len, NG_PROC_DIR "/%d/cmdline", pid) >= 0) {
                r = ng_parse_cmdline(buf, len, &pr->cmdline);
                free(buf);
                if (r == -ENOMEM)
                        goto fail;
        }
        ng_proc_set_name(pr);
        if (ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/cgroup", pid) >= 0) {
                r = ng_parse_pid_cgroup(buf, &pr->cgroup);
                free(buf);
                if (r == -ENOMEM)
                        goto fail;
        }
        /* maps lists VMAs without walking page tables: cheap, tier 0. */
        r = ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/maps", pid);
        if (r == -EACCES || r == -EPERM) {
                pr->maps_errno = -r;
                ng_collect_refusal(c, pr);
        }
        if (r >= 0) {
                struct ng_parse_skipped bad = {};
                r = ng_parse_maps(buf, c->o.min_private_bytes, &pr->maps, &pr->n_maps, &bad);
                free(buf);
                if (r == -ENOMEM)
                        goto fail;
                if (r >= 0 && !keeps_private_heaps(c, pr->name))
                        drop_private_maps(pr);
                pr->maps_bad_lines = bad.lines > UINT32_MAX ? UINT32_MAX : (uint32_t) bad.lines;
                pr->maps_bad_line = bad.first_line > UINT32_MAX ? UINT32_MAX : (uint32_t) bad.first_line;
        }
        /* Only where it can matter: a process that maps a segment or runs
         * a database, or any one a configured instance may take (its
         * processes are grouped by namespace). Every other one is taken to
         * share numaguard's. */
        if (c->o.all_namespaces || ng_proc_maps_segment(pr) || ng_engine_of_process(pr->name)) {
                ng_collect_proc_ns(c, pr);
        } else {
                pr->ipc_ns = c->s->ipc_ns;
                pr->mnt_ns = c->s->mnt_ns;
                pr->pid_ns = c->s->pid_ns;
        }
        if (ng_engine_main_locking(pr->name) && ng_collect_read(c, &buf, NULL, NG_PROC_DIR "/%d/limits", pid) >= 0) {
                uint64_t hard;
                pr->has_memlock = ng_parse_pid_limit(buf, "Max locked memory", &pr->memlock_soft_bytes, &hard) == 0;
                free(buf);
        }
        /* Where a database's threads run prices its placement; other
         * processes' threads are not worth a read each. */
        if (ng_proc_maps_segment(pr) && ng_collect_read_tasks(c, pr) == -ENOMEM)
                goto fail;
        return 1;
fail:
        ng_proc_done(pr);
        return -ENOMEM;
}

/* On the record, so that a picture's process read polls ago still says it. */
void ng_collect_maps_check(struct collector *c)
{
        for (size_t i = 0; i < c->s->n_procs; i++) {
                const struct ng_proc *pr = c->s->procs[i];
                char path[64];
                if (!pr->maps_bad_lines)
                        continue;
                snprintf(path, sizeof(path), NG_PROC_DIR "/%d/maps", (int) pr->pid);
                ng_collect_problem(c, path, "line %" PRIu32 " is not a mapping the kernel prints (%" PRIu32 " such "
                                   "line%s): the segments pid %d (%s) maps are unknown", pr->maps_bad_line,
                                   pr->maps_bad_lines, pr->maps_bad_lines == 1 ? "" : "s", (int) pr->pid, pr->name);
        }
}

int ng_collect_add_proc(struct ng_snapshot *s, size_t *cap, const struct ng_proc *pr)
{
        if (ng_grow(&s->procs, cap, s->n_procs, sizeof(*s->procs), 0) < 0)
                return -ENOMEM;
        struct ng_proc *own = ng_proc_alloc();
        if (!own)
                return -ENOMEM;
        *proc_rec_of(own) = *proc_rec_of(pr);
        s->procs[s->n_procs++] = own;
        return 0;
}

/* ---- every process, read in full ---- */

int ng_collect_procs(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        struct ng_pid_entry *pids;
        size_t n, cap = 0;
        int r = ng_path_list_pids(c->p, &pids, &n, NG_PROC_DIR);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                struct proc_rec rec = {};
                s->cost.procs_scanned++;
                r = ng_collect_read_proc(c, pids[i].pid, &rec.pr);
                if (r > 0 && (r = ng_collect_add_proc(s, &cap, &rec.pr)) < 0)
                        ng_proc_done(&rec.pr);
        }
        free(pids);
        c->current_pid = 0;
        return r < 0 ? r : 0;
}

/* Every process of the listing, read in full; kept in the picture when
 * the options carry one. */
/* Identity of a shared mapping: SysV by shmid, others by device and inode. */
bool ng_map_is_segment(const struct ng_map *m)
{
        return m->kind == NG_MAP_SYSV || m->kind == NG_MAP_FILE_SHARED ||
               m->kind == NG_MAP_ANON_SHARED || m->kind == NG_MAP_ANON_PRIVATE;
}

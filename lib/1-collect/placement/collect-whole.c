/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: where every resident page of each shmem segment is, asked of the
 * segment rather than of one attacher's page tables (sample-segment.c). A
 * /dev/shm file is opened by its path (a container's through
 * /proc/PID/root of a process in its mount namespace), so a file whose
 * filler closed it counts; a SysV or anonymous shared segment through the map_files link of
 * any process that maps it, which reaches the segment's own file (mapping
 * it there changes neither its attach count nor its last attacher). Live
 * host only. Hugetlb segments are left to the attachers' page tables
 * (collect-placement.c).
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "placement-internal.h"
#include "proc.h"
#include "cleanup.h"
#include "sample.h"
#include "text.h"
#include "ng-snapshot.h"
#include "util.h"

/* Samples at least this many pages of a small file, whatever its share. */
#define MIN_FILE_SAMPLES 64

static int cmp_u64(uint64_t a, uint64_t b)
{
        return (a > b) - (a < b);
}

static int cmp_key(const void *a, const void *b)
{
        const struct ng_seg_key *x = a, *y = b;
        int d = (int) x->sysv - (int) y->sysv;
        if (!d)
                d = cmp_u64(x->major, y->major);
        if (!d)
                d = cmp_u64(x->minor, y->minor);
        if (!d)
                d = cmp_u64(x->inode, y->inode);
        return d ? d : cmp_u64(x->ipc_ns, y->ipc_ns);
}

/* c->whole sorted, for find() to bisect. */
static void sort_whole(struct collector *c)
{
        if (c->n_whole)
                qsort(c->whole, c->n_whole, sizeof(*c->whole), cmp_key);
        c->n_whole_sorted = c->n_whole;
}

/* Every SysV segment of every IPC namespace sits on the kernel's one
 * internal mount, its inode the shmid: only the namespace tells two apart.
 * The sorted part of c->whole is bisected, what was marked since walked
 * (tail false: the sorted part only). */
static const struct ng_seg_key *find_in(const struct collector *c, bool sysv, uint64_t ipc_ns, unsigned major,
                                        unsigned minor, uint64_t inode, bool tail)
{
        struct ng_seg_key key = { .sysv = sysv, .major = major, .minor = minor, .inode = inode,
                                  .ipc_ns = sysv ? ipc_ns : 0 };
        const struct ng_seg_key *k = c->n_whole_sorted ?
                bsearch(&key, c->whole, c->n_whole_sorted, sizeof(key), cmp_key) : NULL;
        for (size_t i = c->n_whole_sorted; !k && tail && i < c->n_whole; i++)
                if (!cmp_key(&key, &c->whole[i]))
                        k = &c->whole[i];
        return k;
}

static const struct ng_seg_key *find(const struct collector *c, bool sysv, uint64_t ipc_ns, unsigned major,
                                     unsigned minor, uint64_t inode)
{
        return find_in(c, sysv, ipc_ns, major, minor, inode, true);
}

bool ng_collect_whole_done(const struct collector *c, bool sysv, uint64_t ipc_ns, unsigned major, unsigned minor,
                           uint64_t inode)
{
        const struct ng_seg_key *k = find(c, sysv, ipc_ns, major, minor, inode);
        return k && k->sampled;
}

/* sampled false: tried, and not this way (hugetlb). */
static int mark(struct collector *c, bool sysv, uint64_t ipc_ns, unsigned major, unsigned minor, uint64_t inode,
                bool sampled)
{
        if (ng_grow(&c->whole, NULL, c->n_whole, sizeof(*c->whole), 0) < 0)
                return -ENOMEM;
        c->whole[c->n_whole++] = (struct ng_seg_key) {
                .sysv = sysv, .sampled = sampled, .major = major, .minor = minor, .inode = inode,
                .ipc_ns = sysv ? ipc_ns : 0,
        };
        return 0;
}

/* Samples the segment behind fd and adds the result: 1 done, 0 not this
 * way (hugetlb, not a regular file), <0 an error that ends the collection
 * (-ENOMEM) or that must be told (a refused call). */
int ng_collect_add_sample(struct ng_snapshot *s, const struct ng_sample *smp)
{
        if (ng_grow(&s->samples, NULL, s->n_samples, sizeof(*s->samples), 0) < 0)
                return -ENOMEM;
        s->samples[s->n_samples++] = *smp;
        return 0;
}


static int sample_fd(struct collector *c, int fd, pid_t via, bool sysv, uint64_t ipc_ns, unsigned k, bool exact)
{
        struct ng_sample smp;
        int r = ng_sample_segment_fd(fd, k, exact, NULL, &smp);
        if (r == -EOPNOTSUPP || r == -EINVAL)
                return 0;
        if (r < 0)
                return r;
        smp.pid = via;
        smp.sysv = sysv;
        smp.ipc_ns = sysv ? ipc_ns : 0;
        c->s->cost.pages_sampled += smp.asked;
        r = ng_collect_add_sample(c->s, &smp);
        if (r < 0) {
                ng_sample_done(&smp);
                return r;
        }
        return 1;
}

/* A segment that cannot be opened falls back to an attacher's page tables,
 * and its placement_source says so. Permission is not a problem of its own:
 * without it the attachers' maps are unreadable too, and that finding names
 * them. Anything else is, a call refused once the segment is open (a
 * seccomp filter without mincore(2)) too. */
static void refused(struct collector *c, const char *path, int r, bool opening)
{
        if (opening && (r == -EACCES || r == -EPERM))
                return;
        ng_collect_problem(c, path, "cannot ask where this segment's pages are: %s", strerror(-r));
}

static unsigned file_budget(const struct collector *c, uint64_t allocated, uint64_t total)
{
        unsigned k = c->o.sample_pages;
        if (total == 0)
                return MIN_FILE_SAMPLES;
        uint64_t share = (uint64_t) ((double) k * (double) allocated / (double) total) + 1;
        return share < MIN_FILE_SAMPLES ? MIN_FILE_SAMPLES : share > k ? k : (unsigned) share;
}

static int cmp_file_at(const void *a, const void *b, void *base)
{
        const struct ng_shm_file *v = base, *x = &v[*(const size_t *) a], *y = &v[*(const size_t *) b];
        int d = cmp_u64(x->dev_major, y->dev_major);
        if (!d)
                d = cmp_u64(x->dev_minor, y->dev_minor);
        if (!d)
                d = cmp_u64(x->inode, y->inode);
        return d ? d : cmp_u64(*(const size_t *) a, *(const size_t *) b);
}

/* The files of s that are another's (the device and inode of an earlier
 * one: a file system listed through two mounts), true in the result. */
static bool *later_of_same(const struct ng_snapshot *s)
{
        _cleanup_free_ bool *later = calloc(s->n_files + 1, sizeof(*later));
        _cleanup_free_ size_t *idx = malloc((s->n_files + 1) * sizeof(*idx));
        if (!later || !idx)
                return NULL;
        for (size_t i = 0; i < s->n_files; i++)
                idx[i] = i;
        qsort_r(idx, s->n_files, sizeof(*idx), cmp_file_at, s->files);
        for (size_t i = 1; i < s->n_files; i++) {
                const struct ng_shm_file *x = &s->files[idx[i - 1]], *y = &s->files[idx[i]];
                later[idx[i]] = x->inode == y->inode && x->dev_major == y->dev_major && x->dev_minor == y->dev_minor;
        }
        return ng_steal_ptr(&later);
}

/* The (device, inode) of every shared file mapping, sorted: whether a
 * process maps a file (the live inode: the snapshot's case). */
static int cmp_map_key(const void *a, const void *b)
{
        return cmp_key(a, b);
}

static struct ng_seg_key *mapped_files(const struct ng_snapshot *s, size_t *ret_n)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                n += s->procs[i]->n_maps;
        struct ng_seg_key *v = malloc((n + 1) * sizeof(*v));
        if (!v)
                return NULL;
        n = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                for (size_t j = 0; j < s->procs[i]->n_maps; j++) {
                        const struct ng_map *m = &s->procs[i]->maps[j];
                        if (m->kind == NG_MAP_FILE_SHARED)
                                v[n++] = (struct ng_seg_key) { .major = m->dev_major, .minor = m->dev_minor,
                                                               .inode = m->inode };
                }
        if (n)
                qsort(v, n, sizeof(*v), cmp_map_key);
        *ret_n = n;
        return v;
}

static bool mapped(const struct ng_seg_key *v, size_t n, const struct ng_shm_file *f)
{
        struct ng_seg_key key = { .major = f->dev_major, .minor = f->dev_minor, .inode = f->inode };
        return n && bsearch(&key, v, n, sizeof(key), cmp_map_key);
}

/* ---- what a snapshot keeps of a file's own answer ----
 *
 * A tree places a segment through the numa_maps of a process that maps
 * it; a /dev/shm file nobody maps (PostgreSQL's DSM segments between
 * queries, an Oracle granule file left behind) has none there. Its answer
 * is kept as NG_PATH_WHOLE_DIR/file-MAJOR-MINOR-HASH, HASH the FNV-1a of
 * its path (a name is unique on its device, and another namespace's
 * /dev/shm is another device), the path in the record as NG_TEXT_RECORD
 * escapes it:
 *   path /dev/shm/PostgreSQL.1234
 *   inode 17 allocated 1048576 len 1048576 asked 256 present 256 exact 0
 *   nodes 0:200 3:56
 *   policy default
 *   unwalked 1904640
 * (unwalked: only when the data of a file fragmented past the extents
 * followed was not all walked) and replayed by a --root collection in its
 * place (a record without the
 * policy line, from an older snapshot: the policy is unknown). */
#define NG_PATH_WHOLE_DIR "/numaguard/whole"

static void whole_rel(const struct ng_shm_file *f, char *buf, size_t size)
{
        uint64_t h = 1469598103934665603ULL;
        for (const char *q = f->path; *q; q++)
                h = (h ^ (unsigned char) *q) * 1099511628211ULL;
        snprintf(buf, size, NG_PATH_WHOLE_DIR "/file-%u-%u-%016" PRIx64, f->dev_major, f->dev_minor, h);
}

static void record_whole(const struct collector *c, const struct ng_shm_file *f, const struct ng_sample *smp)
{
        char rel[128];
        whole_rel(f, rel, sizeof(rel));
        _cleanup_free_ char *path = ng_text_dup(NG_TEXT_RECORD, f->path), *text = NULL;
        size_t len = 0;
        FILE *o = path ? open_memstream(&text, &len) : NULL;
        if (!o)
                return;         /* no record: the tree places the file as nobody's */
        fprintf(o, "path %s\ninode %" PRIu64 " allocated %" PRIu64 " len %" PRIu64 " asked %" PRIu32 " present %"
                PRIu32 " exact %d\nnodes", path, f->inode, f->allocated_bytes, smp->len, smp->asked, smp->present,
                smp->exact);
        for (size_t k = 0; k < smp->n_np; k++)
                fprintf(o, " %d:%" PRIu64, smp->np[k].node, smp->np[k].pages);
        if (smp->policy[0])
                fprintf(o, "\npolicy %s", smp->policy);
        if (smp->unwalked_bytes)
                fprintf(o, "\nunwalked %" PRIu64, smp->unwalked_bytes);
        fputc('\n', o);
        bool bad = ferror(o);
        if (fclose(o) == 0 && !bad)
                ng_path_record(c->p, rel, text, len);
}

/* Whether a record's path line (len bytes at line) names f: escaped as
 * NG_TEXT_RECORD does, or as it was before records escaped names (a path
 * without a newline). */
static bool names_file(const char *line, size_t len, const struct ng_shm_file *f)
{
        _cleanup_free_ char *esc = ng_text_dup(NG_TEXT_RECORD, f->path);
        return (esc && strlen(esc) == len && !memcmp(line, esc, len)) ||
               (strlen(f->path) == len && !memcmp(line, f->path, len));
}

/* The kept answer of f into *smp (inode and allocated bytes into f: the
 * tree's copy has its own). 1 found, 0 none or not f's, -ENOMEM. */
static int replay_whole(struct collector *c, struct ng_shm_file *f, struct ng_sample *smp)
{
        char rel[128];
        _cleanup_free_ char *buf = NULL;
        size_t len;
        whole_rel(f, rel, sizeof(rel));
        if (ng_path_read(c->p, &buf, &len, "%s", rel) < 0)
                return 0;
        uint64_t inode, allocated;
        unsigned exact;
        int off = 0;
        char *nl = strchr(buf, '\n');
        *smp = (struct ng_sample) { .whole = true, .dev_major = f->dev_major, .dev_minor = f->dev_minor };
        if (strncmp(buf, "path ", 5) || !nl || !names_file(buf + 5, (size_t) (nl - buf - 5), f) ||
            sscanf(nl + 1, "inode %" SCNu64 " allocated %" SCNu64 " len %" SCNu64 " asked %" SCNu32 " present %"
                   SCNu32 " exact %u nodes%n", &inode, &allocated, &smp->len, &smp->asked, &smp->present, &exact,
                   &off) != 6 || !off)
                return 0;
        int r = 0;
        const char *q = nl + 1 + off;
        for (; r >= 0;) {
                int node, used = 0;
                uint64_t pages;
                if (sscanf(q, " %d:%" SCNu64 "%n", &node, &pages, &used) != 2 || !used)
                        break;
                for (uint64_t k = 0; k < pages && r >= 0; k++)
                        r = ng_sample_count_node(smp, node);
                q += used;
        }
        /* the policy line: the rest of it, up to the end of the line */
        const char *pol = strstr(q, "\npolicy ");
        if (pol) {
                pol += strlen("\npolicy ");
                size_t plen = strcspn(pol, "\n");
                if (plen < sizeof(smp->policy))
                        snprintf(smp->policy, sizeof(smp->policy), "%.*s", (int) plen, pol);
        }
        /* the data past the extents walked (a fragmented file), taken to
         * sit like what was asked: an older snapshot has no such line */
        const char *unw = strstr(q, "\nunwalked ");
        if (unw && sscanf(unw, "\nunwalked %" SCNu64, &smp->unwalked_bytes) != 1)
                smp->unwalked_bytes = 0;
        if (r < 0) {
                ng_sample_done(smp);
                return r;
        }
        smp->exact = exact;
        smp->inode = f->inode = inode;
        f->allocated_bytes = allocated;
        return 1;
}

/* A --root collection: the files whose answer the snapshot kept. */
static int replay_files(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        for (size_t i = 0; i < s->n_files; i++) {
                struct ng_shm_file *f = &s->files[i];
                struct ng_sample smp;
                if (f->kind != NG_SHM_FILE_TMPFS)
                        continue;
                int r = replay_whole(c, f, &smp);
                if (r > 0 && (r = ng_collect_add_sample(s, &smp)) < 0)
                        ng_sample_done(&smp);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* /dev/shm files, attached or not (kept: only those nobody maps, their
 * answer recorded for the tree); the file opened must be the one listed. */
static int sample_files(struct collector *c, bool exact, bool kept)
{
        const struct ng_snapshot *s = c->s;
        uint64_t total = 0;
        for (size_t i = 0; i < s->n_files; i++)
                if (s->files[i].kind == NG_SHM_FILE_TMPFS)
                        total += s->files[i].allocated_bytes;
        size_t n_maps = 0;
        _cleanup_free_ bool *later = later_of_same(s);
        _cleanup_free_ struct ng_seg_key *maps = kept ? mapped_files(s, &n_maps) : NULL;
        if (!later || (kept && !maps))
                return -ENOMEM;
        sort_whole(c);
        for (size_t i = 0; i < s->n_files; i++) {
                const struct ng_shm_file *f = &s->files[i];
                if (f->kind != NG_SHM_FILE_TMPFS || later[i] ||
                    find_in(c, false, 0, f->dev_major, f->dev_minor, f->inode, false) ||
                    (kept && mapped(maps, n_maps, f)))
                        continue;
                /* a container's file through its root, checked below */
                char root[48] = "";
                if (f->ns_pid)
                        snprintf(root, sizeof(root), NG_PROC_DIR "/%d/root", (int) f->ns_pid);
                int fd = ng_path_open_segment(c->p, false, "%s%s", root, f->path);
                if (fd == -ENOENT)
                        continue;       /* removed since it was listed */
                if (fd < 0) {
                        refused(c, f->path, fd, true);
                        continue;
                }
                struct stat st;
                int r = 0;
                if (fstat(fd, &st) == 0 && (uint64_t) st.st_ino == f->inode && major(st.st_dev) == f->dev_major &&
                    minor(st.st_dev) == f->dev_minor)
                        r = sample_fd(c, fd, 0, false, 0, file_budget(c, f->allocated_bytes, total), exact);
                close(fd);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        refused(c, f->path, r, false);
                else if (r > 0 && kept)
                        record_whole(c, f, &s->samples[s->n_samples - 1]);
                if (r > 0 && (r = mark(c, false, 0, f->dev_major, f->dev_minor, f->inode, true)) < 0)
                        return r;
        }
        sort_whole(c);
        return 0;
}

/* The file opened through m's map_files link is the one m names: its
 * device and inode, and for SysV its name (ng_segment_named: another file
 * may have the shmid for inode on the same device). */
static bool is_mapped_file(int fd, const struct ng_map *m)
{
        struct stat st;
        char name[PATH_MAX];
        if (fstat(fd, &st) < 0 || (uint64_t) st.st_ino != m->inode || major(st.st_dev) != m->dev_major ||
            minor(st.st_dev) != m->dev_minor)
                return false;
        if (m->kind != NG_MAP_SYSV)
                return true;
        snprintf(name, sizeof(name), "%s%s", m->path, m->deleted ? " (deleted)" : "");
        return ng_segment_named(fd, name);
}

/* What was asked through pr since the collector held n_samples samples
 * and n_whole keys, dropped when pr may no longer speak for one of the
 * segments (its uids read again: speakers.c): another attacher serves. */
static int confirm_via(struct collector *c, size_t i, size_t n_samples, size_t n_whole)
{
        struct ng_snapshot *s = c->s;
        if (s->n_samples == n_samples && c->n_whole == n_whole)
                return 0;
        int r = ng_snapshot_own_proc(s, i);
        if (r >= 0)
                r = ng_collect_reread_uids(c, s->procs[i]);
        if (r < 0)
                return r;
        const struct ng_proc *pr = s->procs[i];
        bool keep = true;
        for (size_t j = 0; j < pr->n_maps && keep; j++) {
                const struct ng_map *m = &pr->maps[j];
                if (m->kind == NG_MAP_SYSV || m->kind == NG_MAP_ANON_SHARED)
                        keep = ng_snapshot_may_speak(s, pr, m);
        }
        if (keep)
                return 0;
        while (s->n_samples > n_samples)
                ng_sample_done(&s->samples[--s->n_samples]);
        c->n_whole = n_whole;
        return 0;
}

/* SysV and anonymous shared segments through whoever maps them and may
 * speak for them (speakers.c): the file a map_files link reaches is
 * checked against the process's own maps line, which another user's
 * process makes say what its own file is. */
static int sample_mapped(struct collector *c, bool exact)
{
        struct ng_snapshot *s = c->s;
        for (size_t i = 0; i < s->n_procs; i++) {
                const struct ng_proc *pr = s->procs[i];
                size_t n_samples = s->n_samples, n_whole = c->n_whole;
                for (size_t j = 0; j < pr->n_maps; j++) {
                        const struct ng_map *m = &pr->maps[j];
                        bool sysv = m->kind == NG_MAP_SYSV;
                        if ((!sysv && m->kind != NG_MAP_ANON_SHARED) || (m->page_kib && m->page_kib > 4) ||
                            find(c, sysv, pr->ipc_ns, m->dev_major, m->dev_minor, m->inode) ||
                            !ng_snapshot_may_speak(s, pr, m))
                                continue;
                        c->current_pid = pr->pid;
                        if (c->o.progress)
                                c->o.progress(c->o.progress_data, pr->pid);
                        char path[96];
                        snprintf(path, sizeof(path), NG_PROC_DIR "/%d/map_files/%" PRIx64 "-%" PRIx64,
                                 (int) pr->pid, m->start, m->end);
                        _cleanup_close_ int fd = ng_path_open_segment(c->p, true, "%s", path);
                        if (fd < 0) {
                                if (fd != -ENOENT)      /* gone: another attacher serves */
                                        refused(c, path, fd, true);
                                continue;
                        }
                        /* The link is followed when the maps were read
                         * already: a process may have put another file
                         * there since (its own, with the inode of someone
                         * else's segment, a file or a memfd). Only the
                         * file the maps line names is asked; another
                         * attacher serves. */
                        if (!is_mapped_file(fd, m))
                                continue;
                        int r = sample_fd(c, fd, pr->pid, sysv, pr->ipc_ns, c->o.sample_pages, exact);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                refused(c, path, r, false);
                        /* Done, or hugetlb: either way not again this way. */
                        if (r >= 0 && (r = mark(c, sysv, pr->ipc_ns, m->dev_major, m->dev_minor, m->inode, r > 0)) < 0)
                                return r;
                }
                int r = confirm_via(c, i, n_samples, n_whole);
                if (r < 0)
                        return r;
        }
        c->current_pid = 0;
        return 0;
}

int ng_collect_whole(struct collector *c, bool exact)
{
        if (!ng_path_is_live(c->p))
                return 0;
        int r = sample_files(c, exact, false);
        return r < 0 ? r : sample_mapped(c, exact);
}

int ng_collect_whole_kept(struct collector *c)
{
        if (!ng_path_is_live(c->p))
                return replay_files(c);
        return sample_files(c, false, true);
}

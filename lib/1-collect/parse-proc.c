/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of per-process and IPC files under /proc: sysvipc/shm,
 * <pid>/stat, status, cmdline, cgroup, maps, numa_maps, and cgroup
 * memory.numa_stat. Each line is copied (bounded) before it is split, so a
 * parser never looks past the buffer's NUL.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ng-parse.h"
#include "parse-internal.h"

/* MAX_NUMNODES is at most 1024. */
#define MAX_NODES_PER_LINE 1024u
#define MAX_FIELDS 64

/* Splits on runs of blanks in place; returns the field count, or max + 1
 * when there are more fields than max. */
static size_t split(char *s, char **f, size_t max)
{
        size_t n = 0;

        for (;;) {
                while (*s == ' ' || *s == '\t' || *s == '\r')
                        *s++ = '\0';
                if (!*s)
                        return n;
                if (n == max)
                        return max + 1;
                f[n++] = s;
                while (*s && *s != ' ' && *s != '\t' && *s != '\r')
                        s++;
        }
}

/* A whole field as an unsigned decimal. */
static int field_u64(const char *s, uint64_t *ret)
{
        uint64_t v;
        int r;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        r = ng_parse_u64(&s, &v);
        if (r < 0)
                return r;
        if (*s)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int field_u32(const char *s, uint32_t *ret)
{
        uint64_t v;

        if (field_u64(s, &v) < 0 || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t)v;
        return 0;
}

static int field_i64(const char *s, int64_t min, int64_t max, int64_t *ret)
{
        bool neg = *s == '-';
        uint64_t v;

        if (field_u64(s + neg, &v) < 0)
                return -EINVAL;
        if (neg ? v > (uint64_t)-(min + 1) + 1 : v > (uint64_t)max)
                return -ERANGE;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
}

static int field_pid(const char *s, pid_t *ret)
{
        int64_t v;

        if (field_i64(s, 0, INT_MAX, &v) < 0)
                return -EINVAL;
        *ret = (pid_t)v;
        return 0;
}

/* Hex digits up to end or stop; no "0x". */
static int hex_u64(const char **s, char stop, uint64_t *ret)
{
        const char *p = *s;
        uint64_t v = 0;

        if (*p == '\0' || *p == stop)
                return -EINVAL;
        for (; *p && *p != stop; p++) {
                int d;

                if (*p >= '0' && *p <= '9')
                        d = *p - '0';
                else if (*p >= 'a' && *p <= 'f')
                        d = *p - 'a' + 10;
                else if (*p >= 'A' && *p <= 'F')
                        d = *p - 'A' + 10;
                else
                        return -EINVAL;
                if (v >> 60)
                        return -ERANGE;
                v = v << 4 | (uint64_t)d;
        }
        *s = p;
        *ret = v;
        return 0;
}

static int field_hex(const char *s, uint64_t *ret)
{
        return hex_u64(&s, '\0', ret);
}

/* ---- /proc/sysvipc/shm ---- */

/* Columns since Linux 2.6.29; before that the last two (rss, swap) were
 * missing. Columns a future kernel appends are ignored. */
#define SHM_COLS_OLD 14
#define SHM_COLS 16

static int shm_times(char **f, struct ng_shm_seg *s)
{
        uint64_t t[3];

        /* printed with %llu from a time64_t; reinterpret */
        for (int i = 0; i < 3; i++)
                if (field_u64(f[11 + i], &t[i]) < 0)
                        return -EINVAL;
        s->atime = (int64_t)t[0];
        s->dtime = (int64_t)t[1];
        s->ctime = (int64_t)t[2];
        return 0;
}

static int shm_ids(char **f, struct ng_shm_seg *s)
{
        int64_t key, id;
        uint64_t perms = 0;

        if (field_i64(f[0], INT32_MIN, INT32_MAX, &key) < 0 ||
            field_i64(f[1], 0, INT32_MAX, &id) < 0)
                return -EINVAL;
        for (const char *p = f[2]; *p; p++) {
                if (*p < '0' || *p > '7' || perms > 07777)
                        return -EINVAL;
                perms = perms * 8 + (uint64_t)(*p - '0');
        }
        if (perms > 0177777)
                return -EINVAL;
        s->key = (int32_t)key;
        s->shmid = (int32_t)id;
        s->perms = (uint32_t)perms;
        return 0;
}

static bool shm_line(char *line, struct ng_shm_seg *s)
{
        char *f[SHM_COLS + 1];
        size_t n = split(line, f, SHM_COLS);

        if (n > SHM_COLS)
                n = SHM_COLS;
        if (n != SHM_COLS_OLD && n != SHM_COLS)
                return false;
        *s = (struct ng_shm_seg) {};
        if (shm_ids(f, s) < 0 ||
            field_u64(f[3], &s->size_bytes) < 0 ||
            field_pid(f[4], &s->cpid) < 0 || field_pid(f[5], &s->lpid) < 0 ||
            field_u64(f[6], &s->nattch) < 0 ||
            field_u32(f[7], &s->uid) < 0 || field_u32(f[8], &s->gid) < 0 ||
            field_u32(f[9], &s->cuid) < 0 || field_u32(f[10], &s->cgid) < 0 ||
            shm_times(f, s) < 0)
                return false;
        if (n == SHM_COLS_OLD)
                return true;
        s->has_rss = true;
        return field_u64(f[14], &s->rss_bytes) == 0 && field_u64(f[15], &s->swap_bytes) == 0;
}

/* The header and malformed rows are skipped; 14 columns (before 2.6.29) or
 * at least 16. */
static int shm_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        /* the header's first field is "key": not a number */
        return shm_line(line, item) ? 1 : 0;
}

static void shm_free(void *array, size_t n)
{
        (void) n;
        free(array);
}

int ng_parse_sysvipc_shm(const char *buf, struct ng_shm_seg **ret, size_t *ret_n)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), shm_item, NULL, shm_free, (void **) ret, ret_n);
}

/* ---- /proc/<pid>/stat ---- */

/* Fields counted from 1 as in proc(5); the ones we keep. */
#define STAT_STATE 3
#define STAT_PPID 4
#define STAT_FLAGS 9
#define STAT_UTIME 14
#define STAT_STIME 15
#define STAT_STARTTIME 22
#define STAT_PROCESSOR 39

static int stat_fields(char **f, size_t n, struct ng_pid_stat *st)
{
        int64_t cpu;

        /* f[0] is field 3 (state) */
        if (n < STAT_STARTTIME - 2 || strlen(f[0]) != 1)
                return -EINVAL;
        st->state = f[0][0];
        if (field_pid(f[STAT_PPID - 3], &st->ppid) < 0 ||
            field_u32(f[STAT_FLAGS - 3], &st->flags) < 0 ||
            field_u64(f[STAT_STARTTIME - 3], &st->starttime_ticks) < 0 ||
            field_u64(f[STAT_UTIME - 3], &st->utime_ticks) < 0 ||
            field_u64(f[STAT_STIME - 3], &st->stime_ticks) < 0)
                return -EINVAL;
        st->processor = -1;
        if (n > STAT_PROCESSOR - 3) {
                if (field_i64(f[STAT_PROCESSOR - 3], 0, INT_MAX, &cpu) < 0)
                        return -EINVAL;
                st->processor = (int)cpu;
        }
        return 0;
}

/* The comm may hold blanks and ')' (prctl(PR_SET_NAME) takes anything), so
 * it ends at the last ')' of the line. */
static int stat_comm(const char *buf, struct ng_pid_stat *st, const char **ret_rest)
{
        const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
        size_t len;

        if (!open || !close || close < open)
                return -EINVAL;
        len = (size_t)(close - open - 1);
        if (len >= sizeof(st->comm))
                len = sizeof(st->comm) - 1;
        memcpy(st->comm, open + 1, len);
        st->comm[len] = '\0';
        *ret_rest = close + 1;
        return 0;
}

/* One record: any malformed field before field 22 fails the whole parse. */
int ng_parse_pid_stat(const char *buf, struct ng_pid_stat *ret)
{
        struct ng_pid_stat st = {};
        const char *rest, *p = buf;
        char *copy, *f[MAX_FIELDS];
        uint64_t pid;
        size_t n;
        int r;

        if (!buf || !ret)
                return -EINVAL;
        if (ng_parse_u64(&p, &pid) < 0 || pid > INT_MAX || *p != ' ' || p[1] != '(')
                return -EINVAL;
        st.pid = (pid_t)pid;
        if (stat_comm(p, &st, &rest) < 0)
                return -EINVAL;
        copy = strndup(rest, strcspn(rest, "\n"));
        if (!copy)
                return -ENOMEM;
        n = split(copy, f, MAX_FIELDS);
        r = stat_fields(f, n > MAX_FIELDS ? MAX_FIELDS : n, &st);
        free(copy);
        if (r < 0)
                return r;
        *ret = st;
        return 0;
}

/* ---- /proc/<pid>/status ---- */

struct status_kib {
        const char *key;
        size_t offset;
        size_t has_offset;      /* (size_t)-1 when always present */
};

#define KIB(k, field, has) { k, offsetof(struct ng_pid_status, field), has }
#define NO_HAS ((size_t)-1)

static const struct status_kib status_kibs[] = {
        KIB("VmSize", vm_size_kib, NO_HAS),
        KIB("VmRSS", vm_rss_kib, NO_HAS),
        KIB("RssAnon", rss_anon_kib, NO_HAS),
        KIB("RssFile", rss_file_kib, NO_HAS),
        /* RssShmem since 4.5, HugetlbPages since 4.4: absent means unknown */
        KIB("RssShmem", rss_shmem_kib, offsetof(struct ng_pid_status, has_rss_shmem)),
        KIB("VmPTE", vm_pte_kib, offsetof(struct ng_pid_status, has_vm_pte)),
        KIB("HugetlbPages", hugetlb_kib, offsetof(struct ng_pid_status, has_hugetlb)),
        KIB("Threads", threads, NO_HAS),
};

static int status_number(const char *key, const char *val, struct ng_pid_status *st)
{
        for (size_t i = 0; i < sizeof(status_kibs) / sizeof(status_kibs[0]); i++) {
                const struct status_kib *k = &status_kibs[i];
                uint64_t v;

                if (strcmp(key, k->key) != 0)
                        continue;
                if (ng_parse_u64(&val, &v) < 0)
                        return -EINVAL;
                /* "kB" (or nothing, for Threads) may follow */
                memcpy((char *)st + k->offset, &v, sizeof(v));
                if (k->has_offset != NO_HAS)
                        *((bool *)((char *)st + k->has_offset)) = true;
                return 0;
        }
        return -ENOENT;
}

static int status_ids(const char *val, uint32_t *ret_real, uint32_t *ret_eff)
{
        uint64_t real, eff;

        if (ng_parse_u64(&val, &real) < 0 || ng_parse_u64(&val, &eff) < 0 ||
            real > UINT32_MAX || eff > UINT32_MAX)
                return -EINVAL;
        *ret_real = (uint32_t)real;
        *ret_eff = (uint32_t)eff;
        return 0;
}

static int status_pid(const char *val, pid_t *ret)
{
        uint64_t v;

        if (ng_parse_u64(&val, &v) < 0 || v > INT_MAX)
                return -EINVAL;
        *ret = (pid_t)v;
        return 0;
}

static int status_list(const char *val, struct ng_idset *set, bool *has)
{
        /* one 1 KiB bitmap while parsing: keep it off the stack */
        struct ng_bitmap *b = malloc(sizeof(*b));
        struct ng_idset parsed;

        if (!b)
                return -ENOMEM;
        /* an id past NG_BITMAP_BITS: leave the set unknown, not wrong */
        *has = ng_bitmap_parse_list(val, b) == 0;
        int r = *has ? ng_idset_from_bitmap(b, &parsed) : 0;
        free(b);
        if (r < 0)
                return r;
        ng_idset_done(set);
        if (*has)
                *set = parsed;
        return 0;
}

/* Returns 1 for Name:, 2 for Pid:, 0 for other lines, -ENOMEM. */
static int status_line(char *line, struct ng_pid_status *st)
{
        char *colon = strchr(line, ':'), *val;
        pid_t pid;

        if (!colon)
                return 0;
        *colon = '\0';
        val = colon + 1;
        if (strcmp(line, "Name") == 0) {
                val += strspn(val, "\t ");
                snprintf(st->name, sizeof(st->name), "%s", val);
                return 1;
        }
        if (strcmp(line, "Pid") == 0)
                return status_pid(val, &pid) == 0 ? 2 : 0;
        if (strcmp(line, "Tgid") == 0)
                (void)status_pid(val, &st->tgid);
        else if (strcmp(line, "PPid") == 0)
                (void)status_pid(val, &st->ppid);
        else if (strcmp(line, "Uid") == 0)
                (void)status_ids(val, &st->uid, &st->euid);
        else if (strcmp(line, "Cpus_allowed_list") == 0)
                return status_list(val, &st->cpus_allowed, &st->has_cpus_allowed);
        else if (strcmp(line, "Mems_allowed_list") == 0)
                return status_list(val, &st->mems_allowed, &st->has_mems_allowed);
        else
                (void)status_number(line, val, st);
        return 0;
}

/* Unknown and malformed lines are skipped; a list with an id past
 * NG_BITMAP_BITS leaves has_*_allowed false. */
int ng_parse_pid_status(const char *buf, struct ng_pid_status *ret)
{
        struct ng_pid_status st = {0};
        bool has_name = false, has_pid = false;
        int k = 0;

        if (!buf || !ret)
                return -EINVAL;
        for (const char *p = buf; *p && k >= 0; ) {
                char *line = ng_parse_line_dup(&p);

                if (!line) {
                        k = -ENOMEM;
                        break;
                }
                k = status_line(line, &st);
                has_name |= k == 1;
                has_pid |= k == 2;
                free(line);
        }
        if (k < 0 || !has_name || !has_pid) {
                ng_pid_status_done(&st);
                return k < 0 ? k : -EINVAL;
        }
        *ret = st;
        return 0;
}

void ng_pid_status_done(struct ng_pid_status *st)
{
        if (!st)
                return;
        ng_idset_done(&st->cpus_allowed);
        ng_idset_done(&st->mems_allowed);
}

/* ---- /proc/<pid>/cmdline ---- */

int ng_parse_cmdline(const char *buf, size_t len, char **ret)
{
        char *s;

        if (!ret || (!buf && len))
                return -EINVAL;
        while (len > 0 && buf[len - 1] == '\0')
                len--;
        s = malloc(len + 1);
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++)
                s[i] = buf[i] ? buf[i] : ' ';
        s[len] = '\0';
        *ret = s;
        return 0;
}

/* ---- /proc/<pid>/cgroup ---- */

static void cgroup_entries_free(struct ng_cgroup_entry *e, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(e[i].controllers);
                free(e[i].path);
        }
        free(e);
}

void ng_pid_cgroup_done(struct ng_pid_cgroup *c)
{
        if (!c)
                return;
        cgroup_entries_free(c->e, c->n);
        c->e = NULL;
        c->n = 0;
}

/* "ID:CONTROLLERS:PATH"; the path may itself hold ':'. */
static int cgroup_line(char *line, struct ng_cgroup_entry *e)
{
        char *c1 = strchr(line, ':'), *c2;
        uint32_t id;

        if (!c1)
                return -EINVAL;
        *c1 = '\0';
        c2 = strchr(c1 + 1, ':');
        if (!c2 || c2[1] != '/' || field_u32(line, &id) < 0)
                return -EINVAL;
        *c2 = '\0';
        e->hierarchy_id = id;
        e->controllers = strdup(c1 + 1);
        e->path = strdup(c2 + 1);
        if (!e->controllers || !e->path) {
                free(e->controllers);
                free(e->path);
                return -ENOMEM;
        }
        return 0;
}

/* Lines without two colons, a numeric id and an absolute path are skipped. */
static int cgroup_item(char *line, void *item, void *userdata)
{
        struct ng_cgroup_entry *e = item;
        (void) userdata;
        *e = (struct ng_cgroup_entry) {};
        /* cgroup_line() frees what it allocated when it fails */
        int r = cgroup_line(line, e);
        return r == 0 ? 1 : r == -EINVAL ? 0 : r;
}

static void cgroup_free(void *array, size_t n)
{
        cgroup_entries_free(array, n);
}

int ng_parse_pid_cgroup(const char *buf, struct ng_pid_cgroup *ret)
{
        struct ng_cgroup_entry *e;
        size_t n;
        if (!buf || !ret)
                return -EINVAL;
        int r = ng_parse_lines(buf, sizeof(*e), cgroup_item, NULL, cgroup_free, (void **) &e, &n);
        if (r < 0)
                return r;
        *ret = (struct ng_pid_cgroup) { .e = e, .n = n };
        return 0;
}

const char *ng_pid_cgroup_v2_path(const struct ng_pid_cgroup *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                if (c->e[i].hierarchy_id == 0 && c->e[i].controllers[0] == '\0')
                        return c->e[i].path;
        return NULL;
}

static bool list_has(const char *list, const char *item)
{
        size_t len = strlen(item);

        for (const char *p = list; *p; ) {
                size_t k = strcspn(p, ",");

                if (k == len && strncmp(p, item, len) == 0)
                        return true;
                p += k;
                if (*p)
                        p++;
        }
        return false;
}

const char *ng_pid_cgroup_v1_path(const struct ng_pid_cgroup *c, const char *controller)
{
        if (!c || !controller || !*controller)
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                if (c->e[i].hierarchy_id != 0 && list_has(c->e[i].controllers, controller))
                        return c->e[i].path;
        return NULL;
}

/* ---- /proc/<pid>/maps ---- */

void ng_maps_free(struct ng_map *m, size_t n)
{
        if (!m)
                return;
        for (size_t i = 0; i < n; i++)
                free(m[i].path);
        free(m);
}

static int maps_perms(const char *s, struct ng_map *m)
{
        if (strlen(s) != 4 || (s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
            (s[2] != 'x' && s[2] != '-') || (s[3] != 's' && s[3] != 'p'))
                return -EINVAL;
        m->read = s[0] == 'r';
        m->write = s[1] == 'w';
        m->exec = s[2] == 'x';
        m->shared = s[3] == 's';
        return 0;
}

static int maps_dev(const char *s, struct ng_map *m)
{
        uint64_t maj, min;

        if (hex_u64(&s, ':', &maj) < 0 || *s != ':')
                return -EINVAL;
        s++;
        if (hex_u64(&s, '\0', &min) < 0 || maj > UINT_MAX || min > UINT_MAX)
                return -EINVAL;
        m->dev_major = (unsigned)maj;
        m->dev_minor = (unsigned)min;
        return 0;
}

static int maps_range(const char *s, struct ng_map *m)
{
        if (hex_u64(&s, '-', &m->start) < 0 || *s != '-')
                return -EINVAL;
        s++;
        if (hex_u64(&s, '\0', &m->end) < 0 || m->end < m->start)
                return -EINVAL;
        return 0;
}

/* Consumes one blank-terminated field of the line at *p into a NUL-ended
 * copy within the line (the line is ours). */
static char *next_field(char **p)
{
        char *s = *p, *f;

        while (*s == ' ' || *s == '\t')
                s++;
        if (!*s)
                return NULL;
        f = s;
        while (*s && *s != ' ' && *s != '\t')
                s++;
        if (*s)
                *s++ = '\0';
        *p = s;
        return f;
}

/* The five fixed fields; *p is left at the (padded) path. Once a field is
 * missing every later one is NULL too, so checking inode first suffices. */
static int maps_fixed(char **p, struct ng_map *m)
{
        char *range = next_field(p), *perms = next_field(p), *off = next_field(p);
        char *dev = next_field(p), *inode = next_field(p);

        if (!inode || maps_range(range, m) < 0 || maps_perms(perms, m) < 0 ||
            field_hex(off, &m->offset) < 0 || maps_dev(dev, m) < 0 ||
            field_u64(inode, &m->inode) < 0)
                return -EINVAL;
        return 0;
}

/* "/SYSV%08x": the kernel names SysV segments after their key. */
static bool sysv_name(const char *path, int32_t *ret_key)
{
        const char *p = path + 5;
        uint64_t key;

        if (strncmp(path, "/SYSV", 5) != 0 || strlen(p) != 8 || field_hex(p, &key) < 0)
                return false;
        *ret_key = (int32_t)(uint32_t)key;
        return true;
}

static bool anon_private_name(const char *path)
{
        /* "[anon:NAME]" comes from PR_SET_VMA_ANON_NAME (5.17+) */
        return path[0] == '\0' || strcmp(path, "[heap]") == 0 || strncmp(path, "[anon:", 6) == 0;
}

static enum ng_map_kind maps_kind(struct ng_map *m)
{
        if (m->shared) {
                if (m->deleted && sysv_name(m->path, &m->sysv_key))
                        return NG_MAP_SYSV;
                /* shmem_zero_setup() and hugetlb_file_setup() names */
                if (m->deleted && (strcmp(m->path, "/dev/zero") == 0 ||
                                   strcmp(m->path, "/anon_hugepage") == 0))
                        return NG_MAP_ANON_SHARED;
                if (m->path[0] == '/')
                        return NG_MAP_FILE_SHARED;
                return NG_MAP_OTHER;
        }
        if (m->inode == 0 && anon_private_name(m->path))
                return NG_MAP_ANON_PRIVATE;
        return NG_MAP_OTHER;
}

static void strip_deleted(char *path, bool *deleted)
{
        static const char suffix[] = " (deleted)";
        size_t len = strlen(path), k = strlen(suffix);

        *deleted = len >= k && strcmp(path + len - k, suffix) == 0;
        if (*deleted)
                path[len - k] = '\0';
}

/* A private mapping with no access ("---p") holds no memory: it reserves
 * address space, as glibc does beyond each malloc arena's heap and
 * MariaDB 10.11 does for innodb_buffer_pool_size_max (8 TiB by default)
 * behind the buffer pool it uses. */
static bool maps_keep(const struct ng_map *m, uint64_t min_private_bytes)
{
        if (m->shared)
                return true;
        return m->kind == NG_MAP_ANON_PRIVATE && min_private_bytes > 0 && (m->read || m->write) &&
               m->end - m->start >= min_private_bytes;
}

/* 1 and *m filled when kept, 0 when skipped, -ENOMEM. */
static int maps_line(char *line, uint64_t min_private_bytes, struct ng_map *m)
{
        char *p = line;

        *m = (struct ng_map) {};
        if (maps_fixed(&p, m) < 0)
                return 0;
        /* the path is padded to a column and may hold blanks itself */
        p += strspn(p, " \t");
        strip_deleted(p, &m->deleted);
        m->path = p;
        m->kind = maps_kind(m);
        if (m->kind != NG_MAP_SYSV)
                m->sysv_key = 0;
        if (!maps_keep(m, min_private_bytes))
                return 0;
        m->path = strdup(p);
        return m->path ? 1 : -ENOMEM;
}

/* Malformed lines are skipped; paths are kept verbatim (maps escapes only
 * "\n", which we cannot tell from a literal "\012"). */
static int maps_item(char *line, void *item, void *userdata)
{
        return maps_line(line, *(const uint64_t *) userdata, item);
}

static void maps_free(void *array, size_t n)
{
        ng_maps_free(array, n);
}

int ng_parse_maps(const char *buf, uint64_t min_private_bytes, struct ng_map **ret, size_t *ret_n)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), maps_item, &min_private_bytes, maps_free, (void **) ret, ret_n);
}

/* ---- /proc/<pid>/numa_maps ---- */

static const char *const mpol_names[] = {
        [NG_MPOL_DEFAULT] = "default",
        [NG_MPOL_PREFERRED] = "prefer",
        [NG_MPOL_BIND] = "bind",
        [NG_MPOL_INTERLEAVE] = "interleave",
        [NG_MPOL_LOCAL] = "local",
        [NG_MPOL_PREFERRED_MANY] = "prefer (many)",
        [NG_MPOL_WEIGHTED_INTERLEAVE] = "weighted interleave",
        [NG_MPOL_UNKNOWN] = "unknown",
};

const char *ng_mpol_name(enum ng_mpol p)
{
        if ((unsigned)p >= sizeof(mpol_names) / sizeof(mpol_names[0]))
                return "unknown";
        return mpol_names[p];
}

static void numa_map_clear(struct ng_numa_map *m)
{
        free(m->policy_nodes);
        free(m->file);
        free(m->np);
}

void ng_numa_maps_free(struct ng_numa_map *m, size_t n)
{
        if (!m)
                return;
        for (size_t i = 0; i < n; i++)
                numa_map_clear(&m[i]);
        free(m);
}

static enum ng_mpol mpol_from_name(const char *name, size_t len)
{
        for (size_t i = 0; i < NG_MPOL_UNKNOWN; i++)
                if (strlen(mpol_names[i]) == len && strncmp(name, mpol_names[i], len) == 0)
                        return (enum ng_mpol)i;
        return NG_MPOL_UNKNOWN;
}

/* mpol_to_str(): "NAME[=static|=relative[|balancing]][:NODES]". */
static int numa_policy(const char *s, struct ng_numa_map *m)
{
        const char *colon = strchr(s, ':');
        size_t len = colon ? (size_t)(colon - s) : strlen(s);
        const char *eq = memchr(s, '=', len);

        m->policy = mpol_from_name(s, eq ? (size_t)(eq - s) : len);
        m->policy_nodes = strdup(colon ? colon + 1 : "");
        return m->policy_nodes ? 0 : -ENOMEM;
}

/* Two policy names hold a blank ("prefer (many)", "weighted interleave"):
 * split() cut them in two, so join them again. Returns fields consumed. */
static size_t numa_policy_join(char **f, size_t n)
{
        size_t len = strlen(f[0]);

        if (n >= 2 && f[1] == f[0] + len + 1 &&
            ((strcmp(f[0], "prefer") == 0 && strncmp(f[1], "(many)", 6) == 0) ||
             (strcmp(f[0], "weighted") == 0 && strncmp(f[1], "interleave", 10) == 0))) {
                f[0][len] = ' ';
                return 2;
        }
        return 1;
}

static int numa_node_pages(const char *key, const char *val, struct ng_node_pages **np, size_t *n,
                           size_t *cap)
{
        uint64_t node, pages;
        int r;

        if (field_u64(key + 1, &node) < 0 || node >= NG_BITMAP_BITS ||
            field_u64(val, &pages) < 0 || *n >= MAX_NODES_PER_LINE)
                return -EINVAL;
        r = ng_parse_grow((void **)np, cap, *n, sizeof(**np));
        if (r < 0)
                return r;
        (*np)[(*n)++] = (struct ng_node_pages) { .node = (int)node, .pages = pages };
        return 0;
}

static uint64_t *numa_counter(struct ng_numa_map *m, const char *key)
{
        static const struct {
                const char *key;
                size_t offset;
        } counters[] = {
                { "anon", offsetof(struct ng_numa_map, anon) },
                { "dirty", offsetof(struct ng_numa_map, dirty) },
                { "mapped", offsetof(struct ng_numa_map, mapped) },
                { "mapmax", offsetof(struct ng_numa_map, mapmax) },
                { "swapcache", offsetof(struct ng_numa_map, swapcache) },
                { "active", offsetof(struct ng_numa_map, active) },
                { "writeback", offsetof(struct ng_numa_map, writeback) },
                { "kernelpagesize_kB", offsetof(struct ng_numa_map, kernelpagesize_kib) },
        };

        for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
                if (strcmp(key, counters[i].key) == 0)
                        return (uint64_t *)((char *)m + counters[i].offset);
        return NULL;
}

static int numa_kv(char *key, char *val, struct ng_numa_map *m, size_t *cap)
{
        uint64_t *counter;

        if (strcmp(key, "file") == 0) {
                if (m->file)
                        return -EINVAL;
                m->file = strdup(val);
                if (!m->file)
                        return -ENOMEM;
                ng_unescape_octal(m->file);
                return 0;
        }
        if (key[0] == 'N' && key[1] >= '0' && key[1] <= '9')
                return numa_node_pages(key, val, &m->np, &m->n_np, cap);
        counter = numa_counter(m, key);
        if (!counter)
                return 0;       /* a newer kernel's field */
        return field_u64(val, counter);
}

static int numa_token(char *tok, struct ng_numa_map *m, size_t *cap)
{
        char *eq = strchr(tok, '=');

        if (!eq) {
                if (strcmp(tok, "heap") == 0)
                        m->heap = true;
                else if (strcmp(tok, "stack") == 0)
                        m->stack = true;
                else if (strcmp(tok, "huge") == 0)
                        m->huge = true;
                return 0;
        }
        *eq = '\0';
        return numa_kv(tok, eq + 1, m, cap);
}

/* 1 when *m holds a line, 0 when the line is skipped, -ENOMEM. */
static int numa_line(char *line, struct ng_numa_map *m)
{
        char *f[MAX_NODES_PER_LINE + 16];
        size_t n = split(line, f, sizeof(f) / sizeof(f[0])), i, cap = 0;
        int r;

        *m = (struct ng_numa_map) {};
        if (n < 2 || n > sizeof(f) / sizeof(f[0]) || field_hex(f[0], &m->start) < 0)
                return 0;
        i = 1 + numa_policy_join(f + 1, n - 1);
        r = numa_policy(f[1], m);
        for (; r == 0 && i < n; i++)
                r = numa_token(f[i], m, &cap);
        if (r == 0)
                return 1;
        numa_map_clear(m);
        return r == -ENOMEM ? r : 0;
}

/* A line with a bad address, a bad known counter or node count, or two
 * file= is skipped; unknown tokens (newer kernels) are ignored. file= is
 * unescaped and keeps its " (deleted)". */
static int numa_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        return numa_line(line, item);
}

static void numa_free(void *array, size_t n)
{
        ng_numa_maps_free(array, n);
}

int ng_parse_numa_maps(const char *buf, struct ng_numa_map **ret, size_t *ret_n)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), numa_item, NULL, numa_free, (void **) ret, ret_n);
}

/* ---- memory.numa_stat, hugetlb.<size>.numa_stat ---- */

void ng_numa_stat_free(struct ng_numa_stat_line *l, size_t n)
{
        if (!l)
                return;
        for (size_t i = 0; i < n; i++)
                free(l[i].np);
        free(l);
}

/* "anon" (v2) or "total=12" (v1 and hugetlb). */
static int numa_stat_key(const char *f, struct ng_numa_stat_line *l)
{
        const char *eq = strchr(f, '=');
        size_t len = eq ? (size_t)(eq - f) : strlen(f);

        if (len == 0 || len >= sizeof(l->key) || (f[0] == 'N' && f[1] >= '0' && f[1] <= '9'))
                return -EINVAL;
        /* kernel keys are [a-z0-9_]; anything else is not a stat line */
        for (size_t i = 0; i < len; i++)
                if (!((f[i] >= 'a' && f[i] <= 'z') || (f[i] >= '0' && f[i] <= '9') || f[i] == '_'))
                        return -EINVAL;
        memcpy(l->key, f, len);
        l->key[len] = '\0';
        if (!eq)
                return 0;
        l->has_total = true;
        return field_u64(eq + 1, &l->total);
}

/* 1 when *l holds a line, 0 when skipped, -ENOMEM. */
static int numa_stat_line(char *line, struct ng_numa_stat_line *l)
{
        char *f[MAX_NODES_PER_LINE + 2];
        size_t n = split(line, f, sizeof(f) / sizeof(f[0])), cap = 0;
        int r = 0;

        *l = (struct ng_numa_stat_line) {};
        if (n == 0 || n > sizeof(f) / sizeof(f[0]) || numa_stat_key(f[0], l) < 0)
                return 0;
        for (size_t i = 1; r == 0 && i < n; i++) {
                char *eq = strchr(f[i], '=');

                if (!eq || f[i][0] != 'N') {
                        r = -EINVAL;
                        break;
                }
                *eq = '\0';
                r = numa_node_pages(f[i], eq + 1, &l->np, &l->n_np, &cap);
        }
        if (r == 0)
                return 1;
        free(l->np);
        return r == -ENOMEM ? r : 0;
}

/* Lines whose key is not [a-z0-9_] or with a token other than N<id>=<n>
 * are skipped. */
static int numa_stat_item(char *line, void *item, void *userdata)
{
        (void) userdata;
        return numa_stat_line(line, item);
}

static void numa_stat_free(void *array, size_t n)
{
        ng_numa_stat_free(array, n);
}

int ng_parse_numa_stat(const char *buf, struct ng_numa_stat_line **ret, size_t *ret_n)
{
        if (!buf || !ret || !ret_n)
                return -EINVAL;
        return ng_parse_lines(buf, sizeof(**ret), numa_stat_item, NULL, numa_stat_free, (void **) ret, ret_n);
}

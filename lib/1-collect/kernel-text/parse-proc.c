/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of per-process files under /proc: <pid>/stat, status, cmdline,
 * cgroup (maps, numa_maps and cgroup numa_stat are in parse-maps.c,
 * sysvipc/shm in parse-sysvipc.c). Each line is copied (bounded) before it
 * is split, so a parser never looks past the buffer's NUL.
 */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "parse.h"
#include "parse-internal.h"
#include "util.h"

/* ---- /proc/<pid>/stat ---- */

/* Fields counted from 1 as in proc(5); the ones we keep. */
#define STAT_STATE 3
#define STAT_PPID 4
#define STAT_FLAGS 9
#define STAT_UTIME 14
#define STAT_STIME 15
#define STAT_NUM_THREADS 20
#define STAT_STARTTIME 22
#define STAT_PROCESSOR 39

static int stat_fields(char **f, size_t n, struct ng_pid_stat *st)
{
        int64_t cpu;

        /* f[0] is field 3 (state) */
        if (n < STAT_STARTTIME - 2 || strlen(f[0]) != 1)
                return -EINVAL;
        st->state = f[0][0];
        if (ng_parse_field_pid(f[STAT_PPID - 3], &st->ppid) < 0 ||
            ng_parse_field_u32(f[STAT_FLAGS - 3], &st->flags) < 0 ||
            ng_parse_field_u64(f[STAT_STARTTIME - 3], &st->starttime_ticks) < 0 ||
            ng_parse_field_u64(f[STAT_UTIME - 3], &st->utime_ticks) < 0 ||
            ng_parse_field_u64(f[STAT_STIME - 3], &st->stime_ticks) < 0 ||
            ng_parse_field_u64(f[STAT_NUM_THREADS - 3], &st->num_threads) < 0)
                return -EINVAL;
        st->processor = -1;
        if (n > STAT_PROCESSOR - 3) {
                if (ng_parse_field_i64(f[STAT_PROCESSOR - 3], 0, INT_MAX, &cpu) < 0)
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
int ng_parse_loadavg(const char *buf, uint64_t *ret_threads, uint64_t *ret_last_pid)
{
        char line[128], *f[6], *slash;
        size_t len = strlen(buf);
        uint64_t running, threads, last;

        if (len >= sizeof(line) || (len && buf[len - 1] != '\n'))
                return -EINVAL;
        memcpy(line, buf, len + 1);
        if (len)
                line[len - 1] = '\0';
        if (ng_parse_split(line, f, 5) != 5 || !(slash = strchr(f[3], '/')))
                return -EINVAL;
        *slash = '\0';
        if (ng_parse_field_u64(f[3], &running) < 0 || ng_parse_field_u64(slash + 1, &threads) < 0 ||
            ng_parse_field_u64(f[4], &last) < 0 || last > INT32_MAX)
                return -EINVAL;
        *ret_threads = threads;
        *ret_last_pid = last;
        return 0;
}

int ng_parse_pid_stat(const char *buf, struct ng_pid_stat *ret)
{
        struct ng_pid_stat st = {};
        const char *rest, *p = buf;
        char *copy, *f[NG_PARSE_MAX_FIELDS];
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
        n = ng_parse_split(copy, f, NG_PARSE_MAX_FIELDS);
        r = stat_fields(f, n > NG_PARSE_MAX_FIELDS ? NG_PARSE_MAX_FIELDS : n, &st);
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
        for (size_t i = 0; i < ELEMENTSOF(status_kibs); i++) {
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
        _cleanup_free_ struct ng_bitmap *b = malloc(sizeof(*b));
        struct ng_idset parsed;

        if (!b)
                return -ENOMEM;
        /* an id past NG_BITMAP_BITS: leave the set unknown, not wrong */
        *has = ng_bitmap_parse_list(val, b) == 0;
        int r = *has ? ng_idset_from_bitmap(b, &parsed) : 0;
        if (r < 0)
                return r;
        ng_idset_done(set);
        if (*has)
                *set = parsed;
        return 0;
}

/* Gid: real, effective, saved, filesystem. */
static void status_gids(const char *val, struct ng_pid_status *st)
{
        uint64_t v[4];
        for (int i = 0; i < 4; i++)
                if (ng_parse_u64(&val, &v[i]) < 0 || v[i] > UINT32_MAX)
                        return;
        st->gid = (uint32_t) v[0];
        st->egid = (uint32_t) v[1];
        st->fsgid = (uint32_t) v[3];
        st->has_gid = true;
}

/* Groups: blank-separated gids, "" for none; a process in more than
 * NG_STATUS_MAX_GROUPS keeps the first ones and groups_more. */
static void status_groups(const char *val, struct ng_pid_status *st)
{
        uint64_t g;
        st->n_groups = 0;
        st->groups_more = false;
        while (ng_parse_u64(&val, &g) == 0) {
                if (g > UINT32_MAX)
                        return;
                if (st->n_groups == NG_STATUS_MAX_GROUPS)
                        st->groups_more = true;
                else
                        st->groups[st->n_groups++] = (uint32_t) g;
        }
        val += strspn(val, "\t ");
        st->has_groups = *val == '\0';
}

/* A capability set: "000001ffffffffff", 1 to 16 hex digits and nothing
 * else but blanks around them. */
static int status_caps(const char *val, uint64_t *ret, bool *has)
{
        uint64_t v = 0;
        size_t n = 0;

        val += strspn(val, "\t ");
        for (; isxdigit((unsigned char)*val); val++, n++) {
                if (n == 16)
                        return -EINVAL;
                unsigned d = (unsigned)(isdigit((unsigned char)*val) ? *val - '0' : (tolower((unsigned char)*val) - 'a' + 10));
                v = v << 4 | d;
        }
        val += strspn(val, "\t \n");
        if (n == 0 || *val)
                return -EINVAL;
        *ret = v;
        *has = true;
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
        else if (strcmp(line, "Gid") == 0)
                status_gids(val, st);
        else if (strcmp(line, "Groups") == 0)
                status_groups(val, st);
        else if (strcmp(line, "CapPrm") == 0)
                (void)status_caps(val, &st->cap_prm, &st->has_cap_prm);
        else if (strcmp(line, "CapEff") == 0)
                (void)status_caps(val, &st->cap_eff, &st->has_cap_eff);
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
        struct ng_pid_status st = { .uid = NG_UID_UNKNOWN, .euid = NG_UID_UNKNOWN };
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

/* ---- /proc/<pid>/ns/<type> ---- */

int ng_parse_ns_link(const char *buf, const char *type, uint64_t *ret)
{
        size_t tl = strlen(type);
        if (strncmp(buf, type, tl) || buf[tl] != ':' || buf[tl + 1] != '[')
                return -EINVAL;
        const char *q = buf + tl + 2;
        uint64_t ino;
        if (ng_parse_u64(&q, &ino) < 0 || *q != ']' || ino == 0)
                return -EINVAL;
        q++;
        if (*q == '\n')
                q++;
        if (*q)
                return -EINVAL;
        *ret = ino;
        return 0;
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
        if (!c2 || c2[1] != '/' || ng_parse_field_u32(line, &id) < 0)
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
        int r = ng_parse_lines(buf, sizeof(*e), cgroup_item, NULL, cgroup_free, (void **) &e, &n, NULL);
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

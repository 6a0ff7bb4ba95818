/* ng_proc_events_parse() on datagrams a real kernel sent
 * (tests/fixtures/proc-events/, recorded by ng-capture-proc-events): a
 * child's fork, rename, uid change, exec and exit each name the child; its
 * thread's birth and end, and the answer to the listen request, name no
 * process. Every datagram cut short, or claimed by another connector, names
 * none either, and the parser reads no byte past the end (ASan build). */

#include <dirent.h>
#include <limits.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "ng-test.h"
#include "picture-internal.h"
#include "util.h"

#define DIR_ NG_FIXTURES "/proc-events"

struct dgram {
        char name[NAME_MAX + 1];
        unsigned char *buf;     /* exactly len bytes, malloc'd (aligned) */
        size_t len;
};

static struct dgram dg[32];
static size_t n_dg;

static int name_cmp(const void *a, const void *b)
{
        return strcmp(((const struct dgram *) a)->name, ((const struct dgram *) b)->name);
}

static void load(void)
{
        DIR *d = opendir(DIR_);
        ck_assert_msg(d != NULL, "%s: %s", DIR_, strerror(errno));
        n_dg = 0;
        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.' || !strcmp(de->d_name, "README"))
                        continue;
                ck_assert_uint_lt(n_dg, ELEMENTSOF(dg));
                char path[512];
                snprintf(path, sizeof(path), "%s/%s", DIR_, de->d_name);
                struct dgram *g = &dg[n_dg++];
                snprintf(g->name, sizeof(g->name), "%s", de->d_name);
                char *text = ng_test_read(path, &g->len);
                g->buf = malloc(g->len ? g->len : 1);
                ck_assert_ptr_nonnull(g->buf);
                memcpy(g->buf, text, g->len);
                free(text);
        }
        closedir(d);
        qsort(dg, n_dg, sizeof(dg[0]), name_cmp);
}

static void unload(void)
{
        for (size_t i = 0; i < n_dg; i++)
                free(dg[i].buf);
}

/* "03-exec" -> "exec" */
static const char *kind(const struct dgram *g)
{
        const char *dash = strchr(g->name, '-');
        return dash ? dash + 1 : g->name;
}

static bool names_a_process(const char *k)
{
        return !strcmp(k, "fork") || !strcmp(k, "comm") || !strcmp(k, "uid") || !strcmp(k, "exec") ||
               !strcmp(k, "exit");
}

static int parse(const unsigned char *buf, size_t len, struct ng_pid_set *set)
{
        /* exactly len bytes of its own, so that a read past them is seen */
        unsigned char *copy = malloc(len ? len : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, buf, len);
        int r = ng_proc_events_parse(copy, len, set);
        free(copy);
        return r;
}

START_TEST(each_event_names_the_child)
{
        load();
        struct ng_pid_set set = {0};
        pid_t kid = 0;
        size_t named = 0, kinds_seen = 0;
        const char *const want[] = { "ack", "fork", "fork-thread", "comm", "uid", "exec", "exit" };
        for (size_t w = 0; w < ELEMENTSOF(want); w++)
                for (size_t i = 0; i < n_dg; i++)
                        if (!strcmp(kind(&dg[i]), want[w])) {
                                kinds_seen++;
                                break;
                        }
        ck_assert_msg(kinds_seen == ELEMENTSOF(want), "fixtures lack a kind of event");
        for (size_t i = 0; i < n_dg; i++) {
                const char *k = kind(&dg[i]);
                size_t before = set.n;
                int r = parse(dg[i].buf, dg[i].len, &set);
                if (!names_a_process(k)) {
                        ck_assert_msg(r == 0 && set.n == before, "%s named a process", dg[i].name);
                        continue;
                }
                ck_assert_msg(r == 1 && set.n == before + 1, "%s: %d", dg[i].name, r);
                const struct ng_pid_touch *t = &set.v[set.n - 1];
                if (!kid)
                        kid = t->pid;
                ck_assert_msg(t->pid == kid, "%s names %d, not %d", dg[i].name, (int) t->pid, (int) kid);
                ck_assert_msg(t->exited == !strcmp(k, "exit"), "%s: exited %d", dg[i].name, t->exited);
                ck_assert_uint_eq(t->seq, set.n - 1);
                named++;
        }
        ck_assert_uint_ge(named, 5);
        ck_assert_int_gt(kid, 0);
        free(set.v);
        unload();
}
END_TEST

START_TEST(short_or_foreign_datagrams_name_nothing)
{
        load();
        struct ng_pid_set set = {0};
        size_t expected = 0;
        for (size_t i = 0; i < n_dg; i++) {
                for (size_t len = 0; len < dg[i].len; len++) {
                        /* the event's last byte may be padding the parser does not need */
                        if (len >= NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(struct proc_event)))
                                continue;
                        ck_assert_msg(parse(dg[i].buf, len, &set) == 0, "%s cut to %zu bytes", dg[i].name, len);
                }
                if (!names_a_process(kind(&dg[i])))
                        continue;
                unsigned char *copy = malloc(dg[i].len);
                ck_assert_ptr_nonnull(copy);
                memcpy(copy, dg[i].buf, dg[i].len);
                struct cn_msg *cn = NLMSG_DATA((struct nlmsghdr *) copy);
                cn->id.idx = CN_IDX_PROC + 1;           /* another connector's */
                ck_assert_int_eq(parse(copy, dg[i].len, &set), 0);
                cn->id.idx = CN_IDX_PROC;
                cn->len = sizeof(struct proc_event) - 1;        /* says it holds less than an event */
                ck_assert_int_eq(parse(copy, dg[i].len, &set), 0);
                cn->len = sizeof(struct proc_event);
                ((struct nlmsghdr *) copy)->nlmsg_len = (uint32_t) dg[i].len + 1;      /* more than arrived */
                ck_assert_int_eq(parse(copy, dg[i].len, &set), 0);
                ((struct nlmsghdr *) copy)->nlmsg_len = (uint32_t) dg[i].len;
                ck_assert_int_eq(parse(copy, dg[i].len, &set), 1);      /* the untouched copy still does */
                expected++;
                if (!strcmp(kind(&dg[i]), "fork")) {
                        /* pid 0 is no process: a message that cannot be true */
                        struct proc_event pe;
                        memcpy(&pe, cn->data, sizeof(pe));
                        pe.event_data.fork.child_pid = pe.event_data.fork.child_tgid = 0;
                        memcpy(cn->data, &pe, sizeof(pe));
                        ck_assert_int_eq(parse(copy, dg[i].len, &set), 0);
                }
                free(copy);
        }
        ck_assert_uint_eq(set.n, expected);
        ck_assert_uint_ge(expected, 5);
        free(set.v);
        unload();
}
END_TEST

int main(void)
{
        Suite *s = suite_create("proc-events");
        TCase *tc = tcase_create("proc-events");
        tcase_add_test(tc, each_event_names_the_child);
        tcase_add_test(tc, short_or_foreign_datagrams_name_nothing);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

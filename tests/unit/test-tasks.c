/* Where a database's threads run: a real mariadbd of the 4-node guest
 * (tests/fixtures/text/guest4-mariadb-bound-*, its buffer pool bound to node
 * 1, 25 threads of which 3 ended while they were copied) placed in the
 * captured guest4-v2 tree with one task/<tid>/stat per thread. The price's
 * CPU share per node must come from every thread's last CPU and CPU time,
 * not from the main thread's CPU alone; since the previous poll in the
 * daemon, whose picture rereads those files, by turns when there are many
 * holders (attacher_read_budget). And what its buffer pool is called: the
 * InnoDB buffer pool is private memory of mariadbd, never "shared memory",
 * each of its large private mappings named by address and pid. */

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "ng-audit.h"
#include "ng-config.h"
#include "ng-price.h"
#include "ng-report.h"
#include "ng-snapshot.h"
#include "ng-test.h"
#include "rules-internal.h"
#include "snapshot-builder.h"

#define TREES NG_FIXTURES "/trees/"
#define TEXT NG_FIXTURES "/text/guest4-mariadb-bound-"
#define PID 221
#define INSTANCE "mysql:/tmp/my/data"

static char tmpl[] = "/tmp/ng-test-tasks.XXXXXX";
static const char *troot;

static void put(const char *rel, const char *buf, size_t len)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", troot, rel);
        for (char *q = path + strlen(troot) + 1; (q = strchr(q, '/')); q++) {
                *q = '\0';
                mkdir(path, 0755);
                *q = '/';
        }
        FILE *f = fopen(path, "we");
        ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
        ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
        fclose(f);
}

static void put_fixture(const char *rel, const char *name)
{
        char path[512];
        size_t len;
        snprintf(path, sizeof(path), TEXT "%s", name);
        char *buf = ng_test_read(path, &len);
        put(rel, buf, len);
        free(buf);
}

/* One thread of the capture: its tid, and from its stat line (empty: it
 * ended while the capture read it) the last CPU and utime + stime. */
struct thread {
        int tid;
        char stat[1024];
        int cpu;
        uint64_t ticks;
};

static size_t threads(struct thread *v, size_t max)
{
        char *buf = ng_test_read(TEXT "task-stat", NULL), *save = NULL;
        size_t n = 0;
        for (char *l = strtok_r(buf, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save)) {
                struct thread *t = &v[n++];
                char *tab = strchr(l, '\t');
                ck_assert_ptr_nonnull(tab);
                *tab = '\0';
                t->tid = atoi(l);
                snprintf(t->stat, sizeof(t->stat), "%s", tab + 1);
                t->cpu = -1;
                char *rp = strrchr(t->stat, ')');
                if (!rp)
                        continue;
                /* fields from 3 (state) on: utime 14, stime 15, processor 39 */
                char copy[1024], *f[64] = {0}, *s2 = NULL;
                snprintf(copy, sizeof(copy), "%s", rp + 2);
                size_t k = 0;
                for (char *w = strtok_r(copy, " ", &s2); w && k < 64; w = strtok_r(NULL, " ", &s2))
                        f[k++] = w;
                ck_assert_uint_gt(k, 36);
                t->ticks = strtoull(f[11], NULL, 10) + strtoull(f[12], NULL, 10);
                t->cpu = atoi(f[36]);
        }
        free(buf);
        return n;
}

static void mariadb_tree(void)
{
        char cmd[1024];
        strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
        troot = mkdtemp(tmpl);
        ck_assert_ptr_nonnull(troot);
        snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s'", TREES "guest4-v2", troot);
        ck_assert_int_eq(system(cmd), 0);
        static const char *const files[] = { "stat", "status", "maps", "numa_maps" };
        for (size_t i = 0; i < 4; i++) {
                snprintf(cmd, sizeof(cmd), "proc/%d/%s", PID, files[i]);
                put_fixture(cmd, files[i]);
        }
        /* what capture-mariadb.sh ran */
        static const char argv[] = "/usr/sbin/mariadbd\0--defaults-file=/tmp/my/my.cnf\0--datadir=/tmp/my/data";
        snprintf(cmd, sizeof(cmd), "proc/%d/cmdline", PID);
        put(cmd, argv, sizeof(argv));
        struct thread v[64];
        size_t n = threads(v, 64);
        for (size_t i = 0; i < n; i++) {
                if (!v[i].stat[0]) {    /* listed, gone before its stat was read */
                        snprintf(cmd, sizeof(cmd), "%s/proc/%d/task/%d", troot, PID, v[i].tid);
                        ck_assert_int_eq(mkdir(cmd, 0755), 0);
                        continue;
                }
                char rel[128];
                snprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", PID, v[i].tid);
                size_t len = strlen(v[i].stat);
                v[i].stat[len] = '\n';
                put(rel, v[i].stat, len + 1);
        }
}

static void rm_tree(void)
{
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", troot);
        ck_assert_int_eq(system(cmd), 0);
}

static struct ng_snapshot *collect_min(struct ng_picture *pic, uint64_t min_private_bytes)
{
        struct ng_path *p = NULL;
        struct ng_snapshot *s = NULL;
        struct ng_collect_opts o = NG_COLLECT_OPTS_DEFAULT;
        o.picture = pic;
        if (min_private_bytes)
                o.min_private_bytes = min_private_bytes;
        ck_assert_int_eq(ng_path_new(troot, &p), 0);
        int r = ng_snapshot_collect(p, &o, &s);
        ck_assert_msg(r == 0, "collecting %s: %s", troot, strerror(-r));
        ng_path_free(p);
        return s;
}

static struct ng_snapshot *collect(struct ng_picture *pic)
{
        return collect_min(pic, 0);
}

static const struct ng_task *task(const struct ng_proc *pr, pid_t tid)
{
        for (size_t i = 0; i < pr->n_tasks; i++)
                if (pr->tasks[i].tid == tid)
                        return &pr->tasks[i];
        return NULL;
}

START_TEST(test_threads_read)
{
        mariadb_tree();
        struct ng_snapshot *s = collect(NULL);
        const struct ng_proc *pr = ng_snapshot_proc(s, PID);
        ck_assert_ptr_nonnull(pr);
        ck_assert_uint_eq(pr->stat.num_threads, 25);
        struct thread v[64];
        size_t n = threads(v, 64), alive = 0;
        for (size_t i = 0; i < n; i++) {
                const struct ng_task *t = task(pr, v[i].tid);
                if (!v[i].stat[0]) {
                        ck_assert_ptr_null(t);
                        continue;
                }
                alive++;
                ck_assert_msg(t != NULL, "thread %d not read", v[i].tid);
                ck_assert_int_eq(t->processor, v[i].cpu);
                ck_assert_uint_eq(t->ticks, v[i].ticks);
                ck_assert_uint_eq(t->weight_ticks, v[i].ticks);
        }
        ck_assert_uint_eq(alive, 22);
        ck_assert_uint_eq(pr->n_tasks, alive);
        /* the tree's own workloads map segments with one thread: no task read */
        size_t holders = 0;
        for (size_t i = 0; i < s->n_procs; i++)
                if (s->procs[i]->pid != PID && s->procs[i]->n_maps) {
                        holders++;
                        ck_assert_uint_eq(s->procs[i]->stat.num_threads, 1);
                        ck_assert_uint_eq(s->procs[i]->n_tasks, 0);
                }
        ck_assert_uint_gt(holders, 0);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* The audit's instance: its CPU share per node is every thread's CPU time
 * on the node of its last CPU (guest4: CPU i on node i), over all of it. */
START_TEST(test_price_from_threads)
{
        mariadb_tree();
        struct ng_snapshot *s = collect(NULL);
        struct ng_config *c = NULL;
        ck_assert_int_eq(ng_config_load_string("", "test.conf", NULL, NULL, &c), 0);
        struct ng_audit *a = NULL;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_instance *in = ng_audit_instance(a, INSTANCE);
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->main_pid, PID);
        struct thread v[64];
        size_t n = threads(v, 64);
        double per_node[4] = {0}, total = 0;
        for (size_t i = 0; i < n; i++)
                if (v[i].cpu >= 0) {
                        per_node[v[i].cpu] += (double) v[i].ticks;
                        total += (double) v[i].ticks;
                }
        ck_assert(in->price.cpu_share_measured);
        ck_assert_uint_eq(in->price.n_cpu_share, 4);
        for (size_t i = 0; i < in->price.n_cpu_share; i++) {
                int node = in->price.cpu_share[i].node;
                ck_assert_int_ge(node, 0);
                ck_assert_int_lt(node, 4);
                ck_assert_msg(fabs(in->price.cpu_share[i].share - per_node[node] / total) < 1e-9,
                              "node %d: share %f, threads say %f", node, in->price.cpu_share[i].share,
                              per_node[node] / total);
        }
        /* the main thread last ran on node 2; its threads on all four */
        ck_assert_double_lt(in->price.cpu_share[2].share, 0.9);
        ck_assert_double_gt(in->price.cpu_share[1].share, 0.1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* The pool is the instance's private memory, in the text and in the
 * findings, and each private mapping is named by where it is. */
START_TEST(test_pool_is_private_memory)
{
        mariadb_tree();
        struct ng_snapshot *s = collect(NULL);
        struct ng_config *c = NULL;
        ck_assert_int_eq(ng_config_load_string("", "test.conf", NULL, NULL, &c), 0);
        struct ng_audit *a = NULL;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_instance *in = ng_audit_instance(a, INSTANCE);
        ck_assert_ptr_nonnull(in);
        uint64_t priv = 0, shared = 0;
        size_t n_priv = 0;
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (seg->kind == NG_SEG_PRIVATE) {
                        priv += seg->bytes;
                        n_priv++;
                } else {
                        shared += seg->bytes;
                }
        }
        ck_assert_uint_gt(n_priv, 0);
        ck_assert_uint_eq(in->private_bytes, priv);
        ck_assert_uint_eq(in->shared_bytes, priv + shared);
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        ck_assert_int_eq(ng_report_audit_text(s, a, m), 0);
        fclose(m);
        char want[256], h[24];
        ng_format_kib(priv / 1024, h, sizeof(h));
        snprintf(want, sizeof(want), "private memory %s (the InnoDB buffer pool and the server's other large "
                 "private mappings), ", h);
        ck_assert_msg(strstr(text, want), "no \"%s\" in\n%s", want, text);
        ck_assert_msg(shared > 0 || !strstr(text, "  shared memory "), "%s", text);
        for (size_t k = 0; k < in->n_segs; k++) {
                const struct ng_segment *seg = &a->segments[in->segs[k]];
                if (seg->kind != NG_SEG_PRIVATE)
                        continue;
                snprintf(want, sizeof(want), "  private mapping [anon] at 0x%" PRIx64 " of pid %d: ", seg->rep_start,
                         PID);
                ck_assert_msg(strstr(text, want), "no \"%s\" in\n%s", want, text);
        }
        ck_assert_msg(!strstr(text, "  private [anon]"), "%s", text);
        /* bound to node 1 with CPUs on every node: a cyclops of private memory */
        bool cyclops = false;
        for (size_t i = 0; i < a->n_findings; i++) {
                const struct ng_finding *f = &a->findings[i];
                if (f->code != NG_CODE_CYCLOPS || strcmp(f->instance, INSTANCE))
                        continue;
                cyclops = true;
                ck_assert_msg(strstr(f->message, shared ? "resident shared and private memory sits on node 1 "
                                                        : "resident private memory sits on node 1 ") &&
                              !strstr(f->message, "resident shared memory"), "%s", f->message);
                ck_assert_msg(strstr(f->advice, shared ? "interleave the shared and private memory over"
                                                       : "interleave the private memory over"), "%s", f->advice);
        }
        ck_assert(cyclops);
        free(text);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* Beside shared memory (a SysV segment of its own, of known or unknown
 * size), the pool is still named private memory, and only the rest shared. */
START_TEST(test_pool_beside_shared)
{
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 1024 * 1024);
        pid_t pids[1] = { PID };
        struct ng_segment seg[2] = {
                { .kind = NG_SEG_SYSV, .name = "SYSV00001009", .shmid = 9, .bytes = 64u << 20 },
                { .kind = NG_SEG_PRIVATE, .name = "[anon]", .bytes = 160u << 20, .rep_start = 0x77ef96000000,
                  .pids = pids, .n_pids = 1 },
        };
        size_t segs[2] = { 0, 1 };
        struct ng_instance in[1] = { { .name = INSTANCE, .type = "mysql", .origin = NG_INST_DISCOVERED, .segs = segs,
                                       .n_segs = 2, .shared_bytes = 224u << 20, .private_bytes = 160u << 20 } };
        struct ng_audit a = { .instances = in, .n_instances = 1, .segments = seg, .n_segments = 2 };
        for (int unknown = 0; unknown < 2; unknown++) {
                in[0].shared_unknown = unknown;
                char *t = NULL;
                size_t len = 0;
                FILE *m = open_memstream(&t, &len);
                ck_assert_int_eq(ng_report_audit_text(s, &a, m), 0);
                fclose(m);
                ck_assert_msg(strstr(t, unknown ? "  shared memory of unknown size, private memory 160 MiB (the InnoDB "
                                                : "  shared memory 64 MiB, private memory 160 MiB (the InnoDB "), "%s", t);
                ck_assert_msg(strstr(t, "  private mapping [anon] at 0x77ef96000000 of pid 221: 160 MiB"), "%s", t);
                free(t);
                ck_assert_str_eq(ng_rules_memory_noun(&in[0]), "shared and private memory");
        }
        in[0].shared_bytes = in[0].private_bytes;
        ck_assert_str_eq(ng_rules_memory_noun(&in[0]), "shared and private memory");    /* still unknown */
        in[0].shared_unknown = false;
        ck_assert_str_eq(ng_rules_memory_noun(&in[0]), "private memory");
        in[0].private_bytes = 0;
        ck_assert_str_eq(ng_rules_memory_noun(&in[0]), "shared memory");
        ng_snapshot_free(s);
}
END_TEST

/* Since the previous collection: a thread's CPU time since then, a thread
 * started since counts whole, the process's own figure likewise. */
START_TEST(test_cpu_since)
{
        mariadb_tree();
        struct ng_snapshot *prev = collect(NULL), *s = collect(NULL);
        struct ng_proc *old = (struct ng_proc *) ng_snapshot_proc(prev, PID);
        struct ng_task *t239 = (struct ng_task *) task(old, 239), *t227 = (struct ng_task *) task(old, 227);
        ck_assert_ptr_nonnull(t239);
        ck_assert_ptr_nonnull(t227);
        t239->ticks -= 2000;
        t227->tid = 99999;      /* 227 did not exist then */
        old->stat.utime_ticks -= 50;
        ng_snapshot_cpu_since(s, prev);
        const struct ng_proc *pr = ng_snapshot_proc(s, PID);
        ck_assert_uint_eq(task(pr, 239)->weight_ticks, 2000);
        ck_assert_uint_eq(task(pr, 227)->weight_ticks, 142);
        ck_assert_uint_eq(task(pr, 228)->weight_ticks, 0);
        ck_assert_uint_eq(pr->cpu_weight_ticks, 50);
        ng_snapshot_free(prev);
        ng_snapshot_free(s);
        rm_tree();
}
END_TEST

/* The daemon's picture keeps an unchanged process between polls, yet
 * rereads a segment holder's stat and its threads' every time. */
START_TEST(test_picture_rereads_threads)
{
        mariadb_tree();
        struct ng_picture *pic = NULL;
        ck_assert_int_eq(ng_picture_new(100, &pic), 0);
        struct ng_snapshot *s0 = collect(pic);
        struct thread v[64];
        size_t n = threads(v, 64);
        /* thread 239 ran 100 more ticks, now on CPU 3 */
        for (size_t i = 0; i < n; i++)
                if (v[i].tid == 239) {
                        char *rp = strrchr(v[i].stat, ')'), rel[128], buf[1100];
                        char *f[64] = {0}, copy[1024], *save = NULL;
                        snprintf(copy, sizeof(copy), "%s", rp + 2);
                        size_t k = 0;
                        for (char *w = strtok_r(copy, " ", &save); w && k < 64; w = strtok_r(NULL, " ", &save))
                                f[k++] = w;
                        char ut[32], cpu[8];
                        snprintf(ut, sizeof(ut), "%llu", strtoull(f[11], NULL, 10) + 100);
                        snprintf(cpu, sizeof(cpu), "3");
                        f[11] = ut;
                        f[36] = cpu;
                        size_t len = (size_t) snprintf(buf, sizeof(buf), "%.*s) ", (int) (rp - v[i].stat), v[i].stat);
                        for (size_t j = 0; j < k; j++)
                                len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s%s", f[j],
                                                         j + 1 < k ? " " : "\n");
                        snprintf(rel, sizeof(rel), "proc/%d/task/239/stat", PID);
                        put(rel, buf, len);
                }
        struct ng_snapshot *s1 = collect(pic);
        struct ng_picture_stats st;
        ng_picture_get_stats(pic, &st);
        ck_assert(!st.full);
        ng_snapshot_cpu_since(s1, s0);
        const struct ng_task *t = task(ng_snapshot_proc(s1, PID), 239);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(t->processor, 3);
        ck_assert_uint_eq(t->ticks, 2365);
        ck_assert_uint_eq(t->weight_ticks, 100);
        ng_snapshot_free(s0);
        ng_snapshot_free(s1);
        ng_picture_free(pic);
        rm_tree();
}
END_TEST

/* Dedicated servers: HOLDERS single-thread copies of the tree's pid 179
 * attached to its segment 0, each using CPU time at its own rate (with
 * noise) on one CPU of the guest (CPU i on node i), a few moving to another
 * CPU each poll. A picture that reads the CPU time of BUDGET of them a poll
 * gives each node a share of their CPU within 5 points of a picture that
 * reads every one every poll, once a turn is done, and reads each at least
 * every HOLDERS / BUDGET polls. The status counters of those mapping a
 * segment of min_private_bytes (here 1 MiB: segment 0 is 8 MiB), reread
 * on collections that place segments, go by turns too. */
#define HOLDERS 240
#define BUDGET 24
#define FIRST_PID 30000
#define POLLS 40

struct holder {
        uint64_t ticks;
        int cpu, rate;
};

static unsigned lcg(unsigned *x)
{
        *x = *x * 1103515245u + 12345u;
        return (*x >> 16) & 0x7fff;
}

/* pid 179's stat with another pid, utime (field 14), stime 0 and CPU (39). */
static void put_holder_stat(const char *line, pid_t pid, const struct holder *h)
{
        const char *rp = strrchr(line, ')');
        ck_assert_ptr_nonnull(rp);
        char copy[1024], buf[1200], rel[64], *f[64] = {0}, *save = NULL, ut[32], cpu[8], zero[] = "0";
        snprintf(copy, sizeof(copy), "%s", rp + 2);
        size_t k = 0;
        for (char *w = strtok_r(copy, " \n", &save); w && k < 64; w = strtok_r(NULL, " \n", &save))
                f[k++] = w;
        ck_assert_uint_gt(k, 36);
        snprintf(ut, sizeof(ut), "%llu", (unsigned long long) h->ticks);
        snprintf(cpu, sizeof(cpu), "%d", h->cpu);
        f[11] = ut;
        f[12] = zero;
        f[36] = cpu;
        size_t len = (size_t) snprintf(buf, sizeof(buf), "%d %.*s) ", (int) pid,
                                       (int) (rp - strchr(line, '(')), strchr(line, '('));
        for (size_t j = 0; j < k; j++)
                len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s%s", f[j], j + 1 < k ? " " : "\n");
        snprintf(rel, sizeof(rel), "proc/%d/stat", (int) pid);
        put(rel, buf, len);
}

static void holders_tree(void)
{
        char cmd[1024];
        strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
        troot = mkdtemp(tmpl);
        ck_assert_ptr_nonnull(troot);
        snprintf(cmd, sizeof(cmd),
                 "cp -a '%s'/. '%s' && cd '%s/proc' && for p in $(seq %d %d); do cp -a 179 $p; done && "
                 "awk '$2 == \"0\" {$7 += %d} {print}' sysvipc/shm > shm.new && mv shm.new sysvipc/shm",
                 TREES "guest4-v2", troot, troot, FIRST_PID, FIRST_PID + HOLDERS - 1, HOLDERS);
        ck_assert_int_eq(system(cmd), 0);
}

/* Share of node in v, 0 when absent. */
static double share_of(const struct ng_node_share *v, size_t n, int node)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].node == node)
                        return v[i].share;
        return 0;
}

static double max_share_diff(const struct ng_snapshot *a, const struct ng_snapshot *b, const pid_t *pids)
{
        struct ng_bitmap none = {0};
        struct ng_node_share *va, *vb;
        size_t na, nb;
        bool ma, mb;
        ck_assert_int_eq(ng_price_cpu_share(a, pids, HOLDERS, &none, &va, &na, &ma), 0);
        ck_assert_int_eq(ng_price_cpu_share(b, pids, HOLDERS, &none, &vb, &nb, &mb), 0);
        ck_assert(ma && mb);
        double worst = 0;
        for (int node = 0; node < 4; node++)
                worst = fmax(worst, fabs(share_of(va, na, node) - share_of(vb, nb, node)));
        free(va);
        free(vb);
        return worst;
}

START_TEST(test_cpu_read_by_turns)
{
        holders_tree();
        char path[512];
        snprintf(path, sizeof(path), "%s/proc/179/stat", troot);
        char *stat179 = ng_test_read(path, NULL);
        struct holder h[HOLDERS];
        pid_t pids[HOLDERS];
        unsigned x = 22;
        for (int i = 0; i < HOLDERS; i++) {
                pids[i] = FIRST_PID + i;
                /* node 1 busiest: shares far from even; CPU time never goes down */
                h[i] = (struct holder) { .ticks = 1000 + lcg(&x) % 5000, .cpu = i % 4,
                                         .rate = 2 + (int) (lcg(&x) % 8) + (i % 4 == 1 ? 10 : 0) };
        }
        struct ng_picture *turns = NULL, *every = NULL;
        ck_assert_int_eq(ng_picture_new(100000, &turns), 0);
        ck_assert_int_eq(ng_picture_new(100000, &every), 0);
        ng_picture_set_read_budget(turns, BUDGET);
        struct ng_snapshot *pt = NULL, *pe = NULL;
        double worst = 0;
        for (int poll = 0; poll < POLLS; poll++) {
                for (int i = 0; i < HOLDERS; i++) {
                        if (lcg(&x) % 100 == 0)         /* 1 in 100 moves a poll */
                                h[i].cpu = (int) (lcg(&x) % 4);
                        h[i].ticks += (uint64_t) (h[i].rate + (int) (lcg(&x) % 5) - 2);
                        put_holder_stat(stat179, pids[i], &h[i]);
                }
                struct ng_snapshot *st = collect_min(turns, 1u << 20), *se = collect_min(every, 1u << 20);
                struct ng_picture_stats ps;
                ng_picture_get_stats(turns, &ps);
                ck_assert_uint_gt(ps.cpu_holders, HOLDERS);     /* and the tree's own */
                ck_assert_uint_eq(ps.cpu_read_every, (ps.cpu_holders + BUDGET - 1) / BUDGET);
                if (poll > 0) {
                        ck_assert(!ps.full);
                        ck_assert_uint_le(ps.cpu_reads, BUDGET);
                        ck_assert_uint_le(ps.status_reread, BUDGET);
                        ck_assert_uint_gt(ps.status_reread, 0);
                        struct ng_picture_stats pa;
                        ng_picture_get_stats(every, &pa);
                        ck_assert_uint_ge(pa.status_reread, HOLDERS);
                        ck_assert_uint_ge(pa.cpu_reads, HOLDERS);
                        ng_snapshot_cpu_since(st, pt);
                        ng_snapshot_cpu_since(se, pe);
                }
                ng_snapshot_free(pt);
                ng_snapshot_free(pe);
                pt = st;
                pe = se;
                /* every holder read within a turn */
                uint64_t now = 0;
                for (int i = 0; i < HOLDERS; i++) {
                        uint64_t seq = proc_rec_of(ng_snapshot_proc(st, pids[i]))->cpu_read_seq;
                        now = now > seq ? now : seq;
                }
                for (int i = 0; i < HOLDERS; i++)
                        ck_assert_uint_lt(now - proc_rec_of(ng_snapshot_proc(st, pids[i]))->cpu_read_seq,
                                          ps.cpu_read_every);
                if (poll <= (int) ps.cpu_read_every)
                        continue;       /* the first turn mixes whole CPU times with rates */
                double d = max_share_diff(st, se, pids);
                ck_assert_msg(d <= 0.05, "poll %d: a node's share differs by %.1f points", poll, d * 100);
                worst = fmax(worst, d);
        }
        ck_assert_double_gt(worst, 0);  /* not the same figures by accident */
        ng_snapshot_free(pt);
        ng_snapshot_free(pe);
        ng_picture_free(turns);
        ng_picture_free(every);
        free(stat179);
        rm_tree();
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("tasks");
        TCase *tc = tcase_create("core");
        tcase_set_timeout(tc, 120);    /* a tree copy and collections per test, on a loaded host */
        tcase_add_test(tc, test_threads_read);
        tcase_add_test(tc, test_price_from_threads);
        tcase_add_test(tc, test_pool_is_private_memory);
        tcase_add_test(tc, test_pool_beside_shared);
        tcase_add_test(tc, test_cpu_since);
        tcase_add_test(tc, test_picture_rereads_threads);
        tcase_add_test(tc, test_cpu_read_by_turns);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(suite());
}

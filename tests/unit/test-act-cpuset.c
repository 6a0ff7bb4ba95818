/* cpuset apply: the planner on literal snapshots (targets per policy,
 * refusals), and the executor against a copy of the guest4-v2 / guest4-v1
 * fixture trees through a recording ops table: the exact bytes written and
 * their order (widen, then narrow), dry run, injected EBUSY / EACCES, read
 * back differing from what was written, kernel list normalization. */

#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "cleanup.h"
#include "snapshot-builder.h"
#include "ng-act-cpuset.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "util.h"

/* ---- planner on literal snapshots ---- */

/* 4 nodes, CPU i on node i, a cpuset cgroup /db with the given sets. */
static struct ng_snapshot *snap_cg(const char *cpus, const char *mems, int version)
{
        struct ng_snapshot *s = snap_new(4, 1, 4, 21, 1 << 20);
        s->cgroups = xcalloc(1, sizeof(*s->cgroups));
        s->n_cgroups = 1;
        struct ng_cgroup *cg = &s->cgroups[0];
        cg->path = strdup("/db");
        cg->dir = strdup(version == 1 ? "/sys/fs/cgroup/cpuset/db" : "/sys/fs/cgroup/db");
        cg->version = version;
        cg->has_cpuset = true;
        cg->memory_migrate = version == 1 ? 0 : -1;
        bm(&cg->cpus, cpus);
        bm(&cg->effective_cpus, cpus);
        bm(&cg->mems, mems);
        bm(&cg->effective_mems, mems);
        return s;
}

struct inst {
        struct ng_instance_config cfg;
        struct ng_instance in;
        struct ng_cpuset_bounds parent;
};

static void inst_init(struct inst *t, const struct ng_snapshot *s, enum ng_policy policy, const char *nodes)
{
        memset(t, 0, sizeof(*t));
        snprintf(t->cfg.name, sizeof(t->cfg.name), "db");
        t->cfg.policy = policy;
        if (nodes)
                bm(&t->cfg.nodes, nodes);
        snprintf(t->in.name, sizeof(t->in.name), "db");
        t->in.cfg = &t->cfg;
        t->in.cgroup = "/db";
        t->in.cpus = s->cgroups[0].effective_cpus;
        for (size_t i = 0; i < s->topo.n_nodes; i++)
                if (ng_bitmap_intersects(&s->topo.nodes[i].cpus, &t->in.cpus))
                        ng_bitmap_set(&t->in.cpu_nodes, (unsigned) s->topo.nodes[i].id);
        bm(&t->parent.cpus, "0-3");
        bm(&t->parent.mems, "0-3");
}

static void assert_list(const struct ng_bitmap *b, const char *want)
{
        char buf[256];
        ng_bitmap_format_list(b, buf, sizeof(buf));
        ck_assert_str_eq(buf, want);
}

static struct ng_cpuset_plan plan_of(const struct ng_snapshot *s, const struct inst *t)
{
        struct ng_cpuset_plan pl;
        ck_assert_int_eq(ng_cpuset_plan(s, &t->in, &t->parent, &pl), 0);
        return pl;
}

START_TEST(plan_local_mems_follow_cpus)
{
        struct ng_snapshot *s = snap_cg("0-1", "3", 2);
        struct inst t;
        inst_init(&t, s, NG_POLICY_LOCAL, NULL);
        struct ng_cpuset_plan pl = plan_of(s, &t);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        assert_list(&pl.mems, "0-1");
        assert_list(&pl.cpus, "0-1");
        ck_assert(pl.write_mems);
        ck_assert(!pl.write_cpus);
        ck_assert_str_eq(pl.dir, "/sys/fs/cgroup/db");
        ck_assert_int_eq(pl.version, 2);
        /* CPUs on a node without memory: that node is left out. */
        s->topo.nodes[1].has_memory = false;
        pl = plan_of(s, &t);
        assert_list(&pl.mems, "0");
        /* ... and when none of them has memory: refused. */
        s->topo.nodes[0].has_memory = false;
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "none of which has memory"));
        ng_snapshot_free(s);
}
END_TEST

START_TEST(plan_refuses_a_cgroup_that_went_away)
{
        /* Gone between the listing and the read: not "enable +cpuset in
         * the parent", which would send the DBA after a cgroup that is no
         * more. */
        struct ng_snapshot *s = snap_cg("0-1", "3", 2);
        s->cgroups[0].gone = true;
        s->cgroups[0].has_cpuset = false;
        struct inst t;
        inst_init(&t, s, NG_POLICY_LOCAL, NULL);
        struct ng_cpuset_plan pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_msg(strstr(pl.reason, "cgroup /db of instance db went away while numaguard read it") &&
                      !strstr(pl.reason, "subtree_control"), "%s", pl.reason);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(plan_bind_moves_cpus_to_the_nodes)
{
        struct ng_snapshot *s = snap_cg("0", "3", 2);
        struct inst t;
        inst_init(&t, s, NG_POLICY_BIND, "1");
        struct ng_cpuset_plan pl = plan_of(s, &t);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        assert_list(&pl.mems, "1");
        assert_list(&pl.cpus, "1");     /* none of its CPUs there: all of node 1's */
        ck_assert(pl.write_mems && pl.write_cpus);
        ng_snapshot_free(s);

        /* CPUs already partly there: narrowed to those, not widened. */
        s = snap_cg("0-3", "0-3", 2);
        inst_init(&t, s, NG_POLICY_BIND, "2-3");
        pl = plan_of(s, &t);
        assert_list(&pl.mems, "2-3");
        assert_list(&pl.cpus, "2-3");
        /* local with nodes= does the same (the CPUSET_DRIFT rule agrees). */
        t.cfg.policy = NG_POLICY_LOCAL;
        pl = plan_of(s, &t);
        assert_list(&pl.mems, "2-3");
        assert_list(&pl.cpus, "2-3");
        ng_snapshot_free(s);
}
END_TEST

START_TEST(plan_bind_memory_only_node_keeps_cpus)
{
        struct ng_snapshot *s = snap_cg("0", "0", 2);
        s->topo.nodes[3].cpus = (struct ng_bitmap) {0};        /* CXL-like: memory, no CPU */
        struct inst t;
        inst_init(&t, s, NG_POLICY_BIND, "3");
        struct ng_cpuset_plan pl = plan_of(s, &t);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        assert_list(&pl.mems, "3");
        assert_list(&pl.cpus, "0");
        ck_assert(!pl.write_cpus);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(plan_interleave)
{
        struct ng_snapshot *s = snap_cg("0", "0", 1);
        struct inst t;
        inst_init(&t, s, NG_POLICY_INTERLEAVE, "0-1");
        struct ng_cpuset_plan pl = plan_of(s, &t);
        assert_list(&pl.mems, "0-1");
        assert_list(&pl.cpus, "0");
        ck_assert(!pl.write_cpus);
        ck_assert_int_eq(pl.memory_migrate, 0);
        /* no nodes=: every node with memory the parent allows. */
        inst_init(&t, s, NG_POLICY_INTERLEAVE, NULL);
        bm(&t.parent.mems, "0-2");
        pl = plan_of(s, &t);
        assert_list(&pl.mems, "0-2");
        ng_snapshot_free(s);
}
END_TEST

START_TEST(plan_refusals)
{
        struct ng_snapshot *s = snap_cg("0", "3", 2);
        struct inst t;
        struct ng_cpuset_plan pl;

        /* Not running: the reason says so, and names the configured
         * cgroup where there is one, not the root cpuset. */
        inst_init(&t, s, NG_POLICY_LOCAL, NULL);
        t.in.cgroup = NULL;
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "instance db was not found: no process matches it"));
        ck_assert_ptr_null(strstr(pl.reason, "root"));
        t.cfg.cgroup = (char *)"/oracle";
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "cgroup /oracle of instance db was not found"));
        t.cfg.cgroup = NULL;
        /* Running, its cgroup unreadable. */
        pid_t pid = 4242;
        t.in.pids = &pid;
        t.in.n_pids = 1;
        t.in.main_pid = pid;
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "/proc/4242/cgroup could not be read"));

        t.in.cgroup = "/";
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "root cgroup"));
        ck_assert_ptr_nonnull(strstr(pl.reason, "root cpuset is never rewritten"));

        inst_init(&t, s, NG_POLICY_LOCAL, NULL);
        ck_assert_int_eq(ng_cpuset_plan(s, &t.in, NULL, &pl), 0);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "parent"));

        /* the parent does not allow the target */
        inst_init(&t, s, NG_POLICY_BIND, "2");
        bm(&t.parent.mems, "0-1,3");
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "allows mems 0-1,3 only"));
        inst_init(&t, s, NG_POLICY_BIND, "2");
        bm(&t.parent.cpus, "0-1");
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "allows cpus 0-1 only"));

        /* a node without memory, a node that is not online */
        inst_init(&t, s, NG_POLICY_INTERLEAVE, "1-2");
        s->topo.nodes[2].has_memory = false;
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "node(s) 2 have no memory"));
        s->topo.nodes[2].has_memory = true;
        inst_init(&t, s, NG_POLICY_INTERLEAVE, "5");
        bm(&t.parent.mems, "0-7");
        pl = plan_of(s, &t);
        ck_assert(pl.refused);

        /* bind without nodes; cpuset controller not enabled */
        inst_init(&t, s, NG_POLICY_BIND, NULL);
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        inst_init(&t, s, NG_POLICY_LOCAL, NULL);
        s->cgroups[0].has_cpuset = false;
        pl = plan_of(s, &t);
        ck_assert(pl.refused);
        ck_assert_ptr_nonnull(strstr(pl.reason, "not enabled"));

        /* a refused plan is carried out as REFUSED, nothing written */
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_cpuset_apply(NULL, &ng_action_ops_default, &pl, false, res), 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_REFUSED);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert_str_eq(res->summary, pl.reason);
        ng_snapshot_free(s);
}
END_TEST

/* ---- executor against a fixture copy ---- */

/* Records every write; optionally fails or alters one. A copied fixture
 * file is a regular file: ng_path_write() overwrites it in place without
 * truncating (cgroupfs needs no O_TRUNC), so the recorder truncates first
 * to behave like a kernel attribute, where each write replaces the value. */
struct rec {
        char path[8][PATH_MAX];
        char value[8][256];
        size_t n;
        size_t fail_at;         /* index of the write to fail, or SIZE_MAX */
        int fail_errno;
        size_t alter_at;        /* index of the write the "kernel" stores differently */
        const char *alter_to;
};

static int rec_write(void *userdata, const struct ng_path *p, const char *path, const char *value)
{
        struct rec *r = userdata;
        size_t i = r->n++;
        ck_assert_uint_lt(i, 8);
        snprintf(r->path[i], sizeof(r->path[i]), "%s", path);
        snprintf(r->value[i], sizeof(r->value[i]), "%s", value);
        if (i == r->fail_at)
                return -r->fail_errno;
        char abs[PATH_MAX];
        ck_assert_int_eq(ng_path_resolve(p, abs, sizeof(abs), "%s", path), 0);
        ck_assert_int_eq(truncate(abs, 0), 0);
        return ng_action_ops_default.write(NULL, p, path, i == r->alter_at ? r->alter_to : value);
}

static int rec_read(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size)
{
        (void) userdata;
        return ng_action_ops_default.read(NULL, p, path, buf, size);
}

static void rec_sleep(void *userdata, uint64_t usec)
{
        (void) userdata;
        (void) usec;
}

struct fx {
        char dir[64];
        char tree[128];
        struct ng_path *p;
        struct ng_config *cfg;
        struct ng_snapshot *s;
        struct ng_audit *a;
        struct rec rec;
        struct ng_action_ops ops;
        struct ng_cpuset_plan plan;
        struct ng_action_result *res;
};

static struct fx *fx;

static void fx_collect(void)
{
        ng_audit_free(fx->a);
        ng_snapshot_free(fx->s);
        struct ng_collect_opts co = NG_COLLECT_OPTS_DEFAULT;
        co.placement = NG_PLACEMENT_EXACT;
        ck_assert_int_eq(ng_snapshot_collect(fx->p, &co, &fx->s), 0);
        ck_assert_int_eq(ng_audit_run(fx->s, fx->cfg, &fx->a), 0);
}

/* A copy of TREE with instance "ora" = cgroup /oracle under conf. */
/* fx_open_release: the tree with RELEASE as its kernel's osrelease (NULL:
 * as captured) */
static void fx_open_release(const char *tree, const char *conf, const char *release);

static void fx_open(const char *tree, const char *conf)
{
        fx_open_release(tree, conf, NULL);
}

static void fx_open_release(const char *tree, const char *conf, const char *release)
{
        fx = xcalloc(1, sizeof(*fx));
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/ng-act-cpuset.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(fx->dir));
        snprintf(fx->tree, sizeof(fx->tree), "%s/t", fx->dir);
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "cp -a '" NG_FIXTURES "/trees/%s' '%s'", tree, fx->tree);
        ck_assert_int_eq(system(cmd), 0);
        if (release) {
                snprintf(cmd, sizeof(cmd), "mkdir -p '%s/proc/sys/kernel' && echo '%s' > '%s/proc/sys/kernel/osrelease'",
                         fx->tree, release, fx->tree);
                ck_assert_int_eq(system(cmd), 0);
        }
        ck_assert_int_eq(ng_path_new(fx->tree, &fx->p), 0);
        ck_assert_int_eq(ng_config_load_string(conf, "t.conf", NULL, NULL, &fx->cfg), 0);
        ck_assert_int_eq(ng_action_result_new(&fx->res), 0);
        fx->rec.fail_at = fx->rec.alter_at = SIZE_MAX;
        fx->ops = (struct ng_action_ops) { .size = sizeof(fx->ops), .write = rec_write, .read = rec_read,
                                           .sleep_usec = rec_sleep, .userdata = &fx->rec };
        fx_collect();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

static void fx_close(void)
{
        ng_audit_free(fx->a);
        ng_snapshot_free(fx->s);
        ng_config_free(fx->cfg);
        ng_path_free(fx->p);
        ng_action_result_free(fx->res);
        nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(fx);
        fx = NULL;
}

/* "ora"'s plan against its parent (read through the recorder, the tree's
 * root cpuset: 0-3), *ret filled */
static void fx_plan(struct ng_cpuset_plan *ret)
{
        const struct ng_instance *in = ng_audit_instance(fx->a, "ora");
        ck_assert_ptr_nonnull(in);
        struct ng_cpuset_bounds parent;
        ck_assert_int_eq(ng_cpuset_parent_read(fx->p, &fx->ops, fx->s, in, &parent), 0);
        assert_list(&parent.cpus, "0-3");
        assert_list(&parent.mems, "0-3");
        ck_assert_int_eq(ng_cpuset_plan(fx->s, in, &parent, ret), 0);
}

/* Plans "ora" against its parent and applies. */
static void fx_apply(bool dry_run)
{
        fx_plan(&fx->plan);
        ck_assert_msg(!fx->plan.refused, "%s", fx->plan.reason);
        ck_assert_int_eq(ng_cpuset_apply(fx->p, &fx->ops, &fx->plan, dry_run, fx->res), 0);
}

static void assert_file(const char *rel, const char *want)
{
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s%s", fx->tree, rel);
        char *got = ng_test_read(path, NULL);
        ck_assert_str_eq(got, want);
        free(got);
}

static void assert_write(size_t i, const char *path, const char *value)
{
        ck_assert_uint_lt(i, fx->rec.n);
        ck_assert_str_eq(fx->rec.path[i], path);
        ck_assert_str_eq(fx->rec.value[i], value);
}

#define LOCAL_CONF "[instance ora]\ncgroup = /oracle\npolicy = local\n"
#define V2_MEMS "/sys/fs/cgroup/oracle/cpuset.mems"
#define V2_CPUS "/sys/fs/cgroup/oracle/cpuset.cpus"
#define V1_MEMS "/sys/fs/cgroup/cpuset/oracle/cpuset.mems"

START_TEST(apply_v2_local_widens_then_narrows)
{
        fx_open("guest4-v2", LOCAL_CONF);
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_DONE, "%s", fx->res->summary);
        ck_assert_uint_eq(fx->rec.n, 2);
        assert_write(0, V2_MEMS, "0,3");
        assert_write(1, V2_MEMS, "0");
        assert_file(V2_MEMS, "0");
        assert_file(V2_CPUS, "0\n");
        ck_assert_uint_eq(fx->res->n_writes, 2);
        ck_assert_str_eq(fx->res->writes[0].before, "3");
        ck_assert_str_eq(fx->res->writes[1].before, "0,3");
        ck_assert_str_eq(fx->res->writes[1].after, "0");
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "cpuset.mems 3 -> 0"));
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "migrates the tasks' memory"));
        ck_assert_int_eq(fx->res->error, 0);
        /* once more, from a fresh collection: nothing to do */
        fx->rec.n = 0;
        fx_collect();
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_NOOP, "%s", fx->res->summary);
        ck_assert_uint_eq(fx->rec.n, 0);
        ck_assert_uint_eq(fx->res->n_writes, 0);
        fx_close();
}
END_TEST

/* put REL CONTENT: a file of the tree copy (collected by the next
 * fx_collect()) */
static void put(const char *rel, const char *content)
{
        char path[PATH_MAX], cmd[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/%s", fx->tree, rel);
        snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
        ck_assert_int_eq(system(cmd), 0);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(content, f);
        ck_assert_int_eq(fclose(f), 0);
}

/* A cgconfig.conf that mounts a v1 cpuset hierarchy cannot load on a
 * kernel without one (Debian 13's 6.12): its group is no owner to write
 * through there. Without the mount section (libcgroup 2 and later use the
 * v2 hierarchy), or on a kernel with v1 cpuset, it is. */
START_TEST(cgconfig_v1_mount_without_v1_cpuset_refused)
{
        static const char conf_v1[] = "mount {\n\tcpuset = /sys/fs/cgroup/cpuset;\n}\n"
                                      "group oracle {\n\tcpuset {\n\t\tcpuset.cpus = 0;\n\t\tcpuset.mems = 3;\n\t}\n}\n";
        static const char conf_v2[] = "group oracle {\n\tcpuset {\n\t\tcpuset.cpus = 0;\n\t\tcpuset.mems = 3;\n\t}\n}\n";
        static const char absent[] = "cgroup_v1_cpuset absent the kernel refuses a v1 cpuset (fsconfig(2): cgroup: "
                                     "Unknown subsys name 'cpuset')\nprocmap_query present answers\n";
        static const char present[] = "cgroup_v1_cpuset present a v1 cgroup may bind cpuset (fsconfig(2))\n";
        struct ng_cpuset_plan pl;
        fx_open("guest4-v2", LOCAL_CONF);
        put("etc/cgconfig.conf", conf_v1);
        put("numaguard/features", absent);
        fx_collect();
        fx_plan(&pl);
        ck_assert_int_eq(pl.owner.kind, NG_OWNER_CGCONFIG);
        ck_assert(pl.owner.v1_mount);
        ck_assert_msg(pl.refused, "not refused");
        ck_assert_msg(strstr(pl.reason, "cgconfig group oracle cannot work on this kernel: /etc/cgconfig.conf mounts "
                                        "a v1 cpuset hierarchy and the kernel has none"), "%s", pl.reason);
        ck_assert_msg(strstr(pl.reason, "Unknown subsys name 'cpuset'"), "%s", pl.reason);
        /* and the audit says the live cpuset is not persisted */
        bool said = false;
        for (size_t i = 0; i < fx->a->n_findings; i++)
                said |= fx->a->findings[i].code == NG_CODE_CPUSET_NOT_PERSISTENT &&
                        strstr(fx->a->findings[i].message, "cgconfig group oracle, cannot work on this kernel");
        ck_assert_msg(said, "no CPUSET_NOT_PERSISTENT about the cgconfig group");
        put("numaguard/features", present);
        fx_collect();
        fx_plan(&pl);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        put("etc/cgconfig.conf", conf_v2);
        put("numaguard/features", absent);
        fx_collect();
        fx_plan(&pl);
        ck_assert_int_eq(pl.owner.kind, NG_OWNER_CGCONFIG);
        ck_assert(!pl.owner.v1_mount);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        fx_close();
}
END_TEST

/* cgroup v2 moves pages on a cpuset.mems write since Linux 5.15 only:
 * the summary says what this kernel does (5.10 guests showed the pages
 * staying) */
START_TEST(apply_v2_summary_follows_the_kernel_release)
{
        static const struct { const char *release, *says; } cases[] = {
                { "5.10.0-46-amd64", "cgroup v2 before Linux 5.15 moves no page on a cpuset.mems write: pages already "
                                     "allocated stay where they are, only new allocations go to node(s) 0" },
                { "5.15.0-1-generic", "migrates the tasks' memory on the cpuset.mems write (cgroup v2 since Linux 5.15" },
                { "6.12.118+deb13-amd64", "migrates the tasks' memory on the cpuset.mems write (cgroup v2 since Linux 5.15" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                fx_open_release("guest4-v2", LOCAL_CONF, cases[i].release);
                fx_apply(true);
                ck_assert_msg(strstr(fx->res->summary, cases[i].says), "%s: %s", cases[i].release, fx->res->summary);
                fx_close();
        }
}
END_TEST

START_TEST(apply_v1_local_reports_memory_migrate)
{
        fx_open("guest4-v1", LOCAL_CONF);
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_DONE, "%s", fx->res->summary);
        ck_assert_uint_eq(fx->rec.n, 2);
        assert_write(0, V1_MEMS, "0,3");
        assert_write(1, V1_MEMS, "0");
        assert_file(V1_MEMS, "0");
        assert_file("/sys/fs/cgroup/cpuset/oracle/cpuset.memory_migrate", "0\n");     /* never touched */
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "cpuset.memory_migrate=0: pages already allocated stay"));
        fx_close();
}
END_TEST

START_TEST(apply_bind_order_mems_cpus_cpus_mems)
{
        fx_open("guest4-v2", "[instance ora]\ncgroup = /oracle\npolicy = bind\nnodes = 1\n");
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_DONE, "%s", fx->res->summary);
        ck_assert_uint_eq(fx->rec.n, 4);
        assert_write(0, V2_MEMS, "1,3");
        assert_write(1, V2_CPUS, "0-1");
        assert_write(2, V2_CPUS, "1");
        assert_write(3, V2_MEMS, "1");
        assert_file(V2_MEMS, "1");
        assert_file(V2_CPUS, "1");
        fx_close();
}
END_TEST

START_TEST(apply_widening_only_is_one_write)
{
        fx_open("guest4-v2", "[instance ora]\ncgroup = /oracle\npolicy = interleave\nnodes = 2-3\n");
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_DONE, "%s", fx->res->summary);
        ck_assert_uint_eq(fx->rec.n, 1);
        assert_write(0, V2_MEMS, "2-3");
        fx_close();
}
END_TEST

START_TEST(apply_dry_run_writes_nothing)
{
        fx_open("guest4-v2", LOCAL_CONF);
        fx_apply(true);
        ck_assert_int_eq(fx->res->outcome, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(fx->rec.n, 0);
        ck_assert_uint_eq(fx->res->n_writes, 2);
        ck_assert_str_eq(fx->res->writes[0].path, V2_MEMS);
        ck_assert_str_eq(fx->res->writes[0].value, "0,3");
        ck_assert_str_eq(fx->res->writes[1].value, "0");
        ck_assert_str_eq(fx->res->writes[0].before, "3");
        ck_assert_str_eq(fx->res->writes[0].after, "");
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "would set"));
        assert_file(V2_MEMS, "3\n");
        fx_close();
}
END_TEST

START_TEST(apply_ebusy_is_transient)
{
        fx_open("guest4-v2", LOCAL_CONF);
        fx->rec.fail_at = 0;
        fx->rec.fail_errno = EBUSY;
        fx_apply(false);
        ck_assert_int_eq(fx->res->outcome, NG_OUTCOME_TRANSIENT);
        ck_assert_int_eq(fx->res->error, -EBUSY);
        ck_assert_uint_eq(fx->rec.n, 1);        /* stops at the first failure */
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "nothing changed"));
        assert_file(V2_MEMS, "3\n");
        fx_close();
}
END_TEST

START_TEST(apply_eacces_is_permanent)
{
        fx_open("guest4-v1", LOCAL_CONF);
        fx->rec.fail_at = 0;
        fx->rec.fail_errno = EACCES;
        fx_apply(false);
        ck_assert_int_eq(fx->res->outcome, NG_OUTCOME_PERMANENT);
        ck_assert_int_eq(fx->res->error, -EACCES);
        fx_close();
}
END_TEST

START_TEST(apply_failure_after_widening_leaves_it_valid)
{
        fx_open("guest4-v2", LOCAL_CONF);
        fx->rec.fail_at = 1;
        fx->rec.fail_errno = EBUSY;
        fx_apply(false);
        ck_assert_int_eq(fx->res->outcome, NG_OUTCOME_TRANSIENT);
        assert_file(V2_MEMS, "0,3");
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "left valid"));
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "cpuset.mems 0,3"));
        fx_close();
}
END_TEST

START_TEST(apply_read_back_mismatch_is_not_done)
{
        /* the narrowing does not take: PARTIAL (the widening did) */
        fx_open("guest4-v2", LOCAL_CONF);
        fx->rec.alter_at = 1;
        fx->rec.alter_to = "0,3";
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_PARTIAL, "%s", fx->res->summary);
        ck_assert_ptr_nonnull(strstr(fx->res->summary, "reads back as '0,3' after writing 0"));
        fx_close();
        /* the first write does not take: PERMANENT, nothing more written */
        fx_open("guest4-v2", LOCAL_CONF);
        fx->rec.alter_at = 0;
        fx->rec.alter_to = "3";
        fx_apply(false);
        ck_assert_int_eq(fx->res->outcome, NG_OUTCOME_PERMANENT);
        ck_assert_uint_eq(fx->rec.n, 1);
        fx_close();
}
END_TEST

START_TEST(apply_compares_sets_not_strings)
{
        /* the kernel prints "0-1,3" where "0,1,3" was written, or back */
        fx_open("guest4-v2", "[instance ora]\ncgroup = /oracle\npolicy = interleave\nnodes = 0-1\n");
        fx->rec.alter_at = 0;
        fx->rec.alter_to = "0,1,3\n";
        fx_apply(false);
        ck_assert_msg(fx->res->outcome == NG_OUTCOME_DONE, "%s", fx->res->summary);
        assert_write(0, V2_MEMS, "0-1,3");
        ck_assert_str_eq(fx->res->writes[0].after, "0,1,3");
        assert_write(1, V2_MEMS, "0-1");
        fx_close();
}
END_TEST

int main(void)
{
        Suite *s = suite_create("act-cpuset");
        TCase *tc = tcase_create("plan");
        tcase_add_test(tc, plan_local_mems_follow_cpus);
        tcase_add_test(tc, plan_bind_moves_cpus_to_the_nodes);
        tcase_add_test(tc, plan_refuses_a_cgroup_that_went_away);
        tcase_add_test(tc, plan_bind_memory_only_node_keeps_cpus);
        tcase_add_test(tc, plan_interleave);
        tcase_add_test(tc, plan_refusals);
        suite_add_tcase(s, tc);
        tc = tcase_create("apply");
        tcase_set_timeout(tc, 120);    /* a tree copy and a collection per test, on a loaded host */
        tcase_add_test(tc, apply_v2_local_widens_then_narrows);
        tcase_add_test(tc, apply_v1_local_reports_memory_migrate);
        tcase_add_test(tc, apply_v2_summary_follows_the_kernel_release);
        tcase_add_test(tc, cgconfig_v1_mount_without_v1_cpuset_refused);
        tcase_add_test(tc, apply_bind_order_mems_cpus_cpus_mems);
        tcase_add_test(tc, apply_widening_only_is_one_write);
        tcase_add_test(tc, apply_dry_run_writes_nothing);
        tcase_add_test(tc, apply_ebusy_is_transient);
        tcase_add_test(tc, apply_eacces_is_permanent);
        tcase_add_test(tc, apply_failure_after_widening_leaves_it_valid);
        tcase_add_test(tc, apply_read_back_mismatch_is_not_done);
        tcase_add_test(tc, apply_compares_sets_not_strings);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

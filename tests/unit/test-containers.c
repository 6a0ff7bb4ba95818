/* Containers as instances (docs/ARCHITECTURE.md, "Namespaces"): what a
 * cgroup path says (runtime, id, Kubernetes pod and QoS class), the names
 * the runtimes keep, checked on the fixture trees of
 * tests/fixtures/containers against expectations worked out by hand; and
 * an instance matched by its container's name. */

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "ng-test.h"
#include "ng-act-cpuset.h"
#include "act-docker-internal.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-metrics.h"
#include "ng-snapshot.h"

#define TREES NG_FIXTURES "/containers"
#define ID "3f2a0c1d9b7e45a8b6c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3"

static struct ng_container parse_ok(const char *path)
{
        struct ng_container ct;
        ck_assert_msg(ng_container_from_cgroup(path, &ct) == 0, "no container in %s", path);
        return ct;
}

START_TEST(cgroup_shapes)
{
        struct ng_container ct = parse_ok("/system.slice/docker-" ID ".scope");
        ck_assert_str_eq(ct.runtime, "docker");
        ck_assert_str_eq(ct.id, ID);
        ck_assert_str_eq(ct.pod_uid, "");
        ct = parse_ok("/docker/" ID);
        ck_assert_str_eq(ct.runtime, "docker");
        ct = parse_ok("/machine.slice/libpod-" ID ".scope/container");
        ck_assert_str_eq(ct.runtime, "podman");
        ct = parse_ok("/libpod_parent/libpod-" ID);
        ck_assert_str_eq(ct.runtime, "podman");
        ct = parse_ok("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c2a3b_4d5e_4f60_8a9b_"
                      "0c1d2e3f4a5b.slice/cri-containerd-" ID ".scope");
        ck_assert_str_eq(ct.runtime, "containerd");
        ck_assert_str_eq(ct.pod_uid, "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b");
        ck_assert_str_eq(ct.qos, "burstable");
        ct = parse_ok("/kubepods.slice/kubepods-pod6f1c2a3b_4d5e_4f60_8a9b_0c1d2e3f4a5b.slice/crio-" ID ".scope");
        ck_assert_str_eq(ct.runtime, "cri-o");
        ck_assert_str_eq(ct.qos, "guaranteed");
        ct = parse_ok("/kubepods/besteffort/pod6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b/" ID);
        ck_assert_str_eq(ct.runtime, "");
        ck_assert_str_eq(ct.pod_uid, "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b");
        ck_assert_str_eq(ct.qos, "besteffort");
        ct = parse_ok("/kubepods/pod6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b/" ID);
        ck_assert_str_eq(ct.qos, "guaranteed");
        /* no container: the monitors, a pod's own slice, a service, a short id */
        struct ng_container none;
        ck_assert_int_eq(ng_container_from_cgroup("/machine.slice/libpod-conmon-" ID ".scope", &none), -ENOENT);
        ck_assert_int_eq(ng_container_from_cgroup("/system.slice/crio-conmon-" ID ".scope", &none), -ENOENT);
        ck_assert_int_eq(ng_container_from_cgroup("/kubepods.slice/kubepods-burstable.slice", &none), -ENOENT);
        ck_assert_int_eq(ng_container_from_cgroup("/system.slice/postgresql@15-main.service", &none), -ENOENT);
        ck_assert_int_eq(ng_container_from_cgroup("/docker/3f2a0c1d9b7e", &none), -ENOENT);
        ck_assert_int_eq(ng_container_from_cgroup("/", &none), -ENOENT);
        ck_assert_int_eq(ng_container_from_cgroup(NULL, &none), -ENOENT);
}
END_TEST

static struct ng_audit *audit_tree(const char *tree, const char *conf, struct ng_snapshot **ret_s)
{
        char root[256];
        snprintf(root, sizeof(root), TREES "/%s", tree);
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(root, &p), 0);
        struct ng_config *cfg;
        if (conf)
                ck_assert_int_eq(ng_config_load_string(conf, "test", NULL, NULL, &cfg), 0);
        else
                ck_assert_int_eq(ng_config_new_default(&cfg), 0);
        struct ng_snapshot *s;
        ck_assert_int_eq(ng_collect_for_config(p, cfg, NG_PLACEMENT_AUTO, &s), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        ng_config_free(cfg);
        ng_path_free(p);
        *ret_s = s;
        return a;
}

static const struct ng_instance *instance_of(const struct ng_audit *a, pid_t pid)
{
        for (size_t i = 0; i < a->n_instances; i++)
                if (a->instances[i].main_pid == pid)
                        return &a->instances[i];
        return NULL;
}

static void field_eq(const char *got, const char *want, pid_t pid, const char *what)
{
        ck_assert_msg(!strcmp(got, strcmp(want, "-") ? want : ""), "pid %d: %s is \"%s\", expected \"%s\"", (int) pid,
                      what, got, want);
}

/* Every line of TREE.expected, and no other container. */
static void check_tree(const char *tree)
{
        char path[256];
        snprintf(path, sizeof(path), TREES "/%s.expected", tree);
        char *text = ng_test_read(path, NULL);
        struct ng_snapshot *s;
        struct ng_audit *a = audit_tree(tree, NULL, &s);
        size_t in_containers = 0, lines = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (line[0] == '#')
                        continue;
                int pid;
                char inst[80], rt[16], id[80], name[128], ns[64], pod[128], uid[48], qos[16];
                ck_assert_int_eq(sscanf(line, "%d %79s %15s %79s %127s %63s %127s %47s %15s", &pid, inst, rt, id, name,
                                        ns, pod, uid, qos), 9);
                lines++;
                const struct ng_instance *in = instance_of(a, pid);
                ck_assert_msg(in != NULL, "%s: no instance with main pid %d", tree, pid);
                field_eq(in->name, inst, pid, "instance");
                if (!strcmp(id, "-")) {
                        ck_assert_msg(in->container == NULL, "pid %d: in a container", pid);
                        continue;
                }
                in_containers++;
                ck_assert_msg(in->container != NULL, "pid %d: in no container", pid);
                const struct ng_container *ct = in->container;
                field_eq(ct->runtime, rt, pid, "runtime");
                field_eq(ct->id, id, pid, "id");
                field_eq(ct->name, name, pid, "name");
                field_eq(ct->pod_namespace, ns, pid, "pod_namespace");
                field_eq(ct->pod, pod, pid, "pod");
                field_eq(ct->pod_uid, uid, pid, "pod_uid");
                field_eq(ct->qos, qos, pid, "qos");
        }
        ck_assert_uint_gt(lines, 0);
        ck_assert_uint_eq(s->n_containers, in_containers);
        ng_audit_free(a);
        ng_snapshot_free(s);
        free(text);
}

START_TEST(kubelet_cgroup_v2)
{
        check_tree("k8s-v2");
}
END_TEST

START_TEST(kubelet_cgroup_v1)
{
        check_tree("k8s-v1");
}
END_TEST

/* container = GLOB matches the container's name: the pod's "db" only. */
START_TEST(configured_by_container_name)
{
        struct ng_snapshot *s;
        struct ng_audit *a = audit_tree("k8s-v2", "[instance ledger]\ncontainer = d?\n", &s);
        const struct ng_instance *in = NULL;
        for (size_t i = 0; i < a->n_instances; i++)
                if (!strcmp(a->instances[i].name, "ledger"))
                        in = &a->instances[i];
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 1);
        ck_assert_int_eq(in->pids[0], 1101);
        ck_assert_ptr_nonnull(in->container);
        ck_assert_str_eq(in->container->pod, "ledger-db-0");
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

/* The metric labels: one info series per instance in a container. */
START_TEST(metric_labels)
{
        struct ng_snapshot *s;
        struct ng_audit *a = audit_tree("k8s-v2", NULL, &s);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_ptr_nonnull(f);
        struct ng_metrics_poll p = { .timestamp_usec = 1700000000123456 };
        ck_assert_int_eq(ng_metrics_render(s, a, &p, f), 0);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(buf, "numaguard_instance_container_info{db_instance=\"postgresql:/var/lib/"
                                          "postgresql/data@db\",runtime=\"cri-o\",container=\"db\",container_id=\""
                                          "8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a33f2a0c1d9b7e45a8b\",pod=\""
                                          "ledger-db-0\",pod_namespace=\"finance\",pod_uid=\"a7b8c9d0-e1f2-4a3b-9c4d-"
                                          "5e6f7a8b9c0d\"} 1\n"));
        size_t n = 0;
        for (const char *q = buf; (q = strstr(q, "\nnumaguard_instance_container_info{")); q++)
                n++;
        ck_assert_uint_eq(n, 4);        /* not the host's own instance */
        free(buf);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

/* ---- the owners of container cpusets ---- */

static size_t n_not_persistent(const struct ng_audit *a, const char *instance, const char *needle)
{
        size_t n = 0;
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_CPUSET_NOT_PERSISTENT && !strcmp(a->findings[i].instance, instance) &&
                    strstr(a->findings[i].message, needle))
                        n++;
        return n;
}

/* k8s-v2: Docker saved cpuset-mems 0 and the live one is 1; Podman saved
 * 2-3/2-3 and the live cgroup holds 3/3; the Burstable pod has CPUs on
 * nodes 0-1 and memory on node 2, the Guaranteed one CPU 1 and node 1
 * (aligned: nothing to say). k8s-v1: the cgroupfs pod has CPUs 0-3 and
 * memory 0; Docker saved nothing (the parent's) and the cgroup has it. */
START_TEST(owners_of_container_cpusets)
{
        struct ng_snapshot *s;
        struct ng_audit *a = audit_tree("k8s-v2", NULL, &s);
        const struct ng_instance *in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data@billing-db");
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_nonnull(in->owner);
        ck_assert_int_eq(in->owner->kind, NG_OWNER_DOCKER);
        ck_assert_str_eq(ng_owner_kind_name(in->owner->kind), "docker");
        ck_assert_uint_eq(n_not_persistent(a, in->name, "cpuset.mems is 1, saved cpuset-mems 0"), 1);
        in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data@orders-db");
        ck_assert_int_eq(in->owner->kind, NG_OWNER_PODMAN);
        ck_assert_uint_eq(n_not_persistent(a, in->name, "saved cpuset-mems 2-3"), 1);
        in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data@postgres");
        ck_assert_int_eq(in->owner->kind, NG_OWNER_KUBELET);
        ck_assert_str_eq(in->owner->name, "shop/pg-0");
        ck_assert_uint_eq(n_not_persistent(a, in->name, "is the kubelet's: CPUs on nodes 0-1, memory on node 2"), 1);
        in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data@db");
        ck_assert_int_eq(in->owner->kind, NG_OWNER_KUBELET);
        ck_assert_uint_eq(n_not_persistent(a, in->name, ""), 0);
        ng_audit_free(a);
        ng_snapshot_free(s);

        a = audit_tree("k8s-v1", NULL, &s);
        in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data@postgres");
        ck_assert_int_eq(in->owner->kind, NG_OWNER_KUBELET);
        ck_assert_str_eq(in->owner->name, "store/catalog-0");
        ck_assert_uint_eq(n_not_persistent(a, in->name, "CPUs on nodes 0-3, memory on node 0"), 1);
        in = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data@legacy-pg");
        ck_assert_int_eq(in->owner->kind, NG_OWNER_DOCKER);
        ck_assert_uint_eq(n_not_persistent(a, in->name, ""), 0);
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

static const struct ng_finding *only_not_persistent(const struct ng_audit *a, const char *instance)
{
        const struct ng_finding *f = NULL;
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_CPUSET_NOT_PERSISTENT && !strcmp(a->findings[i].instance, instance)) {
                        ck_assert_msg(f == NULL, "%s: CPUSET_NOT_PERSISTENT twice", instance);
                        f = &a->findings[i];
                }
        return f;
}

/* Every entry of TREE.owners: the owner of the instance's cpuset and the
 * CPUSET_NOT_PERSISTENT said of it, message and advice to the letter. */
static void check_owners(const char *tree)
{
        char path[256];
        snprintf(path, sizeof(path), TREES "/%s.owners", tree);
        char *text = ng_test_read(path, NULL);
        struct ng_snapshot *s;
        struct ng_audit *a = audit_tree(tree, NULL, &s);
        const struct ng_instance *in = NULL;
        const struct ng_finding *f = NULL;
        size_t entries = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (line[0] == '#')
                        continue;
                if (!strncmp(line, "message ", 8) || !strncmp(line, "advice ", 7)) {
                        bool msg = line[0] == 'm';
                        ck_assert_msg(f != NULL, "%s: \"%s\" follows no finding", tree, line);
                        const char *want = line + (msg ? 8 : 7), *got = msg ? f->message : f->advice;
                        ck_assert_msg(!strcmp(got, want), "%s: %s of %s is\n  \"%s\"\nexpected\n  \"%s\"", tree,
                                      msg ? "message" : "advice", in->name, got, want);
                        continue;
                }
                int pid;
                char owner[16], name[128], code[32];
                ck_assert_int_eq(sscanf(line, "%d %15s %127s %31s", &pid, owner, name, code), 4);
                entries++;
                in = instance_of(a, pid);
                ck_assert_msg(in != NULL && in->owner != NULL, "%s: pid %d: no instance or no owner", tree, pid);
                field_eq(ng_owner_kind_name(in->owner->kind), owner, pid, "owner");
                field_eq(in->owner->name, name, pid, "owner name");
                f = only_not_persistent(a, in->name);
                if (!strcmp(code, "-"))
                        ck_assert_msg(f == NULL, "%s: pid %d: %s", tree, pid, f ? f->message : "");
                else
                        ck_assert_msg(f != NULL && !strcmp(ng_code_name(f->code), code), "%s: pid %d: no %s", tree,
                                      pid, code);
        }
        ck_assert_uint_gt(entries, 0);
        ng_audit_free(a);
        ng_snapshot_free(s);
        free(text);
}

START_TEST(owners_as_worked_out)
{
        check_owners("k8s-v2");
        check_owners("k8s-v1");
}
END_TEST

/* What Docker's API was asked; it applies the values to the cgroup. */
struct docker_call {
        char id[65], cpus[64], mems[64];
        int calls;
        const char *dir;        /* the cgroup, in the tree copy */
};

static void write_file(const char *dir, const char *name, const char *value)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%s\n", value);
        fclose(f);
}

static int fake_docker(void *userdata, const struct ng_path *p, const char *id, const struct ng_bitmap *cpus,
                       const struct ng_bitmap *mems)
{
        (void) p;
        struct docker_call *d = userdata;
        d->calls++;
        snprintf(d->id, sizeof(d->id), "%s", id);
        if (cpus) {
                ng_bitmap_format_list(cpus, d->cpus, sizeof(d->cpus));
                write_file(d->dir, "cpuset.cpus", d->cpus);
                write_file(d->dir, "cpuset.cpus.effective", d->cpus);
        }
        if (mems) {
                ng_bitmap_format_list(mems, d->mems, sizeof(d->mems));
                write_file(d->dir, "cpuset.mems", d->mems);
                write_file(d->dir, "cpuset.mems.effective", d->mems);
        }
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

/* cpuset apply on a copy of k8s-v2 for instance NAME (policy bind, nodes):
 * the plan and what was done. */
static void apply_copy(const char *conf, const char *name, struct docker_call *d, struct ng_cpuset_plan *ret_plan,
                       struct ng_action_result *ret_res)
{
        char dir[] = "/tmp/ng-containers.XXXXXX", tree[64], cmd[256];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(tree, sizeof(tree), "%s/t", dir);
        snprintf(cmd, sizeof(cmd), "cp -a '" TREES "/k8s-v2' '%s'", tree);
        ck_assert_int_eq(system(cmd), 0);
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(tree, &p), 0);
        struct ng_config *cfg;
        ck_assert_int_eq(ng_config_load_string(conf, "t.conf", NULL, NULL, &cfg), 0);
        struct ng_snapshot *s;
        ck_assert_int_eq(ng_collect_for_config(p, cfg, NG_PLACEMENT_AUTO, &s), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, cfg, &a), 0);
        const struct ng_instance *in = ng_audit_instance(a, name);
        ck_assert_ptr_nonnull(in);
        struct ng_action_ops ops = ng_action_ops_default;
        ops.docker_update = fake_docker;
        ops.userdata = d;
        char cgdir[4096];
        const struct ng_cgroup *cg = ng_snapshot_cgroup(s, in->cgroup);
        snprintf(cgdir, sizeof(cgdir), "%s%s", tree, cg->dir);
        d->dir = cgdir;
        struct ng_cpuset_bounds parent;
        ck_assert_int_eq(ng_cpuset_parent_read(p, &ops, s, in, &parent), 0);
        ck_assert_int_eq(ng_cpuset_plan(s, in, &parent, ret_plan), 0);
        ng_action_result_reset(ret_res);
        if (!ret_plan->refused)
                ck_assert_int_eq(ng_cpuset_apply(p, &ops, ret_plan, false, ret_res), 0);
        ng_audit_free(a);
        ng_snapshot_free(s);
        ng_config_free(cfg);
        ng_path_free(p);
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Docker: through its API, which saves the values with the container. */
START_TEST(docker_cpuset_through_its_api)
{
        struct docker_call d = { 0 };
        struct ng_cpuset_plan pl;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        apply_copy("[instance billing]\ncontainer = billing-db\npolicy = bind\nnodes = 0\nenforce = cpuset\n",
                   "billing", &d, &pl, res);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        ck_assert_int_eq(d.calls, 1);
        ck_assert_str_eq(d.id, "e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3");
        ck_assert_str_eq(d.mems, "0");
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_msg(strstr(res->summary, "docker container billing-db updated and saved"), "%s", res->summary);
}
END_TEST

/* Podman 4.3: written live, and said not to last. */
START_TEST(podman_cpuset_live_not_persistent)
{
        struct docker_call d = { 0 };
        struct ng_cpuset_plan pl;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        apply_copy("[instance orders]\ncontainer = orders-db\npolicy = bind\nnodes = 2\nenforce = cpuset\n",
                   "orders", &d, &pl, res);
        ck_assert_msg(!pl.refused, "%s", pl.reason);
        ck_assert_int_eq(d.calls, 0);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DONE);
        ck_assert_msg(strstr(res->summary, "not saved with podman container orders-db") &&
                      strstr(res->summary, "CPUSET_NOT_PERSISTENT"), "%s", res->summary);
}
END_TEST

/* A pod's: the kubelet's settings, not a write. */
START_TEST(kubelet_cpuset_refused)
{
        struct docker_call d = { 0 };
        struct ng_cpuset_plan pl;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        apply_copy("[instance shop]\ncontainer = postgres\npolicy = bind\nnodes = 2\nenforce = cpuset\n",
                   "shop", &d, &pl, res);
        ck_assert(pl.refused);
        ck_assert_msg(strstr(pl.reason, "kubelet") && strstr(pl.reason, "topologyManagerPolicy single-numa-node"),
                      "%s", pl.reason);
}
END_TEST

/* Docker's reply status line; a reply cut after "HTTP/1." is no status and
 * is not read past its end. */
START_TEST(docker_reply_status)
{
        ck_assert_int_eq(ng_docker_http_status("HTTP/1.1 200 OK\r\n"), 200);
        ck_assert_int_eq(ng_docker_http_status("HTTP/1.0 404 Not Found\r\n"), 404);
        char *cut = strdup("HTTP/1.");         /* its own allocation: ASan sees a read past it */
        ck_assert_int_eq(ng_docker_http_status(cut), -EBADMSG);
        free(cut);
        ck_assert_int_eq(ng_docker_http_status("HTTP/2 200"), -EBADMSG);
        ck_assert_int_eq(ng_docker_http_status(""), -EBADMSG);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("containers");
        TCase *tc = tcase_create("containers");
        tcase_add_test(tc, cgroup_shapes);
        tcase_add_test(tc, kubelet_cgroup_v2);
        tcase_add_test(tc, kubelet_cgroup_v1);
        tcase_add_test(tc, configured_by_container_name);
        tcase_add_test(tc, metric_labels);
        tcase_add_test(tc, owners_of_container_cpusets);
        tcase_add_test(tc, owners_as_worked_out);
        tcase_add_test(tc, docker_cpuset_through_its_api);
        tcase_add_test(tc, podman_cpuset_live_not_persistent);
        tcase_add_test(tc, kubelet_cpuset_refused);
        tcase_add_test(tc, docker_reply_status);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

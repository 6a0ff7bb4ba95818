/* Containers as instances (docs/ARCHITECTURE.md, "Namespaces"): what a
 * cgroup path says (runtime, id, Kubernetes pod and QoS class), the names
 * the runtimes keep, checked on the fixture trees of
 * tests/fixtures/containers against expectations worked out by hand; and
 * an instance matched by its container's name. */

#include "ng-test.h"
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

int main(void)
{
        Suite *s = suite_create("containers");
        TCase *tc = tcase_create("containers");
        tcase_add_test(tc, cgroup_shapes);
        tcase_add_test(tc, kubelet_cgroup_v2);
        tcase_add_test(tc, kubelet_cgroup_v1);
        tcase_add_test(tc, configured_by_container_name);
        tcase_add_test(tc, metric_labels);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* A configured instance is one cluster of processes, one PID and one IPC
 * namespace (lib/2-analyze/audit-ns.c): the clusters of a set of pids, the
 * one an instance takes, and the audit of a host PostgreSQL beside one in a
 * container that both answer match_comm = postgres (the same shmid in each
 * IPC namespace, as tests/e2e/cases/podman-pg.sh makes them); discovery
 * beside configured instances. */

#include "snapshot-builder.h"
#include "audit-ns.h"
#include "ng-audit.h"
#include "ng-config.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* numaguard's own namespaces in these snapshots, and a container's. */
#define OWN_PID 4026531836u
#define OWN_IPC 4026531839u
#define CTR_PID 4026532602u
#define CTR_IPC 4026532601u

static struct ng_config *conf(const char *text)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string(text, "test.conf", NULL, NULL, &c), 0);
        return c;
}

static struct ng_audit *run(const struct ng_snapshot *s, const struct ng_config *c)
{
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        return a;
}

static struct ng_proc *proc_in(struct ng_snapshot *s, pid_t pid, pid_t ppid, const char *comm, uint64_t pid_ns,
                               uint64_t ipc_ns)
{
        struct ng_proc *pr = snap_proc(s, pid, ppid, comm, "0-1", "0-1");
        pr->pid_ns = pid_ns;
        pr->ipc_ns = ipc_ns;
        return pr;
}

static struct ng_snapshot *own_ns(void)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        s->pid_ns = OWN_PID;
        s->ipc_ns = OWN_IPC;
        return s;
}

static const pid_t *pids_of(const struct ng_snapshot *s, pid_t *buf)
{
        for (size_t i = 0; i < s->n_procs; i++)
                buf[i] = s->procs[i]->pid;
        return buf;
}

START_TEST(clusters_by_pid_and_ipc_namespace)
{
        /* snap_proc appends: pids in ascending order, as a collection has them */
        struct ng_snapshot *s = own_ns();
        proc_in(s, 50, 1, "postgres", CTR_PID, CTR_IPC);
        proc_in(s, 51, 50, "postgres", CTR_PID, CTR_IPC);
        proc_in(s, 52, 50, "postgres", CTR_PID, CTR_IPC);
        proc_in(s, 60, 1, "postgres", OWN_PID, CTR_IPC + 100);        /* the host's PID namespace, its own IPC one */
        proc_in(s, 100, 1, "postgres", OWN_PID, OWN_IPC);
        proc_in(s, 101, 100, "postgres", OWN_PID, OWN_IPC);
        pid_t buf[8];
        struct ng_ns_cluster *v;
        size_t n;
        ck_assert_int_eq(ng_ns_clusters(s, pids_of(s, buf), s->n_procs, &v, &n), 0);
        ck_assert_uint_eq(n, 3);
        /* by main pid, each its lowest */
        ck_assert_int_eq(v[0].main_pid, 50);
        ck_assert_uint_eq(v[0].n_pids, 3);
        ck_assert(v[0].pid_ns == CTR_PID && v[0].ipc_ns == CTR_IPC);
        ck_assert_int_eq(v[1].main_pid, 60);
        ck_assert_uint_eq(v[1].n_pids, 1);
        ck_assert(v[1].pid_ns == OWN_PID && v[1].ipc_ns == CTR_IPC + 100);
        ck_assert_int_eq(v[2].main_pid, 100);
        ck_assert_uint_eq(v[2].n_pids, 2);

        /* numaguard's own namespaces first (a PID namespace alone is not enough) */
        enum ng_ns_choice why;
        ck_assert_uint_eq(ng_ns_cluster_choose(s, v, n, 0, &why), 2);
        ck_assert_int_eq(why, NG_NS_OWN);
        /* a pidfile's process before them */
        ck_assert_uint_eq(ng_ns_cluster_choose(s, v, n, 60, &why), 1);
        ck_assert_int_eq(why, NG_NS_PIDFILE);
        /* a pidfile naming no process of the snapshot: as without one */
        ck_assert_uint_eq(ng_ns_cluster_choose(s, v, n, 4242, &why), 2);
        ck_assert_int_eq(why, NG_NS_OWN);
        /* none in numaguard's own: the largest */
        s->ipc_ns = 7;
        ck_assert_uint_eq(ng_ns_cluster_choose(s, v, n, 0, &why), 0);
        ck_assert_int_eq(why, NG_NS_LARGEST);
        /* of equals, the lowest main pid */
        v[2].n_pids = 3;
        ck_assert_uint_eq(ng_ns_cluster_choose(s, v, n, 0, &why), 0);
        v[0].n_pids = 2;
        ck_assert_uint_eq(ng_ns_cluster_choose(s, v, n, 0, &why), 2);
        free(v);

        /* unknown namespaces (a tree taken before they were read) are one cluster */
        for (size_t i = 0; i < s->n_procs; i++)
                s->procs[i]->pid_ns = s->procs[i]->ipc_ns = 0;
        ck_assert_int_eq(ng_ns_clusters(s, buf, s->n_procs, &v, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(v[0].n_pids, 6);
        free(v);
        ck_assert_int_eq(ng_ns_clusters(s, buf, 0, &v, &n), 0);
        ck_assert_uint_eq(n, 0);
        ng_snapshot_free(s);
}
END_TEST

/* The host's PostgreSQL (200-201, shmid 5 in the host's IPC namespace) and a
 * container's (100-102, shmid 5 in its own, attached when ctr_attached),
 * both owned by uid 101. */
static struct ng_snapshot *host_and_container(bool ctr_attached)
{
        struct ng_snapshot *s = own_ns();
        static const struct ng_node_pages host_pl[] = { { 0, 4096 } }, ctr_pl[] = { { 1, 2048 } };
        snap_shm(s, 5, 16 * MiB, 2, 0);
        s->shm[0].ipc_ns = OWN_IPC;
        s->shm[0].uid = 101;
        snap_shm(s, 5, 8 * MiB, 3, 0);
        s->shm[1].ipc_ns = CTR_IPC;
        s->shm[1].uid = 101;
        struct ng_proc *pr = proc_in(s, 100, 90, "postgres", CTR_PID, CTR_IPC);
        free(pr->cmdline);
        pr->cmdline = strdup("postgres -D /var/lib/postgresql/data");
        if (ctr_attached)
                snap_map_sysv(pr, 5, 0x7f0000000000, 8 * MiB, 4, ctr_pl, 1);
        for (pid_t p = 101; p <= 102; p++) {
                pr = proc_in(s, p, 100, "postgres", CTR_PID, CTR_IPC);
                if (ctr_attached)
                        snap_map_sysv(pr, 5, 0x7f0000000000, 8 * MiB, 4, NULL, 0);
        }
        pr = proc_in(s, 200, 1, "postgres", OWN_PID, OWN_IPC);
        free(pr->cmdline);
        pr->cmdline = strdup("/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main");
        snap_map_sysv(pr, 5, 0x7f1000000000, 16 * MiB, 4, host_pl, 1);
        snap_map_sysv(proc_in(s, 201, 200, "postgres", OWN_PID, OWN_IPC), 5, 0x7f1000000000, 16 * MiB, 4, NULL, 0);
        return s;
}

static const struct ng_finding *only(const struct ng_audit *a, enum ng_code code)
{
        const struct ng_finding *f = NULL;
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == code) {
                        ck_assert_msg(f == NULL, "%s twice", ng_code_name(code));
                        f = &a->findings[i];
                }
        return f;
}

START_TEST(configured_instance_takes_the_hosts_cluster)
{
        struct ng_snapshot *s = host_and_container(true);
        struct ng_config *c = conf("[global]\nmin_segment_size = 1M\n[instance pg]\nmatch_comm = postgres\n");
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "pg");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 2);
        ck_assert_int_eq(in->pids[0], 200);
        ck_assert_int_eq(in->pids[1], 201);
        ck_assert_int_eq(in->main_pid, 200);
        ck_assert(in->pid_ns == OWN_PID && in->ipc_ns == OWN_IPC);
        /* its segment is the host's shmid 5, not the container's */
        ck_assert_uint_eq(in->n_segs, 1);
        ck_assert_uint_eq(a->segments[in->segs[0]].ipc_ns, OWN_IPC);
        ck_assert_uint_eq(in->shared_bytes, 16 * MiB);

        const struct ng_finding *f = only(a, NG_CODE_INSTANCE_AMBIGUOUS);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->instance, "pg");
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ck_assert(f->value == 2);
        ck_assert_msg(strstr(f->message, "match_comm=postgres matches processes in 2 clusters") &&
                      strstr(f->message, "the one in numaguard's own namespaces (the host's): PID namespace "
                                         "4026531836, IPC namespace 4026531839 (main pid 200, 2 processes)") &&
                      strstr(f->message, "; not PID namespace 4026532602, IPC namespace 4026532601 (main pid "
                                         "100, 3 processes)"), "%s", f->message);
        ck_assert_int_eq(ng_audit_exit_status(a), 1);

        /* the container's is discovered, with its own segment */
        ck_assert_uint_eq(a->n_instances, 2);
        const struct ng_instance *d = ng_audit_instance(a, "postgresql:/var/lib/postgresql/data");
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->origin, NG_INST_DISCOVERED);
        ck_assert_uint_eq(d->n_pids, 3);
        ck_assert_uint_eq(d->n_segs, 1);
        ck_assert_uint_eq(a->segments[d->segs[0]].ipc_ns, CTR_IPC);
        ng_audit_free(a);
        ng_config_free(c);

        /* span_namespaces = yes: one instance of both, as asked */
        c = conf("[global]\nmin_segment_size = 1M\n[instance pg]\nmatch_comm = postgres\nspan_namespaces = yes\n");
        a = run(s, c);
        in = ng_audit_instance(a, "pg");
        ck_assert_uint_eq(in->n_pids, 5);
        ck_assert_uint_eq(in->n_segs, 2);
        ck_assert(in->pid_ns == 0 && in->ipc_ns == 0);
        ck_assert_ptr_null(only(a, NG_CODE_INSTANCE_AMBIGUOUS));
        ck_assert_uint_eq(a->n_instances, 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* shm_owner names segments in the instance's namespaces only. */
START_TEST(shm_owner_stays_in_its_namespaces)
{
        /* the container's attachers detached: its segment is only its owner's */
        struct ng_snapshot *s = host_and_container(false);
        struct ng_config *c = conf("[global]\nmin_segment_size = 1M\n[instance pg]\nmatch_comm = postgres\n"
                                   "shm_owner = 101\n");
        struct ng_audit *a = run(s, c);
        const struct ng_instance *in = ng_audit_instance(a, "pg");
        ck_assert_uint_eq(in->n_segs, 1);
        ck_assert_uint_eq(a->segments[in->segs[0]].ipc_ns, OWN_IPC);
        ng_audit_free(a);
        ng_config_free(c);
        c = conf("[global]\nmin_segment_size = 1M\n[instance pg]\nmatch_comm = postgres\nshm_owner = 101\n"
                 "span_namespaces = yes\n");
        a = run(s, c);
        ck_assert_uint_eq(ng_audit_instance(a, "pg")->n_segs, 2);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

/* Configuring one instance keeps discovering the others; what a configured
 * instance holds is in no discovered one; autodiscover = no turns it off. */
START_TEST(discovery_beside_configured_instances)
{
        struct ng_snapshot *s = own_ns();
        proc_in(s, 100, 1, "ora_pmon_ORCL", OWN_PID, OWN_IPC);
        proc_in(s, 101, 1, "ora_dbw0_ORCL", OWN_PID, OWN_IPC);
        struct ng_proc *pm = proc_in(s, 200, 1, "postgres", OWN_PID, OWN_IPC);
        free(pm->cmdline);
        pm->cmdline = strdup("/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main");
        proc_in(s, 201, 200, "postgres", OWN_PID, OWN_IPC);
        snap_shm(s, 3, 16 * MiB, 1, 0);
        s->shm[0].ipc_ns = OWN_IPC;
        s->shm[0].uid = 54321;
        static const struct ng_node_pages pl[] = { { 0, 4096 } };
        snap_map_sysv(s->procs[0], 3, 0x7f0000000000, 16 * MiB, 4, pl, 1);
        struct ng_config *c = conf("[global]\nmin_segment_size = 1M\n[instance pg]\nmatch_comm = postgres\n");
        struct ng_audit *a = run(s, c);
        ck_assert_uint_eq(a->n_instances, 2);
        ck_assert_uint_eq(ng_audit_instance(a, "pg")->n_pids, 2);
        const struct ng_instance *in = ng_audit_instance(a, "oracle:ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 2);
        ck_assert_ptr_null(ng_audit_instance(a, "postgresql:/var/lib/postgresql/15/main"));
        ck_assert_ptr_null(only(a, NG_CODE_INSTANCE_AMBIGUOUS));
        ng_audit_free(a);
        ng_config_free(c);

        /* a segment a configured instance holds (its owner's) is in no discovered one */
        c = conf("[global]\nmin_segment_size = 1M\n[instance ora]\nshm_owner = 54321\n");
        a = run(s, c);
        ck_assert_uint_eq(ng_audit_instance(a, "ora")->n_segs, 1);
        in = ng_audit_instance(a, "oracle:ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_segs, 0);
        ck_assert_ptr_nonnull(ng_audit_instance(a, "postgresql:/var/lib/postgresql/15/main"));
        ng_audit_free(a);
        ng_config_free(c);

        /* a configured instance holding one process of a cluster: the
         * cluster is discovered without it, unless it holds the main one */
        c = conf("[instance dbw]\nmatch_comm = ora_dbw0_*\n");
        a = run(s, c);
        in = ng_audit_instance(a, "oracle:ORCL");
        ck_assert_ptr_nonnull(in);
        ck_assert_uint_eq(in->n_pids, 1);
        ck_assert_int_eq(in->pids[0], 100);
        ng_audit_free(a);
        ng_config_free(c);
        c = conf("[instance pmon]\nmatch_comm = ora_pmon_*\n");
        a = run(s, c);
        ck_assert_ptr_null(ng_audit_instance(a, "oracle:ORCL"));
        ng_audit_free(a);
        ng_config_free(c);

        c = conf("[global]\nautodiscover = no\n[instance pg]\nmatch_comm = postgres\n");
        a = run(s, c);
        ck_assert_uint_eq(a->n_instances, 1);
        ng_audit_free(a);
        ng_config_free(c);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("ns-clusters");
        TCase *tc = tcase_create("ns-clusters");
        tcase_add_test(tc, clusters_by_pid_and_ipc_namespace);
        tcase_add_test(tc, configured_instance_takes_the_hosts_cluster);
        tcase_add_test(tc, shm_owner_stays_in_its_namespaces);
        tcase_add_test(tc, discovery_beside_configured_instances);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

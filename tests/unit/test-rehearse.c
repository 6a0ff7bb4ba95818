/* The rehearsal of a database's next start: PostgreSQL's configuration as
 * the server reads it (the parser on real postgresql.conf text, settings
 * and their units, the command line's options), and each predicted outcome
 * on literal snapshots at its boundary: hugepages, a fallback to 4 KiB
 * pages, no start, SIGBUS on the nodes a cpuset or a bind policy leaves,
 * its own pages given back, a cyclops start, what cannot be told. */

#include "snapshot-builder.h"
#include "dbconf.h"
#include "util.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-rehearse.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* ---- configuration text ---- */

START_TEST(parse_postgresql_conf)
{
        /* As initdb writes it, with the edits a DBA makes. */
        static const char text[] =
                "# -----------------------------\n"
                "# PostgreSQL configuration file\n"
                "\n"
                "data_directory = '/var/lib/postgresql/15/main'\t\t# use data in another directory\n"
                "max_connections = 100\t\t\t# (change requires restart)\n"
                "shared_buffers = 128MB\t\t\t# min 128kB\n"
                "#huge_pages = try\t\t\t# on, off, or try\n"
                "huge_pages=on\n"
                "dynamic_shared_memory_type = posix\n"
                "log_line_prefix = '%m [%p] %q%u@%d '\t\t# special values:\n"
                "search_path = '\"$user\", public'\n"
                "escaped = 'it''s \\'here\\''\n"
                "include_dir = 'conf.d'\n"
                "include_if_exists 'local.conf'\n";
        struct ng_pg_conf_item *v;
        size_t n;
        unsigned bad = 0;
        ck_assert_int_eq(ng_pg_conf_parse(text, sizeof(text) - 1, &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 10);
        ck_assert_str_eq(v[0].name, "data_directory");
        ck_assert_str_eq(v[0].value, "/var/lib/postgresql/15/main");
        ck_assert_uint_eq(v[0].line, 4);
        ck_assert_str_eq(v[2].value, "128MB");
        ck_assert_str_eq(v[3].name, "huge_pages");
        ck_assert_str_eq(v[3].value, "on");
        ck_assert_uint_eq(v[3].line, 8);
        ck_assert_str_eq(v[5].value, "%m [%p] %q%u@%d ");
        ck_assert_str_eq(v[6].value, "\"$user\", public");
        ck_assert_str_eq(v[7].value, "it's 'here'");
        ck_assert_str_eq(v[8].name, "include_dir");
        ck_assert_str_eq(v[9].name, "include_if_exists");
        ck_assert_str_eq(v[9].value, "local.conf");
        free(v);

        /* A line the server would refuse fails the file, with its line. */
        static const char *const bad_texts[] = {
                "shared_buffers = 128MB\nhuge pages = on\n",    /* two words, then a third */
                "a = 'unterminated\nb = 1\n",
                "= on\n",
                "x =\n",
                "x = 1 2\n",
        };
        static const unsigned bad_lines[] = { 2, 1, 1, 1, 1 };
        for (size_t i = 0; i < ELEMENTSOF(bad_texts); i++) {
                v = NULL;
                ck_assert_int_eq(ng_pg_conf_parse(bad_texts[i], strlen(bad_texts[i]), &v, &n, &bad), -EINVAL);
                ck_assert_uint_eq(bad, bad_lines[i]);
                ck_assert_ptr_null(v);
        }
        /* A NUL inside the text, a name or value beyond the bounds. */
        ck_assert_int_eq(ng_pg_conf_parse("a = 1\0b = 2\n", 12, &v, &n, &bad), -EINVAL);
        char big[700];
        memset(big, 'x', sizeof(big));
        memcpy(big, "a = ", 4);
        ck_assert_int_eq(ng_pg_conf_parse(big, sizeof(big), &v, &n, &bad), -EINVAL);
        ck_assert_int_eq(ng_pg_conf_parse("", 0, &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 0);
        free(v);
}
END_TEST

START_TEST(settings_and_units)
{
        struct ng_db_settings s = {0};
        ck_assert_int_eq(ng_pg_setting_apply(&s, "huge_pages", "TRY", "f:1"), 0);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_TRY);
        ck_assert_str_eq(s.huge_pages_from, "f:1");
        ck_assert_int_eq(ng_pg_setting_apply(&s, "huge_pages", "yes", "f:2"), 0);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_ON);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "huge_pages", "0", "f:3"), 0);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_OFF);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "huge_pages", "maybe", "f:4"), -EINVAL);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_OFF);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_memory_type", "sysv", "f:5"), 0);
        ck_assert(s.shm_sysv);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_memory_type", "windows", "f:6"), -EINVAL);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_buffers", "16384", "f:7"), 0);
        ck_assert_uint_eq(s.shared_buffers_bytes, 16384 * 8192);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_buffers", "2GB", "f:8"), 0);
        ck_assert_uint_eq(s.shared_buffers_bytes, 2 * GiB);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_buffers", "2gb", "f:9"), -EINVAL);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_buffers", "99999999999999999999", "f:9"), -ERANGE);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "shared_buffers", "99999999TB", "f:9"), -ERANGE);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "huge_page_size", "1GB", "f:10"), 0);
        ck_assert_uint_eq(s.huge_page_size_kib, 1048576);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "huge_page_size", "2048", "f:11"), 0);
        ck_assert_uint_eq(s.huge_page_size_kib, 2048);
        ck_assert_int_eq(ng_pg_setting_apply(&s, "work_mem", "anything", "f:12"), 0);

        /* The command line comes last and wins. */
        struct ng_db_settings c = { .huge_pages = NG_HUGE_OFF };
        char cf[256];
        ng_pg_cmdline_apply(&c, "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main "
                            "-c config_file=/etc/postgresql/15/main/postgresql.conf -c huge_pages=try -B 1000 "
                            "--shared-memory-type=sysv", cf, sizeof(cf));
        ck_assert_str_eq(cf, "/etc/postgresql/15/main/postgresql.conf");
        ck_assert_int_eq(c.huge_pages, NG_HUGE_TRY);
        ck_assert_str_eq(c.huge_pages_from, "command line");
        ck_assert_uint_eq(c.shared_buffers_bytes, 1000 * 8192);
        ck_assert(c.shm_sysv);
        char dd[64];
        ng_pg_cmdline_datadir("/usr/lib/postgresql/15/bin/postgres -D /srv/pg -k /tmp", dd, sizeof(dd));
        ck_assert_str_eq(dd, "/srv/pg");
        ng_pg_cmdline_datadir("postgres --pgdata=/srv/pg2", dd, sizeof(dd));
        ck_assert_str_eq(dd, "/srv/pg2");
        ng_pg_cmdline_datadir("postgres -D data", dd, sizeof(dd));
        ck_assert_str_eq(dd, "");
}
END_TEST

START_TEST(snapshot_keeps_only_what_it_reads)
{
        static const char text[] = "# comment: #primary_conninfo = 'password=old'\n"
                                   "shared_buffers = 128MB\n"
                                   "primary_conninfo = 'host=db1 password=s3cret'\n"
                                   "\n"
                                   "  huge_pages=on # trailing\n"
                                   "huge_pages_x = 1\n"
                                   "include_dir 'conf.d'";
        char *out;
        size_t len;
        ck_assert_int_eq(ng_db_conf_redact(text, sizeof(text) - 1, &out, &len), 0);
        ck_assert_str_eq(out, "#\nshared_buffers = 128MB\n#\n\n  huge_pages=on # trailing\n#\ninclude_dir 'conf.d'");
        ck_assert_uint_eq(len, strlen(out));
        ck_assert_ptr_null(strstr(out, "s3cret"));
        /* The redacted text parses to the same settings, on the same lines. */
        struct ng_pg_conf_item *v;
        size_t n;
        unsigned bad;
        ck_assert_int_eq(ng_pg_conf_parse(out, len, &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(v[1].name, "huge_pages");
        ck_assert_uint_eq(v[1].line, 5);
        free(v);
        free(out);
        ck_assert(ng_db_conf_path("/proc/123/cwd/postgresql.conf"));
        ck_assert(ng_db_conf_path("/proc/123/root/etc/postgresql/15/main/postgresql.conf"));
        ck_assert(!ng_db_conf_path("/proc/123/status"));
        ck_assert(!ng_db_conf_path("/proc/sysvipc/shm"));
        ck_assert(!ng_db_conf_path("/etc/cgconfig.conf"));
}
END_TEST

/* ---- rehearsals ---- */

/* Drops pr's maps (to map its segment again another way). */
static void drop_maps(struct ng_proc *pr)
{
        for (size_t i = 0; i < pr->n_maps; i++)
                free(pr->maps[i].path);
        free(pr->maps);
        pr->maps = NULL;
        pr->n_maps = 0;
}

static struct ng_config *conf(const char *text)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string(text, "test.conf", NULL, NULL, &c), 0);
        return c;
}

static void set_pool(struct ng_snapshot *s, int node, uint64_t nr, uint64_t free_pages)
{
        struct ng_hugepool *hp = &s->topo.nodes[node].pools[0];
        s->pools[0].nr_pages += nr - hp->nr_pages;
        s->pools[0].free_pages += free_pages - hp->free_pages;
        hp->nr_pages = nr;
        hp->free_pages = free_pages;
}

/* A discovered PostgreSQL (postmaster 200, CPUs and memory nodes 0-1 of a
 * 2-node host) whose main segment is a 66 MiB 4 KiB-page segment (33
 * pages of 2 MiB), its configuration saying huge_pages = hp. */
static struct ng_snapshot *pg(enum ng_huge_setting hp)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        snap_shm(s, 3, 66 * MiB, 2, 0);
        struct ng_proc *pm = snap_proc(s, 200, 1, "postgres", "0-1", "0-1");
        free(pm->cmdline);
        pm->cmdline = strdup("/usr/lib/postgresql/15/bin/postgres -D /srv/pg");
        snap_map_sysv(pm, 3, 0x7f0000000000, 66 * MiB, 4, NULL, 0);
        struct ng_proc *b = snap_proc(s, 201, 200, "postgres", "0-1", "0-1");
        snap_map_sysv(b, 3, 0x7f0000000000, 66 * MiB, 4, NULL, 0);
        s->db_settings = xcalloc(1, sizeof(*s->db_settings));
        s->n_db_settings = 1;
        s->db_settings[0] = (struct ng_db_settings) { .pid = 200, .huge_pages = hp, .files = 2 };
        snprintf(s->db_settings[0].huge_pages_from, sizeof(s->db_settings[0].huge_pages_from),
                 "/srv/pg/postgresql.auto.conf:3");
        return s;
}

static struct ng_rehearsal rehearse_with(const struct ng_snapshot *s, const char *cfg, const char *name,
                                          struct ng_audit **ret_a)
{
        struct ng_config *c = conf(cfg);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_instance *in = ng_audit_instance(a, name);
        ck_assert_ptr_nonnull(in);
        struct ng_rehearsal r;
        ck_assert_int_eq(ng_rehearse(s, a, in, &r), 0);
        ng_config_free(c);
        if (ret_a)
                *ret_a = a;
        else
                ng_audit_free(a);
        return r;
}

static struct ng_rehearsal rehearse(const struct ng_snapshot *s, struct ng_audit **ret_a)
{
        return rehearse_with(s, "", "postgresql:/srv/pg", ret_a);
}

static const struct ng_finding *next_start(const struct ng_audit *a)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_HUGEPAGE_NEXT_START)
                        return &a->findings[i];
        return NULL;
}

START_TEST(reservation_fits_or_falls_back)
{
        /* 33 pages needed: 32 free is a fallback under try, no start under
         * on; 33 (17 + 16) is hugepages from both nodes. */
        struct ng_snapshot *s = pg(NG_HUGE_TRY);
        set_pool(s, 0, 16, 16);
        set_pool(s, 1, 16, 16);
        struct ng_audit *a;
        struct ng_rehearsal r = rehearse(s, &a);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_SMALL);
        ck_assert_uint_eq(r.pages, 33);
        ck_assert_uint_eq(r.avail_pages, 32);
        ck_assert_str_eq(r.setting_value, "try");
        ck_assert_str_eq(r.setting_from, "/srv/pg/postgresql.auto.conf:3");
        ck_assert_msg(strstr(r.why, "33 2M pages are reserved at once and the pool has 32 free"), "%s", r.why);
        ck_assert_msg(strstr(r.fix, "reserve 1 more 2M pages"), "%s", r.fix);
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 1);
        const struct ng_finding *f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ng_audit_free(a);

        s->db_settings[0].huge_pages = NG_HUGE_ON;
        r = rehearse(s, &a);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_NO_START);
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 2);
        f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ng_audit_free(a);

        /* Another process's reservation is not free for it. */
        set_pool(s, 0, 17, 17);
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert(ng_bitmap_count(&r.from_nodes) == 2);
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 0);
        s->pools[0].resv_pages = 1;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_NO_START);
        /* Surplus pages the kernel may make cover the last one. */
        s->pools[0].overcommit_pages = 1;
        mi_set(&s->topo.nodes[0].meminfo, "MemFree", GiB / 1024);
        s->topo.nodes[0].has_meminfo = true;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert_uint_eq(r.surplus_pages, 1);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(setting_off_and_sysv)
{
        struct ng_snapshot *s = pg(NG_HUGE_OFF);
        struct ng_audit *a;
        struct ng_rehearsal r = rehearse(s, &a);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_OFF);
        ck_assert_ptr_null(next_start(a));
        ng_audit_free(a);
        s->db_settings[0].huge_pages = NG_HUGE_UNSET;
        s->db_settings[0].shm_sysv = true;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_OFF);
        ck_assert_str_eq(r.setting_value, "try");
        ck_assert_str_eq(r.setting_from, "the default");
        s->db_settings[0].huge_pages = NG_HUGE_ON;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_NO_START);
        ck_assert_ptr_nonnull(strstr(r.fix, "shared_memory_type = mmap"));
        ng_snapshot_free(s);
}
END_TEST

START_TEST(cpuset_and_bind_policy_narrow_the_reservation)
{
        /* 40 free on node 0, none on node 1; the cgroup keeps mems 1: the
         * kernel reserves only what the nodes the reserving task may use
         * hold (hugetlb_acct_memory), so it falls back, as the guest's
         * real starts show. */
        struct ng_snapshot *s = pg(NG_HUGE_TRY);
        set_pool(s, 0, 40, 40);
        set_pool(s, 1, 0, 0);
        struct ng_rehearsal r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert(ng_bitmap_test(&r.from_nodes, 0) && ng_bitmap_count(&r.from_nodes) == 1);
        /* From node 0 alone while its CPUs span 0-1: a cyclops start. */
        ck_assert(r.cyclops);
        ck_assert_int_eq(r.cyclops_node, 0);
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 1);

        struct ng_cgroup *cg = snap_cgroup(s, "/pg", "0-1", "1");
        for (size_t i = 0; i < s->n_procs; i++)
                snap_proc_cgroup(s->procs[i], "/pg");
        struct ng_audit *a;
        r = rehearse(s, &a);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_SMALL);
        ck_assert(ng_bitmap_test(&r.nodes, 1) && ng_bitmap_count(&r.nodes) == 1);
        ck_assert_msg(strstr(r.why, "reserves them only when the nodes it may use hold them, and node 1 holds 0"),
                      "%s", r.why);
        ck_assert_msg(strstr(r.binding, "cpuset.mems 1 of cgroup /pg"), "%s", r.binding);
        const struct ng_finding *f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ng_audit_free(a);
        s->db_settings[0].huge_pages = NG_HUGE_ON;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_NO_START);
        s->db_settings[0].huge_pages = NG_HUGE_TRY;

        /* The unit that owns it restores mems 0 at its start: hugepages. */
        cg->owner = (struct ng_owner) { .kind = NG_OWNER_SYSTEMD, .known = true, .has_mems = true };
        snprintf(cg->owner.name, sizeof(cg->owner.name), "pg.service");
        bm(&cg->owner.mems, "0");
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert_msg(strstr(r.binding, "as systemd pg.service restores it"), "%s", r.binding);

        /* A bind policy to node 1 on the postmaster's segment: SIGBUS again. */
        struct ng_proc *pm = s->procs[0];
        static const struct ng_node_pages none[] = { { 0, 0 } };
        drop_maps(pm);
        snap_map_sysv(pm, 3, 0x7f0000000000, 66 * MiB, 4, none, 1);
        pm->numa_maps[0].policy = NG_MPOL_BIND;
        free(pm->numa_maps[0].policy_nodes);
        pm->numa_maps[0].policy_nodes = strdup("1");
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_SMALL);
        ck_assert_msg(strstr(r.binding, "policy bind:1"), "%s", r.binding);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(hugetlb_cgroup_limits)
{
        /* The pools hold it (40 free on node 0), its cgroup /pg (memory
         * nodes 0-1) has hugetlb limits of its own. */
        struct ng_snapshot *s = pg(NG_HUGE_TRY);
        set_pool(s, 0, 40, 40);
        struct ng_cgroup *cg = snap_cgroup(s, "/pg", "0-1", "0-1");
        for (size_t i = 0; i < s->n_procs; i++)
                snap_proc_cgroup(s->procs[i], "/pg");
        struct ng_rehearsal r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        /* hugetlb.2MB.max of 20 MiB: reserved, but only 10 pages may be
         * faulted (as a pod's hugepage limit without rsvd.max). */
        cg->n_hugetlb_limit = 1;
        cg->hugetlb_limit[0].page_kib = 2048;
        cg->hugetlb_limit[0].known = true;
        cg->hugetlb_limit[0].max_bytes = 20 * MiB;
        r = rehearse(s, NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_SIGBUS, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "lets it fault 10 of them (hugetlb.2MB.max"), "%s", r.why);
        ck_assert_msg(strstr(r.fix, "raise hugetlb.2MB.max of cgroup /pg by 23 pages"), "%s", r.fix);
        /* With rsvd.max as well, the reservation fails first: 4 KiB pages. */
        cg->hugetlb_limit[0].rsvd_known = true;
        cg->hugetlb_limit[0].rsvd_max_bytes = 20 * MiB;
        r = rehearse(s, NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_SMALL, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "reserve 10 more (hugetlb.2MB.rsvd.max)"), "%s", r.why);
        /* "max" is no limit. */
        cg->hugetlb_limit[0].max_bytes = cg->hugetlb_limit[0].rsvd_max_bytes = UINT64_MAX;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(memory_cgroup_charged_hugetlb)
{
        /* The pools hold it (40 free on node 0); its cgroup /pg has
         * memory.max 100 MiB and holds 30 MiB, none of it hugetlb. Its 33
         * pages (66 MiB) are charged to it at their first touch only where
         * the cgroup2 mount has memory_hugetlb_accounting. */
        struct ng_snapshot *s = pg(NG_HUGE_TRY);
        set_pool(s, 0, 40, 40);
        struct ng_cgroup *cg = snap_cgroup(s, "/pg", "0-1", "0-1");
        for (size_t i = 0; i < s->n_procs; i++)
                snap_proc_cgroup(s->procs[i], "/pg");
        snap_cgroup_memory(cg, 100 * MiB, 30 * MiB, 0);
        snap_cgroup2_mount(s, "rw,nsdelegate");
        struct ng_rehearsal r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert_ptr_null(strstr(r.why, "memory.max"));
        free(s->mounts[0].super_options);
        s->mounts[0].super_options = strdup("rw,nsdelegate,memory_hugetlb_accounting");
        /* 70 MiB free below the limit: room for the 66 MiB */
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert_ptr_null(strstr(r.why, "memory.max"));
        /* 60 MiB free: the touches first reclaim 6 MiB of the rest */
        cg->memory.current_bytes = 40 * MiB;
        r = rehearse(s, NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "cgroup /pg, charged its hugetlb faults, has 60 MiB free below memory.max: the "
                             "touches first reclaim 6 MiB of its other memory"), "%s", r.why);
        /* 50 MiB of hugetlb another process of it faulted: 66 MiB can never
         * fit below 100 MiB, whatever is reclaimed */
        cg->memory.current_bytes = 60 * MiB;
        cg->memory.hugetlb_bytes = 50 * MiB;
        struct ng_audit *a;
        r = rehearse(s, &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_FAULT_STALL, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_str_eq(ng_rehearse_outcome_name(r.outcome), "fault-stall");
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 2);
        ck_assert_msg(strstr(r.why, "charged at first touch to cgroup /pg (memory_hugetlb_accounting), whose "
                             "memory.max of 100 MiB leaves them 50 MiB beside its hugetlb, 16 MiB short"), "%s", r.why);
        ck_assert_ptr_nonnull(strstr(r.why, "VM_FAULT_OOM, not SIGBUS"));
        ck_assert_msg(strstr(r.fix, "raise memory.max of cgroup /pg by 16 MiB"), "%s", r.fix);
        const struct ng_finding *f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ck_assert_ptr_nonnull(strstr(f->message, "would stall at a first touch"));
        ng_audit_free(a);
        /* no limit: nothing bounds it */
        cg->memory.max_bytes = UINT64_MAX;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        /* the memory files not read: said so, not taken for room */
        cg->memory.known = false;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_HUGE);
        ck_assert_msg(strstr(r.why, "charged to its memory cgroup (memory_hugetlb_accounting), whose memory.max "
                             "could not be read"), "%s", r.why);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(confined_reservations_make_sigbus)
{
        /* Node 1 holds 33 free pages, what it needs, and node 0 the 16 more
         * that keep the global count whole, so the kernel reserves them;
         * but another instance confined to node 1 has 16 reserved pages it
         * has not faulted yet: whoever touches last dies. */
        struct ng_snapshot *s = pg(NG_HUGE_TRY);
        set_pool(s, 0, 16, 16);
        set_pool(s, 1, 33, 33);
        for (size_t i = 0; i < s->n_procs; i++) {
                ng_idset_done(&s->procs[i]->status.mems_allowed);
                idset(&s->procs[i]->status.mems_allowed, "1");
        }
        snap_shm(s, 9, 32 * MiB, 1, 0);
        s->shm[1].rss_bytes = 0;
        s->pools[0].resv_pages = 16;
        struct ng_proc *o = snap_proc(s, 300, 1, "otherdb", "1", "1");
        static const struct ng_node_pages none[] = { { 1, 0 } };
        snap_map_sysv(o, 9, 0x7f2000000000, 32 * MiB, 2048, none, 1);
        static const char cfg[] = "[instance pg]\nmatch_comm = postgres\n[instance other]\nmatch_comm = otherdb\n";
        struct ng_audit *a;
        struct ng_rehearsal r = rehearse_with(s, cfg, "pg", &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_SIGBUS, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.free_on_nodes, 17);
        ck_assert_ptr_nonnull(strstr(r.why, "first touch beyond them fails (SIGBUS, or a short read"));
        const struct ng_finding *f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ng_audit_free(a);
        /* The same when the other segment belongs to no instance (below
         * min_segment_size): its reservation takes pages all the same. */
        r = rehearse_with(s, "[instance pg]\nmatch_comm = postgres\n", "pg", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_SIGBUS, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(own_pages_come_back_and_unknowns)
{
        /* Running in hugepages now: its 33 pages (20 faulted on node 0, 13
         * reserved) are all the pool has in use; once it stops they are
         * free again, so the same start fits. */
        struct ng_snapshot *s = pg(NG_HUGE_ON);
        s->shm[0].rss_bytes = 40 * MiB;
        s->procs[0]->maps[0].dev_minor = 15;
        set_pool(s, 0, 33, 13);
        set_pool(s, 1, 0, 0);
        s->pools[0].resv_pages = 13;
        drop_maps(s->procs[0]);
        static const struct ng_node_pages on0[] = { { 0, 20 } };
        snap_map_sysv(s->procs[0], 3, 0x7f0000000000, 66 * MiB, 2048, on0, 1);
        struct ng_rehearsal r = rehearse(s, NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.avail_pages, 33);
        ng_snapshot_free(s);

        /* Its configuration unreadable or not read: unknown, said why. */
        s = pg(NG_HUGE_TRY);
        s->db_settings[0].error = -EACCES;
        snprintf(s->db_settings[0].error_path, sizeof(s->db_settings[0].error_path), "/srv/pg/postgresql.conf");
        struct ng_audit *a;
        r = rehearse(s, &a);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_UNKNOWN);
        ck_assert_ptr_nonnull(strstr(r.why, "/srv/pg/postgresql.conf: Permission denied"));
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 3);
        ck_assert_ptr_null(next_start(a));
        ng_audit_free(a);
        s->n_db_settings = 0;
        r = rehearse(s, NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_UNKNOWN);
        ck_assert_ptr_nonnull(strstr(r.why, "not read"));
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("rehearse");
        TCase *tc = tcase_create("rehearse");
        tcase_add_test(tc, parse_postgresql_conf);
        tcase_add_test(tc, settings_and_units);
        tcase_add_test(tc, snapshot_keeps_only_what_it_reads);
        tcase_add_test(tc, reservation_fits_or_falls_back);
        tcase_add_test(tc, setting_off_and_sysv);
        tcase_add_test(tc, cpuset_and_bind_policy_narrow_the_reservation);
        tcase_add_test(tc, confined_reservations_make_sigbus);
        tcase_add_test(tc, hugetlb_cgroup_limits);
        tcase_add_test(tc, memory_cgroup_charged_hugetlb);
        tcase_add_test(tc, own_pages_come_back_and_unknowns);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

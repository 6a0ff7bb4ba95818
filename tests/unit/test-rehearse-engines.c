/* The rehearsal of MariaDB's and Oracle's next start on literal snapshots
 * at the boundary of each outcome: MariaDB's buffer pool in hugepages or
 * falling back, each of the host's page sizes tried from the largest, a
 * server whose mapped size cannot be told; Oracle's SGA in hugepages,
 * partly in 4 KiB pages (use_large_pages TRUE), no start (ONLY), 4 KiB
 * pages by setting (FALSE, memory_target), sized by its running SysV
 * segments or its settings. */

#include "snapshot-builder.h"
#include "dbconf.h"
#include "util.h"
#include "ng-audit.h"
#include "ng-config.h"
#include "ng-rehearse.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static void set_pool(struct ng_snapshot *s, size_t pool, int node, uint64_t nr, uint64_t free_pages)
{
        struct ng_hugepool *hp = &s->topo.nodes[node].pools[pool];
        s->pools[pool].nr_pages += nr - hp->nr_pages;
        s->pools[pool].free_pages += free_pages - hp->free_pages;
        hp->nr_pages = nr;
        hp->free_pages = free_pages;
}

static struct ng_rehearsal rehearse(const struct ng_snapshot *s, const char *cfg, const char *name,
                                    struct ng_audit **ret_a)
{
        struct ng_config *c;
        ck_assert_int_eq(ng_config_load_string(cfg, "test.conf", NULL, NULL, &c), 0);
        struct ng_audit *a;
        ck_assert_int_eq(ng_audit_run(s, c, &a), 0);
        const struct ng_instance *in = ng_audit_instance(a, name);
        ck_assert_msg(in != NULL, "no instance %s", name);
        struct ng_rehearsal r;
        ck_assert_int_eq(ng_rehearse(s, a, in, &r), 0);
        ng_config_free(c);
        if (ret_a)
                *ret_a = a;
        else
                ng_audit_free(a);
        return r;
}

static const struct ng_finding *next_start(const struct ng_audit *a)
{
        for (size_t i = 0; i < a->n_findings; i++)
                if (a->findings[i].code == NG_CODE_HUGEPAGE_NEXT_START)
                        return &a->findings[i];
        return NULL;
}

/* ---- MariaDB ---- */

static const char my_cfg[] = "[instance my]\nmatch_comm = mariadbd\n";

/* mariadbd (pid 400) on a 2-node host with pools of 2 MiB and 1 GiB pages
 * (none yet), its configuration saying large_pages = ON and a 64 MiB
 * buffer pool: 32 pages of 2 MiB. */
static struct ng_snapshot *mariadb(void)
{
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        snap_pool(s, 1048576, 0, 0, 0);
        struct ng_proc *pr = snap_proc(s, 400, 1, "mariadbd", "0-1", "0-1");
        free(pr->cmdline);
        pr->cmdline = strdup("/usr/sbin/mariadbd --datadir=/var/lib/mysql");
        pr->status.vm_size_kib = 1500000;
        s->db_settings = xcalloc(1, sizeof(*s->db_settings));
        s->n_db_settings = 1;
        struct ng_db_settings *d = &s->db_settings[0];
        *d = (struct ng_db_settings) { .pid = 400, .kind = NG_DB_CONF_MARIADB, .huge_pages = NG_HUGE_TRY,
                                       .size_bytes = 64 * MiB, .files = 3 };
        snprintf(d->huge_pages_word, sizeof(d->huge_pages_word), "ON");
        snprintf(d->huge_pages_from, sizeof(d->huge_pages_from), "/etc/mysql/mariadb.conf.d/60-huge.cnf:2");
        snprintf(d->size_from, sizeof(d->size_from), "innodb_buffer_pool_size, /etc/mysql/mariadb.conf.d/60-huge.cnf:3");
        return s;
}

START_TEST(mariadb_pool_or_fallback)
{
        struct ng_snapshot *s = mariadb();
        set_pool(s, 0, 0, 20, 20);
        set_pool(s, 0, 1, 20, 20);
        struct ng_audit *a;
        struct ng_rehearsal r = rehearse(s, my_cfg, "my", &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.pages, 32);
        ck_assert_uint_eq(r.page_kib, 2048);
        ck_assert_uint_eq(r.bytes, 64 * MiB);
        ck_assert_str_eq(r.setting_name, "large_pages");
        ck_assert_str_eq(r.setting_value, "ON");
        ck_assert_str_eq(r.size_from, "innodb_buffer_pool_size, /etc/mysql/mariadb.conf.d/60-huge.cnf:3");
        ck_assert_ptr_null(next_start(a));
        ng_audit_free(a);

        /* 10 free a node: 20 < 32, and no 1 GiB page fits a 64 MiB pool */
        set_pool(s, 0, 0, 10, 10);
        set_pool(s, 0, 1, 10, 10);
        r = rehearse(s, my_cfg, "my", &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_SMALL, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "its 32 2M pages are reserved at once and the pool has 20 free"), "%s", r.why);
        ck_assert_msg(strstr(r.why, "MariaDB maps its buffer pool in 4 KiB pages"), "%s", r.why);
        ck_assert_msg(strstr(r.why, "chunks (innodb_buffer_pool_chunk_size)"), "%s", r.why);
        ck_assert_msg(strstr(r.fix, "reserve 12 more 2M pages"), "%s", r.fix);
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 1);
        const struct ng_finding *f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ng_audit_free(a);

        /* large_pages OFF, or not set (its default): as asked */
        s->db_settings[0].huge_pages = NG_HUGE_OFF;
        snprintf(s->db_settings[0].huge_pages_word, sizeof(s->db_settings[0].huge_pages_word), "OFF");
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_OFF);
        s->db_settings[0].huge_pages = NG_HUGE_UNSET;
        s->db_settings[0].huge_pages_word[0] = '\0';
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_OFF);
        ck_assert_str_eq(r.setting_value, "OFF");
        ck_assert_str_eq(r.setting_from, "the default");
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 0);

        /* No innodb_buffer_pool_size: 128 MiB, 64 pages */
        s->db_settings[0].huge_pages = NG_HUGE_TRY;
        s->db_settings[0].size_bytes = 0;
        s->db_settings[0].size_from[0] = '\0';
        set_pool(s, 0, 0, 40, 40);
        set_pool(s, 0, 1, 24, 24);
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.pages, 64);
        ck_assert_str_eq(r.size_from, "innodb_buffer_pool_size, the default");
        /* exactly what it needs, and fewer than the pages a newer server
         * may add to align the pool: said so */
        ck_assert_msg(strstr(r.why, "may map up to 3 more pages to align the pool to 8 MiB, and 0 are spare"), "%s",
                      r.why);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(mariadb_page_sizes_from_the_largest)
{
        /* A 2 GiB pool: 1 GiB pages first (2 of them), else 2 MiB ones. */
        struct ng_snapshot *s = mariadb();
        s->db_settings[0].size_bytes = 2 * GiB;
        set_pool(s, 1, 0, 1, 1);
        set_pool(s, 1, 1, 1, 1);
        set_pool(s, 0, 0, 600, 600);
        set_pool(s, 0, 1, 600, 600);
        struct ng_rehearsal r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.page_kib, 1048576);
        ck_assert_uint_eq(r.pages, 2);
        /* one 1 GiB page short: the mmap fails, and the 2 MiB pool holds it */
        set_pool(s, 1, 1, 0, 0);
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.page_kib, 2048);
        ck_assert_uint_eq(r.pages, 1024);
        /* neither: the reasoning of the default size, both tried */
        set_pool(s, 0, 1, 100, 100);
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_SMALL, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.page_kib, 2048);
        ck_assert_msg(strstr(r.why, "tries each of the host's 2 page sizes"), "%s", r.why);
        ck_assert_msg(strstr(r.fix, "reserve 324 more 2M pages"), "%s", r.fix);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(mariadb_reserved_address_space)
{
        /* A server that reserves terabytes for its pool maps
         * innodb_buffer_pool_size_max: unset, which size it maps cannot be
         * told. */
        struct ng_snapshot *s = mariadb();
        set_pool(s, 0, 0, 20, 20);
        set_pool(s, 0, 1, 20, 20);
        s->procs[0]->status.vm_size_kib = UINT64_C(8591512204);
        struct ng_rehearsal r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_UNKNOWN, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "innodb_buffer_pool_size_max is not set"), "%s", r.why);
        ck_assert_str_eq(r.fix, "set innodb_buffer_pool_size_max to innodb_buffer_pool_size");
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 3);
        snprintf(s->db_settings[0].size_from, sizeof(s->db_settings[0].size_from),
                 "innodb_buffer_pool_size_max, /etc/mysql/my.cnf:9");
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        /* what its files could not tell */
        snprintf(s->db_settings[0].unknown, sizeof(s->db_settings[0].unknown), "large_pages is set in group "
                 "[mariadb-10.6]");
        r = rehearse(s, my_cfg, "my", NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_UNKNOWN);
        ck_assert_str_eq(r.why, "large_pages is set in group [mariadb-10.6]");
        ng_snapshot_free(s);
}
END_TEST

/* ---- Oracle ---- */

/* ora_pmon_ORCL (500) and ora_dbw0_ORCL (501) on a 2-node host, attached
 * to the four SysV segments of an Oracle 12c-style SGA (a variable part of
 * 8 MiB, the main one of 52 MiB, the redo buffers' 6 MiB, a keyed 20 KiB
 * one) in 4 KiB pages: 4 + 26 + 3 + 1 = 34 pages of 2 MiB. */
static struct ng_snapshot *oracle(void)
{
        static const uint64_t sizes[] = { 8 * MiB, 52 * MiB, 6 * MiB, 20480 };
        struct ng_snapshot *s = snap_new(2, 1, 2, 21, 16 * GiB / 1024);
        snap_pool(s, 2048, 0, 0, 0);
        struct ng_proc *pmon = snap_proc(s, 500, 1, "ora_pmon_ORCL", "0-1", "0-1");
        struct ng_proc *dbw = snap_proc(s, 501, 1, "ora_dbw0_ORCL", "0-1", "0-1");
        uint64_t at = 0x60000000;
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                static const struct ng_node_pages none[] = { { 0, 0 } };
                snap_shm(s, (int32_t) (7 + i), sizes[i], 2, 0);
                snap_map_sysv(pmon, (int32_t) (7 + i), at, sizes[i], 4, none, 1);
                snap_map_sysv(dbw, (int32_t) (7 + i), at, sizes[i], 4, NULL, 0);
                at += 64 * MiB;
        }
        s->db_settings = xcalloc(1, sizeof(*s->db_settings));
        s->n_db_settings = 1;
        s->db_settings[0] = (struct ng_db_settings) { .pid = 500, .kind = NG_DB_CONF_ORACLE, .files = 1 };
        return s;
}

static void oracle_setting(struct ng_snapshot *s, enum ng_huge_setting h, const char *word, bool automatic)
{
        struct ng_db_settings *d = &s->db_settings[0];
        d->huge_pages = h;
        d->huge_auto = automatic;
        snprintf(d->huge_pages_word, sizeof(d->huge_pages_word), "%s", word);
        snprintf(d->huge_pages_from, sizeof(d->huge_pages_from), "/u01/app/oracle/product/19c/dbs/spfileORCL.ora:12");
}

START_TEST(oracle_true_only_false)
{
        struct ng_snapshot *s = oracle();
        set_pool(s, 0, 0, 20, 20);
        set_pool(s, 0, 1, 20, 20);
        struct ng_audit *a;
        struct ng_rehearsal r = rehearse(s, "", "oracle:ORCL", &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_HUGE, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.pages, 34);
        ck_assert_uint_eq(r.bytes, 66 * MiB + 20480);
        ck_assert_str_eq(r.setting_name, "use_large_pages");
        ck_assert_str_eq(r.setting_value, "TRUE");
        ck_assert_str_eq(r.setting_from, "the default");
        ck_assert_str_eq(r.size_from, "its running SGA, 4 SysV segments");
        ng_audit_free(a);

        /* 16 free: TRUE takes them and puts the rest in 4 KiB pages */
        set_pool(s, 0, 0, 8, 8);
        set_pool(s, 0, 1, 8, 8);
        r = rehearse(s, "", "oracle:ORCL", &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_PARTIAL, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.partial_pages, 16);
        ck_assert_msg(strstr(r.why, "16 of its 34 2M pages can be reserved"), "%s", r.why);
        ck_assert_msg(strstr(r.fix, "reserve 18 more 2M pages"), "%s", r.fix);
        ck_assert_int_eq(ng_rehearsal_exit_status(&r), 1);
        const struct ng_finding *f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_WARNING);
        ng_audit_free(a);

        /* ONLY: no start; AUTO: as TRUE, said that it asks for pages */
        oracle_setting(s, NG_HUGE_ON, "ONLY", false);
        r = rehearse(s, "", "oracle:ORCL", &a);
        ck_assert_msg(r.outcome == NG_REHEARSE_NO_START, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "ORA-27137"), "%s", r.why);
        ck_assert_str_eq(r.setting_value, "ONLY");
        f = next_start(a);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->severity, NG_SEV_CRITICAL);
        ng_audit_free(a);
        oracle_setting(s, NG_HUGE_PARTIAL, "AUTO", true);
        r = rehearse(s, "", "oracle:ORCL", NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_PARTIAL);
        ck_assert_msg(strstr(r.why, "use_large_pages = AUTO: Oracle asks the kernel for the pages it lacks"), "%s",
                      r.why);
        /* none free: all in 4 KiB pages */
        set_pool(s, 0, 0, 8, 0);
        set_pool(s, 0, 1, 8, 0);
        oracle_setting(s, NG_HUGE_PARTIAL, "TRUE", false);
        r = rehearse(s, "", "oracle:ORCL", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_SMALL, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.partial_pages, 0);

        oracle_setting(s, NG_HUGE_OFF, "FALSE", false);
        r = rehearse(s, "", "oracle:ORCL", &a);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_OFF);
        ck_assert_ptr_null(next_start(a));
        ng_audit_free(a);
        ng_snapshot_free(s);
}
END_TEST

START_TEST(oracle_amm_and_sizes)
{
        struct ng_snapshot *s = oracle();
        set_pool(s, 0, 0, 20, 20);
        set_pool(s, 0, 1, 20, 20);
        struct ng_db_settings *d = &s->db_settings[0];
        d->amm_bytes = 3 * GiB;
        snprintf(d->amm_from, sizeof(d->amm_from), "memory_target, /u01/dbs/initORCL.ora:7");
        struct ng_rehearsal r = rehearse(s, "", "oracle:ORCL", NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_OFF);
        ck_assert_msg(strstr(r.why, "memory_target, /u01/dbs/initORCL.ora:7 sets automatic memory management"),
                      "%s", r.why);
        oracle_setting(s, NG_HUGE_ON, "ONLY", false);
        r = rehearse(s, "", "oracle:ORCL", NULL);
        ck_assert_int_eq(r.outcome, NG_REHEARSE_NO_START);
        ck_assert_msg(strstr(r.fix, "memory_target"), "%s", r.fix);
        d->amm_bytes = 0;

        /* No running SGA (its segments gone): its settings size it */
        for (size_t i = 0; i < s->n_procs; i++) {
                for (size_t k = 0; k < s->procs[i]->n_maps; k++)
                        free(s->procs[i]->maps[k].path);
                s->procs[i]->n_maps = 0;
        }
        s->n_shm = 0;
        r = rehearse(s, "[instance ora]\nmatch_comm = ora_*_ORCL\n", "ora", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_UNKNOWN, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_msg(strstr(r.why, "sets neither sga_max_size nor sga_target"), "%s", r.why);
        d->size_bytes = 100 * MiB;
        snprintf(d->size_from, sizeof(d->size_from), "sga_target, /u01/dbs/spfileORCL.ora:9");
        r = rehearse(s, "[instance ora]\nmatch_comm = ora_*_ORCL\n", "ora", NULL);
        ck_assert_msg(r.outcome == NG_REHEARSE_NO_START, "%s: %s", ng_rehearse_outcome_name(r.outcome), r.why);
        ck_assert_uint_eq(r.pages, 50);
        ck_assert_str_eq(r.size_from, "sga_target, /u01/dbs/spfileORCL.ora:9");
        ck_assert_msg(strstr(r.fix, "reserve 10 more 2M pages"), "%s", r.fix);
        ng_snapshot_free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("rehearse-engines");
        TCase *tc = tcase_create("rehearse-engines");
        tcase_add_test(tc, mariadb_pool_or_fallback);
        tcase_add_test(tc, mariadb_page_sizes_from_the_largest);
        tcase_add_test(tc, mariadb_reserved_address_space);
        tcase_add_test(tc, oracle_true_only_false);
        tcase_add_test(tc, oracle_amm_and_sizes);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* The table of database engines: every row can be recognised one way and
 * named, and the lookups the collector, discovery, the rules and the
 * reports make find the right row and nothing else. */

#include "ng-test.h"
#include "engine.h"

static const struct ng_engine *by_name(const char *name)
{
        for (size_t i = 0; i < ng_n_engines; i++)
                if (!strcmp(ng_engines[i].name, name))
                        return &ng_engines[i];
        ck_abort_msg("no engine %s", name);
        return NULL;
}

START_TEST(rows_are_whole)
{
        ck_assert_uint_ge(ng_n_engines, 5);
        for (size_t i = 0; i < ng_n_engines; i++) {
                const struct ng_engine *e = &ng_engines[i];
                ck_assert_msg(e->name && *e->name && e->type && *e->type, "row %zu has no name or type", i);
                /* One way to recognise the main process: a SID or a family. */
                ck_assert_msg(!e->main_prefix != !e->family, "%s: neither or both of SID and family", e->name);
                if (e->main_prefix) {
                        ck_assert_ptr_nonnull(e->member_prefix);
                        ck_assert_msg(!strncmp(e->main_prefix, e->member_prefix, strlen(e->member_prefix)),
                                      "%s: the main process is not a member", e->name);
                } else {
                        ck_assert_msg(e->family[0] != NULL, "%s: empty family", e->name);
                        ck_assert_msg(e->dir_shortopt && e->dir_longopt, "%s: no option names it", e->name);
                }
                ck_assert_msg(!e->private_heap || e->family, "%s: a private heap needs a family", e->name);
                ck_assert_msg(!e->granule_prefix == !e->granules_label, "%s: granules without a label", e->name);
                for (size_t j = 0; j < i; j++)
                        ck_assert_str_ne(ng_engines[j].name, e->name);
        }
}
END_TEST

START_TEST(process_names)
{
        ck_assert_ptr_eq(ng_engine_of_process("ora_pmon_FIN_PROD"), by_name("oracle"));
        ck_assert_ptr_eq(ng_engine_of_process("ora_dbw0_FIN_PROD"), by_name("oracle"));
        ck_assert_ptr_eq(ng_engine_of_process("asm_pmon_+ASM"), by_name("asm"));
        ck_assert_ptr_eq(ng_engine_of_process("postgres"), by_name("postgresql"));
        ck_assert_ptr_eq(ng_engine_of_process("postmaster"), by_name("postgresql"));
        ck_assert_ptr_eq(ng_engine_of_process("mysqld"), by_name("mysql"));
        ck_assert_ptr_eq(ng_engine_of_process("mariadbd"), by_name("mysql"));
        ck_assert_ptr_eq(ng_engine_of_process("hdbindexserver"), by_name("hana"));
        /* Families are exact names; dedicated servers only by their SID. */
        ck_assert_ptr_null(ng_engine_of_process("postgres2"));
        ck_assert_ptr_null(ng_engine_of_process("mysql"));
        ck_assert_ptr_null(ng_engine_of_process("oracleFIN_PROD"));
        ck_assert_ptr_null(ng_engine_of_process(""));
        ck_assert(ng_engine_in_family(by_name("mysql"), "mariadbd"));
        ck_assert(!ng_engine_in_family(by_name("mysql"), "postgres"));
        ck_assert(!ng_engine_in_family(by_name("oracle"), "ora_pmon_X"));
}
END_TEST

START_TEST(what_engines_need)
{
        /* Oracle and ASM dlopen() libnuma.so; their instances are "oracle". */
        ck_assert_ptr_eq(ng_engine_needing_libnuma("oracle"), by_name("oracle"));
        ck_assert(by_name("asm")->needs_libnuma);
        ck_assert_ptr_null(ng_engine_needing_libnuma("postgresql"));
        ck_assert_ptr_null(ng_engine_needing_libnuma("configured"));
        /* InnoDB's buffer pool is private memory: mysqld and mariadbd only. */
        size_t heaps = 0;
        for (size_t i = 0; i < ng_n_engines; i++)
                for (const char *const *f = ng_engines[i].family; f && *f && ng_engines[i].private_heap; f++) {
                        ck_assert_msg(!strcmp(*f, "mysqld") || !strcmp(*f, "mariadbd"), "%s", *f);
                        heaps++;
                }
        ck_assert_uint_eq(heaps, 2);
        /* AMM granules: /dev/shm/ora_<SID>_<id>_<n>. */
        ck_assert_ptr_eq(ng_engine_of_granule("/dev/shm/ora_FIN_PROD_98304_0"), by_name("oracle"));
        ck_assert_str_eq(by_name("oracle")->granules_label, "Oracle AMM SGA");
        ck_assert_ptr_null(ng_engine_of_granule("/dev/shm/PostgreSQL.1234"));
        ck_assert_ptr_null(ng_engine_of_granule("/dev/hugepages/ora_x"));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("engine");
        TCase *tc = tcase_create("table");
        tcase_add_test(tc, rows_are_whole);
        tcase_add_test(tc, process_names);
        tcase_add_test(tc, what_engines_need);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

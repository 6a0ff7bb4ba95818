/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared machinery of the corrections (ng-action.h): a result, made
 * and freed by the library, its writes recorded up to NG_ACTION_MAX_WRITES;
 * an ops table read no further than its size says.
 */

#include <ftw.h>
#include <stddef.h>
#include <stdlib.h>

#include "cleanup.h"
#include "ng-act-cpuset.h"
#include "ng-act-hugepages.h"
#include "ng-act-rebalance.h"
#include "ng-test.h"

/* A kernel file that takes every write and reads back what was written. */
struct file {
        char value[64];
        size_t writes;
};

static int file_write(void *userdata, const struct ng_path *p, const char *path, const char *value)
{
        struct file *f = userdata;
        (void) p, (void) path;
        snprintf(f->value, sizeof(f->value), "%s", value);
        f->writes++;
        return 0;
}

static int file_read(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size)
{
        struct file *f = userdata;
        (void) p, (void) path;
        snprintf(buf, size, "%s\n", f->value);
        return 0;
}

START_TEST(result_new_reset_free)
{
        struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_ptr_nonnull(res);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DRY_RUN);
        ck_assert_ptr_null(res->writes);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert_int_eq(res->error, 0);
        ck_assert_str_eq(res->summary, "");

        struct file f = { .value = "0" };
        const struct ng_action_ops ops = { .size = sizeof(ops), .write = file_write, .read = file_read,
                                           .userdata = &f };
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, "/sys/x", "1"), 0);
        ck_assert_uint_eq(res->n_writes, 1);
        ck_assert_int_eq(res->writes[0].kind, NG_WRITE_FILE);
        ck_assert_str_eq(res->writes[0].path, "/sys/x");
        ck_assert_str_eq(res->writes[0].before, "0");
        ck_assert_str_eq(res->writes[0].after, "1");
        res->outcome = NG_OUTCOME_DONE;
        res->error = -EIO;
        res->check_refused = true;
        snprintf(res->summary, sizeof(res->summary), "done");

        /* emptied, its room kept */
        const struct ng_write *room = res->writes;
        ng_action_result_reset(res);
        ck_assert_int_eq(res->outcome, NG_OUTCOME_DRY_RUN);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert_int_eq(res->error, 0);
        ck_assert(!res->check_refused);
        ck_assert_str_eq(res->summary, "");
        ck_assert_ptr_eq(res->writes, room);
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, true, "/sys/y", "2"), 0);
        ck_assert_str_eq(res->writes[0].path, "/sys/y");
        ck_assert_str_eq(res->writes[0].after, "");     /* a dry run */

        ck_assert_ptr_null(ng_action_result_free(res));
        ck_assert_ptr_null(ng_action_result_free(NULL));
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *scoped = NULL;
        ck_assert_int_eq(ng_action_result_new(&scoped), 0);
}
END_TEST

/* Writes are recorded up to NG_ACTION_MAX_WRITES; the next one is refused
 * (-E2BIG) without being recorded or done, and is no error of the result. */
START_TEST(result_writes_grow_to_the_cap)
{
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        struct file f = { .value = "0" };
        const struct ng_action_ops ops = { .size = sizeof(ops), .write = file_write, .read = file_read,
                                           .userdata = &f };
        char path[32], value[16];
        for (int i = 0; i < NG_ACTION_MAX_WRITES; i++) {
                snprintf(path, sizeof(path), "/sys/node%d", i);
                snprintf(value, sizeof(value), "%d", i);
                ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, path, value), 0);
        }
        ck_assert_uint_eq(res->n_writes, NG_ACTION_MAX_WRITES);
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, "/sys/one-more", "64"), -E2BIG);
        ck_assert_uint_eq(res->n_writes, NG_ACTION_MAX_WRITES);
        ck_assert_uint_eq(f.writes, NG_ACTION_MAX_WRITES);
        ck_assert_int_eq(res->error, 0);
        for (int i = 0; i < NG_ACTION_MAX_WRITES; i++) {
                snprintf(path, sizeof(path), "/sys/node%d", i);
                snprintf(value, sizeof(value), "%d", i);
                ck_assert_str_eq(res->writes[i].path, path);
                ck_assert_str_eq(res->writes[i].after, value);
                ck_assert_str_eq(res->writes[i].before, i ? res->writes[i - 1].value : "0");
        }
}
END_TEST

static void no_sleep(void *userdata, uint64_t usec)
{
        (void) userdata, (void) usec;
}

/* Owner I/O past the end of a short table: never to be called. */
static int not_mine_replace(void *userdata, const struct ng_path *p, const char *path, const char *content)
{
        (void) userdata, (void) p, (void) path, (void) content;
        ck_abort_msg("a member past the table's size was called");
        return -EIO;
}

static int not_mine_reload(void *userdata, const struct ng_path *p)
{
        (void) userdata, (void) p;
        ck_abort_msg("a member past the table's size was called");
        return -EIO;
}

/* A table with no size is refused wherever ops enter; so is one that stops
 * before userdata, and one that sets a member this library does not know. */
START_TEST(ops_without_size_refused)
{
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        struct file f = { .value = "0" };
        struct ng_action_ops ops = { .write = file_write, .read = file_read, .sleep_usec = no_sleep, .userdata = &f };
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, "/sys/x", "1"), -EINVAL);
        ck_assert_uint_eq(res->n_writes, 0);
        ck_assert_uint_eq(f.writes, 0);
        ck_assert_int_eq(res->error, 0);
        static const struct ng_cpuset_plan plan;
        ck_assert_int_eq(ng_cpuset_apply(NULL, &ops, &plan, true, res), -EINVAL);
        static const struct ng_act_hugepages a;
        ck_assert_int_eq(ng_act_hugepages_run(&a, NULL, &ops, true, res), -EINVAL);
        ck_assert_int_eq(ng_act_hugepages_persist(&a, NULL, &ops, true, res), -EINVAL);
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(NULL, &p), 0);
        static const struct ng_policy_persist nothing;
        ck_assert_int_eq(ng_policy_persist_run(&nothing, &ops, p, true, res), -EINVAL);

        ops.size = offsetof(struct ng_action_ops, userdata);
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, "/sys/x", "1"), -EINVAL);
        ck_assert_int_eq(ng_policy_persist_run(&nothing, &ops, p, true, res), -EINVAL);
        ops.size = offsetof(struct ng_action_ops, set_unit_cpuset);
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, "/sys/x", "1"), 0);
        ck_assert_int_eq(ng_policy_persist_run(&nothing, &ops, p, true, res), 0);

        /* a caller's newer table: a later member NULL is nothing asked */
        struct {
                struct ng_action_ops ops;
                int (*later)(void *userdata, const struct ng_path *p);
        } newer = { .ops = ng_action_ops_default };
        newer.ops.size = sizeof(newer);
        ck_assert_int_eq(ng_policy_persist_run(&nothing, &newer.ops, p, true, res), 0);
        newer.later = not_mine_reload;
        ck_assert_int_eq(ng_policy_persist_run(&nothing, &newer.ops, p, true, res), -EINVAL);
        ng_path_free(p);
}
END_TEST

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

/* A table whose size stops before the owner I/O (a caller built against
 * the first struct ng_action_ops): the library's own owner I/O, whatever
 * lies past the table. Here a unit's drop-in in a tree, reloaded (nothing
 * to do in a tree) and read back from the tree's unit files. */
START_TEST(ops_short_table_gets_the_default_owner_io)
{
        char dir[] = "/tmp/ng-action.XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(dir));
        struct ng_path *p;
        ck_assert_int_eq(ng_path_new(dir, &p), 0);
        struct ng_policy_persist pp = { .unit = "db.service", .mode = NG_MPOL_INTERLEAVE,
                                        .dropin = "/etc/systemd/system/db.service.d/" NG_POLICY_DROPIN_NAME,
                                        .value = "NUMAPolicy=interleave NUMAMask=0-1" };
        ng_bitmap_set(&pp.mask, 0);
        ng_bitmap_set(&pp.mask, 1);
        struct file f = { .value = "0" };
        struct ng_action_ops ops = { .size = offsetof(struct ng_action_ops, set_unit_cpuset), .write = file_write,
                                     .read = file_read, .sleep_usec = no_sleep, .userdata = &f,
                                     .replace_file = not_mine_replace, .reload_units = not_mine_reload };
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        ck_assert_int_eq(ng_policy_persist_run(&pp, &ops, p, false, res), 0);
        ck_assert_msg(res->outcome == NG_OUTCOME_DONE, "%s: %s", ng_outcome_name(res->outcome), res->summary);
        ck_assert_uint_eq(res->n_writes, 1);
        ck_assert_str_eq(res->writes[0].after, "NUMAPolicy=interleave NUMAMask=0-1");
        char path[sizeof(dir) + sizeof(pp.dropin)];
        snprintf(path, sizeof(path), "%s%s", dir, pp.dropin);
        char *text = ng_test_read(path, NULL);
        ck_assert_ptr_nonnull(strstr(text, "[Service]\nNUMAPolicy=interleave\nNUMAMask=0-1\n"));
        free(text);
        ng_path_free(p);
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("action");
        TCase *tc = tcase_create("result");
        tcase_add_test(tc, result_new_reset_free);
        tcase_add_test(tc, result_writes_grow_to_the_cap);
        suite_add_tcase(s, tc);
        tc = tcase_create("ops");
        tcase_add_test(tc, ops_without_size_refused);
        tcase_add_test(tc, ops_short_table_gets_the_default_owner_io);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared machinery of the corrections (ng-action.h): a result, made
 * and freed by the library, its writes recorded up to NG_ACTION_MAX_WRITES.
 */

#include "cleanup.h"
#include "ng-action.h"
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
        const struct ng_action_ops ops = { .write = file_write, .read = file_read,
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
        const struct ng_action_ops ops = { .write = file_write, .read = file_read,
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

int main(void)
{
        Suite *s = suite_create("action");
        TCase *tc = tcase_create("result");
        tcase_add_test(tc, result_new_reset_free);
        tcase_add_test(tc, result_writes_grow_to_the_cap);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

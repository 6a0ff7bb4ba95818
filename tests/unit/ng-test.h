/* Shared helpers for the check unit tests. */
#pragma once

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Directory of the committed fixture trees, from the source root. */
#ifndef NG_FIXTURES
#define NG_FIXTURES "tests/fixtures"
#endif

/* Reads a fixture file into a malloc'd NUL-terminated buffer; fails the test
 * when it is missing. */
static inline char *ng_test_read(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        ck_assert_msg(f != NULL, "cannot open fixture %s: %s", path, strerror(errno));
        size_t cap = 4096, len = 0;
        char *buf = malloc(cap);
        ck_assert_ptr_nonnull(buf);
        size_t k;
        while ((k = fread(buf + len, 1, cap - len - 1, f)) > 0) {
                len += k;
                if (cap - len - 1 == 0) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        ck_assert_ptr_nonnull(buf);
                }
        }
        fclose(f);
        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        return buf;
}

/* Runs one suite and returns the process exit status. */
static inline int ng_test_run(Suite *s)
{
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

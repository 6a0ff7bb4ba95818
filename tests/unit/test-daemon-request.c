/* The control socket's request framing (daemon/numaguardd/request.c). */

#include <errno.h>
#include <string.h>

#include "request.h"
#include "ng-test.h"

START_TEST(request_framing)
{
        char out[SERVER_REQUEST_MAX + 1];
        static char big[SERVER_REQUEST_MAX + 2];
        ck_assert_int_eq(server_request_parse("status\n", 7, out, sizeof(out)), 6);
        ck_assert_str_eq(out, "status");
        ck_assert_int_eq(server_request_parse("status json\r\nrest", 17, out, sizeof(out)), 11);
        ck_assert_str_eq(out, "status json");
        ck_assert_int_eq(server_request_parse("reload", 6, out, sizeof(out)), 6);
        ck_assert_int_eq(server_request_parse("", 0, out, sizeof(out)), 0);
        ck_assert_int_eq(server_request_parse("sta\x01tus\n", 8, out, sizeof(out)), -EBADMSG);
        ck_assert_int_eq(server_request_parse("st\0tus\n", 7, out, sizeof(out)), -EBADMSG);
        ck_assert_int_eq(server_request_parse("stat\xc3\xa9\n", 7, out, sizeof(out)), -EBADMSG);
        memset(big, 'a', sizeof(big));
        ck_assert_int_eq(server_request_parse(big, SERVER_REQUEST_MAX, out, sizeof(out)), SERVER_REQUEST_MAX);
        ck_assert_int_eq(server_request_parse(big, sizeof(big), out, sizeof(out)), -E2BIG);
        ck_assert_int_eq(server_request_parse("status\n", 7, out, 4), -E2BIG);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("daemon-request");
        TCase *tc = tcase_create("framing");
        tcase_add_test(tc, request_framing);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

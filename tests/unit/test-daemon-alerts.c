/* Unit tests for daemon/numaguardd/alerts.c (transitions, damping),
 * server.c's peer_allowed() and sink.c's message ids. */

#include "alerts.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "ng-codes.h"
#include "ng-config.h"
#include "ng-test.h"
#include "server.h"
#include "sink.h"

struct events {
        unsigned raised, cleared;
        enum ng_code last_code;
        char last_instance[NG_INSTANCE_NAME_MAX + 1];
};

static void on_event(void *userdata, enum alert_event_kind kind, const struct alert *a)
{
        struct events *e = userdata;
        if (kind == ALERT_EVENT_RAISED)
                e->raised++;
        else
                e->cleared++;
        e->last_code = a->code;
        snprintf(e->last_instance, sizeof(e->last_instance), "%s", a->instance);
}

static struct ng_finding finding(enum ng_code code, const char *inst, int node)
{
        struct ng_finding f = { .code = code, .severity = NG_SEV_WARNING };
        snprintf(f.instance, sizeof(f.instance), "%s", inst);
        snprintf(f.message, sizeof(f.message), "%s on %d", inst, node);
        if (node >= 0)
                ng_bitmap_set(&f.nodes, (unsigned) node);
        return f;
}

/* One poll: present != 0 means the cyclops finding is reported. */
static void poll(struct alert_table *t, struct events *e, bool present)
{
        struct ng_finding f = finding(NG_CODE_CYCLOPS, "ORCL", 0);
        ck_assert_int_eq(alerts_update(t, &f, present ? 1 : 0, 1000, on_event, e), 0);
}

START_TEST(test_raise_once_clear_once)
{
        struct alert_table t = {0};
        struct events e = {0};
        for (int i = 0; i < 5; i++)
                poll(&t, &e, true);
        ck_assert_uint_eq(e.raised, 1);
        ck_assert_uint_eq(e.cleared, 0);
        ck_assert_uint_eq(alerts_active(&t), 1);
        poll(&t, &e, false);
        ck_assert_uint_eq(e.cleared, 0);        /* one missing poll is not enough */
        for (int i = 0; i < 5; i++)
                poll(&t, &e, false);
        ck_assert_uint_eq(e.raised, 1);
        ck_assert_uint_eq(e.cleared, 1);
        ck_assert_uint_eq(alerts_active(&t), 0);
        ck_assert_int_eq(e.last_code, NG_CODE_CYCLOPS);
        ck_assert_str_eq(e.last_instance, "ORCL");
        alerts_done(&t);
}
END_TEST

START_TEST(test_flapping_is_damped)
{
        struct alert_table t = {0};
        struct events e = {0};
        /* Present every other poll for 40 polls: one alert, never cleared. */
        for (int i = 0; i < 40; i++)
                poll(&t, &e, i % 2 == 0);
        ck_assert_uint_eq(e.raised, 1);
        ck_assert_uint_eq(e.cleared, 0);
        alerts_done(&t);
}
END_TEST

START_TEST(test_reraise_after_flap_needs_confirmation)
{
        struct alert_table t = {0};
        struct events e = {0};
        poll(&t, &e, true);
        for (int i = 0; i < ALERT_CLEAR_POLLS; i++)
                poll(&t, &e, false);
        ck_assert_uint_eq(e.cleared, 1);
        poll(&t, &e, true);                     /* back at once: not yet */
        ck_assert_uint_eq(e.raised, 1);
        for (int i = 1; i < ALERT_RAISE_CONFIRM_POLLS; i++)
                poll(&t, &e, true);
        ck_assert_uint_eq(e.raised, 2);
        /* Long after a clear, the first poll raises again. */
        for (int i = 0; i < ALERT_CLEAR_POLLS + ALERT_FLAP_POLLS + 1; i++)
                poll(&t, &e, false);
        ck_assert_uint_eq(e.cleared, 2);
        ck_assert_uint_eq(t.n, 0);              /* forgotten */
        poll(&t, &e, true);
        ck_assert_uint_eq(e.raised, 3);
        alerts_done(&t);
}
END_TEST

START_TEST(test_keys)
{
        struct alert_table t = {0};
        struct events e = {0};
        struct ng_finding f[4] = {
                finding(NG_CODE_CYCLOPS, "ORCL", 0),
                finding(NG_CODE_CYCLOPS, "ORCL", 0),    /* same key: one alert */
                finding(NG_CODE_CYCLOPS, "ORCL", 1),    /* other node */
                finding(NG_CODE_REMOTE_MEMORY, "ORCL", 0),
        };
        f[1].severity = NG_SEV_CRITICAL;
        ck_assert_int_eq(alerts_update(&t, f, 4, 1, on_event, &e), 0);
        ck_assert_uint_eq(e.raised, 3);
        ck_assert_uint_eq(alerts_active(&t), 3);
        ck_assert_int_eq(t.v[0].severity, NG_SEV_CRITICAL);     /* the worse one's words */
        /* The cyclops moves from node 0 to node 2: clear 0, raise 2. */
        struct ng_finding g[3] = { finding(NG_CODE_CYCLOPS, "ORCL", 2), f[2], f[3] };
        for (int i = 0; i < ALERT_CLEAR_POLLS; i++)
                ck_assert_int_eq(alerts_update(&t, g, 3, 2, on_event, &e), 0);
        ck_assert_uint_eq(e.raised, 4);
        ck_assert_uint_eq(e.cleared, 1);
        ck_assert_uint_eq(alerts_active(&t), 3);
        alerts_done(&t);
}
END_TEST

START_TEST(test_peer_allowed)
{
        gid_t groups[] = { 10, 995 };
        struct peer root = { .uid = 0, .gid = 0 };
        struct peer member = { .uid = 1000, .gid = 1000, .groups = groups, .n_groups = 2 };
        struct peer primary = { .uid = 1001, .gid = 995 };
        struct peer other = { .uid = 1002, .gid = 1002, .groups = groups, .n_groups = 1 };
        ck_assert(peer_allowed(&root, ACCESS_READ, 995));
        ck_assert(peer_allowed(&root, ACCESS_WRITE, (gid_t) -1));
        ck_assert(peer_allowed(&member, ACCESS_READ, 995));
        ck_assert(peer_allowed(&primary, ACCESS_READ, 995));
        ck_assert(!peer_allowed(&member, ACCESS_WRITE, 995));
        ck_assert(!peer_allowed(&other, ACCESS_READ, 995));
        ck_assert(!peer_allowed(&member, ACCESS_READ, (gid_t) -1));
}
END_TEST

START_TEST(test_message_ids)
{
        /* Fixed, distinct, 32 hex digits: the catalog and journalctl rely on them. */
        for (int c = 0; c < NG_CODE_MAX_; c++) {
                const char *id = sink_message_id(ALERT_EVENT_RAISED, (enum ng_code) c);
                ck_assert_uint_eq(strlen(id), 32);
                ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 32);
                ck_assert_str_ne(id, sink_message_id(ALERT_EVENT_CLEARED, (enum ng_code) c));
                for (int d = 0; d < c; d++)
                        ck_assert_str_ne(id, sink_message_id(ALERT_EVENT_RAISED, (enum ng_code) d));
        }
        ck_assert_str_eq(sink_message_id(ALERT_EVENT_RAISED, NG_CODE_CYCLOPS),
                         "e87985b89b7c4cf1ab08905f0454e2fd");
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("daemon-alerts");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_raise_once_clear_once);
        tcase_add_test(tc, test_flapping_is_damped);
        tcase_add_test(tc, test_reraise_after_flap_needs_confirmation);
        tcase_add_test(tc, test_keys);
        tcase_add_test(tc, test_peer_allowed);
        tcase_add_test(tc, test_message_ids);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(suite());
}

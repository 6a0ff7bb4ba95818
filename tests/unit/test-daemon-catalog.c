/* Every @FIELD@ of an entry of systemd/numaguard.catalog is sent by every
 * sender of that entry's MESSAGE_ID: numaguardd's alerts, daemon events and
 * corrections (sink.c, through its JSON-lines file sink, which carries the
 * journal's fields) and numaguardctl's corrections (the fields of
 * ng_correction_journal_fields, which numaguardctl sends as they are). And
 * every catalog entry has a sender. */

#include <json-c/json.h>
#include <syslog.h>
#include <unistd.h>

#include "alerts.h"
#include "cleanup.h"
#include "ng-action.h"
#include "ng-bitmap.h"
#include "ng-codes.h"
#include "ng-correction.h"
#include "ng-test.h"
#include "sink.h"
#include "text.h"

#define CATALOG "systemd/numaguard.catalog"
/* enum daemon_event: reload failed, poll failed, poll stuck. */
#define N_DAEMON_EVENTS 3
#define MAX_ENTRIES 64
#define MAX_ENTRY_FIELDS 32

struct entry {
        char id[33];
        char subject[128];
        char fields[MAX_ENTRY_FIELDS][64];
        size_t n_fields;
        unsigned senders;
};

struct catalog {
        struct entry v[MAX_ENTRIES];
        size_t n;
};

static bool is_id_line(const char *l)
{
        if (strncmp(l, "-- ", 3) != 0)
                return false;
        for (int i = 0; i < 32; i++)
                if (!strchr("0123456789abcdef", l[3 + i]))
                        return false;
        return l[35] == '\n' || l[35] == '\0';
}

static void catalog_load(struct catalog *c)
{
        char *text = ng_test_read(CATALOG, NULL);
        struct entry *e = NULL;
        c->n = 0;
        for (const char *l = text; *l;) {
                const char *nl = strchr(l, '\n');
                size_t len = nl ? (size_t) (nl - l) : strlen(l);
                if (is_id_line(l)) {
                        ck_assert_uint_lt(c->n, MAX_ENTRIES);
                        e = &c->v[c->n++];
                        memset(e, 0, sizeof(*e));
                        memcpy(e->id, l + 3, 32);
                } else if (e && !strncmp(l, "Subject: ", 9)) {
                        snprintf(e->subject, sizeof(e->subject), "%.*s", (int) (len - 9), l + 9);
                        goto fields;
                } else if (e) {
fields:
                        for (const char *p = l; p < l + len;) {
                                const char *a = memchr(p, '@', (size_t) (l + len - p)), *b;
                                if (!a || !(b = memchr(a + 1, '@', (size_t) (l + len - a - 1))))
                                        break;
                                size_t k = (size_t) (b - a - 1);
                                bool name = k > 0 && k < 64;
                                for (size_t i = 0; name && i < k; i++)
                                        name = (a[1 + i] >= 'A' && a[1 + i] <= 'Z') || a[1 + i] == '_' ||
                                               (a[1 + i] >= '0' && a[1 + i] <= '9');
                                if (name) {
                                        ck_assert_uint_lt(e->n_fields, MAX_ENTRY_FIELDS);
                                        memcpy(e->fields[e->n_fields], a + 1, k);
                                        e->fields[e->n_fields++][k] = '\0';
                                        p = b + 1;
                                } else
                                        p = a + 1;
                        }
                }
                l += len + (nl ? 1 : 0);
        }
        free(text);
        /* raised per code, cleared, daemon events, corrections */
        ck_assert_uint_eq(c->n, NG_CODE_MAX_ + 1 + N_DAEMON_EVENTS + NG_CORRECTION_MAX_);
}

static struct entry *catalog_entry(struct catalog *c, const char *id)
{
        for (size_t i = 0; i < c->n; i++)
                if (!strcmp(c->v[i].id, id))
                        return &c->v[i];
        return NULL;
}

/* The first field o's catalog entry names that o does not send (or sends
 * empty); NULL when none. o's MESSAGE_ID must have an entry. */
static const char *missing_field(struct catalog *c, struct json_object *o, const char *sender)
{
        struct json_object *v;
        ck_assert_msg(json_object_object_get_ex(o, "MESSAGE_ID", &v), "%s: no MESSAGE_ID", sender);
        const char *id = json_object_get_string(v);
        struct entry *e = catalog_entry(c, id);
        ck_assert_msg(e != NULL, "%s: MESSAGE_ID %s has no catalog entry", sender, id);
        e->senders++;
        for (size_t i = 0; i < e->n_fields; i++)
                if (!json_object_object_get_ex(o, e->fields[i], &v) ||
                    (json_object_get_type(v) == json_type_string && !*json_object_get_string(v)))
                        return e->fields[i];
        return NULL;
}

static void check_sent(struct catalog *c, struct json_object *o, const char *sender)
{
        const char *f = missing_field(c, o, sender);
        ck_assert_msg(f == NULL, "%s: %s: the catalog uses @%s@, which is not sent (or empty)", sender,
                      json_object_to_json_string(o), f);
}

/* Runs every line of the file sink's output through check_sent. */
static unsigned check_file(struct catalog *c, const char *path, const char *sender)
{
        char *text = ng_test_read(path, NULL);
        unsigned n = 0;
        for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
                struct json_object *o = json_tokener_parse(l);
                ck_assert_msg(o != NULL, "%s: not JSON: %s", sender, l);
                check_sent(c, o, sender);
                json_object_put(o);
                n++;
        }
        free(text);
        return n;
}

static struct alert full_alert(enum ng_code code)
{
        struct alert a = { .code = code, .severity = NG_SEV_WARNING, .value = 0.95,
                           .raised_usec = 1000000, .cleared_usec = 5000000 };
        snprintf(a.instance, sizeof(a.instance), "db");
        ng_bitmap_set(&a.nodes, 0);
        ng_bitmap_set(&a.nodes, 1);
        snprintf(a.segment, sizeof(a.segment), "sysv key 0x1 id 2");
        snprintf(a.message, sizeof(a.message), "what was found");
        snprintf(a.advice, sizeof(a.advice), "what to do");
        return a;
}

static int written(void *userdata, const struct ng_path *p, const char *path, const char *value)
{
        (void) userdata, (void) p, (void) path, (void) value;
        return 0;
}

static int reads_back(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size)
{
        (void) userdata, (void) p, (void) path;
        snprintf(buf, size, "0-1");
        return 0;
}

static void one_write(struct ng_action_result *res)
{
        const struct ng_action_ops ops = { .size = sizeof(ops), .write = written, .read = reads_back };
        ng_action_result_reset(res);
        ck_assert_int_eq(ng_action_write(&ops, NULL, res, false, "/sys/fs/cgroup/db/cpuset.mems", "0-1"), 0);
        res->outcome = NG_OUTCOME_DONE;
        snprintf(res->summary, sizeof(res->summary), "wrote 1 file");
}

/* The codes' table: each code's name round-trips, its ID is its own and
 * the catalog explains it under its name, numaguardd sends it, and the
 * correction enforce= carries out on it is one of the table's. */
START_TEST(test_code_table)
{
        static struct catalog c;
        catalog_load(&c);
        for (int k = 0; k < NG_CODE_MAX_; k++) {
                const struct ng_code_info *ci = ng_code_info((enum ng_code) k);
                ck_assert_ptr_nonnull(ci);
                ck_assert_int_eq(ci->id, k);
                ck_assert_str_eq(ng_code_name(ci->id), ci->name);
                enum ng_code back = NG_CODE_MAX_;
                ck_assert_int_eq(ng_code_from_name(ci->name, &back), 0);
                ck_assert_int_eq(back, k);
                struct entry *e = catalog_entry(&c, ci->message_id);
                ck_assert_msg(e, "%s: no catalog entry", ci->name);
                size_t n = strlen(ci->name);
                ck_assert_msg(!strncmp(e->subject, ci->name, n) && e->subject[n] == ':',
                              "%s: catalog entry %s is about \"%s\"", ci->name, ci->message_id, e->subject);
                ck_assert_str_eq(sink_message_id(ALERT_EVENT_RAISED, ci->id), ci->message_id);
                ck_assert_int_le(ci->severity, NG_SEV_CRITICAL);
                ck_assert(ci->correction == NG_CORRECTION_NONE ||
                          ng_correction_kind((enum ng_correction) ci->correction));
                for (int j = 0; j < k; j++)
                        ck_assert_str_ne(ng_code_info((enum ng_code) j)->message_id, ci->message_id);
        }
        ck_assert_ptr_null(ng_code_info(NG_CODE_MAX_));
        ck_assert_str_eq(ng_code_name(NG_CODE_MAX_), "UNKNOWN");
        enum ng_code none;
        ck_assert_int_eq(ng_code_from_name("CYCLOPSE", &none), -EINVAL);
}
END_TEST

START_TEST(test_daemon_sends_catalog_fields)
{
        static struct catalog c;
        catalog_load(&c);
        char path[] = "/tmp/ng-catalog-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        struct alert_sink s;
        ck_assert_int_eq(sink_open(&s, path), 0);
        unsigned sent = 0;
        for (int code = 0; code < NG_CODE_MAX_; code++) {
                struct alert a = full_alert((enum ng_code) code);
                sink_emit(&s, ALERT_EVENT_RAISED, &a);
                sent++;
        }
        struct alert a = full_alert(NG_CODE_CYCLOPS);
        sink_emit(&s, ALERT_EVENT_CLEARED, &a);
        for (int ev = 0; ev < N_DAEMON_EVENTS; ev++)
                sink_daemon_event(&s, (enum daemon_event) ev, LOG_ERR, "event %d: %s", ev, "why");
        sent += 1 + N_DAEMON_EVENTS;
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        one_write(res);
        for (int k = 0; k < NG_CORRECTION_MAX_; k++, sent++)
                sink_action(&s, (enum ng_correction) k, "db", res);
        sink_close(&s);
        ck_assert_uint_eq(check_file(&c, path, "numaguardd"), sent);
        unlink(path);
        for (size_t i = 0; i < c.n; i++)
                ck_assert_msg(c.v[i].senders > 0, "catalog entry %s: numaguardd never sends it", c.v[i].id);
}
END_TEST

static void to_json(void *userdata, const char *name, const char *value)
{
        json_object_object_add(userdata, name, json_object_new_string(value));
}

START_TEST(test_ctl_sends_catalog_fields)
{
        static struct catalog c;
        catalog_load(&c);
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        one_write(res);
        for (int k = 0; k < NG_CORRECTION_MAX_; k++) {
                /* numaguardctl: hugepages correct the host, the others an instance. */
                const char *instance = k == NG_CORRECTION_HUGEPAGES ? NULL : "db";
                struct json_object *o = json_object_new_object();
                ng_correction_journal_fields((enum ng_correction) k, "numaguardctl", instance,
                                             instance ? instance : "node 0", res, 16, to_json, o);
                check_sent(&c, o, "numaguardctl");
                json_object_put(o);
        }
}
END_TEST

/* A SID that is not UTF-8, with a terminal escape sequence and a newline. */
#define HOSTILE "oracle:N\xff\x1b[31m\nZ"

static struct json_object *field_of(struct json_object *o, const char *key)
{
        struct json_object *v = NULL;
        ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
        return v;
}

/* An instance in a container: its alerts carry the container's fields,
 * which journalctl NUMAGUARD_CONTAINER=... and NUMAGUARD_POD=... find. */
START_TEST(test_container_fields)
{
        char path[] = "/tmp/ng-container-XXXXXX", line[8192];
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        struct alert_sink s;
        ck_assert_int_eq(sink_open(&s, path), 0);
        struct alert a = full_alert(NG_CODE_CYCLOPS);
        snprintf(a.container.runtime, sizeof(a.container.runtime), "containerd");
        snprintf(a.container.id, sizeof(a.container.id), "3f2a0c1d9b7e");
        snprintf(a.container.name, sizeof(a.container.name), "postgres");
        snprintf(a.container.pod, sizeof(a.container.pod), "pg-0");
        snprintf(a.container.pod_namespace, sizeof(a.container.pod_namespace), "shop");
        snprintf(a.container.pod_uid, sizeof(a.container.pod_uid), "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b");
        sink_emit(&s, ALERT_EVENT_RAISED, &a);
        struct alert host = full_alert(NG_CODE_CYCLOPS);
        sink_emit(&s, ALERT_EVENT_RAISED, &host);
        sink_close(&s);
        FILE *f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        struct json_object *o = json_tokener_parse(line);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_CONTAINER")), "postgres");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_CONTAINER_RUNTIME")), "containerd");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_CONTAINER_ID")), "3f2a0c1d9b7e");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_POD")), "pg-0");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_POD_NAMESPACE")), "shop");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_POD_UID")),
                         "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b");
        json_object_put(o);
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        ck_assert_ptr_null(strstr(line, "NUMAGUARD_CONTAINER"));        /* the host's instance */
        fclose(f);
        unlink(path);
}
END_TEST

/* MESSAGE, which journalctl, syslog and terminals show, is escaped; the
 * NUMAGUARD_* fields keep the name, made UTF-8 only in the file sink's
 * JSON. */
START_TEST(test_hostile_names)
{
        char path[] = "/tmp/ng-hostile-XXXXXX", line[8192];
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        struct alert_sink s;
        ck_assert_int_eq(sink_open(&s, path), 0);
        struct alert a = full_alert(NG_CODE_CYCLOPS);
        snprintf(a.instance, sizeof(a.instance), "%s", HOSTILE);
        snprintf(a.message, sizeof(a.message), "all of %s on node 0", HOSTILE);
        sink_emit(&s, ALERT_EVENT_RAISED, &a);
        sink_close(&s);
        FILE *f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        fclose(f);
        unlink(path);
        ck_assert(ng_utf8_valid(line));
        ck_assert_ptr_null(strchr(line, '\x1b'));
        struct json_object *o = json_tokener_parse(line);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(json_object_get_string(field_of(o, "MESSAGE")),
                         "CYCLOPS raised (oracle:N\\xff\\x1b[31m\\x0aZ, nodes 0-1): "
                         "all of oracle:N\\xff\\x1b[31m\\x0aZ on node 0");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_INSTANCE")),
                         "oracle:N\xef\xbf\xbd\x1b[31m\nZ");
        json_object_put(o);

        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        one_write(res);
        snprintf(res->summary, sizeof(res->summary), "moved %s", HOSTILE);
        o = json_object_new_object();
        ng_correction_journal_fields(NG_CORRECTION_CPUSET, "numaguardctl", HOSTILE, HOSTILE, res, 16, to_json, o);
        ck_assert_str_eq(json_object_get_string(field_of(o, "MESSAGE")),
                         "cpuset oracle:N\\xff\\x1b[31m\\x0aZ: done: moved oracle:N\\xff\\x1b[31m\\x0aZ");
        ck_assert_str_eq(json_object_get_string(field_of(o, "NUMAGUARD_INSTANCE")), HOSTILE);
        json_object_put(o);
}
END_TEST

/* The check itself can fail: an entry naming a field that is not sent. */
START_TEST(test_unsent_field_is_caught)
{
        static struct catalog c;
        catalog_load(&c);
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "MESSAGE_ID", json_object_new_string(NG_MSGID_ACTION_CPUSET));
        json_object_object_add(o, "NUMAGUARD_OUTCOME", json_object_new_string("done"));
        const char *f = missing_field(&c, o, "test");
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f, "NUMAGUARD_TARGET");
        json_object_object_add(o, "NUMAGUARD_TARGET", json_object_new_string(""));
        ck_assert_str_eq(missing_field(&c, o, "test"), "NUMAGUARD_TARGET");
        json_object_object_add(o, "NUMAGUARD_TARGET", json_object_new_string("db"));
        ck_assert_ptr_null(missing_field(&c, o, "test"));
        json_object_put(o);
}
END_TEST

/* The table is the one the configuration and the catalog use. */
START_TEST(test_correction_table)
{
        static struct catalog c;
        catalog_load(&c);
        for (int k = 0; k < NG_CORRECTION_MAX_; k++) {
                const struct ng_correction_kind *kd = ng_correction_kind((enum ng_correction) k);
                ck_assert_ptr_nonnull(kd);
                ck_assert_int_eq(kd->id, k);
                ck_assert_uint_eq(kd->enforce_bit, 1u << k);
                ck_assert_ptr_eq(ng_correction_by_name(kd->name), kd);
                ck_assert_msg(catalog_entry(&c, kd->message_id), "%s: no catalog entry", kd->name);
        }
        ck_assert_ptr_null(ng_correction_kind(NG_CORRECTION_MAX_));
        ck_assert_ptr_null(ng_correction_by_name("defrag"));
        ck_assert_uint_eq(ng_correction_kind(NG_CORRECTION_CPUSET)->enforce_bit, NG_ENFORCE_CPUSET);
        ck_assert_uint_eq(ng_correction_kind(NG_CORRECTION_HUGEPAGES)->enforce_bit, NG_ENFORCE_HUGEPAGES);
        ck_assert_uint_eq(ng_correction_kind(NG_CORRECTION_REBALANCE)->enforce_bit, NG_ENFORCE_REBALANCE);
}
END_TEST

static Suite *catalog_suite(void)
{
        Suite *s = suite_create("daemon-catalog");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_daemon_sends_catalog_fields);
        tcase_add_test(tc, test_ctl_sends_catalog_fields);
        tcase_add_test(tc, test_unsent_field_is_caught);
        tcase_add_test(tc, test_correction_table);
        tcase_add_test(tc, test_code_table);
        tcase_add_test(tc, test_hostile_names);
        tcase_add_test(tc, test_container_fields);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(catalog_suite());
}

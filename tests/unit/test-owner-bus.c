/* The wire format of a write through a systemd unit: ng_unit_bus_set() and
 * ng_unit_bus_read() against a stand-in for the manager on a socketpair
 * (sd-bus in server mode, as systemd's own bus tests do), which records
 * what SetUnitProperties received and serves the unit's properties with the
 * signatures systemd's D-Bus API documents (org.freedesktop.systemd1(5):
 * SetUnitProperties(in s name, in b runtime, in a(sv) properties);
 * AllowedCPUs, AllowedMemoryNodes: ay bitmasks; ControlGroup: s). */

#include <pthread.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "act-cpuset-internal.h"
#include "ng-act-cpuset.h"
#include "ng-owner.h"
#include "ng-test.h"
#include "owner-internal.h"

struct manager {
        sd_bus *bus;
        char unit[64];
        int runtime;
        char props[4][32];
        uint8_t masks[4][8];
        size_t mask_len[4], n_props;
        uint8_t cpus[1], mems[1];       /* what the unit's properties serve */
        int stop;
};

static int set_unit_properties(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        (void) err;
        struct manager *mg = userdata;
        const char *unit;
        int r = sd_bus_message_read(m, "sb", &unit, &mg->runtime);
        if (r < 0)
                return r;
        snprintf(mg->unit, sizeof(mg->unit), "%s", unit);
        r = sd_bus_message_enter_container(m, 'a', "(sv)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0 && mg->n_props < 4) {
                const char *name;
                const void *mask;
                size_t len;
                size_t i = mg->n_props++;
                if ((r = sd_bus_message_read(m, "s", &name)) < 0 ||
                    (r = sd_bus_message_enter_container(m, 'v', "ay")) < 0 ||
                    (r = sd_bus_message_read_array(m, 'y', &mask, &len)) < 0)
                        return r;
                snprintf(mg->props[i], sizeof(mg->props[i]), "%s", name);
                mg->mask_len[i] = len < sizeof(mg->masks[i]) ? len : sizeof(mg->masks[i]);
                memcpy(mg->masks[i], mask, mg->mask_len[i]);
                if ((r = sd_bus_message_exit_container(m)) < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, NULL);
}

static int get_mask(sd_bus *bus, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
                    void *userdata, sd_bus_error *err)
{
        (void) bus, (void) path, (void) iface, (void) err;
        struct manager *mg = userdata;
        const uint8_t *m = !strcmp(prop, "AllowedCPUs") ? mg->cpus : mg->mems;
        return sd_bus_message_append_array(reply, 'y', m, m[0] ? 1 : 0);
}

static int get_cgroup(sd_bus *bus, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
                      void *userdata, sd_bus_error *err)
{
        (void) bus, (void) path, (void) iface, (void) prop, (void) userdata, (void) err;
        return sd_bus_message_append(reply, "s", "/system.slice/oracle-db.service");
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", set_unit_properties, 0),
        SD_BUS_VTABLE_END
};

static const sd_bus_vtable service_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ControlGroup", "s", get_cgroup, 0, 0),
        SD_BUS_PROPERTY("AllowedCPUs", "ay", get_mask, 0, 0),
        SD_BUS_PROPERTY("AllowedMemoryNodes", "ay", get_mask, 0, 0),
        SD_BUS_VTABLE_END
};

static void *serve(void *arg)
{
        struct manager *mg = arg;
        while (!__atomic_load_n(&mg->stop, __ATOMIC_SEQ_CST)) {
                int r = sd_bus_process(mg->bus, NULL);
                if (r < 0)
                        break;
                if (r == 0)
                        sd_bus_wait(mg->bus, 100000);
        }
        return NULL;
}

/* A client bus connected to a running stand-in manager. */
static sd_bus *connect_manager(struct manager *mg, pthread_t *thread)
{
        int fd[2];
        sd_id128_t id;
        sd_bus *client = NULL;
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0);
        ck_assert_int_ge(sd_id128_randomize(&id), 0);
        ck_assert_int_ge(sd_bus_new(&mg->bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(mg->bus, fd[0], fd[0]), 0);
        ck_assert_int_ge(sd_bus_set_server(mg->bus, 1, id), 0);
        ck_assert_int_ge(sd_bus_add_object_vtable(mg->bus, NULL, "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", manager_vtable, mg), 0);
        ck_assert_int_ge(sd_bus_add_object_vtable(mg->bus, NULL, "/org/freedesktop/systemd1/unit/oracle_2ddb_2eservice",
                                                  "org.freedesktop.systemd1.Service", service_vtable, mg), 0);
        ck_assert_int_ge(sd_bus_start(mg->bus), 0);
        ck_assert_int_ge(sd_bus_new(&client), 0);
        ck_assert_int_ge(sd_bus_set_fd(client, fd[1], fd[1]), 0);
        ck_assert_int_ge(sd_bus_start(client), 0);
        ck_assert_int_eq(pthread_create(thread, NULL, serve, mg), 0);
        return client;
}

static void disconnect(struct manager *mg, sd_bus *client, pthread_t thread)
{
        sd_bus_flush_close_unref(client);
        __atomic_store_n(&mg->stop, 1, __ATOMIC_SEQ_CST);
        pthread_join(thread, NULL);
        sd_bus_flush_close_unref(mg->bus);
}

START_TEST(set_properties)
{
        static struct manager mg;
        memset(&mg, 0, sizeof(mg));
        pthread_t t;
        sd_bus *client = connect_manager(&mg, &t);
        struct ng_bitmap cpus = {0}, mems = {0};
        ng_bitmap_set(&cpus, 0);
        ng_bitmap_set(&cpus, 9);
        ng_bitmap_set(&mems, 1);
        ck_assert_int_eq(ng_unit_bus_set(client, "oracle-db.service", &cpus, &mems), 0);
        ck_assert_str_eq(mg.unit, "oracle-db.service");
        ck_assert_int_eq(mg.runtime, 0);                /* persistent, like systemctl set-property */
        ck_assert_uint_eq(mg.n_props, 2);
        ck_assert_str_eq(mg.props[0], "AllowedCPUs");
        ck_assert_uint_eq(mg.mask_len[0], 2);           /* CPUs 0 and 9: bits 0 of byte 0, 1 of byte 1 */
        ck_assert_uint_eq(mg.masks[0][0], 0x01);
        ck_assert_uint_eq(mg.masks[0][1], 0x02);
        ck_assert_str_eq(mg.props[1], "AllowedMemoryNodes");
        ck_assert_uint_eq(mg.mask_len[1], 1);
        ck_assert_uint_eq(mg.masks[1][0], 0x02);
        /* memory alone */
        mg.n_props = 0;
        ck_assert_int_eq(ng_unit_bus_set(client, "oracle-db.service", NULL, &mems), 0);
        ck_assert_uint_eq(mg.n_props, 1);
        ck_assert_str_eq(mg.props[0], "AllowedMemoryNodes");
        disconnect(&mg, client, t);
}
END_TEST

START_TEST(read_properties)
{
        static struct manager mg;
        memset(&mg, 0, sizeof(mg));
        mg.cpus[0] = 0x01;      /* AllowedCPUs=0 */
        mg.mems[0] = 0x40;      /* AllowedMemoryNodes=6 */
        pthread_t t;
        sd_bus *client = connect_manager(&mg, &t);
        struct ng_unit_cpuset u;
        ck_assert_int_eq(ng_unit_bus_read(client, "oracle-db.service", "/system.slice/oracle-db.service", &u), 0);
        char l[32];
        ck_assert(u.has_cpus && u.has_mems);
        ng_bitmap_format_list(&u.cpus, l, sizeof(l));
        ck_assert_str_eq(l, "0");
        ng_bitmap_format_list(&u.mems, l, sizeof(l));
        ck_assert_str_eq(l, "6");
        /* a manager whose unit of that name has another cgroup is not the owner */
        ck_assert_int_eq(ng_unit_bus_read(client, "oracle-db.service", "/oracle", &u), -ESRCH);
        /* an unset property is an empty array: the parent's */
        mg.mems[0] = 0;
        ck_assert_int_eq(ng_unit_bus_read(client, "oracle-db.service", "/system.slice/oracle-db.service", &u), 0);
        ck_assert(!u.has_mems);
        disconnect(&mg, client, t);
}
END_TEST

static Suite *bus_suite(void)
{
        Suite *s = suite_create("owner-bus");
        TCase *tc = tcase_create("manager");
        tcase_add_test(tc, set_properties);
        tcase_add_test(tc, read_properties);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(bus_suite());
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* numaguard.conf: parsers at their boundaries, diagnostics with file:line,
 * and the shipped sample against the compiled defaults. */

#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "ng-config.h"
#include "ng-test.h"
#include "util.h"

#define CONF NG_FIXTURES "/conf"
#define SAMPLE "conf/numaguard.conf"

/* ---- diagnostics collector ------------------------------------------- */

#define MAX_DIAGS 16

struct diags {
        unsigned n, errors, warnings;
        struct {
                int level;
                char file[256];
                unsigned line;
                char msg[512];
        } d[MAX_DIAGS];
};

static void collect(void *userdata, int level, const char *file, unsigned line, const char *msg)
{
        struct diags *ds = userdata;

        ck_assert(level == LOG_ERR || level == LOG_WARNING);
        ck_assert_ptr_nonnull(file);
        ck_assert_ptr_nonnull(msg);
        ck_assert_ptr_null(strchr(msg, '\n'));
        if (level == LOG_ERR)
                ds->errors++;
        else
                ds->warnings++;
        if (ds->n == MAX_DIAGS)
                return;
        ds->d[ds->n].level = level;
        snprintf(ds->d[ds->n].file, sizeof(ds->d[ds->n].file), "%s", file);
        ds->d[ds->n].line = line;
        snprintf(ds->d[ds->n].msg, sizeof(ds->d[ds->n].msg), "%s", msg);
        ds->n++;
}

/* Asserts diagnostic i has this level, line and a message containing needle. */
static void expect_diag(const struct diags *ds, unsigned i, int level, unsigned line,
                        const char *needle)
{
        ck_assert_msg(i < ds->n, "diagnostic %u missing (%u reported)", i, ds->n);
        ck_assert_msg(ds->d[i].level == level && ds->d[i].line == line,
                      "diagnostic %u: level %d line %u \"%s\", wanted level %d line %u", i,
                      ds->d[i].level, ds->d[i].line, ds->d[i].msg, level, line);
        ck_assert_msg(strstr(ds->d[i].msg, needle), "diagnostic %u \"%s\" lacks \"%s\"", i,
                      ds->d[i].msg, needle);
}

/* Loads text; asserts the return code; returns the config (NULL on failure). */
static struct ng_config *load_str(const char *text, int expect_r, struct diags *ds)
{
        struct ng_config *c = NULL;
        int r;

        memset(ds, 0, sizeof(*ds));
        r = ng_config_load_string(text, "test.conf", collect, ds, &c);
        ck_assert_msg(r == expect_r, "load returned %d, wanted %d, first diag: %s", r, expect_r,
                      ds->n ? ds->d[0].msg : "(none)");
        ck_assert(r == 0 ? c != NULL : c == NULL);
        if (r == 0)
                ck_assert_uint_eq(ds->errors, 0);
        else
                ck_assert_uint_gt(ds->errors, 0);
        return c;
}

/* Loads "[global]\nkey = value\n": returns the config or NULL when rejected
 * (then the error names line 2 and the key). */
static struct ng_config *global_kv(const char *key, const char *value, bool ok)
{
        char text[512];
        struct diags ds;
        struct ng_config *c;

        snprintf(text, sizeof(text), "[global]\n%s = %s\n", key, value);
        c = load_str(text, ok ? 0 : -EINVAL, &ds);
        if (!ok) {
                expect_diag(&ds, 0, LOG_ERR, 2, key);
                ck_assert_str_eq(ds.d[0].file, "test.conf");
        }
        return c;
}

static char *dump_to_string(const struct ng_config *c)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(ng_config_dump(c, f), 0);
        fclose(f);
        return buf;
}

static void assert_same_config(const struct ng_config *a, const struct ng_config *b)
{
        char *da = dump_to_string(a), *db = dump_to_string(b);

        ck_assert_str_eq(da, db);
        free(da);
        free(db);
}

/* ---- helpers: sizes and durations ------------------------------------ */

START_TEST(test_parse_size)
{
        static const struct {
                const char *s;
                uint64_t v;
        } ok[] = {
                { "0", 0 },
                { "1024", 1024 },
                { "1024B", 1024 },
                { "64K", 64 << 10 },
                { "64k", 64 << 10 },
                { "64KiB", 64 << 10 },
                { "64kb", 64 << 10 },
                { "512M", UINT64_C(512) << 20 },
                { "512 MiB", UINT64_C(512) << 20 },
                { "8G", UINT64_C(8) << 30 },
                { "1T", UINT64_C(1) << 40 },
                { "16383P", UINT64_C(16383) << 50 },
                { "15E", UINT64_C(15) << 60 },
                { "18446744073709551615", UINT64_MAX },
        };
        static const char *const bad[] = {
                "", " 1", "-1", "+1", "1.5G", "0x10", "G", "1X", "1GG", "1Gi", "1iB", "1 G B",
                "99999999999T", "16E", "18446744073709551616", "1G ",
        };
        uint64_t v;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                v = 42;
                ck_assert_msg(ng_parse_size_bytes(ok[i].s, &v) == 0, "rejected \"%s\"", ok[i].s);
                ck_assert_msg(v == ok[i].v, "\"%s\" -> %ju", ok[i].s, (uintmax_t)v);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                v = 42;
                ck_assert_msg(ng_parse_size_bytes(bad[i], &v) == -EINVAL, "accepted \"%s\"",
                              bad[i]);
                ck_assert_msg(v == 42, "\"%s\" touched the result", bad[i]);
        }
        ck_assert_int_eq(ng_parse_size_bytes(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_parse_duration)
{
        static const struct {
                const char *s;
                uint64_t v;
        } ok[] = {
                { "0", 0 },
                { "30", 30000000 },
                { "250us", 250 },
                { "500ms", 500000 },
                { "10s", 10000000 },
                { "10sec", 10000000 },
                { "1m", 60000000 },
                { "1min", 60000000 },
                { "1h", UINT64_C(3600000000) },
                { "1d", UINT64_C(86400000000) },
                { "10 s", 10000000 },
                { "18446744073709551615us", UINT64_MAX },
        };
        static const char *const bad[] = {
                "", "s", "10x", "1.5s", "-1", " 1s", "1s ", "10 S", "1ms2", "1hour",
                "213503983d", "18446744073709551615", "99999999999999999999us",
        };
        uint64_t v;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                v = 42;
                ck_assert_msg(ng_parse_duration_usec(ok[i].s, &v) == 0, "rejected \"%s\"",
                              ok[i].s);
                ck_assert_msg(v == ok[i].v, "\"%s\" -> %ju", ok[i].s, (uintmax_t)v);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                v = 42;
                ck_assert_msg(ng_parse_duration_usec(bad[i], &v) == -EINVAL, "accepted \"%s\"",
                              bad[i]);
                ck_assert_msg(v == 42, "\"%s\" touched the result", bad[i]);
        }
}
END_TEST

/* ---- defaults --------------------------------------------------------- */

START_TEST(test_defaults)
{
        struct ng_config *c = NULL;

        ck_assert_int_eq(ng_config_new_default(&c), 0);
        ck_assert_uint_eq(c->interval_usec, 30000000);
        ck_assert_double_eq(c->cyclops_fraction, 0.9);
        ck_assert_double_eq(c->pagetable_share, 0.02);
        ck_assert_uint_eq(c->node_free_floor_bytes, NG_FREE_FLOOR_AUTO);
        ck_assert_uint_eq(c->min_segment_size_bytes, UINT64_C(64) << 20);
        ck_assert_uint_eq(c->sample_every, 10);
        ck_assert_uint_eq(c->sample_pages, 4096);
        ck_assert_uint_eq(c->full_scan_every, 20);
        ck_assert_uint_eq(c->stuck_after_usec, 10000000);
        ck_assert(c->autodiscover);
        ck_assert_int_eq(c->mode, NG_MODE_AUDIT);
        ck_assert_uint_eq(c->cooldown_usec, UINT64_C(600000000));
        ck_assert_str_eq(c->socket_path, "/run/numaguard/ctl.sock");
        ck_assert_str_eq(c->metrics_file, "/var/lib/prometheus/node-exporter/numaguard.prom");
        ck_assert_str_eq(c->status_group, "");
        ck_assert_uint_eq(c->n_instances, 0);
        ck_assert_ptr_null(c->instances);
        ng_config_free(c);
        ng_config_free(NULL);
}
END_TEST

START_TEST(test_empty_file_is_defaults)
{
        struct ng_config *c = NULL, *d = NULL;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/empty.conf", collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 0);
        ck_assert_int_eq(ng_config_new_default(&d), 0);
        assert_same_config(c, d);
        ng_config_free(c);
        c = load_str("# only comments\n\n; here\n[global]\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 0);
        assert_same_config(c, d);
        ng_config_free(c);
        ng_config_free(d);
}
END_TEST

START_TEST(test_missing_file)
{
        struct ng_config *c = (struct ng_config *)0x1;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/does-not-exist.conf", collect, &ds, &c), -ENOENT);
        ck_assert_ptr_eq(c, (struct ng_config *)0x1);
        ck_assert_uint_eq(ds.n, 0);
        ck_assert_int_lt(ng_config_load(CONF, collect, &ds, &c), 0); /* a directory */
        ck_assert_ptr_eq(c, (struct ng_config *)0x1);
}
END_TEST

/* A FIFO would block the open until someone writes it; devices and
 * directories are not configs either. Each is refused without reading,
 * as a whole (line 0). */
START_TEST(test_not_regular_file)
{
        char dir[] = "/tmp/ng-test-config.XXXXXX", fifo[64];
        struct ng_config *c = (struct ng_config *)0x1;
        struct diags ds = {};

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(fifo, sizeof(fifo), "%s/fifo.conf", dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(ng_config_load(fifo, collect, &ds, &c), -EINVAL);
        expect_diag(&ds, 0, LOG_ERR, 0, "is a FIFO, not a regular file");
        ck_assert_str_eq(ds.d[0].file, fifo);
        ck_assert_int_eq(ng_config_load(dir, collect, &ds, &c), -EINVAL);
        expect_diag(&ds, 1, LOG_ERR, 0, "is a directory");
        ck_assert_int_eq(ng_config_load("/dev/zero", collect, &ds, &c), -EINVAL);
        expect_diag(&ds, 2, LOG_ERR, 0, "is a character device");
        ck_assert_int_eq(ng_config_load(fifo, NULL, NULL, &c), -EINVAL);
        ck_assert_ptr_eq(c, (struct ng_config *)0x1);
        /* /dev/null is the usual "no configuration": the defaults */
        ck_assert_int_eq(ng_config_load("/dev/null", collect, &ds, &c), 0);
        ck_assert_uint_eq(c->n_instances, 0);
        ng_config_free(c);
        unlink(fifo);
        rmdir(dir);
}
END_TEST

/* 20,000 instances: every name kept, in order, duplicates still found with
 * the line of the first (bench/config-load.c measures that the load grows
 * linearly). */
START_TEST(test_many_instances)
{
        enum { N = 20000 };
        size_t size = (size_t)N * 48 + 256, len = 0;
        char *text = malloc(size);
        struct diags ds;
        struct ng_config *c;

        ck_assert_ptr_nonnull(text);
        for (unsigned i = 0; i < N; i++)
                len += (size_t)snprintf(text + len, size - len, "[instance db%u]\nmatch_comm = db%u\n", i, i);
        c = load_str(text, 0, &ds);
        ck_assert_uint_eq(c->n_instances, N);
        for (unsigned i = 0; i < N; i += 997) {
                char name[16];
                snprintf(name, sizeof(name), "db%u", i);
                ck_assert_str_eq(c->instances[i].name, name);
                ck_assert_uint_eq(c->instances[i].line, 2 * i + 1);
        }
        ck_assert_str_eq(c->instances[N - 1].name, "db19999");
        ng_config_free(c);
        snprintf(text + len, size - len, "[instance db7]\nmatch_comm = x\n[instance db19999]\nmatch_comm = y\n");
        load_str(text, -EINVAL, &ds);
        ck_assert_uint_eq(ds.n, 2);
        expect_diag(&ds, 0, LOG_ERR, 2 * N + 1, "duplicate section [instance db7], first at line 15");
        expect_diag(&ds, 1, LOG_ERR, 2 * N + 3, "duplicate section [instance db19999], first at line 39999");
        free(text);
}
END_TEST

/* ---- [global] keys at their boundaries -------------------------------- */

START_TEST(test_interval_bounds)
{
        struct ng_config *c;

        c = global_kv("interval", "100ms", true);
        ck_assert_uint_eq(c->interval_usec, 100000);
        ng_config_free(c);
        c = global_kv("interval", "1h", true);
        ck_assert_uint_eq(c->interval_usec, UINT64_C(3600000000));
        ng_config_free(c);
        c = global_kv("interval", "45", true);
        ck_assert_uint_eq(c->interval_usec, 45000000);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("interval", "99ms", false));
        ck_assert_ptr_null(global_kv("interval", "3601s", false));
        ck_assert_ptr_null(global_kv("interval", "0", false));
        ck_assert_ptr_null(global_kv("interval", "10x", false));
        ck_assert_ptr_null(global_kv("interval", "", false));
        ck_assert_ptr_null(global_kv("interval", "10s # seconds", false));
}
END_TEST

START_TEST(test_range_message)
{
        struct diags ds;

        load_str("[global]\ninterval = 99ms\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "between 100ms and 1h");
        load_str("[global]\ncyclops_fraction = 0.49\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "between 0.5 and 1.0");
        load_str("[global]\nmin_segment_size = 2P\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "between 0 and 1P");
}
END_TEST

START_TEST(test_fractions)
{
        struct ng_config *c;

        c = global_kv("cyclops_fraction", "1.0", true);
        ck_assert_double_eq(c->cyclops_fraction, 1.0);
        ng_config_free(c);
        c = global_kv("cyclops_fraction", "0.5", true);
        ck_assert_double_eq(c->cyclops_fraction, 0.5);
        ng_config_free(c);
        c = global_kv("cyclops_fraction", "1", true);
        ck_assert_double_eq(c->cyclops_fraction, 1.0);
        ng_config_free(c);
        c = global_kv("pagetable_share", "0.001", true);
        ck_assert_double_eq(c->pagetable_share, 0.001);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("cyclops_fraction", "0.49", false));
        ck_assert_ptr_null(global_kv("cyclops_fraction", "1.01", false));
        ck_assert_ptr_null(global_kv("cyclops_fraction", "0,9", false));
        ck_assert_ptr_null(global_kv("cyclops_fraction", "9e-1", false));
        ck_assert_ptr_null(global_kv("cyclops_fraction", ".9", false));
        ck_assert_ptr_null(global_kv("cyclops_fraction", "0.", false));
        ck_assert_ptr_null(global_kv("cyclops_fraction", "0.9000001", false));
        ck_assert_ptr_null(global_kv("pagetable_share", "0.0009", false));
        ck_assert_ptr_null(global_kv("pagetable_share", "0.51", false));
}
END_TEST

START_TEST(test_sizes_in_config)
{
        struct ng_config *c;

        c = global_kv("min_segment_size", "512MiB", true);
        ck_assert_uint_eq(c->min_segment_size_bytes, UINT64_C(512) << 20);
        ng_config_free(c);
        c = global_kv("node_free_floor", "auto", true);
        ck_assert_uint_eq(c->node_free_floor_bytes, NG_FREE_FLOOR_AUTO);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("node_free_floor", "automatic", false));
        c = global_kv("node_free_floor", "0", true);
        ck_assert_uint_eq(c->node_free_floor_bytes, 0);
        ng_config_free(c);
        c = global_kv("node_free_floor", "1P", true);
        ck_assert_uint_eq(c->node_free_floor_bytes, UINT64_C(1) << 50);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("min_segment_size", "99999999999T", false));
        ck_assert_ptr_null(global_kv("node_free_floor", "1025T", false));
        ck_assert_ptr_null(global_kv("node_free_floor", "1%", false));
        ck_assert_ptr_null(global_kv("node_free_floor", "-1G", false));
}
END_TEST

START_TEST(test_other_global_keys)
{
        struct ng_config *c;

        c = global_kv("mode", "Enforce", true);
        ck_assert_int_eq(c->mode, NG_MODE_ENFORCE);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("mode", "fix", false));
        c = global_kv("autodiscover", "off", true);
        ck_assert(!c->autodiscover);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("autodiscover", "maybe", false));
        c = global_kv("sample_every", "1", true);
        ck_assert_uint_eq(c->sample_every, 1);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("sample_every", "0", false));
        ck_assert_ptr_null(global_kv("sample_every", "100001", false));
        ck_assert_ptr_null(global_kv("sample_every", "99999999999999999999", false));
        ck_assert_ptr_null(global_kv("sample_pages", "63", false));
        c = global_kv("full_scan_every", "1", true);
        ck_assert_uint_eq(c->full_scan_every, 1);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("full_scan_every", "0", false));
        ck_assert_ptr_null(global_kv("full_scan_every", "100001", false));
        ck_assert_ptr_null(global_kv("stuck_after", "500ms", false));
        c = global_kv("cooldown", "0", true);
        ck_assert_uint_eq(c->cooldown_usec, 0);
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("cooldown", "2d", false));
        c = global_kv("metrics_file", "", true);
        ck_assert_str_eq(c->metrics_file, "");
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("metrics_file", "relative.prom", false));
        ck_assert_ptr_null(global_kv("socket", "", false));
        ck_assert_ptr_null(global_kv("socket", "/run/numaguard/a-socket-path-that-is-much-"
                                     "longer-than-the-one-hundred-and-seven-bytes-of-sun-path"
                                     "-allows.sock", false));
        c = global_kv("status_group", "dba", true);
        ck_assert_str_eq(c->status_group, "dba");
        ng_config_free(c);
        ck_assert_ptr_null(global_kv("status_group", "db a", false));
        ck_assert_ptr_null(global_kv("status_group", "-dba", false));
}
END_TEST

/* unreadable_ok: init and cgroup paths only (a process name is its
 * user's choice), never the root cgroup, kept without blanks or trailing
 * slashes, and dumped as kept. */
START_TEST(test_unreadable_ok)
{
        struct ng_config *c;
        char *text;

        ck_assert_int_eq(ng_config_new_default(&c), 0);
        ck_assert_str_eq(c->unreadable_ok, "");
        ng_config_free(c);
        c = global_kv("unreadable_ok", "init", true);
        ck_assert_str_eq(c->unreadable_ok, "init");
        ng_config_free(c);
        c = global_kv("unreadable_ok", "/system.slice/falcon-sensor.service/ ,  init,/machine.slice//", true);
        ck_assert_str_eq(c->unreadable_ok, "/system.slice/falcon-sensor.service,init,/machine.slice");
        text = dump_to_string(c);
        ck_assert(strstr(text, "\nunreadable_ok = /system.slice/falcon-sensor.service,init,/machine.slice\n"));
        free(text);
        ng_config_free(c);
        c = global_kv("unreadable_ok", "", true);
        ck_assert_str_eq(c->unreadable_ok, "");
        ng_config_free(c);
        static const char *const bad[] = {
                "falcon-sensor",        /* a comm: anyone can take it */
                "/",                    /* every process on cgroup v1 */
                "///",
                "init,",                /* an empty entry */
                "init,,/a",
                "/a//b",
                "/a/../b",
                "/a/./b",
                "INIT",
                "system.slice/x.service",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct diags ds;
                char conf_text[256];

                snprintf(conf_text, sizeof(conf_text), "[global]\nunreadable_ok = %s\n", bad[i]);
                ck_assert_ptr_null(load_str(conf_text, -EINVAL, &ds));
                expect_diag(&ds, 0, LOG_ERR, 2, "invalid unreadable_ok");
        }
        /* the reason says why a name will not do, and what will */
        struct diags ds;
        load_str("[global]\nunreadable_ok = process_api\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "neither init nor a cgroup path");
        load_str("[global]\nunreadable_ok = /\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "the root cgroup");
}
END_TEST

/* ---- diagnostics ------------------------------------------------------ */

START_TEST(test_unknown_key_warns)
{
        const char *path = CONF "/unknown-key.conf";
        struct ng_config *c = NULL;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(path, collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 2);
        expect_diag(&ds, 0, LOG_WARNING, 5, "frobnicate");
        ck_assert_str_eq(ds.d[0].file, path);
        expect_diag(&ds, 1, LOG_WARNING, 10, "colour");
        expect_diag(&ds, 1, LOG_WARNING, 10, "[instance db]");
        ck_assert_uint_eq(c->interval_usec, 10000000);
        ck_assert_uint_eq(c->cooldown_usec, 300000000);
        ck_assert_uint_eq(c->n_instances, 1);
        ng_config_free(c);
}
END_TEST

START_TEST(test_invalid_value_fails)
{
        const char *path = CONF "/invalid-value.conf";
        struct ng_config *c = (struct ng_config *)0x1;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(path, collect, &ds, &c), -EINVAL);
        ck_assert_ptr_eq(c, (struct ng_config *)0x1);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_ERR, 3, "cyclops_fraction");
        expect_diag(&ds, 0, LOG_ERR, 3, "\"0.49\"");
        expect_diag(&ds, 0, LOG_ERR, 3, "out of range");
        ck_assert_str_eq(ds.d[0].file, path);
        /* A NULL callback still fails the load. */
        ck_assert_int_eq(ng_config_load(path, NULL, NULL, &c), -EINVAL);
        ck_assert_ptr_eq(c, (struct ng_config *)0x1);
}
END_TEST

START_TEST(test_duplicate_instance)
{
        struct ng_config *c = NULL;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/dup-instance.conf", collect, &ds, &c), -EINVAL);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_ERR, 7, "duplicate section [instance ORCL], first at line 1");
        load_str("[global]\n[instance a]\nmatch_comm = a\n[global]\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 4, "duplicate section [global], first at line 1");
        /* Back to back, inih alone would see one section. */
        load_str("[instance a]\nmatch_comm = a\n[instance a]\npidfile = /a.pid\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 3, "duplicate");
}
END_TEST

START_TEST(test_instance_without_matcher)
{
        struct ng_config *c = NULL;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/no-matcher.conf", collect, &ds, &c), -EINVAL);
        ck_assert_uint_eq(ds.n, 2);
        expect_diag(&ds, 0, LOG_ERR, 1, "[instance ORCL] has no matcher");
        /* A header with no keys at all is seen too. */
        expect_diag(&ds, 1, LOG_ERR, 5, "[instance empty] has no matcher");
        load_str("[instance last]\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 1, "no matcher");
}
END_TEST

START_TEST(test_malformed_lines)
{
        struct ng_config *c = NULL;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/no-equals.conf", collect, &ds, &c), -EINVAL);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_ERR, 3, "key = value");

        memset(&ds, 0, sizeof(ds));
        ck_assert_int_eq(ng_config_load(CONF "/unterminated-section.conf", collect, &ds, &c),
                         -EINVAL);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_ERR, 4, "unterminated section");

        memset(&ds, 0, sizeof(ds));
        ck_assert_int_eq(ng_config_load(CONF "/indented.conf", collect, &ds, &c), -EINVAL);
        ck_assert_uint_eq(ds.errors, 3);
        expect_diag(&ds, 0, LOG_ERR, 2, "whitespace");
        expect_diag(&ds, 1, LOG_ERR, 3, "whitespace");
        expect_diag(&ds, 2, LOG_ERR, 1, "no matcher");

        load_str("interval = 10s\n[global]\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 1, "outside of any section");
        load_str("[global] trailing\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 1, "after section header");
        load_str("[global]\n= 10s\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "key = value");
        load_str("[instance x]\nmatch_comm =;x\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "starts with ';'");
        load_str("[global]\ninterval = 10s\ninterval = 20s\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 3, "already set at line 2");
        load_str("[instance]\nmatch_comm = x\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 1, "invalid instance name");
        load_str("[instance a/b]\nmatch_comm = x\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 1, "invalid instance name");
}
END_TEST

START_TEST(test_unknown_section_warns)
{
        struct ng_config *c;
        struct diags ds;

        c = load_str("[logging]\nlevel = debug\n[global]\ninterval = 5s\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_WARNING, 1, "unknown section [logging]");
        ck_assert_uint_eq(c->interval_usec, 5000000);
        ng_config_free(c);
}
END_TEST

START_TEST(test_all_errors_reported)
{
        struct diags ds;

        load_str("[global]\ninterval = 1x\nmode = fix\nbogus = 1\n[instance a]\nnodes = z\n",
                 -EINVAL, &ds);
        ck_assert_uint_eq(ds.n, 5);
        expect_diag(&ds, 0, LOG_ERR, 2, "interval");
        expect_diag(&ds, 1, LOG_ERR, 3, "expected audit or enforce");
        expect_diag(&ds, 2, LOG_WARNING, 4, "bogus");
        expect_diag(&ds, 3, LOG_ERR, 6, "nodes");
        expect_diag(&ds, 4, LOG_ERR, 5, "no matcher");
}
END_TEST

START_TEST(test_long_line)
{
        char text[1024];
        struct diags ds;

        snprintf(text, sizeof(text), "[global]\nsocket = /%0500d\ninterval = 1y\n", 0);
        load_str(text, -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 2, "line longer than");
        /* The rest of the over-long line is not read as a line of its own. */
        expect_diag(&ds, 1, LOG_ERR, 3, "interval");
        ck_assert_uint_eq(ds.n, 2);
}
END_TEST

START_TEST(test_nul_byte)
{
        char path[] = "/tmp/test-config-XXXXXX";
        int fd = mkstemp(path);
        struct ng_config *c = NULL;
        struct diags ds = {};

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "[global]\ninterval = 1\0s\n", 24), 24);
        close(fd);
        ck_assert_int_eq(ng_config_load(path, collect, &ds, &c), -EINVAL);
        expect_diag(&ds, 0, LOG_ERR, 2, "NUL");
        unlink(path);
}
END_TEST

START_TEST(test_crlf_bom_inline_comment)
{
        struct ng_config *c = NULL;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/crlf.conf", collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 0);
        ck_assert_uint_eq(c->interval_usec, 15000000);
        ck_assert_int_eq(c->mode, NG_MODE_ENFORCE);
        ck_assert_uint_eq(c->n_instances, 1);
        ck_assert_str_eq(c->instances[0].match_comm, "db");
        ng_config_free(c);
}
END_TEST

/* ---- [instance] keys -------------------------------------------------- */

/* Loads "[instance t]\nmatch_comm = t\nkey = value\n". */
static struct ng_config *instance_kv(const char *key, const char *value, bool ok)
{
        char text[512];
        struct diags ds;
        struct ng_config *c;

        snprintf(text, sizeof(text), "[instance t]\nmatch_comm = t\n%s = %s\n", key, value);
        c = load_str(text, ok ? 0 : -EINVAL, &ds);
        if (ok)
                ck_assert_uint_eq(c->n_instances, 1);
        else
                expect_diag(&ds, 0, LOG_ERR, 3, key);
        return c;
}

START_TEST(test_full_file)
{
        struct ng_config *c = NULL;
        const struct ng_instance_config *o, *p;
        struct diags ds = {};

        ck_assert_int_eq(ng_config_load(CONF "/full.conf", collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 0);
        ck_assert_uint_eq(c->interval_usec, 500000);
        ck_assert_double_eq(c->cyclops_fraction, 0.75);
        ck_assert_double_eq(c->pagetable_share, 0.05);
        ck_assert_uint_eq(c->node_free_floor_bytes, UINT64_C(2) << 30);
        ck_assert_uint_eq(c->min_segment_size_bytes, UINT64_C(128) << 20);
        ck_assert_uint_eq(c->sample_every, 5);
        ck_assert_uint_eq(c->sample_pages, 8192);
        ck_assert_uint_eq(c->full_scan_every, 3);
        ck_assert_uint_eq(c->stuck_after_usec, 30000000);
        ck_assert(!c->autodiscover);
        ck_assert_int_eq(c->mode, NG_MODE_ENFORCE);
        ck_assert_uint_eq(c->cooldown_usec, UINT64_C(3600000000));
        ck_assert_str_eq(c->socket_path, "/run/ng/ctl.sock");
        ck_assert_str_eq(c->metrics_file, "");
        ck_assert_str_eq(c->status_group, "dba");
        ck_assert_uint_eq(c->n_instances, 2);

        o = &c->instances[0];
        ck_assert_str_eq(o->name, "ORCL");
        ck_assert_uint_eq(o->line, 20);
        ck_assert_str_eq(o->match_comm, "ora_*_ORCL");
        ck_assert_ptr_null(o->match_cmdline);
        ck_assert_ptr_null(o->pidfile);
        ck_assert_ptr_null(o->cgroup);
        ck_assert_uint_eq(o->shm_owner_uid, 54321);
        ck_assert_int_eq(o->policy, NG_POLICY_INTERLEAVE);
        ck_assert_uint_eq(ng_bitmap_count(&o->nodes), 2);
        ck_assert(ng_bitmap_test(&o->nodes, 0) && ng_bitmap_test(&o->nodes, 1));
        ck_assert_int_eq(o->hugepages, NG_HUGEPAGES_REQUIRED);
        ck_assert_uint_eq(o->expected_size_bytes, UINT64_C(8) << 30);
        ck_assert_uint_eq(o->enforce, NG_ENFORCE_CPUSET | NG_ENFORCE_HUGEPAGES);
        ck_assert(!o->span_namespaces);

        p = &c->instances[1];
        ck_assert_str_eq(p->name, "pg-main.16");
        ck_assert_str_eq(p->cgroup, "/system.slice/postgresql.service");
        ck_assert_str_eq(p->pidfile, "/run/postgresql/16-main.pid");
        ck_assert_str_eq(p->match_cmdline, "*/postgres -D /var/lib/postgresql/16/main*");
        ck_assert_ptr_null(p->match_comm);
        ck_assert_uint_eq(p->shm_owner_uid, NG_UID_UNSET);
        ck_assert_int_eq(p->policy, NG_POLICY_BIND);
        ck_assert_uint_eq(ng_bitmap_count(&p->nodes), 1);
        ck_assert(ng_bitmap_test(&p->nodes, 2));
        ck_assert_int_eq(p->hugepages, NG_HUGEPAGES_OFF);
        ck_assert_uint_eq(p->expected_size_bytes, 0);
        ck_assert_uint_eq(p->enforce, NG_ENFORCE_REBALANCE);
        ck_assert(p->span_namespaces);
        ng_config_free(c);
}
END_TEST

START_TEST(test_instance_defaults)
{
        struct ng_config *c = instance_kv("pidfile", "/run/t.pid", true);
        const struct ng_instance_config *t = &c->instances[0];

        ck_assert_str_eq(t->name, "t");
        ck_assert_uint_eq(t->line, 1);
        ck_assert_int_eq(t->policy, NG_POLICY_LOCAL);
        ck_assert_int_eq(t->hugepages, NG_HUGEPAGES_PREFERRED);
        ck_assert(ng_bitmap_empty(&t->nodes));
        ck_assert_uint_eq(t->expected_size_bytes, 0);
        ck_assert_uint_eq(t->enforce, 0);
        ck_assert_uint_eq(t->shm_owner_uid, NG_UID_UNSET);
        ck_assert(!t->span_namespaces);
        ng_config_free(c);
}
END_TEST

/* span_namespaces: a boolean, no by default; not a matcher. */
START_TEST(test_span_namespaces)
{
        struct ng_config *c = instance_kv("span_namespaces", "yes", true);
        struct diags ds;
        char *text;

        ck_assert(c->instances[0].span_namespaces);
        text = dump_to_string(c);
        ck_assert(strstr(text, "\nspan_namespaces = yes\n"));
        free(text);
        ng_config_free(c);
        c = instance_kv("span_namespaces", "no", true);
        ck_assert(!c->instances[0].span_namespaces);
        ng_config_free(c);
        ck_assert_ptr_null(instance_kv("span_namespaces", "maybe", false));
        ck_assert_ptr_null(instance_kv("span_namespaces", "", false));
        /* alone it matches nothing: the section still needs a matcher */
        c = load_str("[instance s]\nspan_namespaces = yes\n", -EINVAL, &ds);
        ck_assert_ptr_null(c);
        expect_diag(&ds, 0, LOG_ERR, 1, "has no matcher");
}
END_TEST

START_TEST(test_shm_owner)
{
        struct ng_config *c;
        struct diags ds;

        c = load_str("[instance r]\nshm_owner = root\n", 0, &ds);
        ck_assert_uint_eq(c->instances[0].shm_owner_uid, 0);
        ng_config_free(c);
        c = load_str("[instance n]\nshm_owner = 54321\n", 0, &ds);
        ck_assert_uint_eq(c->instances[0].shm_owner_uid, 54321);
        ng_config_free(c);
        c = load_str("[instance n]\nshm_owner = 4294967294\n", 0, &ds);
        ck_assert_uint_eq(c->instances[0].shm_owner_uid, 4294967294u);
        ng_config_free(c);
        ck_assert_ptr_null(instance_kv("shm_owner", "4294967295", false));
        ck_assert_ptr_null(instance_kv("shm_owner", "-1", false));
        ck_assert_ptr_null(instance_kv("shm_owner", "no-such-user-numaguard", false));
        ck_assert_ptr_null(instance_kv("shm_owner", "", false));
}
END_TEST

START_TEST(test_enforce_lists)
{
        static const struct {
                const char *s;
                unsigned v;
        } ok[] = {
                { "none", 0 },
                { "", 0 },
                { "cpuset", NG_ENFORCE_CPUSET },
                { "cpuset,hugepages", NG_ENFORCE_CPUSET | NG_ENFORCE_HUGEPAGES },
                { "rebalance , CPUSET", NG_ENFORCE_REBALANCE | NG_ENFORCE_CPUSET },
                { "cpuset,hugepages,rebalance",
                  NG_ENFORCE_CPUSET | NG_ENFORCE_HUGEPAGES | NG_ENFORCE_REBALANCE },
                { "hugepages,hugepages", NG_ENFORCE_HUGEPAGES },
        };
        static const char *const bad[] = {
                "cpuset,,hugepages", "cpuset,", ",cpuset", "cpu", "none,cpuset", "cpusets", "all",
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                struct ng_config *c = instance_kv("enforce", ok[i].s, true);

                ck_assert_msg(c->instances[0].enforce == ok[i].v, "\"%s\" -> %#x", ok[i].s,
                              c->instances[0].enforce);
                ng_config_free(c);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_ptr_null(instance_kv("enforce", bad[i], false));
}
END_TEST

START_TEST(test_nodes_lists)
{
        struct ng_config *c;
        const struct ng_bitmap *n;

        c = instance_kv("nodes", "0-3,5", true);
        n = &c->instances[0].nodes;
        ck_assert_uint_eq(ng_bitmap_count(n), 5);
        for (unsigned i = 0; i <= 5; i++)
                ck_assert(ng_bitmap_test(n, i) == (i != 4));
        ng_config_free(c);
        c = instance_kv("nodes", "1023", true);
        ck_assert(ng_bitmap_test(&c->instances[0].nodes, 1023));
        ng_config_free(c);
        ck_assert_ptr_null(instance_kv("nodes", "1024", false));
        ck_assert_ptr_null(instance_kv("nodes", "", false));
        ck_assert_ptr_null(instance_kv("nodes", "0-", false));
        ck_assert_ptr_null(instance_kv("nodes", "3-1", false));
        ck_assert_ptr_null(instance_kv("nodes", "zero", false));
}
END_TEST

START_TEST(test_instance_choices)
{
        struct ng_config *c;
        struct diags ds;

        ck_assert_ptr_null(instance_kv("policy", "spread", false));
        ck_assert_ptr_null(instance_kv("hugepages", "yes", false));
        ck_assert_ptr_null(instance_kv("expected_size", "8X", false));
        ck_assert_ptr_null(instance_kv("pidfile", "run/x.pid", false));
        ck_assert_ptr_null(instance_kv("cgroup", "oracle", false));
        ck_assert_ptr_null(instance_kv("match_cmdline", "", false));
        c = instance_kv("policy", "interleave", true);
        ck_assert_int_eq(c->instances[0].policy, NG_POLICY_INTERLEAVE);
        ng_config_free(c);
        /* bind without nodes cannot be honoured. */
        load_str("[instance b]\nmatch_comm = b\npolicy = bind\n", -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 3, "needs a node list");
        c = load_str("[instance b]\nmatch_comm = b\npolicy = bind\nnodes = 1\n", 0, &ds);
        ng_config_free(c);
}
END_TEST

START_TEST(test_comm_too_long_warns)
{
        struct ng_config *c;
        struct diags ds;

        c = load_str("[instance o]\nmatch_comm = ora_pmon_VERYLONGSID\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_WARNING, 2, "can never match a comm");
        expect_diag(&ds, 0, LOG_WARNING, 2, "argv[0]");
        ng_config_free(c);
        /* A glob is judged by the shortest name it can match. */
        c = load_str("[instance o]\nmatch_comm = ora_*_FINPROD0123\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_WARNING, 2, "ora_*_FINPROD0123");
        ng_config_free(c);
        c = load_str("[instance o]\nmatch_comm = ora_*_[A-Z]?LONGER\\*x\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 0);
        ng_config_free(c);
        c = load_str("[instance o]\nmatch_comm = ora_*_[A-Z]?LONGER\\*xy\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 1);
        ng_config_free(c);
        c = load_str("[instance o]\nmatch_comm = ora_*_ORCL\n", 0, &ds);
        ck_assert_uint_eq(ds.n, 0);
        ng_config_free(c);
}
END_TEST

START_TEST(test_instance_names)
{
        char text[256];
        struct ng_config *c;
        struct diags ds;
        char name[65];

        /* 63 characters: longer than inih's 49-byte section buffer. */
        memset(name, 'a', 63);
        name[0] = 'Z';
        name[62] = 'z';
        name[63] = '\0';
        snprintf(text, sizeof(text), "[instance %s]\nmatch_comm = x\n[instance %.62sy]\n"
                 "match_comm = y\n", name, name);
        c = load_str(text, 0, &ds);
        ck_assert_uint_eq(c->n_instances, 2);
        ck_assert_str_eq(c->instances[0].name, name);
        ck_assert_uint_eq(strlen(c->instances[1].name), 63);
        ng_config_free(c);
        memset(name, 'a', 64);
        name[64] = '\0';
        snprintf(text, sizeof(text), "[instance %s]\nmatch_comm = x\n", name);
        load_str(text, -EINVAL, &ds);
        expect_diag(&ds, 0, LOG_ERR, 1, "invalid instance name");
        c = load_str("[instance  A-z_0.9 ]\nmatch_comm = x\n", 0, &ds);
        ck_assert_str_eq(c->instances[0].name, "A-z_0.9");
        ng_config_free(c);
}
END_TEST

/* ---- dump and the shipped sample ------------------------------------- */

START_TEST(test_dump_round_trip)
{
        struct ng_config *c = NULL, *d;
        struct diags ds = {};
        char *text;

        ck_assert_int_eq(ng_config_load(CONF "/full.conf", collect, &ds, &c), 0);
        text = dump_to_string(c);
        d = load_str(text, 0, &ds);
        ck_assert_uint_eq(ds.n, 0);
        assert_same_config(c, d);
        ck_assert_str_eq(d->instances[0].match_comm, "ora_*_ORCL");
        ck_assert_uint_eq(d->instances[1].enforce, NG_ENFORCE_REBALANCE);
        ck_assert(strstr(text, "\ninterval = 500ms\n"));
        ck_assert(strstr(text, "\ncooldown = 1h\n"));
        ck_assert(strstr(text, "\nmin_segment_size = 128M\n"));
        ck_assert(strstr(text, "\nenforce = cpuset,hugepages\n"));
        ck_assert(strstr(text, "\nspan_namespaces = yes\n"));
        ck_assert(strstr(text, "\nmetrics_file =\n"));
        free(text);
        ng_config_free(c);
        ng_config_free(d);
}
END_TEST

/* Uncomments "#key = value" lines (no blank after '#'): all of them when
 * instance is true, else only those before the example [instance]. */
static char *uncomment_sample(bool instance)
{
        char *sample = ng_test_read(SAMPLE, NULL);
        char *out = calloc(1, strlen(sample) + 1), *o = out;
        bool in_example = false;

        ck_assert_ptr_nonnull(out);
        for (char *line = strtok(sample, "\n"); line; line = strtok(NULL, "\n")) {
                bool setting = line[0] == '#' && (line[1] == '[' || (line[1] >= 'a' && line[1] <= 'z'));

                if (strncmp(line, "#[instance ", 11) == 0)
                        in_example = true;
                if (setting && (instance || !in_example))
                        line++;
                o += sprintf(o, "%s\n", line);
        }
        free(sample);
        return out;
}

START_TEST(test_sample_equals_defaults)
{
        char *text = uncomment_sample(false), *sample = ng_test_read(SAMPLE, NULL);
        struct ng_config *c, *d = NULL;
        struct diags ds;
        char *dump;

        c = load_str(text, 0, &ds);
        ck_assert_msg(ds.n == 0, "sample: line %u: %s", ds.d[0].line, ds.d[0].msg);
        ck_assert_uint_eq(c->n_instances, 0);
        ck_assert_int_eq(ng_config_new_default(&d), 0);
        assert_same_config(c, d);
        /* Every key is there, written the way the dump writes its default. */
        dump = dump_to_string(d);
        for (char *line = strtok(dump, "\n"); line; line = strtok(NULL, "\n")) {
                char want[1024];

                if (line[0] == '[')
                        continue;
                snprintf(want, sizeof(want), "\n#%s\n", line);
                ck_assert_msg(strstr(sample, want), "%s lacks \"#%s\"", SAMPLE, line);
        }
        free(dump);
        free(sample);
        free(text);
        ng_config_free(c);
        ng_config_free(d);
}
END_TEST

START_TEST(test_sample_example_instance)
{
        char *text = uncomment_sample(true);
        struct ng_config *c;
        struct diags ds;

        c = load_str(text, 0, &ds);
        ck_assert_msg(ds.n == 0, "sample: line %u: %s", ds.d[0].line, ds.d[0].msg);
        ck_assert_uint_eq(c->n_instances, 1);
        ck_assert_str_eq(c->instances[0].name, "ORCL");
        ng_config_free(c);
        free(text);
}
END_TEST


/* ---- drop-ins --------------------------------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

struct dropin_tree {
        char dir[64], main[128], d[128];
};

static void dropin_tree(struct dropin_tree *t)
{
        snprintf(t->dir, sizeof(t->dir), "/tmp/ng-test-dropin.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(t->dir));
        snprintf(t->main, sizeof(t->main), "%s/numaguard.conf", t->dir);
        snprintf(t->d, sizeof(t->d), "%s/numaguard.conf.d", t->dir);
        ck_assert_int_eq(mkdir(t->d, 0755), 0);
}

static void dropin_tree_rm(const struct dropin_tree *t)
{
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
        ck_assert_int_eq(system(cmd), 0);
}

/* Read in name order after the main file: a later [global] key wins, an
 * instance is added; files not named *.conf, and hidden ones, are not read. */
START_TEST(test_dropins_merge_in_order)
{
        struct dropin_tree t;
        struct ng_config *c = NULL;
        struct diags ds = {};
        char **paths;
        size_t n;

        dropin_tree(&t);
        write_file(t.dir, "numaguard.conf", "[global]\ninterval = 10s\n[instance MAIN]\nmatch_comm = main\n");
        write_file(t.d, "20-b.conf", "[global]\ninterval = 20s\n[instance B]\nmatch_comm = b\n");
        write_file(t.d, "10-a.conf", "[global]\ninterval = 5s\ncooldown = 1h\n[instance A]\nmatch_comm = a\n");
        write_file(t.d, "30-c.conf.dpkg-old", "[instance OLD]\nmatch_comm = old\n");
        write_file(t.d, ".40-hidden.conf", "[instance HIDDEN]\nmatch_comm = h\n");
        ck_assert_int_eq(ng_config_dropins(t.main, &paths, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_ptr_nonnull(strstr(paths[0], "/numaguard.conf.d/10-a.conf"));
        ck_assert_ptr_nonnull(strstr(paths[1], "/numaguard.conf.d/20-b.conf"));
        ng_config_dropins_free(paths, n);
        ck_assert_int_eq(ng_config_load(t.main, collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 0);
        ck_assert_uint_eq(c->interval_usec, 20 * 1000000ULL);
        ck_assert_uint_eq(c->cooldown_usec, 3600 * 1000000ULL);
        ck_assert_uint_eq(c->n_instances, 3);
        ck_assert_str_eq(c->instances[0].name, "MAIN");
        ck_assert_str_eq(c->instances[1].name, "A");
        ck_assert_str_eq(c->instances[2].name, "B");
        ng_config_free(c);
        dropin_tree_rm(&t);
}
END_TEST

/* Errors name the drop-in and its line; an instance defined twice names
 * both files; a drop-in that is not a regular file is refused. */
START_TEST(test_dropins_errors)
{
        struct dropin_tree t;
        struct ng_config *c = (struct ng_config *)0x1;
        struct diags ds = {};
        char fifo[256];

        dropin_tree(&t);
        write_file(t.dir, "numaguard.conf", "[instance A]\nmatch_comm = a\n");
        write_file(t.d, "10-a.conf", "# again\n[instance A]\nmatch_comm = a2\n");
        write_file(t.d, "20-bad.conf", "[global]\ninterval = soon\n");
        ck_assert_int_eq(ng_config_load(t.main, collect, &ds, &c), -EINVAL);
        ck_assert_ptr_eq(c, (struct ng_config *)0x1);
        expect_diag(&ds, 0, LOG_ERR, 2, "duplicate section [instance A], first at ");
        ck_assert_ptr_nonnull(strstr(ds.d[0].msg, "/numaguard.conf:1"));
        ck_assert_ptr_nonnull(strstr(ds.d[0].file, "/numaguard.conf.d/10-a.conf"));
        expect_diag(&ds, 1, LOG_ERR, 2, "invalid interval");
        ck_assert_ptr_nonnull(strstr(ds.d[1].file, "/numaguard.conf.d/20-bad.conf"));
        ck_assert_uint_eq(ds.n, 2);

        memset(&ds, 0, sizeof(ds));
        write_file(t.d, "10-a.conf", "[instance B]\nmatch_comm = b\n");
        write_file(t.d, "20-bad.conf", "");
        snprintf(fifo, sizeof(fifo), "%s/30-fifo.conf", t.d);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(ng_config_load(t.main, collect, &ds, &c), -EINVAL);
        expect_diag(&ds, 0, LOG_ERR, 0, "is a FIFO, not a regular file");
        ck_assert_str_eq(ds.d[0].file, fifo);
        dropin_tree_rm(&t);
}
END_TEST

/* No main file: the drop-ins over the defaults; neither: -ENOENT as before. */
START_TEST(test_dropins_without_main)
{
        struct dropin_tree t;
        struct ng_config *c = NULL;
        struct diags ds = {};

        dropin_tree(&t);
        ck_assert_int_eq(ng_config_load(t.main, collect, &ds, &c), -ENOENT);
        write_file(t.d, "50-orcl.conf", "[instance ORCL]\nmatch_comm = ora_*_ORCL\n");
        ck_assert_int_eq(ng_config_load(t.main, collect, &ds, &c), 0);
        ck_assert_uint_eq(c->n_instances, 1);
        ck_assert_uint_eq(c->interval_usec, 30 * 1000000ULL);
        ng_config_free(c);
        dropin_tree_rm(&t);
}
END_TEST

/* nodes = 0-3 on a one-node host: accepted, with a warning at its line. */
START_TEST(test_nodes_beyond_host_warn)
{
        struct ng_config *c = NULL;
        struct diags ds = {};
        struct ng_bitmap host = {0};
        char path[] = "/tmp/ng-test-nodes.XXXXXX";
        int fd = mkstemp(path);
        const char *text = "[instance A]\nmatch_comm = a\npolicy = interleave\nnodes = 0-3\n"
                           "[instance B]\nmatch_comm = b\nnodes = 0\n";

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        ng_bitmap_set(&host, 0);
        ck_assert_int_eq(ng_config_load_checked(path, &host, collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 1);
        expect_diag(&ds, 0, LOG_WARNING, 4, "[instance A] nodes 1-3 do not exist on this host (its nodes: 0)");
        ng_config_free(c);
        memset(&ds, 0, sizeof(ds));
        ck_assert_int_eq(ng_config_load(path, collect, &ds, &c), 0);
        ck_assert_uint_eq(ds.n, 0);
        ng_config_free(c);
        unlink(path);
}
END_TEST

static Suite *config_suite(void)
{
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_size);
        tcase_add_test(tc, test_parse_duration);
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_empty_file_is_defaults);
        tcase_add_test(tc, test_missing_file);
        tcase_add_test(tc, test_not_regular_file);
        tcase_add_test(tc, test_many_instances);
        tcase_add_test(tc, test_interval_bounds);
        tcase_add_test(tc, test_range_message);
        tcase_add_test(tc, test_fractions);
        tcase_add_test(tc, test_sizes_in_config);
        tcase_add_test(tc, test_other_global_keys);
        tcase_add_test(tc, test_unreadable_ok);
        tcase_add_test(tc, test_unknown_key_warns);
        tcase_add_test(tc, test_invalid_value_fails);
        tcase_add_test(tc, test_duplicate_instance);
        tcase_add_test(tc, test_instance_without_matcher);
        tcase_add_test(tc, test_malformed_lines);
        tcase_add_test(tc, test_unknown_section_warns);
        tcase_add_test(tc, test_all_errors_reported);
        tcase_add_test(tc, test_long_line);
        tcase_add_test(tc, test_nul_byte);
        tcase_add_test(tc, test_crlf_bom_inline_comment);
        tcase_add_test(tc, test_full_file);
        tcase_add_test(tc, test_instance_defaults);
        tcase_add_test(tc, test_span_namespaces);
        tcase_add_test(tc, test_shm_owner);
        tcase_add_test(tc, test_enforce_lists);
        tcase_add_test(tc, test_nodes_lists);
        tcase_add_test(tc, test_instance_choices);
        tcase_add_test(tc, test_comm_too_long_warns);
        tcase_add_test(tc, test_instance_names);
        tcase_add_test(tc, test_dump_round_trip);
        tcase_add_test(tc, test_sample_equals_defaults);
        tcase_add_test(tc, test_sample_example_instance);
        tcase_add_test(tc, test_dropins_merge_in_order);
        tcase_add_test(tc, test_dropins_errors);
        tcase_add_test(tc, test_dropins_without_main);
        tcase_add_test(tc, test_nodes_beyond_host_warn);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(config_suite());
}

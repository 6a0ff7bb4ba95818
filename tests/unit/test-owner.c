/* Unit tests for the owner parsers (ng-owner.h): libcgroup's cgconfig.conf
 * grammar (the cgconfig.conf(5) examples and libcgroup's own sample, here
 * uncommented), systemd unit files and set-property drop-ins, and unit
 * names from cgroup paths. */

#include "cleanup.h"
#include "act-cpuset-internal.h"
#include "ng-act-cpuset.h"
#include "ng-owner.h"
#include "ng-test.h"
#include "owner-internal.h"
#include "util.h"

/* libcgroup samples/config/cgconfig.conf, uncommented, plus a cpuset group
 * as cgconfig.conf(5) writes one and the blocks a parser must skip. */
static const char sample[] =
        "#\n"
        "#  Copyright IBM Corporation. 2007\n"
        "#\n"
        "group daemons/www {\n"
        "\tperm {\n"
        "\t\ttask {\n"
        "\t\t\tuid = root;\n"
        "\t\t\tgid = webmaster;\n"
        "\t\t}\n"
        "\t\tadmin {\n"
        "\t\t\tuid = root;\n"
        "\t\t\tgid = root;\n"
        "\t\t}\n"
        "\t}\n"
        "\tcpu {\n"
        "\t\tcpu.shares = 1000;\n"
        "\t}\n"
        "}\n"
        "\n"
        "mount {\n"
        "\tcpu = /mnt/cgroups/cpu;\n"
        "\tcpuacct = /mnt/cgroups/cpuacct;\n"
        "}\n"
        "template \"users/%u\" {\n"
        "\tcpuset { cpuset.mems = 0; }\n"
        "}\n"
        "systemd {\n"
        "\tslice = database.slice;\n"
        "\tscope = db.scope;\n"
        "}\n"
        "group \"oracle\" {\n"
        "\tcpuset {\n"
        "# processor_group_name, in the first column as cgconfigparser wants\n"
        "\t\tcpuset.cpus = \"1-9\";\n"
        "\t\tcpuset.mems=0;\n"
        "\t}\n"
        "}\n";

START_TEST(cgconfig_sample)
{
        struct ng_cgconfig_group *g = NULL;
        size_t n = 0;
        unsigned line = 0;
        ck_assert_int_eq(ng_parse_cgconfig(sample, &g, &n, &line), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(g[0].name, "daemons/www");
        ck_assert(!g[0].has_cpuset);
        ck_assert(!g[0].cpus.present);
        ck_assert_str_eq(g[1].name, "oracle");
        ck_assert(g[1].has_cpuset);
        ck_assert(g[1].cpus.present && g[1].mems.present);
        ck_assert_str_eq(g[1].cpus.value, "1-9");
        ck_assert_str_eq(g[1].mems.value, "0");
        ck_assert_uint_eq(g[1].cpus.line, 34);
        ck_assert_uint_eq(g[1].mems.line, 35);
        /* positions cover the value as written, quotes included */
        ck_assert_int_eq(strncmp(sample + g[1].cpus.start, "\"1-9\"", g[1].cpus.end - g[1].cpus.start), 0);
        ck_assert_uint_eq(g[1].cpus.end - g[1].cpus.start, 5);
        ck_assert_int_eq(sample[g[1].mems.start], '0');
        ck_assert_int_eq(sample[g[1].cpuset_close], '}');
        ck_assert_uint_eq(g[1].cpuset_close_line, 36);
        free(g);
}
END_TEST

START_TEST(cgconfig_bad)
{
        static const struct {
                const char *text;
                unsigned line;
        } bad[] = {
                { "group oracle {\n cpuset {\n  cpuset.mems = 0\n }\n}\n", 4 },       /* missing ';' */
                { "group oracle {\n", 2 },                                              /* unterminated */
                { "group {\n}\n", 1 },                                                  /* no name */
                { "}\n", 1 },
                { "group x { cpuset { cpuset.mems = \"0; } }\n", 1 },                  /* open quote */
                { "# only\n\n group x { cpuset { = 0; } }", 3 },
                /* cgconfigparser's lexer: '#' starts a comment in the first column only */
                { "group x {\n cpuset {\n  cpuset.mems = 0; # node 0\n }\n}\n", 3 },
                { "group x {\n  # indented\n}\n", 2 },
                { "group x:y { }\n", 1 },
                { "a { b { c { d { e { f { g { h { i { j { k { l { m { n { o { p { q { r { } } } } } } } } } } } } } } } } } }", 1 },
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct ng_cgconfig_group *g = (void *) 1;
                size_t n = 7;
                unsigned line = 0;
                ck_assert_msg(ng_parse_cgconfig(bad[i].text, &g, &n, &line) == -EINVAL, "case %zu", i);
                ck_assert_msg(line == bad[i].line, "case %zu: line %u", i, line);
                ck_assert_ptr_eq(g, (void *) 1);
                ck_assert_uint_eq(n, 7);
        }
        struct ng_cgconfig_group *g = NULL;
        size_t n = 9;
        ck_assert_int_eq(ng_parse_cgconfig("# nothing\n", &g, &n, NULL), 0);
        ck_assert_uint_eq(n, 0);
        free(g);
}
END_TEST

/* Whether cgconfig text mounts a controller as a v1 hierarchy. */
START_TEST(cgconfig_mounts)
{
        ck_assert_int_eq(ng_cgconfig_mounts("mount {\n\tcpuset = /sys/fs/cgroup/cpuset;\n\tcpu = /cgroup/cpu;\n}\n",
                                            "cpuset"), 1);
        ck_assert_int_eq(ng_cgconfig_mounts("mount {\n\tcpu = /cgroup/cpu;\n}\n", "cpuset"), 0);
        ck_assert_int_eq(ng_cgconfig_mounts(sample, "cpuset"), 0);      /* groups only */
        ck_assert_int_eq(ng_cgconfig_mounts("group a {\n\tcpuset {\n\t\tcpuset.mems = 0;\n\t}\n}\n"
                                            "mount {\n\t\"cpuset\" = \"/c/cpuset\";\n}\n", "cpuset"), 1);
        ck_assert_int_eq(ng_cgconfig_mounts("mount {\n\tcpuset /c;\n}\n", "cpuset"), -EINVAL);
        ck_assert_int_eq(ng_cgconfig_mounts("mount cpuset\n", "cpuset"), -EINVAL);
        ck_assert_int_eq(ng_cgconfig_mounts("mount {\n\tcpuset = /c;\n", "cpuset"), -EINVAL);
        ck_assert_int_eq(ng_cgconfig_mounts("", "cpuset"), 0);
}
END_TEST

/* A unit as shipped, then what `systemctl set-property` persisted (systemd
 * 252 writes exactly this drop-in into /etc/systemd/system.control). */
START_TEST(unit_files)
{
        struct ng_unit_cpuset u = {0};
        ck_assert_int_eq(ng_parse_unit_cpuset("[Unit]\nDescription=x\nAllowedCPUs=7\n[Service]\nExecStart=/bin/true\n"
                                              "AllowedCPUs=0 2\nAllowedCPUs=4-5\nAllowedMemoryNodes = 6\n"
                                              "[Install]\nAllowedMemoryNodes=1\n", &u), 0);
        char l[64];
        ck_assert(u.has_cpus && u.has_mems);
        ng_bitmap_format_list(&u.cpus, l, sizeof(l));
        ck_assert_str_eq(l, "0,2,4-5");        /* assignments add up; [Unit] is not the cgroup's */
        ng_bitmap_format_list(&u.mems, l, sizeof(l));
        ck_assert_str_eq(l, "6");
        ck_assert_int_eq(ng_parse_unit_cpuset("# This is a drop-in unit file extension, created via \"systemctl "
                                              "set-property\"\n# or an equivalent operation. Do not edit.\n"
                                              "[Service]\nAllowedMemoryNodes=\nAllowedMemoryNodes=0\n", &u), 0);
        ng_bitmap_format_list(&u.mems, l, sizeof(l));
        ck_assert_str_eq(l, "0");               /* the empty one reset the 6 */
        ck_assert_int_eq(ng_parse_unit_cpuset("[Service]\nAllowedCPUs=\n", &u), 0);
        ck_assert(!u.has_cpus);
        ck_assert(ng_bitmap_empty(&u.cpus));
        ck_assert_int_eq(ng_parse_unit_cpuset("[Service]\nAllowedCPUs=junk\n", &u), 0);   /* ignored, as systemd does */
        ck_assert(!u.has_cpus);
        ck_assert_int_eq(ng_parse_unit_cpuset(NULL, &u), -EINVAL);
        /* NUMAPolicy= and NUMAMask= (systemd.exec(5)): a name, a reset by
         * "", masks adding up; a name systemd does not know changes nothing */
        struct ng_unit_cpuset n = {0};
        ck_assert_int_eq(ng_parse_unit_cpuset("[Service]\nNUMAPolicy=bind\nNUMAMask=0\nNUMAMask=2-3\n"
                                              "NUMAPolicy=interleave\nNUMAPolicy=sideways\n", &n), 0);
        ck_assert(n.has_numa_policy && n.numa_policy == 3 && n.has_numa_mask);
        ck_assert_str_eq(ng_unit_numa_policy_name(n.numa_policy), "interleave");
        ng_bitmap_format_list(&n.numa_mask, l, sizeof(l));
        ck_assert_str_eq(l, "0,2-3");
        ck_assert_int_eq(ng_parse_unit_cpuset("[Service]\nNUMAPolicy=\nNUMAMask=\n", &n), 0);
        ck_assert(!n.has_numa_policy && !n.has_numa_mask && ng_bitmap_empty(&n.numa_mask));
        ck_assert_ptr_null(ng_unit_numa_policy_name(5));
}
END_TEST

START_TEST(unit_names)
{
        char u[256];
        ck_assert_int_eq(ng_unit_from_cgroup("/system.slice/postgresql@15-main.service", u, sizeof(u)), 0);
        ck_assert_str_eq(u, "postgresql@15-main.service");
        ck_assert_int_eq(ng_unit_from_cgroup("/user.slice/user-1000.slice/session-3.scope", u, sizeof(u)), 0);
        ck_assert_str_eq(u, "session-3.scope");
        ck_assert_int_eq(ng_unit_from_cgroup("/oracle", u, sizeof(u)), -EINVAL);
        ck_assert_int_eq(ng_unit_from_cgroup("/system.slice", u, sizeof(u)), -EINVAL);
        /* a sub-cgroup of a unit with Delegate=: the unit's payload owns it */
        ck_assert_int_eq(ng_unit_from_cgroup("/system.slice/db.service/payload", u, sizeof(u)), -EINVAL);
        ck_assert_int_eq(ng_unit_from_cgroup("/system.slice/.service", u, sizeof(u)), -EINVAL);
        ck_assert_int_eq(ng_unit_from_cgroup("/system.slice/a b.service", u, sizeof(u)), -EINVAL);
        ck_assert_str_eq(ng_owner_kind_name(NG_OWNER_CGCONFIG), "cgconfig");
        ck_assert_str_eq(ng_owner_kind_name(NG_OWNER_NONE), "none");
}
END_TEST

/* Only the value's bytes change; quotes kept as written; a key the block
 * lacks gets its own line; a one-line block gets it inline. */
START_TEST(cgconfig_edit)
{
        _ng_cleanup_(ng_action_result_freep) struct ng_action_result *res = NULL;
        ck_assert_int_eq(ng_action_result_new(&res), 0);
        struct ng_bitmap zero = {0}, two = {0};
        ng_bitmap_set(&zero, 0);
        ng_bitmap_set(&two, 2);
        ng_bitmap_set(&two, 3);
        char *out = NULL;
        ck_assert_int_eq(ng_cgconfig_edit(sample, "/etc/cgconfig.conf", "oracle", &two, &zero, res, &out), 0);
        size_t n = strlen(sample);
        ck_assert_uint_eq(strlen(out), n);      /* "1-9" -> "2-3", 0 -> 0 */
        const char *at = strstr(out, "cpuset.cpus = \"2-3\";\n\t\tcpuset.mems=0;\n");
        ck_assert_ptr_nonnull(at);
        ck_assert_int_eq(strncmp(out, sample, (size_t) (strstr(sample, "cpuset.cpus = \"1-9\"") - sample)), 0);
        ck_assert_uint_eq(res->n_writes, 2);
        ck_assert_int_eq(res->writes[0].kind, NG_WRITE_CONFIG_LINE);
        ck_assert_str_eq(res->writes[0].path, "/etc/cgconfig.conf:34");
        ck_assert_str_eq(res->writes[0].before, "\t\tcpuset.cpus = \"1-9\";");
        ck_assert_str_eq(res->writes[0].value, "\t\tcpuset.cpus = \"2-3\";");
        free(out);

        ng_action_result_reset(res);
        ck_assert_int_eq(ng_cgconfig_edit("group db {\n\tcpuset {\n\t\tcpuset.cpus = 0;\n\t}\n}\n", "f", "db", NULL,
                                          &two, res, &out), 0);
        ck_assert_str_eq(out, "group db {\n\tcpuset {\n\t\tcpuset.cpus = 0;\n\t\tcpuset.mems = \"2-3\";\n\t}\n}\n");
        ck_assert_str_eq(res->writes[0].path, "f:4");
        ck_assert_str_eq(res->writes[0].before, "");
        free(out);
        ck_assert_int_eq(ng_cgconfig_edit("group db { cpuset { cpuset.cpus = 0; } }", "f", "/db", NULL, &two, NULL, &out), 0);
        ck_assert_str_eq(out, "group db { cpuset { cpuset.cpus = 0; cpuset.mems = \"2-3\"; } }");
        free(out);

        out = (char *) 1;
        ck_assert_int_eq(ng_cgconfig_edit(sample, "f", "nosuch", &two, NULL, NULL, &out), -ENOENT);
        ck_assert_int_eq(ng_cgconfig_edit(sample, "f", "daemons/www", &two, NULL, NULL, &out), -ENODATA);
        ck_assert_int_eq(ng_cgconfig_edit("group x {", "f", "x", &two, NULL, NULL, &out), -EINVAL);
        ck_assert_ptr_eq(out, (char *) 1);
}
END_TEST

/* Parses cmdline into *v (freeing what *v held) and returns the count. */
static size_t cmdline(const char *line, uint64_t default_kib, struct ng_boot_pool **v)
{
        size_t n = 0;
        free(*v);
        *v = NULL;
        ck_assert_int_eq(ng_parse_hugepages_cmdline(line, default_kib, v, &n), 0);
        return n;
}

/* The command line the guest-1g tree was booted with (its README), and the
 * forms the kernel documents (admin-guide/mm/hugetlbpage.rst). */
START_TEST(boot_cmdline)
{
        struct ng_boot_pool *v = NULL;
        size_t n = cmdline("BOOT_IMAGE=/vmlinuz root=/dev/vda ro hugepagesz=1G hugepages=1:1 "
                           "hugepagesz=2M hugepages=0:16,1:16\n", 2048, &v);
        ck_assert_uint_eq(n, 3);
        const struct ng_boot_pool *b = ng_boot_pool_find(v, n, 1, 1048576);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq(b->pages, 1);
        ck_assert(!b->from_file);
        ck_assert_ptr_null(ng_boot_pool_find(v, n, 0, 1048576));
        ck_assert_uint_eq(ng_boot_pool_find(v, n, 0, 2048)->pages, 16);
        /* the global form is the kernel's to split: one entry for all
         * nodes; a bad per-node list is rejected whole, as the kernel does */
        n = cmdline("hugepages=512 hugepagesz=1G hugepages=0:2,x:1", 2048, &v);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(v[0].node, NG_BOOT_ALL_NODES);
        ck_assert_uint_eq(v[0].page_kib, 2048);
        ck_assert_uint_eq(v[0].pages, 512);
        ck_assert_int_eq(v[0].source, NG_BOOT_CMDLINE);
        ck_assert_ptr_null(ng_boot_pool_find(v, n, 0, 2048));
        /* sysctl.* on the command line (Linux >= 5.8): the default size,
         * even after a hugepagesz= of another */
        n = cmdline("hugepagesz=1G hugepages=2 sysctl.vm.nr_hugepages=64 sysctl.vm.nr_hugepages=x hugepages=3x", 2048,
                    &v);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(v[0].page_kib, 1048576);
        ck_assert_uint_eq(v[0].pages, 2);
        ck_assert_uint_eq(v[1].page_kib, 2048);
        ck_assert_uint_eq(v[1].pages, 64);
        ck_assert_int_eq(v[1].source, NG_BOOT_CMDLINE_SYSCTL);
        /* before any hugepagesz=, hugepages= is the default size's */
        n = cmdline("hugepages=1:4 default_hugepagesz=1G", 2048, &v);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(v[0].page_kib, 1048576);
        free(v);
}
END_TEST

/* What the kernel ignores, with a warning in dmesg (mm/hugetlb.c): the
 * second of two settings for one size, as GRUB_CMDLINE_LINUX and
 * GRUB_CMDLINE_LINUX_DEFAULT both setting hugepages= give. */
START_TEST(boot_cmdline_duplicates)
{
        struct ng_boot_pool *v = NULL;
        /* hugepages= twice without a hugepagesz= between: the first counts */
        size_t n = cmdline("ro hugepagesz=2M hugepages=0:16 quiet hugepages=0:32,1:32", 2048, &v);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(ng_boot_pool_find(v, n, 0, 2048)->pages, 16);
        ck_assert_ptr_null(ng_boot_pool_find(v, n, 1, 2048));
        n = cmdline("hugepages=512 hugepagesz=2M hugepages=1024", 2048, &v);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(v[0].pages, 512);
        /* the default size's first hugepages= counts, per node too, even
         * after a hugepagesz= of it with another size between */
        n = cmdline("hugepages=0:4 hugepagesz=1G hugepages=0:1 hugepagesz=2M hugepages=1:8", 2048, &v);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(ng_boot_pool_find(v, n, 0, 2048)->pages, 4);
        ck_assert_ptr_null(ng_boot_pool_find(v, n, 1, 2048));
        /* a size named twice: its second hugepagesz= and the hugepages=
         * after it are ignored, the other size's stand */
        n = cmdline("hugepagesz=2M hugepages=0:8 hugepagesz=1G hugepages=0:1 hugepagesz=2M hugepages=1:8", 2048, &v);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(ng_boot_pool_find(v, n, 0, 2048)->pages, 8);
        ck_assert_ptr_null(ng_boot_pool_find(v, n, 1, 2048));
        ck_assert_uint_eq(ng_boot_pool_find(v, n, 0, 1048576)->pages, 1);
        /* the one exception: the default size named again before its pages
         * are set */
        n = cmdline("default_hugepagesz=1G hugepagesz=1G hugepages=2", 2048, &v);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(v[0].page_kib, 1048576);
        ck_assert_uint_eq(v[0].pages, 2);
        /* a hugepages= after an unreadable size is ignored, the next one
         * goes to the size before */
        n = cmdline("hugepagesz=1G hugepages=1 hugepagesz=2Q hugepages=7 hugepagesz=2M hugepages=0:4", 2048, &v);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(v[0].pages, 1);
        ck_assert_uint_eq(v[1].page_kib, 2048);
        ck_assert_uint_eq(v[1].pages, 4);
        free(v);
}
END_TEST

START_TEST(boot_tmpfiles)
{
        struct ng_boot_pool *v = NULL;
        size_t n = 0;
        ck_assert_int_eq(ng_parse_hugepages_tmpfiles(
                "# comment\n\nw /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages - - - - 512\n"
                "w /sys/kernel/mm/transparent_hugepage/enabled - - - - never\n"
                "w /sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages - - - - 2\n"
                "d /run/x 0755 root root -\n", &v, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(v[0].pages, 512);
        ck_assert_uint_eq(v[0].line, 3);
        ck_assert_uint_eq(v[1].node, 1);
        ck_assert_uint_eq(v[1].page_kib, 1048576);
        ck_assert_uint_eq(v[1].line, 5);
        ck_assert(v[1].from_file);
        /* the file's line wins over the command line's */
        ck_assert_int_eq(ng_parse_hugepages_cmdline("hugepagesz=2M hugepages=0:16", 2048, &v, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(ng_boot_pool_find(v, n, 0, 2048)->pages, 512);
        free(v);
}
END_TEST

/* sysctl.d(5) syntax as systemd-sysctl reads it. */
START_TEST(boot_sysctl)
{
        uint64_t pages = 0;
        unsigned line = 0;
        ck_assert_int_eq(ng_parse_sysctl_hugepages("# vm.nr_hugepages = 1\n; vm.nr_hugepages = 2\n"
                                                   "kernel.shmmax = 4\nvm.nr_hugepages_x = 5\nxvm.nr_hugepages = 6\n"
                                                   "vm.nr_overcommit_hugepages = 7\n", &pages, &line), 0);
        ck_assert_int_eq(ng_parse_sysctl_hugepages("  vm.nr_hugepages\t=\t512  \n", &pages, &line), 1);
        ck_assert_uint_eq(pages, 512);
        ck_assert_uint_eq(line, 1);
        /* the last one wins; '/' separators, '-' prefix, _mempolicy; a
         * value the kernel would refuse is skipped */
        ck_assert_int_eq(ng_parse_sysctl_hugepages("vm.nr_hugepages=1\n-vm/nr_hugepages = 2\n\n"
                                                   "vm.nr_hugepages_mempolicy = 3\r\nvm.nr_hugepages = lots\n"
                                                   "vm.nr_hugepages = 99999999999999999999999\n", &pages, &line), 1);
        ck_assert_uint_eq(pages, 3);
        ck_assert_uint_eq(line, 4);
        ck_assert_int_eq(ng_parse_sysctl_hugepages("vm.nr_hugepages", &pages, &line), 0);
        ck_assert_int_eq(ng_parse_sysctl_hugepages(NULL, &pages, &line), -EINVAL);
}
END_TEST

static Suite *owner_suite(void)
{
        Suite *s = suite_create("owner");
        TCase *tc = tcase_create("parse");
        tcase_add_test(tc, cgconfig_sample);
        tcase_add_test(tc, cgconfig_bad);
        tcase_add_test(tc, unit_files);
        tcase_add_test(tc, unit_names);
        tcase_add_test(tc, cgconfig_edit);
        tcase_add_test(tc, boot_cmdline);
        tcase_add_test(tc, boot_cmdline_duplicates);
        tcase_add_test(tc, boot_tmpfiles);
        tcase_add_test(tc, boot_sysctl);
        tcase_add_test(tc, cgconfig_mounts);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return ng_test_run(owner_suite());
}

/* The configuration files of MariaDB and Oracle as their servers read
 * them: option files (Debian's my.cnf and the syntax of mysys/my_default.c),
 * the options and the command line of mariadbd as my_getopt reads them,
 * Oracle's text pfile and binary spfile (parameter lines between binary
 * bytes, a line cut by them), the precedence of an SID's parameter over
 * "*.", a process's environment, and what a snapshot keeps of each. */

#include "ng-test.h"
#include "dbconf.h"
#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* ---- MariaDB option files ---- */

START_TEST(my_cnf_debian)
{
        /* Debian 12's /etc/mysql/mariadb.cnf (what /etc/mysql/my.cnf links
         * to) without its comment block, and a drop-in as a DBA writes it. */
        static const char text[] =
                "# The MariaDB configuration file\n"
                "#\n"
                "[client-server]\n"
                "# Port or socket location where to connect\n"
                "# port = 3306\n"
                "socket = /run/mysqld/mysqld.sock\n"
                "\n"
                "# Import all .cnf files from configuration directory\n"
                "!includedir /etc/mysql/conf.d/\n"
                "!includedir /etc/mysql/mariadb.conf.d/\n"
                "[Mariadbd ]\n"
                "  large-pages\n"
                "; a comment\n"
                "innodb_buffer_pool_size = 4G   # the pool\n"
                "log_error = \"/var/log/my #1.log\"\n"
                "init_connect='SET NAMES \\'utf8\\''\n"
                "!include /etc/mysql/local.cnf\n"
                "!includeX /ignored\n";
        struct ng_my_cnf_item *v;
        size_t n;
        unsigned bad = 0;
        ck_assert_int_eq(ng_my_cnf_parse(text, sizeof(text) - 1, &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 10);
        ck_assert_int_eq(v[0].kind, NG_MY_CNF_GROUP);
        ck_assert_str_eq(v[0].name, "client-server");
        ck_assert_int_eq(v[1].kind, NG_MY_CNF_OPTION);
        ck_assert_str_eq(v[1].name, "socket");
        ck_assert_str_eq(v[1].value, "/run/mysqld/mysqld.sock");
        ck_assert_uint_eq(v[1].line, 6);
        ck_assert_int_eq(v[2].kind, NG_MY_CNF_INCLUDEDIR);
        ck_assert_str_eq(v[2].value, "/etc/mysql/conf.d/");
        ck_assert_int_eq(v[3].kind, NG_MY_CNF_INCLUDEDIR);
        ck_assert_int_eq(v[4].kind, NG_MY_CNF_GROUP);
        ck_assert_str_eq(v[4].name, "mariadbd");
        ck_assert_str_eq(v[5].name, "large-pages");
        ck_assert(!v[5].has_value);
        ck_assert_str_eq(v[6].name, "innodb_buffer_pool_size");
        ck_assert_str_eq(v[6].value, "4G");
        ck_assert_uint_eq(v[6].line, 14);
        /* '#' inside quotes is no comment; one pair of quotes comes off */
        ck_assert_str_eq(v[7].value, "/var/log/my #1.log");
        ck_assert_str_eq(v[8].value, "SET NAMES 'utf8'");
        ck_assert_int_eq(v[9].kind, NG_MY_CNF_INCLUDE);
        ck_assert_str_eq(v[9].value, "/etc/mysql/local.cnf");
        free(v);

        /* What mysqld refuses to start on, with its line. */
        static const char *const bad_texts[] = {
                "large_pages = 1\n",                     /* no group yet */
                "[mysqld]\nx=1\n[mysqld\n",              /* group without ']' */
                "[mysqld]\n!include   \n",               /* directive without a file */
                "[mysqld]\nlarge_pages\0=1\n",           /* a NUL */
        };
        static const size_t bad_lens[] = { 16, 21, 21, 24 };
        static const unsigned bad_lines[] = { 1, 3, 2, 2 };
        for (size_t i = 0; i < ELEMENTSOF(bad_texts); i++) {
                v = NULL;
                ck_assert_int_eq(ng_my_cnf_parse(bad_texts[i], bad_lens[i], &v, &n, &bad), -EINVAL);
                ck_assert_uint_eq(bad, bad_lines[i]);
                ck_assert_ptr_null(v);
        }
        /* A value beyond the field is cut and said so; a name beyond it is
         * none numaguard reads. */
        char big[1200];
        int k = snprintf(big, sizeof(big), "[mysqld]\ninnodb_buffer_pool_size=%0600d\n", 1);
        ck_assert_int_eq(ng_my_cnf_parse(big, (size_t) k, &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert(v[1].cut);
        free(v);
        memset(big, 'x', sizeof(big));
        memcpy(big, "[mysqld]\n", 9);
        ck_assert_int_eq(ng_my_cnf_parse(big, sizeof(big), &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 1);
        free(v);
}
END_TEST

START_TEST(my_groups_and_options)
{
        ck_assert_int_eq(ng_my_group_read("mysqld", NULL), 1);
        ck_assert_int_eq(ng_my_group_read("MARIADB", NULL), 1);
        ck_assert_int_eq(ng_my_group_read("client-server", NULL), 1);
        ck_assert_int_eq(ng_my_group_read("galera", NULL), 1);
        ck_assert_int_eq(ng_my_group_read("client", NULL), 0);
        ck_assert_int_eq(ng_my_group_read("mysql", NULL), 0);
        ck_assert_int_eq(ng_my_group_read("mariadb-10.11", NULL), 2);
        ck_assert_int_eq(ng_my_group_read("mysqld-8.0", NULL), 2);
        ck_assert_int_eq(ng_my_group_read("mysqld-8.0x", NULL), 0);
        ck_assert_int_eq(ng_my_group_read("mysqld.ng", ".ng"), 1);
        ck_assert_int_eq(ng_my_group_read("mysqld.ng", NULL), 0);
        ck_assert_int_eq(ng_my_group_read("mysqld", ".ng"), 1);

        struct ng_db_settings s = {0};
        ck_assert_int_eq(ng_my_option_apply(&s, "large-pages", NULL, "f:1"), 1);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_TRY);
        ck_assert_str_eq(s.huge_pages_word, "ON");
        ck_assert_str_eq(s.huge_pages_from, "f:1");
        ck_assert_int_eq(ng_my_option_apply(&s, "skip-large-pages", NULL, "f:2"), 1);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_OFF);
        ck_assert_int_eq(ng_my_option_apply(&s, "loose-large_pages", "on", "f:3"), 1);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_TRY);
        ck_assert_int_eq(ng_my_option_apply(&s, "disable_large_pages", NULL, "f:4"), 1);
        ck_assert_str_eq(s.huge_pages_word, "OFF");
        ck_assert_int_eq(ng_my_option_apply(&s, "enable-large-pages", NULL, "f:5"), 1);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_TRY);
        /* values my_getopt refuses, or that numaguard cannot tell */
        ck_assert_int_eq(ng_my_option_apply(&s, "large_pages", "maybe", "f:6"), -EINVAL);
        ck_assert_int_eq(ng_my_option_apply(&s, "skip-large-pages", "1", "f:7"), -EINVAL);
        ck_assert_str_eq(s.huge_pages_from, "f:5");

        ck_assert_int_eq(ng_my_option_apply(&s, "innodb-buffer-pool-size", "1G", "f:8"), 1);
        ck_assert_uint_eq(s.size_bytes, GiB);
        ck_assert_str_eq(s.size_from, "innodb_buffer_pool_size, f:8");
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "512m", "f:9"), 1);
        ck_assert_uint_eq(s.size_bytes, 512 * MiB);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "134217728", "f:10"), 1);
        ck_assert_uint_eq(s.size_bytes, 128 * MiB);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "1.5G", "f:11"), -EINVAL);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "4GB", "f:11"), -EINVAL);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", NULL, "f:11"), -EINVAL);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "99999999999999999999", "f:11"),
                         -ERANGE);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "20000E", "f:11"), -ERANGE);
        ck_assert_uint_eq(s.size_bytes, 128 * MiB);
        ck_assert_int_eq(ng_my_option_apply(&s, "maximum-innodb-buffer-pool-size", "1T", "f:12"), 0);
        ck_assert_uint_eq(s.size_bytes, 128 * MiB);
        /* innodb_buffer_pool_size_max is what a newer server maps: a later
         * innodb_buffer_pool_size does not replace it */
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size_max", "3t", "f:13"), 1);
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_buffer_pool_size", "1G", "f:14"), 1);
        ck_assert_uint_eq(s.size_bytes, UINT64_C(3) << 40);
        ck_assert_str_eq(s.size_from, "innodb_buffer_pool_size_max, f:13");
        ck_assert_int_eq(ng_my_option_apply(&s, "innodb_log_file_size", "x", "f:15"), 0);
}
END_TEST

START_TEST(my_command_line)
{
        struct ng_my_defaults d;
        ng_my_cmdline_defaults("/usr/sbin/mariadbd --defaults-file=/tmp/e2e-my/my.cnf --datadir=/tmp/e2e-my/data "
                               "--defaults-extra-file=/late.cnf", &d);
        ck_assert(!d.no_defaults);
        ck_assert_str_eq(d.file, "/tmp/e2e-my/my.cnf");
        /* only as leading options */
        ck_assert_str_eq(d.extra_file, "");
        ng_my_cmdline_defaults("mysqld --defaults-extra-file=/etc/extra.cnf --defaults-group-suffix=.a "
                               "--defaults-extra-file=/second.cnf", &d);
        ck_assert_str_eq(d.extra_file, "/etc/extra.cnf");
        ck_assert_str_eq(d.group_suffix, ".a");
        ng_my_cmdline_defaults("mariadbd --no-defaults --large-pages", &d);
        ck_assert(d.no_defaults);
        ng_my_cmdline_defaults("mariadbd --user=mysql --no-defaults", &d);
        ck_assert(!d.no_defaults);
        ng_my_cmdline_defaults("", &d);
        ck_assert(!d.no_defaults && !d.file[0]);

        struct ng_db_settings s = {0};
        ck_assert_int_eq(ng_my_cmdline_apply(&s, "/usr/sbin/mariadbd --defaults-file=/a.cnf --large-pages "
                                             "--innodb-buffer-pool-size 256M --datadir=/d"), 0);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_TRY);
        ck_assert_str_eq(s.huge_pages_from, "command line");
        ck_assert_uint_eq(s.size_bytes, 256 * MiB);
        ck_assert_int_eq(ng_my_cmdline_apply(&s, "mariadbd --innodb_buffer_pool_size=1G --skip-large-pages "
                                             "large-pages"), 0);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_OFF);
        ck_assert_uint_eq(s.size_bytes, GiB);
        ck_assert_int_eq(ng_my_cmdline_apply(&s, "mariadbd --large-pages=sometimes --large-pages"), -EINVAL);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_TRY);
}
END_TEST

/* ---- Oracle parameter files ---- */

START_TEST(oracle_pfile)
{
        /* A pfile as CREATE PFILE FROM SPFILE writes it, edited. */
        static const char text[] =
                "ORCL.__data_transfer_cache_size=0\n"
                "ORCL.__db_cache_size=3556769792\n"
                "*.audit_file_dest='/u01/app/oracle/admin/ORCL/adump'\n"
                "*.control_files='/u02/oradata/ORCL/control01.ctl','/u02/oradata/ORCL/control02.ctl'\n"
                "*.db_name='ORCL'\n"
                "*.sga_target=4608m\n"
                "ORCL.sga_target=6G # the SID's own\n"
                "ORCL2.sga_target=1G\n"
                "*.use_large_pages=\"only\"\n"
                "sga_max_size = 8G\n"
                "# memory_target=1G\n"
                "*.memory_target=0\n";
        struct ng_ora_param *v;
        size_t n;
        unsigned bad = 0;
        ck_assert_int_eq(ng_ora_params_parse(text, sizeof(text) - 1, false, "ORCL", &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 6);
        ck_assert_str_eq(v[0].sid, "*");
        ck_assert_str_eq(v[0].name, "sga_target");
        ck_assert_str_eq(v[0].value, "4608m");
        ck_assert_uint_eq(v[0].line, 6);
        ck_assert_str_eq(v[1].sid, "ORCL");
        ck_assert_str_eq(v[1].value, "6G");
        ck_assert_str_eq(v[2].sid, "ORCL2");
        ck_assert_str_eq(v[3].value, "only");
        ck_assert_str_eq(v[4].sid, "*");
        ck_assert_str_eq(v[4].name, "sga_max_size");

        struct ng_ora_conf conf = {0};
        for (size_t i = 0; i < n; i++) {
                char from[32];
                snprintf(from, sizeof(from), "init:%u", v[i].line);
                ck_assert_int_eq(ng_ora_param_apply(&conf, "ORCL", &v[i], from), 0);
        }
        free(v);
        /* the SID's own value, whatever came later for "*" */
        struct ng_ora_param late = { .sid = "*", .name = "sga_target", .value = "1G", .line = 20 };
        ck_assert_int_eq(ng_ora_param_apply(&conf, "ORCL", &late, "init:20"), 0);
        ck_assert_str_eq(conf.sga_target.value, "6G");
        struct ng_db_settings s = {0};
        ck_assert_int_eq(ng_ora_conf_settings(&conf, &s), 0);
        ck_assert_int_eq(s.kind, NG_DB_CONF_ORACLE);
        ck_assert_int_eq(s.huge_pages, NG_HUGE_ON);
        ck_assert_str_eq(s.huge_pages_word, "ONLY");
        ck_assert(!s.huge_auto);
        ck_assert_str_eq(s.huge_pages_from, "init:9");
        /* sga_max_size over sga_target; memory_target = 0 is no AMM */
        ck_assert_uint_eq(s.size_bytes, 8 * GiB);
        ck_assert_str_eq(s.size_from, "sga_max_size, init:10");
        ck_assert_uint_eq(s.amm_bytes, 0);

        /* use_large_pages words as Oracle takes them, a value it refuses */
        static const struct {
                const char *word;
                enum ng_huge_setting h;
                bool automatic;
        } words[] = {
                { "TRUE", NG_HUGE_PARTIAL, false }, { "false", NG_HUGE_OFF, false }, { "AUTO", NG_HUGE_PARTIAL, true },
                { "auto_only", NG_HUGE_ON, true },
        };
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                struct ng_ora_conf c = {0};
                struct ng_ora_param p = { .sid = "*", .name = "use_large_pages" };
                snprintf(p.value, sizeof(p.value), "%s", words[i].word);
                ck_assert_int_eq(ng_ora_param_apply(&c, "ORCL", &p, "f:1"), 0);
                struct ng_db_settings t = {0};
                ck_assert_int_eq(ng_ora_conf_settings(&c, &t), 0);
                ck_assert_int_eq(t.huge_pages, words[i].h);
                ck_assert(t.huge_auto == words[i].automatic);
        }
        struct ng_ora_conf c = {0};
        struct ng_ora_param p = { .sid = "*", .name = "use_large_pages", .value = "YES" };
        ck_assert_int_eq(ng_ora_param_apply(&c, "ORCL", &p, "f:1"), -EINVAL);
        p = (struct ng_ora_param) { .sid = "ORCL", .name = "memory_target", .value = "3g" };
        ck_assert_int_eq(ng_ora_param_apply(&c, "orcl", &p, "f:2"), 0);
        p = (struct ng_ora_param) { .sid = "*", .name = "sga_target", .value = "1.5G" };
        ck_assert_int_eq(ng_ora_param_apply(&c, "ORCL", &p, "f:3"), -EINVAL);
        p = (struct ng_ora_param) { .sid = "*", .name = "sga_target", .value = "99999999999T" };
        ck_assert_int_eq(ng_ora_param_apply(&c, "ORCL", &p, "f:4"), -ERANGE);
        s = (struct ng_db_settings) {0};
        ck_assert_int_eq(ng_ora_conf_settings(&c, &s), 0);
        ck_assert_uint_eq(s.amm_bytes, 3 * GiB);
        ck_assert_str_eq(s.amm_from, "memory_target, f:2");
        ck_assert_int_eq(s.huge_pages, NG_HUGE_UNSET);
}
END_TEST

/* An spfile as the documented layout holds it: its parameters' text lines
 * between a NUL-padded binary header and NUL padding. */
static size_t spfile(char *buf, size_t size, const char *text)
{
        size_t t = strlen(text);
        ck_assert(512 + t + 512 <= size);
        memset(buf, 0, 512 + t + 512);
        memcpy(buf, "\xa2\x22\x00\x00\x01\x00\x00\x00", 8);
        memcpy(buf + 512, text, t);
        return 512 + t + 512;
}

START_TEST(oracle_spfile)
{
        char buf[4096];
        struct ng_ora_param *v;
        size_t n;
        unsigned bad = 0;
        size_t len = spfile(buf, sizeof(buf), "ORCL.__db_cache_size=3556769792\n*.db_name='ORCL'\n"
                            "*.sga_target=4608m\n*.use_large_pages='ONLY'\nsga_max_size=8G\n");
        ck_assert_int_eq(ng_ora_params_parse(buf, len, true, "ORCL", &v, &n, &bad), 0);
        /* every setting of an spfile has its prefix: the bare line is none */
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(v[0].name, "sga_target");
        ck_assert_uint_eq(v[0].line, 3);
        ck_assert_str_eq(v[1].value, "ONLY");
        free(v);

        /* A block header within a line of one of its parameters: its value
         * cannot be told; within another parameter's line it does not
         * matter. */
        static const char *const cut[] = {
                "*.db_name='ORCL'\n*.sga_target=4\x00\x22\xa2\x00" "294967296\n",
                "*.db_name='ORCL'\n*.use_large\x01\x02pages='ONLY'\n",
                "*.db_name='ORCL'\nOR\x00\x00\x00" "CL.use_large_pages='ONLY'\n",
                "*.db_name='ORCL'\n*\x00\x00.sga_target=1G\n",
        };
        static const size_t cut_lens[] = { 45, 43, 48, 35 };
        for (size_t i = 0; i < ELEMENTSOF(cut); i++) {
                char b[1200];
                memset(b, 0, sizeof(b));
                memcpy(b + 512, cut[i], cut_lens[i]);
                v = NULL;
                ck_assert_int_eq(ng_ora_params_parse(b, 512 + cut_lens[i] + 100, true, "ORCL", &v, &n, &bad), -EBADMSG);
                ck_assert_uint_eq(bad, 2);
                ck_assert_ptr_null(v);
        }
        static const char fine[] = "*.db_na\x00\x00me='ORCL'\n*.sga_target=1G\nORCL2.sga_target=2G\n";
        char b[1200] = {0};
        memcpy(b + 512, fine, sizeof(fine) - 1);
        ck_assert_int_eq(ng_ora_params_parse(b, 512 + sizeof(fine) - 1 + 100, true, "ORCL1", &v, &n, &bad), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(v[1].sid, "ORCL2");
        free(v);
        /* a setting the end of the file cuts */
        ck_assert_int_eq(ng_ora_params_parse("*.sga_target=4", 14, true, "ORCL", &v, &n, &bad), -EBADMSG);
        /* a NUL in a text pfile */
        ck_assert_int_eq(ng_ora_params_parse("*.sga_target=4\0G\n", 17, false, "ORCL", &v, &n, &bad), -EINVAL);
}
END_TEST

START_TEST(environ_and_paths)
{
        static const char env[] = "HOME=/home/oracle\0ORACLE_SID=ORCL\0ORACLE_HOME=/u01/app/oracle/product/19c\0"
                                  "PASSWORD=s3cret\0ORACLE_HOME=/second\0ORACLE_HOMEX=/x\0MYSQL_HOME=/etc/my";
        char out[64];
        ck_assert_int_eq(ng_environ_get(env, sizeof(env) - 1, "ORACLE_HOME", out, sizeof(out)), 0);
        ck_assert_str_eq(out, "/u01/app/oracle/product/19c");
        ck_assert_int_eq(ng_environ_get(env, sizeof(env) - 1, "MYSQL_HOME", out, sizeof(out)), 0);
        ck_assert_str_eq(out, "/etc/my");
        ck_assert_int_eq(ng_environ_get(env, sizeof(env) - 1, "ORACLE_BASE", out, sizeof(out)), -ENOENT);
        ck_assert_int_eq(ng_environ_get(env, sizeof(env) - 1, "ORACLE_HOME", out, 8), -ENAMETOOLONG);

        char *kept;
        size_t len;
        ck_assert_int_eq(ng_db_environ_redact(env, sizeof(env) - 1, &kept, &len), 0);
        static const char want[] = "ORACLE_SID=ORCL\0ORACLE_HOME=/u01/app/oracle/product/19c\0ORACLE_HOME=/second\0"
                                   "MYSQL_HOME=/etc/my";
        ck_assert_uint_eq(len, sizeof(want));
        ck_assert(!memcmp(kept, want, sizeof(want)));
        free(kept);
        ck_assert(ng_db_environ_path("/proc/42/environ"));
        ck_assert(!ng_db_environ_path("/proc/42/environ2"));
        ck_assert(!ng_db_environ_path("/proc/self/environ"));

        ck_assert(ng_db_path_ok("/etc/mysql/mariadb.conf.d/"));
        ck_assert(ng_db_path_ok("/u01/..app/x."));
        ck_assert(!ng_db_path_ok("etc/my.cnf"));
        ck_assert(!ng_db_path_ok("/etc/../../root"));
        ck_assert(!ng_db_path_ok("/etc/./my.cnf"));
        ck_assert(!ng_db_path_ok("/etc/.."));
        ck_assert(!ng_db_path_ok("/etc/my\ncnf"));
}
END_TEST

START_TEST(snapshot_keeps_each_engines_lines)
{
        static const char my[] = "[client-server]\n"
                                 "password = s3cret\n"
                                 "!includedir /etc/mysql/conf.d/\n"
                                 "[mysqld]\n"
                                 "Large-Pages\n"
                                 "loose-innodb-buffer-pool-size = 1G\n"
                                 "innodb_buffer_pool_size_max=2G\n";
        char *out;
        size_t len;
        ck_assert_int_eq(ng_db_conf_redact(my, sizeof(my) - 1, &out, &len), 0);
        ck_assert_str_eq(out, "[client-server]\n#\n!includedir /etc/mysql/conf.d/\n[mysqld]\nLarge-Pages\n"
                              "loose-innodb-buffer-pool-size = 1G\ninnodb_buffer_pool_size_max=2G\n");
        free(out);

        /* An spfile: the lines of the parameters it reads, binary bytes and
         * all, and the lines their cut parts are on; every other line "#". */
        static const char sp[] = "\xa2\x22\x00\x00ORCL.__db_cache_size=1\n*.db_name='ORCL'\n*.sga_tar\x00\x01"
                                 "get=4G\n*.remote_login_passwordfile='EXCLUSIVE'\nORCL.use_large_pages='TRUE'\n\x00\x00";
        ck_assert_int_eq(ng_db_conf_redact(sp, sizeof(sp) - 1, &out, &len), 0);
        static const char want[] = "#\n#\n*.sga_tar\x00\x01get=4G\n#\nORCL.use_large_pages='TRUE'\n#";
        ck_assert_uint_eq(len, sizeof(want) - 1);
        ck_assert(!memcmp(out, want, len));
        /* and parses as the original does */
        struct ng_ora_param *v;
        size_t n;
        unsigned bad;
        ck_assert_int_eq(ng_ora_params_parse(out, len, true, "ORCL", &v, &n, &bad), -EBADMSG);
        ck_assert_uint_eq(bad, 3);
        ck_assert_int_eq(ng_ora_params_parse(sp, sizeof(sp) - 1, true, "ORCL", &v, &n, &bad), -EBADMSG);
        ck_assert_uint_eq(bad, 3);
        free(out);
        ck_assert(ng_ora_line_kept("*.memory_target=0", 17));
        ck_assert(!ng_ora_line_kept("*.db_name='ORCL'", 16));
        ck_assert(!ng_ora_line_kept("s = 'secret'", 12));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("dbconf");
        TCase *tc = tcase_create("dbconf");
        tcase_add_test(tc, my_cnf_debian);
        tcase_add_test(tc, my_groups_and_options);
        tcase_add_test(tc, my_command_line);
        tcase_add_test(tc, oracle_pfile);
        tcase_add_test(tc, oracle_spfile);
        tcase_add_test(tc, environ_and_paths);
        tcase_add_test(tc, snapshot_keeps_each_engines_lines);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of database engines (engine.h). */

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "util.h"

#define ORACLE_SHM_FIX "set vm.hugetlb_shm_group to the gid of the oinstall group (sysctl.d) and memlock for " \
        "oracle in /etc/security/limits.conf to at least the SGA (its installation guide: 90 % of RAM), then restart"

static const char *const postgresql[] = { "postgres", "postmaster", NULL };
static const char *const mysql[] = { "mysqld", "mariadbd", NULL };
/* mariadbd's load_default_groups (sql/mysqld.cc): [galera] is a server's
 * built with wsrep, as the distributions' are; the versioned groups carry
 * its MYSQL_BASE_VERSION and MariaDB's names of it. */
static const char *const mysql_groups[] = { "mysqld", "server", "mariadb", "mariadbd", "client-server", "galera",
                                            NULL };
static const char *const mysql_version_groups[] = { "mysqld-", "mariadb-", "mariadbd-", NULL };
static const char *const hana[] = { "hdbindexserver", NULL };

const struct ng_engine ng_engines[] = {
        /* Background processes ora_<name>_<SID>, dedicated servers
         * oracle<SID>. Under AMM (memory_target) the SGA is granule files in
         * /dev/shm named ora_<SID>_<id>_<n>, 4 MiB to 512 MiB each: hundreds
         * to thousands per instance. Oracle asks for transparent hugepages
         * off: khugepaged collapsing SGA and PGA pages stalls processes.
         * Its SGA is SysV SHM_HUGETLB, locked up to the memlock limit: its
         * installation guide sets memlock to at least 90 % of RAM. */
        { .name = "oracle", .type = "oracle",
          .main_prefix = "ora_pmon_", .member_prefix = "ora_", .dedicated_prefix = "oracle",
          .needs_libnuma = true,
          .granule_prefix = "/dev/shm/ora_", .granules_label = "Oracle AMM SGA", .thp_enabled = "never",
          .locks_sga = true, .hugetlb_shm_fix = ORACLE_SHM_FIX,
          .has_conf = true, .conf_kind = NG_DB_CONF_ORACLE },
        /* Oracle ASM: the same processes as asm_<name>_+ASM. */
        { .name = "asm", .type = "oracle",
          .main_prefix = "asm_pmon_", .member_prefix = "asm_", .dedicated_prefix = "oracle",
          .needs_libnuma = true, .thp_enabled = "never", .locks_sga = true, .hugetlb_shm_fix = ORACLE_SHM_FIX },
        /* The postmaster and its backends. Its main segment is SysV under
         * shared_memory_type = sysv, anonymous (no right needed) by default. */
        { .name = "postgresql", .type = "postgresql",
          .family = postgresql, .nested = true, .dir_shortopt = "-D", .dir_longopt = "--pgdata",
          .has_conf = true, .conf_kind = NG_DB_CONF_POSTGRESQL,
          .conf_file = "postgresql.conf", .auto_conf_file = "postgresql.auto.conf",
          .hugetlb_shm_fix = "set vm.hugetlb_shm_group to the gid of the postgres group (sysctl.d), as PostgreSQL's "
                             "kernel-resources chapter says, or shared_memory_type = mmap, which needs no such right; "
                             "then restart" },
        /* One server process; InnoDB's buffer pool is private memory
         * (under large_pages MariaDB maps it MAP_HUGETLB, private; MySQL
         * makes it a SysV SHM_HUGETLB segment). */
        { .name = "mysql", .type = "mysql",
          .family = mysql, .nested = true, .dir_shortopt = "--datadir", .dir_longopt = "--datadir",
          .private_heap = true,
          .private_label = "the InnoDB buffer pool and the server's other large private mappings",
          .has_conf = true, .conf_kind = NG_DB_CONF_MARIADB, .conf_groups = mysql_groups,
          .conf_version_groups = mysql_version_groups,
          .hugetlb_shm_fix = "set vm.hugetlb_shm_group to the gid of the mysql group (sysctl.d), as the server's "
                             "large-page support asks, and memlock for the mysql user; then restart" },
        /* Every index server is an instance of its own. */
        { .name = "hana", .type = "hana",
          .family = hana, .nested = false, .dir_shortopt = "--sid", .dir_longopt = "--sid" },
};

const size_t ng_n_engines = ELEMENTSOF(ng_engines);

bool ng_engine_in_family(const struct ng_engine *e, const char *name)
{
        assert(e && name);
        for (const char *const *f = e->family; f && *f; f++)
                if (!strcmp(name, *f))
                        return true;
        return false;
}

/* Whether name could belong to e: its first character is that of e's
 * member prefix or of one of its family's names. */
static bool may_be_of(const struct ng_engine *e, char c)
{
        if (e->member_prefix && e->member_prefix[0] == c)
                return true;
        for (const char *const *f = e->family; f && *f; f++)
                if ((*f)[0] == c)
                        return true;
        return false;
}

/* The first characters of every engine's process names, one bit each:
 * most processes on a host are no database's, and this is asked of each
 * on every poll. */
static uint64_t first_chars[4];

static void first_chars_init(void)
{
        for (size_t i = 0; i < ng_n_engines; i++)
                for (unsigned c = 1; c < 256; c++)
                        if (may_be_of(&ng_engines[i], (char) c))
                                first_chars[c / 64] |= UINT64_C(1) << (c % 64);
}

const struct ng_engine *ng_engine_of_process(const char *name)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        assert(name);
        unsigned char c0 = (unsigned char) name[0];
        pthread_once(&once, first_chars_init);
        if (!(first_chars[c0 / 64] >> (c0 % 64) & 1))
                return NULL;
        for (size_t i = 0; i < ng_n_engines; i++) {
                const struct ng_engine *e = &ng_engines[i];
                if (!may_be_of(e, name[0]))
                        continue;
                if ((e->member_prefix && !strncmp(name, e->member_prefix, strlen(e->member_prefix))) ||
                    ng_engine_in_family(e, name))
                        return e;
        }
        return NULL;
}

const struct ng_engine *ng_engine_needing_libnuma(const char *type)
{
        assert(type);
        for (size_t i = 0; i < ng_n_engines; i++)
                if (ng_engines[i].needs_libnuma && !strcmp(ng_engines[i].type, type))
                        return &ng_engines[i];
        return NULL;
}

const char *ng_engine_thp_wanted(const char *type)
{
        assert(type);
        for (size_t i = 0; i < ng_n_engines; i++)
                if (ng_engines[i].thp_enabled && !strcmp(ng_engines[i].type, type))
                        return ng_engines[i].thp_enabled;
        return NULL;
}

/* The first row of the engine of instances of this type, or NULL. */
static const struct ng_engine *of_type(const char *type)
{
        assert(type);
        for (size_t i = 0; i < ng_n_engines; i++)
                if (!strcmp(ng_engines[i].type, type))
                        return &ng_engines[i];
        return NULL;
}

const char *ng_engine_private_label(const char *type)
{
        const struct ng_engine *e = of_type(type);
        return e ? e->private_label : NULL;
}

const char *ng_engine_hugetlb_shm_fix(const char *type)
{
        const struct ng_engine *e = of_type(type);
        return e ? e->hugetlb_shm_fix : NULL;
}

bool ng_engine_locks_sga(const char *type)
{
        const struct ng_engine *e = of_type(type);
        return e && e->locks_sga;
}

bool ng_engine_main_locking(const char *name)
{
        assert(name);
        for (size_t i = 0; i < ng_n_engines; i++) {
                const struct ng_engine *e = &ng_engines[i];
                if (e->locks_sga && e->main_prefix && !strncmp(name, e->main_prefix, strlen(e->main_prefix)))
                        return true;
        }
        return false;
}

const struct ng_engine *ng_engine_of_granule(const char *path)
{
        assert(path);
        for (size_t i = 0; i < ng_n_engines; i++) {
                const char *g = ng_engines[i].granule_prefix;
                if (g && !strncmp(path, g, strlen(g)))
                        return &ng_engines[i];
        }
        return NULL;
}

const struct ng_engine *ng_engine_of_conf(enum ng_db_conf_kind kind)
{
        for (size_t i = 0; i < ng_n_engines; i++)
                if (ng_engines[i].has_conf && ng_engines[i].conf_kind == kind)
                        return &ng_engines[i];
        return NULL;
}

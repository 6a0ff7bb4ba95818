/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The database engines numaguard knows, in one table: how their processes
 * are recognised (by the full process name, ng_proc.name: argv[0] where the
 * kernel's 15-character comm is a prefix of it), how a discovered instance
 * is named, what their shared memory looks like, and what they need from
 * the host. Discovery, the collector, the rules and the reports read it;
 * adding an engine is adding a row (docs/ARCHITECTURE.md, "How to add an
 * engine").
 */

#include <stdbool.h>
#include <stddef.h>

#include "ng-snapshot.h"

/* Library-internal (not installed): not exported from libnumaguard.so. */
#pragma GCC visibility push(hidden)

struct ng_engine {
        const char *name;               /* discovered instances are "<name>:<id>" */
        const char *type;               /* ng_instance.type of its instances */
        /*
         * Recognised one of two ways. By a SID: the main process is
         * <main_prefix><SID> (not a fork of a process of the same name), the
         * background processes <member_prefix><name>_<SID>, the dedicated
         * servers <dedicated_prefix><SID> in argv[0] with a comm that starts
         * with dedicated_prefix; the id is the SID.
         */
        const char *main_prefix;
        const char *member_prefix;
        const char *dedicated_prefix;
        /*
         * Or by a family of exact names, NULL-terminated. nested: the main
         * process is the one whose parent is not of the family; otherwise
         * every process of the family is a main process. Its children of
         * the family join its instance. The id is the value of the option
         * dir_shortopt / dir_longopt on the main process's command line,
         * else its pid.
         */
        const char *const *family;
        bool nested;
        const char *dir_shortopt, *dir_longopt;
        /* Its buffer pool is private anonymous memory: the collector keeps
         * the large private mappings of the family's processes as segments,
         * and private_label says what they hold. */
        bool private_heap;
        const char *private_label;
        /* It dlopen()s the unversioned libnuma.so for its NUMA support and
         * turns that off without a word when it is missing. */
        bool needs_libnuma;
        /* Files under this prefix are granules of one logical segment (the
         * SGA under automatic memory management), shown as one, named so. */
        const char *granule_prefix;
        const char *granules_label;
        /* What its vendor asks of /sys/kernel/mm/transparent_hugepage/
         * enabled ("never"), NULL when the vendor documents nothing. */
        const char *thp_enabled;
        /* Its SysV shared memory is locked up to the memlock limit of its
         * main process (Oracle: what the limit does not cover stays out of
         * large pages); the collector reads that limit. */
        bool locks_sga;
        /* How to give its user the right to SysV SHM_HUGETLB segments, in
         * its vendor's words (HUGEPAGE_NOT_PERMITTED); NULL: the generic. */
        const char *hugetlb_shm_fix;
        /* Its configuration as its next start reads it (ng-dbconf.h), by
         * the reader of conf_kind; has_conf false: not read. PostgreSQL's:
         * conf_file in its data directory (the main process's working
         * directory) unless its command line names another, then
         * auto_conf_file, the file ALTER SYSTEM writes there. */
        bool has_conf;
        enum ng_db_conf_kind conf_kind;
        const char *conf_file, *auto_conf_file;
        /* The groups of its option files its server reads, and the
         * prefixes of those only a server of one version reads
         * ("<prefix>X.Y"); NULL-terminated. */
        const char *const *conf_groups, *const *conf_version_groups;
};

/* The table, in the order discovery tries it, and its length. */
extern const struct ng_engine ng_engines[];
extern const size_t ng_n_engines;

/* The engine one of whose processes has this full name (a background
 * process by its member prefix, or a name of its family; not a dedicated
 * server, which only its SID tells apart), or NULL. */
const struct ng_engine *ng_engine_of_process(const char *name);
/* Whether name is one of the engine's family. */
bool ng_engine_in_family(const struct ng_engine *e, const char *name);
/* The engine whose instances have this type and that needs the unversioned
 * libnuma.so, or NULL. */
const struct ng_engine *ng_engine_needing_libnuma(const char *type);
/* The THP setting the vendor of the engine of instances of this type asks
 * for, or NULL. */
const char *ng_engine_thp_wanted(const char *type);
/* What the large private mappings of instances of this type hold ("the
 * InnoDB buffer pool and ..."), or NULL. */
const char *ng_engine_private_label(const char *type);
/* The hugetlb_shm_fix of the engine of instances of this type, or NULL. */
const char *ng_engine_hugetlb_shm_fix(const char *type);
/* Whether the engine of instances of this type locks its SysV shared
 * memory up to its memlock limit. */
bool ng_engine_locks_sga(const char *type);
/* Whether the process of this full name is the main process of an engine
 * that locks its shared memory (its limits are read). */
bool ng_engine_main_locking(const char *name);
/* The first row whose configuration is of kind, or NULL. */
const struct ng_engine *ng_engine_of_conf(enum ng_db_conf_kind kind);
/* The engine whose shared memory granules this file is (by its path), or
 * NULL. */
const struct ng_engine *ng_engine_of_granule(const char *path);

#pragma GCC visibility pop

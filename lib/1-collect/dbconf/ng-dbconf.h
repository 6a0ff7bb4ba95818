/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a database asks of the host's hugepages at its next start, read
 * from its own configuration (docs/ARCHITECTURE.md, "Rehearsal"): for
 * PostgreSQL the postmaster's main configuration file (with its
 * includes), the file ALTER SYSTEM writes and its command line; for
 * MariaDB (and MySQL) the option files the server reads and its command
 * line; for Oracle the instance's server parameter file (or its text
 * pfile), found through the ORACLE_HOME of its pmon process; each in the
 * order the server applies them. The next start reads these files, not
 * what the running server loaded, so an edit not yet applied counts.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A database's setting for hugepages: PostgreSQL huge_pages (off, on, try),
 * Oracle use_large_pages (FALSE, ONLY, TRUE, AUTO), MariaDB large_pages. */
enum ng_huge_setting {
        NG_HUGE_UNSET = 0,      /* not set: the engine's default */
        NG_HUGE_OFF,
        NG_HUGE_ON,             /* hugepages or no start (PostgreSQL on, Oracle ONLY) */
        NG_HUGE_TRY,            /* hugepages, else 4 KiB pages (PostgreSQL try, MariaDB) */
        NG_HUGE_PARTIAL,        /* as many as the pool has, the rest in 4 KiB (Oracle TRUE) */
        NG_HUGE_SETTING_COUNT_
};

/* "unset", "off", "on", "try", "partial". */
const char *ng_huge_setting_name(enum ng_huge_setting h);

/* Whose configuration the settings are: the reader that filled them. */
enum ng_db_conf_kind {
        NG_DB_CONF_POSTGRESQL = 0,
        NG_DB_CONF_MARIADB,     /* MariaDB's (or MySQL's) option files and command line */
        NG_DB_CONF_ORACLE,      /* an Oracle instance's parameter file */
        NG_DB_CONF_KIND_COUNT_
};

struct ng_db_settings {
        pid_t pid;                      /* the main process they were read for */
        /* 0, or -errno of the first file that could not be read (the
         * settings then hold what was read before it, and are unknown). */
        int error;
        char error_path[256];
        enum ng_huge_setting huge_pages;
        char huge_pages_from[160];      /* "FILE:LINE", "command line", "" unset */
        bool shm_sysv;                  /* PostgreSQL shared_memory_type = sysv */
        uint64_t huge_page_size_kib;    /* huge_page_size; 0: the system's default */
        uint64_t shared_buffers_bytes;  /* 0 when not set */
        unsigned files;                 /* configuration files read */
        /* The memory policy the main process runs under (numactl, systemd's
         * NUMAPolicy=), from the first line of its numa_maps: what a start
         * from the same place gets. policy_known false: not read. */
        bool policy_known;
        int policy;                     /* enum ng_mpol (ng-kernel.h) */
        char policy_nodes[64];          /* "1", "0-3"; "" none */
        /* The systemd service it runs in (its cgroup "/A.slice/NAME.service",
         * every parent a slice), "" none; unit_known: its unit files were
         * read. What they say of the memory policy its next start begins
         * under: NUMAPolicy= (unit_has_policy, a set_mempolicy(2) mode) and
         * NUMAMask= ("0-3", "" none). */
        char unit[256];
        bool unit_known, unit_has_policy;
        int unit_policy;
        char unit_mask[64];
        enum ng_db_conf_kind kind;
        /* The setting in the engine's own words where they are not
         * PostgreSQL's: "ON", "ONLY", "AUTO_ONLY"; "" unset or PostgreSQL. */
        char huge_pages_word[16];
        /* Oracle use_large_pages AUTO or AUTO_ONLY: the instance asks the
         * kernel for the pages it lacks at its start (it raises
         * vm.nr_hugepages itself). */
        bool huge_auto;
        /* What its next start sizes its memory in hugepages by, where the
         * configuration says it: MariaDB's innodb_buffer_pool_size (or
         * innodb_buffer_pool_size_max, which newer servers map whole),
         * Oracle's sga_max_size or sga_target. 0 when not set. */
        uint64_t size_bytes;
        char size_from[160];            /* "NAME in FILE:LINE", "NAME on the command line" */
        /* Oracle memory_target or memory_max_target (automatic memory
         * management: its SGA in /dev/shm files, never in hugepages), 0
         * when not set. */
        uint64_t amm_bytes;
        char amm_from[160];
        /* Why its next start cannot be told though its files were read
         * (an spfile in ASM, a setting in a section only a server version
         * numaguard cannot tell reads), "" none. */
        char unknown[256];
};

/* Where numaguard reads a database's configuration files: through the
 * main process's /proc/PID/cwd (its data directory) and /proc/PID/root. */
bool ng_db_conf_path(const char *path);
/* /proc/PID/environ, read for the main processes of Oracle (ORACLE_HOME)
 * and MariaDB (MYSQL_HOME). */
bool ng_db_environ_path(const char *path);

/*
 * What a snapshot may keep of a database's configuration file: the lines of
 * the settings numaguard reads (and the includes), every other line,
 * comments included, replaced by "#" so that line numbers stay true; a
 * file may hold a
 * replication password (primary_conninfo) that no support bundle should
 * carry. 0 with *ret malloc'd and *ret_len set, -ENOMEM.
 */
int ng_db_conf_redact(const char *buf, size_t len, char **ret, size_t *ret_len);
/* What a snapshot may keep of a process's environment: the variables
 * numaguard reads (ORACLE_HOME, ORACLE_SID, MYSQL_HOME), NUL
 * separated as the kernel gives them; every other one, which may hold a
 * password, is left out. 0 with *ret malloc'd and *ret_len set, -ENOMEM. */
int ng_db_environ_redact(const char *buf, size_t len, char **ret, size_t *ret_len);

#ifdef __cplusplus
}
#endif

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
 *
 * The settings a snapshot holds (struct ng_db_settings, enum
 * ng_huge_setting, enum ng_db_conf_kind) are defined in ng-snapshot.h,
 * which this header includes.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ng-snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "unset", "off", "on", "try", "partial". */
const char *ng_huge_setting_name(enum ng_huge_setting h);

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

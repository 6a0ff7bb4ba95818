/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the readers of each engine's configuration files (dbconf.c for
 * PostgreSQL, mycnf.c, oracle.c). Internal; the rest of collect uses
 * dbconf.h. */

#include "dbconf.h"
#include "reader.h"

#pragma GCC visibility push(hidden)

/* The settings of MariaDB's (or MySQL's) server pr, from the option files
 * it reads and its command line. -ENOMEM only: what cannot be read is
 * recorded in ret. */
int ng_dbconf_read_mariadb(struct collector *c, const struct ng_proc *pr, struct ng_db_settings *ret);
/* The settings of the Oracle instance whose pmon is pr, from its
 * parameter file under the ORACLE_HOME of pmon's environment. */
int ng_dbconf_read_oracle(struct collector *c, const struct ng_proc *pr, struct ng_db_settings *ret);

#pragma GCC visibility pop

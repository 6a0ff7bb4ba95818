/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `cpuset apply INSTANCE [--dry-run]` (cmd-cpuset.c). Returns the exit
 * status. */

struct ctl_opts;

int ctl_cpuset(const struct ctl_opts *o);

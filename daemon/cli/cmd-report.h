/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The reporting commands (cmd-report.c): audit, topology, segments,
 * hugepages plan. Each returns the exit status. */

struct ctl_opts;

int ctl_audit(const struct ctl_opts *o);
int ctl_topology(const struct ctl_opts *o);
int ctl_segments(const struct ctl_opts *o);
int ctl_hugepages_plan(const struct ctl_opts *o);

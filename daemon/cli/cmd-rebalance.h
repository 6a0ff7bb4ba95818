/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `rebalance INSTANCE [--dry-run]` (cmd-rebalance.c). Returns the exit
 * status. */

struct ctl_opts;

int ctl_rebalance(const struct ctl_opts *o);

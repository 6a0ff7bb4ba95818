/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `hugepages reserve --size --pages [--node]` and `hugepages apply`
 * (cmd-hugepages.c); [--dry-run]. Each returns the exit status. */

struct ctl_opts;

int ctl_hugepages_reserve(const struct ctl_opts *o);
int ctl_hugepages_apply(const struct ctl_opts *o);

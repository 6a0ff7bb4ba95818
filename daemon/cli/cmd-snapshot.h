/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `snapshot` (cmd-snapshot.c): what one collection read, packed as a
 * tarball. Returns the exit status. */

struct ctl_opts;

int ctl_snapshot(const struct ctl_opts *o);

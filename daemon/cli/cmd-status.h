/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `status` and `reload`: requests to numaguardd's control socket
 * (cmd-status.c). Each returns the exit status. */

struct ctl_opts;

int ctl_status(const struct ctl_opts *o);
int ctl_reload(const struct ctl_opts *o);

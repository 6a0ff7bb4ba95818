/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `rehearse [INSTANCE]` (cmd-rehearse.c): the next start of each instance,
 * or of INSTANCE, predicted. Returns the exit status. */

struct ctl_opts;

int ctl_rehearse(const struct ctl_opts *o);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* `probe [--nodes LIST] [--size SIZE] [--save]` (cmd-probe.c). Returns the
 * exit status. */

struct ctl_opts;

int ctl_probe(const struct ctl_opts *o);

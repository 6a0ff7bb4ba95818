/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* --check-config: the merged configuration against this host (check.c). */

struct manager_opts;
struct ng_bitmap;
struct ng_path;

/* The host's online nodes (node 0 alone on a kernel without NUMA): 0 or -errno. */
int host_nodes(const struct ng_path *p, struct ng_bitmap *ret);
/* --check-config: exit status 0 (valid; warnings on stderr) or 78. */
int check_config_run(const struct manager_opts *o);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared state of numaguardctl's commands. */

#include <stdbool.h>
#include <stdio.h>

struct ng_snapshot;

/* Exit statuses (monitoring-plugin convention, see numaguardctl(1)). */
enum {
        NG_EXIT_OK = 0,
        NG_EXIT_WARNING = 1,
        NG_EXIT_CRITICAL = 2,
        NG_EXIT_UNKNOWN = 3,    /* could not audit; also usage and I/O errors */
};

struct ctl_opts {
        const char *root;
        const char *output;
        const char *config;
        bool json;
        bool exact;
};

int ctl_snapshot(const struct ctl_opts *o);
/* Prints "numaguardctl: what: strerror" to stderr and returns NG_EXIT_UNKNOWN. */
int ctl_fail(const char *what, int r);

/* Renders what `topology` / `segments` print; 0 or -errno. */
int ctl_render_topology(const struct ng_snapshot *s, bool json, FILE *f);
int ctl_render_segments(const struct ng_snapshot *s, bool json, FILE *f);

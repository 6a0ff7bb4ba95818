/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by snapshot.c, picture.c and collect-proc.c. Not installed. */

#include <stdarg.h>

#include "ng-snapshot.h"

struct collector {
        const struct ng_path *p;
        struct ng_collect_opts o;
        struct ng_snapshot *s;
        pid_t current_pid;      /* whose files are being read, 0 for the host's */
};

/* Reads a file through the path layer and counts it in the snapshot's
 * cost; calls the progress hook first. */
int ng_collect_vread(struct collector *c, char **ret_buf, size_t *ret_len, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
/* 1 when the process was read, 0 when it is a kernel thread or went away
 * mid-read, <0 on a real error. */
int ng_collect_read_proc(struct collector *c, pid_t pid, struct ng_proc *pr);
/* Rereads pr's status: 1 done, 0 gone (pr unchanged), <0 on a real error. */
int ng_collect_read_status(struct collector *c, struct ng_proc *pr);
int ng_collect_read_stat(struct collector *c, pid_t pid, struct ng_pid_stat *ret);
/* Appends a copy of *pr (taking what it owns) to s->procs, *cap its room. */
int ng_collect_add_proc(struct ng_snapshot *s, size_t *cap, const struct ng_proc *pr);
void ng_proc_done(struct ng_proc *pr);
bool ng_map_is_segment(const struct ng_map *m);

/* picture.c: the processes of c->s from the picture, reading only what may
 * have changed since the last collection (or everything, see ng-picture.h). */
int ng_picture_collect_procs(struct ng_picture *pic, struct collector *c);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What the terminals numaguardctl writes to can show (term.c): bars,
 * colour, wrapping, progress. */

#include <stdbool.h>
#include <stdio.h>

/* --color=WHEN */
enum ctl_color {
        CTL_COLOR_AUTO,         /* on a terminal, unless NO_COLOR is set */
        CTL_COLOR_ALWAYS,
        CTL_COLOR_NEVER,
};

struct ctl_term {
        bool utf8;              /* stdout: a terminal with a UTF-8 locale: block bars */
        bool color;             /* severities in colour */
        bool progress;          /* stderr: a terminal: progress for long work */
        unsigned width;         /* stdout: a terminal this many columns wide; 0: piped, no wrapping */
};

int ctl_color_parse(const char *s, enum ctl_color *ret);
void ctl_term_init(struct ctl_term *t, enum ctl_color color);
/* A stream to use as stdout that adapts the library's text to t (ASCII bars,
 * coloured severities), writing into stdout; NULL when the text goes out as
 * it is (or on ENOMEM). fclose() it to flush. */
FILE *ctl_term_stdout(const struct ctl_term *t);

/* Progress on stderr for work that may take seconds: nothing unless stderr
 * is a terminal, and nothing for the first second; cleared when stopped.
 * NULL (no progress) is fine to pass around. */
struct ctl_progress;
struct ctl_progress *ctl_progress_start(const struct ctl_term *t, const char *what);
void ctl_progress_file(struct ctl_progress *p);
void ctl_progress_stop(struct ctl_progress *p);

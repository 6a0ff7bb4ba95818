/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The snapshot's tarball and its notes (archive.c). */

#include <stddef.h>

/* What a snapshot could not take, or took with a warning: the lines of its
 * NG_PATH_INCOMPLETE_FILE, "PATH<tab>WHY". */
struct ctl_notes {
        char *text;
        size_t len, cap;
};
/* Adds a line for the host path path. 0 or -ENOMEM. */
int ctl_note(struct ctl_notes *n, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Adds lines as they are (a newline after the last). 0 or -ENOMEM. */
int ctl_notes_append(struct ctl_notes *n, const char *text, size_t len);
void ctl_notes_done(struct ctl_notes *n);
/* The staging tree dir as a .tar.gz in out ("-": stdout), 0600, removed
 * again when it fails; what the tree lacks, notes and the entries that
 * could not be packed, is its last entry, NG_PATH_INCOMPLETE_FILE. 0,
 * -EEXIST when out is there and not a regular file or a link, or another
 * -errno. */
int ctl_pack_tree(const char *out, const char *dir, struct ctl_notes *notes);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The Prometheus textfile, written atomically (metrics-file.c). */

struct manager;

/* Writes the metrics file of the last poll (temp file + rename). Empty path:
 * nothing. Returns 0 or -errno. */
int metrics_write(const struct manager *m, const char *path);
/* Replaces it with the file of a daemon stopped on purpose: numaguard_up 0,
 * numaguard_stopped_timestamp_seconds, the last poll's timestamp. */
int metrics_write_stopped(const struct manager *m, const char *path);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* numaguardd's own log lines (log.c). Lines go to stderr with a "<N>"
 * priority prefix when stderr is the journal (JOURNAL_STREAM), plain
 * otherwise. Returns -abs(err) for `return log_...`. */

#include <syslog.h>

void log_set_max_level(int level);
int log_full(int level, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define log_error_errno(e, ...) log_full(LOG_ERR, (e), __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, 0, __VA_ARGS__)

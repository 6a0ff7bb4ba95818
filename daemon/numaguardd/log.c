/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numaguardd's own log lines (not alerts: those go through sink.c).
 * Under systemd stderr is a journal stream: a "<N>" prefix sets the priority
 * of each line (sd-daemon(3)). Elsewhere the line is printed as is. A line
 * may name a process, a file or an instance that others chose: it is
 * escaped (text.h), so that no name can start a line of its own or
 * reach a terminal's control sequences.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "text.h"

static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
        max_level = level;
}

static bool stderr_is_journal(void)
{
        static int cached = -1;
        if (cached < 0)
                cached = getenv("JOURNAL_STREAM") != NULL;
        return cached;
}

int log_full(int level, int err, const char *fmt, ...)
{
        int saved = errno;
        err = err < 0 ? -err : err;
        if (level <= max_level) {
                char raw[1024], msg[NG_TEXT_SIZE(sizeof(raw))];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(raw, sizeof(raw), fmt, ap);
                va_end(ap);
                ng_text_escape(NG_TEXT_TERM, raw, msg, sizeof(msg));
                if (stderr_is_journal())
                        fprintf(stderr, "<%d>%s%s%s\n", level, msg, err ? ": " : "",
                                err ? strerror(err) : "");
                else
                        fprintf(stderr, "numaguardd: %s%s%s\n", msg, err ? ": " : "",
                                err ? strerror(err) : "");
        }
        errno = saved;
        return -err;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* /dev/log, written without syslog(3), which drops messages without a word
 * (syslog.c). */

#include <stdbool.h>

#define SYSLOG_SOCKET "/dev/log"

struct syslog_conn {
        int fd;         /* -1: not connected */
        bool stream;    /* a SOCK_STREAM logger: messages end with a NUL */
        bool congested; /* the last wait for room in its queue timed out */
};

/* 0 or -errno (-ENOENT: no /dev/log). */
int syslog_connect(struct syslog_conn *c);
void syslog_disconnect(struct syslog_conn *c);
/* One message at priority (facility daemon); connects when not connected
 * and once more after the logger restarted. Waits 100 ms at most for room
 * in the logger's queue. 0 or -errno. */
int syslog_send(struct syslog_conn *c, int priority, const char *msg);

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Alerts to syslog through /dev/log, written here rather than by syslog(3):
 * glibc drops a message without a word when the socket is missing (connect
 * says ENOENT) or the logger went away, and numaguardd must know, to say so
 * once, fall back to the journal and show the sink as down (status,
 * numaguard_alert_sink_up). The framing is glibc's, RFC 3164:
 * "<PRI>Mmm dd hh:mm:ss numaguardd[PID]: MESSAGE". Sends barely wait: a
 * logger that stops reading must not stall the event loop, so a
 * queue still full after a short wait (EAGAIN) is a failed delivery like
 * any other.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "syslog.h"

#define SYSLOG_WAIT_MSEC 100

static int connect_type(int type)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = SYSLOG_SOCKET };
        _cleanup_close_ int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return ng_steal_fd(&fd);
}

int syslog_connect(struct syslog_conn *c)
{
        if (c->fd >= 0)
                close(c->fd);
        c->stream = false;
        c->fd = connect_type(SOCK_DGRAM);
        /* A logger listening on a stream socket (some rsyslog setups). */
        if (c->fd == -EPROTOTYPE) {
                c->fd = connect_type(SOCK_STREAM);
                c->stream = c->fd >= 0;
        }
        return c->fd < 0 ? c->fd : 0;
}

void syslog_disconnect(struct syslog_conn *c)
{
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
}

/* A logger's queue holds few datagrams (net.unix.max_dgram_qlen, 10 on
 * many hosts) and a poll can raise more alerts at once: a full queue is
 * waited on, SYSLOG_WAIT_MSEC at most, before the message counts as not
 * delivered; not again until one went through, so a logger that stopped
 * reading costs one wait, not one per alert. */
static int send_once(struct syslog_conn *c, const char *line, size_t len)
{
        for (int tries = 0;; tries++) {
                ssize_t k = send(c->fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k >= 0) {
                        c->congested = false;
                        return (size_t) k == len ? 0 : -EAGAIN;
                }
                if (errno != EAGAIN || tries > 0 || c->congested)
                        return -errno;
                struct pollfd p = { .fd = c->fd, .events = POLLOUT };
                if (poll(&p, 1, SYSLOG_WAIT_MSEC) <= 0) {
                        c->congested = true;
                        return -EAGAIN;
                }
        }
}

int syslog_send(struct syslog_conn *c, int priority, const char *msg)
{
        char stamp[32], line[2048];
        time_t now = time(NULL);
        struct tm tm;
        if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%b %e %T", &tm))
                snprintf(stamp, sizeof(stamp), "-");
        int n = snprintf(line, sizeof(line), "<%d>%s numaguardd[%d]: %s", LOG_DAEMON | (priority & LOG_PRIMASK),
                         stamp, (int) getpid(), msg);
        size_t len = n < 0 ? 0 : (size_t) n >= sizeof(line) ? sizeof(line) - 1 : (size_t) n;
        int r = c->fd >= 0 ? 0 : syslog_connect(c);
        if (r >= 0)
                r = send_once(c, line, len + c->stream);        /* a stream frames by the NUL */
        /* The logger restarted since: its socket is a new one. */
        if (r == -ECONNREFUSED || r == -ENOTCONN || r == -EPIPE || r == -ECONNRESET) {
                r = syslog_connect(c);
                if (r >= 0)
                        r = send_once(c, line, len + c->stream);
        }
        return r;
}

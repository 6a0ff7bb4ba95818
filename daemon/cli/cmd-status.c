/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `numaguardctl status` and `numaguardctl reload`: one request line to
 * numaguardd's control socket, the answer copied to stdout. Protocol
 * (numaguardd(8), CONTROL SOCKET): the answer's first line is "ok" or
 * "ok exit=N" (N: the worst active alert, 0/1/2 as for `audit`) or
 * "error REASON"; the body follows until EOF.
 */

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmd-status.h"
#include "common.h"
#include "ng-config.h"
#include "util.h"

/* The daemon drops a connection after 2 s; wait a little longer. */
#define CLIENT_TIMEOUT_MSEC 5000
#define ANSWER_MAX_BYTES (64u << 20)

/* --socket, or the socket of the configuration (quietly: a broken default
 * file must not stop `status`), or the compiled default. */
static int socket_path(const struct ctl_opts *o, char *buf, size_t size)
{
        struct ng_config *c = NULL;
        if (o->socket) {
                snprintf(buf, size, "%s", o->socket);
                return 0;
        }
        int r = o->config ? ctl_load_config(o, &c)
                          : ng_config_load(NG_CONFIG_DEFAULT_PATH, NULL, NULL, &c);
        if (r < 0 && o->config)
                return r;
        if (r < 0 && (r = ng_config_new_default(&c)) < 0)
                return r;
        snprintf(buf, size, "%s", c->socket_path);
        ng_config_free(c);
        return 0;
}

/* The socket is root's, mode 0600, or 0660 and status_group's: the socket
 * itself says which (numaguardctl may not read the daemon's configuration,
 * and --socket names another's). */
static int refused(const char *path)
{
        struct stat st;
        struct group *g = stat(path, &st) == 0 && st.st_gid != 0 && (st.st_mode & S_IWGRP) ? getgrgid(st.st_gid) : NULL;
        if (g)
                fprintf(stderr, "numaguardctl: permission denied on %s: only root and members of status_group "
                        "\"%s\" may ask numaguardd (a new member logs in again)\n", path, g->gr_name);
        else
                fprintf(stderr, "numaguardctl: permission denied on %s: only root may ask numaguardd; status_group "
                        "in numaguard.conf(5) lets a group ask for status\n", path);
        return NG_EXIT_UNKNOWN;
}

static int connect_to(const char *path, int *ret_fd)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        *ret_fd = ng_steal_fd(&fd);
        return 0;
}

static long long now_msec(void)
{
        return (long long) (now_usec(CLOCK_MONOTONIC) / USEC_PER_MSEC);
}

/* Waits for fd to be ready for events until deadline; -ETIMEDOUT after. */
static int wait_fd(int fd, short events, long long deadline)
{
        for (;;) {
                long long left = deadline - now_msec();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = events };
                int k = poll(&p, 1, (int) left);
                if (k > 0)
                        return 0;
                if (k < 0 && errno != EINTR)
                        return -errno;
        }
}

static int exchange(int fd, const char *request, char **ret, size_t *ret_len)
{
        long long deadline = now_msec() + CLIENT_TIMEOUT_MSEC;
        size_t len = strlen(request), off = 0;
        while (off < len) {
                int r = wait_fd(fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
                ssize_t k = send(fd, request + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                off += k > 0 ? (size_t) k : 0;
        }
        size_t cap = 65536 + 1, n = 0;  /* the answer and its NUL */
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                int r = wait_fd(fd, POLLIN, deadline);
                ssize_t k = r < 0 ? r : recv(fd, buf + n, cap - n - 1, MSG_DONTWAIT);
                if (k == 0)
                        break;
                if (k < 0 && (r < 0 || (errno != EAGAIN && errno != EINTR)))
                        return r < 0 ? r : -errno;
                n += k > 0 ? (size_t) k : 0;
                if (ng_grow(&buf, &cap, n + 1, 1, ANSWER_MAX_BYTES + 1) < 0)
                        return -EFBIG;
        }
        buf[n] = '\0';
        *ret = ng_steal_ptr(&buf);
        *ret_len = n;
        return 0;
}

/* Sends request and prints the body; returns the exit status. */
static int request(const struct ctl_opts *o, const char *req, bool exit_hint)
{
        char path[4096];
        int fd = -1;
        int r = socket_path(o, path, sizeof(path));
        if (r < 0)
                return NG_EXIT_UNKNOWN;
        r = connect_to(path, &fd);
        if (r == -ENOENT || r == -ECONNREFUSED) {
                fprintf(stderr, "numaguardctl: numaguardd is not running (nothing listens on %s)\n", path);
                return NG_EXIT_UNKNOWN;
        }
        if (r == -EACCES || r == -EPERM)
                return refused(path);
        if (r < 0)
                return ctl_fail(path, r);
        char *ans = NULL;
        size_t len = 0;
        r = exchange(fd, req, &ans, &len);
        close(fd);
        if (r < 0)
                return ctl_fail(r == -ETIMEDOUT ? "numaguardd did not answer in time" : "talking to numaguardd", r);
        char *body = memchr(ans, '\n', len);
        body = body ? body + 1 : ans + len;
        int status = NG_EXIT_OK;
        if (!strncmp(ans, "error ", 6)) {
                fprintf(stderr, "numaguardctl: numaguardd: %.*s\n", (int) (body - ans - 7), ans + 6);
                status = NG_EXIT_UNKNOWN;
        } else if (!strncmp(ans, "ok", 2)) {
                const char *e = strstr(ans, " exit=");
                if (exit_hint && e && e < body)
                        status = atoi(e + 6);
                fwrite(body, 1, len - (size_t) (body - ans), stdout);
                if (fflush(stdout) != 0)
                        status = ctl_fail("writing output", -errno);
        } else {
                fprintf(stderr, "numaguardctl: numaguardd sent no answer\n");
                status = NG_EXIT_UNKNOWN;
        }
        free(ans);
        return status;
}

int ctl_status(const struct ctl_opts *o)
{
        return request(o, o->json ? "status json\n" : "status\n", true);
}

int ctl_reload(const struct ctl_opts *o)
{
        return request(o, "reload\n", false);
}

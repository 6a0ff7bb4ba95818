/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket. Protocol (numaguardctl(1), PROTOCOL): the client
 * connects, sends one request line ("status", "status json", "reload") of at
 * most SERVER_REQUEST_MAX bytes, and reads until EOF an answer whose first
 * line is "ok" or "error REASON", followed by the body. One request per
 * connection.
 *
 * Nothing here blocks the loop: the sockets are non-blocking, every
 * connection has a deadline (SERVER_TIMEOUT_USEC from accept to the last byte
 * written) and a bounded request buffer; beyond SERVER_MAX_CONNECTIONS (or
 * SERVER_MAX_PER_UID for one user other than root) a connection is closed
 * at once (admit()).
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "listen.h"
#include "log.h"
#include "request.h"
#include "server.h"

struct conn {
        struct server *srv;
        struct conn *next, *prev;
        int fd;
        sd_event_source *io, *deadline;
        struct peer peer;
        char req[SERVER_REQUEST_MAX + 1];
        size_t req_len;
        char *resp;
        size_t resp_len, resp_off;
        /* A request too large: its rest is read and dropped until the
         * client closes, so that it reads the answer and an end of file,
         * not a reset (closing with unread data resets the peer). */
        bool drain, answered;
};

struct server {
        sd_event *event;
        struct manager *manager;
        server_handler_fn handler;
        int fd;
        sd_event_source *io;
        char *path;
        struct socket_place place;
        gid_t status_gid;
        struct conn *conns;
        size_t n_conns;
};

bool peer_allowed(const struct peer *p, enum request_access access, gid_t group_gid)
{
        if (p->uid == 0)
                return true;
        if (access != ACCESS_READ || group_gid == (gid_t) -1)
                return false;
        if (p->gid == group_gid)
                return true;
        for (size_t i = 0; i < p->n_groups; i++)
                if (p->groups[i] == group_gid)
                        return true;
        return false;
}

static void conn_free(struct conn *c)
{
        if (!c)
                return;
        struct server *s = c->srv;
        if (c->prev)
                c->prev->next = c->next;
        else
                s->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_conns--;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->deadline);
        if (c->fd >= 0)
                close(c->fd);
        free(c->peer.groups);
        free(c->resp);
        free(c);
}

static int read_peer(int fd, struct peer *ret)
{
        struct ucred uc;
        socklen_t len = sizeof(uc);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
                return -errno;
        *ret = (struct peer) { .pid = uc.pid, .uid = uc.uid, .gid = uc.gid };
        /* SO_PEERGROUPS (Linux 4.13): ERANGE tells the size needed. */
        len = 64 * sizeof(gid_t);
        for (int tries = 0; tries < 2; tries++) {
                gid_t *g = malloc(len ? len : sizeof(gid_t));
                if (!g)
                        return -ENOMEM;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) == 0) {
                        ret->groups = g;
                        ret->n_groups = len / sizeof(gid_t);
                        return 0;
                }
                free(g);
                if (errno != ERANGE)
                        break;
        }
        return 0;       /* no supplementary groups known: primary gid only */
}

static int conn_respond(struct conn *c, const char *reason, int exit_hint, char *body, size_t body_len);

static void conn_error(struct conn *c, const char *reason)
{
        conn_respond(c, reason, 0, NULL, 0);
}

static void handle_request(struct conn *c)
{
        _cleanup_free_ char *body = NULL;
        char why[512] = "", req[SERVER_REQUEST_MAX + 1];
        size_t body_len = 0;
        int n = server_request_parse(c->req, c->req_len, req, sizeof(req));
        if (n < 0) {
                conn_error(c, n == -E2BIG ? "request too large" : "malformed request (printable ASCII only)");
                return;
        }
        FILE *f = open_memstream(&body, &body_len);
        if (!f) {
                conn_error(c, "out of memory");
                return;
        }
        int r = c->srv->handler(c->srv->manager, &c->peer, req, f, why, sizeof(why));
        if (fclose(f) != 0 && r >= 0) {
                r = -ENOMEM;
                snprintf(why, sizeof(why), "out of memory");
        }
        if (r < 0) {
                conn_error(c, why[0] ? why : strerror(-r));
                return;
        }
        conn_respond(c, NULL, r, ng_steal_ptr(&body), body_len);
}

/* Queues "ok exit=N\n" + body or "error REASON\n"; takes body. */
static int conn_respond(struct conn *c, const char *reason, int exit_hint, char *body_taken, size_t body_len)
{
        _cleanup_free_ char *body = body_taken;
        char head[600];
        int hl = reason ? snprintf(head, sizeof(head), "error %s\n", reason)
                        : snprintf(head, sizeof(head), "ok exit=%d\n", exit_hint);
        if (hl >= (int) sizeof(head))
                hl = sizeof(head) - 1;
        char *buf = malloc((size_t) hl + body_len);
        if (!buf) {
                conn_free(c);
                return -ENOMEM;
        }
        memcpy(buf, head, (size_t) hl);
        if (body_len)
                memcpy(buf + hl, body, body_len);
        free(c->resp);
        c->resp = buf;
        c->resp_len = (size_t) hl + body_len;
        c->resp_off = 0;
        if (!c->drain)
                shutdown(c->fd, SHUT_RD);
        int r = sd_event_source_set_io_events(c->io, EPOLLOUT);
        if (r < 0) {
                conn_free(c);
                return r;
        }
        return 0;
}

static void conn_write(struct conn *c)
{
        while (c->resp_off < c->resp_len) {
                ssize_t k = send(c->fd, c->resp + c->resp_off, c->resp_len - c->resp_off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return;
                        break;  /* client went away */
                }
                c->resp_off += (size_t) k;
        }
        if (c->drain && c->resp_off == c->resp_len) {
                c->answered = true;
                shutdown(c->fd, SHUT_WR);
                if (sd_event_source_set_io_events(c->io, EPOLLIN) >= 0)
                        return;
        }
        conn_free(c);
}

/* Reads and drops what a client sends after its too-large request, until
 * it closes (or the connection's deadline). */
static void conn_drain(struct conn *c)
{
        char buf[4096];
        for (;;) {
                ssize_t k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (k > 0)
                        continue;
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                conn_free(c);
                return;
        }
}

static void conn_read(struct conn *c)
{
        for (;;) {
                size_t room = SERVER_REQUEST_MAX - c->req_len;
                ssize_t k = recv(c->fd, c->req + c->req_len, room, MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return;
                        conn_free(c);
                        return;
                }
                if (k == 0) {
                        if (c->req_len == 0)
                                conn_free(c);
                        else
                                handle_request(c);
                        return;
                }
                void *nl = memchr(c->req + c->req_len, '\n', (size_t) k);
                c->req_len += (size_t) k;
                if (nl) {
                        c->req_len = (size_t) ((char *) nl - c->req);
                        handle_request(c);
                        return;
                }
                if (c->req_len >= SERVER_REQUEST_MAX) {
                        c->drain = true;
                        conn_error(c, "request too large");
                        return;
                }
        }
}

static int on_conn_io(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        struct conn *c = userdata;
        (void) es;
        (void) fd;
        if (c->answered)
                conn_drain(c);
        else if (c->resp)
                conn_write(c);
        else if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
                conn_read(c);
        return 0;
}

static int on_conn_deadline(sd_event_source *es, uint64_t usec, void *userdata)
{
        struct conn *c = userdata;
        (void) es;
        (void) usec;
        log_debug("control connection of pid %d timed out, closing", (int) c->peer.pid);
        if (!c->resp) {
                static const char msg[] = "error timeout\n";
                (void) !send(c->fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        conn_free(c);
        return 0;
}

static bool admit(struct server *s, struct conn *c);

static int conn_new(struct server *s, int fd)
{
        struct conn *c = calloc(1, sizeof(*c));
        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->srv = s;
        c->fd = fd;
        c->next = s->conns;
        if (s->conns)
                s->conns->prev = c;
        s->conns = c;
        s->n_conns++;
        int r = read_peer(fd, &c->peer);
        if (r >= 0)
                r = sd_event_add_io(s->event, &c->io, fd, EPOLLIN, on_conn_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(s->event, &c->deadline, CLOCK_MONOTONIC,
                                               SERVER_TIMEOUT_USEC, 0, on_conn_deadline, c);
        if (r < 0) {
                conn_free(c);
                return r;
        }
        /* Full: idle clients must not lock everyone else out until their
         * deadline, nor one user another. */
        (void) admit(s, c);
        return 0;
}

static size_t conns_of(const struct server *s, uid_t uid)
{
        size_t n = 0;
        for (const struct conn *c = s->conns; c; c = c->next)
                n += c->peer.uid == uid;
        return n;
}

/* The oldest connection of uid (the list is newest first). */
static struct conn *oldest_of(const struct server *s, uid_t uid)
{
        struct conn *found = NULL;
        for (struct conn *c = s->conns; c; c = c->next)
                if (c->peer.uid == uid)
                        found = c;
        return found;
}

static void drop_busy(struct conn *c)
{
        log_debug("Too many control connections, dropping the one of pid %d (uid %u)", (int) c->peer.pid,
                  (unsigned) c->peer.uid);
        if (!c->resp) {
                static const char msg[] = "error busy\n";
                (void) !send(c->fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        conn_free(c);
}

/*
 * Makes room for the new connection c when its uid or the server is full.
 * A user other than root never pushes out anyone but itself: at
 * SERVER_MAX_PER_UID connections, or with the server full, its own oldest
 * goes, or the new one when it holds none. Root, with the server full,
 * pushes out the oldest connection of whoever holds the most. Returns false
 * when c itself was dropped.
 */
static bool admit(struct server *s, struct conn *c)
{
        uid_t uid = c->peer.uid;
        size_t mine = conns_of(s, uid) - 1;     /* c is in the list */
        if (uid != 0 && mine >= SERVER_MAX_PER_UID) {
                drop_busy(oldest_of(s, uid));
                return true;
        }
        if (s->n_conns <= SERVER_MAX_CONNECTIONS)
                return true;
        if (uid != 0) {
                struct conn *own = mine ? oldest_of(s, uid) : c;
                drop_busy(own);
                return own != c;
        }
        uid_t top = 0;
        size_t most = 0;
        for (const struct conn *k = s->conns; k; k = k->next) {
                size_t n = conns_of(s, k->peer.uid);
                if (n > most || (n == most && k->peer.uid != 0)) {
                        most = n;
                        top = k->peer.uid;
                }
        }
        drop_busy(oldest_of(s, top));
        return true;
}

static int on_accept(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        struct server *s = userdata;
        (void) es;
        (void) revents;
        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_error_errno(errno, "accepting on the control socket, ignoring");
                        return 0;
                }
                int r = conn_new(s, cfd);
                if (r < 0)
                        log_error_errno(r, "setting up a control connection, ignoring");
        }
}

static int resolve_group(const char *name, gid_t *ret)
{
        char buf[4096];
        struct group gr, *res = NULL;
        char *end;
        unsigned long v = strtoul(name, &end, 10);
        if (*name && !*end) {
                *ret = (gid_t) v;
                return 0;
        }
        int r = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
        if (r != 0)
                return -r;
        if (!res)
                return -ENOENT;
        *ret = gr.gr_gid;
        return 0;
}

static int bind_socket(struct server *s, const char *path, const char *group, char *why, size_t whylen)
{
        gid_t gid = (gid_t) -1;
        char gwhy[512];
        /* Resolved first: NSS may read files or ask a daemon. */
        int r = group[0] ? resolve_group(group, &gid) : 0;
        if (r < 0) {
                log_warning("status_group \"%s\" cannot be resolved (%s), socket stays root only",
                            group, strerror(-r));
                gid = (gid_t) -1;
        }
        r = socket_place_bind(&s->place, s->fd, path, why, whylen);
        if (r < 0 || gid == (gid_t) -1)
                return r;
        if (socket_place_give(&s->place, path, gid, gwhy, sizeof(gwhy)) < 0)
                return log_error_errno(0, "%s; the socket stays root only, ignoring", gwhy), 0;
        s->status_gid = gid;
        return 0;
}

int server_new(sd_event *e, const char *path, const char *group, struct manager *m,
               server_handler_fn handler, struct server **ret, char *why, size_t whylen)
{
        _ng_cleanup_(server_freep) struct server *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->manager = m;
        s->handler = handler;
        s->path = strdup(path);
        s->fd = -1;
        s->place.dir_fd = -1;
        s->status_gid = (gid_t) -1;
        s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int r = !s->path ? -ENOMEM : s->fd < 0 ? -errno : 0;
        if (r < 0)
                snprintf(why, whylen, "%s: %s", path, strerror(-r));
        else
                r = bind_socket(s, path, group ? group : "", why, whylen);
        if (r >= 0 && listen(s->fd, SERVER_MAX_CONNECTIONS) < 0) {
                r = -errno;
                snprintf(why, whylen, "listening on %s: %s", path, strerror(-r));
        }
        if (r >= 0 && (r = sd_event_add_io(e, &s->io, s->fd, EPOLLIN, on_accept, s)) < 0)
                snprintf(why, whylen, "watching %s: %s", path, strerror(-r));
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&s);
        return 0;
}

struct server *server_free(struct server *s)
{
        if (!s)
                return NULL;
        while (s->conns)
                conn_free(s->conns);
        sd_event_source_disable_unref(s->io);
        if (s->fd >= 0)
                close(s->fd);
        socket_place_release(&s->place);
        free(s->path);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

const char *server_path(const struct server *s)
{
        return s->path;
}

gid_t server_status_gid(const struct server *s)
{
        return s->status_gid;
}

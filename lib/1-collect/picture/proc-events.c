/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the kernel's process events (the proc connector, netlink
 * NETLINK_CONNECTOR / CN_IDX_PROC), so that a poll through the process
 * picture learns which processes were born, exec()ed, renamed or changed
 * their uid without listing /proc (docs/ARCHITECTURE.md, "Cost tiers").
 *
 * The kernel accepts a listener only from the initial user and pid
 * namespaces, on a socket in the initial network namespace (numaguard.service
 * runs in a private one, where the request is refused), and older kernels
 * only with CAP_NET_ADMIN: anywhere else the listen request is refused or
 * goes unanswered, and the picture lists /proc instead. Events are read only when a poll runs; when the socket's buffer
 * overflowed in between, events were lost and that poll lists /proc.
 */

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "picture-internal.h"
#include "util.h"

/* Room for ~10^5 events between two polls: thread churn counts too. */
#define EVENTS_RCVBUF_BYTES (16 << 20)
/* Datagrams read by one drain at most (each one event). */
#define EVENTS_MAX_READS 1000000
/* How long the kernel may take to answer the listen request. */
#define EVENTS_ACK_TIMEOUT_MS 500

struct ng_proc_events {
        int fd;
        uint32_t seq;
};

/* One netlink message carrying one connector message, the op its payload:
 * laid out piece by piece, since struct cn_msg ends in a flexible array. */
static int send_op(struct ng_proc_events *ev, enum proc_cn_mcast_op op)
{
        char req[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(op)];
        struct nlmsghdr nl = {.nlmsg_len = sizeof(req), .nlmsg_type = NLMSG_DONE};
        struct cn_msg cn = {.id = {.idx = CN_IDX_PROC, .val = CN_VAL_PROC}, .seq = ev->seq, .ack = ev->seq, .len = sizeof(op)};
        memcpy(req, &nl, sizeof(nl));
        memcpy(req + NLMSG_HDRLEN, &cn, sizeof(cn));
        memcpy(req + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
        return send(ev->fd, req, sizeof(req), 0) == (ssize_t) sizeof(req) ? 0 : -errno;
}

/* The proc_event of one datagram into *ret (copied: it follows the 20-byte
 * cn_msg, 4 bytes short of its own alignment), and its connector header;
 * false when the datagram carries none. */
static bool event_of(const char *buf, size_t len, struct proc_event *ret, struct cn_msg *ret_cn)
{
        const struct nlmsghdr *nl = (const struct nlmsghdr *) buf;
        if (len < NLMSG_LENGTH(sizeof(struct cn_msg)) || !NLMSG_OK(nl, len) || nl->nlmsg_type == NLMSG_ERROR)
                return false;
        const struct cn_msg *cn = NLMSG_DATA(nl);
        if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC || cn->len < sizeof(struct proc_event) ||
            nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(struct proc_event)))
                return false;
        memcpy(ret, cn->data, sizeof(*ret));
        *ret_cn = *cn;
        return true;
}

static int64_t now_msec(void)
{
        return (int64_t) (now_usec(CLOCK_MONOTONIC) / USEC_PER_MSEC);
}

/* Waits for the kernel's answer to our listen request: an event NONE whose
 * ack is ours plus one, err 0 (its seq is the kernel's own event count since
 * Linux 3.x). Other listeners' answers are multicast too. */
static int wait_ack(struct ng_proc_events *ev)
{
        char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
        int64_t deadline = now_msec() + EVENTS_ACK_TIMEOUT_MS;
        for (int64_t left; (left = deadline - now_msec()) > 0;) {
                struct pollfd pfd = { .fd = ev->fd, .events = POLLIN };
                int k = poll(&pfd, 1, (int) left);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -ETIMEDOUT;
                struct sockaddr_nl from;
                socklen_t fl = sizeof(from);
                ssize_t n = recvfrom(ev->fd, buf, sizeof(buf), 0, (struct sockaddr *) &from, &fl);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (n < 0)
                        return -errno;
                if (from.nl_pid != 0)
                        continue;
                struct proc_event pe;
                struct cn_msg cn;
                if (!event_of(buf, (size_t) n, &pe, &cn) || pe.what != PROC_EVENT_NONE || cn.ack != ev->seq + 1)
                        continue;
                return pe.event_data.ack.err ? -(int) pe.event_data.ack.err : 0;
        }
        return -ETIMEDOUT;
}

int ng_proc_events_open(struct ng_proc_events **ret)
{
        struct ng_proc_events *ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        /* Tells our answer from another listener's. */
        ev->seq = (uint32_t) getpid() ^ (uint32_t) (uintptr_t) ev;
        ev->fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        if (ev->fd < 0) {
                int r = -errno;
                free(ev);
                return r;
        }
        int size = EVENTS_RCVBUF_BYTES;
        /* FORCE passes net.core.rmem_max (CAP_NET_ADMIN, which listening
         * needs anyway); the plain option is the fallback. */
        if (setsockopt(ev->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(ev->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0 };
        int r = bind(ev->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        if (r >= 0)
                r = send_op(ev, PROC_CN_MCAST_LISTEN);
        if (r >= 0)
                r = wait_ack(ev);
        if (r < 0) {
                ng_proc_events_free(ev);
                return r;
        }
        *ret = ev;
        return 0;
}

void ng_proc_events_free(struct ng_proc_events *ev)
{
        if (!ev)
                return;
        (void) send_op(ev, PROC_CN_MCAST_IGNORE);
        close(ev->fd);
        free(ev);
}

static int pids_add(struct ng_pid_set *set, pid_t pid, bool exited)
{
        if (ng_grow(&set->v, &set->cap, set->n, sizeof(*set->v), 0) < 0)
                return -ENOMEM;
        set->v[set->n] = (struct ng_pid_touch) { .pid = pid, .exited = exited, .seq = set->n };
        set->n++;
        return 0;
}

/* Only processes count: a thread's birth, exec or rename is its leader's
 * business or none of ours. */
static int take_pid(struct ng_pid_set *touched, __kernel_pid_t pid, bool exited)
{
        if (pid <= 0)
                return 0;       /* no process has it: a message that cannot be true */
        int r = pids_add(touched, pid, exited);
        return r < 0 ? r : 1;
}

static int take_event(const struct proc_event *pe, struct ng_pid_set *touched)
{
        switch (pe->what) {
        case PROC_EVENT_FORK:
                if (pe->event_data.fork.child_pid != pe->event_data.fork.child_tgid)
                        return 0;
                return take_pid(touched, pe->event_data.fork.child_tgid, false);
        case PROC_EVENT_EXEC:
                return take_pid(touched, pe->event_data.exec.process_tgid, false);
        case PROC_EVENT_UID:
        case PROC_EVENT_GID:
                return take_pid(touched, pe->event_data.id.process_tgid, false);
        case PROC_EVENT_COMM:
                if (pe->event_data.comm.process_pid != pe->event_data.comm.process_tgid)
                        return 0;
                return take_pid(touched, pe->event_data.comm.process_tgid, false);
        case PROC_EVENT_EXIT:
                /* The leader may exit before its threads: checked, not dropped. */
                if (pe->event_data.exit.process_pid != pe->event_data.exit.process_tgid)
                        return 0;
                return take_pid(touched, pe->event_data.exit.process_tgid, true);
        default:
                return 0;
        }
}

int ng_proc_events_parse(const void *buf, size_t len, struct ng_pid_set *touched)
{
        struct proc_event pe;
        struct cn_msg cn;
        return event_of(buf, len, &pe, &cn) ? take_event(&pe, touched) : 0;
}

int ng_proc_events_drain(struct ng_proc_events *ev, struct ng_pid_set *touched)
{
        /* Events are ~80-byte datagrams: many per system call. */
        enum { BATCH = 64, SLOT = 256 };
        static_assert(SLOT >= NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct proc_event)), "slot too small");
        char bufs[BATCH][SLOT] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct iovec iov[BATCH];
        struct mmsghdr msgs[BATCH];
        struct sockaddr_nl from[BATCH];
        bool lost = false;
        touched->n = 0;
        for (size_t k = 0; k < BATCH; k++)
                iov[k] = (struct iovec) { .iov_base = bufs[k], .iov_len = SLOT };
        /* A fork storm faster than we read is as good as lost events. */
        for (size_t reads = 0; reads < EVENTS_MAX_READS / BATCH; reads++) {
                memset(msgs, 0, sizeof(msgs));
                for (size_t k = 0; k < BATCH; k++) {
                        msgs[k].msg_hdr.msg_iov = &iov[k];
                        msgs[k].msg_hdr.msg_iovlen = 1;
                        msgs[k].msg_hdr.msg_name = &from[k];
                        msgs[k].msg_hdr.msg_namelen = sizeof(from[k]);
                }
                int n = recvmmsg(ev->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == ENOBUFS) {
                        lost = true;    /* and read on: the queue holds newer ones */
                        continue;
                }
                if (n < 0)
                        return errno == EAGAIN ? (lost ? -ENOBUFS : 0) : -errno;
                for (int k = 0; k < n; k++) {
                        /* only the kernel speaks for the kernel */
                        if (from[k].nl_pid != 0)
                                continue;
                        int r = ng_proc_events_parse(bufs[k], msgs[k].msg_len, touched);
                        if (r < 0)
                                return r;
                }
        }
        return -ENOBUFS;
}

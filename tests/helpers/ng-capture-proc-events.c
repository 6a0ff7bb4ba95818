/* ng-capture-proc-events -- records the kernel's process events, as the
 * datagrams arrive, for the fixtures of tests/unit/test-proc-events.c and
 * the seeds of tests/fuzz/fuzz-proc-events.c.
 *
 *   ng-capture-proc-events DIR
 *
 * Listens on the proc connector (root, initial namespaces), then starts a
 * child that starts a thread, renames itself, changes its uid and exec()s
 * /bin/true. Writes each datagram the kernel sent about the child, byte for
 * byte, to DIR/<n>-<event> (fork, fork-thread, comm, uid, exec, exit,
 * exit-thread), and the kernel's answer to the listen request to DIR/ack.
 * Exit status: 0 done, 1 usage or system error, 77 no process events here.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

struct request {
        struct nlmsghdr nl;
        struct cn_msg cn;
        enum proc_cn_mcast_op op;
} __attribute__((packed));

static void *thread_main(void *arg)
{
        return arg;
}

static void child(void)
{
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, NULL) == 0)
                pthread_join(t, NULL);
        prctl(PR_SET_NAME, "ng-capture-kid");
        if (setuid(65534) < 0)
                _exit(1);
        execl("/bin/true", "true", (char *) NULL);
        _exit(1);
}

static int save(const char *dir, int n, const char *what, const void *buf, size_t len)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%02d-%s", dir, n, what);
        FILE *f = fopen(path, "we");
        if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
                fprintf(stderr, "ng-capture-proc-events: %s: %s\n", path, strerror(errno));
                return -1;
        }
        return 0;
}

/* The name of an event about kid or its threads, NULL when it is not. */
static const char *about(const struct proc_event *pe, pid_t kid)
{
        switch (pe->what) {
        case PROC_EVENT_FORK:
                if (pe->event_data.fork.child_tgid != kid)
                        return NULL;
                return pe->event_data.fork.child_pid == kid ? "fork" : "fork-thread";
        case PROC_EVENT_EXEC:
                return pe->event_data.exec.process_tgid == kid ? "exec" : NULL;
        case PROC_EVENT_UID:
                return pe->event_data.id.process_tgid == kid ? "uid" : NULL;
        case PROC_EVENT_COMM:
                return pe->event_data.comm.process_tgid == kid ? "comm" : NULL;
        case PROC_EVENT_EXIT:
                if (pe->event_data.exit.process_tgid != kid)
                        return NULL;
                return pe->event_data.exit.process_pid == kid ? "exit" : "exit-thread";
        default:
                return NULL;
        }
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: ng-capture-proc-events DIR\n");
                return 1;
        }
        int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "ng-capture-proc-events: no proc connector: %s\n", strerror(errno));
                return 77;
        }
        struct request req = {
                .nl = { .nlmsg_len = sizeof(req), .nlmsg_type = NLMSG_DONE },
                .cn = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC }, .seq = 1, .ack = 1, .len = sizeof(req.op) },
                .op = PROC_CN_MCAST_LISTEN,
        };
        if (send(fd, &req, sizeof(req), 0) != (ssize_t) sizeof(req)) {
                fprintf(stderr, "ng-capture-proc-events: listen: %s\n", strerror(errno));
                return 77;
        }
        pid_t kid = fork();
        if (kid < 0)
                return 1;
        if (kid == 0) {
                usleep(200 * 1000);     /* after the kernel's answer */
                child();
        }
        int n = 0, saved_ack = 0, rc = 0;
        char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                if (poll(&pfd, 1, 1500) <= 0)
                        break;          /* quiet for 1.5 s: the kid is long gone */
                struct sockaddr_nl from;
                socklen_t fl = sizeof(from);
                ssize_t len = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *) &from, &fl);
                if (len < 0 && errno == ENOBUFS)
                        continue;
                if (len < 0)
                        return 1;
                const struct nlmsghdr *nl = (const struct nlmsghdr *) buf;
                if (from.nl_pid != 0 || !NLMSG_OK(nl, (size_t) len))
                        continue;
                const struct cn_msg *cn = NLMSG_DATA(nl);
                struct proc_event pe;
                if (cn->len < sizeof(pe))
                        continue;
                memcpy(&pe, cn->data, sizeof(pe));
                const char *what = pe.what == PROC_EVENT_NONE && cn->ack == 2 && !saved_ack++ ? "ack" : about(&pe, kid);
                if (what && save(argv[1], n++, what, buf, (size_t) len) < 0)
                        rc = 1;
        }
        int st;
        waitpid(kid, &st, 0);
        if (!saved_ack) {
                fprintf(stderr, "ng-capture-proc-events: the kernel did not answer the listen request\n");
                return 77;
        }
        return rc;
}

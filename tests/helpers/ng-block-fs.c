/*
 * ng-block-fs -- a directory whose file reads block, for the test that
 * numaguardd keeps answering while a poll is stuck (tests/shell/
 * test-daemon-stuck.sh).
 *
 *   ng-block-fs DIR
 *
 * Mounts a FUSE file system on DIR (root only; no libfuse: the kernel
 * protocol, <linux/fuse.h>) in which every name is a regular file whose
 * read() waits, as a read of /proc/PID/maps waits for a process's mmap lock.
 * Prints "mounted DIR" when ready. On SIGUSR1 every waiting and later read
 * fails with ENOENT (the process "went away"); on SIGTERM or SIGINT it
 * unmounts DIR and exits.
 *
 * Exit status: 0 clean, 1 usage or system error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_WAITING 64

static volatile sig_atomic_t released, stop;
static int fd = -1;
static uint64_t waiting[MAX_WAITING];
static size_t n_waiting;

static void on_signal(int sig)
{
        if (sig == SIGUSR1)
                released = 1;
        else
                stop = 1;
}

static void reply(uint64_t unique, int error, const void *body, size_t len)
{
        char buf[sizeof(struct fuse_out_header) + 4096];
        struct fuse_out_header h = { .len = (uint32_t) (sizeof(h) + len), .error = error, .unique = unique };
        if (len > 4096)
                return;
        memcpy(buf, &h, sizeof(h));
        if (len)
                memcpy(buf + sizeof(h), body, len);
        (void) !write(fd, buf, h.len);
}

static void attr_of(uint64_t nodeid, struct fuse_attr *a)
{
        memset(a, 0, sizeof(*a));
        a->ino = nodeid;
        a->mode = nodeid == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0444;
        a->nlink = 1;
        a->size = nodeid == FUSE_ROOT_ID ? 0 : 4096;
        a->blksize = 4096;
}

static void handle(const char *req, size_t len)
{
        const struct fuse_in_header *in = (const void *) req;
        const void *arg = req + sizeof(*in);
        if (len < sizeof(*in))
                return;
        switch (in->opcode) {
        case FUSE_INIT: {
                const struct fuse_init_in *ii = arg;
                struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
                                           .max_readahead = ii->max_readahead, .max_write = 4096,
                                           .max_background = 16, .congestion_threshold = 12 };
                reply(in->unique, 0, &o, sizeof(o));
                break;
        }
        case FUSE_LOOKUP: {
                struct fuse_entry_out o = { .nodeid = 2 + (in->unique % 1000), .generation = 1 };
                attr_of(o.nodeid, &o.attr);
                reply(in->unique, 0, &o, sizeof(o));
                break;
        }
        case FUSE_GETATTR: {
                struct fuse_attr_out o = {0};
                attr_of(in->nodeid, &o.attr);
                reply(in->unique, 0, &o, sizeof(o));
                break;
        }
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
                /* direct_io: every read() reaches us, none is cached */
                struct fuse_open_out o = { .fh = 1, .open_flags = FOPEN_DIRECT_IO };
                reply(in->unique, 0, &o, sizeof(o));
                break;
        }
        case FUSE_READ:
                if (released || n_waiting == MAX_WAITING)
                        reply(in->unique, -ENOENT, NULL, 0);
                else
                        waiting[n_waiting++] = in->unique;
                break;
        case FUSE_READDIR:
                reply(in->unique, 0, NULL, 0);  /* empty */
                break;
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
                break;          /* no reply */
        case FUSE_RELEASE:
        case FUSE_RELEASEDIR:
        case FUSE_FLUSH:
                reply(in->unique, 0, NULL, 0);
                break;
        case FUSE_INTERRUPT:
                break;          /* the read stays pending: a lock wait is not interruptible */
        default:
                reply(in->unique, -ENOSYS, NULL, 0);
                break;
        }
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: ng-block-fs DIR\n");
                return 1;
        }
        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "ng-block-fs: /dev/fuse: %s\n", strerror(errno));
                return 1;
        }
        char opts[128];
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
        if (mount("ng-block-fs", argv[1], "fuse.ng-block-fs", MS_NOSUID | MS_NODEV, opts) < 0) {
                fprintf(stderr, "ng-block-fs: mount %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        printf("mounted %s\n", argv[1]);
        fflush(stdout);
        static char req[FUSE_MIN_READ_BUFFER + 65536];
        while (!stop) {
                if (released)
                        for (; n_waiting > 0; n_waiting--)
                                reply(waiting[n_waiting - 1], -ENOENT, NULL, 0);
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                if (poll(&pfd, 1, 100) <= 0)
                        continue;
                ssize_t k = read(fd, req, sizeof(req));
                if (k < 0) {
                        if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
                                continue;
                        break;  /* ENODEV: unmounted */
                }
                handle(req, (size_t) k);
        }
        for (; n_waiting > 0; n_waiting--)
                reply(waiting[n_waiting - 1], -ENOENT, NULL, 0);
        umount2(argv[1], MNT_DETACH);
        close(fd);
        return 0;
}

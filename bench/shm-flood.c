/* shm-flood -- a command run with a /dev/shm of its own holding N empty
 * files, for bench/run-bench's flood section.
 *
 *   shm-flood N CMD [ARG...]
 *
 * Enters a mount namespace of its own (nothing it mounts reaches the
 * host), mounts a fresh tmpfs on /dev/shm there, creates N empty files in
 * it (flood-0, flood-1, ...: any user can, and each is a file numaguard
 * must at least count), waits 200 ms, prints "ready N" on standard error
 * and runs CMD in its place. The files go with the namespace when CMD and
 * its children end. (numaguard never keeps a listing of a directory
 * changed in the 100 ms before it: without the wait the daemon's first
 * poll would list it once more on the second, which is not the steady
 * state measured.)
 *
 * Exit status: that of CMD, or 1 on a usage or system error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define MAX_FILES 1000000

int main(int argc, char **argv)
{
        char *end;
        long n = argc >= 3 ? strtol(argv[1], &end, 10) : -1;
        if (argc < 3 || *end || n < 0 || n > MAX_FILES) {
                fprintf(stderr, "usage: shm-flood N CMD [ARG...] (N from 0 to %d)\n", MAX_FILES);
                return 1;
        }
        char opts[64];
        snprintf(opts, sizeof(opts), "size=64m,nr_inodes=%ld", n + 1000);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
                fprintf(stderr, "shm-flood: a /dev/shm of its own: %s\n", strerror(errno));
                return 1;
        }
        int dir = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) {
                fprintf(stderr, "shm-flood: /dev/shm: %s\n", strerror(errno));
                return 1;
        }
        for (long i = 0; i < n; i++) {
                char name[32];
                snprintf(name, sizeof(name), "flood-%ld", i);
                int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (fd < 0) {
                        fprintf(stderr, "shm-flood: file %ld of %ld: %s\n", i + 1, n, strerror(errno));
                        return 1;
                }
                close(fd);
        }
        close(dir);
        usleep(200000);
        fprintf(stderr, "ready %ld\n", n);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "shm-flood: %s: %s\n", argv[2], strerror(errno));
        return 1;
}

/* idle -- P idle processes for bench/run-bench's daemon-poll axis.
 *
 *   idle N
 *
 * Forks until N children exist, each sleeping in pause() with no shared
 * mapping (the thousands of idle sessions of a busy database host), prints
 * "ready N" and waits for end of file on stdin; then the children are ended.
 * Children die with this process (PR_SET_PDEATHSIG).
 *
 * Exit status: 0 clean, 1 usage or system error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        char *end;
        long n = argc == 2 ? strtol(argv[1], &end, 10) : -1;
        if (argc != 2 || *end || n < 0 || n > 100000) {
                fprintf(stderr, "usage: idle N (0 to 100000)\n");
                return 1;
        }
        pid_t self = getpid(), *kids = calloc((size_t) n + 1, sizeof(*kids));
        if (!kids)
                return 1;
        long made = 0;
        for (long i = 0; i < n; i++, made++) {
                pid_t p = fork();
                if (p < 0) {
                        fprintf(stderr, "idle: fork %ld of %ld: %s\n", i + 1, n, strerror(errno));
                        break;
                }
                if (p == 0) {
                        /* the parent may have gone between fork and prctl */
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != self)
                                _exit(0);
                        for (;;)
                                pause();
                }
                kids[i] = p;
        }
        if (made == n) {
                printf("ready %ld\n", n);
                fflush(stdout);
                char buf[64];
                while (fgets(buf, sizeof(buf), stdin))
                        ;
        }
        for (long i = 0; i < made; i++)
                kill(kids[i], SIGKILL);
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        free(kids);
        return made == n ? 0 : 1;
}

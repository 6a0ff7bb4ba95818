/* A Docker container's cpuset through dockerd's API (act-docker.c): the
 * request numaguard sends to POST /containers/{id}/update is compared byte
 * for byte with the recorded ones in tests/fixtures/docker-api (NAME-request.http),
 * and dockerd's answers (update-200.http, update-404.http: Docker 20.10's, as
 * Debian 12's docker.io answers an HTTP/1.0 request) are replayed by a stand-in daemon on a Unix
 * socket of the test's own. */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ng-test.h"
#include "act-docker-internal.h"

#define DIR NG_FIXTURES "/docker-api"
#define ID "e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3"

struct exchange {
        char dir[64], sock[96], got[96];
        pid_t daemon;
};

/* The request as far as its Content-Length says, or what came before EOF. */
static size_t read_request(int fd, char *buf, size_t size)
{
        size_t got = 0;
        for (;;) {
                ssize_t k = read(fd, buf + got, size - 1 - got);
                if (k <= 0)
                        break;
                got += (size_t) k;
                buf[got] = '\0';
                const char *end = strstr(buf, "\r\n\r\n"), *cl = strstr(buf, "Content-Length: ");
                if (end && cl && got >= (size_t) (end + 4 - buf) + strtoul(cl + 16, NULL, 10))
                        break;
                if (got == size - 1)
                        break;
        }
        return got;
}

/* A stand-in dockerd: one connection, the request kept in x->got, the
 * recorded answer (a file, or nothing at all: "") sent back, then closed. */
static void serve(struct exchange *x, const char *answer)
{
        ck_assert_ptr_nonnull(mkdtemp(strcpy(x->dir, "/tmp/ng-docker.XXXXXX")));
        snprintf(x->sock, sizeof(x->sock), "%s/docker.sock", x->dir);
        snprintf(x->got, sizeof(x->got), "%s/request", x->dir);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(l, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", x->sock);
        ck_assert_int_eq(bind(l, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(l, 1), 0);
        size_t len = 0;
        char *reply = answer[0] ? ng_test_read(answer, &len) : NULL;
        x->daemon = fork();
        ck_assert_int_ge(x->daemon, 0);
        if (x->daemon == 0) {
                int c = accept(l, NULL, NULL);
                char buf[4096];
                size_t n = c >= 0 ? read_request(c, buf, sizeof(buf)) : 0;
                FILE *f = fopen(x->got, "we");
                if (f) {
                        fwrite(buf, 1, n, f);
                        fclose(f);
                }
                if (reply && write(c, reply, len) != (ssize_t) len)
                        _exit(2);
                _exit(c >= 0 && f ? 0 : 1);
        }
        close(l);
        free(reply);
}

/* The daemon's end, and the request it was sent compared with want. */
static void done(struct exchange *x, const char *want)
{
        int status;
        ck_assert_int_eq(waitpid(x->daemon, &status, 0), x->daemon);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stand-in daemon: status %d", status);
        size_t glen, wlen;
        char *got = ng_test_read(x->got, &glen), *exp = ng_test_read(want, &wlen);
        ck_assert_msg(glen == wlen && !memcmp(got, exp, glen), "sent:\n%s\nrecorded:\n%s", got, exp);
        free(got);
        free(exp);
        unlink(x->got);
        unlink(x->sock);
        rmdir(x->dir);
}

static struct ng_bitmap list(const char *s)
{
        struct ng_bitmap b = { 0 };
        ck_assert_int_ge(ng_bitmap_parse_list(s, &b), 0);
        return b;
}

/* Both sets: saved with the container, so they hold when it starts again. */
START_TEST(update_cpus_and_mems)
{
        struct exchange x;
        serve(&x, DIR "/update-200.http");
        struct ng_bitmap c = list("0-1"), m = list("0");
        ck_assert_int_eq(ng_docker_update_at(x.sock, ID, &c, &m), 0);
        done(&x, DIR "/update-request.http");
}
END_TEST

/* Only the memory nodes: CpusetCpus is left out, not sent empty ("" would
 * give the container the parent's CPUs). */
START_TEST(update_mems_only)
{
        struct exchange x;
        serve(&x, DIR "/update-200.http");
        struct ng_bitmap m = list("1");
        ck_assert_int_eq(ng_docker_update_at(x.sock, ID, NULL, &m), 0);
        done(&x, DIR "/update-mems-request.http");
}
END_TEST

/* The container was removed since the audit: dockerd's 404. */
START_TEST(no_such_container)
{
        struct exchange x;
        serve(&x, DIR "/update-404.http");
        struct ng_bitmap c = list("0-1"), m = list("0");
        ck_assert_int_eq(ng_docker_update_at(x.sock, ID, &c, &m), -ENOENT);
        done(&x, DIR "/update-request.http");
}
END_TEST

/* A daemon that closes without an answer, and none listening at all. */
START_TEST(no_answer)
{
        struct exchange x;
        serve(&x, "");
        struct ng_bitmap m = list("0");
        ck_assert_int_eq(ng_docker_update_at(x.sock, ID, NULL, &m), -EBADMSG);
        int status;
        ck_assert_int_eq(waitpid(x.daemon, &status, 0), x.daemon);
        unlink(x.got);
        unlink(x.sock);
        ck_assert_int_eq(ng_docker_update_at(x.sock, ID, NULL, &m), -ENOENT);
        rmdir(x.dir);
}
END_TEST

/* What the status line says, and what is no HTTP answer. */
START_TEST(status_line)
{
        ck_assert_int_eq(ng_docker_http_status("HTTP/1.0 200 OK\r\n"), 200);
        ck_assert_int_eq(ng_docker_http_status("HTTP/1.1 404 Not Found\r\n"), 404);
        ck_assert_int_eq(ng_docker_http_status(""), -EBADMSG);
        ck_assert_int_eq(ng_docker_http_status("SSH-2.0-OpenSSH_9.2\r\n"), -EBADMSG);
        ck_assert_int_eq(ng_docker_http_status("HTTP/1.0 OK"), -EBADMSG);
}
END_TEST

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        Suite *s = suite_create("docker-api");
        TCase *tc = tcase_create("docker-api");
        tcase_add_test(tc, update_cpus_and_mems);
        tcase_add_test(tc, update_mems_only);
        tcase_add_test(tc, no_such_container);
        tcase_add_test(tc, no_answer);
        tcase_add_test(tc, status_line);
        suite_add_tcase(s, tc);
        return ng_test_run(s);
}

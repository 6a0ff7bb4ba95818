/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Namespaces through the path layer: their links, and the System V table
 * that each IPC namespace shows only to its own members (docs/ARCHITECTURE.md,
 * "Namespaces"). */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "ng-path.h"
#include "ns-internal.h"
#include "path.h"

int ng_path_read_link(const struct ng_path *p, char *buf, size_t size, const char *fmt, ...)
{
        assert(p && buf && size && fmt);
        char rel[NG_PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(rel, sizeof(rel), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof(rel))
                return -ENAMETOOLONG;
        if (!ng_path_is_live(p)) {
                _cleanup_free_ char *text = NULL;
                size_t len;
                int r = ng_path_read(p, &text, &len, "%s", rel);
                if (r < 0)
                        return r;
                if (len && text[len - 1] == '\n')
                        text[--len] = '\0';
                if (len >= size)
                        return -ENAMETOOLONG;
                memcpy(buf, text, len + 1);
                return 0;
        }
        ssize_t k = readlink(rel, buf, size - 1);
        if (k < 0)
                return errno == ESRCH || errno == ENOTDIR ? -ENOENT : -errno;
        if ((size_t) k >= size - 1)
                return -ENAMETOOLONG;
        buf[k] = '\0';
        ng_path_record(p, rel, buf, (size_t) k);
        return 0;
}

int ng_path_read_unrecorded(const struct ng_path *p, char **ret_buf, size_t *ret_len, const char *rel)
{
        if (!ng_path_is_live(p))
                return ng_path_read(p, ret_buf, ret_len, "%s", rel);
        _cleanup_close_ int fd = open(rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
        struct stat st;
        int r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) && st.st_size <= NG_PATH_MAX_FILE_BYTES ? 0 : -EINVAL;
        if (r == 0)
                r = ng_path_read_fd(fd, ret_buf, ret_len);
        return r;
}

static atomic_uint_fast64_t readers_started;

uint64_t ng_ns_readers_started(void)
{
        return atomic_load(&readers_started);
}

struct ns_read {
        int nsfd;
        char *buf;
        size_t len;
        int r;
};

/* The thread joins the namespace and dies with it: nothing else of the
 * process ever sees another namespace's table. */
static void *ns_reader(void *userdata)
{
        struct ns_read *a = userdata;
        if (setns(a->nsfd, CLONE_NEWIPC) < 0) {
                a->r = -errno;
                return NULL;
        }
        _cleanup_close_ int fd = open(NG_PROC_DIR "/sysvipc/shm", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                a->r = -errno;
                return NULL;
        }
        a->r = ng_path_read_fd(fd, &a->buf, &a->len);
        return NULL;
}

static int read_live(pid_t pid, uint64_t ns, char **ret_buf, size_t *ret_len)
{
        char link[64];
        snprintf(link, sizeof(link), NG_PROC_DIR "/%d/ns/ipc", (int) pid);
        _cleanup_close_ int nsfd = open(link, O_RDONLY | O_CLOEXEC);
        if (nsfd < 0)
                return errno == ESRCH ? -ENOENT : -errno;
        struct stat st;
        if (fstat(nsfd, &st) < 0)
                return -errno;
        if ((uint64_t) st.st_ino != ns)
                return -ESTALE;         /* pid left ns, or was reused */
        struct ns_read a = { .nsfd = nsfd };
        pthread_t t;
        int e = pthread_create(&t, NULL, ns_reader, &a);
        if (e)
                return -e;
        atomic_fetch_add(&readers_started, 1);
        pthread_join(t, NULL);
        if (a.r < 0)
                return a.r;
        *ret_buf = a.buf;
        *ret_len = a.len;
        return 0;
}

int ng_path_read_ipc_ns(const struct ng_path *p, pid_t pid, uint64_t ns, char **ret_buf, size_t *ret_len)
{
        assert(p && ret_buf && ret_len);
        char rel[96];
        snprintf(rel, sizeof(rel), NG_PATH_IPC_NS_DIR "/%" PRIu64 "/sysvipc/shm", ns);
        if (!ng_path_is_live(p))
                return ng_path_read(p, ret_buf, ret_len, "%s", rel);
        char *buf = NULL;
        size_t len = 0;
        int r = read_live(pid, ns, &buf, &len);
        if (r < 0)
                return r;
        ng_path_record(p, rel, buf, len);
        *ret_buf = buf;
        *ret_len = len;
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Docker container's cpuset through its owner, dockerd: POST
 * /containers/{id}/update on its socket. Docker applies the values to the
 * container's cgroup and saves them in its HostConfig, so they hold when
 * the container starts again (a write to the cgroup alone would not).
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "act-docker-internal.h"
#include "cleanup.h"

int ng_docker_update_body(const struct ng_bitmap *cpus, const struct ng_bitmap *mems, char *buf, size_t size)
{
        char c[256] = "", m[256] = "";
        if (cpus)
                ng_bitmap_format_list(cpus, c, sizeof(c));
        if (mems)
                ng_bitmap_format_list(mems, m, sizeof(m));
        int n = snprintf(buf, size, "{%s%s%s%s%s%s%s}", cpus ? "\"CpusetCpus\":\"" : "", c, cpus ? "\"" : "",
                         cpus && mems ? "," : "", mems ? "\"CpusetMems\":\"" : "", m, mems ? "\"" : "");
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : n;
}

int ng_docker_http_status(const char *response)
{
        unsigned code;
        if (strncmp(response, "HTTP/1.", 7) || sscanf(response + 8, " %3u", &code) != 1)
                return -EBADMSG;
        return (int) code;
}

static int talk(const char *socket_path, const char *request, char *reply, size_t size)
{
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path) >= (int) sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        size_t len = strlen(request), off = 0;
        while (off < len) {
                ssize_t k = write(fd, request + off, len - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                off += (size_t) k;
        }
        size_t got = 0;
        for (ssize_t k; got < size - 1 && (k = read(fd, reply + got, size - 1 - got)) != 0;) {
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                got += (size_t) k;
        }
        reply[got] = '\0';
        return 0;
}

int ng_docker_update_at(const char *socket_path, const char *id, const struct ng_bitmap *cpus,
                        const struct ng_bitmap *mems)
{
        char body[600], request[1024], reply[4096];
        int n = ng_docker_update_body(cpus, mems, body, sizeof(body));
        if (n < 0)
                return n;
        /* HTTP/1.0: dockerd closes the connection after its answer. */
        if (snprintf(request, sizeof(request), "POST /containers/%s/update HTTP/1.0\r\nHost: docker\r\n"
                     "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", id, n, body) >= (int) sizeof(request))
                return -ENAMETOOLONG;
        int r = talk(socket_path, request, reply, sizeof(reply));
        if (r < 0)
                return r;
        int code = ng_docker_http_status(reply);
        return code < 0 ? code : code == 200 ? 0 : code == 404 ? -ENOENT : code == 403 ? -EACCES : -EIO;
}

int ng_docker_update(void *userdata, const struct ng_path *p, const char *id, const struct ng_bitmap *cpus,
                     const struct ng_bitmap *mems)
{
        (void) userdata;
        if (!ng_path_is_live(p))
                return -EOPNOTSUPP;
        return ng_docker_update_at(NG_DOCKER_SOCKET, id, cpus, mems);
}

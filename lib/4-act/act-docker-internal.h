/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker's API, for the owner of a container's cpuset (act-docker.c,
 * act-owner.c). Not installed. */

#include "ng-bitmap.h"
#include "ng-path.h"

#pragma GCC visibility push(hidden)

/* Where dockerd listens (its default -H unix:///var/run/docker.sock). */
#define NG_DOCKER_SOCKET "/var/run/docker.sock"

/* The body of POST /containers/{id}/update: {"CpusetCpus":"0-3",
 * "CpusetMems":"0"}, a NULL set left out. */
int ng_docker_update_body(const struct ng_bitmap *cpus, const struct ng_bitmap *mems, char *buf, size_t size);
/* The status code of an HTTP response's first line, or -EBADMSG. */
int ng_docker_http_status(const char *response);
/* POST /containers/{id}/update to the daemon listening on socket_path
 * (HTTP/1.0: it answers and closes). 0 on 200, -ENOENT on 404 (no such
 * container), -EACCES on 403, -EIO on another answer, -EBADMSG on no HTTP
 * answer at all, or -errno of the socket. */
int ng_docker_update_at(const char *socket_path, const char *id, const struct ng_bitmap *cpus,
                        const struct ng_bitmap *mems);
/* The default ng_action_ops.docker_update: live host only (-EOPNOTSUPP
 * under a root prefix, where no daemon answers). 0, -ENOENT (no such
 * container), -EACCES, -ECONNREFUSED, -EIO (another answer) or -errno. */
int ng_docker_update(void *userdata, const struct ng_path *p, const char *id, const struct ng_bitmap *cpus,
                     const struct ng_bitmap *mems);

#pragma GCC visibility pop

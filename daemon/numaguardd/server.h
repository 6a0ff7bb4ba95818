/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The control socket (server.c): numaguardctl status and reload. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "util.h"

#define SERVER_TIMEOUT_USEC (2 * USEC_PER_SEC)
#define SERVER_MAX_CONNECTIONS 32
#define SERVER_MAX_PER_UID 8            /* for every user but root */

struct peer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
        gid_t *groups;          /* SO_PEERGROUPS (supplementary groups) */
        size_t n_groups;
};

enum request_access {
        ACCESS_READ,    /* root and members of status_group */
        ACCESS_WRITE,   /* root only */
};

/* Pure: whether peer may do a request needing access. group_gid is
 * (gid_t)-1 when there is no status_group. */
bool peer_allowed(const struct peer *p, enum request_access access, gid_t group_gid);

struct manager;
struct server;

/* Answers one request line (without the newline) into out: returns the
 * exit hint N >= 0 for "ok exit=N" (0, 1 or 2: the worst active alert, as
 * `audit` exits), or -errno with a one-line reason in why. */
typedef int (*server_handler_fn)(struct manager *m, const struct peer *p, const char *request,
                                 FILE *out, char *why, size_t whylen);

/* Returns 0 or -errno with a one-line reason, naming the path, in why. */
int server_new(sd_event *e, const char *path, const char *group, struct manager *m,
               server_handler_fn handler, struct server **ret, char *why, size_t whylen);
struct server *server_free(struct server *s);
NG_DEFINE_CLEANUP(struct server, server_free)
const char *server_path(const struct server *s);
/* Resolved status_group, (gid_t)-1 when none. */
gid_t server_status_gid(const struct server *s);

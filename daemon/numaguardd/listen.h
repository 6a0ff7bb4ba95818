/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The control socket's place in the file system (listen.c). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct socket_place {
        int dir_fd;             /* O_PATH of the socket's directory, -1: none */
        char name[108];         /* the socket's name in it */
        bool bound;
};

/* "a regular file", "a FIFO"...: what st_mode says is there. */
const char *file_type_name(mode_t mode);
/* Binds the unix socket fd at path, mode 0600, in a directory that only
 * root can change, reached from / through directories only root can change
 * and no symbolic link (refused otherwise, naming the directory), after
 * removing a stale socket of an earlier run. Returns 0 or -errno with a
 * one-line reason naming the path or the directory in why (-EADDRINUSE: another numaguardd answers there, -EEXIST:
 * something that is not a socket is there). */
int socket_place_bind(struct socket_place *p, int fd, const char *path, char *why, size_t whylen);
/* Gives the bound socket to group gid, mode 0660. 0 or -errno and why. */
int socket_place_give(const struct socket_place *p, const char *path, gid_t gid, char *why, size_t whylen);
/* Removes the socket if a socket is still at its name; closes the directory. */
void socket_place_release(struct socket_place *p);

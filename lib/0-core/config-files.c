/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files of a configuration: reading one without blocking on what is
 * not a regular file, and listing the drop-ins of the main file
 * (PATH.d/NAME.conf in name order, the convention of sysctl.d and systemd's
 * drop-ins, so that a configuration manager adds an instance in a file of
 * its own without editing the packaged one). config-load.c parses them.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "config-internal.h"
#include "util.h"

/* The file is opened without blocking and read only when it is a regular
 * one: a FIFO would block the open (and numaguardd's start or its event
 * loop on reload) until someone writes it, a device could be endless.
 * Returns -EINVAL with *ret_mode set for anything else. */
int ng_cfg_read_text(const char *path, char **ret, size_t *ret_len, mode_t *ret_mode)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        /* /dev/null, the usual "no configuration", reads as empty. */
        if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3) {
                char *empty = strdup("");
                if (!empty)
                        return -ENOMEM;
                *ret = empty;
                *ret_len = 0;
                return 0;
        }
        if (!S_ISREG(st.st_mode)) {
                *ret_mode = st.st_mode;
                return -EINVAL;
        }
        _cleanup_fclose_ FILE *f = fdopen(fd, "r");
        if (!f)
                return -errno;
        fd = -1;        /* f owns it */
        _cleanup_free_ char *buf = malloc(CONFIG_MAX_BYTES + 1);
        if (!buf)
                return -ENOMEM;
        size_t len = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
        if (ferror(f))
                return errno ? -errno : -EIO;
        if (len > CONFIG_MAX_BYTES)
                return -EFBIG;
        buf[len] = '\0';
        *ret = ng_steal_ptr(&buf);
        *ret_len = len;
        return 0;
}

const char *ng_cfg_file_kind(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFDIR: return "is a directory, not a regular file";
        case S_IFIFO: return "is a FIFO, not a regular file; not read";
        case S_IFCHR: return "is a character device, not a regular file; not read";
        case S_IFBLK: return "is a block device, not a regular file; not read";
        case S_IFSOCK: return "is a socket, not a regular file";
        default: return "is not a regular file";
        }
}

unsigned ng_cfg_line_of(const char *text, size_t off)
{
        unsigned line = 1;

        for (size_t i = 0; i < off; i++)
                line += text[i] == '\n';
        return line;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

void ng_config_dropins_free(char **paths, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
}

static bool dropin_name(const char *name)
{
        size_t len = strlen(name);

        return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".conf") == 0;
}

static int add_dropin(char ***paths, size_t *n, const char *dir, const char *name)
{
        if (ng_grow(paths, NULL, *n, sizeof(**paths), 0) < 0)
                return -ENOMEM;
        if (asprintf(&(*paths)[*n], "%s/%s", dir, name) < 0)
                return -ENOMEM;
        (*n)++;
        return 0;
}

int ng_config_dropins(const char *path, char ***ret_paths, size_t *ret_n)
{
        _cleanup_free_ char *dir = NULL;
        char **paths = NULL;
        size_t n = 0;
        int r = 0;

        if (!path || !ret_paths || !ret_n)
                return -EINVAL;
        if (asprintf(&dir, "%s.d", path) < 0)
                return -ENOMEM;
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return -errno;
                *ret_paths = NULL;
                *ret_n = 0;
                return 0;
        }
        for (struct dirent *de; r >= 0 && (errno = 0, de = readdir(d));)
                if (dropin_name(de->d_name))
                        r = add_dropin(&paths, &n, dir, de->d_name);
        if (r >= 0 && errno)
                r = -errno;
        if (r < 0) {
                ng_config_dropins_free(paths, n);
                return r;
        }
        if (n > 1)
                qsort(paths, n, sizeof(*paths), cmp_names);
        *ret_paths = paths;
        *ret_n = n;
        return 0;
}


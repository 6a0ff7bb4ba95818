/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The default I/O for writing a cpuset through its owner (ng-action.h):
 *
 * - a systemd unit, on the live host: SetUnitProperties(unit, runtime=false,
 *   [AllowedCPUs, AllowedMemoryNodes]) on the manager over sd-bus, which is
 *   what `systemctl set-property UNIT AllowedMemoryNodes=0` does: systemd
 *   applies the values to the unit's cgroup and persists them as a drop-in
 *   in /etc/systemd/system.control/UNIT.d/. Under --root there is no manager
 *   to ask: the same drop-in (systemd's own text) and the cgroup files are
 *   written into the tree, so trees exercise the same path offline.
 * - a config file: read whole, replaced by rename(2) of a sibling written
 *   and fsync'ed first, with the original's mode and owner, so a crash
 *   leaves the old or the new file, never half of one.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "act-cpuset-internal.h"
#include "ng-act-cpuset.h"
#include "cleanup.h"
#include "owner.h"
#include "path.h"
#include "act-docker-internal.h"
#include "action-internal.h"

/* ---- systemd over sd-bus ---- */

/* The manager's "ay" form of a CPU or node set: bit i of byte i / 8. */
static int append_mask(sd_bus_message *m, const struct ng_bitmap *set)
{
        uint8_t mask[NG_BITMAP_BITS / 8] = {0};
        size_t n = 0;
        NG_BITMAP_FOREACH(i, set) {
                mask[i / 8] |= (uint8_t) (1u << (i % 8));
                n = (size_t) i / 8 + 1;
        }
        return sd_bus_message_append_array(m, 'y', mask, n);
}

static int append_prop(sd_bus_message *m, const char *name, const struct ng_bitmap *set)
{
        int r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "ay");
        if (r >= 0)
                r = append_mask(m, set);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int ng_unit_bus_set(void *bus_, const char *unit, const struct ng_bitmap *cpus, const struct ng_bitmap *mems)
{
        sd_bus *bus = bus_;
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", "SetUnitProperties");
        /* runtime=false: applied now and persisted, as systemctl set-property */
        if (r >= 0)
                r = sd_bus_message_append(m, "sb", unit, 0);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0 && cpus)
                r = append_prop(m, "AllowedCPUs", cpus);
        if (r >= 0 && mems)
                r = append_prop(m, "AllowedMemoryNodes", mems);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &err, &reply);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(m);
        sd_bus_error_free(&err);
        return r < 0 ? r : 0;
}

static int bus_set(const char *unit, const struct ng_bitmap *cpus, const struct ng_bitmap *mems)
{
        void *bus = NULL;
        int r = ng_systemd_bus_open(&bus);
        if (r >= 0)
                r = ng_unit_bus_set(bus, unit, cpus, mems);
        sd_bus_flush_close_unref(bus);
        return r;
}

static int default_reload_units(void *userdata, const struct ng_path *p)
{
        (void) userdata;
        if (!ng_path_is_live(p))
                return 0;
        sd_bus *bus = NULL;
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r = ng_systemd_bus_open((void **) &bus);
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "Reload", &err, NULL, NULL);
        sd_bus_error_free(&err);
        sd_bus_flush_close_unref(bus);
        return r < 0 ? r : 0;
}

/* ---- systemd emulated in a tree (--root) ---- */

static int write_all(int fd, const char *content);

/* The drop-in, in the tree (its directories made there): never through a
 * link, never outside the tree (path.h). */
static int write_new_file(const struct ng_path *p, const char *path, const char *content)
{
        char name[NAME_MAX + 1];
        _cleanup_close_ int dir = ng_path_open_parent(p, true, name, sizeof(name), "%s", path);
        if (dir < 0)
                return dir;
        _cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                                        0644);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -EINVAL;
        return write_all(fd, content);
}

/* What systemd writes for one property (src/core/dbus-cgroup.c: the reset,
 * then the value) and what it then writes to the cgroup. */
static int tree_set_one(const struct ng_path *p, const char *unit, const char *cgroup_dir, const char *prop,
                        const char *file, const struct ng_bitmap *set)
{
        char list[4096], path[PATH_MAX], text[4096 + 512];
        ng_bitmap_format_list(set, list, sizeof(list));
        if (snprintf(path, sizeof(path), "/etc/systemd/system.control/%s.d/50-%s.conf", unit, prop) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        snprintf(text, sizeof(text), "# This is a drop-in unit file extension, created via \"systemctl set-property\"\n"
                 "# or an equivalent operation. Do not edit.\n[%s]\n%s=\n%s=%s\n",
                 strstr(unit, ".scope") ? "Scope" : "Service", prop, prop, list);
        int r = write_new_file(p, path, text);
        if (r >= 0)
                r = ng_path_write(p, list, "%s/%s", cgroup_dir, file);
        return r;
}

static int default_set_unit(void *userdata, const struct ng_path *p, const char *unit, const char *cgroup_dir,
                            const struct ng_bitmap *cpus, const struct ng_bitmap *mems)
{
        (void) userdata;
        if (ng_path_is_live(p))
                return bus_set(unit, cpus, mems);
        int r = 0;
        if (cpus)
                r = tree_set_one(p, unit, cgroup_dir, "AllowedCPUs", "cpuset.cpus", cpus);
        if (r >= 0 && mems)
                r = tree_set_one(p, unit, cgroup_dir, "AllowedMemoryNodes", "cpuset.mems", mems);
        return r;
}

/* Back from the manager on the live host, from the unit's files in a tree. */
static int default_get_unit(void *userdata, const struct ng_path *p, const char *unit, const char *cgroup_path,
                            struct ng_unit_cpuset *ret)
{
        (void) userdata;
        if (!ng_path_is_live(p))
                return ng_unit_files_read(p, unit, ret, NULL, 0);
        void *bus = NULL;
        int r = ng_systemd_bus_open(&bus);
        if (r >= 0)
                r = ng_unit_bus_read(bus, unit, cgroup_path, ret);
        sd_bus_flush_close_unref(bus);
        return r;
}

/* ---- config files ---- */

static int default_read_text(void *userdata, const struct ng_path *p, const char *path, char **ret)
{
        (void) userdata;
        return ng_path_read(p, ret, NULL, "%s", path);
}

static int write_all(int fd, const char *content)
{
        size_t len = strlen(content), off = 0;
        while (off < len) {
                ssize_t k = write(fd, content + off, len - off);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0)
                        off += (size_t) k;
        }
        return fsync(fd) < 0 ? -errno : 0;
}

/* The file alone is writable (a bind mount: ReadWritePaths= of the
 * hardened unit), its directory is not: rewritten in place. */
static int rewrite_in_place(int dir, const char *name, const char *content)
{
        int fd = openat(dir, name, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct stat st;
        int r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? write_all(fd, content) : -EINVAL;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        return r;
}

/* On the live host, a directory another user can write (or owns) could
 * swap the file for a link or plant the sibling between two calls: root
 * writes there only what it could not be tricked into writing elsewhere,
 * which a configuration file is not. Trees are held inside the root. */
static int check_dir(const struct ng_path *p, int dir)
{
        struct stat st;
        if (!ng_path_is_live(p))
                return 0;
        if (fstat(dir, &st) < 0)
                return -errno;
        return (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 0022) ? -EPERM : 0;
}

/* The sibling, written and fsync'ed with the original's mode and owner. */
static int write_sibling(int dir, const char *tmp, const struct stat *st, const char *content)
{
        /* a sibling left by a crash is ours to replace; O_EXCL after that,
         * so a file someone else made meanwhile is not written through */
        if (unlinkat(dir, tmp, 0) < 0 && errno != ENOENT)
                return -errno;
        _cleanup_close_ int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                                        st->st_mode & 07777);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, content);
        if (r >= 0 && fchmod(fd, st->st_mode & 07777) < 0)
                r = -errno;
        if (r >= 0 && fchown(fd, st->st_uid, st->st_gid) < 0 && errno != EPERM)
                r = -errno;
        return r;
}

static int default_replace_file(void *userdata, const struct ng_path *p, const char *path, const char *content)
{
        (void) userdata;
        char name[NAME_MAX + 1], tmp[NAME_MAX + 32];
        _cleanup_close_ int dir = ng_path_open_parent(p, true, name, sizeof(name), "%s", path);
        if (dir < 0)
                return dir;
        int r = check_dir(p, dir);
        if (r < 0)
                return r;
        struct stat st;
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                /* a file numaguard owns, made on first use */
                if (errno != ENOENT)
                        return -errno;
                st = (struct stat) { .st_mode = S_IFREG | 0644, .st_uid = getuid(), .st_gid = getgid() };
        }
        if (S_ISLNK(st.st_mode))
                return -ELOOP;          /* replacing the link would not change what it points to */
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        snprintf(tmp, sizeof(tmp), "%s.numaguard-new", name);
        r = write_sibling(dir, tmp, &st, content);
        if (r == -EROFS)
                return rewrite_in_place(dir, name, content);
        if (r >= 0 && renameat(dir, tmp, dir, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir, tmp, 0);
        /* renaming over a bind-mounted file */
        return r == -EBUSY ? rewrite_in_place(dir, name, content) : r;
}

void ng_action_ops_fill_owner(struct ng_action_ops *ops)
{
        if (ng_action_ops_has(ops, set_unit_cpuset) && !ops->set_unit_cpuset)
                ops->set_unit_cpuset = default_set_unit;
        if (ng_action_ops_has(ops, get_unit_cpuset) && !ops->get_unit_cpuset)
                ops->get_unit_cpuset = default_get_unit;
        if (ng_action_ops_has(ops, read_text) && !ops->read_text)
                ops->read_text = default_read_text;
        if (ng_action_ops_has(ops, replace_file) && !ops->replace_file)
                ops->replace_file = default_replace_file;
        if (ng_action_ops_has(ops, docker_update) && !ops->docker_update)
                ops->docker_update = ng_docker_update;
        if (ng_action_ops_has(ops, reload_units) && !ops->reload_units)
                ops->reload_units = default_reload_units;
}

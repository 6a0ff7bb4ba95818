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

#include "ng-act-cpuset.h"
#include "owner-internal.h"

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

/* ---- systemd emulated in a tree (--root) ---- */

/* mkdir -p of the directory abs is in */
static int make_parents(char *abs)
{
        for (char *s = strchr(abs + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                int r = mkdir(abs, 0755) < 0 && errno != EEXIST ? -errno : 0;
                *s = '/';
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_new_file(const struct ng_path *p, const char *path, const char *content)
{
        char abs[PATH_MAX];
        int r = ng_path_resolve(p, abs, sizeof(abs), "%s", path);
        if (r < 0 || (r = make_parents(abs)) < 0)
                return r;
        FILE *f = fopen(abs, "we");
        if (!f)
                return -errno;
        fputs(content, f);
        return fclose(f) == 0 ? 0 : -EIO;
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
static int rewrite_in_place(const char *abs, const char *content)
{
        int fd = open(abs, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, content);
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        return r;
}

static int default_replace_file(void *userdata, const struct ng_path *p, const char *path, const char *content)
{
        (void) userdata;
        char abs[PATH_MAX], tmp[PATH_MAX + 32];
        int r = ng_path_resolve(p, abs, sizeof(abs), "%s", path);
        if (r < 0)
                return r;
        struct stat st;
        if (stat(abs, &st) < 0) {
                /* a file numaguard owns, made on first use */
                if (errno != ENOENT)
                        return -errno;
                if ((r = make_parents(abs)) < 0)
                        return r;
                st = (struct stat) { .st_mode = 0644, .st_uid = getuid(), .st_gid = getgid() };
        }
        snprintf(tmp, sizeof(tmp), "%s.numaguard-new", abs);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 07777);
        if (fd < 0)
                return errno == EROFS ? rewrite_in_place(abs, content) : -errno;
        size_t len = strlen(content), off = 0;
        while (off < len && r >= 0) {
                ssize_t k = write(fd, content + off, len - off);
                if (k < 0 && errno != EINTR)
                        r = -errno;
                else if (k > 0)
                        off += (size_t) k;
        }
        if (r >= 0 && (fchmod(fd, st.st_mode & 07777) < 0 || fsync(fd) < 0))
                r = -errno;
        if (r >= 0 && fchown(fd, st.st_uid, st.st_gid) < 0 && errno != EPERM)
                r = -errno;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, abs) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        /* renaming over a bind-mounted file */
        return r == -EBUSY ? rewrite_in_place(abs, content) : r;
}

void ng_action_ops_fill_owner(struct ng_action_ops *ops)
{
        if (!ops->set_unit_cpuset)
                ops->set_unit_cpuset = default_set_unit;
        if (!ops->get_unit_cpuset)
                ops->get_unit_cpuset = default_get_unit;
        if (!ops->read_text)
                ops->read_text = default_read_text;
        if (!ops->replace_file)
                ops->replace_file = default_replace_file;
}

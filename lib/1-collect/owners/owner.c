/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finds the owner of every cpuset cgroup of a snapshot (ng-owner.h): a
 * cgconfig group declaring it, else on cgroup v2 the systemd unit whose own
 * cgroup it is, else none. What a unit restores comes from the manager over
 * sd-bus on the live host (it knows transient units and runtime properties)
 * and from the unit files and their drop-ins otherwise (--root, or no
 * manager to ask).
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "cleanup.h"
#include "ng-owner.h"
#include "ng-path.h"
#include "ng-snapshot.h"
#include "owner-internal.h"
#include "util.h"

struct cgconfig_file {
        char path[PATH_MAX];
        char *buf;
        struct ng_cgconfig_group *groups;
        size_t n_groups;
        int error;              /* < 0: could not be read or parsed */
        unsigned error_line;
        bool mounts_cpuset;     /* "mount { cpuset = ...; }" */
};

struct owners {
        const struct ng_path *p;
        struct cgconfig_file *files;
        size_t n_files;
};

/* ---- cgconfig ---- */

static int add_cgconfig(struct owners *o, const char *path)
{
        _cleanup_free_ char *buf = NULL;
        int r = ng_path_read(o->p, &buf, NULL, "%s", path);
        if (r == -ENOENT)
                return 0;
        if (ng_grow(&o->files, NULL, o->n_files, sizeof(*o->files), 0) < 0)
                return -ENOMEM;
        struct cgconfig_file *f = &o->files[o->n_files++];
        *f = (struct cgconfig_file) { .error = r };
        snprintf(f->path, sizeof(f->path), "%s", path);
        if (r < 0)
                return 0;
        f->buf = ng_steal_ptr(&buf);
        f->error = ng_parse_cgconfig(f->buf, &f->groups, &f->n_groups, &f->error_line);
        f->mounts_cpuset = f->error >= 0 && ng_cgconfig_mounts(f->buf, "cpuset") > 0;
        return f->error == -ENOMEM ? -ENOMEM : 0;
}

/* cgconfig.conf, then cgconfig.d/ *.conf in name order, as cgconfigparser
 * reads them (-l FILE -L DIR). */
static int read_cgconfig(struct owners *o)
{
        int r = add_cgconfig(o, NG_CGCONFIG_FILE);
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t n;
        if (r < 0 || ng_path_list(o->p, &names, &n, "%s", NG_CGCONFIG_DIR) < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                size_t l = strlen(names[i]);
                char path[PATH_MAX];
                if (l > 5 && !strcmp(names[i] + l - 5, ".conf") &&
                    snprintf(path, sizeof(path), "%s/%s", NG_CGCONFIG_DIR, names[i]) < (int) sizeof(path))
                        r = add_cgconfig(o, path);
        }
        return r;
}

static bool group_is(const struct ng_cgconfig_group *g, const char *cgroup_path)
{
        const char *a = g->name, *b = cgroup_path;
        while (*a == '/')
                a++;
        while (*b == '/')
                b++;
        return *a && !strcmp(a, b);
}

static void set_value(const struct ng_cgconfig_value *v, bool *has, struct ng_bitmap *set, unsigned *line,
                      struct ng_owner *ow, const char *file)
{
        if (!v->present)
                return;
        *line = v->line;
        if (ng_bitmap_parse_list(v->value, set) < 0) {
                ow->kind = NG_OWNER_UNKNOWN;
                snprintf(ow->error, sizeof(ow->error), "%s:%u: '%s' is not a CPU or node list", file, v->line,
                         v->value);
                return;
        }
        *has = true;
}

/* 1 when a cgconfig file declares the cgroup, or one could not be read
 * (then nobody can say it does not): ow filled. */
static int cgconfig_owner(const struct owners *o, const struct ng_cgroup *cg, struct ng_owner *ow)
{
        for (size_t i = o->n_files; i-- > 0;) {
                const struct cgconfig_file *f = &o->files[i];
                if (f->error < 0) {
                        *ow = (struct ng_owner) { .kind = NG_OWNER_UNKNOWN };
                        snprintf(ow->source, sizeof(ow->source), "%s", f->path);
                        if (f->error == -EINVAL)
                                snprintf(ow->error, sizeof(ow->error), "%s:%u: cannot parse cgconfig syntax", f->path,
                                         f->error_line);
                        else
                                snprintf(ow->error, sizeof(ow->error), "%s: %s", f->path, strerror(-f->error));
                        return 1;
                }
        }
        for (size_t i = o->n_files; i-- > 0;) {
                const struct cgconfig_file *f = &o->files[i];
                for (size_t k = f->n_groups; k-- > 0;) {
                        const struct ng_cgconfig_group *g = &f->groups[k];
                        if (!group_is(g, cg->path))
                                continue;
                        *ow = (struct ng_owner) { .kind = NG_OWNER_CGCONFIG, .known = true };
                        snprintf(ow->name, sizeof(ow->name), "%s", g->name);
                        snprintf(ow->source, sizeof(ow->source), "%s", f->path);
                        set_value(&g->cpus, &ow->has_cpus, &ow->cpus, &ow->cpus_line, ow, f->path);
                        set_value(&g->mems, &ow->has_mems, &ow->mems, &ow->mems_line, ow, f->path);
                        ow->known = ow->kind == NG_OWNER_CGCONFIG;
                        /* cgconfigparser reads every file at once: a v1
                         * cpuset mount in any of them is this group's too */
                        for (size_t m = 0; m < o->n_files && !ow->v1_mount; m++)
                                if (o->files[m].mounts_cpuset) {
                                        ow->v1_mount = true;
                                        snprintf(ow->v1_mount_file, sizeof(ow->v1_mount_file), "%s",
                                                 o->files[m].path);
                                }
                        return 1;
                }
        }
        return 0;
}

/* ---- systemd: the manager ---- */

int ng_systemd_bus_open(void **ret)
{
        sd_bus *bus = NULL;
        int r = -EACCES;
        /* root talks to the manager directly, as systemctl does: it works
         * before (or without) a D-Bus daemon */
        if (geteuid() == 0) {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r < 0)
                        bus = sd_bus_unref(bus);
        }
        if (r < 0)
                r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        *ret = bus;
        return 0;
}

static void bitmask_to_bitmap(const uint8_t *mask, size_t size, struct ng_bitmap *ret)
{
        *ret = (struct ng_bitmap) {0};
        for (size_t i = 0; i < size && i < NG_BITMAP_BITS / 8; i++)
                for (unsigned b = 0; b < 8; b++)
                        if (mask[i] & (1u << b))
                                ng_bitmap_set(ret, (unsigned) (i * 8 + b));
}

static int bus_bitmap(sd_bus *bus, const char *path, const char *iface, const char *prop, struct ng_bitmap *ret)
{
        sd_bus_error err = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sd_bus_get_property(bus, "org.freedesktop.systemd1", path, iface, prop, &err, &reply, "ay");
        const void *mask;
        size_t size = 0;
        if (r >= 0)
                r = sd_bus_message_read_array(reply, 'y', &mask, &size);
        if (r >= 0)
                bitmask_to_bitmap(mask, size, ret);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&err);
        return r;
}

/* A service's NUMAPolicy (-1: unset) and NUMAMask (systemd 243+; an
 * older manager has neither: left unset). */
static void bus_numa(sd_bus *bus, const char *path, struct ng_unit_cpuset *u)
{
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int32_t mode = -1;
        if (sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Service",
                                        "NUMAPolicy", &err, 'i', &mode) >= 0 && mode >= 0) {
                u->has_numa_policy = true;
                u->numa_policy = mode;
        }
        sd_bus_error_free(&err);
        if (bus_bitmap(bus, path, "org.freedesktop.systemd1.Service", "NUMAMask", &u->numa_mask) >= 0)
                u->has_numa_mask = !ng_bitmap_empty(&u->numa_mask);
}

const char *ng_unit_bus_interface(const char *unit)
{
        size_t n = strlen(unit);
        return n > 6 && !strcmp(unit + n - 6, ".scope") ? "org.freedesktop.systemd1.Scope" :
                                                          "org.freedesktop.systemd1.Service";
}

int ng_unit_bus_read(void *bus_, const char *unit, const char *cgroup_path, struct ng_unit_cpuset *ret)
{
        sd_bus *bus = bus_;
        _cleanup_free_ char *path = NULL, *cg = NULL;
        const char *iface = ng_unit_bus_interface(unit);
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r >= 0)
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, iface, "ControlGroup", &err, &cg);
        /* Not this manager's (a container's systemd, a unit of that name
         * elsewhere): not the owner we can ask. */
        if (r >= 0 && (!cg || strcmp(cg, cgroup_path)))
                r = -ESRCH;
        struct ng_unit_cpuset u = {0};
        if (r >= 0)
                r = bus_bitmap(bus, path, iface, "AllowedCPUs", &u.cpus);
        if (r >= 0)
                r = bus_bitmap(bus, path, iface, "AllowedMemoryNodes", &u.mems);
        u.has_cpus = !ng_bitmap_empty(&u.cpus);
        u.has_mems = !ng_bitmap_empty(&u.mems);
        if (r >= 0 && !strcmp(iface, "org.freedesktop.systemd1.Service"))
                bus_numa(bus, path, &u);
        sd_bus_error_free(&err);
        if (r < 0)
                return r;
        *ret = u;
        return 0;
}

/* ---- systemd: the unit files ---- */

#define MAX_DROPINS 64

struct dropin {
        char name[256];
        char path[PATH_MAX];
};

static int dropin_cmp(const void *a, const void *b)
{
        return strcmp(((const struct dropin *) a)->name, ((const struct dropin *) b)->name);
}

/* Adds DIR/UNIT.d/ *.conf; a name already seen in a higher-priority
 * directory masks this one. */
static void add_dropins(const struct ng_path *p, const char *dir, const char *unit, struct dropin *d, size_t *n)
{
        _ng_cleanup_(ng_strv_freep) char **names = NULL;
        size_t k;
        if (ng_path_list(p, &names, &k, "%s/%s.d", dir, unit) < 0)
                return;
        for (size_t i = 0; i < k && *n < MAX_DROPINS; i++) {
                size_t l = strlen(names[i]);
                bool seen = false;
                if (l <= 5 || strcmp(names[i] + l - 5, ".conf") || l >= sizeof(d->name))
                        continue;
                for (size_t j = 0; j < *n && !seen; j++)
                        seen = !strcmp(d[j].name, names[i]);
                if (seen)
                        continue;
                snprintf(d[*n].name, sizeof(d->name), "%s", names[i]);
                if (snprintf(d[*n].path, sizeof(d->path), "%s/%s.d/%s", dir, unit, names[i]) < (int) sizeof(d->path))
                        (*n)++;
        }
}

/* "db@main.service" -> "db@.service"; "" when not an instance. */
static void template_of(const char *unit, char *buf, size_t size)
{
        const char *at = strchr(unit, '@'), *dot = strrchr(unit, '.');
        buf[0] = '\0';
        if (at && dot && at < dot && dot[-1] != '@')
                snprintf(buf, size, "%.*s%s", (int) (at - unit + 1), unit, dot);
}

static int apply_file(const struct ng_path *p, const char *path, struct ng_unit_cpuset *u)
{
        _cleanup_free_ char *buf = NULL;
        int r = ng_path_read(p, &buf, NULL, "%s", path);
        if (r < 0)
                return r;
        return ng_parse_unit_cpuset(buf, u);
}

int ng_unit_files_read(const struct ng_path *p, const char *unit, struct ng_unit_cpuset *ret, char *source,
                       size_t size)
{
        static const char *const dirs[] = NG_SYSTEMD_UNIT_DIRS;
        char tmpl[256], path[PATH_MAX];
        template_of(unit, tmpl, sizeof(tmpl));
        struct ng_unit_cpuset u = {0};
        const char *main = NULL;
        for (size_t i = 0; i < ELEMENTSOF(dirs) && !main; i++)
                for (int t = 0; t < 2 && !main; t++) {
                        const char *name = t ? tmpl : unit;
                        if (*name && snprintf(path, sizeof(path), "%s/%s", dirs[i], name) < (int) sizeof(path) &&
                            apply_file(p, path, &u) >= 0)
                                main = path;
                }
        _cleanup_free_ struct dropin *d = calloc(MAX_DROPINS, sizeof(*d));
        size_t n = 0;
        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                add_dropins(p, dirs[i], unit, d, &n);
                if (*tmpl)
                        add_dropins(p, dirs[i], tmpl, d, &n);
        }
        qsort(d, n, sizeof(*d), dropin_cmp);
        for (size_t i = 0; i < n; i++)
                apply_file(p, d[i].path, &u);
        if (!main && n == 0)
                return -ENOENT;
        if (source && snprintf(source, size, "%s%s", main ? main : "drop-ins of ", main ? "" : unit) < 0)
                return -EINVAL;
        *ret = u;
        return 0;
}

static int unit_files(struct owners *o, const char *unit, struct ng_owner *ow)
{
        struct ng_unit_cpuset u;
        int r = ng_unit_files_read(o->p, unit, &u, ow->source, sizeof(ow->source));
        if (r < 0)
                return r;
        ow->has_cpus = u.has_cpus;
        ow->has_mems = u.has_mems;
        ow->cpus = u.cpus;
        ow->mems = u.mems;
        ow->known = true;
        return 0;
}

static void systemd_owner(struct owners *o, sd_bus *bus, const struct ng_cgroup *cg, const char *unit,
                          struct ng_owner *ow)
{
        *ow = (struct ng_owner) { .kind = NG_OWNER_SYSTEMD };
        snprintf(ow->name, sizeof(ow->name), "%s", unit);
        struct ng_unit_cpuset u;
        if (bus && ng_unit_bus_read(bus, unit, cg->path, &u) >= 0) {
                snprintf(ow->source, sizeof(ow->source), "systemd");
                ow->has_cpus = u.has_cpus;
                ow->has_mems = u.has_mems;
                ow->cpus = u.cpus;
                ow->mems = u.mems;
                ow->known = true;
                return;
        }
        if (unit_files(o, unit, ow) < 0)
                snprintf(ow->source, sizeof(ow->source), "no unit file found for %s", unit);
}

/* ---- entry point ---- */

int ng_owners_collect(const struct ng_path *p, struct ng_snapshot *s)
{
        struct owners o = { .p = p };
        sd_bus *bus = NULL;
        bool bus_tried = false;
        int r = 0;
        if (s->n_cgroups > 0)
                r = read_cgconfig(&o);
        for (size_t i = 0; i < s->n_cgroups && r >= 0; i++) {
                struct ng_cgroup *cg = &s->cgroups[i];
                char unit[256];
                cg->owner = (struct ng_owner) { .kind = NG_OWNER_NONE };
                if (ng_container_owner(p, s, cg, &cg->owner) || cgconfig_owner(&o, cg, &cg->owner))
                        continue;
                /* systemd manages cpusets only on the unified hierarchy, and
                 * a cgroup without the controller has no cpuset to restore. */
                if (cg->version != 2 || !cg->has_cpuset || ng_unit_from_cgroup(cg->path, unit, sizeof(unit)) < 0)
                        continue;
                if (!bus_tried && ng_path_is_live(p)) {
                        bus_tried = true;
                        void *b = NULL;
                        bus = ng_systemd_bus_open(&b) >= 0 ? b : NULL;
                }
                systemd_owner(&o, bus, cg, unit, &cg->owner);
        }
        sd_bus_flush_close_unref(bus);
        for (size_t i = 0; i < o.n_files; i++) {
                free(o.files[i].buf);
                free(o.files[i].groups);
        }
        free(o.files);
        return r;
}

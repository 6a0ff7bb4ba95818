/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * numaguard.conf's keys: one table drives parsing, defaults, range checks and
 * the dump. The value codecs it names live in config-values.c, the loader
 * that walks it in config-load.c.
 */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config-internal.h"

/* ---- the table -------------------------------------------------------- */

static const char *const mode_names[] = {
        [NG_MODE_AUDIT] = "audit",
        [NG_MODE_ENFORCE] = "enforce",
        NULL,
};

static const char *const policy_names[] = {
        [NG_POLICY_LOCAL] = "local",
        [NG_POLICY_INTERLEAVE] = "interleave",
        [NG_POLICY_BIND] = "bind",
        [NG_POLICY_WEIGHTED_INTERLEAVE] = "weighted-interleave",
        NULL,
};

const char *ng_config_policy_name(enum ng_policy p)
{
        return (size_t) p < ELEMENTSOF(policy_names) - 1 ? policy_names[p] : "?";
}

static const char *const hugepages_names[] = {
        [NG_HUGEPAGES_PREFERRED] = "preferred",
        [NG_HUGEPAGES_REQUIRED] = "required",
        [NG_HUGEPAGES_OFF] = "off",
        NULL,
};

/* Index i names bit 1 << i: the table of corrections. */
static const char *const enforce_names[] = {
#define ENFORCE_NAME(id, name, msgid) name,
        NG_CORRECTIONS(ENFORCE_NAME)
#undef ENFORCE_NAME
        NULL,
};

#define G(f) SEC_GLOBAL, .offset = offsetof(struct ng_config, f)
#define I(f) SEC_INSTANCE, .offset = offsetof(struct ng_instance_config, f)
#define DURATION .parse = ng_cfg_parse_duration, .format = ng_cfg_fmt_duration
#define SIZE .parse = ng_cfg_parse_size, .format = ng_cfg_fmt_size
#define FRACTION .parse = ng_cfg_parse_fraction, .format = ng_cfg_fmt_fraction
#define UINT .parse = ng_cfg_parse_uint, .format = ng_cfg_fmt_uint
#define CHOICE(n) .parse = ng_cfg_parse_choice, .format = ng_cfg_fmt_choice, .names = (n)
#define STRING(p) .parse = (p), .format = ng_cfg_fmt_string

/* Keep in step with conf/numaguard.conf (tests/unit/test-config.c checks). */
const struct item ng_cfg_items[] = {
        { G(interval_usec), .key = "interval", DURATION,
          .min = 100 * USEC_PER_MSEC, .max = USEC_PER_HOUR, .def = "30s" },
        { G(cyclops_fraction), .key = "cyclops_fraction", FRACTION,
          .min = 0.5, .max = 1.0, .def = "0.9" },
        { G(pagetable_share), .key = "pagetable_share", FRACTION,
          .min = 0.001, .max = 0.5, .def = "0.02" },
        { G(node_free_floor_bytes), .key = "node_free_floor", .parse = ng_cfg_parse_floor, .format = ng_cfg_fmt_floor,
          .min = 0, .max = PIB, .def = "auto" },
        { G(min_segment_size_bytes), .key = "min_segment_size", SIZE,
          .min = 0, .max = PIB, .def = "64M" },
        { G(sample_every), .key = "sample_every", UINT,
          .min = 1, .max = 100000, .def = "10" },
        { G(sample_pages), .key = "sample_pages", UINT,
          .min = 64, .max = 65536, .def = "4096" },
        { G(full_scan_every), .key = "full_scan_every", UINT,
          .min = 1, .max = 100000, .def = "20" },
        { G(attacher_read_budget), .key = "attacher_read_budget", UINT,
          .min = 0, .max = 1000000, .def = "100" },
        { G(stuck_after_usec), .key = "stuck_after", DURATION,
          .min = USEC_PER_SEC, .max = USEC_PER_HOUR, .def = "10s" },
        { G(autodiscover), .key = "autodiscover", .parse = ng_cfg_parse_bool, .format = ng_cfg_fmt_bool,
          .def = "yes" },
        { G(mode), .key = "mode", CHOICE(mode_names), .def = "audit" },
        { G(cooldown_usec), .key = "cooldown", DURATION,
          .min = 0, .max = USEC_PER_DAY, .def = "10m" },
        { G(socket_path), .key = "socket", STRING(ng_cfg_parse_path),
          .min = 1, .max = SOCKET_PATH_MAX, .def = "/run/numaguard/ctl.sock" },
        { G(metrics_file), .key = "metrics_file", STRING(ng_cfg_parse_path),
          .min = 0, .max = PATH_MAX - 1,
          .def = "/var/lib/prometheus/node-exporter/numaguard.prom" },
        { G(status_group), .key = "status_group", STRING(ng_cfg_parse_group),
          .min = 0, .max = 32, .def = "" },
        { G(write_interleave_weights), .key = "write_interleave_weights", .parse = ng_cfg_parse_bool,
          .format = ng_cfg_fmt_bool, .def = "no" },
        { G(unreadable_ok), .key = "unreadable_ok", STRING(ng_cfg_parse_unreadable_ok),
          .min = 0, .max = PATH_MAX - 1, .def = "" },

        { I(match_comm), .key = "match_comm", STRING(ng_cfg_parse_comm_glob),
          .min = 1, .max = 255, .flags = ITEM_MATCHER },
        { I(match_cmdline), .key = "match_cmdline", STRING(ng_cfg_parse_glob),
          .min = 1, .max = 4095, .flags = ITEM_MATCHER },
        { I(pidfile), .key = "pidfile", STRING(ng_cfg_parse_path),
          .min = 1, .max = PATH_MAX - 1, .flags = ITEM_MATCHER },
        { I(cgroup), .key = "cgroup", STRING(ng_cfg_parse_path),
          .min = 1, .max = PATH_MAX - 1, .flags = ITEM_MATCHER },
        { I(container), .key = "container", STRING(ng_cfg_parse_glob),
          .min = 1, .max = 127, .flags = ITEM_MATCHER },
        { I(shm_owner_uid), .key = "shm_owner", .parse = ng_cfg_parse_uid, .format = ng_cfg_fmt_uid,
          .min = 0, .max = (double)(UINT32_MAX - 1), .flags = ITEM_MATCHER },
        { I(span_namespaces), .key = "span_namespaces", .parse = ng_cfg_parse_bool, .format = ng_cfg_fmt_bool,
          .def = "no" },
        { I(policy), .key = "policy", CHOICE(policy_names), .def = "local" },
        { I(nodes), .key = "nodes", .parse = ng_cfg_parse_nodes, .format = ng_cfg_fmt_nodes,
          .min = 0, .max = NODE_ID_MAX },
        { I(hugepages), .key = "hugepages", CHOICE(hugepages_names), .def = "preferred" },
        { I(expected_size_bytes), .key = "expected_size", SIZE,
          .min = 0, .max = PIB, .def = "0" },
        { I(enforce), .key = "enforce", .parse = ng_cfg_parse_flags, .format = ng_cfg_fmt_flags,
          .names = enforce_names, .def = "none" },
};
const size_t ng_cfg_n_items = ELEMENTSOF(ng_cfg_items);
_Static_assert(ELEMENTSOF(ng_cfg_items) <= NG_CFG_ITEMS_MAX, "raise NG_CFG_ITEMS_MAX");

const struct item *ng_cfg_find_item(enum section_kind section, const char *key)
{
        for (size_t i = 0; i < ng_cfg_n_items; i++)
                if (ng_cfg_items[i].section == section && strcmp(ng_cfg_items[i].key, key) == 0)
                        return &ng_cfg_items[i];
        return NULL;
}

/* Defaults go through the parsers, so they obey the same ranges. */
int ng_cfg_apply_defaults(enum section_kind section, void *base)
{
        char why[256];

        for (size_t i = 0; i < ng_cfg_n_items; i++) {
                const struct item *it = &ng_cfg_items[i];
                int r;

                if (it->section != section || !it->def)
                        continue;
                r = it->parse(it, it->def, (char *)base + it->offset, why, sizeof(why));
                if (r < 0)
                        return r == -ENOMEM ? r : -EINVAL;
        }
        return 0;
}

int ng_cfg_instance_init(struct ng_instance_config *inst, const char *name, unsigned line)
{
        memset(inst, 0, sizeof(*inst));
        snprintf(inst->name, sizeof(inst->name), "%s", name);
        inst->line = line;
        inst->shm_owner_uid = NG_UID_UNSET;
        return ng_cfg_apply_defaults(SEC_INSTANCE, inst);
}

static void instance_done(struct ng_instance_config *inst)
{
        free(inst->match_comm);
        free(inst->match_cmdline);
        free(inst->container);
        free(inst->pidfile);
        free(inst->cgroup);
}

void ng_config_free(struct ng_config *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < c->n_instances; i++)
                instance_done(&c->instances[i]);
        free(c->instances);
        free(c->socket_path);
        free(c->metrics_file);
        free(c->status_group);
        free(c->unreadable_ok);
        free(c);
}

int ng_config_new_default(struct ng_config **ret)
{
        assert(ret);
        _ng_cleanup_(ng_config_freep) struct ng_config *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        r = ng_cfg_apply_defaults(SEC_GLOBAL, c);
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&c);
        return 0;
}


/* ---- dump ------------------------------------------------------------- */

static void dump_section(enum section_kind section, const void *base, FILE *f)
{
        char buf[PATH_MAX + 64];

        for (size_t i = 0; i < ng_cfg_n_items; i++) {
                const struct item *it = &ng_cfg_items[i];

                if (it->section != section)
                        continue;
                if (!it->format(it, (const char *)base + it->offset, buf, sizeof(buf)))
                        continue;
                fprintf(f, "%s =%s%s\n", it->key, *buf ? " " : "", buf);
        }
}

int ng_config_dump(const struct ng_config *c, FILE *f)
{
        if (!c || !f)
                return -EINVAL;
        fprintf(f, "[global]\n");
        dump_section(SEC_GLOBAL, c, f);
        for (size_t i = 0; i < c->n_instances; i++) {
                fprintf(f, "\n[instance %s]\n", c->instances[i].name);
                dump_section(SEC_INSTANCE, &c->instances[i], f);
        }
        return ferror(f) ? -EIO : 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The owner of a container's cpuset (ng-owner.h): its runtime, or the
 * kubelet for a pod's. What Docker and Podman put back when the container
 * starts again is what they saved with it:
 *   Docker   /var/lib/docker/containers/<id>/hostconfig.json: CpusetCpus,
 *            CpusetMems ("" leaves the parent's)
 *   Podman   the container's OCI spec (containers/storage userdata
 *            config.json): linux.resources.cpu.cpus, .mems
 * Only those values are kept in a snapshot.
 */

#include <errno.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup-json.h"
#include "ng-snapshot.h"
#include "namespaces.h"
#include "owner-internal.h"
#include "path.h"

#define DOCKER_HOSTCONFIG "/var/lib/docker/containers/%s/hostconfig.json"
#define PODMAN_SPEC "/var/lib/containers/storage/%s-containers/%s/userdata/config.json"
static const char *const podman_drivers[] = { "overlay", "vfs" };

static struct json_object *get(struct json_object *o, const char *key)
{
        struct json_object *v = NULL;
        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* One set as the runtime saved it: "" or absent leaves the parent's. */
static bool set_from(struct json_object *v, struct ng_bitmap *ret)
{
        const char *s = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        *ret = (struct ng_bitmap) {0};
        return s[0] && ng_bitmap_parse_list(s, ret) >= 0;
}

static void record(const struct ng_path *p, const char *rel, struct json_object *kept)
{
        size_t len;
        const char *text = json_object_to_json_string_length(kept, JSON_C_TO_STRING_PLAIN, &len);
        if (ng_path_is_live(p))
                ng_path_record(p, rel, text, len);
}

/* cpu: the object holding the two sets under cpus_key and mems_key. */
static void saved_sets(const struct ng_path *p, const char *rel, bool podman, struct ng_owner *ow)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        snprintf(ow->source, sizeof(ow->source), "%s", rel);
        if (ng_path_read_unrecorded(p, &buf, &len, rel) < 0)
                return;
        _cleanup_json_ struct json_object *o = json_tokener_parse(buf);
        struct json_object *cpu = podman ? get(get(get(o, "linux"), "resources"), "cpu") : o;
        const char *ck = podman ? "cpus" : "CpusetCpus", *mk = podman ? "mems" : "CpusetMems";
        if (o && (!podman || cpu)) {
                ow->known = true;
                ow->has_cpus = set_from(get(cpu, ck), &ow->cpus);
                ow->has_mems = set_from(get(cpu, mk), &ow->mems);
                _cleanup_json_ struct json_object *kept = json_object_new_object();
                struct json_object *inner = kept;
                if (podman) {
                        struct json_object *l = json_object_new_object(), *r = json_object_new_object();
                        inner = json_object_new_object();
                        json_object_object_add(r, "cpu", inner);
                        json_object_object_add(l, "resources", r);
                        json_object_object_add(kept, "linux", l);
                }
                if (get(cpu, ck))
                        json_object_object_add(inner, ck, json_object_get(get(cpu, ck)));
                if (get(cpu, mk))
                        json_object_object_add(inner, mk, json_object_get(get(cpu, mk)));
                record(p, rel, kept);
        }
}

static const struct ng_container *known_container(const struct ng_snapshot *s, const char *id)
{
        for (size_t i = 0; i < s->n_containers; i++)
                if (!strcmp(s->containers[i].id, id))
                        return &s->containers[i];
        return NULL;
}

bool ng_container_owner(const struct ng_path *p, const struct ng_snapshot *s, const struct ng_cgroup *cg,
                        struct ng_owner *ret)
{
        struct ng_container ct;
        if (ng_container_from_cgroup(cg->path, &ct) < 0)
                return false;
        const struct ng_container *k = known_container(s, ct.id);
        if (k)
                ct = *k;
        struct ng_owner ow = { .kind = NG_OWNER_UNKNOWN };
        snprintf(ow.id, sizeof(ow.id), "%s", ct.id);
        snprintf(ow.name, sizeof(ow.name), "%s", ct.name[0] ? ct.name : ct.id);
        char rel[160];
        if (ct.pod_uid[0]) {
                ow.kind = NG_OWNER_KUBELET;
                if (ct.pod[0])
                        snprintf(ow.name, sizeof(ow.name), "%s/%s", ct.pod_namespace, ct.pod);
                else
                        snprintf(ow.name, sizeof(ow.name), "pod %s", ct.pod_uid);
                snprintf(ow.source, sizeof(ow.source), "%s", ct.qos);
        } else if (!strcmp(ct.runtime, "docker")) {
                ow.kind = NG_OWNER_DOCKER;
                snprintf(rel, sizeof(rel), DOCKER_HOSTCONFIG, ct.id);
                saved_sets(p, rel, false, &ow);
        } else if (!strcmp(ct.runtime, "podman")) {
                ow.kind = NG_OWNER_PODMAN;
                for (size_t d = 0; d < 2 && !ow.known; d++) {
                        snprintf(rel, sizeof(rel), PODMAN_SPEC, podman_drivers[d], ct.id);
                        saved_sets(p, rel, true, &ow);
                }
        } else {
                snprintf(ow.error, sizeof(ow.error), "a container of %s outside Kubernetes: whoever started it "
                         "restores its cpuset", ct.runtime[0] ? ct.runtime : "an unknown runtime");
        }
        *ret = ow;
        return true;
}

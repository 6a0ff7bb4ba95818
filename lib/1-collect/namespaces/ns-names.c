/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * collect: the containers of the watched processes (docs/ARCHITECTURE.md,
 * "Namespaces"): what their cgroup paths say (ns-container.c), and the
 * names their runtimes keep:
 *   Docker      /var/lib/docker/containers/<id>/config.v2.json: "Name"
 *   Podman      containers/storage's containers.json (overlay or vfs
 *               driver): "names"
 *   containerd  the task's OCI config.json (k8s.io namespace): the CRI
 *               annotations io.kubernetes.cri.{container-name,
 *               sandbox-name,sandbox-namespace}
 *   CRI-O       the container's userdata/config.json: the annotations
 *               io.kubernetes.{container.name,pod.name,pod.namespace}
 * Those files hold a container's whole configuration (its environment:
 * secrets), so a snapshot keeps only the names read from them.
 */

#include <errno.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup-json.h"
#include "ns-internal.h"
#include "util.h"

#define DOCKER_CONFIG "/var/lib/docker/containers/%s/config.v2.json"
/* containers/storage keeps one list per storage driver. */
#define PODMAN_CONTAINERS "/var/lib/containers/storage/%s-containers/containers.json"
static const char *const podman_drivers[] = { "overlay", "vfs" };
#define CONTAINERD_SPEC "/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json"
#define CRIO_SPEC "/run/containers/storage/overlay-containers/%s/userdata/config.json"

static struct json_object *read_json(struct collector *c, const char *rel)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        if (ng_path_read_unrecorded(c->reads, &buf, &len, rel) < 0)
                return NULL;
        return json_tokener_parse(buf);
}

static void record_json(struct collector *c, const char *rel, struct json_object *o)
{
        if (!ng_path_is_live(c->p))
                return;
        size_t len;
        const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        ng_path_record(c->reads, rel, text, len);
}

static const char *str(struct json_object *o, const char *key)
{
        struct json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
                json_object_get_string(v) : NULL;
}

static void copy(char *dst, size_t size, const char *src)
{
        if (src)
                snprintf(dst, size, "%s", src);
}

static void name_docker(struct collector *c, struct ng_container *ct)
{
        char rel[160];
        snprintf(rel, sizeof(rel), DOCKER_CONFIG, ct->id);
        _cleanup_json_ struct json_object *o = read_json(c, rel), *kept = json_object_new_object();
        const char *name = o ? str(o, "Name") : NULL;
        if (name) {
                copy(ct->name, sizeof(ct->name), name[0] == '/' ? name + 1 : name);
                json_object_object_add(kept, "Name", json_object_new_string(name));
                record_json(c, rel, kept);
        }
}

static const char *const cri_keys[3] = {
        "io.kubernetes.cri.container-name", "io.kubernetes.cri.sandbox-name", "io.kubernetes.cri.sandbox-namespace",
};
static const char *const crio_keys[3] = {
        "io.kubernetes.container.name", "io.kubernetes.pod.name", "io.kubernetes.pod.namespace",
};

/* The annotations of an OCI spec: 1 found, 0 not this runtime's. */
static int name_from_spec(struct collector *c, struct ng_container *ct, bool crio)
{
        char rel[160];
        if (crio)
                snprintf(rel, sizeof(rel), CRIO_SPEC, ct->id);
        else
                snprintf(rel, sizeof(rel), CONTAINERD_SPEC, ct->id);
        const char *const *keys = crio ? crio_keys : cri_keys;
        _cleanup_json_ struct json_object *o = read_json(c, rel);
        struct json_object *ann;
        if (!o)
                return 0;
        if (!json_object_object_get_ex(o, "annotations", &ann) || !json_object_is_type(ann, json_type_object))
                return 1;
        _cleanup_json_ struct json_object *kept = json_object_new_object();
        struct json_object *kept_ann = json_object_new_object();
        char *dst[3] = { ct->name, ct->pod, ct->pod_namespace };
        size_t size[3] = { sizeof(ct->name), sizeof(ct->pod), sizeof(ct->pod_namespace) };
        for (int i = 0; i < 3; i++) {
                const char *v = str(ann, keys[i]);
                copy(dst[i], size[i], v);
                if (v)
                        json_object_object_add(kept_ann, keys[i], json_object_new_string(v));
        }
        json_object_object_add(kept, "annotations", kept_ann);
        record_json(c, rel, kept);
        return 1;
}

/* Whether e (an entry of containers.json) is ct's: its first name taken. */
static bool podman_entry(struct ng_container *ct, struct json_object *e)
{
        struct json_object *names;
        const char *id = str(e, "id");
        if (!id || strcmp(id, ct->id) || !json_object_object_get_ex(e, "names", &names) ||
            !json_object_is_type(names, json_type_array) || !json_object_array_length(names))
                return false;
        copy(ct->name, sizeof(ct->name), json_object_get_string(json_object_array_get_idx(names, 0)));
        return true;
}

/* Podman's lists, read once a collection; what is kept of them, recorded
 * when the collection ends. */
struct podman {
        bool read;
        struct json_object *all[2], *kept[2];
};

static void name_podman(struct collector *c, struct ng_container *ct, struct podman *pm)
{
        for (size_t d = 0; !pm->read && d < 2; d++) {
                char rel[128];
                snprintf(rel, sizeof(rel), PODMAN_CONTAINERS, podman_drivers[d]);
                pm->all[d] = read_json(c, rel);
                pm->kept[d] = json_object_new_array();
        }
        pm->read = true;
        for (size_t d = 0; d < 2; d++) {
                struct json_object *all = pm->all[d];
                size_t n = all && json_object_is_type(all, json_type_array) ? json_object_array_length(all) : 0;
                for (size_t i = 0; i < n; i++) {
                        struct json_object *e = json_object_array_get_idx(all, i);
                        if (podman_entry(ct, e)) {
                                struct json_object *k = json_object_new_object(), *v;
                                json_object_object_add(k, "id", json_object_new_string(ct->id));
                                if (json_object_object_get_ex(e, "names", &v))
                                        json_object_object_add(k, "names", json_object_get(v));
                                json_object_array_add(pm->kept[d], k);
                                return;
                        }
                }
        }
}

static void name_container(struct collector *c, struct ng_container *ct, struct podman *pm)
{
        if (!strcmp(ct->runtime, "docker"))
                name_docker(c, ct);
        else if (!strcmp(ct->runtime, "podman"))
                name_podman(c, ct, pm);
        else if (!strcmp(ct->runtime, "containerd"))
                name_from_spec(c, ct, false);
        else if (!strcmp(ct->runtime, "cri-o"))
                name_from_spec(c, ct, true);
        /* the kubelet's cgroupfs layout names no runtime: its files do */
        else if (name_from_spec(c, ct, false))
                snprintf(ct->runtime, sizeof(ct->runtime), "containerd");
        else if (name_from_spec(c, ct, true))
                snprintf(ct->runtime, sizeof(ct->runtime), "cri-o");
}

static bool known(const struct ng_snapshot *s, const char *id)
{
        for (size_t i = 0; i < s->n_containers; i++)
                if (!strcmp(s->containers[i].id, id))
                        return true;
        return false;
}

static int add_container(struct ng_snapshot *s, const struct ng_container *ct)
{
        if (ng_grow(&s->containers, NULL, s->n_containers, sizeof(*s->containers), 0) < 0)
                return -ENOMEM;
        s->containers[s->n_containers++] = *ct;
        return 0;
}

int ng_collect_containers(struct collector *c)
{
        struct ng_snapshot *s = c->s;
        struct podman pm = { 0 };
        int r = 0;
        for (size_t i = 0; i < s->n_procs && r >= 0; i++) {
                const struct ng_proc *pr = s->procs[i];
                struct ng_container ct;
                /* a process in a container has a mount namespace of its own */
                if ((pr->mnt_ns == s->mnt_ns && pr->ipc_ns == s->ipc_ns) ||
                    ng_container_of_cgroups(&pr->cgroup, &ct) < 0 || known(s, ct.id))
                        continue;
                c->current_pid = pr->pid;
                name_container(c, &ct, &pm);
                r = add_container(s, &ct);
        }
        c->current_pid = 0;
        for (size_t d = 0; d < 2; d++) {
                char rel[128];
                snprintf(rel, sizeof(rel), PODMAN_CONTAINERS, podman_drivers[d]);
                if (pm.kept[d] && json_object_array_length(pm.kept[d]))
                        record_json(c, rel, pm.kept[d]);
                json_object_put(pm.kept[d]);
                json_object_put(pm.all[d]);
        }
        return r;
}

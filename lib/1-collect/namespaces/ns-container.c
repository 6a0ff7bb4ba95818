/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a cgroup path says of a container (docs/ARCHITECTURE.md,
 * "Namespaces"). The runtimes name a container's cgroup after its id:
 *   systemd driver   .../docker-<id>.scope, libpod-<id>.scope,
 *                    cri-containerd-<id>.scope, crio-<id>.scope
 *   cgroupfs driver  /docker/<id>, /libpod_parent/libpod-<id>,
 *                    /kubepods/<qos>/pod<uid>/<id>
 * and the kubelet puts a pod's containers under
 *   kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice
 * (Guaranteed pods directly under kubepods.slice, UID dashes as '_').
 * A snapshot's container of a process (ng_snapshot_container) is the one
 * its cgroups name.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ng-snapshot.h"
#include "ns-internal.h"
#include "util.h"

#define ID_LEN 64

static bool is_id(const char *p, size_t len)
{
        if (len != ID_LEN)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
                        return false;
        return true;
}

/* "<prefix><id><suffix>" exactly. */
static bool id_between(const char *c, size_t len, const char *prefix, const char *suffix, const char **ret)
{
        size_t pl = strlen(prefix), sl = strlen(suffix);
        if (len != pl + ID_LEN + sl || strncmp(c, prefix, pl) || strncmp(c + pl + ID_LEN, suffix, sl) ||
            !is_id(c + pl, ID_LEN))
                return false;
        *ret = c + pl;
        return true;
}

static const struct {
        const char *prefix, *suffix, *runtime;
} shapes[] = {
        { "docker-", ".scope", "docker" },
        { "libpod-", ".scope", "podman" },
        { "libpod-", "", "podman" },
        { "cri-containerd-", ".scope", "containerd" },
        { "crio-", ".scope", "cri-o" },
};

/* A container id in component c (parent the one before it, "" at the
 * top): its runtime ("" when the shape does not say), or NULL. */
static const char *component_id(const char *c, size_t len, const char *parent, size_t plen, const char **ret_id)
{
        for (size_t i = 0; i < ELEMENTSOF(shapes); i++)
                if (id_between(c, len, shapes[i].prefix, shapes[i].suffix, ret_id))
                        return shapes[i].runtime;
        if (!is_id(c, len))
                return NULL;
        *ret_id = c;
        if (plen == 6 && !strncmp(parent, "docker", 6))
                return "docker";
        return "";
}

static void set_pod_uid(struct ng_container *ct, const char *uid, size_t len)
{
        if (len == 0 || len >= sizeof(ct->pod_uid))
                return;
        for (size_t i = 0; i < len; i++)
                ct->pod_uid[i] = uid[i] == '_' ? '-' : uid[i];
        ct->pod_uid[len] = '\0';
}

static void set_qos(struct ng_container *ct, const char *q, size_t len)
{
        static const char *const names[] = { "burstable", "besteffort" };
        for (size_t i = 0; i < 2; i++)
                if (len == strlen(names[i]) && !strncmp(q, names[i], len))
                        snprintf(ct->qos, sizeof(ct->qos), "%s", names[i]);
}

/* The kubelet's components: kubepods(.slice), its QoS level and the pod. */
static void pod_component(struct ng_container *ct, const char *c, size_t len, bool in_kubepods)
{
        const char *pod;
        if (len > 15 && !strncmp(c, "kubepods-", 9) && !strncmp(c + len - 6, ".slice", 6) &&
            (pod = strstr(c + 9, "pod")) && pod < c + len - 6 && (pod == c + 9 || pod[-1] == '-')) {
                set_pod_uid(ct, pod + 3, (size_t) (c + len - 6 - pod - 3));
                if (pod > c + 9)
                        set_qos(ct, c + 9, (size_t) (pod - 1 - c - 9));
        } else if (len > 15 && !strncmp(c, "kubepods-", 9) && !strncmp(c + len - 6, ".slice", 6)) {
                set_qos(ct, c + 9, len - 15);
        } else if (in_kubepods && len > 3 && !strncmp(c, "pod", 3)) {
                set_pod_uid(ct, c + 3, len - 3);
        } else if (in_kubepods) {
                set_qos(ct, c, len);
        }
}

int ng_container_from_cgroup(const char *path, struct ng_container *ret)
{
        if (!path)
                return -ENOENT;
        struct ng_container ct = { 0 };
        const char *id = NULL, *runtime = NULL, *parent = "";
        size_t plen = 0;
        bool in_kubepods = false;
        for (const char *c = path; c && *c;) {
                while (*c == '/')
                        c++;
                size_t len = strcspn(c, "/");
                if (!len)
                        break;
                const char *cid, *rt = component_id(c, len, parent, plen, &cid);
                if (rt) {
                        id = cid;       /* the innermost one is the container's */
                        runtime = rt;
                } else {
                        pod_component(&ct, c, len, in_kubepods);
                }
                in_kubepods |= (len == 8 && !strncmp(c, "kubepods", 8)) || (len == 14 && !strncmp(c, "kubepods.slice", 14));
                parent = c;
                plen = len;
                c += len;
        }
        if (!id)
                return -ENOENT;
        memcpy(ct.id, id, ID_LEN);
        ct.id[ID_LEN] = '\0';
        snprintf(ct.runtime, sizeof(ct.runtime), "%s", runtime);
        if (ct.pod_uid[0] && !ct.qos[0])
                snprintf(ct.qos, sizeof(ct.qos), "guaranteed");
        *ret = ct;
        return 0;
}

/* The container of a process's cgroups: the unified hierarchy's path, else
 * a v1 hierarchy the runtimes always place it in. */
int ng_container_of_cgroups(const struct ng_pid_cgroup *cg, struct ng_container *ret)
{
        static const char *const v1[] = { "cpuset", "memory", "pids", "name=systemd" };
        if (ng_container_from_cgroup(ng_pid_cgroup_v2_path(cg), ret) == 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(v1); i++)
                if (ng_container_from_cgroup(ng_pid_cgroup_v1_path(cg, v1[i]), ret) == 0)
                        return 0;
        return -ENOENT;
}

const struct ng_container *ng_snapshot_container(const struct ng_snapshot *s, const struct ng_proc *pr)
{
        struct ng_container ct;
        if (!s->n_containers || ng_container_of_cgroups(&pr->cgroup, &ct) < 0)
                return NULL;
        for (size_t i = 0; i < s->n_containers; i++)
                if (!strcmp(s->containers[i].id, ct.id))
                        return &s->containers[i];
        return NULL;
}

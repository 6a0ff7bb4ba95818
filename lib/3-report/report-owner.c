/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit's lines for an instance's cpuset owner (what restores its
 * cpuset) and its container: names others chose, escaped (text.h). */

#include <json-c/json.h>
#include <stdio.h>

#include "cleanup.h"
#include "report-internal.h"
#include "text.h"

/* "AllowedMemoryNodes=6" / "cpuset.mems 6" / "" when the owner leaves it. */
static void owner_value(const struct ng_owner *ow, bool mems, char *buf, size_t size)
{
        bool has = mems ? ow->has_mems : ow->has_cpus;
        char l[128];
        ng_bitmap_format_list(mems ? &ow->mems : &ow->cpus, l, sizeof(l));
        if (ow->kind == NG_OWNER_SYSTEMD)
                snprintf(buf, size, "%s=%s", mems ? "AllowedMemoryNodes" : "AllowedCPUs", has ? l : "");
        else if (ow->kind == NG_OWNER_DOCKER || ow->kind == NG_OWNER_PODMAN)
                snprintf(buf, size, "%s=%s", mems ? "cpuset-mems" : "cpuset-cpus", has ? l : "");
        else if (has)
                snprintf(buf, size, "%s %s", mems ? "cpuset.mems" : "cpuset.cpus", l);
        else
                buf[0] = '\0';
}

/* The owner's name, file and error are text others may choose (a user's
 * unit, a delegated cgroup): escaped like every name (text.h). */
void ng_report_owner_text(const struct ng_owner *ow, FILE *f)
{
        char c[160], m[160];
        _cleanup_free_ char *name = ng_text_dup(NG_TEXT_TERM, ow->name),
                            *source = ng_text_dup(NG_TEXT_TERM, ow->source),
                            *error = ng_text_dup(NG_TEXT_TERM, ow->error);
        if (!name || !source || !error) {
                fprintf(f, "  cpuset owner: (out of memory)\n");
                return;
        }
        switch (ow->kind) {
        case NG_OWNER_NONE:
                fprintf(f, "  cpuset owner: none (a live change lasts until the cgroup goes or the host reboots)\n");
                return;
        case NG_OWNER_UNKNOWN:
                fprintf(f, "  cpuset owner: unknown (%s)\n", error);
                return;
        case NG_OWNER_KUBELET:
                fprintf(f, "  cpuset owner: kubelet, pod %s (%s QoS: its CPU and Memory Managers decide)\n", name,
                        source[0] ? source : "unknown");
                return;
        case NG_OWNER_SYSTEMD:
        case NG_OWNER_CGCONFIG:
        case NG_OWNER_DOCKER:
        case NG_OWNER_PODMAN:
                break;
        }
        fprintf(f, "  cpuset owner: %s %s", ow->kind == NG_OWNER_SYSTEMD ? "systemd unit" :
                ow->kind == NG_OWNER_CGCONFIG ? "cgconfig group" : ow->kind == NG_OWNER_DOCKER ? "docker container" :
                "podman container", name);
        if (!ow->known) {
                fprintf(f, " (what it restores is unknown: %s)\n", source);
                return;
        }
        owner_value(ow, false, c, sizeof(c));
        owner_value(ow, true, m, sizeof(m));
        fprintf(f, " (%s%s%s%s, from %s)\n", c, c[0] && m[0] ? ", " : "", m, !c[0] && !m[0] ? "no cpuset values" : "",
                source);
}

/* "  container docker pg-main (id 3f2a0c1d9b7e), pod shop/pg-0 (uid ..., burstable)":
 * the names are the runtime's, anyone's to choose, so escaped. */
void ng_report_container_text(const struct ng_container *ct, FILE *f)
{
        char name[NG_TEXT_SIZE(sizeof(ct->name))], pod[NG_TEXT_SIZE(sizeof(ct->pod))],
                ns[NG_TEXT_SIZE(sizeof(ct->pod_namespace))];
        fprintf(f, "  container %s%s%s (id %.12s)", ct->runtime[0] ? ct->runtime : "of unknown runtime",
                ct->name[0] ? " " : "", ng_text_escape(NG_TEXT_TERM, ct->name, name, sizeof(name)), ct->id);
        if (ct->pod_uid[0])
                fprintf(f, ", pod %s%s%s (uid %s, %s)", ng_text_escape(NG_TEXT_TERM, ct->pod_namespace, ns, sizeof(ns)),
                        ct->pod_namespace[0] ? "/" : "", ct->pod[0] ? ng_text_escape(NG_TEXT_TERM, ct->pod, pod, sizeof(pod)) :
                        "(name unknown)", ct->pod_uid, ct->qos);
        fputc('\n', f);
}

/* Empty strings are unknown: null. */
static struct json_object *str_or_null(const char *v)
{
        return v[0] ? json_object_new_string(v) : NULL;
}

struct json_object *ng_report_container_json(const struct ng_container *ct)
{
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "runtime", str_or_null(ct->runtime));
        json_object_object_add(o, "id", json_object_new_string(ct->id));
        json_object_object_add(o, "name", str_or_null(ct->name));
        json_object_object_add(o, "pod", str_or_null(ct->pod));
        json_object_object_add(o, "pod_namespace", str_or_null(ct->pod_namespace));
        json_object_object_add(o, "pod_uid", str_or_null(ct->pod_uid));
        json_object_object_add(o, "qos", str_or_null(ct->qos));
        return o;
}

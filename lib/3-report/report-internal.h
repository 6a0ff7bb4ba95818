/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the audit's report (report-audit.c) prints of an instance's
 * cpuset owner and container (report-owner.c). Library-internal. */

#include <json-c/json.h>
#include <stdio.h>

#include "ng-audit.h"

#pragma GCC visibility push(hidden)

/* "  cpuset owner: systemd unit NAME (AllowedCPUs=..., from FILE)". */
void ng_report_owner_text(const struct ng_owner *ow, FILE *f);
/* "  container docker NAME (id ...), pod NS/NAME (uid ..., QOS)". */
void ng_report_container_text(const struct ng_container *ct, FILE *f);
/* The container as the audit's JSON has it: unknown names null. */
struct json_object *ng_report_container_json(const struct ng_container *ct);

#pragma GCC visibility pop

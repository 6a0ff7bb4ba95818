/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libnumaguard's public API, all of it: #include <numaguard.h> with the
 * flags of `pkg-config --cflags numaguard` (or <numaguard/numaguard.h>
 * without them) and link with `pkg-config --libs numaguard`. C and C++;
 * every header below also compiles alone. numaguard(3) lists the entry
 * points; docs/ARCHITECTURE.md, "Public API", says what is kept out.
 *
 * The headers follow the pipeline, in the order data flows:
 *   open a root (ng_path_new: NULL for the live host, or a captured tree),
 *   load a configuration (ng_config_new_default, ng_config_load),
 *   collect a snapshot (ng_collect_for_config, ng_snapshot_free),
 *   audit it (ng_audit_run, ng_audit_exit_status, ng_audit_free),
 *   render it (ng_report_audit_text, ng_report_audit_json, ng_metrics_render),
 *   plan and carry out a correction, dry-run first (ng_plan_hugepages,
 *   ng_act_hugepages_*, ng_cpuset_plan, ng_cpuset_apply, ng_rebalance_*).
 *
 * The Makefile installs exactly the headers listed here: add a public
 * header to this list, and nothing else.
 */

/* core */
#include "ng-bitmap.h"
#include "ng-correction.h"
#include "ng-config.h"
#include "ng-format.h"

/* collect */
#include "ng-path.h"
#include "ng-kernel.h"
#include "ng-sample.h"
#include "ng-dbconf.h"
#include "ng-owner.h"
#include "ng-latency.h"
#include "ng-snapshot.h"
#include "ng-probe.h"

/* analyze */
#include "ng-segments.h"
#include "ng-price.h"
#include "ng-codes.h"
#include "ng-audit.h"
#include "ng-plan.h"
#include "ng-reserve.h"
#include "ng-rehearse.h"

/* report */
#include "ng-report.h"
#include "ng-metrics.h"

/* act */
#include "ng-action.h"
#include "ng-act-cpuset.h"
#include "ng-act-hugepages.h"
#include "ng-act-rebalance.h"

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Findings -> alerts (alerts.c): the transitions, pure. */

#include <stddef.h>
#include <stdint.h>

#include "ng-bitmap.h"
#include "ng-codes.h"
#include "ng-config.h"
#include "ng-snapshot.h"

struct ng_finding;

/*
 * An alert is keyed by (code, instance, nodes): one finding of the audit maps
 * to one key; several findings with the same key (two cyclops segments of one
 * instance on one node) are one alert.
 *
 * Damping: a key is raised on the first poll that reports it, and cleared only
 * after ALERT_CLEAR_POLLS consecutive polls without it, so a finding that
 * comes and goes every other poll stays one raised alert. A key cleared less
 * than ALERT_FLAP_POLLS polls ago must be seen ALERT_RAISE_CONFIRM_POLLS polls
 * in a row before it is raised again.
 */
#define ALERT_CLEAR_POLLS 2
#define ALERT_FLAP_POLLS 10
#define ALERT_RAISE_CONFIRM_POLLS 2

enum alert_state {
        ALERT_PENDING,  /* seen, not raised yet (confirming after a flap) */
        ALERT_ACTIVE,   /* raised */
        ALERT_CLEARED,  /* cleared, remembered for flap detection */
};

struct alert {
        enum ng_code code;
        char instance[NG_INSTANCE_NAME_MAX + 1];
        struct ng_bitmap nodes;
        enum alert_state state;
        /* Copied from the last finding with this key: */
        enum ng_severity severity;
        char segment[128];
        char message[512];
        char advice[256];
        double value;
        struct ng_container container;  /* of the instance; "" when none */
        uint64_t raised_usec, cleared_usec;     /* CLOCK_REALTIME */
        uint64_t last_seen_poll, cleared_poll;
        unsigned seen_streak, missing_streak;
        unsigned raises;
};

enum alert_event_kind {
        ALERT_EVENT_RAISED,
        ALERT_EVENT_CLEARED,
};

typedef void (*alert_event_fn)(void *userdata, enum alert_event_kind kind, const struct alert *a);

struct alert_table {
        struct alert *v;
        size_t n, cap;
        uint64_t polls;
        uint64_t raised_total, cleared_total;
};

/* Feeds one poll's findings; calls fn for every transition. Returns 0 or
 * -ENOMEM (the table is then unchanged for the findings not yet merged). */
int alerts_update(struct alert_table *t, const struct ng_finding *f, size_t n, uint64_t now_usec,
                  alert_event_fn fn, void *userdata);
void alerts_done(struct alert_table *t);
size_t alerts_active(const struct alert_table *t);
/* "0-1" for nodes, "" when empty. */
void alert_nodes_format(const struct ng_bitmap *nodes, char *buf, size_t size);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Corrections in enforce mode (enforce.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ng-action.h"
#include "ng-config.h"
#include "ng-correction.h"

/* Transient failures (EBUSY, EAGAIN, ENOMEM) of one correction retried on
 * later polls, after the cooldown, before the target is given up. */
#define ENFORCE_MAX_TRANSIENT 3

struct enforce_entry {
        char instance[NG_INSTANCE_NAME_MAX + 1];
        enum ng_correction kind;
        uint64_t last_usec;             /* CLOCK_MONOTONIC of the last attempt */
        unsigned transient;             /* consecutive transient failures */
        bool unmanaged;                 /* permanent error: never again until restart */
};

struct enforce_table {
        struct enforce_entry *v;
        size_t n;
        uint64_t actions, failures;     /* for status and metrics */
        /* Attempts by kind and outcome; those the hugepage reservation
         * check refused, by kind (numaguardd(8), METRICS). */
        uint64_t outcomes[NG_CORRECTION_MAX_][NG_OUTCOME_PERMANENT + 1];
        uint64_t check_refused[NG_CORRECTION_MAX_];
};

struct manager;
struct ng_audit;
struct ng_snapshot;
/* In mode = enforce: for every configured instance whose enforce= allows a
 * correction and whose findings call for it, carry it out once per cooldown,
 * log it (NOTICE, the action's MESSAGE_ID) and read it back. */
void enforce_run(struct manager *m, const struct ng_snapshot *s, const struct ng_audit *a);
void enforce_table_free(struct enforce_table *t);

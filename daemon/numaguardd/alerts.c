/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Findings -> alerts. Every poll yields the full list of findings; alerts are
 * the transitions of that list per (code, instance, nodes), damped so that a
 * finding hovering around its threshold does not page anyone twice per
 * minute. Pure: no I/O, the caller's callback does the talking.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "ng-audit.h"
#include "ng-bitmap.h"
#include "util.h"

void alert_nodes_format(const struct ng_bitmap *nodes, char *buf, size_t size)
{
        if (ng_bitmap_format_list(nodes, buf, size) < 0 && size > 0)
                buf[0] = '\0';
}

static bool same_key(const struct alert *a, const struct ng_finding *f)
{
        return a->code == f->code && !strcmp(a->instance, f->instance) &&
               ng_bitmap_equal(&a->nodes, &f->nodes);
}

static struct alert *find_or_add(struct alert_table *t, const struct ng_finding *f)
{
        for (size_t i = 0; i < t->n; i++)
                if (same_key(&t->v[i], f))
                        return &t->v[i];
        if (ng_grow(&t->v, &t->cap, t->n, sizeof(*t->v), 0) < 0)
                return NULL;
        struct alert *a = &t->v[t->n++];
        *a = (struct alert) { .code = f->code, .nodes = f->nodes, .state = ALERT_PENDING };
        snprintf(a->instance, sizeof(a->instance), "%s", f->instance);
        return a;
}

static void copy_finding(struct alert *a, const struct ng_finding *f, bool first_this_poll)
{
        /* Two findings with one key in one poll: keep the worse one's words. */
        if (!first_this_poll && f->severity < a->severity)
                return;
        a->severity = f->severity;
        snprintf(a->segment, sizeof(a->segment), "%s", f->segment);
        snprintf(a->message, sizeof(a->message), "%s", f->message);
        snprintf(a->advice, sizeof(a->advice), "%s", f->advice);
        a->value = f->value;
        a->container = f->container;
}

static void raise_alert(struct alert_table *t, struct alert *a, uint64_t now_usec,
                        alert_event_fn fn, void *userdata)
{
        a->state = ALERT_ACTIVE;
        a->raised_usec = now_usec;
        a->raises++;
        t->raised_total++;
        if (fn)
                fn(userdata, ALERT_EVENT_RAISED, a);
}

static void seen(struct alert_table *t, struct alert *a, uint64_t now_usec, alert_event_fn fn,
                 void *userdata)
{
        if (a->state == ALERT_ACTIVE)
                return;
        bool flapping = a->raises > 0 && t->polls - a->cleared_poll < ALERT_FLAP_POLLS;
        unsigned need = flapping ? ALERT_RAISE_CONFIRM_POLLS : 1;
        if (a->seen_streak >= need)
                raise_alert(t, a, now_usec, fn, userdata);
        else
                a->state = ALERT_PENDING;
}

/* Returns true when the entry can be forgotten. */
static bool missing(struct alert_table *t, struct alert *a, uint64_t now_usec,
                    alert_event_fn fn, void *userdata)
{
        a->seen_streak = 0;
        a->missing_streak++;
        switch (a->state) {
        case ALERT_ACTIVE:
                if (a->missing_streak < ALERT_CLEAR_POLLS)
                        return false;
                a->state = ALERT_CLEARED;
                a->cleared_usec = now_usec;
                a->cleared_poll = t->polls;
                t->cleared_total++;
                if (fn)
                        fn(userdata, ALERT_EVENT_CLEARED, a);
                return false;
        case ALERT_PENDING:
                if (a->raises == 0)
                        return true;
                a->state = ALERT_CLEARED;
                return false;
        case ALERT_CLEARED:
        default:
                return t->polls - a->cleared_poll >= ALERT_FLAP_POLLS;
        }
}

int alerts_update(struct alert_table *t, const struct ng_finding *f, size_t n, uint64_t now_usec,
                  alert_event_fn fn, void *userdata)
{
        t->polls++;
        for (size_t i = 0; i < n; i++) {
                struct alert *a = find_or_add(t, &f[i]);
                if (!a)
                        return -ENOMEM;
                bool first = a->last_seen_poll != t->polls;
                copy_finding(a, &f[i], first);
                if (first) {
                        a->last_seen_poll = t->polls;
                        a->seen_streak++;
                        a->missing_streak = 0;
                }
        }
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++) {
                struct alert *a = &t->v[i];
                bool forget = false;
                if (a->last_seen_poll == t->polls)
                        seen(t, a, now_usec, fn, userdata);
                else
                        forget = missing(t, a, now_usec, fn, userdata);
                if (!forget)
                        t->v[k++] = *a;
        }
        t->n = k;
        return 0;
}

size_t alerts_active(const struct alert_table *t)
{
        size_t n = 0;
        for (size_t i = 0; i < t->n; i++)
                n += t->v[i].state == ALERT_ACTIVE;
        return n;
}

void alerts_done(struct alert_table *t)
{
        free(t->v);
        *t = (struct alert_table) {0};
}

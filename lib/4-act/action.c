/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared machinery of the corrections: outcomes, error classes, results,
 * ops, and the journal entry of a correction. */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "action-internal.h"
#include "cleanup.h"
#include "ng-act-cpuset.h"
#include "text.h"
#include "util.h"

const char *ng_outcome_name(enum ng_outcome o)
{
        static const char *const names[] = {
                [NG_OUTCOME_DRY_RUN] = "dry-run",
                [NG_OUTCOME_NOOP] = "noop",
                [NG_OUTCOME_DONE] = "done",
                [NG_OUTCOME_PARTIAL] = "partial",
                [NG_OUTCOME_REFUSED] = "refused",
                [NG_OUTCOME_TRANSIENT] = "transient-error",
                [NG_OUTCOME_PERMANENT] = "permanent-error",
        };
        return NG_NAME(names, o, "unknown");
}

bool ng_errno_transient(int err)
{
        err = err < 0 ? -err : err;
        return err == EBUSY || err == EAGAIN || err == ENOMEM || err == EINTR;
}

enum ng_outcome ng_outcome_for_errno(int r)
{
        return ng_errno_transient(r) ? NG_OUTCOME_TRANSIENT : NG_OUTCOME_PERMANENT;
}

static int default_write(void *userdata, const struct ng_path *p, const char *path, const char *value)
{
        (void) userdata;
        return ng_path_write(p, value, "%s", path);
}

static int default_read(void *userdata, const struct ng_path *p, const char *path, char *buf, size_t size)
{
        (void) userdata;
        char *b;
        int r = ng_path_read(p, &b, NULL, "%s", path);
        if (r < 0)
                return r;
        snprintf(buf, size, "%s", b);
        free(b);
        return 0;
}

static void default_sleep(void *userdata, uint64_t usec)
{
        (void) userdata;
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000), .tv_nsec = (long) (usec % 1000000) * 1000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

const struct ng_action_ops ng_action_ops_default = {
        .size = sizeof(struct ng_action_ops),
        .write = default_write,
        .read = default_read,
        .sleep_usec = default_sleep,
};

int ng_action_ops_complete(const struct ng_action_ops *ops, struct ng_action_ops *ret)
{
        assert(ret);
        if (!ops)
                ops = &ng_action_ops_default;
        if (!ng_action_ops_has(ops, userdata))
                return -EINVAL;
        /* a later member set: what it asks of this library cannot be done */
        const unsigned char *tail = (const unsigned char *) ops + sizeof(*ret);
        for (size_t i = sizeof(*ret); i < ops->size; i++, tail++)
                if (*tail)
                        return -EINVAL;
        struct ng_action_ops o = {0};
        memcpy(&o, ops, ops->size < sizeof(o) ? ops->size : sizeof(o));
        o.size = sizeof(o);
        ng_action_ops_fill_owner(&o);
        *ret = o;
        return 0;
}

int ng_action_result_new(struct ng_action_result **ret)
{
        assert(ret);
        struct ng_action_result *res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        *ret = res;
        return 0;
}

struct ng_action_result *ng_action_result_free(struct ng_action_result *res)
{
        if (res) {
                free(res->writes);
                free(res);
        }
        return NULL;
}

void ng_action_result_reset(struct ng_action_result *res)
{
        assert(res);
        *res = (struct ng_action_result) { .writes = res->writes, .writes_allocated = res->writes_allocated };
}

int ng_action_result_add(struct ng_action_result *res, enum ng_write_kind kind, struct ng_write **ret)
{
        assert(res && ret);
        if (res->n_writes >= NG_ACTION_MAX_WRITES)
                return -E2BIG;
        int r = ng_grow(&res->writes, &res->writes_allocated, res->n_writes, sizeof(*res->writes),
                        NG_ACTION_MAX_WRITES);
        if (r < 0) {
                if (res->error == 0)
                        res->error = r;
                return r;
        }
        struct ng_write *w = &res->writes[res->n_writes++];
        *w = (struct ng_write) { .kind = kind };
        *ret = w;
        return 0;
}

static void chomp(char *s)
{
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
}

int ng_action_write(const struct ng_action_ops *ops, const struct ng_path *p, struct ng_action_result *res,
                    bool dry_run, const char *path, const char *value)
{
        assert(ops && res && path && value);
        if (!ng_action_ops_has(ops, userdata))
                return -EINVAL;
        struct ng_write *w;
        int r = ng_action_result_add(res, NG_WRITE_FILE, &w);
        if (r < 0)
                return r;
        snprintf(w->path, sizeof(w->path), "%s", path);
        snprintf(w->value, sizeof(w->value), "%s", value);
        if (ops->read(ops->userdata, p, path, w->before, sizeof(w->before)) >= 0)
                chomp(w->before);
        if (dry_run)
                return 0;
        w->error = ops->write(ops->userdata, p, path, value);
        if (w->error < 0 && res->error == 0)
                res->error = w->error;
        if (ops->read(ops->userdata, p, path, w->after, sizeof(w->after)) >= 0)
                chomp(w->after);
        return w->error;
}

void ng_correction_journal_fields(enum ng_correction c, const char *identifier, const char *instance,
                                  const char *target, const struct ng_action_result *res, size_t max_writes,
                                  ng_journal_field_fn fn, void *userdata)
{
        const struct ng_correction_kind *k = ng_correction_kind(c);
        assert(k && identifier && target && res && fn);
        const char *outcome = ng_outcome_name(res->outcome);
        char buf[PATH_MAX + 640];

        /* MESSAGE is what journalctl and syslog show: the target and the
         * summary carry names, escaped (text.h); NUMAGUARD_INSTANCE and
         * NUMAGUARD_TARGET keep their bytes. */
        snprintf(buf, sizeof(buf), "%s %s: %s: %s", k->name, target, outcome, res->summary);
        _cleanup_free_ char *msg = ng_text_dup(NG_TEXT_TERM, buf);
        fn(userdata, "MESSAGE", msg ? msg : k->name);
        fn(userdata, "MESSAGE_ID", k->message_id);
        snprintf(buf, sizeof(buf), "%d", LOG_NOTICE);
        fn(userdata, "PRIORITY", buf);
        fn(userdata, "SYSLOG_IDENTIFIER", identifier);
        fn(userdata, "NUMAGUARD_EVENT", "action");
        fn(userdata, "NUMAGUARD_ACTION", k->name);
        if (instance)
                fn(userdata, "NUMAGUARD_INSTANCE", instance);
        fn(userdata, "NUMAGUARD_TARGET", target);
        fn(userdata, "NUMAGUARD_OUTCOME", outcome);
        snprintf(buf, sizeof(buf), "%zu", res->n_writes);
        fn(userdata, "NUMAGUARD_WRITES", buf);
        if (res->check[0])
                fn(userdata, "NUMAGUARD_CHECK", res->check);
        for (size_t i = 0; i < res->n_writes && i < max_writes; i++) {
                const struct ng_write *w = &res->writes[i];
                snprintf(buf, sizeof(buf), "%s=%s (read back %s)", w->path, w->value, w->after);
                fn(userdata, "NUMAGUARD_WRITE", buf);
        }
}

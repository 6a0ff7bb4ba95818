/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics file for node_exporter's textfile collector. Written to a
 * temporary file in the same directory and renamed over the old one, so the
 * collector never reads half a file; the temporary name does not end in
 * ".prom", so the collector never picks it up either.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "ng-metrics.h"

static void fill_poll(const struct manager *m, struct ng_metrics_poll *p)
{
        *p = (struct ng_metrics_poll) {
                .timestamp_usec = m->last_poll_usec,
                .duration_usec = m->last_poll_wall_usec,
                .cpu_usec = m->last_poll_cpu_usec,
                .polls_total = m->polls,
                .poll_failures_total = m->poll_failures,
                .alerts_raised_total = m->alerts.raised_total,
                .alerts_cleared_total = m->alerts.cleared_total,
                .alerts_active = alerts_active(&m->alerts),
                .stalled_usec = m->job.stuck_reported ? manager_stalled_usec(m) : 0,
                .polls_stuck_total = m->polls_stuck,
                .full_scan = m->last_picture.full,
                .process_events = m->last_picture.events,
                .listing_skipped = m->last_picture.listing_skipped,
                .procs_held = m->last_picture.procs,
        };
}

int metrics_write(const struct manager *m, const char *path)
{
        if (!path || !path[0] || !m->snapshot)
                return 0;
        size_t len = strlen(path);
        char *tmp = malloc(len + 8);
        if (!tmp)
                return -ENOMEM;
        memcpy(tmp, path, len);
        memcpy(tmp + len, ".XXXXXX", 8);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                int r = -errno;
                free(tmp);
                return r;
        }
        FILE *f = fdopen(fd, "w");
        if (!f) {
                int r = -errno;
                close(fd);
                unlink(tmp);
                free(tmp);
                return r;
        }
        struct ng_metrics_poll p;
        fill_poll(m, &p);
        int r = fchmod(fd, 0644) < 0 ? -errno : 0;
        if (r >= 0)
                r = ng_metrics_render(m->snapshot, m->audit, &p, f);
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        free(tmp);
        return r;
}

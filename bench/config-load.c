/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/config-load: what loading numaguard.conf costs as the number of
 * [instance] sections grows. Loads a file of N instances (each with a
 * matcher, as a real one) BENCH_REPEAT times and keeps the median, for N =
 * 2,000 and 20,000, and prints the ratio: about 10 when the load is linear,
 * about 100 when it is quadratic (each section compared with every earlier
 * one, as before issue #25: 3.7 s for 20,000). Exit 1 when the ratio is
 * over 30. `make bench-config`.
 */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ng-config.h"

static double now_sec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

/* Median seconds of one load of n instances, or a negative number. */
static double load_seconds(unsigned n, unsigned repeat)
{
        size_t size = (size_t) n * 64 + 64, len = 0;
        char *text = malloc(size);
        double t[32];
        if (!text)
                return -1;
        len += (size_t) snprintf(text, size, "[global]\ninterval = 30s\n");
        for (unsigned i = 0; i < n; i++)
                len += (size_t) snprintf(text + len, size - len, "[instance db%u]\nmatch_comm = ora_pmon_DB%u\n", i, i);
        for (unsigned k = 0; k < repeat; k++) {
                struct ng_config *c;
                double start = now_sec();
                int r = ng_config_load_string(text, "bench.conf", NULL, NULL, &c);
                t[k] = now_sec() - start;
                if (r < 0 || c->n_instances != n) {
                        free(text);
                        return -1;
                }
                ng_config_free(c);
        }
        free(text);
        qsort(t, repeat, sizeof(t[0]), cmp_double);
        return t[repeat / 2];
}

int main(void)
{
        const char *env = getenv("BENCH_REPEAT");
        unsigned repeat = env ? (unsigned) atoi(env) : 5;
        if (repeat < 1 || repeat > 32)
                repeat = 5;
        double small = load_seconds(2000, repeat), large = load_seconds(20000, repeat);
        if (small <= 0 || large <= 0) {
                fprintf(stderr, "config-load: a load failed\n");
                return 1;
        }
        double ratio = large / small;
        printf("# config load, median of %u\n%-10s %12s\n%-10u %12.4f\n%-10u %12.4f\nratio 20000/2000: %.1f "
               "(linear: about 10; quadratic: about 100)\n", repeat, "instances", "seconds", 2000, small,
               20000, large, ratio);
        return ratio > 30 ? 1 : 0;
}

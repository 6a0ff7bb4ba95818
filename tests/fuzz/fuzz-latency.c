/* libFuzzer target for ng_latency_parse() (/var/lib/numaguard/latency.json)
 * and the format/parse round trip of whatever it accepts. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ng-latency.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ng_latency *m = NULL, *back = NULL;
        char err[160];

        if (ng_latency_parse((const char *)data, size, &m, err, sizeof(err)) < 0)
                return 0;
        (void)ng_latency_ns(m, m->cpu_nodes[0 % (m->n_cpu_nodes ? m->n_cpu_nodes : 1)], m->nodes[0]);
        char *text = NULL;
        if (ng_latency_format(m, &text) == 0) {
                if (ng_latency_parse(text, strlen(text), &back, err, sizeof(err)) < 0)
                        abort();        /* what we write we must read */
                ng_latency_free(back);
                free(text);
        }
        ng_latency_free(m);
        return 0;
}

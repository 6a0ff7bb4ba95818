/* libFuzzer target for the small sysfs attribute parsers (parse-sysfs.c),
 * a tree's kept feature lines, a memory cgroup's limit and stat lines, and
 * the names of shmem's huge settings. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        int64_t v;
        unsigned id;
        bool b;
        (void)ng_parse_hmat_value(buf, &v);
        (void)ng_parse_true_false(buf, &b);
        (void)ng_parse_prefixed_id(buf, "node", 1023, &id);
        (void)ng_parse_prefixed_id(buf, "memory_tier", 1u << 16, &id);
        uint64_t u;
        (void)ng_parse_cgroup_limit(buf, &u);
        (void)ng_parse_keyed_u64(buf, "hugetlb", &u);
        if (ng_shmem_huge_from_name(buf) != NG_SHMEM_HUGE_UNKNOWN &&
            strcmp(ng_shmem_huge_name(ng_shmem_huge_from_name(buf)), buf))
                abort();
        struct ng_feature_line fl;
        if (ng_parse_feature_line(buf, &fl) == 0 &&
            (strlen(fl.name) >= sizeof(fl.name) || strlen(fl.state) >= sizeof(fl.state) ||
             strlen(fl.detail) >= sizeof(fl.detail)))
                abort();
        free(buf);
        return 0;
}

/* libFuzzer target for the small helpers of lib/1-collect/kernel-text/parse.c
 * and the field readers of parse-fields.c (each field of a split line as
 * every number a kernel table holds: sysvipc/shm, hugepage counters,
 * numa_maps), and a line of a snapshot's record of /dev/shm owners. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "parse-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';

        uint64_t v, row[16];
        size_t n;
        char out[32];
        const char *p = buf;

        (void)ng_parse_u64(&p, &v);
        (void)ng_parse_u64_full(buf, &v);
        (void)ng_parse_u64_row(buf, row, 16, &n);
        (void)ng_parse_hugepages_dirname(buf, &v);
        (void)ng_parse_bracketed_choice(buf, out, sizeof(out));
        uint32_t uid;
        const char *path;
        if (ng_parse_owner_line(buf, &uid, &path) == 0 && (path < buf || path >= buf + size || *path != '/'))
                abort();
        struct ng_shm_file_line fl;
        char *line = strdup(buf);
        if (line && ng_parse_shm_file_line(line, &fl) == 0 &&
            (fl.path < line || fl.path >= line + size || *fl.path != '/' || fl.size_bytes > INT64_MAX ||
             fl.allocated_bytes > INT64_MAX))
                abort();
        free(line);
        char *copy = strdup(buf), *f[NG_PARSE_MAX_FIELDS];
        if (copy) {
                size_t nf = ng_parse_split(copy, f, NG_PARSE_MAX_FIELDS);
                if (nf > NG_PARSE_MAX_FIELDS + 1)
                        abort();
                for (size_t i = 0; i < nf && i < NG_PARSE_MAX_FIELDS; i++) {
                        uint32_t u32;
                        int64_t i64;
                        pid_t pid;
                        const char *h = f[i];
                        (void)ng_parse_field_u64(f[i], &v);
                        (void)ng_parse_field_u32(f[i], &u32);
                        if (ng_parse_field_i64(f[i], -1, 1 << 20, &i64) == 0 && (i64 < -1 || i64 > 1 << 20))
                                abort();
                        if (ng_parse_field_pid(f[i], &pid) == 0 && pid < 0)
                                abort();
                        (void)ng_parse_field_hex(f[i], &v);
                        (void)ng_parse_hex_u64(&h, ':', &v);
                }
                free(copy);
        }
        ng_unescape_octal(buf);
        free(buf);
        return 0;
}

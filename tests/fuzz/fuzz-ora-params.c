/* libFuzzer target for ng_ora_params_parse() (a text pfile and a binary
 * spfile), ng_ora_param_apply() and ng_ora_conf_settings(), the redaction
 * a snapshot applies to the files, and ng_environ_get(): an Oracle
 * instance's parameter files and its pmon's environment, written by the
 * database's owner and read by numaguard as root. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void params(const char *buf, size_t size, bool spfile)
{
        struct ng_ora_param *v = NULL;
        struct ng_ora_conf conf = {0};
        struct ng_db_settings s = {0};
        size_t n = 0;
        unsigned bad = 0;
        if (ng_ora_params_parse(buf, size, spfile, "ORCL", &v, &n, &bad) != 0)
                return;
        if (n > NG_PG_CONF_MAX_ITEMS)
                abort();
        for (size_t i = 0; i < n; i++) {
                if (strlen(v[i].sid) >= sizeof(v[i].sid) || strlen(v[i].name) >= sizeof(v[i].name) ||
                    strlen(v[i].value) >= sizeof(v[i].value) || v[i].line == 0)
                        abort();
                (void) ng_ora_param_apply(&conf, "ORCL", &v[i], "f:1");
        }
        free(v);
        if (ng_ora_conf_settings(&conf, &s) == 0 && (unsigned) s.huge_pages >= NG_HUGE_SETTING_COUNT_)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf = malloc(size + 1), *kept = NULL, out[64];
        size_t len;
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        params(buf, size, true);
        params(buf, size, false);
        /* what a snapshot keeps of it parses as the original does */
        if (ng_db_conf_redact(buf, size, &kept, &len) == 0) {
                struct ng_ora_param *a = NULL, *b = NULL;
                size_t na = 0, nb = 0;
                unsigned la = 0, lb = 0;
                int ra = ng_ora_params_parse(buf, size, true, "ORCL", &a, &na, &la);
                int rb = ng_ora_params_parse(kept, len, true, "ORCL", &b, &nb, &lb);
                if (ra != rb || (ra == 0 && (na != nb || (na && memcmp(a, b, na * sizeof(*a))))) ||
                    (ra == -EBADMSG && la != lb))
                        abort();
                free(a);
                free(b);
                free(kept);
        }
        (void) ng_environ_get(buf, size, "ORACLE_HOME", out, sizeof(out));
        if (ng_db_environ_redact(buf, size, &kept, &len) == 0) {
                if (len > size + 1)
                        abort();
                free(kept);
        }
        free(buf);
        return 0;
}

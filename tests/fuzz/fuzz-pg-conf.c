/* libFuzzer target for ng_pg_conf_parse() and ng_pg_setting_apply():
 * PostgreSQL's configuration files, written by the database's owner and
 * read by numaguard as root, and the postmaster's command line. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ng_pg_conf_item *v = NULL;
        struct ng_db_settings s = {0};
        size_t n = 0;
        unsigned bad = 0;
        char *buf = malloc(size + 1), cf[256], dd[256];
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (ng_pg_conf_parse(buf, size, &v, &n, &bad) == 0) {
                if (n > NG_PG_CONF_MAX_ITEMS)
                        abort();
                for (size_t i = 0; i < n; i++) {
                        if (strlen(v[i].name) >= sizeof(v[i].name) || strlen(v[i].value) >= sizeof(v[i].value) ||
                            v[i].line == 0)
                                abort();
                        ng_pg_setting_apply(&s, v[i].name, v[i].value, "fuzz:1");
                }
                if ((unsigned) s.huge_pages >= NG_HUGE_SETTING_COUNT_)
                        abort();
        }
        free(v);
        /* The same bytes as a command line (NULs as ng_parse_cmdline makes them). */
        for (size_t i = 0; i < size; i++)
                if (buf[i] == '\0')
                        buf[i] = ' ';
        ng_pg_cmdline_apply(&s, buf, cf, sizeof(cf));
        ng_pg_cmdline_datadir(buf, dd, sizeof(dd));
        if (strlen(cf) >= sizeof(cf) || strlen(dd) >= sizeof(dd) || (dd[0] && dd[0] != '/'))
                abort();
        free(buf);
        return 0;
}

/* libFuzzer target for ng_my_cnf_parse(), ng_my_option_apply() and the
 * command-line readers of mariadbd: MariaDB's option files, written by
 * the database's owner and read by numaguard as root, and the server's
 * command line. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ng_my_cnf_item *v = NULL;
        struct ng_db_settings s = {0};
        struct ng_my_defaults d;
        size_t n = 0;
        unsigned bad = 0;
        char *buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (ng_my_cnf_parse(buf, size, &v, &n, &bad) == 0) {
                if (n > NG_PG_CONF_MAX_ITEMS)
                        abort();
                for (size_t i = 0; i < n; i++) {
                        if (strlen(v[i].name) >= sizeof(v[i].name) || strlen(v[i].value) >= sizeof(v[i].value) ||
                            v[i].line == 0 || (unsigned) v[i].kind > NG_MY_CNF_INCLUDEDIR)
                                abort();
                        if (v[i].kind == NG_MY_CNF_GROUP)
                                (void) ng_my_group_read(v[i].name, ".x");
                        else if (v[i].kind == NG_MY_CNF_OPTION)
                                (void) ng_my_option_apply(&s, v[i].name, v[i].has_value ? v[i].value : NULL, "f:1");
                        else
                                (void) ng_db_path_ok(v[i].value);
                }
                if ((unsigned) s.huge_pages >= NG_HUGE_SETTING_COUNT_ || strlen(s.size_from) >= sizeof(s.size_from))
                        abort();
        }
        free(v);
        /* The same bytes as a command line (NULs as ng_parse_cmdline makes them). */
        for (size_t i = 0; i < size; i++)
                if (buf[i] == '\0')
                        buf[i] = ' ';
        ng_my_cmdline_defaults(buf, &d);
        (void) ng_my_cmdline_apply(&s, buf);
        if (strlen(d.file) >= sizeof(d.file) || strlen(d.extra_file) >= sizeof(d.extra_file) ||
            strlen(d.group_suffix) >= sizeof(d.group_suffix) || (unsigned) s.huge_pages >= NG_HUGE_SETTING_COUNT_)
                abort();
        free(buf);
        return 0;
}

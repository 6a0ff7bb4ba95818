/* libFuzzer target for a configuration in files: the main file and its
 * drop-ins (PATH.d/NAME.conf, ng_config_load_checked() with the host's
 * nodes), where an instance may be defined twice across files and nodes =
 * may name nodes the host lacks. The input is the three files' texts,
 * separated by lines "--8<--". A configuration that loads is dumped
 * (ng_config_dump()) and the dump must load again: what numaguardd shows
 * as its effective configuration is one it would accept. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ng-bitmap.h"
#include "ng-config.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void diag(void *userdata, int priority, const char *file, unsigned line, const char *msg)
{
        (void) userdata, (void) priority, (void) file, (void) line, (void) msg;
}

static char dir[64];

/* The files live in a directory of their own under TMPDIR (not /dev/shm,
 * where numaguard looks for segments), removed when the run ends. */
static void remove_dir(void)
{
        static const char *const rel[] = { "numaguard.conf.d/10-db.conf", "numaguard.conf.d/20-local.conf",
                                           "numaguard.conf", "numaguard.conf.d" };
        char p[128];
        for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, rel[i]);
                (void) remove(p);
        }
        (void) rmdir(dir);
}

static void put(const char *path, const char *text, size_t len)
{
        FILE *f = fopen(path, "w");
        if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const names[] = { "numaguard.conf", "numaguard.conf.d/10-db.conf",
                                             "numaguard.conf.d/20-local.conf" };
        char path[3][128];
        if (!dir[0]) {
                const char *tmp = getenv("TMPDIR");
                snprintf(dir, sizeof(dir), "%s/ng-fuzz-dropins.XXXXXX", tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
                if (!mkdtemp(dir))
                        abort();
                atexit(remove_dir);
                snprintf(path[0], sizeof(path[0]), "%s/numaguard.conf.d", dir);
                if (mkdir(path[0], 0755) < 0)
                        abort();
        }
        for (size_t i = 0; i < 3; i++)
                snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
        const char *p = (const char *) data, *end = p + size;
        for (size_t i = 0; i < 3; i++) {
                const char *cut = i < 2 ? memmem(p, (size_t) (end - p), "\n--8<--\n", 8) : NULL;
                size_t len = cut ? (size_t) (cut - p) + 1 : (size_t) (end - p);
                put(path[i], p, len);
                p = cut ? cut + 8 : end;
        }
        struct ng_bitmap host = {0};
        ng_bitmap_set(&host, 0);
        ng_bitmap_set(&host, 1);
        struct ng_config *c = NULL;
        if (ng_config_load_checked(path[0], &host, diag, NULL, &c) == 0) {
                char *text = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&text, &len);
                if (!f || ng_config_dump(c, f) < 0)
                        abort();
                fclose(f);
                struct ng_config *again = NULL;
                if (ng_config_load_string(text, "dump", diag, NULL, &again) != 0)
                        abort();
                ng_config_free(again);
                free(text);
                ng_config_free(c);
        }
        return 0;
}

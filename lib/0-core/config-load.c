/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading numaguard.conf. inih splits lines into key/value pairs; a line
 * reader of ours feeds it, because inih as packaged (Debian libinih1 r55)
 * does not pass line numbers to the handler, never reports sections that
 * have no keys, truncates section names to 49 characters, and treats
 * indented lines as continuations of the previous value. The reader counts
 * lines, recognises section headers itself and rejects indented lines, so
 * none of that reaches the config.
 */

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cleanup.h"
#include "config-internal.h"
#include "util.h"

/* ---- loading ---------------------------------------------------------- */

struct load_ctx {
        const char *name;       /* the file being read */
        ng_config_diag_fn diag;
        void *userdata;
        struct ng_config *cfg;
        const char *pos; /* next line of the text */
        unsigned lineno;
        enum section_kind kind;
        unsigned section_line;
        unsigned global_line;
        unsigned seen[NG_CFG_ITEMS_MAX]; /* line of each key in this section */
        unsigned errors;
        bool oom;
        size_t instances_cap;   /* room in cfg->instances */
        size_t files_cap;       /* room in instance_files */
        /* Instance names, open addressing: slot = index + 1, 0 = empty. A
         * scan of every earlier name per [instance] made a file of 20,000
         * instances take seconds to load. */
        size_t *names;
        size_t names_cap;       /* a power of two, or 0 */
        /* The file of each instance, for a duplicate in a later file. */
        const char **instance_files;
        /* nodes = beyond these (the host's) is warned about; NULL: unchecked. */
        const struct ng_bitmap *host_nodes;
};

__attribute__((format(printf, 4, 5)))
static void report(struct load_ctx *ctx, int level, unsigned line, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (level == LOG_ERR)
                ctx->errors++;
        if (!ctx->diag)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        ctx->diag(ctx->userdata, level, ctx->name, line, msg);
}

static struct ng_instance_config *current_instance(struct load_ctx *ctx)
{
        return &ctx->cfg->instances[ctx->cfg->n_instances - 1];
}

/* nodes = 0-3 on a one-node host is accepted by the loader, which knows no
 * host; checked against one, it is a warning at the line of the key. */
static void check_host_nodes(struct load_ctx *ctx, const struct ng_instance_config *inst)
{
        const struct item *nodes = ng_cfg_find_item(SEC_INSTANCE, "nodes");
        struct ng_bitmap beyond = inst->nodes;
        char list[256], host[256];

        if (!ctx->host_nodes || ng_bitmap_empty(&inst->nodes))
                return;
        NG_BITMAP_FOREACH(id, ctx->host_nodes)
                ng_bitmap_clear(&beyond, (unsigned)id);
        if (ng_bitmap_empty(&beyond))
                return;
        if (ng_bitmap_format_list(&beyond, list, sizeof(list)) < 0 ||
            ng_bitmap_format_list(ctx->host_nodes, host, sizeof(host)) < 0)
                return;
        report(ctx, LOG_WARNING, ctx->seen[nodes - ng_cfg_items],
               "[instance %s] nodes %s do not exist on this host (its nodes: %s)", inst->name, list, host);
}

static void finish_instance(struct load_ctx *ctx)
{
        const struct ng_instance_config *inst = current_instance(ctx);
        const struct item *policy = ng_cfg_find_item(SEC_INSTANCE, "policy");
        bool matched = false;

        for (size_t i = 0; i < ng_cfg_n_items; i++)
                if (ng_cfg_items[i].section == SEC_INSTANCE && (ng_cfg_items[i].flags & ITEM_MATCHER) &&
                    ctx->seen[i])
                        matched = true;
        if (!matched)
                report(ctx, LOG_ERR, ctx->section_line,
                       "[instance %s] has no matcher: set match_comm, match_cmdline, "
                       "pidfile, cgroup, container or shm_owner",
                       inst->name);
        if (inst->policy == NG_POLICY_BIND && ng_bitmap_empty(&inst->nodes))
                report(ctx, LOG_ERR, ctx->seen[policy - ng_cfg_items],
                       "[instance %s] policy = bind needs a node list (nodes =)", inst->name);
        check_host_nodes(ctx, inst);
}

static void finish_section(struct load_ctx *ctx)
{
        if (ctx->kind == SEC_INSTANCE)
                finish_instance(ctx);
        ctx->kind = SEC_NONE;
}

static void begin_section(struct load_ctx *ctx, enum section_kind kind)
{
        finish_section(ctx);
        ctx->kind = kind;
        ctx->section_line = ctx->lineno;
        memset(ctx->seen, 0, sizeof(ctx->seen));
}

static bool valid_instance_name(const char *name)
{
        size_t len = strlen(name);

        if (len < 1 || len > NG_INSTANCE_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
                        return false;
        return true;
}

/* FNV-1a: names are short and few collide. */
static size_t name_hash(const char *name)
{
        uint64_t h = UINT64_C(14695981039346656037);

        for (const unsigned char *p = (const unsigned char *)name; *p; p++)
                h = (h ^ *p) * UINT64_C(1099511628211);
        return (size_t)h;
}

/* The slot of name in the index: where it is, or the empty one it would
 * take. The index is never full (names_grow keeps it at most half). */
static size_t *name_slot(const struct load_ctx *ctx, const char *name)
{
        size_t mask = ctx->names_cap - 1, i = name_hash(name) & mask;

        while (ctx->names[i] && strcmp(ctx->cfg->instances[ctx->names[i] - 1].name, name) != 0)
                i = (i + 1) & mask;
        return &ctx->names[i];
}

/* Room for one more name in the index and one more instance in the
 * array, both grown by doubling. */
static int names_grow(struct load_ctx *ctx)
{
        struct ng_config *c = ctx->cfg;

        if (ng_grow(&c->instances, &ctx->instances_cap, c->n_instances, sizeof(*c->instances), 0) < 0 ||
            ng_grow(&ctx->instance_files, &ctx->files_cap, c->n_instances, sizeof(*ctx->instance_files), 0) < 0)
                return -ENOMEM;
        if (2 * (c->n_instances + 1) <= ctx->names_cap)
                return 0;
        size_t cap = ctx->names_cap ? 2 * ctx->names_cap : 16;
        size_t *old = ctx->names, old_cap = ctx->names_cap;
        ctx->names = calloc(cap, sizeof(*ctx->names));
        if (!ctx->names) {
                ctx->names = old;
                return -ENOMEM;
        }
        ctx->names_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i])
                        *name_slot(ctx, c->instances[old[i] - 1].name) = old[i];
        free(old);
        return 0;
}

static void begin_instance(struct load_ctx *ctx, const char *name)
{
        struct ng_config *c = ctx->cfg;
        size_t *slot;

        if (!valid_instance_name(name)) {
                report(ctx, LOG_ERR, ctx->lineno,
                       "invalid instance name \"%s\": 1 to %d characters of A-Z a-z 0-9 _ . -",
                       name, NG_INSTANCE_NAME_MAX);
                return begin_section(ctx, SEC_SKIP);
        }
        if (ctx->names_cap && *(slot = name_slot(ctx, name))) {
                const char *first = ctx->instance_files[*slot - 1];
                if (strcmp(first, ctx->name) == 0)
                        report(ctx, LOG_ERR, ctx->lineno, "duplicate section [instance %s], first at line %u",
                               name, c->instances[*slot - 1].line);
                else
                        report(ctx, LOG_ERR, ctx->lineno, "duplicate section [instance %s], first at %s:%u",
                               name, first, c->instances[*slot - 1].line);
                return begin_section(ctx, SEC_SKIP);
        }
        finish_section(ctx);
        if (names_grow(ctx) < 0) {
                ctx->oom = true;
                return begin_section(ctx, SEC_SKIP);
        }
        ctx->instance_files[c->n_instances] = ctx->name;
        c->n_instances++;
        /* Counted before init so that ng_config_free() frees what init set. */
        if (ng_cfg_instance_init(current_instance(ctx), name, ctx->lineno) < 0)
                ctx->oom = true;
        *name_slot(ctx, name) = c->n_instances;
        begin_section(ctx, SEC_INSTANCE);
}

static void begin_global(struct load_ctx *ctx)
{
        if (ctx->global_line) {
                report(ctx, LOG_ERR, ctx->lineno, "duplicate section [global], first at line %u",
                       ctx->global_line);
                return begin_section(ctx, SEC_SKIP);
        }
        ctx->global_line = ctx->lineno;
        begin_section(ctx, SEC_GLOBAL);
}

/* Trims blanks at both ends of s[0..len) in place; returns the new start. */
static char *trim(char *s)
{
        char *end;

        s += strspn(s, " \t\r");
        end = s + strlen(s);
        while (end > s && strchr(" \t\r", end[-1]))
                *--end = '\0';
        return s;
}

/* line: a copy starting at '['. Mirrors inih: text after ']' is ignored there,
 * but here only a comment may follow. */
static void section_header(struct load_ctx *ctx, char *line)
{
        char *close = strchr(line, ']');
        char *name;

        if (!close) {
                report(ctx, LOG_ERR, ctx->lineno, "unterminated section header, missing ']'");
                return begin_section(ctx, SEC_SKIP);
        }
        *close = '\0';
        close = trim(close + 1);
        if (*close && *close != ';' && *close != '#') {
                report(ctx, LOG_ERR, ctx->lineno, "unexpected text after section header: %s",
                       close);
                return begin_section(ctx, SEC_SKIP);
        }
        name = trim(line + 1);
        if (strcmp(name, "global") == 0)
                return begin_global(ctx);
        if (strncmp(name, "instance", 8) == 0 && (name[8] == '\0' || isblank(name[8])))
                return begin_instance(ctx, trim(name + 8));
        report(ctx, LOG_WARNING, ctx->lineno, "unknown section [%s], ignoring it", name);
        begin_section(ctx, SEC_SKIP);
}

/* Returns true when inih may see the line, false when it was rejected. */
static bool screen_line(struct load_ctx *ctx, char *line)
{
        char *s;

        /* inih skips a UTF-8 byte order mark on the first line. */
        if (ctx->lineno == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0)
                line += 3;
        s = trim(line);
        if (*s == '\0' || *s == ';' || *s == '#')
                return true;
        if (s != line) {
                report(ctx, LOG_ERR, ctx->lineno,
                       "line starts with whitespace; indented lines would continue the "
                       "previous value");
                return false;
        }
        if (*s == '[') {
                section_header(ctx, s);
                return true;
        }
        if (!strpbrk(s, "=:")) {
                report(ctx, LOG_ERR, ctx->lineno, "expected \"key = value\" or \"[section]\"");
                return false;
        }
        return true;
}

/* ini_reader over the in-memory text: counts lines and screens them. */
static char *read_line(char *str, int num, void *stream)
{
        struct load_ctx *ctx = stream;
        const char *eol;
        size_t len;

        if (*ctx->pos == '\0') {
                finish_section(ctx);
                return NULL;
        }
        eol = strchrnul(ctx->pos, '\n');
        len = (size_t)(eol - ctx->pos);
        ctx->lineno++;
        str[0] = '\0';
        if (len + 2 > (size_t)num) { /* room for inih's '\n' + NUL */
                report(ctx, LOG_ERR, ctx->lineno, "line longer than %d characters", num - 2);
        } else {
                /* Screened in str (which it edits), then handed over intact. */
                memcpy(str, ctx->pos, len);
                str[len] = '\0';
                if (screen_line(ctx, str))
                        memcpy(str, ctx->pos, len);
                else
                        len = 0;
                str[len] = '\0';
        }
        ctx->pos = *eol ? eol + 1 : eol;
        return str;
}

static void *section_base(struct load_ctx *ctx)
{
        return ctx->kind == SEC_GLOBAL ? (void *)ctx->cfg : (void *)current_instance(ctx);
}

static int handle_pair(void *user, const char *section, const char *key, const char *value)
{
        struct load_ctx *ctx = user;
        const struct item *it;
        char why[256] = "";
        int r;

        (void)section; /* truncated by inih; ctx->kind is the truth */
        if (ctx->kind == SEC_NONE) {
                report(ctx, LOG_ERR, ctx->lineno, "\"%s\" outside of any section", key);
                return 1;
        }
        if (ctx->kind == SEC_SKIP)
                return 1;
        if (*key == '\0' || !value) {
                report(ctx, LOG_ERR, ctx->lineno, "expected \"key = value\"");
                return 1;
        }
        it = ng_cfg_find_item(ctx->kind, key);
        if (!it) {
                report(ctx, LOG_WARNING, ctx->lineno, "unknown key \"%s\" in [%s%s], ignoring it",
                       key, ctx->kind == SEC_GLOBAL ? "global" : "instance ",
                       ctx->kind == SEC_GLOBAL ? "" : current_instance(ctx)->name);
                return 1;
        }
        if (ctx->seen[it - ng_cfg_items]) {
                report(ctx, LOG_ERR, ctx->lineno, "%s is already set at line %u", key,
                       ctx->seen[it - ng_cfg_items]);
                return 1;
        }
        ctx->seen[it - ng_cfg_items] = ctx->lineno;
        /* "key =;x" gives ";x" but "key = ;x" a comment: refuse the ambiguity. */
        if (*value == ';') {
                report(ctx, LOG_ERR, ctx->lineno, "value of %s starts with ';'", key);
                return 1;
        }
        r = it->parse(it, value, (char *)section_base(ctx) + it->offset, why, sizeof(why));
        if (r == -ENOMEM)
                ctx->oom = true;
        else if (r < 0)
                report(ctx, LOG_ERR, ctx->lineno, "invalid %s \"%s\": %s", key, value, why);
        else if (r > 0)
                report(ctx, LOG_WARNING, ctx->lineno, "%s: %s", key, why);
        return 1;
}

/* Feeds one file's text to inih; the state of a file starts afresh, what
 * the files build together (the config, the instance names) carries on. */
static void load_text(struct load_ctx *ctx, const char *text, const char *name)
{
        int r;

        ctx->name = name;
        ctx->pos = text;
        ctx->lineno = 0;
        ctx->kind = SEC_NONE;
        ctx->section_line = 0;
        ctx->global_line = 0;
        memset(ctx->seen, 0, sizeof(ctx->seen));
        unsigned errors = ctx->errors;
        r = ini_parse_stream(read_line, ctx, handle_pair, ctx);
        if (r == -2)
                ctx->oom = true;
        else if (r > 0 && ctx->errors == errors)
                report(ctx, LOG_ERR, (unsigned)r, "malformed line");
}

static int load_begin(struct load_ctx *ctx, ng_config_diag_fn diag, void *userdata,
                      const struct ng_bitmap *host_nodes)
{
        *ctx = (struct load_ctx){ .diag = diag, .userdata = userdata, .host_nodes = host_nodes };
        return ng_config_new_default(&ctx->cfg);
}

/* The cleanup of a load: frees what a load that did not end holds. */
static void load_done(struct load_ctx *ctx)
{
        free(ctx->names);
        free(ctx->instance_files);
        ng_config_free(ctx->cfg);
}

static int load_end(struct load_ctx *ctx, struct ng_config **ret)
{
        if (ctx->oom || ctx->errors)
                return ctx->oom ? -ENOMEM : -EINVAL;
        *ret = ng_steal_ptr(&ctx->cfg);
        return 0;
}

int ng_config_load_string(const char *text, const char *name, ng_config_diag_fn diag,
                          void *userdata, struct ng_config **ret)
{
        assert(text && ret);
        _ng_cleanup_(load_done) struct load_ctx ctx = {0};
        int r;

        if (!text || !ret)
                return -EINVAL;
        r = load_begin(&ctx, diag, userdata, NULL);
        if (r < 0)
                return r;
        load_text(&ctx, text, name ? name : "<string>");
        return load_end(&ctx, ret);
}

/* One file into ctx: -ENOENT (no diagnostic: the caller decides), another
 * -errno of reading it, -EINVAL (reported), or 0 once its text was fed. */
static int load_file(struct load_ctx *ctx, const char *path)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        mode_t mode = 0;
        int r = ng_cfg_read_text(path, &text, &len, &mode);

        if (r == -EINVAL && mode) {
                if (ctx->diag)
                        ctx->diag(ctx->userdata, LOG_ERR, path, 0, ng_cfg_file_kind(mode));
                return r;
        }
        if (r < 0)
                return r;
        const char *nul = memchr(text, '\0', len);
        if (nul) {
                if (ctx->diag)
                        ctx->diag(ctx->userdata, LOG_ERR, path, ng_cfg_line_of(text, (size_t)(nul - text)),
                                  "file contains a NUL byte");
                return -EINVAL;
        }
        load_text(ctx, text, path);
        return 0;
}

/* A drop-in that cannot be read fails the load with its name: an instance
 * silently missing is what drop-ins must never cause. */
static int load_dropins(struct load_ctx *ctx, char **paths, size_t n)
{
        for (size_t i = 0; i < n && !ctx->oom; i++) {
                int r = load_file(ctx, paths[i]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && r != -EINVAL) {
                        char msg[256];
                        snprintf(msg, sizeof(msg), "is not readable: %s", strerror(-r));
                        if (ctx->diag)
                                ctx->diag(ctx->userdata, LOG_ERR, paths[i], 0, msg);
                }
                if (r < 0)
                        ctx->errors++;
        }
        return 0;
}

static void report_dir(const char *path, int r, ng_config_diag_fn diag, void *userdata)
{
        char dir[PATH_MAX], msg[256];

        if (!diag)
                return;
        snprintf(dir, sizeof(dir), "%s.d", path);
        snprintf(msg, sizeof(msg), "is not readable: %s", strerror(-r));
        diag(userdata, LOG_ERR, dir, 0, msg);
}

int ng_config_load_checked(const char *path, const struct ng_bitmap *host_nodes, ng_config_diag_fn diag,
                           void *userdata, struct ng_config **ret)
{
        _ng_cleanup_(load_done) struct load_ctx ctx = {0};
        char **dropins = NULL;
        size_t n = 0;
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = ng_config_dropins(path, &dropins, &n);
        if (r < 0) {
                if (r == -ENOMEM)
                        return r;
                report_dir(path, r, diag, userdata);
                return -EINVAL;
        }
        r = load_begin(&ctx, diag, userdata, host_nodes);
        if (r < 0) {
                ng_config_dropins_free(dropins, n);
                return r;
        }
        r = load_file(&ctx, path);
        if (r == -EINVAL)
                ctx.errors++;   /* reported by load_file */
        else if (r == -ENOENT && n > 0)
                r = 0;          /* drop-ins over the defaults */
        if (r >= 0 || r == -EINVAL)
                r = load_dropins(&ctx, dropins, n);
        ng_config_dropins_free(dropins, n);
        if (r < 0)
                return r;
        return load_end(&ctx, ret);
}

int ng_config_load(const char *path, ng_config_diag_fn diag, void *userdata, struct ng_config **ret)
{
        return ng_config_load_checked(path, NULL, diag, userdata, ret);
}

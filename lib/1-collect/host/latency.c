/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The measured matrices and their file (see ng-latency.h). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cleanup-json.h"
#include "ng-latency.h"
#include "path.h"

struct ng_latency *ng_latency_new(size_t n_cpu_nodes, size_t n_nodes)
{
        if (n_nodes == 0 || n_nodes > NG_LATENCY_MAX_NODE + 1 || n_cpu_nodes > n_nodes)
                return NULL;
        _ng_cleanup_(ng_latency_freep) struct ng_latency *m = calloc(1, sizeof(*m));
        if (!m)
                return NULL;
        size_t cells = n_cpu_nodes * n_nodes;
        m->nodes = calloc(n_nodes, sizeof(*m->nodes));
        m->cpu_nodes = calloc(n_cpu_nodes ? n_cpu_nodes : 1, sizeof(*m->cpu_nodes));
        m->latency_ns = calloc(cells ? cells : 1, sizeof(double));
        m->bandwidth_mbps = calloc(cells ? cells : 1, sizeof(double));
        m->pages_verified = calloc(n_nodes, sizeof(*m->pages_verified));
        m->latency_spread = calloc(cells ? cells : 1, sizeof(double));
        m->bandwidth_spread = calloc(cells ? cells : 1, sizeof(double));
        if (!m->nodes || !m->cpu_nodes || !m->latency_ns || !m->bandwidth_mbps || !m->pages_verified ||
            !m->latency_spread || !m->bandwidth_spread)
                return NULL;
        m->n_nodes = n_nodes;
        m->n_cpu_nodes = n_cpu_nodes;
        for (size_t i = 0; i < cells; i++)
                m->latency_ns[i] = m->bandwidth_mbps[i] = m->latency_spread[i] = m->bandwidth_spread[i] = NAN;
        return ng_steal_ptr(&m);
}

void ng_latency_free(struct ng_latency *m)
{
        if (!m)
                return;
        free(m->nodes);
        free(m->cpu_nodes);
        free(m->latency_ns);
        free(m->bandwidth_mbps);
        free(m->pages_verified);
        free(m->latency_spread);
        free(m->bandwidth_spread);
        free(m);
}

static int find(const int *v, size_t n, int id)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] == id)
                        return (int) i;
        return -1;
}

int ng_latency_col(const struct ng_latency *m, int node)
{
        return m ? find(m->nodes, m->n_nodes, node) : -1;
}

int ng_latency_row(const struct ng_latency *m, int cpu_node)
{
        return m ? find(m->cpu_nodes, m->n_cpu_nodes, cpu_node) : -1;
}

static double cell(const struct ng_latency *m, const double *v, int cpu_node, int mem_node)
{
        int r = ng_latency_row(m, cpu_node), c = ng_latency_col(m, mem_node);
        return r < 0 || c < 0 ? NAN : v[(size_t) r * m->n_nodes + (size_t) c];
}

double ng_latency_ns(const struct ng_latency *m, int cpu_node, int mem_node)
{
        return m ? cell(m, m->latency_ns, cpu_node, mem_node) : NAN;
}

double ng_latency_bandwidth_mbps(const struct ng_latency *m, int cpu_node, int mem_node)
{
        return m ? cell(m, m->bandwidth_mbps, cpu_node, mem_node) : NAN;
}

/* ---- parsing ---- */

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
        if (err && size) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, size, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

static bool is_number(struct json_object *o)
{
        return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

/* Node ids: distinct, ascending, 0..NG_LATENCY_MAX_NODE. */
static int parse_ids(struct json_object *arr, const char *key, int **ret, size_t *ret_n, char *err, size_t esz)
{
        if (!arr || !json_object_is_type(arr, json_type_array))
                return fail(err, esz, "\"%s\" is missing or not an array", key);
        size_t n = json_object_array_length(arr);
        if (n > NG_LATENCY_MAX_NODE + 1)
                return fail(err, esz, "\"%s\" has %zu entries, more than %d nodes", key, n, NG_LATENCY_MAX_NODE + 1);
        _cleanup_free_ int *v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(arr, i);
                int64_t id = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
                if (id < 0 || id > NG_LATENCY_MAX_NODE || (i > 0 && id <= v[i - 1]))
                        return fail(err, esz, "\"%s\" entry %zu is not a node id in ascending order", key, i);
                v[i] = (int) id;
        }
        *ret = ng_steal_ptr(&v);
        *ret_n = n;
        return 0;
}

static int parse_matrix(struct json_object *top, const char *key, double max, const struct ng_latency *m,
                        double *out, char *err, size_t esz)
{
        struct json_object *arr;
        if (!json_object_object_get_ex(top, key, &arr) || !json_object_is_type(arr, json_type_array))
                return fail(err, esz, "\"%s\" is missing or not an array", key);
        if (json_object_array_length(arr) != m->n_cpu_nodes)
                return fail(err, esz, "\"%s\" has %zu rows, expected %zu (one per CPU node)", key,
                            json_object_array_length(arr), m->n_cpu_nodes);
        for (size_t r = 0; r < m->n_cpu_nodes; r++) {
                struct json_object *row = json_object_array_get_idx(arr, r);
                if (!json_object_is_type(row, json_type_array) || json_object_array_length(row) != m->n_nodes)
                        return fail(err, esz, "\"%s\" row %zu is not an array of %zu cells", key, r, m->n_nodes);
                for (size_t c = 0; c < m->n_nodes; c++) {
                        struct json_object *e = json_object_array_get_idx(row, c);
                        double v = NAN;
                        if (e) {
                                v = is_number(e) ? json_object_get_double(e) : -1;
                                /* Three decimals are kept: smaller is not a measurement. */
                                if (!(v >= 0.001 && v <= max))
                                        return fail(err, esz, "\"%s\"[%zu][%zu] is not a number in [0.001, %g]",
                                                    key, r, c, max);
                        }
                        out[r * m->n_nodes + c] = v;
                }
        }
        return 0;
}

static int parse_verified(struct json_object *top, struct ng_latency *m, char *err, size_t esz)
{
        struct json_object *arr;
        if (!json_object_object_get_ex(top, "pages_verified", &arr))
                return 0;       /* optional */
        if (!json_object_is_type(arr, json_type_array) || json_object_array_length(arr) != m->n_nodes)
                return fail(err, esz, "\"pages_verified\" is not an array of %zu counts", m->n_nodes);
        for (size_t c = 0; c < m->n_nodes; c++) {
                struct json_object *e = json_object_array_get_idx(arr, c);
                int64_t v = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
                if (v < 0 || v > UINT_MAX)
                        return fail(err, esz, "\"pages_verified\"[%zu] is not a count", c);
                m->pages_verified[c] = (unsigned) v;
        }
        return 0;
}

static int parse_header(struct json_object *top, char *at, size_t at_size, char *err, size_t esz)
{
        struct json_object *o;
        if (!json_object_is_type(top, json_type_object))
                return fail(err, esz, "not a JSON object");
        if (!json_object_object_get_ex(top, "schema", &o) || !json_object_is_type(o, json_type_int))
                return fail(err, esz, "no \"schema\"");
        if (json_object_get_int64(o) != NG_LATENCY_SCHEMA)
                return fail(err, esz, "schema %" PRId64 " is not the supported %d", (int64_t) json_object_get_int64(o),
                            NG_LATENCY_SCHEMA);
        at[0] = '\0';
        if (json_object_object_get_ex(top, "measured_at", &o)) {
                if (!json_object_is_type(o, json_type_string) || (size_t) json_object_get_string_len(o) >= at_size)
                        return fail(err, esz, "\"measured_at\" is not a short string");
                snprintf(at, at_size, "%s", json_object_get_string(o));
        }
        return 0;
}

static int parse_object(struct json_object *top, struct ng_latency **ret, char *err, size_t esz)
{
        char at[32];
        int r = parse_header(top, at, sizeof(at), err, esz);
        if (r < 0)
                return r;
        _cleanup_free_ int *nodes = NULL;
        _cleanup_free_ int *cpu_nodes = NULL;
        size_t n = 0, n_cpu = 0;
        struct json_object *o = NULL;
        json_object_object_get_ex(top, "nodes", &o);
        r = parse_ids(o, "nodes", &nodes, &n, err, esz);
        if (r < 0)
                return r;
        o = NULL;
        json_object_object_get_ex(top, "cpu_nodes", &o);
        r = parse_ids(o, "cpu_nodes", &cpu_nodes, &n_cpu, err, esz);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_cpu; i++)
                if (find(nodes, n, cpu_nodes[i]) < 0)
                        return fail(err, esz, "CPU node %d is not among \"nodes\"", cpu_nodes[i]);
        if (n == 0)
                return fail(err, esz, "\"nodes\" is empty");
        _ng_cleanup_(ng_latency_freep) struct ng_latency *m = ng_latency_new(n_cpu, n);
        if (!m)
                return -ENOMEM;
        memcpy(m->nodes, nodes, n * sizeof(*nodes));
        memcpy(m->cpu_nodes, cpu_nodes, n_cpu * sizeof(*cpu_nodes));
        snprintf(m->measured_at, sizeof(m->measured_at), "%s", at);
        r = parse_matrix(top, "latency_ns", NG_LATENCY_MAX_NS, m, m->latency_ns, err, esz);
        if (r < 0)
                return r;
        r = parse_matrix(top, "bandwidth_mbps", NG_LATENCY_MAX_MBPS, m, m->bandwidth_mbps, err, esz);
        if (r < 0)
                return r;
        r = parse_verified(top, m, err, esz);
        /* Optional: files of 0.1.0 have no spreads. */
        static const char *const spreads[] = { "latency_spread", "bandwidth_spread" };
        double *const outs[] = { m->latency_spread, m->bandwidth_spread };
        for (size_t i = 0; i < 2 && r >= 0; i++)
                if (json_object_object_get_ex(top, spreads[i], NULL))
                        r = parse_matrix(top, spreads[i], NG_LATENCY_MAX_SPREAD, m, outs[i], err, esz);
        if (r < 0)
                return r;
        *ret = ng_steal_ptr(&m);
        return 0;
}

int ng_latency_parse(const char *buf, size_t len, struct ng_latency **ret, char *err, size_t err_size)
{
        if (len > INT_MAX)
                return fail(err, err_size, "too large");
        struct json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        _cleanup_json_ struct json_object *top = json_tokener_parse_ex(tok, buf, (int) len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        size_t used = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!top || jerr != json_tokener_success)
                return fail(err, err_size, "not JSON: %s", json_tokener_error_desc(jerr));
        while (used < len && strchr(" \t\r\n", buf[used]))
                used++;
        if (used < len)
                return fail(err, err_size, "text after the JSON object");
        return parse_object(top, ret, err, err_size);
}

/* ---- formatting and files ---- */

static struct json_object *ids_json(const int *v, size_t n)
{
        struct json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_object_new_int(v[i]));
        return a;
}

static struct json_object *cell_json(double v)
{
        if (isnan(v))
                return NULL;
        /* Three decimals are more than any measurement holds; printed as
         * such, not as the nearest binary fraction. */
        char text[48];
        snprintf(text, sizeof(text), "%.3f", v);
        for (size_t n = strlen(text); n > 2 && text[n - 1] == '0' && text[n - 2] != '.'; n--)
                text[n - 1] = '\0';
        return json_object_new_double_s(v, text);
}

static struct json_object *matrix_json(const struct ng_latency *m, const double *v)
{
        struct json_object *a = json_object_new_array();
        for (size_t r = 0; a && r < m->n_cpu_nodes; r++) {
                struct json_object *row = json_object_new_array();
                for (size_t c = 0; row && c < m->n_nodes; c++)
                        json_object_array_add(row, cell_json(v[r * m->n_nodes + c]));
                json_object_array_add(a, row);
        }
        return a;
}

struct json_object *ng_latency_json(const struct ng_latency *m)
{
        struct json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        struct json_object *verified = json_object_new_array();
        for (size_t c = 0; verified && c < m->n_nodes; c++)
                json_object_array_add(verified, json_object_new_int64(m->pages_verified[c]));
        json_object_object_add(o, "schema", json_object_new_int(NG_LATENCY_SCHEMA));
        json_object_object_add(o, "measured_at", json_object_new_string(m->measured_at));
        json_object_object_add(o, "nodes", ids_json(m->nodes, m->n_nodes));
        json_object_object_add(o, "cpu_nodes", ids_json(m->cpu_nodes, m->n_cpu_nodes));
        json_object_object_add(o, "latency_ns", matrix_json(m, m->latency_ns));
        json_object_object_add(o, "bandwidth_mbps", matrix_json(m, m->bandwidth_mbps));
        json_object_object_add(o, "pages_verified", verified);
        /* Known only right after a probe; a file read back has none. */
        bool spread = false;
        for (size_t i = 0; i < m->n_cpu_nodes * m->n_nodes; i++)
                spread |= !isnan(m->latency_spread[i]) || !isnan(m->bandwidth_spread[i]);
        if (spread) {
                json_object_object_add(o, "latency_spread", matrix_json(m, m->latency_spread));
                json_object_object_add(o, "bandwidth_spread", matrix_json(m, m->bandwidth_spread));
        }
        return o;
}

int ng_latency_format(const struct ng_latency *m, char **ret)
{
        _cleanup_json_ struct json_object *o = ng_latency_json(m);
        if (!o)
                return -ENOMEM;
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        char *out = s ? malloc(strlen(s) + 2) : NULL;
        if (!out)
                return -ENOMEM;
        sprintf(out, "%s\n", s);
        *ret = out;
        return 0;
}

int ng_latency_read(const struct ng_path *p, struct ng_latency **ret, char *err, size_t err_size)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = ng_path_read(p, &buf, &len, "%s", NG_LATENCY_FILE);
        if (r < 0)
                return r;
        return ng_latency_parse(buf, len, ret, err, err_size);
}

static int write_all(int fd, const char *s)
{
        size_t len = strlen(s);
        while (len > 0) {
                ssize_t k = write(fd, s, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                s += k;
                len -= (size_t) k;
        }
        return 0;
}

/* The directory the matrix is saved in, opened inside root (made when
 * missing), the file's name in it and the temporary name beside it: the
 * descriptor or -errno. */
static int open_latency_dir(const char *root, char name[NAME_MAX + 1], char tmp[NAME_MAX + 8])
{
        _ng_cleanup_(ng_path_freep) struct ng_path *p = NULL;
        int r = ng_path_new(root, &p);
        if (r < 0)
                return r;
        int dir = ng_path_open_parent(p, true, name, NAME_MAX + 1, "%s", NG_LATENCY_FILE);
        if (dir >= 0)
                snprintf(tmp, NAME_MAX + 8, "%s.new", name);
        return dir;
}

int ng_latency_check_writable(const char *root)
{
        char name[NAME_MAX + 1], tmp[NAME_MAX + 8];
        _cleanup_close_ int dir = open_latency_dir(root, name, tmp);
        if (dir < 0)
                return dir;
        if (unlinkat(dir, tmp, 0) < 0 && errno != ENOENT)
                return -errno;
        int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        close(fd);
        return unlinkat(dir, tmp, 0) < 0 ? -errno : 0;
}

int ng_latency_write(const char *root, const struct ng_latency *m)
{
        /* Under a tree, var/lib may not exist yet; made inside it, and
         * nothing the tree holds leads the write out of it (ng-path.h). */
        char name[NAME_MAX + 1], tmp[NAME_MAX + 8];
        _cleanup_close_ int dir = open_latency_dir(root, name, tmp);
        if (dir < 0)
                return dir;
        _cleanup_free_ char *text = NULL;
        int r;
        if ((r = ng_latency_format(m, &text)) < 0)
                return r;
        if (unlinkat(dir, tmp, 0) < 0 && errno != ENOENT)
                return -errno;
        int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        r = write_all(fd, text);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && renameat(dir, tmp, dir, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir, tmp, 0);
        return r;
}

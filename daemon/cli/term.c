/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What numaguardctl prints fits the terminal it lands on.
 *
 * libnumaguard renders one canonical text (UTF-8 block bars; the golden
 * outputs and numaguardd's status are that text). On its way to stdout the
 * text passes through a filter (fopencookie(3)) that, unless stdout is a
 * terminal with a UTF-8 locale, turns each bar cell into one ASCII
 * character, and, on a terminal with colour on, colours the severity that
 * starts a finding or alert line; on a terminal, a line wider than it
 * wraps at a blank, its continuation indented like the line (and past an
 * advice's "-> "). Piped, lines stay whole: what scripts and the golden
 * outputs read does not depend on a window's width. Progress for long work goes to stderr,
 * only when stderr is a terminal, from a thread that speaks after a second
 * ($NUMAGUARD_PROGRESS_DELAY_MS) and then four times a second.
 */

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "term.h"
#include "util.h"

int ctl_color_parse(const char *s, enum ctl_color *ret)
{
        if (strcmp(s, "auto") == 0)
                *ret = CTL_COLOR_AUTO;
        else if (strcmp(s, "always") == 0)
                *ret = CTL_COLOR_ALWAYS;
        else if (strcmp(s, "never") == 0)
                *ret = CTL_COLOR_NEVER;
        else
                return -EINVAL;
        return 0;
}

static bool locale_utf8(void)
{
        const char *cs = nl_langinfo(CODESET);
        return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

/* The terminal's columns, else $COLUMNS, else 80; at least 40, so that a
 * continuation's indent always leaves room for words. */
static unsigned term_width(void)
{
        struct winsize ws;
        unsigned long w = 0;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
                w = ws.ws_col;
        else if (getenv("COLUMNS"))
                w = strtoul(getenv("COLUMNS"), NULL, 10);
        if (w == 0)
                w = 80;
        return w < 40 ? 40 : w > 4096 ? 4096 : (unsigned) w;
}

void ctl_term_init(struct ctl_term *t, enum ctl_color color)
{
        setlocale(LC_CTYPE, "");
        bool tty = isatty(STDOUT_FILENO) == 1;
        const char *term = getenv("TERM");
        bool dumb = !term || !*term || strcmp(term, "dumb") == 0;
        const char *no_color = getenv("NO_COLOR");
        *t = (struct ctl_term) {
                .utf8 = tty && !dumb && locale_utf8(),
                .progress = isatty(STDERR_FILENO) == 1 && !dumb,
                .width = tty ? term_width() : 0,
        };
        switch (color) {
        case CTL_COLOR_ALWAYS: t->color = true; break;
        case CTL_COLOR_NEVER: t->color = false; break;
        case CTL_COLOR_AUTO: t->color = tty && !dumb && !(no_color && *no_color); break;
        }
        /* LC_CTYPE only decided the bars; messages and numbers stay "C". */
        setlocale(LC_CTYPE, "C");
}

/* ------------------------------------------------------------ the filter */

struct filter {
        FILE *out;
        const struct ctl_term *t;
        char *line;             /* width set: the line so far, wrapped at its end */
        size_t n_line, cap_line;
        bool line_start;
        char held[64];          /* the start of a line, until its first word is known */
        size_t n_held;
        unsigned char utf[2];   /* a bar glyph cut by a buffer boundary */
        size_t n_utf;
};

static const struct {
        const char *word;       /* with its trailing space */
        const char *sgr;
} severities[] = {
        { "critical ", "\033[1;31m" },
        { "warning ", "\033[33m" },
        { "info ", "\033[36m" },
};

/* Columns of s[0..n): UTF-8 sequences count one, escape sequences none. */
static size_t columns(const char *s, size_t n)
{
        size_t cols = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c == 0x1b && i + 1 < n && s[i + 1] == '[') {
                        for (i += 2; i < n && !((unsigned char) s[i] >= 0x40 && (unsigned char) s[i] <= 0x7e); i++)
                                ;
                        continue;
                }
                cols += (c & 0xc0) != 0x80;
        }
        return cols;
}

static void spaces(FILE *out, size_t n)
{
        while (n--)
                fputc(' ', out);
}

/* One line (without its newline) wider than the terminal, broken at blanks;
 * a word wider than what is left stays whole. */
static void wrap_line(struct filter *f, const char *s, size_t n)
{
        size_t width = f->t->width, lead = strspn(s, " ");
        if (lead > n)
                lead = n;
        size_t indent = lead + (n - lead >= 3 && memcmp(s + lead, "-> ", 3) == 0 ? 3 : 0);
        if (indent > width / 2)
                indent = width / 2;
        fwrite(s, 1, lead, f->out);
        size_t col = lead, i = lead;
        bool first = true;
        while (i < n) {
                size_t gap = i;
                while (i < n && s[i] == ' ')
                        i++;
                size_t start = i;
                while (i < n && s[i] != ' ')
                        i++;
                size_t w = columns(s + start, i - start), g = start - gap;
                if (!first && col + g + w > width) {
                        fputc('\n', f->out);
                        spaces(f->out, indent);
                        col = indent;
                } else {
                        fwrite(s + gap, 1, g, f->out);
                        col += g;
                }
                fwrite(s + start, 1, i - start, f->out);
                col += w;
                first = false;
        }
        fputc('\n', f->out);
}

static void end_line(struct filter *f)
{
        if (columns(f->line, f->n_line) <= f->t->width) {
                fwrite(f->line, 1, f->n_line, f->out);
                fputc('\n', f->out);
        } else
                wrap_line(f, f->line, f->n_line);
        f->n_line = 0;
}

/* Every byte the filter lets out: straight through, or into the line. */
static void out(struct filter *f, const char *s, size_t n)
{
        if (!f->t->width) {
                fwrite(s, 1, n, f->out);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\n') {
                        end_line(f);
                        continue;
                }
                if (ng_grow(&f->line, &f->cap_line, f->n_line, 1, 0) < 0) {
                        /* no memory for the line: out as it is */
                        fwrite(f->line, 1, f->n_line, f->out);
                        f->n_line = 0;
                        fputc(s[i], f->out);
                        continue;
                }
                f->line[f->n_line++] = s[i];
        }
}

/* The held start of a line: coloured when it begins with a severity. */
static void flush_held(struct filter *f)
{
        size_t sp = 0;
        while (sp < f->n_held && f->held[sp] == ' ')
                sp++;
        for (size_t i = 0; f->t->color && i < ELEMENTSOF(severities); i++) {
                size_t n = strlen(severities[i].word);
                if (f->n_held - sp >= n && memcmp(f->held + sp, severities[i].word, n) == 0) {
                        char buf[sizeof(f->held) + 32];
                        int k = snprintf(buf, sizeof(buf), "%.*s%s%.*s\033[0m%.*s", (int) sp, f->held,
                                         severities[i].sgr, (int) n - 1, f->held + sp,
                                         (int) (f->n_held - sp - n + 1), f->held + sp + n - 1);
                        out(f, buf, k > 0 && (size_t) k < sizeof(buf) ? (size_t) k : 0);
                        f->n_held = 0;
                        return;
                }
        }
        out(f, f->held, f->n_held);
        f->n_held = 0;
}

static void put(struct filter *f, char c)
{
        if (f->line_start) {
                f->held[f->n_held++] = c;
                bool word_done = c == '\n' || f->n_held == sizeof(f->held) ||
                                 (c == ' ' && f->n_held > 1 && f->held[f->n_held - 2] != ' ');
                if (word_done) {
                        f->line_start = false;
                        flush_held(f);
                }
                if (c == '\n')
                        f->line_start = true;
                return;
        }
        out(f, &c, 1);
        if (c == '\n')
                f->line_start = true;
}

/* U+2588..U+258F (full block to one eighth): E2 96 88..8F. */
static char ascii_cell(unsigned char last)
{
        return last == 0x88 ? '#' : last <= 0x8c ? '+' : '-';
}

static ssize_t filter_write(void *cookie, const char *buf, size_t size)
{
        struct filter *f = cookie;
        for (size_t i = 0; i < size; i++) {
                unsigned char c = (unsigned char) buf[i];
                if (!f->t->utf8 && (f->n_utf > 0 || c == 0xe2)) {
                        if (f->n_utf < 2) {
                                f->utf[f->n_utf++] = c;
                                bool prefix = f->utf[0] == 0xe2 && (f->n_utf == 1 || f->utf[1] == 0x96);
                                if (prefix)
                                        continue;
                        } else if (c >= 0x88 && c <= 0x8f) {
                                f->n_utf = 0;
                                put(f, ascii_cell(c));
                                continue;
                        }
                        /* not a bar: the bytes as they were */
                        size_t n = f->n_utf;
                        f->n_utf = 0;
                        for (size_t k = 0; k < n; k++)
                                put(f, (char) f->utf[k]);
                        if (n == 2 && f->utf[1] == 0x96)
                                put(f, (char) c);
                        continue;
                }
                put(f, (char) c);
        }
        return ferror(f->out) ? -1 : (ssize_t) size;
}

static int filter_close(void *cookie)
{
        struct filter *f = cookie;
        for (size_t k = 0; k < f->n_utf; k++)
                put(f, (char) f->utf[k]);
        flush_held(f);
        if (f->n_line)
                fwrite(f->line, 1, f->n_line, f->out);  /* a last line without newline */
        free(f->line);
        int r = fflush(f->out) == 0 && !ferror(f->out) ? 0 : EOF;
        free(f);
        return r;
}

FILE *ctl_term_stdout(const struct ctl_term *t)
{
        if (t->utf8 && !t->color && !t->width)
                return NULL;
        struct filter *f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        *f = (struct filter) { .out = stdout, .t = t, .line_start = true };
        FILE *w = fopencookie(f, "w", (cookie_io_functions_t) { .write = filter_write, .close = filter_close });
        if (!w)
                free(f);
        return w;
}

/* ------------------------------------------------------------ progress */

struct ctl_progress {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stop, shown;
        const char *what;
        uint64_t delay_ms;
        uint64_t start_usec;    /* CLOCK_MONOTONIC */
        atomic_ulong files;
};

static void show(struct ctl_progress *p)
{
        unsigned long n = atomic_load(&p->files);
        uint64_t secs = (now_usec(CLOCK_MONOTONIC) - p->start_usec) / USEC_PER_SEC;
        fprintf(stderr, "\rnumaguardctl: %s... %" PRIu64 " s", p->what, secs);
        if (n)
                fprintf(stderr, ", %lu files read", n);
        fputs("\033[K", stderr);
        p->shown = true;
}

static void *progress_thread(void *userdata)
{
        struct ctl_progress *p = userdata;
        pthread_mutex_lock(&p->lock);
        for (unsigned tick = p->shown ? 1 : 0; !p->stop; tick++) {
                uint64_t at_ms = p->delay_ms + (uint64_t) tick * 250;
                struct timespec until = ng_timespec_usec(p->start_usec + at_ms * USEC_PER_MSEC);
                while (!p->stop && pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
                        ;
                if (p->stop)
                        break;
                show(p);
        }
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

struct ctl_progress *ctl_progress_start(const struct ctl_term *t, const char *what)
{
        if (!t || !t->progress)
                return NULL;
        struct ctl_progress *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->what = what;
        p->delay_ms = 1000;
        p->start_usec = now_usec(CLOCK_MONOTONIC);
        const char *d = getenv("NUMAGUARD_PROGRESS_DELAY_MS");
        if (d && *d) {
                char *end;
                unsigned long v = strtoul(d, &end, 10);
                if (!*end && v <= 3600000)
                        p->delay_ms = v;
        }
        pthread_mutex_init(&p->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cond, &ca);
        pthread_condattr_destroy(&ca);
        if (p->delay_ms == 0)   /* at once: before the work, not racing it */
                show(p);
        if (pthread_create(&p->thread, NULL, progress_thread, p) != 0) {
                pthread_cond_destroy(&p->cond);
                pthread_mutex_destroy(&p->lock);
                free(p);
                return NULL;
        }
        return p;
}

void ctl_progress_file(struct ctl_progress *p)
{
        if (p)
                atomic_fetch_add(&p->files, 1);
}

void ctl_progress_stop(struct ctl_progress *p)
{
        if (!p)
                return;
        pthread_mutex_lock(&p->lock);
        p->stop = true;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
        if (p->shown) {
                /* The final count is drawn once before the line is cleared:
                 * work shorter than a tick would otherwise never show it. */
                show(p);
                fputs("\r\033[K", stderr);
        }
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

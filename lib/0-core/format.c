/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes and bars as numaguard prints them; shared by analyze (finding
 * messages), report and act (plans). */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ng-format.h"
#include "util.h"

void ng_format_kib(uint64_t kib, char *buf, size_t size)
{
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
        size_t u = 0;
        uint64_t whole = kib, rem = 0;
        while (whole >= 1024 && u + 1 < ELEMENTSOF(units)) {
                rem = whole % 1024;
                whole /= 1024;
                u++;
        }
        if (whole < 10 && u > 0 && rem * 10 / 1024 > 0)
                snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s", whole, rem * 10 / 1024, units[u]);
        else
                snprintf(buf, size, "%" PRIu64 " %s", whole, units[u]);
}

void ng_format_bytes_or(uint64_t bytes, bool unknown, const char *unknown_text, char *buf, size_t size)
{
        if (unknown)
                snprintf(buf, size, "%s", unknown_text);
        else
                ng_format_kib(bytes / 1024, buf, size);
}

void ng_format_page_size(uint64_t page_kib, char *buf, size_t size)
{
        if (page_kib >= 1048576 && page_kib % 1048576 == 0)
                snprintf(buf, size, "%" PRIu64 "G", page_kib / 1048576);
        else if (page_kib >= 1024 && page_kib % 1024 == 0)
                snprintf(buf, size, "%" PRIu64 "M", page_kib / 1024);
        else
                snprintf(buf, size, "%" PRIu64 "K", page_kib);
}

void ng_format_bar(uint64_t part, uint64_t whole, char *buf, size_t size)
{
        unsigned eighths = whole ? (unsigned) ((part * NG_FORMAT_BAR_CELLS * 8 + whole / 2) / whole) : 0;
        static const char *const partial[] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
        size_t o = 0;
        buf[0] = '\0';
        for (unsigned i = 0; i < NG_FORMAT_BAR_CELLS && o + 4 < size; i++) {
                const char *cell = eighths >= 8 ? "█" : partial[eighths];
                if (!*cell)
                        cell = " ";
                size_t l = strlen(cell);
                memcpy(buf + o, cell, l);
                o += l;
                eighths = eighths >= 8 ? eighths - 8 : 0;
        }
        buf[o] = '\0';
}

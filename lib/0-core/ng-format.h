/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Human-readable sizes and bars, used by every stage that writes text. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "2M", "1G", "64K" from a page size in KiB (size >= 32). */
void ng_format_page_size(uint64_t page_kib, char *buf, size_t size);
/* "1.5 GiB", "962 MiB", "512 KiB" from KiB. */
void ng_format_kib(uint64_t kib, char *buf, size_t size);
/* ng_format_kib() of bytes / 1024, or UNKNOWN_TEXT ("unknown", "size
 * unknown") when the figure is not known: never a 0 that was not read. */
void ng_format_bytes_or(uint64_t bytes, bool unknown, const char *unknown_text, char *buf, size_t size);
/* Width of a placement bar in cells; a cell is at most 4 bytes of UTF-8. */
#define NG_FORMAT_BAR_CELLS 20

/* A bar of block characters: part of whole, NG_FORMAT_BAR_CELLS wide (UTF-8). */
void ng_format_bar(uint64_t part, uint64_t whole, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

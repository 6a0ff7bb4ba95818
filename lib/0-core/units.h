/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Unit arithmetic on numbers read from the kernel (or a tree that claims to
 * be one): every product and sum is overflow-checked, and a value beyond
 * what any machine can hold is not a value.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x86-64 with 5-level paging addresses 4 PiB of physical memory (52 bits);
 * no Linux host holds more. Anything larger came from a broken file. */
#define NG_PLAUSIBLE_MAX_BYTES (UINT64_C(1) << 52)
#define NG_PLAUSIBLE_MAX_KIB (NG_PLAUSIBLE_MAX_BYTES >> 10)

/* a * b into *ret; false (and *ret untouched) on overflow. */
static inline bool ng_mul_u64(uint64_t a, uint64_t b, uint64_t *ret)
{
        uint64_t v;
        if (__builtin_mul_overflow(a, b, &v))
                return false;
        *ret = v;
        return true;
}

/* a + b into *ret; false (and *ret untouched) on overflow. */
static inline bool ng_add_u64(uint64_t a, uint64_t b, uint64_t *ret)
{
        uint64_t v;
        if (__builtin_add_overflow(a, b, &v))
                return false;
        *ret = v;
        return true;
}

/* KiB to bytes; false on overflow. */
static inline bool ng_kib_to_bytes(uint64_t kib, uint64_t *ret)
{
        return ng_mul_u64(kib, 1024, ret);
}

/* count units of unit_kib KiB each, in bytes, within NG_PLAUSIBLE_MAX_BYTES;
 * false when the product overflows or is implausible. */
static inline bool ng_units_bytes(uint64_t count, uint64_t unit_kib, uint64_t *ret)
{
        uint64_t kib, b;
        if (!ng_mul_u64(count, unit_kib, &kib) || !ng_kib_to_bytes(kib, &b) || b > NG_PLAUSIBLE_MAX_BYTES)
                return false;
        *ret = b;
        return true;
}

/* Saturating forms for values already validated at collection (they cannot
 * overflow; saturation keeps a later mistake from wrapping to a small
 * number, which would read as "nothing there"). */
static inline uint64_t ng_kib_bytes_sat(uint64_t kib)
{
        uint64_t b;
        return ng_kib_to_bytes(kib, &b) ? b : UINT64_MAX;
}

static inline uint64_t ng_mul_sat(uint64_t a, uint64_t b)
{
        uint64_t v;
        return ng_mul_u64(a, b, &v) ? v : UINT64_MAX;
}

static inline uint64_t ng_add_sat(uint64_t a, uint64_t b)
{
        uint64_t v;
        return ng_add_u64(a, b, &v) ? v : UINT64_MAX;
}

#ifdef __cplusplus
}
#endif

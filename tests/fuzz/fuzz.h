/*
 * fuzz.h: what every libFuzzer harness in tests/fuzz shares. A harness is
 * tests/fuzz/fuzz_<module>_<what>.c defining LLVMFuzzerTestOneInput; it
 * links cu_<module>. Under `make fuzz` (build-fuzz, clang) libFuzzer
 * drives it; in the plain and sanitizer builds replay.c's main runs it
 * over its committed corpus (tests/fuzz/corpus/<harness>/), so every input
 * that once crashed stays a test (`make test`, label fuzz).
 */
#ifndef CUEUE_TESTS_FUZZ_H
#define CUEUE_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (caller frees). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
    char *s = xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif

/*
 * fuzz_util_duration: durations as flags and scenario files give them
 * ("1h30m", "1.5s", "300"): cu_duration_parse_ns and _ms. A parse either
 * succeeds or names its rule; ms and ns must agree (ms = ns rounded to the
 * nearest ms, halves away from zero).
 */
#include <stdlib.h>

#include "fuzz.h"
#include "util/duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    int64_t ns = 0, ms = 0;
    const char *why = NULL, *why2 = NULL;
    int a = cu_duration_parse_ns(s, &ns, &why);
    int b = cu_duration_parse_ms(s, &ms, &why2);
    if ((a != 0 && !why) || (b != 0 && !why2))
        abort(); /* an error always names its rule */
    if (a == 0 && b == 0) {
        int64_t want = ns / 1000000 + (ns % 1000000 >= 500000) - (ns % 1000000 <= -500000);
        if (ms != want)
            abort();
    }
    xfree(s);
    return 0;
}

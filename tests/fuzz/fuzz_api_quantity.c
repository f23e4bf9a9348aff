/*
 * fuzz_api_quantity: resource quantities ("1500m", "4Gi", "1e3") for cpu,
 * memory and an extended resource; a value that parses must format to a
 * text that parses back to the same value (api_quantity_format's promise).
 */
#include <stdlib.h>

#include "api/quantity.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    static const char *const resources[] = {"cpu", "memory", "nvidia.com/gpu"};
    for (int i = 0; i < 3; i++) {
        int64_t v = 0, back = 0;
        char err[256];
        if (api_quantity_parse(s, resources[i], &v, err, sizeof(err)) != 0)
            continue;
        char *text = api_quantity_format(v, resources[i]);
        if (api_quantity_parse(text, resources[i], &back, err, sizeof(err)) != 0 || back != v)
            abort(); /* the canonical text must read back as the value */
        xfree(text);
    }
    xfree(s);
    return 0;
}

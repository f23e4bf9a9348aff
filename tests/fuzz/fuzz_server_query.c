/*
 * fuzz_server_query: the query parameters of a list or watch that
 * strangers control: labelSelector (api_label_selector_parse), fieldSelector
 * (srv_fieldsel_parse, then matching an object) and resourceVersion
 * (srv_rv_parse). The input is split at its first NUL bytes into the three.
 */
#include <stdlib.h>

#include "api/selector.h"
#include "fuzz.h"
#include "server/srv-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    const char *end = s + size; /* the NUL fuzz_str added */
    const char *label = s;
    const char *field = label + strlen(label) < end ? label + strlen(label) + 1 : end;
    const char *rv = field + strlen(field) < end ? field + strlen(field) + 1 : end;
    struct api_label_selector sel;
    struct diag d;
    diag_init(&d);
    if (api_label_selector_parse(label, &sel, &d) == 0) {
        json_t *lm = json_pack("{s:s, s:s}", "app", "x", "tier", "3");
        struct api_labels labels;
        api_labels_from_json(lm, &labels);
        api_label_selector_matches(&sel, &labels);
        api_labels_release(&labels);
        json_decref(lm);
    }
    api_label_selector_release(&sel);
    diag_release(&d);
    struct srv_fieldsel fs;
    char err[256];
    if (srv_fieldsel_parse(field, &fs, err, sizeof(err)) == 0) {
        json_t *obj = json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", "a",
                                "namespace", "default", "status", "phase", "Running");
        srv_fieldsel_matches(&fs, obj);
        json_decref(obj);
        srv_fieldsel_release(&fs);
    }
    uint64_t v;
    if (srv_rv_parse(rv, &v) == 0 && rv[0] == '0' && rv[1] == '\0' && v != 0)
        abort();
    xfree(s);
    return 0;
}

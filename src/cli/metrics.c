/*
 * metrics: the per-worker metrics a job keeps in its annotation
 * cueue.dev/metrics (a JSON object {pod-name: {metric: value}}, the last
 * dict each worker reported, like Ray Train's train.report) laid out as a
 * table: one row per pod, one column per metric name. Pure.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define CLI_METRICS_ANNOTATION "cueue.dev/metrics"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted keys of obj (borrowed strings) in a new array of n. */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
    const char *k;
    json_t *v;
    size_t i = 0;
    const char **keys = xcalloc(json_object_size(obj) + 1, sizeof(*keys));
    json_object_foreach((json_t *)obj, k, v)
        keys[i++] = k;
    qsort(keys, i, sizeof(*keys), cmp_str);
    *n = i;
    return keys;
}

static char *metric_text(const json_t *v)
{
    if (!v)
        return xstrdup("");
    if (json_is_real(v))
        return xasprintf("%.6g", json_real_value(v));
    if (json_is_string(v))
        return xstrdup(json_string_value(v));
    return jx_dumps(v);
}

int cli__metrics_table(const json_t *obj, struct cli_table *t)
{
    const char *text = JX_STR(obj, "metadata", "annotations", CLI_METRICS_ANNOTATION);
    json_error_t je;
    json_t *m = text ? json_loads(text, 0, &je) : NULL;
    if (!json_is_object(m) || json_object_size(m) == 0) {
        json_decref(m);
        return -1;
    }
    json_t *names = json_object(); /* union of metric names */
    const char *pod;
    json_t *dict;
    json_object_foreach(m, pod, dict) {
        const char *k;
        json_t *v;
        json_object_foreach(dict, k, v)
            json_object_set_new(names, k, json_true());
    }
    size_t npods, nnames;
    const char **pods = sorted_keys(m, &npods);
    const char **cols = sorted_keys(names, &nnames);
    const char **cells = xcalloc(nnames + 1, sizeof(*cells));
    cli__table_init(t, nnames + 1);
    cells[0] = "Pod";
    for (size_t j = 0; j < nnames; j++)
        cells[j + 1] = cols[j];
    cli__table_row(t, cells);
    for (size_t i = 0; i < npods; i++) {
        json_t *d = json_object_get(m, pods[i]);
        char **texts = xcalloc(nnames + 1, sizeof(*texts));
        texts[0] = xstrdup(pods[i]);
        for (size_t j = 0; j < nnames; j++)
            texts[j + 1] = metric_text(json_is_object(d) ? json_object_get(d, cols[j]) : NULL);
        cli__table_row(t, (const char *const *)texts);
        for (size_t j = 0; j <= nnames; j++)
            xfree(texts[j]);
        xfree(texts);
    }
    xfree(cells);
    xfree(pods);
    xfree(cols);
    json_decref(names);
    json_decref(m);
    return 0;
}

/*
 * finalizers: why an object that was deleted is still there (pure). The
 * server marks it with metadata.deletionTimestamp and keeps it until
 * every finalizer has been removed; `cueue delete` names the finalizers
 * (and, where the CLI can know them cheaply, the objects still using it)
 * instead of only "timed out waiting for the condition".
 */
#include <string.h>

#include "api/object.h"
#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

char *cli__deletion_holdup(const struct api_kind *k, const json_t *obj, const char *users)
{
    const json_t *fins = JX_GET(obj, "metadata", "finalizers");
    if (!JX_STR(obj, "metadata", "deletionTimestamp") || !json_array_size(fins))
        return NULL;
    struct sbuf sb;
    size_t i;
    json_t *f;
    sbuf_init(&sb, 0);
    sbuf_addf(&sb, "%s \"%s\" is being deleted: waiting for finalizer%s ",
              cli__kind_prefix(k),
              jx_or_empty(JX_STR(obj, "metadata", "name")), json_array_size(fins) > 1 ? "s" : "");
    json_array_foreach(fins, i, f)
        sbuf_addf(&sb, "%s%s", i ? ", " : "", jx_or_empty(json_string_value(f)));
    if (users && *users)
        sbuf_addf(&sb, " (%s)", users);
    return cli__sbuf_done(&sb);
}

char *cli__in_use_by(const json_t *cqs, const struct api_kind *k, const char *name)
{
    struct sbuf sb;
    size_t n = 0, i;
    json_t *cq;
    sbuf_init(&sb, 0);
    json_array_foreach(cqs, i, cq) {
        bool uses = k->id == KIND_ADMISSIONCHECK ? api_cluster_queue_uses_check(cq, name)
                                                 : api_cluster_queue_uses_flavor(cq, name);
        if (uses)
            sbuf_addf(&sb, "%s%s", n++ ? ", " : "", jx_or_empty(JX_STR(cq, "metadata", "name")));
    }
    if (n == 0) {
        sbuf_release(&sb);
        return NULL;
    }
    char *names = cli__sbuf_done(&sb);
    char *text = xasprintf("still used by ClusterQueue%s %s", n > 1 ? "s" : "", names);
    xfree(names);
    return text;
}

/*
 * finalizers: why an object that was deleted is still there (pure). The
 * server marks it with metadata.deletionTimestamp and keeps it until
 * every finalizer has been removed; `cueue delete` names the finalizers
 * (and, where the CLI can know them cheaply, the objects still using it)
 * instead of only "timed out waiting for the condition".
 */
#include <string.h>

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

char *cli__flavor_users(const json_t *cqs, const char *flavor)
{
    struct sbuf sb;
    size_t n = 0, i, g, j;
    json_t *cq, *grp, *fl;
    sbuf_init(&sb, 0);
    json_array_foreach(cqs, i, cq) {
        bool uses = false;
        json_array_foreach(JX_GET(cq, "spec", "resourceGroups"), g, grp)
            json_array_foreach(JX_GET(grp, "flavors"), j, fl)
                uses |= !strcmp(jx_or_empty(JX_STR(fl, "name")), flavor);
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

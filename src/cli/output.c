/*
 * output: the -o formats that print whole objects (yaml, json, name,
 * jsonpath). Tables (the default and wide) come from the server and are
 * printed by cmd_get.c. Lists are printed as kubectl prints them: a
 * {"apiVersion":"v1","kind":"List","items":[...]} object.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

int cli__outfmt_parse(const char *s, struct cli_outfmt *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!s || !*s) {
        out->kind = CLI_OUT_TABLE;
    } else if (!strcmp(s, "yaml")) {
        out->kind = CLI_OUT_YAML;
    } else if (!strcmp(s, "json")) {
        out->kind = CLI_OUT_JSON;
    } else if (!strcmp(s, "wide")) {
        out->kind = CLI_OUT_WIDE;
    } else if (!strcmp(s, "name")) {
        out->kind = CLI_OUT_NAME;
    } else if (!strcmp(s, "jsonpath") || !strncmp(s, "jsonpath=", 9)) {
        const char *t = s[8] ? s + 9 : "";
        size_t n = strlen(t);
        char *tmpl = (n >= 2 && (t[0] == '\'' || t[0] == '"') && t[n - 1] == t[0])
                         ? xstrndup(t + 1, n - 2)
                         : xstrdup(t);
        char perr[256] = "";
        if (!*tmpl) { /* kubectl's words for -o jsonpath= */
            xfree(tmpl);
            snprintf(err, errlen, "template format specified but no template given");
            return -1;
        }
        out->jp = cli__jsonpath_parse(tmpl, perr, sizeof(perr));
        xfree(tmpl);
        if (!out->jp) {
            snprintf(err, errlen, "error parsing jsonpath %s: %s", t, perr);
            return -1;
        }
        out->kind = CLI_OUT_JSONPATH;
    } else {
        snprintf(err, errlen,
                 "unable to match a printer suitable for the output format \"%s\", allowed "
                 "formats are: json,jsonpath,name,wide,yaml",
                 s);
        return -1;
    }
    return 0;
}

void cli__outfmt_release(struct cli_outfmt *f)
{
    cli__jsonpath_free(f->jp);
    f->jp = NULL;
}

static void print_name(struct cli_ctx *c, const struct api_kind *k, const json_t *obj)
{
    const struct api_kind *ok =
        api_kind_by_gvk(JX_STR(obj, "apiVersion"), JX_STR(obj, "kind"));
    if (!ok)
        ok = k;
    const char *name = jx_or_empty(JX_STR(obj, "metadata", "name"));
    if (ok)
        fprintf(c->out, "%s/%s\n", cli__kind_prefix(ok), name);
    else
        fprintf(c->out, "%s\n", name);
}

void cli__print_object(struct cli_ctx *c, const struct cli_outfmt *f, const struct api_kind *k,
                       const json_t *obj)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    switch (f->kind) {
    case CLI_OUT_YAML:
        cli__yaml_append(&sb, obj);
        break;
    case CLI_OUT_JSON: {
        char *t = json_dumps(obj, JSON_INDENT(4) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        sbuf_adds(&sb, t ? t : "null");
        sbuf_addc(&sb, '\n');
        free(t);
        break;
    }
    case CLI_OUT_NAME: {
        const char *kind = JX_STR(obj, "kind");
        json_t *items = JX_GET(obj, "items");
        if (kind && !strcmp(kind, "List") && json_is_array(items)) {
            size_t i;
            json_t *it;
            json_array_foreach(items, i, it)
                print_name(c, k, it);
        } else {
            print_name(c, k, obj);
        }
        break;
    }
    case CLI_OUT_JSONPATH:
        cli__jsonpath_exec(f->jp, obj, &sb);
        break;
    case CLI_OUT_TABLE:
    case CLI_OUT_WIDE:
        break;
    }
    fwrite(sb.buf, 1, sb.len, c->out);
    sbuf_release(&sb);
}

/*
 * config: where the CLI finds the server. The server writes its URL to
 * <state-dir>/server.url when it starts; the CLI reads it from the same
 * default state directory, so `cueue server &` then `cueue get cq` works
 * with no flags. Explicit flags and $CUEUE_SERVER win.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/xalloc.h"

char *cli__state_dir(const char *flag, char *(*getenv_fn)(const char *))
{
    const char *v;
    if (flag && *flag)
        return xstrdup(flag);
    if ((v = getenv_fn("CUEUE_STATE_DIR")) && *v)
        return xstrdup(v);
    if ((v = getenv_fn("XDG_STATE_HOME")) && *v)
        return xasprintf("%s/cueue", v);
    if ((v = getenv_fn("HOME")) && *v)
        return xasprintf("%s/.local/state/cueue", v);
    return NULL;
}

/* First line of path without trailing whitespace, or NULL. Caller frees. */
static char *read_first_line(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char line[1024];
    char *res = NULL;
    if (fgets(line, sizeof(line), f)) {
        size_t n = strcspn(line, "\r\n");
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            n--;
        if (n > 0)
            res = xstrndup(line, n);
    }
    fclose(f);
    return res;
}

static char *normalise(const char *url)
{
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    if (!strstr(url, "://"))
        return xasprintf("http://%.*s", (int)n, url);
    return xstrndup(url, n);
}

char *cli__resolve_server(const char *server_flag, const char *state_dir_flag,
                          char *(*getenv_fn)(const char *))
{
    const char *v;
    if (server_flag && *server_flag)
        return normalise(server_flag);
    if ((v = getenv_fn("CUEUE_SERVER")) && *v)
        return normalise(v);
    char *dir = cli__state_dir(state_dir_flag, getenv_fn);
    if (dir) {
        char *path = xasprintf("%s/server.url", dir);
        char *url = read_first_line(path);
        xfree(path);
        xfree(dir);
        if (url) {
            char *res = normalise(url);
            xfree(url);
            return res;
        }
    }
    return xstrdup(CLI_DEFAULT_SERVER);
}

const char *cli__server(struct cli_ctx *c)
{
    if (!c->server)
        c->server = cli__resolve_server(c->server_flag, c->state_dir_flag, getenv);
    return c->server;
}

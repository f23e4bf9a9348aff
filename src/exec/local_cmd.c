/*
 * local_cmd: what each container of a pod runs under the local executor.
 * Pods run without container images, so a container is its command+args
 * (no command: a StartError naming the rule), its env, and its workingDir,
 * with paths under volume mounts pointed at the host directories the node
 * agent prepared. Everything here is string work plus the PATH lookup;
 * nothing is started.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/local-int.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"


/* An environment under construction: "NAME=value" strings, later sets
 * replace earlier ones in place (order of first definition kept). */
struct envb {
    char **v;
    size_t n, cap;
};

static size_t name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

static const char *env_lookup(char *const *envp, const char *name, size_t len)
{
    const char *found = NULL;
    for (; envp && *envp; envp++)
        if (name_len(*envp) == len && !strncmp(*envp, name, len))
            found = *envp + len + 1;
    return found;
}

static void envb_set(struct envb *e, const char *name, const char *value)
{
    size_t len = strlen(name);
    char *kv = xasprintf("%s=%s", name, value ? value : "");
    for (size_t i = 0; i < e->n; i++) {
        if (name_len(e->v[i]) == len && !strncmp(e->v[i], name, len)) {
            xfree(e->v[i]);
            e->v[i] = kv;
            return;
        }
    }
    XGROW(e->v, e->cap, e->n + 2);
    e->v[e->n++] = kv;
    e->v[e->n] = NULL;
}

static char **envb_take(struct envb *e)
{
    XGROW(e->v, e->cap, e->n + 1);
    e->v[e->n] = NULL;
    char **v = e->v;
    memset(e, 0, sizeof(*e));
    return v;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        xfree(v[i]);
    xfree(v);
}

/* The buffer's string (caller frees); the buffer is released. */
static char *take(struct sbuf *sb)
{
    char *s = sbuf_take(sb);
    sbuf_release(sb);
    return s;
}

char *lx_expand(const char *s, char *const *envp)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (const char *p = s; *p;) {
        if (p[0] == '$' && p[1] == '$') {
            sbuf_addc(&sb, '$');
            p += 2;
        } else if (p[0] == '$' && p[1] == '(') {
            const char *close = strchr(p + 2, ')');
            if (!close) {
                sbuf_adds(&sb, p);
                break;
            }
            size_t len = (size_t)(close - (p + 2));
            const char *val = len ? env_lookup(envp, p + 2, len) : NULL;
            if (val)
                sbuf_adds(&sb, val);
            else
                sbuf_add(&sb, p, (size_t)(close + 1 - p));
            p = close + 1;
        } else {
            sbuf_addc(&sb, *p++);
        }
    }
    return take(&sb);
}

static bool is_lead(char c) { return c == ' ' || c == '=' || c == ':' || c == '\'' || c == '"'; }
static bool is_trail(char c)
{
    return c == '\0' || c == '/' || c == ' ' || c == ':' || c == ';' || c == '\'' || c == '"';
}

/* The longest mount path that stands as a token at s (see is_lead/is_trail). */
static const struct exec_env *mount_at(const char *s, const struct exec_env *m, size_t n)
{
    const struct exec_env *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(m[i].name);
        while (len > 1 && m[i].name[len - 1] == '/')
            len--;
        if (len <= 1 || m[i].name[0] != '/' || len <= best_len)
            continue;
        if (!strncmp(s, m[i].name, len) && is_trail(s[len])) {
            best = &m[i];
            best_len = len;
        }
    }
    return best;
}

char *lx_rewrite_mounts(const char *s, const struct exec_env *mounts, size_t n_mounts)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (size_t i = 0; s[i];) {
        const struct exec_env *m =
            (i == 0 || is_lead(s[i - 1])) && s[i] == '/' ? mount_at(s + i, mounts, n_mounts)
                                                         : NULL;
        if (m) {
            size_t len = strlen(m->name);
            while (len > 1 && m->name[len - 1] == '/')
                len--;
            sbuf_adds(&sb, m->value);
            i += len;
        } else {
            sbuf_addc(&sb, s[i++]);
        }
    }
    return take(&sb);
}

static bool is_exec_file(const char *path, int *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *err = errno;
        return false;
    }
    if (S_ISDIR(st.st_mode) || access(path, X_OK) != 0) {
        *err = EACCES;
        return false;
    }
    return true;
}

char *lx_find_program(const char *argv0, char *const *envp, const char *cwd, char **err)
{
    int e = 0;
    *err = NULL;
    if (!argv0[0]) {
        *err = xstrdup("exec: \"\": executable file not found in $PATH");
        return NULL;
    }
    if (strchr(argv0, '/')) {
        char *path = argv0[0] == '/' || !cwd ? xstrdup(argv0) : xasprintf("%s/%s", cwd, argv0);
        if (is_exec_file(path, &e))
            return path;
        xfree(path);
        *err = e == EACCES ? xasprintf("exec: \"%s\": permission denied", argv0)
                           : xasprintf("exec: \"%s\": stat %s: %s", argv0, argv0, strerror(e));
        return NULL;
    }
    const char *path_env = env_lookup(envp, "PATH", 4);
    const char *p = path_env && path_env[0] ? path_env : LX_DEFAULT_PATH;
    while (*p) {
        const char *colon = strchrnul(p, ':');
        size_t len = (size_t)(colon - p);
        char *cand = len ? xasprintf("%.*s/%s", (int)len, p, argv0) : xasprintf("./%s", argv0);
        if (is_exec_file(cand, &e))
            return cand;
        xfree(cand);
        p = *colon ? colon + 1 : colon;
    }
    *err = xasprintf("exec: \"%s\": executable file not found in $PATH", argv0);
    return NULL;
}

/* Container env entries (values resolved by the node agent; valueFrom
 * left over is an error) then the executor's extra env. */
static char **build_env(const json_t *ctr, const struct exec_pod *pod, char *const *base_env,
                        char **error)
{
    struct envb all = {0}, refs = {0};
    for (char *const *e = base_env; e && *e; e++) {
        size_t len = name_len(*e);
        if ((*e)[len] != '=')
            continue;
        char *name = xstrndup(*e, len);
        envb_set(&all, name, *e + len + 1);
        xfree(name);
    }
    /* $(VAR) in env values sees the pod's extra env and earlier entries */
    for (size_t i = 0; i < pod->n_env; i++)
        envb_set(&refs, pod->env[i].name, pod->env[i].value);
    size_t i;
    json_t *ev;
    json_array_foreach(JX_GET(ctr, "env"), i, ev) {
        const char *name = JX_STR(ev, "name");
        if (!name)
            continue;
        if (!JX_GET(ev, "value") && JX_GET(ev, "valueFrom") && !*error)
            *error = xasprintf("env %s: valueFrom was not resolved", name);
        XGROW(refs.v, refs.cap, refs.n + 1);
        refs.v[refs.n] = NULL;
        char *val = lx_expand(jx_or_empty(JX_STR(ev, "value")), refs.v);
        char *rw = lx_rewrite_mounts(val, pod->mounts, pod->n_mounts);
        envb_set(&all, name, rw);
        envb_set(&refs, name, rw);
        xfree(val);
        xfree(rw);
    }
    for (size_t k = 0; k < pod->n_env; k++)
        envb_set(&all, pod->env[k].name, pod->env[k].value);
    strv_free(envb_take(&refs));
    return envb_take(&all);
}

static void build_one(struct lx_cmd *c, const json_t *ctr, bool init, const struct exec_pod *pod,
                      char *const *base_env, const char *sandbox)
{
    c->name = xstrdup(jx_or_empty(JX_STR(ctr, "name")));
    c->init = init;
    c->envp = build_env(ctr, pod, base_env, &c->error);
    const char *wd = JX_STR(ctr, "workingDir");
    c->cwd = wd && wd[0] ? lx_rewrite_mounts(wd, pod->mounts, pod->n_mounts) : xstrdup(sandbox);
    const json_t *cmd = JX_GET(ctr, "command"), *args = JX_GET(ctr, "args");
    if (json_array_size(cmd) == 0) {
        if (!c->error)
            c->error = xasprintf("container %s has no command: cueue runs processes, not "
                                 "images (set command, and args, in the pod spec)", c->name);
        return;
    }
    size_t n = json_array_size(cmd) + json_array_size(args);
    c->argv = xcalloc(n + 1, sizeof(char *));
    size_t k = 0, i;
    json_t *v;
    const json_t *lists[2] = {cmd, args};
    for (int l = 0; l < 2; l++) {
        json_array_foreach(lists[l], i, v) {
            char *x = lx_expand(json_is_string(v) ? json_string_value(v) : "", c->envp);
            c->argv[k++] = lx_rewrite_mounts(x, pod->mounts, pod->n_mounts);
            xfree(x);
        }
    }
}

struct lx_cmd *lx_cmds_build(const struct exec_pod *pod, char *const *base_env,
                             const char *sandbox, size_t *n)
{
    const json_t *spec = JX_GET(pod->pod, "spec");
    const json_t *inits = JX_GET(spec, "initContainers"), *mains = JX_GET(spec, "containers");
    size_t total = json_array_size(inits) + json_array_size(mains);
    struct lx_cmd *cmds = xcalloc(total ? total : 1, sizeof(*cmds));
    size_t k = 0, i;
    json_t *ctr;
    json_array_foreach(inits, i, ctr) {
        build_one(&cmds[k++], ctr, true, pod, base_env, sandbox);
    }
    json_array_foreach(mains, i, ctr) {
        build_one(&cmds[k++], ctr, false, pod, base_env, sandbox);
    }
    *n = total;
    return cmds;
}

void lx_cmds_free(struct lx_cmd *cmds, size_t n)
{
    for (size_t i = 0; cmds && i < n; i++) {
        xfree(cmds[i].name);
        strv_free(cmds[i].argv);
        strv_free(cmds[i].envp);
        xfree(cmds[i].cwd);
        xfree(cmds[i].error);
        xfree(cmds[i].log_path);
        xfree(cmds[i].reason_file);
    }
    xfree(cmds);
}

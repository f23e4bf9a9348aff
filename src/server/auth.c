/*
 * auth: bearer tokens of `cueue server` (docs/security.md).
 *
 * The tokens live in <state-dir>/tokens (mode 0600), one per line:
 *     TOKEN NAME SCOPE
 * TOKEN: 64 hex digits (32 bytes from OpenSSL's RAND_bytes); NAME: who it
 * is for (shown in Forbidden messages as the user); SCOPE: "*" for an admin
 * token, else a comma-separated list of namespaces. Blank lines and lines
 * starting with '#' are ignored; a malformed line is skipped with a warning.
 * The first start writes one admin token named "admin"; `cueue server token
 * create` appends scoped ones. The server re-reads the file when it
 * changes (checked with stat on each authenticated request), so a token
 * created or removed while it runs takes effect at once.
 *
 * Tokens are compared in constant time (CRYPTO_memcmp) against every entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/names.h"
#include "server/srv-int.h"
#include "server/statefiles.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

#define TOKEN_BYTES 32
#define TOKEN_HEX (TOKEN_BYTES * 2)

struct token_entry {
    char token[TOKEN_HEX + 1];
    struct srv_principal who;
};

struct srv_tokens {
    pthread_mutex_t mu;
    char *path;
    struct stat seen; /* the file as last read */
    struct token_entry *items;
    size_t n;
};

static void principal_release(struct srv_principal *p)
{
    xfree(p->name);
    for (size_t i = 0; i < p->n_namespaces; i++)
        xfree(p->namespaces[i]);
    xfree(p->namespaces);
    memset(p, 0, sizeof(*p));
}

void srv_principal_free(struct srv_principal *p)
{
    if (!p)
        return;
    principal_release(p);
    xfree(p);
}

static void principal_copy(struct srv_principal *dst, const struct srv_principal *src)
{
    dst->name = xstrdup(src->name);
    dst->admin = src->admin;
    dst->n_namespaces = src->n_namespaces;
    dst->namespaces = xcalloc(src->n_namespaces ? src->n_namespaces : 1, sizeof(char *));
    for (size_t i = 0; i < src->n_namespaces; i++)
        dst->namespaces[i] = xstrdup(src->namespaces[i]);
}

bool srv_principal_has_namespace(const struct srv_principal *p, const char *ns)
{
    if (!p || p->admin)
        return true;
    for (size_t i = 0; ns && i < p->n_namespaces; i++)
        if (!strcmp(p->namespaces[i], ns))
            return true;
    return false;
}

static bool is_hex_token(const char *s)
{
    if (strlen(s) != TOKEN_HEX)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

int srv_tokens_parse_scope(const char *scope, struct srv_principal *p, char *err,
                           size_t errlen)
{
    if (!strcmp(scope, "*")) {
        p->admin = true;
        return 0;
    }
    char *copy = xstrdup(scope), *save = NULL;
    int rc = 0;
    for (char *ns = strtok_r(copy, ",", &save); ns; ns = strtok_r(NULL, ",", &save)) {
        const char *why = api_check_dns1123_label(ns);
        if (why) {
            snprintf(err, errlen, "invalid namespace \"%s\": %s", ns, why);
            rc = CU_EINVAL;
            break;
        }
        p->namespaces = xrealloc(p->namespaces, (p->n_namespaces + 1) * sizeof(char *));
        p->namespaces[p->n_namespaces++] = xstrdup(ns);
    }
    if (!rc && !p->n_namespaces) {
        snprintf(err, errlen, "no namespace given: want \"*\" (admin) or ns1,ns2");
        rc = CU_EINVAL;
    }
    xfree(copy);
    return rc;
}

static void clear_items(struct srv_tokens *t)
{
    for (size_t i = 0; i < t->n; i++)
        principal_release(&t->items[i].who);
    xfree(t->items);
    t->items = NULL;
    t->n = 0;
}

/* One line "TOKEN NAME SCOPE" into e. Returns 0, 1 for a line to skip
 * silently (blank, comment), or CU_EINVAL. */
static int parse_line(char *line, struct token_entry *e, char *err, size_t errlen)
{
    char *save = NULL;
    char *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok || *tok == '#')
        return 1;
    char *name = strtok_r(NULL, " \t\r\n", &save);
    char *scope = strtok_r(NULL, " \t\r\n", &save);
    if (!name || !scope || strtok_r(NULL, " \t\r\n", &save) || !is_hex_token(tok)) {
        snprintf(err, errlen, "want TOKEN NAME SCOPE with a token of %d hex digits", TOKEN_HEX);
        return CU_EINVAL;
    }
    memset(e, 0, sizeof(*e));
    snprintf(e->token, sizeof(e->token), "%s", tok);
    e->who.name = xstrdup(name);
    int rc = srv_tokens_parse_scope(scope, &e->who, err, errlen);
    if (rc)
        principal_release(&e->who);
    return rc;
}

/* (Re)read the file into t. Called with t->mu held (or before sharing). */
static int load(struct srv_tokens *t, char *err, size_t errlen)
{
    FILE *f = fopen(t->path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", t->path, strerror(errno));
        return CU_EIO;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0)
        t->seen = st;
    clear_items(t);
    char line[1024], why[256];
    for (int no = 1; fgets(line, sizeof(line), f); no++) {
        struct token_entry e;
        int rc = parse_line(line, &e, why, sizeof(why));
        if (rc == CU_EINVAL)
            log_warn("auth", "%s line %d skipped: %s", t->path, no, why);
        if (rc)
            continue;
        t->items = xrealloc(t->items, (t->n + 1) * sizeof(*t->items));
        t->items[t->n++] = e;
    }
    fclose(f);
    return 0;
}

static void new_token(char out[TOKEN_HEX + 1])
{
    unsigned char raw[TOKEN_BYTES];
    if (RAND_bytes(raw, sizeof(raw)) != 1) {
        log_error("auth", "RAND_bytes failed: no token can be made");
        abort();
    }
    for (int i = 0; i < TOKEN_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* Append "TOKEN NAME SCOPE\n" to path (created 0600), under an exclusive
 * flock so two `token create` never interleave. */
static int append_line(const char *path, const char *line, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return CU_EIO;
    }
    int rc = 0;
    size_t len = strlen(line);
    if (flock(fd, LOCK_EX) || fchmod(fd, 0600) || write(fd, line, len) != (ssize_t)len ||
        fsync(fd)) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        rc = CU_EIO;
    }
    close(fd);
    return rc;
}

int srv_tokens_create(const char *state_dir, const char *name, const char *scope,
                      char out[SRV_TOKEN_TEXT], char *err, size_t errlen)
{
    struct srv_principal p = {0};
    int rc = srv_tokens_parse_scope(scope, &p, err, errlen);
    principal_release(&p);
    if (rc)
        return rc;
    if (!*name || strpbrk(name, " \t\r\n#")) {
        snprintf(err, errlen, "invalid token name \"%s\": want one word", name);
        return CU_EINVAL;
    }
    new_token(out);
    char *path = xasprintf("%s/tokens", state_dir);
    char *line = xasprintf("%s %s %s\n", out, name, scope);
    rc = append_line(path, line, err, errlen);
    xfree(line);
    xfree(path);
    return rc;
}

int srv_tokens_open(const char *state_dir, struct srv_tokens **out, char *err, size_t errlen)
{
    *out = NULL;
    char *path = xasprintf("%s/tokens", state_dir);
    struct stat st;
    if (stat(path, &st) && errno == ENOENT) {
        char tok[SRV_TOKEN_TEXT];
        int rc = srv_tokens_create(state_dir, "admin", "*", tok, err, errlen);
        if (rc) {
            xfree(path);
            return rc;
        }
        log_info("auth", "first start: wrote an admin token to %s", path);
    }
    struct srv_tokens *t = xcalloc(1, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    t->path = path;
    int rc = load(t, err, errlen);
    if (rc) {
        srv_tokens_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void srv_tokens_free(struct srv_tokens *t)
{
    if (!t)
        return;
    clear_items(t);
    pthread_mutex_destroy(&t->mu);
    xfree(t->path);
    xfree(t);
}

/* Re-read the file when it changed since the last read. With t->mu. */
static void refresh(struct srv_tokens *t)
{
    struct stat st;
    if (stat(t->path, &st))
        return; /* gone or unreadable: keep what we have */
    if (st.st_ino == t->seen.st_ino && st.st_size == t->seen.st_size &&
        st.st_mtim.tv_sec == t->seen.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == t->seen.st_mtim.tv_nsec)
        return;
    char err[256];
    if (load(t, err, sizeof(err)))
        log_warn("auth", "%s", err);
}

char *srv_tokens_admin(struct srv_tokens *t)
{
    char *res = NULL;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n && !res; i++)
        if (t->items[i].who.admin)
            res = xstrdup(t->items[i].token);
    pthread_mutex_unlock(&t->mu);
    return res;
}

struct srv_principal *srv_tokens_check(struct srv_tokens *t, const char *authorization)
{
    if (!authorization || strncasecmp(authorization, "Bearer ", 7))
        return NULL;
    const char *tok = authorization + 7;
    while (*tok == ' ')
        tok++;
    if (strlen(tok) != TOKEN_HEX)
        return NULL;
    struct srv_principal *who = NULL;
    pthread_mutex_lock(&t->mu);
    refresh(t);
    for (size_t i = 0; i < t->n; i++) {
        /* every entry is compared, in constant time */
        if (!CRYPTO_memcmp(t->items[i].token, tok, TOKEN_HEX) && !who) {
            who = xcalloc(1, sizeof(*who));
            principal_copy(who, &t->items[i].who);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return who;
}

/*
 * statefiles: the files `cueue server` keeps in its state directory besides
 * the database: the lock (one server per directory), server.url (the base
 * URL, read by the CLI) and kubeconfig (cluster/user/context `cueue`, the
 * way k3s writes one, with the admin bearer token and, with TLS, the CA).
 * Files are written to a temporary name and renamed, so a reader never
 * sees half a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/srv-int.h"
#include "server/statefiles.h"
#include "util/base64.h"
#include "util/err.h"
#include "util/xalloc.h"

int srv__mkdirs(const char *path, char *err, size_t errlen)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char save = *s;
            *s = '\0';
            if (mkdir(p, 0700) && errno != EEXIST) {
                snprintf(err, errlen, "cannot create directory %s: %s", p, strerror(errno));
                rc = CU_EIO;
                break;
            }
            *s = save;
            if (!save)
                break;
        }
    }
    xfree(p);
    return rc;
}

/* chmod path to mode when it has any bit outside mode; a missing file is
 * fine. */
static int tighten(const char *path, mode_t mode, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st))
        return errno == ENOENT ? 0 : CU_EIO;
    if (!(st.st_mode & 07777 & ~mode))
        return 0;
    if (chmod(path, mode)) {
        snprintf(err, errlen, "cannot make %s private (mode %04o): %s", path, (unsigned)mode,
                 strerror(errno));
        return CU_EIO;
    }
    return 0;
}

int srv__secure_state(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the state directory %s is not a directory", dir);
        return CU_EIO;
    }
    int rc = tighten(dir, 0700, err, errlen);
    char *db = xasprintf("%s/cueue.db", dir);
    int fd = rc ? -1 : open(db, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    static const char *const sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3 && !rc; i++) {
        char *f = xasprintf("%s%s", db, sfx[i]);
        rc = tighten(f, 0600, err, errlen);
        xfree(f);
    }
    xfree(db);
    return rc;
}

int srv__lock_state(const char *dir, int *fd_out, char *err, size_t errlen)
{
    char *path = xasprintf("%s/server.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        xfree(path);
        return CU_EIO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        snprintf(err, errlen,
                 "another cueue server (pid %s) is already using the state directory %s; "
                 "stop it first or choose another --state-dir",
                 *pid ? pid : "?", dir);
        close(fd);
        xfree(path);
        return CU_EEXIST;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* the lock holds regardless; the pid is only informative */
    }
    xfree(path);
    *fd_out = fd;
    return 0;
}

int srv__write_file(const char *path, const char *text, int mode, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    int rc = 0;
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) || close(fd) ||
        rename(tmp, path)) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        rc = CU_EIO;
    }
    xfree(tmp);
    return rc;
}

char *srv__base_url(const char *listen_addr, uint16_t port, bool tls)
{
    const char *scheme = tls ? "https" : "http";
    const char *host = listen_addr;
    if (!strcmp(host, "0.0.0.0") || !strcmp(host, "localhost"))
        host = "127.0.0.1";
    else if (!strcmp(host, "::"))
        host = "::1";
    if (strchr(host, ':'))
        return xasprintf("%s://[%s]:%u", scheme, host, port);
    return xasprintf("%s://%s:%u", scheme, host, port);
}

char *srv__kubeconfig_text(const char *url, const char *token, const char *ca_pem)
{
    char *ca = NULL;
    if (ca_pem) {
        char *b64 = cu_base64_encode(ca_pem, strlen(ca_pem));
        ca = xasprintf("    certificate-authority-data: %s\n", b64);
        xfree(b64);
    }
    char *user = token ? xasprintf("  user:\n    token: \"%s\"\n", token) : xstrdup("  user: {}\n");
    char *text = xasprintf("apiVersion: v1\n"
                     "kind: Config\n"
                     "clusters:\n"
                     "- cluster:\n"
                     "%s"
                     "    server: %s\n"
                     "  name: cueue\n"
                     "contexts:\n"
                     "- context:\n"
                     "    cluster: cueue\n"
                     "    namespace: default\n"
                     "    user: cueue\n"
                     "  name: cueue\n"
                     "current-context: cueue\n"
                     "preferences: {}\n"
                     "users:\n"
                     "- name: cueue\n"
                     "%s",
                     ca ? ca : "", url, user);
    xfree(ca);
    xfree(user);
    return text;
}

char *srv_default_state_dir(void)
{
    const char *e = getenv("CUEUE_STATE_DIR");
    if (e && *e)
        return xstrdup(e);
    e = getenv("XDG_STATE_HOME");
    if (e && *e)
        return xasprintf("%s/cueue", e);
    e = getenv("HOME");
    return xasprintf("%s/.local/state/cueue", e && *e ? e : ".");
}

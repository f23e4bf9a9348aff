/*
 * local_spawn: the server side of starting a pod's supervisor (see
 * local-int.h). The supervisor is the program cueue-pod-supervisor,
 * installed (built) next to the running program, so a server and its
 * supervisors always come from the same build. The pod's lock is taken
 * here, before the spawn, and handed over: from the moment the server
 * answers the lock says "a supervisor lives", and two supervisors for one
 * pod cannot happen. The spec travels in a memfd, so starting a pod creates
 * no spec file (only the supervisor reads it, once).
 *
 * Two ways to start one: lx_sup_spawn executes the program for the pod;
 * lx_forksrv_spawn asks the program's fork server (local_forksrv.c), which
 * forks a supervisor without an exec, the cheap way the executor uses while
 * its fork server works.
 *
 * Invariant: nothing here blocks beyond local file-system calls; every fd
 * opened is closed before returning, whatever happened.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/local-int.h"
#include "util/err.h"
#include "util/xalloc.h"

extern char **environ;

char *lx_sup_program(const char *dir, char *err, size_t errlen)
{
    char self[PATH_MAX];
    if (!dir) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0) {
            snprintf(err, errlen, "cannot find the pod supervisor program: /proc/self/exe: %s",
                     strerror(errno));
            return NULL;
        }
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        dir = slash ? self : ".";
    }
    char *path = xasprintf("%s/%s", dir, LX_SUP_PROGRAM);
    if (access(path, X_OK) != 0) {
        snprintf(err, errlen,
                 "the pod supervisor program %s is missing (%s): it is built and installed "
                 "next to cueue (build target " LX_SUP_PROGRAM ")",
                 path, strerror(errno));
        xfree(path);
        return NULL;
    }
    return path;
}

/* fd moved above the fds handed to the supervisor (so the dup2s below cannot
 * overwrite one another), close-on-exec; fd itself when already there. */
static int above_handover(int fd)
{
    if (fd < 0 || fd > LX_SPEC_FD)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, LX_SPEC_FD + 1);
    int e = errno;
    close(fd);
    errno = e;
    return moved;
}

/* A memfd holding text, or -1 with errno set. */
static int spec_memfd(const char *text)
{
    int fd = memfd_create("cueue-pod-spec", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        done += (size_t)n;
    }
    return above_handover(fd);
}

/* The pod's lock, taken (fd), or -1 with the error code in *rc. */
static int take_lock(const char *dir, int *rc, char *err, size_t errlen)
{
    char *lock = xasprintf("%s/%s", dir, LX_LOCK_FILE);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    xfree(lock);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
        fd = above_handover(fd); /* the lock lives on in the duplicate */
        if (fd >= 0)
            return fd;
    }
    int e = errno;
    if (fd >= 0)
        close(fd);
    snprintf(err, errlen, "cannot start the pod supervisor: %s",
             e == EWOULDBLOCK ? "one already runs for this pod" : strerror(e));
    *rc = e == EWOULDBLOCK ? CU_EEXIST : CU_EIO;
    return -1;
}

/* The lock (taken) and the spec memfd of pod directory dir, both above
 * the handover fds. 0, or an error with err filled and nothing left open. */
static int prepare(const char *dir, const char *spec_text, int *lock_fd, int *spec_fd,
                   char *err, size_t errlen)
{
    int rc = 0;
    *lock_fd = take_lock(dir, &rc, err, errlen);
    if (*lock_fd < 0)
        return rc;
    *spec_fd = spec_memfd(spec_text);
    if (*spec_fd < 0) {
        snprintf(err, errlen, "cannot start the pod supervisor: memfd: %s", strerror(errno));
        close(*lock_fd);
        return CU_EIO;
    }
    return 0;
}

/* Run program with argv {LX_SUP_PROGRAM, arg}: stdio /dev/null, fds[i] on
 * fd 3 + i (each above the handover fds), nothing else open, in cwd (NULL
 * = ours), own session, default signals. An errno value (0 = started). */
static int spawn_program(const char *program, const char *arg, const char *cwd, const int *fds,
                         int n_fds, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&fa, 0, 1);
    posix_spawn_file_actions_adddup2(&fa, 0, 2);
    for (int i = 0; i < n_fds; i++)
        posix_spawn_file_actions_adddup2(&fa, fds[i], 3 + i);
    if (cwd)
        posix_spawn_file_actions_addchdir_np(&fa, cwd);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3 + n_fds);
    lx_spawn_attrs(&at);
    char *argv[] = {(char *)LX_SUP_PROGRAM, (char *)arg, NULL};
    int e = posix_spawn(pid, program, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return e;
}

int lx_sup_spawn(const char *program, const char *dir, const char *spec_text, int *pid_out,
                 char *err, size_t errlen)
{
    int fds[2] = {-1, -1}; /* LX_LOCK_FD, LX_SPEC_FD */
    int rc = prepare(dir, spec_text, &fds[0], &fds[1], err, errlen);
    if (rc)
        return rc;
    pid_t pid = 0;
    int e = spawn_program(program, dir, dir, fds, 2, &pid);
    close(fds[1]);
    close(fds[0]); /* the supervisor holds the lock from here */
    if (e != 0) {
        snprintf(err, errlen, "cannot start the pod supervisor %s: %s", program, strerror(e));
        return CU_EIO;
    }
    *pid_out = (int)pid;
    return 0;
}

/* ---- the fork server's client ---- */

#define FORKSRV_REPLY_MS 5000

int lx_forksrv_start(struct lx_forksrv *fs, const char *program, char *err, size_t errlen)
{
    int sv[2];
    fs->sock = -1;
    fs->pid = 0;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "cannot start the pod fork server: socketpair: %s",
                 strerror(errno));
        return CU_EIO;
    }
    pid_t pid = 0;
    sv[1] = above_handover(sv[1]);
    int e = sv[1] >= 0 ? spawn_program(program, LX_FORKSRV_ARG, NULL, &sv[1], 1, &pid) : errno;
    if (sv[1] >= 0)
        close(sv[1]);
    if (e != 0) {
        close(sv[0]);
        snprintf(err, errlen, "cannot start the pod fork server %s: %s", program, strerror(e));
        return CU_EIO;
    }
    fs->sock = sv[0];
    fs->pid = (int)pid;
    return 0;
}

void lx_forksrv_stop(struct lx_forksrv *fs)
{
    if (fs->sock < 0)
        return;
    close(fs->sock); /* EOF: it exits once its request is done */
    fs->sock = -1;
    if (fs->pid > 0 && waitpid(fs->pid, NULL, WNOHANG) == 0) {
        struct pollfd none = {-1, 0, 0};
        for (int i = 0; i < 100 && waitpid(fs->pid, NULL, WNOHANG) == 0; i++)
            poll(&none, 0, 10); /* shutdown only: it exits within a request */
        if (waitpid(fs->pid, NULL, WNOHANG) == 0) {
            kill(fs->pid, SIGKILL);
            waitpid(fs->pid, NULL, 0);
        }
    }
    fs->pid = 0;
}

/* Send the request: dir with [lock_fd, spec_fd]. */
static bool send_request(int sock, const char *dir, int lock_fd, int spec_fd)
{
    struct iovec iov = {(void *)dir, strlen(dir)};
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } c;
    memset(&c, 0, sizeof(c));
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
                       .msg_controllen = sizeof(c.buf)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(2 * sizeof(int));
    int fds[2] = {lock_fd, spec_fd};
    memcpy(CMSG_DATA(h), fds, sizeof(fds));
    ssize_t n;
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    return n == (ssize_t)iov.iov_len;
}

/* Receive the reply (bounded wait); false when none came. */
static bool recv_reply(int sock, struct lx_forksrv_reply *r, int *pidfd)
{
    struct pollfd p = {sock, POLLIN, 0};
    int ready;
    while ((ready = poll(&p, 1, FORKSRV_REPLY_MS)) < 0 && errno == EINTR) {}
    if (ready <= 0)
        return false;
    struct iovec iov = {r, sizeof(*r)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } c;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
                       .msg_controllen = sizeof(c.buf)};
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    if (n != (ssize_t)sizeof(*r))
        return false;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
        h->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(pidfd, CMSG_DATA(h), sizeof(int));
    return true;
}

int lx_forksrv_spawn(struct lx_forksrv *fs, const char *dir, const char *spec_text, int *pid,
                     int *pidfd, char *err, size_t errlen)
{
    *pidfd = -1;
    if (fs->sock < 0) {
        snprintf(err, errlen, "no pod fork server");
        return CU_EIO;
    }
    int lock_fd = -1, spec_fd = -1;
    int rc = prepare(dir, spec_text, &lock_fd, &spec_fd, err, errlen);
    if (rc)
        return rc;
    struct lx_forksrv_reply r = {0, 0};
    bool ok = send_request(fs->sock, dir, lock_fd, spec_fd) && recv_reply(fs->sock, &r, pidfd);
    close(spec_fd);
    close(lock_fd); /* the supervisor holds the lock from here (when started) */
    if (!ok) {
        snprintf(err, errlen, "the pod fork server (pid %d) does not answer", fs->pid);
        lx_forksrv_stop(fs);
        return CU_EIO;
    }
    if (r.pid <= 0) {
        snprintf(err, errlen, "cannot start the pod supervisor: fork: %s",
                 strerror(r.err ? r.err : EIO));
        return CU_EIO;
    }
    *pid = r.pid;
    return 0;
}

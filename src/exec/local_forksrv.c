/*
 * local_forksrv: the supervisor program's fork server
 * (`cueue-pod-supervisor --fork-server`, see local-int.h). `cueue server`
 * starts one, lazily, and asks it for each pod's supervisor; it forks
 * itself, and the child becomes the supervisor (lx_sup_main) without an
 * exec: no program loading, no dynamic linking, no CPU feature probing per
 * pod, which on a virtual machine is most of what starting a program costs.
 * The fork server is small and single-threaded, so fork() is cheap and
 * safe here (the multi-threaded server could not fork and run code).
 *
 * Protocol over the SOCK_SEQPACKET socket on LX_FORKSRV_FD, one request at
 * a time: request = the pod directory (bytes) with SCM_RIGHTS [lock fd,
 * spec fd]; reply = struct lx_forksrv_reply with SCM_RIGHTS [pidfd] when
 * the supervisor was started (pidfd_open on our own unreaped child, so it
 * cannot name another process). EOF on the socket (the server went) ends
 * the fork server; the supervisors it started carry on, each in its own
 * session. Children are reaped as they exit (signalfd on SIGCHLD), so a
 * finished supervisor does not linger as a zombie.
 *
 * Invariant: every fd received is closed in this process before the next
 * request; a child keeps only its stdio, LX_LOCK_FD and LX_SPEC_FD.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/local-int.h"
#include "util/xalloc.h"

#define MAX_DIR_BYTES 4096

/* fd moved to at least `at` (F_DUPFD, not close-on-exec). */
static int move_up(int fd, int at)
{
    int moved = fcntl(fd, F_DUPFD, at);
    close(fd);
    return moved;
}

/* The child: become the supervisor of dir with the lock and the spec. */
static __attribute__((noreturn)) void become_supervisor(const char *dir, int lock_fd,
                                                         int spec_fd)
{
    sigset_t none;
    sigemptyset(&none);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    /* out of the way of the fixed numbers first, so the dup2s cannot
     * overwrite one another */
    lock_fd = move_up(lock_fd, 16);
    spec_fd = move_up(spec_fd, 16);
    if (lock_fd < 0 || spec_fd < 0 || dup2(lock_fd, LX_LOCK_FD) < 0 ||
        dup2(spec_fd, LX_SPEC_FD) < 0 || chdir(dir) != 0)
        _exit(127);
    close_range(LX_SPEC_FD + 1, ~0U, 0);
    exit(lx_sup_main(dir));
}

static void reply(int sock, int pid, int err, int pidfd)
{
    struct lx_forksrv_reply r = {.pid = pid, .err = err};
    struct iovec iov = {&r, sizeof(r)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } c;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (pidfd >= 0) {
        memset(&c, 0, sizeof(c));
        m.msg_control = c.buf;
        m.msg_controllen = sizeof(c.buf);
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(h), &pidfd, sizeof(int));
    }
    while (sendmsg(sock, &m, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

/* One request: false when the socket is closed (the server is gone). */
static bool serve_one(int sock)
{
    char dir[MAX_DIR_BYTES + 1];
    struct iovec iov = {dir, MAX_DIR_BYTES};
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } c;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
                       .msg_controllen = sizeof(c.buf)};
    ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN;
    if (n == 0)
        return false;
    dir[n] = '\0';
    int fds[2] = {-1, -1};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
        h->cmsg_len == CMSG_LEN(2 * sizeof(int)))
        memcpy(fds, CMSG_DATA(h), sizeof(fds));
    if (fds[0] < 0 || fds[1] < 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        reply(sock, 0, EINVAL, -1);
    } else {
        pid_t pid = fork();
        if (pid == 0) {
            close(sock);
            become_supervisor(dir, fds[0], fds[1]);
        }
        int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
        reply(sock, pid > 0 ? (int)pid : 0, pid > 0 ? 0 : errno, pidfd);
        if (pidfd >= 0)
            close(pidfd);
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return true;
}

int lx_forksrv_main(int sock)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    fcntl(sock, F_SETFD, FD_CLOEXEC);
    /* jansson seeds its hash function from /dev/urandom on first use: once
     * here, not in every supervisor */
    json_object_seed(0);
    for (bool open = true; open;) {
        struct pollfd p[2] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
        if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
            break;
        if (sfd >= 0 && (p[1].revents & POLLIN)) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) > 0) {}
        }
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
            open = serve_one(sock);
    }
    if (sfd >= 0)
        close(sfd);
    close(sock);
    return 0;
}

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
 * Invariant: nothing here blocks beyond local file-system calls; every fd
 * opened is closed before returning, whatever happened.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
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

/* fd moved above the fds the supervisor gets (so the dup2s below cannot
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

int lx_sup_spawn(const char *program, const char *dir, const char *spec_text, int *pid_out,
                 char *err, size_t errlen)
{
    int rc = 0;
    int lock_fd = take_lock(dir, &rc, err, errlen);
    if (lock_fd < 0)
        return rc;
    int spec_fd = spec_memfd(spec_text);
    if (spec_fd < 0) {
        snprintf(err, errlen, "cannot start the pod supervisor: memfd: %s", strerror(errno));
        close(lock_fd);
        return CU_EIO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&fa, 0, 1);
    posix_spawn_file_actions_adddup2(&fa, 0, 2);
    posix_spawn_file_actions_adddup2(&fa, lock_fd, LX_LOCK_FD);
    posix_spawn_file_actions_adddup2(&fa, spec_fd, LX_SPEC_FD);
    posix_spawn_file_actions_addchdir_np(&fa, dir);
    posix_spawn_file_actions_addclosefrom_np(&fa, LX_SPEC_FD + 1);
    lx_spawn_attrs(&at);
    char *argv[] = {(char *)LX_SUP_PROGRAM, (char *)dir, NULL};
    pid_t pid = 0;
    int e = posix_spawn(&pid, program, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(spec_fd);
    close(lock_fd); /* the supervisor holds the lock from here */
    if (e != 0) {
        snprintf(err, errlen, "cannot start the pod supervisor %s: %s", program, strerror(e));
        return CU_EIO;
    }
    *pid_out = (int)pid;
    return 0;
}

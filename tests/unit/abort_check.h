/*
 * abort_check: the unit tests' way to check a debug-build assertion: run
 * a body in a child process and require that it dies of SIGABRT. Include
 * after <cmocka.h>; header-only (each test binary has its own copy).
 */
#ifndef CUEUE_TESTS_ABORT_CHECK_H
#define CUEUE_TESTS_ABORT_CHECK_H

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fork; the child runs body(arg) and exits 0 if it returns. The calling
 * test fails unless the child was killed by SIGABRT (an assert that
 * fired). Output is flushed first so the child does not repeat it. */
static inline void assert_child_aborts(void (*body)(void *arg), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        body(arg);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
}

#endif

/*
 * Unit tests: pods outlive the local executor. What the supervisor shares
 * with the server (spec text and status file: round trips, atomic
 * replacement, bad input, the pod's outcome), adopting a running pod after a "restart" (fx_reopen: the
 * executor goes, leaving its pods, a new one comes up on the same state
 * directory), an exit that happened while no executor watched, restart
 * counts that survive, stop through an adopted supervisor, a supervisor
 * that dies, and stop-on-free leaving nothing behind.
 */
#include <dirent.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "test_exec_local_fixture.h"
#include "util/err.h"

static char *pod_dir(struct fx *f, const char *uid)
{
    return xasprintf("%s/pods/%s", f->dir, uid);
}

static int read_status(struct fx *f, const char *uid, struct lx_status *st)
{
    char *dir = pod_dir(f, uid);
    char *path = xasprintf("%s/%s", dir, LX_STATUS_FILE);
    int rc = lx_status_read(path, st);
    xfree(path);
    xfree(dir);
    return rc;
}

static int adopt(struct fx *f, const char *uid)
{
    struct exec_pod ep = {"default", uid, uid, NULL, NULL, NULL, 0, NULL, 0, NULL};
    return f->x->ops->adopt(f->x, &ep);
}

/* True when pid is gone or a zombie (orphans of a non-reaping init). */
static bool proc_dead(const void *arg)
{
    int pid = *(const int *)arg;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return true;
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return !p || p[1] == '\0' || p[2] == 'Z' || p[2] == 'X';
}

struct done_arg {
    struct fx *f;
    const char *uid;
};

static bool status_done(const void *arg)
{
    const struct done_arg *d = arg;
    struct lx_status st;
    bool done = read_status(d->f, d->uid, &st) == 0 && st.done;
    lx_status_release(&st);
    return done;
}

static bool unlocked(const void *dir) { return !lx_sup_is_locked(dir); }

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
}

/* Start pod uid: one container running `sh -c script`. */
static void start_script(struct fx *f, const char *uid, const char *policy, const char *script)
{
    json_t *pod = json_pack("{s:{s:s, s:[{s:s, s:[s,s,s]}]}}", "spec", "restartPolicy",
                            policy, "containers", "name", "main", "command", "/bin/sh", "-c",
                            script);
    assert_int_equal(start(f, uid, pod, NULL, 0, NULL, 0), 0);
    json_decref(pod); /* start() keeps what it needs */
}

/* Start pod uid: one container that prints "before", waits for the file
 * <dir>/go-<uid>, prints "after" and exits with code. Waits until it runs
 * and reads its status into *st (caller releases). Returns the go file's
 * path (caller frees). */
static char *start_waiting(struct fx *f, const char *uid, int code, struct lx_status *st)
{
    char *go = xasprintf("%s/go-%s", f->dir, uid);
    char *script = xasprintf("echo before; while [ ! -e '%s' ]; do sleep 0.02; done; "
                             "echo after; exit %d", go, code);
    start_script(f, uid, "Never", script);
    xfree(script);
    assert_non_null(wait_report(f, uid, EXEC_RUNNING));
    assert_int_equal(read_status(f, uid, st), 0);
    assert_int_equal(st->c[0].state, EXEC_C_RUNNING);
    return go;
}

/* ---- the files ---- */

static void test_status_file_round_trip_and_bad_input(void **state)
{
    struct fx *f = *state;
    struct lx_cstatus c[2] = {
        {.name = "prep", .init = true, .state = EXEC_C_TERMINATED, .exit_code = 0,
         .reason = "Completed", .started_ms = 1000, .finished_ms = 2000},
        {.name = "main", .state = EXEC_C_RUNNING, .pid = 4242, .pid_start = 99,
         .message = "quote \" and\nnewline", .started_ms = 3000, .restarts = 2,
         .restart_at_ms = 0},
    };
    struct lx_status st = {.pid = 77, .pid_start = 55, .seq = 9, .mains_started = true,
                           .c = c, .n = 2};
    char *path = xasprintf("%s/s.json", f->dir);
    char *tmp = xasprintf("%s.tmp", path);
    assert_int_equal(lx_status_write(path, &st), 0);
    assert_int_not_equal(access(tmp, F_OK), 0); /* renamed into place */
    struct lx_status got;
    assert_int_equal(lx_status_read(path, &got), 0);
    assert_int_equal(got.pid, 77);
    assert_int_equal(got.pid_start, 55);
    assert_int_equal(got.seq, 9);
    assert_true(got.mains_started);
    assert_false(got.done);
    assert_int_equal(got.n, 2);
    assert_string_equal(got.c[0].name, "prep");
    assert_true(got.c[0].init);
    assert_int_equal(got.c[0].state, EXEC_C_TERMINATED);
    assert_string_equal(got.c[0].reason, "Completed");
    assert_int_equal(got.c[0].finished_ms, 2000);
    assert_int_equal(got.c[1].state, EXEC_C_RUNNING);
    assert_int_equal(got.c[1].pid, 4242);
    assert_int_equal(got.c[1].pid_start, 99);
    assert_int_equal(got.c[1].restarts, 2);
    assert_null(got.c[1].reason);
    assert_string_equal(got.c[1].message, "quote \" and\nnewline");
    lx_status_release(&got);

    /* later writes swap the file with the previous one: no inode is created
     * or deleted from the third write on */
    struct stat first, second, third;
    assert_int_equal(stat(path, &first), 0);
    st.seq = 10;
    assert_int_equal(lx_status_write(path, &st), 0);
    assert_int_equal(stat(path, &second), 0);
    assert_int_equal(lx_status_read(tmp, &got), 0); /* the previous one, whole */
    assert_int_equal(got.seq, 9);
    lx_status_release(&got);
    st.seq = 11;
    assert_int_equal(lx_status_write(path, &st), 0);
    assert_int_equal(lx_status_read(path, &got), 0);
    assert_int_equal(got.seq, 11);
    lx_status_release(&got);
    assert_int_equal(stat(path, &third), 0);
    assert_int_equal(third.st_ino, first.st_ino); /* the two files take turns */
    assert_int_not_equal(second.st_ino, first.st_ino);

    char *missing = xasprintf("%s/none.json", f->dir);
    assert_int_equal(lx_status_read(missing, &got), CU_ENOTFOUND);
    FILE *fp = fopen(path, "w");
    fputs("{\"pid\": 1, \"containers\": [", fp); /* half a file */
    fclose(fp);
    assert_int_equal(lx_status_read(path, &got), CU_EINVAL);
    fp = fopen(path, "w");
    fputs("[1, 2]", fp);
    fclose(fp);
    assert_int_equal(lx_status_read(path, &got), CU_EINVAL);
    xfree(missing);
    xfree(path);
    xfree(tmp);
}

static void test_outcome_follows_the_kubelet(void **state)
{
    (void)state;
    struct lx_cstatus c[3] = {
        {.name = "a", .state = EXEC_C_TERMINATED, .exit_code = 0, .reason = "Completed",
         .started_ms = 1},
        {.name = "b", .state = EXEC_C_TERMINATED, .exit_code = 3, .reason = "Error",
         .message = "boom", .started_ms = 1},
        {.name = "c", .state = EXEC_C_TERMINATED, .exit_code = 128, .reason = "StartError",
         .message = "exec: \"ray\": executable file not found in $PATH"},
    };
    struct lx_status st = {.mains_started = true, .c = c, .n = 1};
    lx_status_conclude(&st, 500);
    assert_true(st.done);
    assert_int_equal(st.result, EXEC_SUCCEEDED);
    assert_string_equal(st.reason, "Completed");
    assert_int_equal(st.finished_ms, 500);
    st.n = 2; /* the first non-zero exit fails the pod */
    lx_status_conclude(&st, 600);
    assert_int_equal(st.result, EXEC_FAILED);
    assert_int_equal(st.exit_code, 3);
    assert_string_equal(st.message, "boom");
    st.n = 3; /* a container that could not start is the cause */
    lx_status_conclude(&st, 700);
    assert_string_equal(st.reason, "StartError");
    assert_int_equal(st.exit_code, 128);
    struct lx_cstatus waiting = {.name = "w", .state = EXEC_C_WAITING};
    struct lx_status never = {.c = &waiting, .n = 1};
    lx_status_conclude(&never, 800);
    assert_int_equal(never.result, EXEC_FAILED);
    assert_int_equal(never.exit_code, 143);
    assert_string_equal(never.message, "the pod was stopped before its containers started");
    xfree(never.reason);
    xfree(never.message);
    xfree(st.reason);
    xfree(st.message);
}

static void test_spec_text_round_trip_and_bad_input(void **state)
{
    (void)state;
    struct lx_cmd cmds[2] = {
        {.name = "prep", .init = true, .argv = (char *[]){"/bin/true", NULL},
         .envp = (char *[]){"A=1", "B=x y", NULL}, .cwd = "/tmp", .log_path = "/l/prep.log"},
        {.name = "app", .envp = (char *[]){NULL}, .cwd = "/", .log_path = "/l/app.log",
         .error = "container app has no command"},
    };
    struct lx_spec spec = {.uid = "u", .sandbox = "/sb", .policy = LX_ON_FAILURE,
                           .backoff_ms = 20, .cmds = cmds, .n = 2};
    char *text = lx_spec_dump(&spec);
    char err[256];
    struct lx_spec got;
    /* not NUL-terminated: the supervisor parses what it read from the memfd */
    size_t len = strlen(text);
    char *copy = xmalloc(len);
    memcpy(copy, text, len);
    assert_int_equal(lx_spec_parse(copy, len, &got, err, sizeof(err)), 0);
    assert_string_equal(got.uid, "u");
    assert_string_equal(got.sandbox, "/sb");
    assert_int_equal(got.policy, LX_ON_FAILURE);
    assert_int_equal(got.backoff_ms, 20);
    assert_int_equal(got.n, 2);
    assert_true(got.cmds[0].init);
    assert_string_equal(got.cmds[0].argv[0], "/bin/true");
    assert_null(got.cmds[0].argv[1]);
    assert_string_equal(got.cmds[0].envp[1], "B=x y");
    assert_string_equal(got.cmds[0].cwd, "/tmp");
    assert_string_equal(got.cmds[0].log_path, "/l/prep.log");
    assert_null(got.cmds[0].error);
    assert_null(got.cmds[1].argv);
    assert_string_equal(got.cmds[1].error, "container app has no command");
    lx_spec_release(&got);
    /* bad input: a clear error, nothing half-filled */
    assert_int_equal(lx_spec_parse(copy, len / 2, &got, err, sizeof(err)), CU_EINVAL);
    assert_non_null(strstr(err, "not a pod supervisor spec"));
    assert_null(got.uid);
    const char *no_uid = "{\"sandbox\":\"/sb\",\"containers\":[]}";
    assert_int_equal(lx_spec_parse(no_uid, strlen(no_uid), &got, err, sizeof(err)), CU_EINVAL);
    assert_non_null(strstr(err, "uid"));
    xfree(copy);
    xfree(text);
}

/* ---- the supervisor program ---- */

/* The names in dir, sorted, joined with commas (caller frees). */
static char *dir_names(const char *dir)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    assert_true(n >= 0);
    char *out = xstrdup("");
    for (int i = 0; i < n; i++) {
        if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
            char *next = xasprintf("%s%s%s", out, out[0] ? "," : "", ents[i]->d_name);
            xfree(out);
            out = next;
        }
        free(ents[i]);
    }
    free(ents);
    return out;
}

static void test_a_trivial_pod_writes_few_files(void **state)
{
    struct fx *f = *state;
    json_t *pod = probe_pod(f, "Never", json_pack("[s,s]", "out", "hi"));
    assert_int_equal(start(f, "small", pod, NULL, 0, NULL, 0), 0);
    const struct exec_report *r = wait_report(f, "small", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    char *dir = pod_dir(f, "small");
    assert_true(wait_for(unlocked, dir));
    /* no spec file (it travels in a memfd), no supervisor.out (nothing to
     * say); supervisor.json.tmp holds the status before the last */
    char *names = dir_names(dir);
    assert_string_equal(names, "main.log,supervisor.json,supervisor.json.tmp,supervisor.lock,"
                               "supervisor.started");
    struct lx_status st;
    assert_int_equal(read_status(f, "small", &st), 0);
    assert_int_equal(st.seq, 2); /* written as it ran and as it ended, not before */
    assert_true(st.done);
    lx_status_release(&st);
    xfree(names);
    xfree(dir);
    json_decref(pod);
}

/* Run the supervisor program by hand on pod directory dir with spec text
 * on its spec fd and the lock on its lock fd; its exit status. */
static int run_supervisor(const char *program, const char *dir, const char *spec)
{
    char *lock = xasprintf("%s/%s", dir, LX_LOCK_FILE);
    int lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(lock_fd > LX_SPEC_FD);
    assert_int_equal(flock(lock_fd, LOCK_EX | LOCK_NB), 0);
    int spec_fd = memfd_create("spec", MFD_CLOEXEC);
    assert_true(spec_fd > LX_SPEC_FD);
    assert_int_equal(write(spec_fd, spec, strlen(spec)), (ssize_t)strlen(spec));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, lock_fd, LX_LOCK_FD);
    posix_spawn_file_actions_adddup2(&fa, spec_fd, LX_SPEC_FD);
    char *argv[] = {(char *)program, (char *)dir, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, program, &fa, NULL, argv, NULL), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(lock_fd);
    close(spec_fd);
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    xfree(lock);
    return WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
}

static void test_supervisor_program_refuses_a_bad_spec(void **state)
{
    struct fx *f = *state;
    char err[512];
    char *program = lx_sup_program(NULL, err, sizeof(err)); /* next to this test */
    assert_non_null(program);
    char *dir = pod_dir(f, "bad-spec");
    char *pods = xasprintf("%s/pods", f->dir);
    mkdir(pods, 0755);
    xfree(pods);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(run_supervisor(program, dir, "{\"uid\": 1"), 1);
    struct lx_status st;
    assert_int_equal(read_status(f, "bad-spec", &st), 0);
    assert_true(st.done);
    assert_int_equal(st.result, EXEC_FAILED);
    assert_string_equal(st.reason, "StartError");
    assert_non_null(strstr(st.message, "the pod supervisor could not start: not a pod "
                                       "supervisor spec"));
    char *out_path = xasprintf("%s/%s", dir, LX_OUT_FILE);
    char *out = read_file(out_path);
    assert_non_null(strstr(out, "cueue-pod-supervisor: not a pod supervisor spec"));
    lx_status_release(&st);
    xfree(out);
    xfree(out_path);
    xfree(dir);
    xfree(program);
}

/* The pid of this process's child running the fork server, or 0. */
static int fork_server_pid(void)
{
    DIR *d = opendir("/proc");
    int found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d))) {
        int pid = atoi(e->d_name);
        if (pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        FILE *fp = fopen(path, "r");
        if (!fp)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
        fclose(fp);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        int ppid = 0;
        if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1 || ppid != (int)getpid())
            continue;
        snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
        fp = fopen(path, "r");
        if (!fp)
            continue;
        n = fread(buf, 1, sizeof(buf) - 1, fp);
        fclose(fp);
        buf[n] = '\0';
        const char *arg = buf + strlen(buf) + 1; /* argv[1] */
        if (arg < buf + n && !strcmp(arg, LX_FORKSRV_ARG))
            found = pid;
    }
    if (d)
        closedir(d);
    return found;
}

static void run_small(struct fx *f, const char *uid)
{
    json_t *pod = probe_pod(f, "Never", json_pack("[s,s,s,s]", "out", "hi", "exit", "4"));
    assert_int_equal(start(f, uid, pod, NULL, 0, NULL, 0), 0);
    const struct exec_report *r = wait_report(f, uid, -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 4);
    char *log = log_of(f, uid, "main");
    assert_string_equal(log, "hi\n");
    xfree(log);
    json_decref(pod);
}

static void test_supervisors_come_from_the_fork_server_or_not(void **state)
{
    struct fx *f = *state;
    assert_int_equal(fork_server_pid(), 0); /* started on first use */
    run_small(f, "forked");
    assert_int_not_equal(fork_server_pid(), 0);
    lx_set_fork_server(f->x, false); /* the supervisor program, executed */
    run_small(f, "executed");
}

static void test_a_dead_fork_server_is_replaced(void **state)
{
    struct fx *f = *state;
    run_small(f, "first");
    int fs = fork_server_pid();
    assert_int_not_equal(fs, 0);
    kill(fs, SIGKILL);
    run_small(f, "second"); /* executed directly, the dead one reaped */
    run_small(f, "third");  /* through a new fork server */
    int again = fork_server_pid();
    assert_int_not_equal(again, 0);
    assert_int_not_equal(again, fs);
}

static void test_missing_supervisor_program_is_named(void **state)
{
    (void)state;
    char err[512];
    assert_null(lx_sup_program("/nonexistent", err, sizeof(err)));
    assert_string_equal(err, "the pod supervisor program /nonexistent/cueue-pod-supervisor is "
                             "missing (No such file or directory): it is built and installed "
                             "next to cueue (build target cueue-pod-supervisor)");
}

/* ---- adoption ---- */

static void test_running_pod_is_adopted_after_restart(void **state)
{
    struct fx *f = *state;
    struct lx_status before, after;
    char *go = start_waiting(f, "keep", 0, &before);
    fx_reopen(f);
    char *dir = pod_dir(f, "keep");
    assert_true(lx_sup_is_locked(dir)); /* the supervisor outlived the executor */
    assert_false(proc_dead(&before.c[0].pid)); /* and so did the container */
    assert_int_equal(adopt(f, "keep"), 0);
    assert_int_equal(adopt(f, "keep"), 0); /* adopting twice is harmless */
    const struct exec_report *r = wait_report(f, "keep", EXEC_RUNNING);
    assert_non_null(r); /* the adopted pod reports where it stands at once */
    assert_int_equal(r->containers[0].state, EXEC_C_RUNNING);
    assert_int_equal(r->containers[0].started_ms, before.c[0].started_ms);
    assert_int_equal(r->containers[0].restarts, 0);
    touch(go);
    r = wait_report(f, "keep", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    char *log = log_of(f, "keep", "main");
    assert_string_equal(log, "before\nafter\n");
    assert_int_equal(read_status(f, "keep", &after), 0);
    assert_int_equal(after.pid, before.pid); /* the same supervisor all along */
    assert_true(wait_for(proc_dead, &after.pid));
    lx_status_release(&before);
    lx_status_release(&after);
    xfree(log);
    xfree(dir);
    xfree(go);
}

static void test_exit_while_unwatched_is_picked_up(void **state)
{
    struct fx *f = *state;
    struct lx_status st;
    char *go = start_waiting(f, "gone", 3, &st);
    fx_reopen(f);
    touch(go); /* it exits while no executor watches */
    struct done_arg d = {f, "gone"};
    assert_true(wait_for(status_done, &d));
    char *dir = pod_dir(f, "gone");
    assert_true(wait_for(unlocked, dir)); /* its supervisor is gone too */
    int64_t adopted_at = clk_now(clk_real());
    assert_int_equal(adopt(f, "gone"), 0);
    const struct exec_report *r = wait_report(f, "gone", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 3);
    assert_string_equal(r->reason, "Error");
    assert_int_equal(r->n_containers, 1);
    assert_int_equal(r->containers[0].exit_code, 3);
    assert_int_equal(r->containers[0].started_ms, st.c[0].started_ms);
    assert_true(r->containers[0].finished_ms <= adopted_at); /* when it happened */
    assert_true(r->at_ms <= adopted_at);
    char *log = log_of(f, "gone", "main");
    assert_string_equal(log, "before\nafter\n");
    lx_status_release(&st);
    xfree(log);
    xfree(dir);
    xfree(go);
}

static void test_restart_counts_survive_adoption(void **state)
{
    struct fx *f = *state;
    char *go = xasprintf("%s/go", f->dir), *count = xasprintf("%s/count", f->dir);
    char *script = xasprintf("echo x >> '%s'; [ $(wc -l < '%s') -ge 3 ] || exit 1; "
                             "while [ ! -e '%s' ]; do sleep 0.02; done", count, count, go);
    start_script(f, "flaky", "OnFailure", script);
    const struct exec_report *r = NULL;
    int64_t deadline = clk_now(clk_real()) + WAIT_MS;
    while (clk_now(clk_real()) < deadline) { /* RUNNING again after each restart */
        r = wait_report(f, "flaky", EXEC_RUNNING);
        if (r && r->containers[0].restarts == 2 && r->containers[0].state == EXEC_C_RUNNING)
            break;
        r = NULL;
        struct pollfd p = {f->pipe[0], POLLIN, 0};
        poll(&p, 1, 50);
    }
    assert_non_null(r);
    fx_reopen(f);
    assert_int_equal(adopt(f, "flaky"), 0);
    r = wait_report(f, "flaky", EXEC_RUNNING);
    assert_non_null(r);
    assert_int_equal(r->containers[0].restarts, 2);
    touch(go);
    r = wait_report(f, "flaky", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    assert_int_equal(r->containers[0].restarts, 2);
    xfree(script);
    xfree(go);
    xfree(count);
}

static void test_stop_reaches_an_adopted_pod(void **state)
{
    struct fx *f = *state;
    char *ready = xasprintf("%s/ready", f->dir), *ready2 = xasprintf("%s/ready2", f->dir);
    json_t *polite = probe_pod(f, "Never", json_pack("[s,s,s,s,s]", "term-exit", "0", "touch",
                                                     ready, "pause"));
    json_t *stubborn = probe_pod(f, "Never", json_pack("[s,s,s,s]", "trap-term", "touch",
                                                       ready2, "pause"));
    assert_int_equal(start(f, "polite", polite, NULL, 0, NULL, 0), 0);
    assert_int_equal(start(f, "stubborn", stubborn, NULL, 0, NULL, 0), 0);
    assert_true(wait_file(ready));
    assert_true(wait_file(ready2));
    fx_reopen(f);
    assert_int_equal(adopt(f, "polite"), 0);
    assert_int_equal(adopt(f, "stubborn"), 0);
    int64_t t0 = clk_now(clk_real());
    f->x->ops->stop(f->x, "polite", 10000);
    f->x->ops->stop(f->x, "stubborn", 300);
    const struct exec_report *r = wait_report(f, "polite", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED); /* SIGTERM, passed on by the supervisor */
    assert_true(clk_now(clk_real()) - t0 < 10000);
    r = wait_report(f, "stubborn", -1);
    assert_non_null(r);
    assert_true(clk_now(clk_real()) - t0 >= 300); /* the grace travelled with the signal */
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 137);
    xfree(ready);
    xfree(ready2);
    json_decref(polite);
    json_decref(stubborn);
}

static void test_lost_supervisor_is_not_found_and_leaves_nothing(void **state)
{
    struct fx *f = *state;
    assert_int_equal(adopt(f, "never-started"), CU_ENOTFOUND);
    struct lx_status st;
    char *go = start_waiting(f, "lost", 0, &st);
    fx_reopen(f);
    kill(st.pid, SIGKILL); /* the supervisor dies while no executor watches */
    char *dir = pod_dir(f, "lost");
    assert_true(wait_for(proc_dead, &st.pid));
    assert_true(wait_for(unlocked, dir)); /* released as it exits */
    assert_false(proc_dead(&st.c[0].pid)); /* its container outlived it */
    assert_int_equal(adopt(f, "lost"), CU_EEXIST); /* it ran: never again */
    assert_true(wait_for(proc_dead, &st.c[0].pid)); /* and was killed by the adopt */
    lx_status_release(&st);
    xfree(dir);
    xfree(go);
}

/* At most once: a pod that ran (its outcome recorded, or not) is never
 * started again in its sandbox, by the executor or by a supervisor. */
static void test_a_pod_never_runs_twice(void **state)
{
    struct fx *f = *state;
    char *ran = xasprintf("%s/ran", f->dir);
    char *script = xasprintf("echo x >> '%s'", ran);
    start_script(f, "once", "Never", script);
    const struct exec_report *r = wait_report(f, "once", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    char *dir = pod_dir(f, "once");
    assert_true(wait_for(unlocked, dir));
    fx_reopen(f);
    /* a server that lost its record of the pod tries to start it again */
    json_t *pod = json_pack("{s:{s:s, s:[{s:s, s:[s,s,s]}]}}", "spec", "restartPolicy",
                            "Never", "containers", "name", "main", "command", "/bin/sh", "-c",
                            script);
    assert_int_equal(start(f, "once", pod, NULL, 0, NULL, 0), CU_EEXIST);
    /* adopt gives the recorded outcome */
    assert_int_equal(adopt(f, "once"), 0);
    r = wait_report(f, "once", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    /* a supervisor started on the used sandbox runs nothing and leaves the
     * recorded status as it was */
    struct lx_status before, after;
    assert_int_equal(read_status(f, "once", &before), 0);
    char err[512];
    char *program = lx_sup_program(NULL, err, sizeof(err));
    assert_non_null(program);
    struct lx_spec spec = {.uid = "once", .sandbox = dir, .policy = LX_NEVER};
    struct lx_cmd cmd = {.name = "main", .argv = (char *[]){"/bin/sh", "-c", script, NULL},
                         .envp = (char *[]){NULL}, .cwd = dir, .log_path = ran};
    spec.cmds = &cmd;
    spec.n = 1;
    char *text = lx_spec_dump(&spec);
    assert_int_equal(run_supervisor(program, dir, text), 1);
    assert_int_equal(read_status(f, "once", &after), 0);
    assert_int_equal(after.seq, before.seq);
    char *log = read_file(ran);
    assert_string_equal(log, "x\n"); /* one run, one line */
    xfree(log);
    xfree(text);
    xfree(program);
    lx_status_release(&before);
    lx_status_release(&after);
    json_decref(pod);
    xfree(dir);
    xfree(script);
    xfree(ran);
}

static void test_supervisor_death_fails_a_watched_pod(void **state)
{
    struct fx *f = *state;
    struct lx_status st;
    char *go = start_waiting(f, "crash", 0, &st);
    kill(st.pid, SIGKILL);
    const struct exec_report *r = wait_report(f, "crash", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 137);
    assert_non_null(strstr(r->message, "supervisor"));
    assert_int_equal(r->containers[0].state, EXEC_C_TERMINATED);
    assert_true(wait_for(proc_dead, &st.c[0].pid));
    lx_status_release(&st);
    xfree(go);
}

static void test_stop_on_free_leaves_nothing(void **state)
{
    struct fx *f = *state;
    struct lx_status st;
    char *go = start_waiting(f, "doomed", 0, &st);
    f->x->ops->free(f->x); /* stop-on-free: the fixture's default */
    fx_open(f);
    exec_reports_release(&f->seen);
    char *dir = pod_dir(f, "doomed");
    assert_false(lx_sup_is_locked(dir));
    assert_true(proc_dead(&st.pid));
    assert_true(wait_for(proc_dead, &st.c[0].pid));
    /* killed with the executor: nothing for the next one to adopt, and it
     * ran, so it is lost, not startable */
    assert_int_equal(adopt(f, "doomed"), CU_EEXIST);
    lx_status_release(&st);
    xfree(dir);
    xfree(go);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status_file_round_trip_and_bad_input, setup,
                                        teardown),
        cmocka_unit_test(test_outcome_follows_the_kubelet),
        cmocka_unit_test(test_spec_text_round_trip_and_bad_input),
        cmocka_unit_test_setup_teardown(test_a_trivial_pod_writes_few_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_supervisor_program_refuses_a_bad_spec, setup,
                                        teardown),
        cmocka_unit_test(test_missing_supervisor_program_is_named),
        cmocka_unit_test_setup_teardown(test_supervisors_come_from_the_fork_server_or_not, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_dead_fork_server_is_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_pod_is_adopted_after_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_exit_while_unwatched_is_picked_up, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_restart_counts_survive_adoption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_reaches_an_adopted_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_supervisor_is_not_found_and_leaves_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_pod_never_runs_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_supervisor_death_fails_a_watched_pod, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stop_on_free_leaves_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

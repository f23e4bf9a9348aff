/*
 * exec_probe: a scriptable process for the executor's tests. Runs its
 * arguments as a list of actions, in order:
 *   out TEXT / err TEXT   print a line to stdout / stderr
 *   env NAME              print "NAME=<value>" or "NAME unset"
 *   pwd                   print the working directory
 *   cat PATH              print a file
 *   sleep MS              sleep
 *   trap-term             ignore SIGTERM (only SIGKILL ends it)
 *   term-exit N           exit with N on SIGTERM
 *   pause                 wait for a signal forever
 *   metric JSON           append a line to $CUEUE_METRICS_FILE
 *   touch PATH            create an empty file (a readiness mark)
 *   fail-until PATH N     append a line to PATH; exit 1 while it has < N lines
 *   exit N                exit with N
 * Exits 0 after the last action; 2 on a bad script.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int term_code;

static void on_term(int sig)
{
    (void)sig;
    _exit(term_code);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

static int append_line(const char *path, const char *text)
{
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return -1;
    fprintf(f, "%s\n", text);
    fclose(f);
    return 0;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int ch;
    while (f && (ch = fgetc(f)) != EOF)
        n += ch == '\n';
    if (f)
        fclose(f);
    return n;
}

static int one(char **argv, int *i)
{
    const char *a = argv[*i], *x = argv[*i + 1];
    if (!strcmp(a, "pwd") || !strcmp(a, "trap-term") || !strcmp(a, "pause")) {
        char buf[4096];
        if (!strcmp(a, "pwd"))
            printf("%s\n", getcwd(buf, sizeof(buf)) ? buf : "?");
        else if (!strcmp(a, "trap-term"))
            signal(SIGTERM, SIG_IGN);
        else
            for (;;)
                pause();
        return 0;
    }
    if (!x)
        return 2;
    (*i)++;
    if (!strcmp(a, "out"))
        printf("%s\n", x);
    else if (!strcmp(a, "err"))
        fprintf(stderr, "%s\n", x);
    else if (!strcmp(a, "env"))
        getenv(x) ? printf("%s=%s\n", x, getenv(x)) : printf("%s unset\n", x);
    else if (!strcmp(a, "cat")) {
        FILE *f = fopen(x, "r");
        int ch;
        while (f && (ch = fgetc(f)) != EOF)
            putchar(ch);
        if (f)
            fclose(f);
    } else if (!strcmp(a, "sleep"))
        sleep_ms(atol(x));
    else if (!strcmp(a, "term-exit")) {
        term_code = atoi(x);
        signal(SIGTERM, on_term);
    } else if (!strcmp(a, "metric"))
        return append_line(getenv("CUEUE_METRICS_FILE"), x) ? 2 : 0;
    else if (!strcmp(a, "touch"))
        return append_line(x, "") ? 2 : 0;
    else if (!strcmp(a, "exit"))
        exit(atoi(x));
    else if (!strcmp(a, "fail-until") && argv[*i + 1]) {
        (*i)++;
        append_line(x, "run");
        if (count_lines(x) < atol(argv[*i]))
            exit(1);
    } else
        return 2;
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i < argc; i++) {
        if (one(argv, &i) != 0) {
            fprintf(stderr, "exec_probe: bad action at %s\n", argv[i]);
            return 2;
        }
    }
    return 0;
}

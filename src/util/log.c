/* log: stderr logging for the edges (see log.h). */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* read and set by every thread (set lazily from CUEUE_LOG): atomic */
static _Atomic int cur_level = -1;

static void init_level(void)
{
    if (cur_level >= 0)
        return;
    const char *e = getenv("CUEUE_LOG");
    cur_level = LOG_INFO;
    if (e && !strcmp(e, "debug"))
        cur_level = LOG_DEBUG;
    else if (e && !strcmp(e, "warn"))
        cur_level = LOG_WARN;
    else if (e && !strcmp(e, "error"))
        cur_level = LOG_ERROR;
}

void log_set_level(enum log_level level) { cur_level = (int)level; }

enum log_level log_get_level(void)
{
    init_level();
    return (enum log_level)cur_level;
}

void log_msg(enum log_level level, const char *subsys, const char *fmt, ...)
{
    init_level();
    if ((int)level > cur_level)
        return;
    static const char *names[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof(when), "%H:%M:%S", &tm);
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s.%03ld %-5s %s: %s\n", when, ts.tv_nsec / 1000000L,
            names[level], subsys, line);
}

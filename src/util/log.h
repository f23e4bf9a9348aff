/*
 * log: leveled diagnostics to stderr for the edges (server, CLI, executor).
 * The pure core (engine, object logic) never logs: it returns decisions.
 */
#ifndef CUEUE_UTIL_LOG_H
#define CUEUE_UTIL_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Set the most verbose level printed (default LOG_INFO; env CUEUE_LOG=debug). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Print "<time> <LEVEL> <subsys>: <message>" to stderr if level is enabled. */
void log_msg(enum log_level level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_error(sub, ...) log_msg(LOG_ERROR, sub, __VA_ARGS__)
#define log_warn(sub, ...) log_msg(LOG_WARN, sub, __VA_ARGS__)
#define log_info(sub, ...) log_msg(LOG_INFO, sub, __VA_ARGS__)
#define log_debug(sub, ...) log_msg(LOG_DEBUG, sub, __VA_ARGS__)

#endif

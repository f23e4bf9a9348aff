/*
 * clock: the only way cueue code reads time. `cueue server` uses the real
 * clock; `cueue sim` and unit tests use a virtual one they advance
 * themselves, so the same control plane jumps through a week in
 * milliseconds. Times are int64 milliseconds since the Unix epoch.
 */
#ifndef CUEUE_UTIL_CLOCK_H
#define CUEUE_UTIL_CLOCK_H

#include <stdint.h>

struct clk {
    /* Current time in ms since the epoch. Must be monotonic non-decreasing
     * for the virtual clock; the real clock reads CLOCK_REALTIME. */
    int64_t (*now_ms)(struct clk *c);
    void *ctx; /* implementation data */
};

/* The process-wide real clock (CLOCK_REALTIME). Borrowed; never freed. */
struct clk *clk_real(void);

/* A virtual clock starting at start_ms; advance it with clk_virtual_set. */
struct clk_virtual {
    struct clk clk;  /* first member: pass &v->clk where a struct clk* is wanted */
    int64_t now_ms;
};
/* Initialise v to start_ms (no allocation). */
void clk_virtual_init(struct clk_virtual *v, int64_t start_ms);
/* Move v forward to t_ms (a t_ms in the past is ignored: time never goes back). */
void clk_virtual_set(struct clk_virtual *v, int64_t t_ms);

static inline int64_t clk_now(struct clk *c) { return c->now_ms(c); }

/* Seconds on the process's monotonic clock (CLOCK_MONOTONIC; the origin is
 * arbitrary, so only differences mean anything): for timing real work, such
 * as how long one admission attempt took. Always real time, also in
 * `cueue sim` and the tests, so it must never decide anything the control
 * plane does. */
double clk_mono_s(void);

#endif

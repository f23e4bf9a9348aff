/* clock: the real clock and the virtual clock (see clock.h). */
#include "util/clock.h"

#include <time.h>

static int64_t real_now(struct clk *c)
{
    (void)c;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct clk real_clock = {real_now, NULL};

struct clk *clk_real(void) { return &real_clock; }

double clk_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t virt_now(struct clk *c)
{
    return ((struct clk_virtual *)c)->now_ms;
}

void clk_virtual_init(struct clk_virtual *v, int64_t start_ms)
{
    v->clk.now_ms = virt_now;
    v->clk.ctx = v;
    v->now_ms = start_ms;
}

void clk_virtual_set(struct clk_virtual *v, int64_t t_ms)
{
    if (t_ms > v->now_ms)
        v->now_ms = t_ms;
}

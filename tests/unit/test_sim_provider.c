/* Unit tests for the simulator's capacity model (src/provider/sim.c):
 * provisioning delays, stockout windows (bounded and endless), revocations,
 * and pools that fall back to their NodePool spec.capacity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "provider/provider.h"
#include "util/xalloc.h"

static json_t *pool(const char *name)
{
    return json_pack("{s:{s:s}, s:{s:{s:s}}}", "metadata", "name", name, "spec", "config",
                     "machineType", "ct6e-standard-4t");
}

static int64_t ask(struct prov *p, json_t *np, int64_t now, char *msg, size_t len)
{
    int64_t at = -1;
    assert_int_equal(p->ops->request(p, np, 4, 1, now, &at, msg, len), 0);
    json_decref(np);
    return at;
}

static void test_delay_is_added_to_the_request_time(void **state)
{
    (void)state;
    struct prov_sim_pool pools[] = {{.name = "dws", .delay_ms = 30000}};
    struct prov *p = prov_sim_new(pools, 1);
    char msg[128];
    assert_int_equal(ask(p, pool("dws"), 1000, msg, sizeof(msg)), 31000);
    assert_string_equal(msg, "");
    p->ops->free(p);
}

static void test_request_inside_a_stockout_waits_for_its_end(void **state)
{
    (void)state;
    struct prov_sim_window w[] = {{60000, 120000}, {10000, 60000}};
    struct prov_sim_pool pools[] = {{.name = "dws", .delay_ms = 5000, .stockouts = w,
                                     .n_stockouts = 2}};
    struct prov *p = prov_sim_new(pools, 1);
    char msg[128];
    /* before the windows: only the delay */
    assert_int_equal(ask(p, pool("dws"), 0, msg, sizeof(msg)), 5000);
    /* inside the first: chained windows end at 120 s */
    assert_int_equal(ask(p, pool("dws"), 20000, msg, sizeof(msg)), 125000);
    /* the end of a window is outside it */
    assert_int_equal(ask(p, pool("dws"), 120000, msg, sizeof(msg)), 125000);
    p->ops->free(p);
}

static void test_endless_stockout_is_never_with_a_message(void **state)
{
    (void)state;
    struct prov_sim_window w[] = {{0, PROV_NEVER}};
    struct prov_sim_pool pools[] = {{.name = "dws", .stockouts = w, .n_stockouts = 1}};
    struct prov *p = prov_sim_new(pools, 1);
    char msg[128];
    assert_true(ask(p, pool("dws"), 0, msg, sizeof(msg)) == PROV_NEVER);
    assert_string_equal(msg, "no capacity for ct6e-standard-4t in pool dws");
    p->ops->free(p);
}

static void test_unlisted_pools_follow_their_spec_capacity(void **state)
{
    (void)state;
    struct prov *p = prov_sim_new(NULL, 0);
    char msg[128];
    assert_int_equal(ask(p, pool("plain"), 7, msg, sizeof(msg)), 7);
    json_t *np = pool("slow");
    json_object_set_new(json_object_get(np, "spec"), "capacity",
                        json_pack("{s:s, s:i}", "mode", "Delayed", "delaySeconds", 90));
    assert_int_equal(ask(p, np, 1000, msg, sizeof(msg)), 91000);
    np = pool("gone");
    json_object_set_new(json_object_get(np, "spec"), "capacity", json_pack("{s:s}", "mode",
                                                                           "Stockout"));
    assert_true(ask(p, np, 0, msg, sizeof(msg)) == PROV_NEVER);
    assert_string_equal(msg, "no capacity for ct6e-standard-4t in pool gone");
    assert_true(p->ops->next_deadline(p) == PROV_NEVER);
    p->ops->free(p);
}

static void test_revocations_are_reported_once_in_time_order(void **state)
{
    (void)state;
    struct prov_sim_revocation ra[] = {{50000, 2}, {10000, 0}};
    struct prov_sim_revocation rb[] = {{10000, 1}};
    struct prov_sim_pool pools[] = {
        {.name = "a", .revocations = ra, .n_revocations = 2},
        {.name = "b", .revocations = rb, .n_revocations = 1},
    };
    struct prov *p = prov_sim_new(pools, 2);
    struct prov_events ev = {0};
    assert_int_equal(p->ops->next_deadline(p), 10000);
    assert_int_equal(p->ops->poll(p, 9999, &ev), 0);
    assert_int_equal(p->ops->poll(p, 10000, &ev), 2);
    assert_string_equal(ev.items[0].pool, "a");
    assert_int_equal(ev.items[0].n_nodes, 0);
    assert_string_equal(ev.items[1].pool, "b");
    assert_int_equal(ev.items[1].n_nodes, 1);
    assert_string_equal(ev.items[1].reason, "CapacityRevoked");
    assert_int_equal(ev.items[1].at_ms, 10000);
    assert_int_equal(p->ops->next_deadline(p), 50000);
    assert_int_equal(p->ops->poll(p, 10000, &ev), 0);
    assert_int_equal(p->ops->poll(p, 60000, &ev), 1);
    assert_int_equal(ev.items[2].n_nodes, 2);
    assert_true(p->ops->next_deadline(p) == PROV_NEVER);
    for (size_t i = 0; i < ev.n; i++) {
        xfree(ev.items[i].pool);
        xfree(ev.items[i].reason);
        xfree(ev.items[i].message);
    }
    xfree(ev.items);
    p->ops->free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_is_added_to_the_request_time),
        cmocka_unit_test(test_request_inside_a_stockout_waits_for_its_end),
        cmocka_unit_test(test_endless_stockout_is_never_with_a_message),
        cmocka_unit_test(test_unlisted_pools_follow_their_spec_capacity),
        cmocka_unit_test(test_revocations_are_reported_once_in_time_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

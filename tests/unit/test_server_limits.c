/* Unit tests of the connection-limit accounting (src/server/limits.c):
 * per-client and total limits, streams moving out of the connection count
 * and back, entries dropped when a client has nothing open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "server/srv-int.h"

static struct srv_conn_table *table(unsigned conns, unsigned per_client, unsigned watches,
                                    unsigned watches_per_client)
{
    struct srv_limits l;
    srv_limits_defaults(&l);
    l.max_connections = conns;
    l.max_connections_per_client = per_client;
    l.max_watches = watches;
    l.max_watches_per_client = watches_per_client;
    return srv_conn_table_new(&l);
}

static void counts(struct srv_conn_table *t, const char *client, unsigned want_conns,
                   unsigned want_watches)
{
    unsigned c, w;
    srv_conn_counts(t, client, &c, &w);
    assert_int_equal(c, want_conns);
    assert_int_equal(w, want_watches);
}

static void test_defaults_are_documented_values(void **state)
{
    (void)state;
    struct srv_limits l;
    srv_limits_defaults(&l);
    assert_int_equal(l.max_connections, 4096);
    assert_int_equal(l.max_connections_per_client, 512);
    assert_int_equal(l.max_watches, 10000);
    assert_int_equal(l.max_watches_per_client, 4096);
    assert_int_equal(l.max_body_bytes, 3 << 20);
    assert_int_equal(l.request_timeout_ms, 60000);
    assert_int_equal(l.idle_timeout_s, 120);
    assert_true(l.threads >= 1);
}

static void test_per_client_limit_refuses_only_that_client(void **state)
{
    (void)state;
    struct srv_conn_table *t = table(100, 2, 100, 100);
    srv_conn_opened(t, "10.0.0.1");
    srv_conn_opened(t, "10.0.0.1");
    assert_null(srv_conn_check(t, "10.0.0.1"));
    srv_conn_opened(t, "10.0.0.1"); /* the third one is over */
    assert_string_equal(srv_conn_check(t, "10.0.0.1"), "--max-connections-per-client");
    srv_conn_opened(t, "10.0.0.2");
    assert_null(srv_conn_check(t, "10.0.0.2"));
    srv_conn_closed(t, "10.0.0.1", false);
    assert_null(srv_conn_check(t, "10.0.0.1"));
    counts(t, "10.0.0.1", 2, 0);
    counts(t, NULL, 3, 0);
    srv_conn_table_free(t);
}

static void test_total_limit(void **state)
{
    (void)state;
    struct srv_conn_table *t = table(2, 10, 100, 100);
    srv_conn_opened(t, "a");
    srv_conn_opened(t, "b");
    assert_null(srv_conn_check(t, "b"));
    srv_conn_opened(t, "c");
    assert_string_equal(srv_conn_check(t, "c"), "--max-connections");
    srv_conn_closed(t, "a", false);
    assert_null(srv_conn_check(t, "c"));
    srv_conn_table_free(t);
}

static void test_watches_do_not_count_as_connections(void **state)
{
    (void)state;
    struct srv_conn_table *t = table(100, 1, 100, 100);
    /* a client with one connection that became a watch may open another
     * connection although its connection limit is 1 */
    srv_conn_opened(t, "w");
    assert_null(srv_watch_begin(t, "w"));
    counts(t, "w", 0, 1);
    srv_conn_opened(t, "w");
    assert_null(srv_conn_check(t, "w"));
    counts(t, NULL, 1, 1);
    /* the stream ends, the connection stays (keep-alive): it counts again */
    srv_watch_end(t, "w");
    counts(t, "w", 2, 0);
    assert_string_equal(srv_conn_check(t, "w"), "--max-connections-per-client");
    srv_conn_closed(t, "w", false);
    srv_conn_closed(t, "w", false);
    counts(t, "w", 0, 0);
    counts(t, NULL, 0, 0);
    srv_conn_table_free(t);
}

static void test_watch_limits_take_nothing_when_full(void **state)
{
    (void)state;
    struct srv_conn_table *t = table(100, 100, 3, 2);
    for (int i = 0; i < 3; i++)
        srv_conn_opened(t, i < 2 ? "x" : "y");
    assert_null(srv_watch_begin(t, "x"));
    assert_null(srv_watch_begin(t, "x"));
    srv_conn_opened(t, "x");
    assert_string_equal(srv_watch_begin(t, "x"), "--max-watches-per-client");
    counts(t, "x", 1, 2); /* the refused one still counts as a connection */
    assert_null(srv_watch_begin(t, "y"));
    srv_conn_opened(t, "z");
    assert_string_equal(srv_watch_begin(t, "z"), "--max-watches");
    counts(t, NULL, 2, 3);
    /* a stream closed while streaming gives its watch slot back */
    srv_conn_closed(t, "y", true);
    counts(t, "y", 0, 0);
    assert_null(srv_watch_begin(t, "z"));
    srv_conn_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_documented_values),
        cmocka_unit_test(test_per_client_limit_refuses_only_that_client),
        cmocka_unit_test(test_total_limit),
        cmocka_unit_test(test_watches_do_not_count_as_connections),
        cmocka_unit_test(test_watch_limits_take_nothing_when_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

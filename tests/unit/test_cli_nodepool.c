/*
 * gcloud node-pool flags -> NodePool objects (docs/nodepool.md), with the
 * seed's exact flag sets for on-demand-pool and dws-pool, the cueue-only
 * --capacity flag, and clear errors naming the flag for bad values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static void assert_json(const json_t *got, const char *want_text)
{
    json_error_t e;
    json_t *want = json_loads(want_text, 0, &e);
    if (!want)
        fail_msg("bad fixture: %s", e.text);
    if (!json_equal(got, want)) {
        char *g = jx_dumps_sorted(got), *w = jx_dumps_sorted(want);
        fail_msg("got  %s\nwant %s", g, w);
    }
    json_decref(want);
}

/* The seed's step 2 flags (plan A). */
static void seed_common(struct cli_np_flags *f)
{
    cli__np_flags_init(f);
    f->machine_type = "ct6e-standard-4t";
    f->tpu_topology = "4x4";
    f->reservation_affinity = "none";
    f->autoscaling = 1;
    f->num_nodes = "0";
    f->min_nodes = "0";
    f->max_nodes = "4";
}

static void test_seed_on_demand_pool(void **state)
{
    (void)state;
    struct cli_np_flags f;
    char err[256] = "";
    seed_common(&f);
    json_t *o = cli__nodepool_from_flags("on-demand-pool", &f, err, sizeof(err));
    assert_non_null(o);
    assert_json(o, "{\"apiVersion\":\"cueue.dev/v1alpha1\",\"kind\":\"NodePool\","
                   "\"metadata\":{\"name\":\"on-demand-pool\"},"
                   "\"spec\":{\"config\":{\"machineType\":\"ct6e-standard-4t\","
                   "\"reservationAffinity\":{\"consumeReservationType\":\"NO_RESERVATION\"}},"
                   "\"placementPolicy\":{\"tpuTopology\":\"4x4\"},"
                   "\"autoscaling\":{\"enabled\":true,\"minNodeCount\":0,\"maxNodeCount\":4},"
                   "\"initialNodeCount\":0}}");
    json_decref(o);
}

static void test_seed_dws_pool(void **state)
{
    (void)state;
    struct cli_np_flags f;
    char err[256] = "";
    seed_common(&f);
    f.queued_provisioning = 1;
    f.flex_start = 1;
    json_t *o = cli__nodepool_from_flags("dws-pool", &f, err, sizeof(err));
    assert_non_null(o);
    assert_true(JX_BOOL(o, false, "spec", "config", "flexStart"));
    assert_true(JX_BOOL(o, false, "spec", "queuedProvisioning", "enabled"));
    /* the view describe projects over: get(config.flexStart) -> True */
    json_t *view = cli__nodepool_view(o);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    assert_int_equal(cli__gformat("get(config.flexStart)", view, &sb, err, sizeof(err)), 0);
    assert_string_equal(sb.buf, "True\n");
    sbuf_reset(&sb);
    assert_int_equal(cli__gformat("get(name)", view, &sb, err, sizeof(err)), 0);
    assert_string_equal(sb.buf, "dws-pool\n");
    sbuf_release(&sb);
    json_decref(view);
    json_decref(o);
}

static void test_negated_and_unset_flags(void **state)
{
    (void)state;
    struct cli_np_flags f;
    char err[256] = "";
    cli__np_flags_init(&f);
    f.autoscaling = 0;
    f.flex_start = 0;
    f.reservation_affinity = "ANY";
    json_t *o = cli__nodepool_from_flags("p", &f, err, sizeof(err));
    assert_json(o, "{\"apiVersion\":\"cueue.dev/v1alpha1\",\"kind\":\"NodePool\","
                   "\"metadata\":{\"name\":\"p\"},\"spec\":{\"config\":{\"flexStart\":false,"
                   "\"reservationAffinity\":{\"consumeReservationType\":\"ANY_RESERVATION\"}},"
                   "\"autoscaling\":{\"enabled\":false}}}");
    json_decref(o);
    cli__np_flags_init(&f);
    o = cli__nodepool_from_flags("bare", &f, err, sizeof(err));
    assert_json(o, "{\"apiVersion\":\"cueue.dev/v1alpha1\",\"kind\":\"NodePool\","
                   "\"metadata\":{\"name\":\"bare\"},\"spec\":{}}");
    json_decref(o);
}

static void test_capacity_labels_taints(void **state)
{
    (void)state;
    struct cli_np_flags f;
    char err[256] = "";
    cli__np_flags_init(&f);
    f.capacity = "delay:1m30s";
    f.node_labels = "team=a,tier=gold";
    f.node_taints = "dedicated=ml:NoSchedule,spot:PreferNoSchedule";
    json_t *o = cli__nodepool_from_flags("p", &f, err, sizeof(err));
    assert_non_null(o);
    assert_json(JX_GET(o, "spec"),
                "{\"capacity\":{\"mode\":\"Delayed\",\"delaySeconds\":90},"
                "\"config\":{\"labels\":{\"team\":\"a\",\"tier\":\"gold\"},"
                "\"taints\":[{\"key\":\"dedicated\",\"value\":\"ml\",\"effect\":\"NoSchedule\"},"
                "{\"key\":\"spot\",\"effect\":\"PreferNoSchedule\"}]}}");
    json_decref(o);
    static const char *const modes[][2] = {{"stockout", "Stockout"}, {"Immediate", "Immediate"}};
    for (int i = 0; i < 2; i++) {
        cli__np_flags_init(&f);
        f.capacity = modes[i][0];
        o = cli__nodepool_from_flags("p", &f, err, sizeof(err));
        assert_string_equal(JX_STR(o, "spec", "capacity", "mode"), modes[i][1]);
        assert_null(JX_GET(o, "spec", "capacity", "delaySeconds"));
        json_decref(o);
    }
}

static void expect_error(struct cli_np_flags *f, const char *fragment)
{
    char err[256] = "";
    json_t *o = cli__nodepool_from_flags("p", f, err, sizeof(err));
    assert_null(o);
    if (!strstr(err, fragment))
        fail_msg("error \"%s\" lacks \"%s\"", err, fragment);
}

/* Each bad value is refused naming its flag and the rule; counts above
 * GKE's 1,000 nodes per zone say they are too large. */
static void test_bad_values_name_the_flag(void **state)
{
    (void)state;
    static const struct {
        size_t field; /* offset of the const char * in struct cli_np_flags */
        const char *value;
        const char *fragment;
    } cases[] = {
        {offsetof(struct cli_np_flags, num_nodes), "-1", "--num-nodes: \"-1\""},
        {offsetof(struct cli_np_flags, max_nodes), "four", "--max-nodes"},
        {offsetof(struct cli_np_flags, reservation_affinity), "sometimes",
         "--reservation-affinity: \"sometimes\": must be one of"},
        {offsetof(struct cli_np_flags, capacity), "delay:soon", "--capacity"},
        {offsetof(struct cli_np_flags, node_taints), "k=v:Sometimes",
         "--node-taints: \"k=v:Sometimes\""},
        {offsetof(struct cli_np_flags, node_labels), "novalue", "--node-labels"},
        {offsetof(struct cli_np_flags, num_nodes), "99999999999",
         "invalid value for --num-nodes: \"99999999999\": must be at most 1000 (GKE allows at "
         "most 1,000 nodes per zone in a node pool)"},
        {offsetof(struct cli_np_flags, max_nodes), "1001", "--max-nodes: \"1001\": must be at most 1000"},
        {offsetof(struct cli_np_flags, min_nodes), "2147483648",
         "--min-nodes: \"2147483648\": must be at most 1000"},
        {offsetof(struct cli_np_flags, num_nodes), "", "--num-nodes: \"\": must be a non-negative integer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cli_np_flags f;
        cli__np_flags_init(&f);
        *(const char **)((char *)&f + cases[i].field) = cases[i].value;
        expect_error(&f, cases[i].fragment);
    }
    struct cli_np_flags f;
    char err[512];
    cli__np_flags_init(&f);
    f.num_nodes = "1000";
    f.max_nodes = "1000";
    json_t *o = cli__nodepool_from_flags("p", &f, err, sizeof(err));
    assert_non_null(o);
    assert_int_equal(JX_INT(o, 0, "spec", "initialNodeCount"), 1000);
    json_decref(o);
}

static void test_view_flattens_spec(void **state)
{
    (void)state;
    json_error_t e;
    json_t *pool = json_loads("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"initialNodeCount\":2},"
                              "\"status\":{\"nodeCount\":2}}", 0, &e);
    json_t *view = cli__nodepool_view(pool);
    assert_json(view, "{\"name\":\"x\",\"initialNodeCount\":2,\"status\":{\"nodeCount\":2}}");
    json_decref(view);
    json_decref(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_on_demand_pool),
        cmocka_unit_test(test_seed_dws_pool),
        cmocka_unit_test(test_negated_and_unset_flags),
        cmocka_unit_test(test_capacity_labels_taints),
        cmocka_unit_test(test_bad_values_name_the_flag),
        cmocka_unit_test(test_view_flattens_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Kueue Topology Aware Scheduling in the engine (src/engine/tas.c): a
 * Topology [block, hostname], a flavor with topologyName, nodes fed with
 * eng_set_nodes (10 cpu free each): block b1 = n1, n2; block b2 = n3, n4,
 * n5. Pods of 10 cpu, so one pod per node.
 */
#include "test_engine_fixture.h"

#define BLOCK "cloud.google.com/gce-topology-block"
#define HOST "kubernetes.io/hostname"

/* Feed nodes "name:block:cpu" separated by ';'. */
static void nodes(struct fx *f, const char *spec)
{
    char *items[16];
    size_t n = fx_split(f, spec, ';', items, 16);
    struct eng_node in[16];
    struct api_labels labels[16];
    struct api_reslist free[16];
    for (size_t i = 0; i < n; i++) {
        char *p[3];
        fx_split(f, items[i], ':', p, 3);
        char buf[256];
        snprintf(buf, sizeof(buf), BLOCK "=%s," HOST "=%s,pool=tas", p[1], p[0]);
        labels[i] = fx_labels(f, buf);
        snprintf(buf, sizeof(buf), "cpu=%s", p[2]);
        free[i] = fx_reslist(f, buf);
        in[i] = (struct eng_node){p[0], &labels[i], &free[i]};
    }
    eng_set_nodes(f->e, in, n);
}

static struct fx *cluster(bool with_plain)
{
    struct fx *f = fx_new(NULL);
    const char *levels[] = {BLOCK, HOST};
    eng_upsert_topology(f->e, "t", levels, 2);
    struct api_resource_flavor rf = {0};
    rf.name = fx_str(f, "tas");
    rf.node_labels = fx_labels(f, "pool=tas");
    rf.topology_name = fx_str(f, "t");
    eng_upsert_flavor(f->e, &rf);
    if (with_plain) {
        fx_flavor(f, "plain", "pool=plain");
        fx_cq(f, "cq", NULL, "tas:cpu=1000;plain:cpu=1000");
    } else {
        fx_cq(f, "cq", NULL, "tas:cpu=1000");
    }
    fx_ns(f, "default", NULL);
    fx_lq(f, "default", "lq", "cq");
    nodes(f, "n1:b1:10;n2:b1:10;n3:b2:10;n4:b2:10;n5:b2:10");
    return f;
}

static struct api_workload *job(struct fx *f, const char *name, int32_t count, int mode,
                                const char *level, int64_t created)
{
    struct api_workload *w = fx_wl(f, "default", name, "lq", 0, created);
    struct api_podset *p = fx_ps(f, w, "main", count, "cpu=10");
    p->topology_mode = (enum api_topology_mode)mode;
    p->topology_level = level ? fx_str(f, level) : NULL;
    return w;
}

static const struct api_topology_assignment *ta_of(const struct eng_decision *d)
{
    assert_non_null(d);
    return d->admission.podsets[0].topology;
}

/* "n1=1,n2=1": the hostname domains of ta with their counts. */
static void assert_hosts(const struct api_topology_assignment *ta, const char *want)
{
    assert_non_null(ta);
    assert_int_equal(ta->n_levels, 1);
    assert_string_equal(ta->levels[0], HOST);
    char got[256] = "";
    for (size_t d = 0; d < ta->n_domains; d++) {
        char one[64];
        snprintf(one, sizeof(one), "%s%s=%d", d ? "," : "", ta->domains[d].values[0],
                 ta->domains[d].count);
        strncat(got, one, sizeof(got) - strlen(got) - 1);
    }
    assert_string_equal(got, want);
}

static void required_takes_the_fullest_block_that_fits(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    fx_submit(f, job(f, "a", 2, TOPO_REQUIRED, BLOCK, 1000));
    fx_schedule(f);
    assert_hosts(ta_of(fx_find(f, ENG_RESERVE, "a")), "n1=1,n2=1");
    fx_free(f);
}

static void required_that_cannot_fit_waits_with_kueues_message(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    fx_submit(f, job(f, "a", 4, TOPO_REQUIRED, BLOCK, 1000));
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "a"));
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "a");
    assert_non_null(d);
    assert_string_equal(d->reason, "TopologyPlacementFailed");
    assert_string_equal(d->message, "couldn't assign flavors to pod set main: topology \"t\" "
                                    "allows to fit only 3 out of 4 pod(s)");
    fx_free(f);
}

/* An admitted assignment takes its domains; the next workload goes
 * elsewhere, and one that fits nowhere is retried when nodes change. */
static void admitted_assignments_count_and_node_changes_retry(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    fx_submit(f, job(f, "a", 3, TOPO_REQUIRED, BLOCK, 1000));
    fx_admit(f);
    assert_hosts(ta_of(fx_find(f, ENG_RESERVE, "a")), "n3=1,n4=1,n5=1");
    fx_submit(f, job(f, "b", 2, TOPO_REQUIRED, BLOCK, 2000));
    fx_submit(f, job(f, "c", 1, TOPO_REQUIRED, BLOCK, 3000));
    fx_admit(f);
    assert_hosts(ta_of(fx_find(f, ENG_RESERVE, "b")), "n1=1,n2=1");
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "c");
    assert_non_null(d);
    assert_string_equal(d->message, "couldn't assign flavors to pod set main: topology \"t\" "
                                    "doesn't allow to fit any of 1 pod(s)");
    nodes(f, "n1:b1:10;n2:b1:10;n3:b2:10;n4:b2:10;n5:b2:10;n6:b1:10");
    fx_schedule(f);
    assert_hosts(ta_of(fx_find(f, ENG_RESERVE, "c")), "n6=1");
    fx_free(f);
}

/* Capacity comes from the nodes as given (allocatable minus non-TAS pods):
 * with n3 half used, b2 holds only 2 and the 3-pod set waits. */
static void node_capacity_is_what_the_caller_gives(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    nodes(f, "n1:b1:10;n2:b1:10;n3:b2:5;n4:b2:10;n5:b2:10");
    fx_submit(f, job(f, "a", 3, TOPO_REQUIRED, BLOCK, 1000));
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_PENDING, "a"));
    fx_free(f);
}

static void preferred_spreads_when_no_block_fits(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    fx_submit(f, job(f, "a", 4, TOPO_PREFERRED, BLOCK, 1000));
    fx_schedule(f);
    assert_hosts(ta_of(fx_find(f, ENG_RESERVE, "a")), "n1=1,n3=1,n4=1,n5=1");
    fx_free(f);
}

/* No request on a TAS-only ClusterQueue: unconstrained (implicit default),
 * the least free domains first; with a plain flavor in the ClusterQueue a
 * pod set without a request gets no placement. */
static void implicit_default_only_on_tas_only_cluster_queues(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    fx_submit(f, job(f, "a", 2, TOPO_NONE, NULL, 1000));
    fx_schedule(f);
    assert_hosts(ta_of(fx_find(f, ENG_RESERVE, "a")), "n1=1,n2=1");
    fx_free(f);
    f = cluster(true);
    fx_submit(f, job(f, "a", 2, TOPO_NONE, NULL, 1000));
    fx_schedule(f);
    assert_null(ta_of(fx_find(f, ENG_RESERVE, "a")));
    fx_free(f);
}

static void unknown_level_fails(void **state)
{
    (void)state;
    struct fx *f = cluster(false);
    fx_submit(f, job(f, "a", 1, TOPO_REQUIRED, "example.com/rack", 1000));
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "a");
    assert_non_null(d);
    assert_string_equal(d->message, "couldn't assign flavors to pod set main: no requested "
                                    "topology level: example.com/rack");
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(required_takes_the_fullest_block_that_fits),
        cmocka_unit_test(required_that_cannot_fit_waits_with_kueues_message),
        cmocka_unit_test(admitted_assignments_count_and_node_changes_retry),
        cmocka_unit_test(node_capacity_is_what_the_caller_gives),
        cmocka_unit_test(preferred_spreads_when_no_block_fits),
        cmocka_unit_test(implicit_default_only_on_tas_only_cluster_queues),
        cmocka_unit_test(unknown_level_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests: the machine catalog, GKE allocatable and TPU slice arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "api/schema.h"
#include "provider/catalog.h"

static void test_machine_types_have_published_shapes(void **state)
{
    (void)state;
    const struct prov_machine *m = prov_machine_find("n2-standard-16");
    assert_non_null(m);
    assert_int_equal(m->vcpus, 16);
    assert_int_equal(m->memory_mib, 64 * 1024);
    assert_string_equal(m->family, "n2");
    assert_null(m->tpu);

    m = prov_machine_find("ct6e-standard-4t");
    assert_non_null(m);
    assert_int_equal(m->vcpus, 180);
    assert_int_equal(m->memory_mib, 720 * 1024);
    assert_int_equal(m->accel_count, 4);
    assert_string_equal(m->tpu->name, "v6e");
    assert_string_equal(m->tpu->node_label, "tpu-v6e-slice");

    m = prov_machine_find("ct5lp-hightpu-8t");
    assert_int_equal(m->accel_count, 8);
    assert_string_equal(m->tpu->node_label, "tpu-v5-lite-podslice");
    assert_string_equal(prov_machine_find("ct5p-hightpu-4t")->tpu->node_label, "tpu-v5p-slice");
    assert_string_equal(prov_machine_find("g2-standard-4")->gpu, "nvidia-l4");

    const char *required[] = {"n2-standard-4", "n2-standard-8", "n2-standard-32",
                              "e2-standard-4", "e2-standard-8", "e2-standard-16",
                              "ct6e-standard-1t", "ct6e-standard-8t", "ct5lp-hightpu-1t",
                              "ct5lp-hightpu-4t", "a2-highgpu-1g"};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        assert_non_null(prov_machine_find(required[i]));
    assert_null(prov_machine_find("n2-standard-17"));
    assert_null(prov_machine_find(NULL));
}

static void test_listing_visits_every_machine_once(void **state)
{
    (void)state;
    size_t n = 0;
    for (const struct prov_machine *m; (m = prov_machine_at(n)); n++)
        assert_ptr_equal(prov_machine_find(m->name), m);
    assert_true(n >= 17);
}

static void test_cpu_reservation_follows_gke_formula(void **state)
{
    (void)state;
    assert_int_equal(prov_cpu_reserved_milli(1), 60);
    assert_int_equal(prov_cpu_reserved_milli(2), 70);
    assert_int_equal(prov_cpu_reserved_milli(4), 80);
    assert_int_equal(prov_cpu_reserved_milli(16), 110);
    assert_int_equal(prov_cpu_reserved_milli(32), 150);
    assert_int_equal(prov_cpu_reserved_milli(5), 83); /* 82.5 rounded up */
    assert_int_equal(prov_cpu_reserved_milli(180), 520);
}

static void test_memory_reservation_follows_gke_formula(void **state)
{
    (void)state;
    const int64_t gib = (int64_t)1 << 30, mib = (int64_t)1 << 20;
    /* 512 MiB machine: 255 MiB + eviction */
    assert_int_equal(prov_memory_reserved_bytes(512 * mib), 355 * mib);
    /* 4 GiB: 25% = 1 GiB */
    assert_int_equal(prov_memory_reserved_bytes(4 * gib), gib + 100 * mib);
    /* 64 GiB: 1 + 0.8 + 0.8 + 2.88 GiB = 5.48 GiB, + 100 MiB */
    int64_t r = prov_memory_reserved_bytes(64 * gib);
    int64_t expect = gib + 4 * gib / 5 + 8 * gib / 10 + 48 * gib * 6 / 100 + 100 * mib;
    assert_true(r >= expect - 4 && r <= expect + 4);
}

static void test_n2_standard_16_allocatable(void **state)
{
    (void)state;
    struct prov_node_shape s;
    prov_node_shape(prov_machine_find("n2-standard-16"), &s);
    assert_int_equal(s.cpu_milli, 16000);
    assert_int_equal(s.alloc_cpu_milli, 15890);
    assert_int_equal(s.memory_bytes, (int64_t)64 << 30);
    /* about 58.4 GiB, whole KiB */
    assert_int_equal(s.alloc_memory_bytes % 1024, 0);
    assert_true(s.alloc_memory_bytes > (int64_t)(58.4 * (1 << 30)) - (1 << 24));
    assert_true(s.alloc_memory_bytes < (int64_t)(58.5 * (1 << 30)));
    assert_int_equal(s.pods, 110);
    assert_int_equal(s.accel, 0);
    assert_null(s.accel_resource);

    prov_node_shape(prov_machine_find("ct6e-standard-4t"), &s);
    assert_int_equal(s.accel, 4);
    assert_string_equal(s.accel_resource, "google.com/tpu");
    assert_int_equal(s.alloc_cpu_milli, 180000 - 520);
    prov_node_shape(prov_machine_find("a2-highgpu-1g"), &s);
    assert_string_equal(s.accel_resource, "nvidia.com/gpu");
}

static void test_v6e_4x4_is_four_hosts(void **state)
{
    (void)state;
    struct prov_slice s;
    char err[256];
    assert_int_equal(prov_slice_for(prov_machine_find("ct6e-standard-4t"), "4x4", &s, err,
                                    sizeof(err)), 0);
    assert_int_equal(s.chips, 16);
    assert_int_equal(s.hosts, 4);
    assert_string_equal(s.topology, "4x4");
    assert_string_equal(s.accelerator_type, "v6e-16");
    char b[16];
    prov_bounds_str(s.host_bounds, b, sizeof(b));
    assert_string_equal(b, "2,2,1");
    prov_bounds_str(s.chip_bounds, b, sizeof(b));
    assert_string_equal(b, "2,2,1");
}

static void test_slice_shapes_across_generations(void **state)
{
    (void)state;
    struct prov_slice s;
    char err[256], b[16];
    /* single-host default topology */
    assert_int_equal(prov_slice_for(prov_machine_find("ct6e-standard-4t"), NULL, &s, err,
                                    sizeof(err)), 0);
    assert_string_equal(s.topology, "2x2");
    assert_int_equal(s.hosts, 1);
    assert_string_equal(s.accelerator_type, "v6e-4");
    /* 2x4 on 4-chip VMs: 2 hosts */
    assert_int_equal(prov_slice_for(prov_machine_find("ct6e-standard-4t"), "2x4", &s, err,
                                    sizeof(err)), 0);
    assert_int_equal(s.hosts, 2);
    prov_bounds_str(s.host_bounds, b, sizeof(b));
    assert_string_equal(b, "1,2,1");
    /* 2x4 on an 8-chip VM: one host */
    assert_int_equal(prov_slice_for(prov_machine_find("ct6e-standard-8t"), "2x4", &s, err,
                                    sizeof(err)), 0);
    assert_int_equal(s.hosts, 1);
    prov_bounds_str(s.chip_bounds, b, sizeof(b));
    assert_string_equal(b, "2,4,1");
    /* v5e names its accelerator type v5litepod */
    assert_int_equal(prov_slice_for(prov_machine_find("ct5lp-hightpu-4t"), "8x8", &s, err,
                                    sizeof(err)), 0);
    assert_int_equal(s.hosts, 16);
    assert_string_equal(s.accelerator_type, "v5litepod-64");
    /* v5p counts two TensorCores per chip */
    assert_int_equal(prov_slice_for(prov_machine_find("ct5p-hightpu-4t"), "2x2x2", &s, err,
                                    sizeof(err)), 0);
    assert_int_equal(s.chips, 8);
    assert_int_equal(s.hosts, 2);
    assert_string_equal(s.accelerator_type, "v5p-16");
    prov_bounds_str(s.host_bounds, b, sizeof(b));
    assert_string_equal(b, "1,1,2");
    /* 1-chip VM */
    assert_int_equal(prov_slice_for(prov_machine_find("ct6e-standard-1t"), "", &s, err,
                                    sizeof(err)), 0);
    assert_string_equal(s.topology, "1x1");
    assert_string_equal(s.accelerator_type, "v6e-1");
}

static void test_invalid_topologies_are_explained(void **state)
{
    (void)state;
    struct prov_slice s;
    char err[256];
    const struct prov_machine *v6e4 = prov_machine_find("ct6e-standard-4t");
    assert_int_not_equal(prov_slice_for(v6e4, "3x3", &s, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "\"3x3\" is not valid for TPU v6e"));
    assert_int_not_equal(prov_slice_for(v6e4, "2x2x2", &s, err, sizeof(err)), 0);
    assert_int_not_equal(prov_slice_for(v6e4, "4x", &s, err, sizeof(err)), 0);
    assert_int_not_equal(prov_slice_for(v6e4, "x4", &s, err, sizeof(err)), 0);
    assert_int_not_equal(prov_slice_for(v6e4, "1x1", &s, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "cannot be made of ct6e-standard-4t VMs"));
    /* 8-chip machines are single-host only */
    assert_int_not_equal(prov_slice_for(prov_machine_find("ct6e-standard-8t"), "4x4", &s, err,
                                        sizeof(err)), 0);
    assert_non_null(strstr(err, "single-host only"));
    /* 3-D generation needs three dimensions */
    assert_int_not_equal(prov_slice_for(prov_machine_find("ct5p-hightpu-4t"), "4x4", &s, err,
                                        sizeof(err)), 0);
    assert_int_not_equal(prov_slice_for(prov_machine_find("n2-standard-16"), "4x4", &s, err,
                                        sizeof(err)), 0);
    assert_non_null(strstr(err, "has no TPU"));
}

static void test_tpu_generation_by_node_label(void **state)
{
    (void)state;
    assert_string_equal(prov_tpu_gen_by_label("tpu-v6e-slice")->name, "v6e");
    assert_string_equal(prov_tpu_gen_by_label("tpu-v5-lite-podslice")->type_prefix,
                        "v5litepod");
    assert_null(prov_tpu_gen_by_label("tpu-v9-slice"));
}

static void test_admission_catalog_hook(void **state)
{
    (void)state;
    const struct api_machine_catalog *cat = prov_api_catalog();
    assert_true(cat->known("ct6e-standard-4t"));
    assert_false(cat->known("ct6e-standard-5t"));
    int hosts = 0;
    assert_null(cat->check_topology("ct6e-standard-4t", "4x4", &hosts));
    assert_int_equal(hosts, 4);
    const char *why = cat->check_topology("ct6e-standard-4t", "3x3", &hosts);
    assert_non_null(why);
    assert_non_null(strstr(why, "not valid for TPU v6e"));
    assert_non_null(cat->check_topology("n2-standard-16", "2x2", &hosts));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_machine_types_have_published_shapes),
        cmocka_unit_test(test_listing_visits_every_machine_once),
        cmocka_unit_test(test_cpu_reservation_follows_gke_formula),
        cmocka_unit_test(test_memory_reservation_follows_gke_formula),
        cmocka_unit_test(test_n2_standard_16_allocatable),
        cmocka_unit_test(test_v6e_4x4_is_four_hosts),
        cmocka_unit_test(test_slice_shapes_across_generations),
        cmocka_unit_test(test_invalid_topologies_are_explained),
        cmocka_unit_test(test_tpu_generation_by_node_label),
        cmocka_unit_test(test_admission_catalog_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * catalog: machine types, GKE allocatable, TPU slices (see catalog.h).
 * The tables are static and sorted by family then size; nothing here
 * allocates.
 */
#include "provider/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/schema.h"
#include "util/err.h"

static const struct prov_tpu_gen tpu_v6e = {"v6e", "tpu-v6e-slice", "v6e", 1, 2};
static const struct prov_tpu_gen tpu_v5e = {"v5e", "tpu-v5-lite-podslice", "v5litepod", 1, 2};
static const struct prov_tpu_gen tpu_v5p = {"v5p", "tpu-v5p-slice", "v5p", 2, 3};
static const struct prov_tpu_gen tpu_v4 = {"v4", "tpu-v4-podslice", "v4", 2, 3};

static const struct prov_tpu_gen *const tpu_gens[] = {&tpu_v6e, &tpu_v5e, &tpu_v5p, &tpu_v4};

#define GIB(n) ((int64_t)(n) * 1024)

/* name, family, vCPU, memory MiB, accelerators, TPU generation, GPU */
static const struct prov_machine machines[] = {
    {"e2-standard-4", "e2", 4, GIB(16), 0, NULL, NULL},
    {"e2-standard-8", "e2", 8, GIB(32), 0, NULL, NULL},
    {"e2-standard-16", "e2", 16, GIB(64), 0, NULL, NULL},
    {"e2-standard-32", "e2", 32, GIB(128), 0, NULL, NULL},
    {"n2-standard-2", "n2", 2, GIB(8), 0, NULL, NULL},
    {"n2-standard-4", "n2", 4, GIB(16), 0, NULL, NULL},
    {"n2-standard-8", "n2", 8, GIB(32), 0, NULL, NULL},
    {"n2-standard-16", "n2", 16, GIB(64), 0, NULL, NULL},
    {"n2-standard-32", "n2", 32, GIB(128), 0, NULL, NULL},
    {"n2-standard-64", "n2", 64, GIB(256), 0, NULL, NULL},
    {"a2-highgpu-1g", "a2", 12, GIB(85), 1, NULL, "nvidia-tesla-a100"},
    {"a2-highgpu-2g", "a2", 24, GIB(170), 2, NULL, "nvidia-tesla-a100"},
    {"g2-standard-4", "g2", 4, GIB(16), 1, NULL, "nvidia-l4"},
    {"g2-standard-8", "g2", 8, GIB(32), 1, NULL, "nvidia-l4"},
    {"ct4p-hightpu-4t", "ct4p", 240, GIB(407), 4, &tpu_v4, NULL},
    {"ct5lp-hightpu-1t", "ct5lp", 24, GIB(48), 1, &tpu_v5e, NULL},
    {"ct5lp-hightpu-4t", "ct5lp", 112, GIB(192), 4, &tpu_v5e, NULL},
    {"ct5lp-hightpu-8t", "ct5lp", 224, GIB(384), 8, &tpu_v5e, NULL},
    {"ct5p-hightpu-4t", "ct5p", 208, GIB(448), 4, &tpu_v5p, NULL},
    {"ct6e-standard-1t", "ct6e", 44, GIB(176), 1, &tpu_v6e, NULL},
    {"ct6e-standard-4t", "ct6e", 180, GIB(720), 4, &tpu_v6e, NULL},
    {"ct6e-standard-8t", "ct6e", 180, GIB(1440), 8, &tpu_v6e, NULL},
};

#define N_MACHINES (sizeof(machines) / sizeof(machines[0]))

const struct prov_machine *prov_machine_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < N_MACHINES; i++)
        if (!strcmp(machines[i].name, name))
            return &machines[i];
    return NULL;
}

const struct prov_machine *prov_machine_at(size_t i)
{
    return i < N_MACHINES ? &machines[i] : NULL;
}

const struct prov_tpu_gen *prov_tpu_gen_by_label(const char *label)
{
    if (!label)
        return NULL;
    for (size_t i = 0; i < sizeof(tpu_gens) / sizeof(tpu_gens[0]); i++)
        if (!strcmp(tpu_gens[i]->node_label, label))
            return tpu_gens[i];
    return NULL;
}

int64_t prov_cpu_reserved_milli(int vcpus)
{
    /* in tenths of a milli-CPU so 0.25% of a core stays exact */
    int64_t tenths = 0;
    int64_t v = vcpus > 0 ? vcpus : 0;
    tenths += (v >= 1) * 600;                   /* 6% of the first core */
    tenths += (v >= 2) * 100;                   /* 1% of the second */
    tenths += (v > 4 ? 2 : (v > 2 ? v - 2 : 0)) * 50; /* 0.5% of cores 3-4 */
    tenths += (v > 4 ? v - 4 : 0) * 25;         /* 0.25% above 4 */
    return (tenths + 9) / 10;
}

int64_t prov_memory_reserved_bytes(int64_t cap)
{
    const int64_t gib = (int64_t)1 << 30, mib = (int64_t)1 << 20;
    const int64_t eviction = 100 * mib;
    if (cap < gib)
        return 255 * mib + eviction;
    /* (band upper bound, percent) */
    static const struct { int64_t upto_gib; int pct; } bands[] = {
        {4, 25}, {8, 20}, {16, 10}, {128, 6}, {INT64_MAX / ((int64_t)1 << 30), 2}};
    int64_t reserved = 0, lo = 0;
    for (size_t i = 0; i < sizeof(bands) / sizeof(bands[0]) && cap > lo; i++) {
        int64_t hi = bands[i].upto_gib * gib;
        int64_t part = (cap < hi ? cap : hi) - lo;
        reserved += part / 100 * bands[i].pct + part % 100 * bands[i].pct / 100;
        lo = hi;
    }
    return reserved + eviction;
}

void prov_node_shape(const struct prov_machine *m, struct prov_node_shape *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu_milli = (int64_t)m->vcpus * 1000;
    out->memory_bytes = m->memory_mib << 20;
    out->alloc_cpu_milli = out->cpu_milli - prov_cpu_reserved_milli(m->vcpus);
    int64_t mem = out->memory_bytes - prov_memory_reserved_bytes(out->memory_bytes);
    out->alloc_memory_bytes = mem > 0 ? mem / 1024 * 1024 : 0;
    out->pods = PROV_PODS_PER_NODE;
    out->accel = m->accel_count;
    if (m->accel_count > 0)
        out->accel_resource = m->tpu ? PROV_TPU_RESOURCE : PROV_GPU_RESOURCE;
}

/* "AxB" or "AxBxC" with positive dimensions; 0 or CU_EINVAL. */
static int parse_topology(const char *text, struct prov_slice *s)
{
    s->dims[0] = s->dims[1] = s->dims[2] = 1;
    s->n_dims = 0;
    const char *p = text;
    while (*p) {
        if (s->n_dims == 3 || *p < '1' || *p > '9')
            return CU_EINVAL;
        char *end;
        long v = strtol(p, &end, 10);
        if (v <= 0 || v > 4096)
            return CU_EINVAL;
        s->dims[s->n_dims++] = (int)v;
        if (*end == 'x' && end[1])
            p = end + 1;
        else if (*end == '\0')
            p = end;
        else
            return CU_EINVAL;
    }
    return s->n_dims >= 2 ? 0 : CU_EINVAL;
}

static bool is_pow2_upto(int v, int max)
{
    return v >= 1 && v <= max && (v & (v - 1)) == 0;
}

/* Topology shapes a generation supports (see catalog.h). */
static bool gen_allows(const struct prov_tpu_gen *g, const struct prov_slice *s)
{
    if (s->n_dims != g->dims)
        return false;
    if (g->dims == 2) {
        int a = s->dims[0], b = s->dims[1];
        return is_pow2_upto(a, 16) && is_pow2_upto(b, 16) && (a == b || (a >= 2 && b == 2 * a));
    }
    for (int i = 0; i < 3; i++) {
        int d = s->dims[i];
        if (!(is_pow2_upto(d, 4) || d % 4 == 0))
            return false;
    }
    return true;
}

static void chips_per_host_bounds(int chips, int out[3])
{
    out[2] = 1;
    switch (chips) {
    case 1: out[0] = 1; out[1] = 1; break;
    case 2: out[0] = 1; out[1] = 2; break;
    case 8: out[0] = 2; out[1] = 4; break;
    default: out[0] = 2; out[1] = 2; break; /* 4 chips: a 2x2 host */
    }
}

static const char *default_topology(const struct prov_machine *m)
{
    switch (m->accel_count) {
    case 1: return m->tpu->dims == 3 ? "1x1x1" : "1x1";
    case 8: return "2x4";
    default: return m->tpu->dims == 3 ? "2x2x1" : "2x2";
    }
}

int prov_slice_for(const struct prov_machine *m, const char *topology, struct prov_slice *s,
                   char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (!m->tpu) {
        snprintf(err, errlen, "machine type %s has no TPU", m->name);
        return CU_EINVAL;
    }
    const char *text = topology && topology[0] ? topology : default_topology(m);
    if (parse_topology(text, s) != 0 || !gen_allows(m->tpu, s)) {
        snprintf(err, errlen, "TPU topology \"%s\" is not valid for TPU %s (%s)", text,
                 m->tpu->name,
                 m->tpu->dims == 2 ? "supported: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"
                                   : "three dimensions, each 1, 2, 4 or a multiple of 4");
        return CU_EINVAL;
    }
    s->chips = s->dims[0] * s->dims[1] * s->dims[2];
    int per_vm = m->accel_count;
    bool single_host_only = per_vm != 4;
    if (s->chips % per_vm != 0 || (single_host_only && s->chips != per_vm)) {
        snprintf(err, errlen,
                 "TPU topology \"%s\" (%d chips) cannot be made of %s VMs (%d chips each%s)", text,
                 s->chips, m->name, per_vm, single_host_only ? ", single-host only" : "");
        return CU_EINVAL;
    }
    s->hosts = s->chips / per_vm;
    chips_per_host_bounds(s->hosts == 1 ? s->chips : per_vm, s->chip_bounds);
    for (int i = 0; i < 3; i++) {
        if (s->hosts == 1) {
            s->host_bounds[i] = 1;
            continue;
        }
        if (s->dims[i] % s->chip_bounds[i] != 0) {
            snprintf(err, errlen, "TPU topology \"%s\" does not divide into %dx%d-chip hosts",
                     text, s->chip_bounds[0], s->chip_bounds[1]);
            return CU_EINVAL;
        }
        s->host_bounds[i] = s->dims[i] / s->chip_bounds[i];
    }
    if (s->n_dims == 2)
        snprintf(s->topology, sizeof(s->topology), "%dx%d", s->dims[0], s->dims[1]);
    else
        snprintf(s->topology, sizeof(s->topology), "%dx%dx%d", s->dims[0], s->dims[1],
                 s->dims[2]);
    snprintf(s->accelerator_type, sizeof(s->accelerator_type), "%s-%d", m->tpu->type_prefix,
             s->chips * m->tpu->cores_per_chip);
    return 0;
}

void prov_bounds_str(const int b[3], char *out, size_t outlen)
{
    snprintf(out, outlen, "%d,%d,%d", b[0], b[1], b[2]);
}

static bool api_known(const char *machine_type)
{
    return prov_machine_find(machine_type) != NULL;
}

static const char *api_check_topology(const char *machine_type, const char *topology,
                                      int *hosts_per_slice)
{
    static _Thread_local char why[256];
    const struct prov_machine *m = prov_machine_find(machine_type);
    struct prov_slice s;
    *hosts_per_slice = 1;
    if (!m)
        return NULL; /* reported as an unknown machine type */
    if (prov_slice_for(m, topology, &s, why, sizeof(why)) != 0)
        return why;
    *hosts_per_slice = s.hosts;
    return NULL;
}

const struct api_machine_catalog *prov_api_catalog(void)
{
    static const struct api_machine_catalog cat = {api_known, api_check_topology};
    return &cat;
}

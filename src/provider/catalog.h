/*
 * catalog: the machine types node pools are made of, with the shapes the
 * cloud publishes (vCPUs, memory, accelerator chips per VM, TPU generation),
 * the allocatable resources GKE's kubelet reservations leave on a node, and
 * the TPU slice arithmetic (topology -> chips -> VMs, the accelerator-type
 * and bounds strings GKE's TPU device plugin hands to pods).
 *
 * Sources: Compute Engine machine-type tables (memory in GiB as the API's
 * memoryMb reports it), GKE's node allocatable formula, the TPU v5e/v5p/v6e
 * topology tables and GKE's TPU labels (docs/nodes.md restates them).
 *
 * Pure: static tables and arithmetic, no I/O. Every returned pointer into
 * the catalog is static and lives for the whole process.
 */
#ifndef CUEUE_PROVIDER_CATALOG_H
#define CUEUE_PROVIDER_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROV_PODS_PER_NODE 110 /* kubelet's default maxPods, as on GKE Standard */
#define PROV_TPU_RESOURCE "google.com/tpu"
#define PROV_GPU_RESOURCE "nvidia.com/gpu"
#define PROV_TPU_METRICS_PORT_BASE 8431 /* TPU_RUNTIME_METRICS_PORTS starts here */

/* A TPU generation. */
struct prov_tpu_gen {
    const char *name;           /* "v6e", "v5e", "v5p", "v4" */
    const char *node_label;     /* cloud.google.com/gke-tpu-accelerator value:
                                   "tpu-v6e-slice", "tpu-v5-lite-podslice", ... */
    const char *type_prefix;    /* TPU_ACCELERATOR_TYPE prefix: "v6e", "v5litepod" */
    int cores_per_chip;         /* TensorCores per chip (accelerator-type counts cores) */
    int dims;                   /* topology dimensions: 2 (v5e, v6e) or 3 (v4, v5p) */
};

/* One machine type. */
struct prov_machine {
    const char *name;           /* "n2-standard-16", "ct6e-standard-4t" */
    const char *family;         /* cloud.google.com/machine-family: "n2", "ct6e" */
    int vcpus;
    int64_t memory_mib;         /* GCE memoryMb */
    int accel_count;            /* TPU chips or GPUs per VM (0 = none) */
    const struct prov_tpu_gen *tpu; /* NULL unless a TPU machine */
    const char *gpu;            /* cloud.google.com/gke-accelerator value, or NULL */
};

/* The machine type called name, or NULL when the catalog has none. */
const struct prov_machine *prov_machine_find(const char *name);
/* The i-th machine type (catalog order), NULL past the end: for listings. */
const struct prov_machine *prov_machine_at(size_t i);
/* The TPU generation whose node label (cloud.google.com/gke-tpu-accelerator)
 * is label, or NULL. */
const struct prov_tpu_gen *prov_tpu_gen_by_label(const char *label);

/* GKE's CPU reservation for a node with vcpus cores, in milli-CPU: 6% of
 * the first core, 1% of the second, 0.5% of cores 3-4, 0.25% of each core
 * above 4 (rounded up). n2-standard-16 -> 110. */
int64_t prov_cpu_reserved_milli(int vcpus);
/* GKE's memory reservation (bytes) for a node with capacity_bytes memory,
 * including the 100 MiB hard-eviction threshold: 255 MiB below 1 GiB, else
 * 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the
 * next 112 and 2% of the rest. */
int64_t prov_memory_reserved_bytes(int64_t capacity_bytes);

/* The node shape of a machine type (what a Node's status reports). */
struct prov_node_shape {
    int64_t cpu_milli;          /* capacity */
    int64_t memory_bytes;
    int64_t alloc_cpu_milli;    /* allocatable = capacity - reservations */
    int64_t alloc_memory_bytes; /* rounded down to KiB, as kubelet reports */
    int64_t pods;               /* 110 */
    int64_t accel;              /* google.com/tpu or nvidia.com/gpu count */
    const char *accel_resource; /* "google.com/tpu", "nvidia.com/gpu" or NULL */
};
/* Fill *out from m. */
void prov_node_shape(const struct prov_machine *m, struct prov_node_shape *out);

/* A TPU slice: the topology a pool's nodes share. */
struct prov_slice {
    int dims[3];                /* topology, missing dimensions = 1 */
    int n_dims;                 /* as written: 2 or 3 */
    int chips;                  /* product of the dimensions */
    int hosts;                  /* VMs (= Nodes) in one slice */
    int host_bounds[3];         /* TPU_HOST_BOUNDS */
    int chip_bounds[3];         /* TPU_CHIPS_PER_HOST_BOUNDS */
    char topology[32];          /* normalised "4x4" / "2x2x2" */
    char accelerator_type[32];  /* TPU_ACCELERATOR_TYPE, e.g. "v6e-16" */
};

/* The slice of machine type m with topology text (NULL or "" = the
 * machine's single-host default: 1x1, 2x2, 2x4 or 2x2x1). Validates the
 * topology for m's TPU generation (v5e/v6e: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8,
 * 8x16, 16x16; v4/v5p: three dimensions of 1, 2, 4 or multiples of 4) and
 * that whole VMs make it (1- and 8-chip machines are single-host only).
 * Returns 0, or CU_EINVAL with a message in err[0..errlen). m must be a
 * TPU machine type. */
int prov_slice_for(const struct prov_machine *m, const char *topology, struct prov_slice *out,
                   char *err, size_t errlen);

/* The catalog as API admission asks it (api/schema.h struct
 * api_machine_catalog: known machine types, TPU topology check with the
 * slice's hosts). Static; thread-safe (reasons are thread-local). Register
 * with api_set_machine_catalog at start-up (ctrl_new does). */
struct api_machine_catalog;
const struct api_machine_catalog *prov_api_catalog(void);

/* "a,b,c" text of a bounds triple into out (16 bytes suffice). */
void prov_bounds_str(const int b[3], char *out, size_t outlen);

#endif

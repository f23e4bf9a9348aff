/*
 * pool: the typed view of a NodePool (cueue.dev/v1alpha1, docs/nodepool.md)
 * that the node-pool controller, the autoscaler and the providers share:
 * the machine type resolved in the catalog, the TPU slice its topology
 * makes, autoscaling bounds, queued provisioning / flex-start, the local
 * provider's capacity setting. Decoding also checks the rules of
 * docs/nodepool.md, so a pool that reached the store without them (or whose
 * machine type left the catalog) gets a clear message instead of nodes.
 *
 * Pure: JSON in, struct out, no I/O.
 */
#ifndef CUEUE_PROVIDER_POOL_H
#define CUEUE_PROVIDER_POOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/types.h"
#include "provider/catalog.h"
#include "util/diag.h"

enum prov_capacity_mode {
    PROV_CAPACITY_IMMEDIATE, /* nodes are ready when asked for */
    PROV_CAPACITY_DELAYED,   /* ready delaySeconds after the request */
    PROV_CAPACITY_STOCKOUT,  /* never (until the setting changes) */
};

struct prov_pool {
    char *name;
    char *uid;                          /* "" when the object has none yet */
    const struct prov_machine *machine; /* never NULL after a successful decode */
    bool tpu;                           /* machine->tpu != NULL */
    struct prov_slice slice;            /* TPU pools only */
    int unit;                 /* nodes that come and go together: the slice's
                                 hosts for a multi-host TPU pool, else 1 */
    int32_t initial_nodes;    /* initialNodeCount */
    bool autoscaling;
    int32_t min_nodes, max_nodes; /* autoscaling bounds (0, 0 when disabled) */
    bool queued;              /* queuedProvisioning.enabled */
    bool flex_start;          /* config.flexStart */
    enum prov_capacity_mode capacity;
    int64_t capacity_delay_ms;
    int64_t scale_down_unneeded_ms; /* spec.scaleDownUnneededSeconds, -1 = default */
    struct api_labels labels;       /* config.labels */
    struct api_taint *taints;       /* config.taints */
    size_t n_taints;
    /* spec.provider slurm: the pool's nodes are this Slurm partition's
     * (spec.slurm.partition, docs/slurm.md); machine is then NULL and the
     * size/shape fields are unused. NULL for the local provider. */
    char *slurm_partition;
};

/* Decode and check a NodePool object (borrowed). A pool of provider slurm
 * needs only spec.slurm.partition (machine stays NULL). Returns 0, or CU_EINVAL
 * with every broken rule in d (field paths as in the object, e.g.
 * "spec.config.machineType"); *out is then released. Release with
 * prov_pool_release. */
int prov_pool_from_json(const json_t *pool, struct prov_pool *out, struct diag *d);
/* Free the contents; NULL-safe; idempotent. */
void prov_pool_release(struct prov_pool *p);

/* Parse a capacity.mode value ("Immediate", "Delayed", "Stockout"; NULL =
 * Immediate). Returns 0 or CU_EINVAL. */
int prov_capacity_mode_parse(const char *text, enum prov_capacity_mode *out);

#endif

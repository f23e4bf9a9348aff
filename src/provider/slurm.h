/*
 * provider/slurm: a Slurm partition's nodes as cueue sees them, read through
 * libslurm (never by parsing sinfo/scontrol output): what a NodePool of
 * provider slurm has as Nodes (ctrl/nodes/slurmpool.c, docs/slurm.md).
 *
 * A Slurm node maps to a Node: CPUs -> cpu, RealMemory (MiB) -> memory,
 * GRES counts tpu -> google.com/tpu and gpu -> nvidia.com/gpu, features ->
 * labels, and ready = usable for new work (not down, drained, draining,
 * failing, not responding, powering down, or in an unknown state; a
 * powered-down CLOUD node is not ready either, it can be powered up).
 */
#ifndef CUEUE_PROVIDER_SLURM_H
#define CUEUE_PROVIDER_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct node_info; /* libslurm's node_info_t (slurm/slurm.h) */

struct prov_slurm_node {
    char *name;              /* NodeName */
    char *addr;              /* NodeAddr, else the name */
    int64_t cpu_milli;       /* CPUs * 1000 */
    int64_t memory_bytes;    /* RealMemory (MiB) * 2^20 */
    int64_t tpu;             /* GRES tpu count (all types), 0 = none */
    int64_t gpu;             /* GRES gpu count (all types), 0 = none */
    char **features;         /* available features, in Slurm's order */
    size_t n_features;
    bool ready;              /* takes new work now */
    bool cloud;              /* State=CLOUD (power saving can start it) */
    bool powered_down;
    char *reason;            /* why down or drained, else NULL */
    const char *state;       /* a word for a person (static): "idle",
                                "allocated", "mixed", "drained", "draining",
                                "down", "not responding", "powered down",
                                "powering up", ... */
};

/* Fill *out from one libslurm node record (borrowed). Strings are copied
 * (free with prov_slurm_node_release). A GRES entry is NAME[:TYPE]:COUNT
 * with an optional "(...)" suffix; an entry without a count counts 1. */
void prov_slurm_node_from_info(const struct node_info *n, struct prov_slurm_node *out);
void prov_slurm_node_release(struct prov_slurm_node *n);

/* The GRES count of name in a libslurm gres string ("tpu:4",
 * "gpu:a100:8(S:0-1),tpu:4"); types of one name are summed; 0 if absent. */
int64_t prov_slurm_gres_count(const char *gres, const char *name);

/* The nodes of partition, read from slurmctld through libslurm (config from
 * SLURM_CONF, else the default /etc/slurm/slurm.conf; munge from its
 * AuthInfo). *out is a new array of *n nodes (free each with
 * prov_slurm_node_release, then the array). Returns 0, CU_ENOTFOUND (no
 * such partition: err names it and lists the partitions there are) or
 * CU_EIO (no readable configuration file, or slurmctld cannot be reached:
 * err has the path or libslurm's reason). Blocks
 * on the network (slurmctld's RPC timeout). */
int prov_slurm_partition_nodes(const char *partition, struct prov_slurm_node **out, size_t *n,
                               char *err, size_t errlen);

/* ---- reading partitions off the caller's thread ---- */

/* A reader that keeps the nodes of every partition asked for fresh on a
 * thread of its own (prov_slurm_partition_nodes blocks up to slurmctld's
 * MessageTimeout, about 10 s, when slurmctld does not answer): each
 * partition asked for within the last PROV_SLURM_READER_KEEP_S seconds is
 * read again PROV_SLURM_READ_PERIOD_MS after its previous read ended. */
#define PROV_SLURM_READ_PERIOD_MS 1000
#define PROV_SLURM_READER_KEEP_S 60

struct prov_slurm_reader;
/* A new reader; its thread starts on the first get. Free with
 * prov_slurm_reader_free (which waits for a read in progress). */
struct prov_slurm_reader *prov_slurm_reader_new(void);
/* The latest read of partition, never blocking on the network: 0 with a
 * copy of its nodes in *out, *n (free as prov_slurm_partition_nodes'); 1
 * when it was never read yet (the read is under way: ask again); or the
 * last read's error (CU_ENOTFOUND, CU_EIO) with its reason in err. */
int prov_slurm_reader_get(struct prov_slurm_reader *r, const char *partition,
                          struct prov_slurm_node **out, size_t *n, char *err, size_t errlen);
void prov_slurm_reader_free(struct prov_slurm_reader *r);

#endif

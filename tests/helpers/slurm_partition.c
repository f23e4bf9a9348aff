/*
 * slurm_partition PARTITION: print the partition's nodes as
 * prov_slurm_partition_nodes reads them through libslurm, one line each:
 * "NAME cpu_milli=N memory_bytes=N tpu=N gpu=N features=a,b ready=0|1
 * cloud=0|1 powered_down=0|1". Exit 0; 1 with the error on stderr. For the
 * Slurm e2e tests (tests/e2e/t7000-slurm-cluster.sh), against the Slurm of
 * scripts/slurm-up.sh (SLURM_CONF).
 */
#include <stdio.h>
#include <stdlib.h>

#include "provider/slurm.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: slurm_partition PARTITION\n");
        return 2;
    }
    struct prov_slurm_node *nodes = NULL;
    size_t n = 0;
    char err[512] = "";
    if (prov_slurm_partition_nodes(argv[1], &nodes, &n, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        printf("%s cpu_milli=%lld memory_bytes=%lld tpu=%lld gpu=%lld features=", nodes[i].name,
               (long long)nodes[i].cpu_milli, (long long)nodes[i].memory_bytes,
               (long long)nodes[i].tpu, (long long)nodes[i].gpu);
        for (size_t f = 0; f < nodes[i].n_features; f++)
            printf("%s%s", f ? "," : "", nodes[i].features[f]);
        printf(" ready=%d cloud=%d powered_down=%d\n", nodes[i].ready, nodes[i].cloud,
               nodes[i].powered_down);
        prov_slurm_node_release(&nodes[i]);
    }
    free(nodes);
    return 0;
}

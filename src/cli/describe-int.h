/*
 * describe-int: the per-kind describe sections (describe_kueue.c,
 * describe_workload.c, describe_jobs.c, describe_nodes.c) and their
 * shared helpers (describe_fmt.c). Every section has the cli_describe_fn
 * shape. Calls go down only: describe.c -> the sections -> describe_fmt.c.
 */
#ifndef CUEUE_CLI_DESCRIBE_INT_H
#define CUEUE_CLI_DESCRIBE_INT_H

#include "cli/cli-int.h"

/* s, or "<none>" when NULL or empty. */
const char *desc__or_none(const char *s);
/* A JSON scalar as text ("-" for absent/null). Caller frees. */
char *desc__scalar(const json_t *v);
/* "k=v, k2=v2" of a string map, "<none>" when empty. Caller frees. */
char *desc__map_text(const json_t *map);

/* The Kueue kinds' sections (describe_kueue.c): ClusterQueue (flavors and
 * quotas, usage, admission checks), LocalQueue, ResourceFlavor,
 * AdmissionCheck, ProvisioningRequestConfig. */
void desc__clusterqueue(struct cli_ctx *c, const struct api_kind *k, const json_t *cq);
void desc__localqueue(struct cli_ctx *c, const struct api_kind *k, const json_t *lq);
void desc__resourceflavor(struct cli_ctx *c, const struct api_kind *k, const json_t *rf);
void desc__admissioncheck(struct cli_ctx *c, const struct api_kind *k, const json_t *ac);
void desc__provreqconfig(struct cli_ctx *c, const struct api_kind *k, const json_t *prc);
void desc__workload(struct cli_ctx *c, const struct api_kind *k, const json_t *wl);
void desc__job(struct cli_ctx *c, const struct api_kind *k, const json_t *job);
void desc__rayjob(struct cli_ctx *c, const struct api_kind *k, const json_t *rj);
void desc__jobset(struct cli_ctx *c, const struct api_kind *k, const json_t *js);
void desc__pod(struct cli_ctx *c, const struct api_kind *k, const json_t *pod);
void desc__nodepool(struct cli_ctx *c, const struct api_kind *k, const json_t *pool);
void desc__node(struct cli_ctx *c, const struct api_kind *k, const json_t *node);

/* Print pods (a JSON array) as a table: Name, Index, Phase, Node, Age. */
void desc__pods_table(struct cli_ctx *c, const char *title, const json_t *pods);
/* Print the cueue.dev/metrics annotation of obj as the "Worker Metrics"
 * table, when present. */
void desc__metrics(struct cli_ctx *c, const json_t *obj);

#endif

/*
 * kinds: the registry of every kind cueue serves, with its API group,
 * version, plural resource name, scope, short names and categories exactly
 * as the ecosystem spells them. The server's routing and discovery, the
 * store's keys, the CLI's `get KIND` resolution and the decoder's
 * apiVersion/kind check all read this one table.
 */
#ifndef CUEUE_API_KINDS_H
#define CUEUE_API_KINDS_H

#include <stdbool.h>
#include <stddef.h>

enum api_kind_id {
    KIND_NAMESPACE,
    KIND_CONFIGMAP,
    KIND_POD,
    KIND_NODE,
    KIND_EVENT,
    KIND_PODTEMPLATE,
    KIND_JOB,
    KIND_RAYJOB,
    KIND_JOBSET,
    KIND_RESOURCEFLAVOR,
    KIND_CLUSTERQUEUE,
    KIND_LOCALQUEUE,
    KIND_COHORT,
    KIND_ADMISSIONCHECK,
    KIND_PROVISIONINGREQUESTCONFIG,
    KIND_WORKLOADPRIORITYCLASS,
    KIND_WORKLOAD,
    KIND_TOPOLOGY,
    KIND_PROVISIONINGREQUEST,
    KIND_NODEPOOL,
    KIND_SERVICE,
    KIND_ENDPOINTS,
    KIND_ENDPOINTSLICE,
    KIND__COUNT
};

struct api_kind {
    enum api_kind_id id;
    const char *group;    /* "" for the core group */
    const char *version;  /* served (and stored) version */
    const char *kind;     /* "ClusterQueue" */
    const char *plural;   /* "clusterqueues" */
    const char *singular; /* "clusterqueue" */
    bool namespaced;
    const char *short_names[4]; /* NULL-terminated */
    const char *categories[3];  /* NULL-terminated */
    bool has_status;            /* serves the /status subresource */
    const char *const *alt_versions; /* other accepted apiVersion versions, NULL-terminated or NULL */
};

/* The kind with this id. Never NULL for a valid id. */
const struct api_kind *api_kind_get(enum api_kind_id id);
/* Look up by apiVersion ("kueue.x-k8s.io/v1beta1", "v1") and kind
 * ("ClusterQueue"). Accepts alt_versions. NULL when unknown. */
const struct api_kind *api_kind_by_gvk(const char *api_version, const char *kind);
/* Look up by group and plural resource name (routing). NULL when unknown. */
const struct api_kind *api_kind_by_resource(const char *group, const char *plural);
/* Resolve what a user typed after `get`/`describe`: plural, singular, kind
 * (case-insensitive), short name, or "plural.group" ("workloads.kueue.x-k8s.io").
 * NULL when nothing matches. */
const struct api_kind *api_kind_resolve(const char *name);
/* "group/version" or "v1" for the core group. Borrowed static string. */
const char *api_kind_api_version(const struct api_kind *k);
/* "plural.group" ("clusterqueues.kueue.x-k8s.io"), or the plural alone for
 * the core group: the form Kubernetes uses in Status messages. Static. */
const char *api_kind_qualified(const struct api_kind *k);
/* "Kind.group" ("ClusterQueue.kueue.x-k8s.io") or "Kind" for core, as used in
 * "... is invalid" messages. Static. */
const char *api_kind_kind_group(const struct api_kind *k);

#endif

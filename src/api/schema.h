/*
 * schema: the declarative schema of every kind cueue serves, one tree of
 * `struct api_schema` nodes per kind (apiVersion, kind, metadata, spec,
 * status...), written with designated initialisers in schema_*.c.
 *
 * One table drives three things:
 *   - admission (object.h api_admit): strict decoding (unknown fields,
 *     JSON types), defaults, field rules (enums, formats, bounds, list
 *     keys, immutability), then each kind's cross-field rules;
 *   - OpenAPI v3 documents for discovery (api_schema_openapi);
 *   - strategic merge patch: the merge key of each keyed list
 *     (containers by name, env by name, volumeMounts by mountPath, ports by
 *     containerPort...), found by walking the tree alongside a document.
 *
 * "Pass-through" subtrees (SCH_PASSTHROUGH) accept any JSON object and are
 * stored as given; they are listed in docs/api.md and enumerable with
 * api_schema_visit. Schemas are static and immutable; every pointer
 * returned here is borrowed for the life of the process.
 */
#ifndef CUEUE_API_SCHEMA_H
#define CUEUE_API_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/kinds.h"
#include "util/diag.h"

enum api_schema_type {
    SCH_STRING,        /* JSON string */
    SCH_INTEGER,       /* JSON integer (integral reals like 2.0 are accepted and rewritten) */
    SCH_NUMBER,        /* any JSON number */
    SCH_BOOLEAN,       /* true / false */
    SCH_OBJECT,        /* fixed set of fields; anything else is an unknown field */
    SCH_ARRAY,         /* items of one schema */
    SCH_MAP,           /* string keys to values of one schema (labels, nodeSelector, requests) */
    SCH_QUANTITY,      /* resource.Quantity: string or number, stored as a string */
    SCH_INT_OR_STRING, /* intstr.IntOrString (ports by number or name) */
    SCH_PASSTHROUGH,   /* any JSON object, stored as given (documented pass-through) */
    SCH_ANY,           /* any JSON value (managedFields entries, runtime parameters) */
};

enum api_schema_format {
    FMT_NONE,
    FMT_DNS_LABEL,      /* DNS-1123 label */
    FMT_DNS_SUBDOMAIN,  /* DNS-1123 subdomain */
    FMT_DNS1035_LABEL,  /* DNS-1035 label */
    FMT_QUALIFIED_NAME, /* [prefix/]name: label keys, resource names */
    FMT_LABEL_VALUE,    /* label value */
    FMT_DATE_TIME,      /* RFC 3339 */
    FMT_CONFIG_KEY,     /* ConfigMap data key */
    FMT_RESOURCE_NAME,  /* container resource name (cpu, memory, google.com/tpu) */
};

/* How an array merges (x-kubernetes-list-type; strategic merge patch). */
enum api_list_type {
    LIST_ATOMIC, /* replaced whole */
    LIST_SET,    /* unique scalars, merged as a set */
    LIST_MAP,    /* objects keyed by merge_key, merged per key */
};

struct api_schema;
struct api_vctx;
struct api_admit_env;

/* A custom rule for one value: v is the (type-checked, defaulted) value at
 * path, old the value at the same place in the previous object (NULL on
 * create or when it had none). Problems go to c->d. */
typedef void (*api_schema_check_fn)(struct api_vctx *c, const json_t *v, const char *path,
                                    const json_t *old);

struct api_schema_field {
    const char *name;
    const struct api_schema *schema;
    bool required;
};

struct api_schema {
    enum api_schema_type type;
    const char *doc; /* one line for OpenAPI "description" */
    /* SCH_OBJECT: fields, terminated by {NULL}. Quantities among them (and
     * in nested maps) are counted in the resource named by this sibling
     * string field, when set ("name" in a ResourceQuota). */
    const struct api_schema_field *fields;
    const char *resource_field;
    /* SCH_ARRAY elements, SCH_MAP values */
    const struct api_schema *items;
    enum api_list_type list_type;
    const char *merge_key;                 /* LIST_MAP: the key field of the elements */
    enum api_schema_format key_format;     /* SCH_MAP keys */
    size_t min_items, max_items;           /* 0 = no bound */
    /* scalars */
    const char *const *enum_values;        /* NULL-terminated */
    enum api_schema_format format;
    size_t max_length;                     /* bytes; 0 = none */
    bool has_min, has_max;
    int64_t min, max;                      /* integers; quantities: min only, in their unit */
    bool int32;                            /* SCH_INTEGER limited to int32 (a decode error beyond) */
    const char *default_json;              /* applied when the field is absent */
    bool immutable;                        /* may not change on update ("field is immutable") */
    api_schema_check_fn check;
};

/* The context a kind's rules run in (also handed to field checks). */
struct api_vctx {
    const struct api_kind *kind;
    json_t *obj;       /* the object being admitted (mutable) */
    const json_t *old; /* the stored object on update, else NULL */
    struct diag *d;
    bool status_update; /* admitting a /status write */
    const struct api_admit_env *env; /* cluster lookups, or NULL (object.h) */
};

/* The per-kind entry: root schema plus hooks. */
struct api_kind_schema {
    enum api_kind_id kind;
    const struct api_schema *root;
    const char *(*name_rule)(const char *); /* names.h check for metadata.name */
    size_t name_max;                        /* stricter length limit, 0 = the rule's */
    bool keep_status_on_create;             /* Node: kubelets create nodes with status */
    void (*defaults)(struct api_vctx *c);   /* after schema defaults */
    void (*validate)(struct api_vctx *c);   /* cross-field and webhook rules */
};

/* The schema entry of a kind. Never NULL for a valid id. */
const struct api_kind_schema *api_kind_schema(enum api_kind_id id);
/* The root object schema of a kind ({apiVersion, kind, metadata, spec...}). */
const struct api_schema *api_schema_for_kind(enum api_kind_id id);
/* The schema of field `name` of an SCH_OBJECT schema, or NULL. */
const struct api_schema *api_schema_field(const struct api_schema *obj, const char *name);
/* The element schema of an SCH_ARRAY or value schema of an SCH_MAP, or NULL. */
const struct api_schema *api_schema_items(const struct api_schema *s);
/* The strategic-merge key of a keyed list (LIST_MAP), else NULL. */
const char *api_schema_merge_key(const struct api_schema *s);
/* The schema at a path of field names from the kind's root; array and map
 * levels are stepped through implicitly ("spec","template","spec",
 * "containers","ports" reaches the ports list). NULL when absent or when a
 * pass-through is crossed. keys is NULL-terminated. */
const struct api_schema *api_schema_at(enum api_kind_id id, const char *const *keys);

/* Visit every node under s depth-first: fn gets the field path
 * ("spec.template.spec.containers[].securityContext"; "[]" for array
 * elements, "{}" for map values) and the node, and returns false to skip
 * the node's children (e.g. to treat a shared PodSpec once). */
void api_schema_visit(const struct api_schema *s, const char *path,
                      bool (*fn)(void *ctx, const char *path, const struct api_schema *s),
                      void *ctx);

/* The OpenAPI v3 schema object for s (type, properties, required, items,
 * additionalProperties, enum, format, bounds, default, descriptions, and
 * x-kubernetes-list-type / -list-map-keys / -preserve-unknown-fields /
 * -int-or-string). New reference. */
json_t *api_schema_openapi(const struct api_schema *s);

/* ---- NodePool machine catalog (owned by the node-pool module) ---- */

/* How admission asks the machine catalog about a NodePool. Without a
 * registered catalog any non-empty machineType is accepted and topologies
 * are only checked for syntax ("4x4", "2x2x2"); the node-pool controller
 * then reports unknown machine types in the pool's status. */
struct api_machine_catalog {
    /* true when machine_type is in the catalog */
    bool (*known)(const char *machine_type);
    /* NULL when the TPU topology suits the machine type, else the reason;
     * *hosts_per_slice receives the VMs of one slice (1 = single host).
     * May be NULL when the catalog has no TPU types. */
    const char *(*check_topology)(const char *machine_type, const char *topology,
                                  int *hosts_per_slice);
};
/* Register the catalog (borrowed; must outlive every api_admit call).
 * Call once at start-up, before any request is served; NULL unregisters. */
void api_set_machine_catalog(const struct api_machine_catalog *cat);

/* The API server's generateSelector for a new batch/v1 Job (job: the
 * whole object, changed in place): the template gets the labels job-name,
 * batch.kubernetes.io/job-name (metadata.name), controller-uid and
 * batch.kubernetes.io/controller-uid (metadata.uid) unless it has them,
 * and spec.selector.matchLabels the controller-uid one. Nothing without a
 * name or uid. For admission, and for controllers that create Jobs in the
 * store directly (the KubeRay operator's submitter). */
void api_job_generate_selector(json_t *job);

/* ---- used by api_admit (object.h) ---- */

enum api_schema_phase {
    SCHEMA_DECODE,   /* JSON types and unknown fields; nulls dropped; numbers normalised */
    SCHEMA_DEFAULT,  /* default_json for absent fields */
    SCHEMA_VALIDATE, /* field rules, list keys, immutability, checks */
};
/* Run one phase over v (the kind's whole object, or any subtree with its
 * schema) at path ("" for the root). Decode errors are DIAG_UNKNOWN_FIELD /
 * DIAG_TYPE_INVALID; validation errors the 422 types. old is the stored
 * counterpart for SCHEMA_VALIDATE on update, else NULL. */
void api_schema_run(enum api_schema_phase phase, const struct api_schema *s, json_t *v,
                    const char *path, struct api_vctx *c, const json_t *old);

#endif

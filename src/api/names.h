/*
 * names: the syntax rules Kubernetes applies to names, label keys and
 * values, annotation keys, ConfigMap keys and resource names
 * (k8s.io/apimachinery/pkg/util/validation). Each check returns NULL when
 * the text is valid, or the apimachinery error message (a static string)
 * that explains the rule; callers attach it to a field with diag.
 *
 * Pure functions, no allocation.
 */
#ifndef CUEUE_API_NAMES_H
#define CUEUE_API_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "util/diag.h"

#define API_DNS1123_LABEL_MAX 63
#define API_DNS1123_SUBDOMAIN_MAX 253
#define API_LABEL_VALUE_MAX 63
#define API_ANNOTATIONS_MAX_BYTES ((size_t)256 << 10) /* TotalAnnotationSizeLimitB */

/* DNS-1123 label ("my-name"; <= 63). NULL when valid, else the rule. */
const char *api_check_dns1123_label(const char *s);
/* DNS-1123 subdomain ("example.com"; <= 253). */
const char *api_check_dns1123_subdomain(const char *s);
/* DNS-1035 label (starts with a letter; <= 63): KubeRay names. */
const char *api_check_dns1035_label(const char *s);
/* Qualified name: [prefix/]name, the syntax of label and annotation keys,
 * taint keys, and extended resource names ("google.com/tpu"). */
const char *api_check_qualified_name(const char *s);
/* Label value: empty or [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? (<= 63). */
const char *api_check_label_value(const char *s);
/* ConfigMap/Secret data key: [-._a-zA-Z0-9]+, not "." or "..", not
 * starting with "..", <= 253. */
const char *api_check_config_key(const char *s);
/* A container resource name: a standard one (cpu, memory,
 * ephemeral-storage, hugepages-<size>) or a qualified name with a domain
 * ("google.com/tpu"). */
const char *api_check_container_resource_name(const char *s);
/* True when path p (NULL = none) has a ".." element ("..", "../x",
 * "x/..", "x/../y"; "..x" is a name): the rule of subPath, items[].path,
 * hostPath.path ("must not contain '..'"), and of what the executor
 * writes under a pod's sandbox (exec_is_safe_relpath). */
bool api_path_has_dotdot(const char *p);

/* Record every problem of name (as the object name of a kind) at field:
 * the rule fn, and max_len when it is stricter than fn's own limit (0 =
 * none). prefix: name is a generateName prefix (a trailing '-' is allowed,
 * as Kubernetes masks it). Returns true when valid. */
bool api_validate_name(const char *name, const char *(*fn)(const char *), size_t max_len,
                       bool prefix, const char *field, struct diag *d);

#endif

/*
 * kconfig: Kueue's own Configuration file (apiVersion
 * config.kueue.x-k8s.io/v1beta1, kind Configuration: the file users keep
 * for the Kueue manager), read by `cueue server --config FILE` into the
 * control plane's settings (struct ctrl_config), as the Kueue manager
 * reads it: decoded strictly (an unknown field is an error), Kueue's API
 * defaults for what the file leaves out, Kueue's validation rules.
 *
 * Applied: waitForPodsReady (enable, timeout, blockAdmission,
 * requeuingStrategy), fairSharing, manageJobsWithoutQueueName,
 * managedJobsNamespaceSelector, integrations.frameworks. Known fields that
 * cueue does not honour (the manager's webhook, metrics and leader
 * election settings, admissionFairSharing, resources, recoveryTimeout...)
 * are validated where cueue knows their rules and reported as warnings,
 * never silently ignored. docs/server.md lists them.
 */
#ifndef CUEUE_CTRL_KCONFIG_H
#define CUEUE_CTRL_KCONFIG_H

#include <stddef.h>

#include "api/types.h"
#include "ctrl/ctrl.h"
#include "util/diag.h"

/* What a loaded Configuration owns beyond struct ctrl_config. */
struct ctrl_kconfig {
    /* managedJobsNamespaceSelector; cfg->jobs.namespace_selector points
     * here when the file has one */
    struct api_label_selector ns_selector;
    /* one line per field read but not honoured, "<field>: <why>" */
    char **warnings;
    size_t n_warnings;
};

/* Decode text[0..len) (YAML or JSON, one document), source naming it in
 * messages, and apply it to cfg (which holds ctrl_config_defaults or the
 * server's flags): the settings listed above are replaced by the file's
 * values or Kueue's defaults for them (waitForPodsReady absent or
 * enable false: off; timeout 5m; blockAdmission = enable; backoff 60 s
 * doubling to 3600 s, unlimited; fairSharing off; frameworks
 * ["batch/job"]; manageJobsWithoutQueueName false). *kc is initialised
 * here; release it with ctrl_kconfig_release after the control plane is
 * freed (cfg borrows its selector). Returns 0; CU_EBADREQ for syntax
 * errors, unknown fields, wrong types or a wrong apiVersion/kind; CU_EINVAL
 * for values that break a rule; CU_ELIMIT for input over the decoder's
 * caps. Every problem is a cause in d naming its field ("waitForPodsReady.
 * timeout"). On error cfg may be partly changed: do not start with it. */
int ctrl_kconfig_load(const char *text, size_t len, const char *source,
                      struct ctrl_config *cfg, struct ctrl_kconfig *kc, struct diag *d);

/* ctrl_kconfig_load on the file at path (at most API_MAX_DOCUMENT_BYTES);
 * a file that cannot be read is one cause "<path>: <why>" and CU_EIO (or
 * CU_ELIMIT when too large). */
int ctrl_kconfig_load_file(const char *path, struct ctrl_config *cfg, struct ctrl_kconfig *kc,
                           struct diag *d);

/* Kueue's integrations.frameworks list (a JSON array, at field) into
 * *bits (API_FW_*): an unknown name (DIAG_NOT_SUPPORTED), a non-string or
 * a repeated one is a cause in d; a name Kueue knows but cueue has no kind
 * for is a warning in kc, or with kc NULL (`cueue sim`) an error. Returns
 * 0 or CU_EINVAL. */
int ctrl_kconfig_frameworks(const json_t *list, const char *field, unsigned *bits,
                            struct ctrl_kconfig *kc, struct diag *d);

/* Free what kc owns. */
void ctrl_kconfig_release(struct ctrl_kconfig *kc);

#endif

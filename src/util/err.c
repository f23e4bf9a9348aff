/* err: error codes, their texts, HTTP statuses and Kubernetes reasons. */
#include "util/err.h"

struct err_info {
    int rc;
    const char *text;
    int http;
    const char *reason;
};

static const struct err_info infos[] = {
    {CU_OK, "success", 200, ""},
    {CU_EINVAL, "invalid", 422, "Invalid"},
    {CU_EBADREQ, "bad request", 400, "BadRequest"},
    {CU_ENOTFOUND, "not found", 404, "NotFound"},
    {CU_EEXIST, "already exists", 409, "AlreadyExists"},
    {CU_ECONFLICT, "conflict", 409, "Conflict"},
    {CU_EGONE, "resource version too old", 410, "Expired"},
    {CU_ELIMIT, "too large", 413, "RequestEntityTooLarge"},
    {CU_EIO, "i/o error", 500, "InternalError"},
    {CU_EUNSUPPORTED, "not supported", 405, "MethodNotAllowed"},
    {CU_EFORBIDDEN, "forbidden", 403, "Forbidden"},
    {CU_EINTERNAL, "internal error", 500, "InternalError"},
    {CU_ETIMEOUT, "timed out", 504, "Timeout"},
    {CU_ENOMEM, "out of memory", 500, "InternalError"},
};

static const struct err_info *find(int rc)
{
    for (unsigned i = 0; i < sizeof(infos) / sizeof(infos[0]); i++)
        if (infos[i].rc == rc)
            return &infos[i];
    return &infos[11]; /* CU_EINTERNAL */
}

const char *cu_strerror(int rc) { return find(rc)->text; }
int cu_err_http_status(int rc) { return find(rc)->http; }
const char *cu_err_reason(int rc) { return find(rc)->reason; }

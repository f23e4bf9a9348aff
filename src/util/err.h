/*
 * err: the one project-wide error type (curl, libuv style). Functions that
 * can fail return 0 or one of these negative codes; each maps to the HTTP
 * status and Kubernetes `Status.reason` the API answers with.
 */
#ifndef CUEUE_UTIL_ERR_H
#define CUEUE_UTIL_ERR_H

enum cu_err {
    CU_OK = 0,
    CU_EINVAL = -1,      /* object failed validation: 422 Invalid */
    CU_EBADREQ = -2,     /* malformed request or body: 400 BadRequest */
    CU_ENOTFOUND = -3,   /* 404 NotFound */
    CU_EEXIST = -4,      /* 409 AlreadyExists */
    CU_ECONFLICT = -5,   /* resourceVersion mismatch: 409 Conflict */
    CU_EGONE = -6,       /* watch resourceVersion too old: 410 Expired */
    CU_ELIMIT = -7,      /* a size cap was exceeded: 413 RequestEntityTooLarge */
    CU_EIO = -8,         /* I/O or storage failure: 500 InternalError */
    CU_EUNSUPPORTED = -9,/* method or media type not supported: 405/415 */
    CU_EFORBIDDEN = -10, /* operation not allowed on this object: 403 Forbidden */
    CU_EINTERNAL = -11,  /* a bug: 500 InternalError */
    CU_ETIMEOUT = -12,   /* 504 Timeout */
    CU_ENOMEM = -13,     /* an allocation failed (the engine reports it): 500 InternalError */
};

/* Short lower-case description of rc ("not found"); never NULL. */
const char *cu_strerror(int rc);
/* HTTP status code for rc (200 for CU_OK). */
int cu_err_http_status(int rc);
/* Kubernetes Status.reason for rc ("NotFound", "Invalid", ...), "" for CU_OK. */
const char *cu_err_reason(int rc);

#endif

/*
 * test_api_lib: helpers shared by the api unit tests (header-only, static):
 * locating test data through CUEUE_SRC, reading files, substituting the
 * seed's ${VAR}s as envsubst does, parsing and admitting documents.
 * Include after <cmocka.h>.
 */
#ifndef CUEUE_TESTS_TEST_API_LIB_H
#define CUEUE_TESTS_TEST_API_LIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/kinds.h"
#include "api/object.h"
#include "util/diag.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

/* $CUEUE_SRC/<rel> (the source tree; ctest sets CUEUE_SRC). Caller frees. */
static inline char *t_src_path(const char *rel)
{
    const char *src = getenv("CUEUE_SRC");
    return xasprintf("%s/%s", src && src[0] ? src : ".", rel);
}

/* Whole file, NUL-terminated, or NULL. *len gets the size. Caller frees. */
static inline char *t_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct sbuf sb;
    sbuf_init(&sb, (size_t)128 << 20);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        sbuf_add(&sb, buf, n);
    fclose(f);
    if (len)
        *len = sb.len;
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

/* Replace every ${name} in text by value (envsubst). Caller frees. */
static inline char *t_subst(const char *text, const char *name, const char *value)
{
    char *pat = xasprintf("${%s}", name);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    const char *p = text, *hit;
    while ((hit = strstr(p, pat))) {
        sbuf_add(&sb, p, (size_t)(hit - p));
        sbuf_adds(&sb, value);
        p = hit + strlen(pat);
    }
    sbuf_adds(&sb, p);
    xfree(pat);
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

/* Parse text and assert success; returns the documents (caller decrefs). */
static inline json_t *t_parse_ok(const char *text)
{
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    int rc = api_parse_documents(text, strlen(text), "test", &docs, &d);
    if (rc != 0) {
        char *s = diag_summary(&d);
        fprintf(stderr, "parse failed: %s\n", s);
        xfree(s);
    }
    assert_int_equal(rc, 0);
    diag_release(&d);
    return docs;
}

/* Admit doc as a create in namespace ns; returns rc and fills d. */
static inline int t_admit(json_t *doc, const char *ns, struct diag *d)
{
    const struct api_kind *k = api_doc_kind(doc, d);
    if (!k)
        return -100;
    return api_admit(k, doc, NULL, ns, d);
}

/* Admit and assert success (prints the causes otherwise). */
static inline void t_admit_ok(json_t *doc, const char *ns)
{
    struct diag d;
    diag_init(&d);
    int rc = t_admit(doc, ns, &d);
    if (rc != 0) {
        char *s = diag_summary(&d);
        fprintf(stderr, "admit failed (%d): %s\n", rc, s);
        xfree(s);
    }
    assert_int_equal(rc, 0);
    diag_release(&d);
}

/* The summary of every cause, for substring assertions. Caller frees. */
static inline char *t_admit_err(json_t *doc, const char *ns, int *rc_out)
{
    struct diag d;
    diag_init(&d);
    int rc = t_admit(doc, ns, &d);
    if (rc_out)
        *rc_out = rc;
    char *s = diag_summary(&d);
    diag_release(&d);
    return s;
}

/* A seed manifest: the project's real input at $CUEUE_SRC/../shared/seed
 * when that tree is there, else the copy under tests/data/api/seed (the
 * test_seed_copies_match_shared_tree test keeps the two identical). */
static inline char *t_seed_file(const char *name)
{
    char *rel = xasprintf("../shared/seed/%s", name);
    char *p = t_src_path(rel);
    char *text = t_read_file(p, NULL);
    xfree(p);
    xfree(rel);
    if (!text) {
        rel = xasprintf("tests/data/api/seed/%s", name);
        p = t_src_path(rel);
        text = t_read_file(p, NULL);
        xfree(p);
        xfree(rel);
    }
    assert_non_null(text);
    return text;
}

/* The seed's manifests with the tutorial's values substituted (envsubst). */
static inline char *t_seed_queue_yaml(void)
{
    char *raw = t_seed_file("dws-tpu-queue.yaml");
    char *a = t_subst(raw, "ONDEMAND_NODEPOOL", "on-demand-pool");
    char *b = t_subst(a, "DWS_NODEPOOL", "dws-pool");
    xfree(raw);
    xfree(a);
    return b;
}

static inline char *t_seed_rayjob_yaml(const char *job_id)
{
    char *raw = t_seed_file("rayjob-tpu-v6e-dws.yaml");
    char *s = t_subst(raw, "JOB_ID", job_id);
    xfree(raw);
    return s;
}

#endif

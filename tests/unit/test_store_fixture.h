/*
 * test_store_fixture: shared setup for the store's unit tests: a virtual
 * clock, a seeded rng, a memory-only (or file-backed) store, and builders
 * for small objects. Header-only; each test_store_*.c includes it.
 */
#ifndef CUEUE_TEST_STORE_FIXTURE_H
#define CUEUE_TEST_STORE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/store.h"
#include "util/err.h"
#include "util/jsonx.h"

/* 2026-01-02T03:04:05.678Z */
#define FX_START_MS INT64_C(1767323045678)

struct fx {
    struct clk_virtual clock;
    struct rng rng;
    struct store *s;
};

static inline struct store *fx_open_opts(struct fx *f, const char *db_path, size_t history)
{
    struct store_opts o = {db_path, &f->clock.clk, &f->rng, history};
    char err[256];
    int rc = store_open(&o, &f->s, err, sizeof(err));
    if (rc != 0)
        fail_msg("store_open(%s): %s", db_path ? db_path : "memory", err);
    return f->s;
}

/* A memory-only store in f with its own clock and rng (seed), keeping
 * history events (0 = the default). */
static inline struct store *fx_open_memory(struct fx *f, uint64_t seed, size_t history)
{
    clk_virtual_init(&f->clock, FX_START_MS);
    rng_seed(&f->rng, seed);
    return fx_open_opts(f, NULL, history);
}

/* A new temporary directory (dir, 64 bytes) and the path of a database
 * file in it (path, 128 bytes). Returns 0, or -1 when mkdtemp fails. */
static inline int fx_tmpdb_make(char dir[64], char path[128])
{
    snprintf(dir, 64, "/tmp/cueue-store-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, 128, "%s/state.db", dir);
    return 0;
}

/* Remove the database at path (with its WAL and shared-memory files) and
 * its directory dir. */
static inline void fx_tmpdb_remove(const char *dir, const char *path)
{
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char f[160];
        snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
        unlink(f);
    }
    rmdir(dir);
}

static inline int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    clk_virtual_init(&f->clock, FX_START_MS);
    rng_seed(&f->rng, 42);
    fx_open_opts(f, NULL, 0);
    *state = f;
    return 0;
}

static inline int fx_teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    free(f);
    return 0;
}

/* {"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{...},"spec":{...}} */
static inline json_t *fx_lq(const char *ns, const char *name, const char *cq)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion",
                          "kueue.x-k8s.io/v1beta1", "kind", "LocalQueue", "metadata", "name",
                          name, "spec", "clusterQueue", cq);
    if (ns)
        json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(ns));
    return o;
}

static inline json_t *fx_rf(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}}}", "apiVersion", "kueue.x-k8s.io/v1beta1",
                     "kind", "ResourceFlavor", "metadata", "name", name, "spec", "nodeLabels",
                     "pool", name);
}

/* Create and return the stored object (new reference); fails the test on error. */
static inline json_t *fx_create(struct store *s, enum api_kind_id kind, const char *ns,
                                json_t *obj_taken)
{
    json_t *out = NULL;
    int rc = store_create(s, kind, ns, obj_taken, &out);
    json_decref(obj_taken);
    assert_int_equal(rc, 0);
    assert_non_null(out);
    return out;
}

static inline const char *fx_meta(const json_t *obj, const char *key)
{
    return JX_STR(obj, "metadata", key);
}

static inline int64_t fx_gen(const json_t *obj) { return JX_INT(obj, -1, "metadata", "generation"); }

static inline uint64_t fx_rv(const json_t *obj)
{
    const char *rv = fx_meta(obj, "resourceVersion");
    assert_non_null(rv);
    return strtoull(rv, NULL, 10);
}

#endif

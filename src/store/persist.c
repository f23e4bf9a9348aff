/*
 * persist: the store's SQLite file. One row per object in `objects`
 * (kind as "plural.group" or the bare plural for the core group, namespace
 * ("" when cluster-scoped), name, the document as compact JSON text), and
 * the resourceVersion counter and schema version in `meta`. WAL journal,
 * synchronous=NORMAL. A mutation only records its key's latest state in a
 * dirty set; store__db_flush writes the whole set and the counter in one
 * transaction, so a burst of writes costs one commit and an object updated
 * five times between flushes is serialised once.
 *
 * Invariants: statements are prepared once at open; the dirty set holds
 * exactly the keys changed since the last successful flush (a failed flush
 * rolls back and keeps it, so the next flush retries); the database never
 * holds a transaction between calls; nothing here takes store.mu (callers
 * hold it). While writes fail (failing), every flush tries a transaction,
 * even with nothing dirty (it counts the attempt in meta.writeProbes, a
 * row that changes, so a page is written), so the first flush after space
 * returns finds out; the failure is logged when it starts or
 * its cause changes, and again when writes succeed.
 */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "store/store-int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

#define STORE_SCHEMA_VERSION 1

/* The latest unsaved state of one key since the last successful flush. */
struct store_dirty {
    char *key; /* "<kind id>\x1f<ns>\x1f<name>" */
    enum api_kind_id kind;
    char *ns;
    char *name;
    json_t *doc; /* reference; NULL = deleted */
    UT_hash_handle hh;
};

struct store_db {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *put;
    sqlite3_stmt *del;
    sqlite3_stmt *set_meta;
    sqlite3_stmt *probe;
    sqlite3_stmt *begin, *commit; /* the flush's transaction */
    struct store_dirty *dirty; /* uthash */
    char *buf;                 /* reusable serialisation buffer */
    size_t buf_cap;
    bool failing;              /* the last flush failed */
    char why[512];             /* its cause, for store_writable and the log */
    unsigned long failures;    /* failed flushes since the last success */
};

static const char *const SCHEMA =
    "CREATE TABLE IF NOT EXISTS objects ("
    " kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    " doc TEXT NOT NULL, PRIMARY KEY (kind, namespace, name));"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schemaVersion', 1);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES ('resourceVersion', 0);";

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int fail(struct store_db *d, char *err, size_t errlen, const char *what)
{
    seterr(err, errlen, "database %s: %s: %s", d->path, what,
           d->db ? sqlite3_errmsg(d->db) : "out of memory");
    return CU_EIO;
}

static int exec_sql(struct store_db *d, const char *sql, char *err, size_t errlen,
                    const char *what)
{
    if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fail(d, err, errlen, what);
    return 0;
}

static int prepare(struct store_db *d, const char *sql, sqlite3_stmt **st, char *err,
                   size_t errlen)
{
    if (sqlite3_prepare_v3(d->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return fail(d, err, errlen, "preparing statements");
    return 0;
}

static void db_free(struct store_db *d)
{
    sqlite3_finalize(d->put);
    sqlite3_finalize(d->del);
    sqlite3_finalize(d->set_meta);
    sqlite3_finalize(d->probe);
    sqlite3_finalize(d->begin);
    sqlite3_finalize(d->commit);
    sqlite3_close(d->db);
    xfree(d->path);
    xfree(d->buf);
    xfree(d);
}

static int kind_from_qualified(const char *q)
{
    for (int k = 0; k < KIND__COUNT; k++)
        if (strcmp(api_kind_qualified(api_kind_get((enum api_kind_id)k)), q) == 0)
            return k;
    return -1;
}

static int read_meta(struct store_db *d, const char *key, int64_t *val, char *err,
                     size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return fail(d, err, errlen, "reading meta");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *val = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fail(d, err, errlen, "reading meta");
    return 0;
}

/* Parse one row into the index; the row's resourceVersion raises *max_rv. */
static int load_row(struct store *s, sqlite3_stmt *st, uint64_t *max_rv, char *err,
                    size_t errlen)
{
    const char *kq = (const char *)sqlite3_column_text(st, 0);
    const char *ns = (const char *)sqlite3_column_text(st, 1);
    const char *name = (const char *)sqlite3_column_text(st, 2);
    const char *text = (const char *)sqlite3_column_text(st, 3);
    if (!kq || !ns || !name || !text) {
        seterr(err, errlen, "database %s: a row of table objects has a NULL column",
                 s->db->path);
        return CU_EIO;
    }
    int kind = kind_from_qualified(kq);
    if (kind < 0) {
        log_warn("store", "database %s: skipping %s %s%s%s: unknown kind", s->db->path, kq, ns,
                 ns[0] ? "/" : "", name);
        return 0;
    }
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc || !json_is_object(doc)) {
        seterr(err, errlen, "database %s: %s %s%s%s: stored document is not a JSON object: %s",
               s->db->path, kq, ns, ns[0] ? "/" : "", name, doc ? "wrong type" : jerr.text);
        json_decref(doc);
        return CU_EIO;
    }
    if (store__idx_find(s, (enum api_kind_id)kind, ns, name)) {
        seterr(err, errlen, "database %s: %s %s%s%s stored twice", s->db->path, kq, ns,
               ns[0] ? "/" : "", name);
        json_decref(doc);
        return CU_EIO;
    }
    json_t *rvj = json_object_get(json_object_get(doc, "metadata"), "resourceVersion");
    if (json_is_string(rvj)) {
        uint64_t rv = strtoull(json_string_value(rvj), NULL, 10);
        if (rv > *max_rv)
            *max_rv = rv;
    }
    store__idx_insert(s, (enum api_kind_id)kind, ns, name, doc);
    return 0;
}

static int load_all(struct store *s, char *err, size_t errlen)
{
    struct store_db *d = s->db;
    int64_t schema = 0, rv = 0;
    int rc = read_meta(d, "schemaVersion", &schema, err, errlen);
    if (rc == 0)
        rc = read_meta(d, "resourceVersion", &rv, err, errlen);
    if (rc < 0)
        return rc;
    if (schema != STORE_SCHEMA_VERSION) {
        seterr(err, errlen, "database %s: schema version %lld, this cueue reads version %d",
                 d->path, (long long)schema, STORE_SCHEMA_VERSION);
        return CU_EIO;
    }
    uint64_t max_rv = rv > 0 ? (uint64_t)rv : 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, "SELECT kind, namespace, name, doc FROM objects", -1, &st,
                           NULL) != SQLITE_OK)
        return fail(d, err, errlen, "reading objects");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (load_row(s, st, &max_rv, err, errlen) < 0) {
            sqlite3_finalize(st);
            return CU_EIO;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fail(d, err, errlen, "reading objects");
    s->rv = max_rv;
    return 0;
}

int store__db_open(struct store *s, const char *path, char *err, size_t errlen)
{
    struct store_db *d = xcalloc(1, sizeof(*d));
    d->path = xstrdup(path);
    int rc = 0;
    if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        rc = fail(d, err, errlen, "cannot open");
    if (rc == 0)
        sqlite3_busy_timeout(d->db, 5000);
    /* the first statement that reads the file: a non-database fails here */
    if (rc == 0)
        rc = exec_sql(d, "PRAGMA journal_mode=WAL", err, errlen, "cannot read");
    if (rc == 0)
        rc = exec_sql(d, "PRAGMA synchronous=NORMAL", err, errlen, "cannot configure");
    if (rc == 0)
        rc = exec_sql(d, SCHEMA, err, errlen, "cannot create tables");
    if (rc == 0)
        rc = prepare(d,
                     "INSERT INTO objects(kind, namespace, name, doc) VALUES (?, ?, ?, ?)"
                     " ON CONFLICT(kind, namespace, name) DO UPDATE SET doc = excluded.doc",
                     &d->put, err, errlen);
    if (rc == 0)
        rc = prepare(d, "DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
                     &d->del, err, errlen);
    if (rc == 0)
        rc = prepare(d, "UPDATE meta SET value = ? WHERE key = 'resourceVersion'", &d->set_meta,
                     err, errlen);
    if (rc == 0) /* SQLite skips writing a row that does not change: this one does */
        rc = prepare(d,
                     "INSERT INTO meta(key, value) VALUES ('writeProbes', 1)"
                     " ON CONFLICT(key) DO UPDATE SET value = value + 1",
                     &d->probe, err, errlen);
    if (rc == 0)
        rc = prepare(d, "BEGIN", &d->begin, err, errlen);
    if (rc == 0)
        rc = prepare(d, "COMMIT", &d->commit, err, errlen);
    s->db = d;
    if (rc == 0)
        rc = load_all(s, err, errlen);
    if (rc < 0) {
        s->db = NULL;
        db_free(d);
    }
    return rc;
}

/* Record why a flush failed (the log line comes from flush_failed). */
static int flush_error(struct store_db *d, const char *what, const char *cause)
{
    snprintf(d->why, sizeof(d->why), "database %s: %s: %s", d->path, what, cause);
    return CU_EIO;
}

static int step_done(struct store_db *d, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        return flush_error(d, what, sqlite3_errmsg(d->db));
    return 0;
}

/* Serialise doc into d->buf (compact JSON, NUL-terminated); length out,
 * 0 on failure. */
static size_t dump(struct store_db *d, const json_t *doc)
{
    size_t n = json_dumpb(doc, d->buf, d->buf_cap, JSON_COMPACT);
    if (n >= d->buf_cap) {
        d->buf_cap = n + 1 > 2 * d->buf_cap ? n + 1 : 2 * d->buf_cap;
        d->buf = xrealloc(d->buf, d->buf_cap);
        n = json_dumpb(doc, d->buf, d->buf_cap, JSON_COMPACT);
    }
    d->buf[n] = '\0';
    return n;
}

static void bind_key(sqlite3_stmt *st, const struct store_dirty *e)
{
    sqlite3_bind_text(st, 1, api_kind_qualified(api_kind_get(e->kind)), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, e->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, e->name, -1, SQLITE_STATIC);
}

/* Record the latest state of a key (doc NULL = deleted), replacing what an
 * earlier mutation since the last flush recorded. */
static void mark_dirty(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                       json_t *doc)
{
    struct store_db *d = s->db;
    if (!d) {
        json_decref(doc);
        return;
    }
    char *key = xasprintf("%d\x1f%s\x1f%s", (int)kind, ns, name);
    struct store_dirty *e;
    HASH_FIND_STR(d->dirty, key, e);
    if (e) {
        xfree(key);
        json_decref(e->doc);
        e->doc = doc;
        return;
    }
    e = xcalloc(1, sizeof(*e));
    e->key = key;
    e->kind = kind;
    e->ns = xstrdup(ns);
    e->name = xstrdup(name);
    e->doc = doc;
    HASH_ADD_KEYPTR(hh, d->dirty, e->key, strlen(e->key), e);
}

void store__db_put(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                   const json_t *doc)
{
    mark_dirty(s, kind, ns, name, json_incref((json_t *)doc));
}

void store__db_del(struct store *s, enum api_kind_id kind, const char *ns, const char *name)
{
    mark_dirty(s, kind, ns, name, NULL);
}

static void dirty_clear(struct store_db *d)
{
    struct store_dirty *e, *tmp;
    HASH_ITER(hh, d->dirty, e, tmp) {
        HASH_DEL(d->dirty, e);
        json_decref(e->doc);
        xfree(e->key);
        xfree(e->ns);
        xfree(e->name);
        xfree(e);
    }
}

/* Write every dirty entry and the counter inside the open transaction. */
static int write_dirty(struct store *s)
{
    struct store_db *d = s->db;
    struct store_dirty *e;
    for (e = d->dirty; e; e = e->hh.next) {
        int rc;
        if (e->doc) {
            size_t n = dump(d, e->doc);
            if (n == 0)
                return flush_error(d, e->name, "cannot serialise the object");
            bind_key(d->put, e);
            sqlite3_bind_text(d->put, 4, d->buf, (int)n, SQLITE_STATIC);
            rc = step_done(d, d->put, "writing an object");
        } else {
            bind_key(d->del, e);
            rc = step_done(d, d->del, "deleting an object");
        }
        if (rc < 0)
            return rc;
    }
    sqlite3_bind_int64(d->set_meta, 1, (sqlite3_int64)s->rv);
    int rc = step_done(d, d->set_meta, "writing the resourceVersion");
    if (rc == 0 && d->failing) /* a write that surely reaches the disk */
        rc = step_done(d, d->probe, "writing");
    return rc;
}

/* A flush failed (d->why says why): log it when writes start failing or
 * the cause changes, not at every retry. */
static void flush_failed(struct store_db *d, const char *last_why)
{
    d->failures++;
    if (!d->failing || strcmp(last_why, d->why))
        log_error("store", "%s (%u unsaved objects; retrying until it succeeds)", d->why,
                  HASH_COUNT(d->dirty));
    d->failing = true;
}

int store__db_flush(struct store *s)
{
    struct store_db *d = s->db;
    if (!d || (!d->dirty && !d->failing))
        return 0;
    char last_why[sizeof(d->why)];
    memcpy(last_why, d->why, sizeof(last_why));
    int rc = step_done(d, d->begin, "BEGIN");
    if (rc == 0)
        rc = write_dirty(s);
    if (rc == 0)
        rc = step_done(d, d->commit, "COMMIT");
    if (rc < 0) {
        /* keep the dirty set: the next flush writes it all again */
        if (!sqlite3_get_autocommit(d->db))
            sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
        flush_failed(d, last_why);
        return rc;
    }
    if (d->failing)
        log_info("store", "database %s: writes succeed again (after %lu failed attempts)",
                 d->path, d->failures);
    d->failing = false;
    d->failures = 0;
    d->why[0] = '\0';
    dirty_clear(d);
    return 0;
}

void store__db_discard(struct store *s)
{
    if (s->db)
        dirty_clear(s->db);
}

bool store__db_writable(struct store *s, char *why, size_t whylen)
{
    struct store_db *d = s->db;
    bool ok = !d || !d->failing;
    if (why && whylen)
        snprintf(why, whylen, "%s", ok ? "" : d->why);
    return ok;
}

int store__db_close(struct store *s)
{
    if (!s->db)
        return 0;
    int rc = 0;
    if (s->db->dirty && store__db_flush(s) < 0) {
        log_error("store", "database %s: closing with %u unsaved objects, which are lost: %s",
                  s->db->path, HASH_COUNT(s->db->dirty), s->db->why);
        rc = CU_EIO;
    }
    dirty_clear(s->db);
    db_free(s->db);
    s->db = NULL;
    return rc;
}

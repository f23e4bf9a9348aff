/*
 * txn: durable writes, for callers that acknowledge a change to a user
 * (the HTTP API). A durable write holds the store's lock from
 * store_txn_begin to store_txn_commit, so no other thread reads or changes
 * anything in between; the thread's own store calls go on as usual
 * (store__lock skips the lock it already holds). Each mutation inside it
 * notes the state it replaces; commit writes the changes to SQLite in one
 * transaction and, if that fails, puts every noted key back, drops the
 * events and gives the resourceVersions back, so nothing that was not
 * saved was ever visible.
 *
 * Invariants: at most one durable write per store is open (it holds mu);
 * begin saves every change made before it, so at commit the unsaved
 * changes are exactly the write's own and a failed commit discards them
 * all (a memory store never fails to save, but store_txn_rollback undoes
 * its writes the same way).
 */
#include "store/store-int.h"

#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

_Thread_local struct store *store__txn_owner;

void store__undo_note(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                      const json_t *prev)
{
    struct store_txn *t = &s->txn;
    if (!t->open)
        return;
    XGROW(t->undo, t->cap, t->n + 1);
    t->undo[t->n++] = (struct store_undo){kind, xstrdup(ns), xstrdup(name),
                                          prev ? json_incref((json_t *)prev) : NULL};
}

static void undo_release(struct store_txn *t)
{
    for (size_t i = 0; i < t->n; i++) {
        xfree(t->undo[i].ns);
        xfree(t->undo[i].name);
        json_decref(t->undo[i].prev);
    }
    xfree(t->undo);
    t->undo = NULL;
    t->n = t->cap = 0;
}

/* Put every noted key back as it was at begin (newest note first, so the
 * oldest, the state at begin, wins) and drop the write's events. mu held. */
static void undo_all(struct store *s)
{
    struct store_txn *t = &s->txn;
    for (size_t i = t->n; i-- > 0;) {
        struct store_undo *u = &t->undo[i];
        struct store_obj *o = store__idx_find(s, u->kind, u->ns, u->name);
        if (!u->prev) {
            if (o)
                store__idx_remove(s, u->kind, o);
        } else if (o) {
            json_decref(o->doc);
            o->doc = u->prev;
        } else {
            store__idx_insert(s, u->kind, u->ns, u->name, u->prev);
        }
        u->prev = NULL; /* taken */
    }
    while (s->rv > t->rv0)
        store__log_pop(s);
    store__db_discard(s);
}

static void end(struct store *s)
{
    undo_release(&s->txn);
    s->txn.open = false;
    store__txn_owner = NULL;
    pthread_mutex_unlock(&s->mu);
}

int store_txn_begin(struct store *s, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    pthread_mutex_lock(&s->mu);
    if (store__db_flush(s) < 0) {
        store__db_writable(s, why, whylen);
        pthread_mutex_unlock(&s->mu);
        return CU_EIO;
    }
    s->txn.open = true;
    s->txn.rv0 = s->rv;
    store__txn_owner = s;
    return 0;
}

int store_txn_commit(struct store *s, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    int rc = store__db_flush(s);
    if (rc < 0) {
        store__db_writable(s, why, whylen);
        undo_all(s);
    }
    end(s);
    return rc;
}

void store_txn_rollback(struct store *s)
{
    undo_all(s);
    end(s);
}

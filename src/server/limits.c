/*
 * limits: the accounting behind the server's connection limits (pure but
 * for its mutex; http.c calls it from libmicrohttpd's threads).
 *
 * Every open TCP connection is counted against its client (the peer IP
 * address, without the port) and in total. A connection whose request
 * became a stream (watch, `logs -f`) moves from the connection count to the
 * watch count for as long as the stream lasts, so long-lived watches never
 * use up the room of plain requests, and the reverse. A request over a
 * limit is answered 429 by http.c (the limit's flag name comes from here);
 * nothing here closes anything.
 *
 * Invariants: for every client entry, conns + watches > 0 (an entry is
 * removed when both reach 0); the totals are the sums over the entries.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "server/srv-int.h"
#include "util/xalloc.h"

struct client_count {
    char *client;
    unsigned conns;
    unsigned watches;
    UT_hash_handle hh;
};

struct srv_conn_table {
    pthread_mutex_t mu;
    struct srv_limits lim;
    struct client_count *clients; /* uthash by client */
    unsigned conns, watches;      /* totals */
};

void srv_limits_defaults(struct srv_limits *l)
{
    memset(l, 0, sizeof(*l));
    l->max_connections = 4096;
    l->max_connections_per_client = 512;
    l->max_watches = 10000;
    l->max_watches_per_client = 4096;
    l->max_body_bytes = (size_t)3 << 20; /* Kubernetes' 3 MiB request cap */
    l->request_timeout_ms = 60000;
    l->idle_timeout_s = 120;
    l->threads = 4;
}

struct srv_conn_table *srv_conn_table_new(const struct srv_limits *lim)
{
    struct srv_conn_table *t = xcalloc(1, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    t->lim = *lim;
    return t;
}

void srv_conn_table_free(struct srv_conn_table *t)
{
    if (!t)
        return;
    struct client_count *c, *tmp;
    HASH_ITER(hh, t->clients, c, tmp)
    {
        HASH_DEL(t->clients, c);
        xfree(c->client);
        xfree(c);
    }
    pthread_mutex_destroy(&t->mu);
    xfree(t);
}

/* The entry of client, created when create is set (else NULL when absent).
 * Called with t->mu held. */
static struct client_count *entry(struct srv_conn_table *t, const char *client, bool create)
{
    struct client_count *c;
    HASH_FIND_STR(t->clients, client, c);
    if (!c && create) {
        c = xcalloc(1, sizeof(*c));
        c->client = xstrdup(client);
        HASH_ADD_KEYPTR(hh, t->clients, c->client, strlen(c->client), c);
    }
    return c;
}

static void drop_if_empty(struct srv_conn_table *t, struct client_count *c)
{
    if (c->conns || c->watches)
        return;
    HASH_DEL(t->clients, c);
    xfree(c->client);
    xfree(c);
}

void srv_conn_opened(struct srv_conn_table *t, const char *client)
{
    pthread_mutex_lock(&t->mu);
    entry(t, client, true)->conns++;
    t->conns++;
    pthread_mutex_unlock(&t->mu);
}

void srv_conn_closed(struct srv_conn_table *t, const char *client, bool streaming)
{
    pthread_mutex_lock(&t->mu);
    struct client_count *c = entry(t, client, false);
    if (c) {
        if (streaming && c->watches) {
            c->watches--;
            t->watches--;
        } else if (!streaming && c->conns) {
            c->conns--;
            t->conns--;
        }
        drop_if_empty(t, c);
    }
    pthread_mutex_unlock(&t->mu);
}

const char *srv_conn_check(struct srv_conn_table *t, const char *client)
{
    const char *over = NULL;
    pthread_mutex_lock(&t->mu);
    struct client_count *c = entry(t, client, false);
    if (c && c->conns > t->lim.max_connections_per_client)
        over = "--max-connections-per-client";
    else if (t->conns > t->lim.max_connections)
        over = "--max-connections";
    pthread_mutex_unlock(&t->mu);
    return over;
}

const char *srv_watch_begin(struct srv_conn_table *t, const char *client)
{
    const char *over = NULL;
    pthread_mutex_lock(&t->mu);
    struct client_count *c = entry(t, client, true);
    if (c->watches >= t->lim.max_watches_per_client)
        over = "--max-watches-per-client";
    else if (t->watches >= t->lim.max_watches)
        over = "--max-watches";
    if (!over) {
        c->watches++;
        t->watches++;
        if (c->conns) {
            c->conns--;
            t->conns--;
        }
    }
    drop_if_empty(t, c);
    pthread_mutex_unlock(&t->mu);
    return over;
}

void srv_watch_end(struct srv_conn_table *t, const char *client)
{
    pthread_mutex_lock(&t->mu);
    struct client_count *c = entry(t, client, true);
    if (c->watches) {
        c->watches--;
        t->watches--;
    }
    c->conns++;
    t->conns++;
    pthread_mutex_unlock(&t->mu);
}

void srv_conn_counts(struct srv_conn_table *t, const char *client, unsigned *conns,
                     unsigned *watches)
{
    pthread_mutex_lock(&t->mu);
    struct client_count *c = client ? entry(t, client, false) : NULL;
    *conns = client ? (c ? c->conns : 0) : t->conns;
    *watches = client ? (c ? c->watches : 0) : t->watches;
    pthread_mutex_unlock(&t->mu);
}


/*
 * event: v1 Event recording for the control loop (ctrl_event, see ctrl.h),
 * aggregated as Kubernetes' event recorder does: a repeat of the same
 * (involved object uid, reason, message) counts on the existing Event
 * instead of writing a new one.
 *
 * The aggregation table keeps every key it saw (with record_events off,
 * whether a key is new decides whether a random draw happens, and draws
 * decide later uids), so it grows to one entry per distinct message; most
 * lookups are of new keys. A Bloom filter over the key hashes (uthash's
 * HASH_BLOOM, this file's tables only) answers most of those without
 * walking a bucket chain of cold entries.
 *
 * Invariants: an entry's Event object, when one is written, is named
 * <object name>.<16 hex digits of the draw>; an entry whose Event object
 * vanished is replaced by a new one on its next repeat.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Event keys carry a whole message (~200 bytes): hashed a word at a time
 * (cu_hash_bytes, util/hash.h) rather than by uthash's byte-wise default. */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
#define HASH_BLOOM 21 /* 2^21 bits = 256 KiB per table */
#include <uthash.h>
/* The table starts with 2^16 buckets (1 MiB, zero pages until touched)
 * instead of uthash's 32: a run records about four keys per Workload, and
 * each doubling on the way there rehashes every entry, one cache miss per
 * cold entry (read where HASH_ADD expands, below). */
#undef HASH_INITIAL_NUM_BUCKETS
#undef HASH_INITIAL_NUM_BUCKETS_LOG2
#define HASH_INITIAL_NUM_BUCKETS (1U << 16)
#define HASH_INITIAL_NUM_BUCKETS_LOG2 16U

#include "api/kinds.h"
#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

struct event_agg {
    UT_hash_handle hh;
    char *ns;   /* NULL when no Event object is written (record_events) */
    char *name; /* Event object name, or NULL likewise */
    char key[]; /* uid|reason|message, allocated with the entry */
};

/* Unlink agg from the table and free it. */
static void agg_drop(struct event_agg **aggs, struct event_agg *agg)
{
    HASH_DEL(*aggs, agg);
    xfree(agg->ns);
    xfree(agg->name);
    xfree(agg);
}

void ctrl__events_free(struct event_agg **aggs)
{
    while (*aggs)
        agg_drop(aggs, *aggs);
}

/* Count a repeat of an aggregated Event (count, lastTimestamp). False when
 * its Event object is gone (the caller starts a new one). */
static bool event_repeat(struct ctrl *c, struct event_agg *agg, const char *ts)
{
    if (!ctrl_cfg(c)->record_events)
        return true; /* nothing stored: every key seen stays aggregated */
    struct store *st = ctrl_store(c);
    json_t *cur = store_get(st, KIND_EVENT, agg->ns, agg->name);
    if (!cur)
        return false;
    json_t *ev = jx_deep_copy(cur);
    json_decref(cur);
    json_object_set_new(ev, "count", json_integer(JX_INT(ev, 1, "count") + 1));
    json_object_set_new(ev, "lastTimestamp", json_string(ts));
    store_update(st, KIND_EVENT, agg->ns, ev, STORE_UPDATE_ALL, NULL);
    json_decref(ev);
    return true;
}

/* Create the v1 Event object. Returns 0 or the store's error. */
static int event_create(struct ctrl *c, const json_t *obj, const char *ns, const char *name,
                        const char *type, const char *reason, const char *msg, const char *ts)
{
    json_t *ev = api_object_new("v1", "Event", ns, name);
    json_t *io = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion",
                           jx_or_empty(JX_STR(obj, "apiVersion")), "kind",
                           jx_or_empty(JX_STR(obj, "kind")), "name",
                           jx_or_empty(api_name(obj)), "uid", jx_or_empty(api_uid(obj)));
    if (api_namespace(obj))
        json_object_set_new(io, "namespace", json_string(api_namespace(obj)));
    json_object_set_new(ev, "involvedObject", io);
    json_object_set_new(ev, "type", json_string(type));
    json_object_set_new(ev, "reason", json_string(reason));
    json_object_set_new(ev, "message", json_string(msg));
    json_object_set_new(ev, "source", json_pack("{s:s}", "component", "cueue"));
    json_object_set_new(ev, "reportingComponent", json_string("cueue"));
    json_object_set_new(ev, "count", json_integer(1));
    json_object_set_new(ev, "firstTimestamp", json_string(ts));
    json_object_set_new(ev, "lastTimestamp", json_string(ts));
    return store_create_take(ctrl_store(c), KIND_EVENT, ns, ev, NULL); /* ev is ours alone */
}

/* A new entry for key (klen bytes) after the draw: writes its Event object
 * when record_events is on. Returns the entry to keep, or NULL when the
 * store refused the Event (nothing is kept, as before). */
static struct event_agg *event_start(struct ctrl *c, const json_t *obj, const char *type,
                                     const char *reason, const char *msg, const char *ts,
                                     const char *key, size_t klen)
{
    /* drawn whether or not the Event is written (record_events) */
    uint64_t draw = rng_next(ctrl_rng(c));
    char *name = NULL;
    const char *ns = NULL;
    if (ctrl_cfg(c)->record_events) {
        ns = api_namespace(obj);
        if (!ns || !ns[0])
            ns = "default";
        char suffix[17];
        snprintf(suffix, sizeof(suffix), "%016llx", (unsigned long long)draw);
        name = xasprintf("%s.%s", jx_or_empty(api_name(obj)), suffix);
        if (event_create(c, obj, ns, name, type, reason, msg, ts) != 0) {
            xfree(name);
            return NULL;
        }
    } else {
        /* and the uid the store would have drawn for it (`cueue sim` gives
         * the store and the control plane one rng); no Event object, so
         * the aggregate keeps no name */
        rng_uuid_skip(ctrl_rng(c));
    }
    /* xmalloc: the key fills the rest, uthash sets the handle */
    struct event_agg *agg = xmalloc(sizeof(*agg) + klen + 1);
    memcpy(agg->key, key, klen + 1);
    agg->ns = name ? xstrdup(ns) : NULL;
    agg->name = name;
    return agg;
}

/* Formatted text in buf (size n) when it fits, else in a new string:
 * *heap is set to what the caller frees (NULL when buf was used). */
static const char *format_into(char *buf, size_t n, char **heap, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int len = vsnprintf(buf, n, fmt, cp);
    va_end(cp);
    *heap = NULL;
    if (len >= 0 && (size_t)len < n)
        return buf;
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    sbuf_vaddf(&sb, fmt, ap);
    *heap = sbuf_take(&sb);
    sbuf_release(&sb);
    return *heap;
}

void ctrl_event(struct ctrl *c, const json_t *obj, const char *type, const char *reason,
                const char *fmt, ...)
{
    char mbuf[512], kbuf[1024];
    char *mheap = NULL, *kheap = NULL;
    va_list ap;
    va_start(ap, fmt);
    /* most callers pass a finished message through "%s": no formatting
     * (NULL reads as glibc's printf prints it) */
    const char *msg;
    if (fmt[0] == '%' && fmt[1] == 's' && !fmt[2]) {
        msg = va_arg(ap, const char *);
        msg = msg ? msg : "(null)";
    } else {
        msg = format_into(mbuf, sizeof(mbuf), &mheap, fmt, ap);
    }
    va_end(ap);

    /* the key, uid|reason|message, built without allocating when it fits */
    const char *uid = jx_or_empty(api_uid(obj));
    size_t nu = strlen(uid), nr = strlen(reason), nm = strlen(msg);
    size_t klen = nu + 1 + nr + 1 + nm;
    char *key = klen < sizeof(kbuf) ? kbuf : (kheap = xmalloc(klen + 1));
    memcpy(key, uid, nu);
    key[nu] = '|';
    memcpy(key + nu + 1, reason, nr);
    key[nu + 1 + nr] = '|';
    memcpy(key + nu + 2 + nr, msg, nm + 1);

    char ts[TIMEFMT_LEN] = "";
    if (ctrl_cfg(c)->record_events)
        timefmt_rfc3339(ctrl_now(c), false, ts);

    struct event_agg **aggs = ctrl__events(c);
    struct event_agg *agg;
    unsigned hashv; /* hashed once for the lookup and the insertion */
    HASH_VALUE(key, klen, hashv);
    HASH_FIND_BYHASHVALUE(hh, *aggs, key, klen, hashv, agg);
    if (!agg || !event_repeat(c, agg, ts)) {
        if (agg)
            agg_drop(aggs, agg);
        agg = event_start(c, obj, type, reason, msg, ts, key, klen);
        if (agg)
            HASH_ADD_KEYPTR_BYHASHVALUE(hh, *aggs, agg->key, klen, hashv, agg);
    }
    xfree(kheap);
    xfree(mheap);
}

/*
 * decide: building the decisions eng_schedule returns (reservations,
 * preemptions, pending statuses), releasing them, and the small string
 * vector the assigner uses for Kueue's sorted reason lists.
 *
 * Pending statuses are emitted only when (reason, message) differs from the
 * last one emitted for the workload, so repeated cycles do not flood the
 * control plane with identical writes.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

char *eng__key_join(char *buf, size_t cap, const char *ns, const char *name, size_t *len)
{
    size_t ln = strlen(ns), lm = strlen(name);
    char *key = ln + lm + 2 <= cap ? buf : xmalloc(ln + lm + 2);
    memcpy(key, ns, ln);
    key[ln] = '/';
    memcpy(key + ln + 1, name, lm + 1);
    *len = ln + lm + 1;
    return key;
}

char *eng__sbuf_take(struct sbuf *sb)
{
    char *s = sbuf_take(sb);
    sbuf_release(sb);
    return s;
}

/* ---- interned strings ---- */

const char *eng__istr_get(struct eng *e, const char *s)
{
    struct eng__istr *i;
    HASH_FIND_STR(e->istrs, s, i);
    if (!i) {
        size_t n = strlen(s);
        i = xmalloc(sizeof(*i) + n + 1);
        memset(i, 0, sizeof(*i));
        memcpy(i->s, s, n + 1);
        bool in; /* not in the table: this copy is unshared, freed by its last put */
        ENG__HASH_ADD(e->istrs, i->s, n, i, in);
        (void)in;
    }
    i->refs++;
    return i->s;
}

const char *eng__istr_ref(const char *s)
{
    ((struct eng__istr *)(s - offsetof(struct eng__istr, s)))->refs++;
    return s;
}

void eng__istr_put(struct eng *e, const char *s)
{
    if (!s)
        return;
    struct eng__istr *i = (struct eng__istr *)(s - offsetof(struct eng__istr, s));
    if (--i->refs > 0)
        return;
    if (i->hh.tbl)
        HASH_DEL(e->istrs, i);
    xfree(i);
}

/* ---- string vectors ---- */

void eng__strv_push(struct eng__strv *s, char *str)
{
    XGROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = str;
}

void eng__strv_pushf(struct eng__strv *s, const char *fmt, ...)
{
    struct sbuf sb;
    va_list ap;
    sbuf_init(&sb, 0);
    va_start(ap, fmt);
    sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    eng__strv_push(s, eng__sbuf_take(&sb));
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void eng__strv_sort_unique(struct eng__strv *s)
{
    if (s->n < 2)
        return;
    qsort(s->v, s->n, sizeof(char *), str_cmp);
    size_t m = 1;
    for (size_t i = 1; i < s->n; i++) {
        if (strcmp(s->v[i], s->v[m - 1]) == 0)
            xfree(s->v[i]);
        else
            s->v[m++] = s->v[i];
    }
    s->n = m;
}

void eng__strv_clear(struct eng__strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        xfree(s->v[i]);
    XFREE(s->v);
    s->n = s->cap = 0;
}

void eng__strv_copy(struct eng__strv *dst, const struct eng__strv *src)
{
    for (size_t i = 0; i < src->n; i++)
        eng__strv_push(dst, xstrdup(src->v[i]));
}

char *eng__strv_join(const struct eng__strv *s, const char *sep)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (size_t i = 0; i < s->n; i++) {
        if (i)
            sbuf_adds(&sb, sep);
        sbuf_adds(&sb, s->v[i]);
    }
    return eng__sbuf_take(&sb);
}

/* ---- decisions ---- */

void eng__wl_ref_set(struct eng_wl_ref *r, const struct eng__wl *wl)
{
    r->ns = xstrdup(wl->ns);
    r->name = xstrdup(wl->name);
    r->uid = xstrdup(wl->uid);
}

void eng_wl_ref_release(struct eng_wl_ref *r)
{
    if (!r)
        return;
    XFREE(r->ns);
    XFREE(r->name);
    XFREE(r->uid);
}

bool eng__budget_left(const struct eng *e)
{
    return !e->max_decisions || e->n_decided < e->max_decisions;
}

struct eng_decision *eng__decision_new(struct eng *e, enum eng_decision_type t,
                                       const struct eng__wl *wl, const char *cq)
{
    struct eng_result *r = e->out;
    XGROW(r->items, r->cap, r->n + 1);
    struct eng_decision *d = &r->items[r->n++];
    memset(d, 0, sizeof(*d));
    d->type = t;
    eng__wl_ref_set(&d->wl, wl);
    d->cluster_queue = cq ? xstrdup(cq) : NULL;
    e->n_decided++;
    e->progress++;
    return d;
}

void eng__emit_pending(struct eng *e, struct eng__wl *wl, const char *reason, const char *msg)
{
    /* the status already emitted: nothing to do (saves interning) */
    if (wl->last_reason && wl->last_msg && !strcmp(wl->last_reason, reason) && !strcmp(wl->last_msg, msg))
        return;
    eng__emit_pending_interned(e, wl, eng__istr_get(e, reason), eng__istr_get(e, msg));
}

void eng__emit_pending_interned(struct eng *e, struct eng__wl *wl, const char *r, const char *m)
{
    if (r == wl->last_reason && m == wl->last_msg) {
        eng__istr_put(e, r);
        eng__istr_put(e, m);
        return;
    }
    eng__istr_put(e, wl->last_reason);
    eng__istr_put(e, wl->last_msg);
    wl->last_reason = r;
    wl->last_msg = m;
    if (!e->out) {
        /* outside eng_schedule: emitted at the start of the next call */
        if (!wl->unsent)
            DL_APPEND2(e->unsent, wl, uprev, unext);
        wl->unsent = true;
        return;
    }
    struct eng_decision *d = eng__decision_new(e, ENG_PENDING, wl, wl->qcq ? wl->qcq->node.name : NULL);
    d->reason = xstrdup(r);
    d->message = xstrdup(m);
}

void eng__unsent_forget(struct eng *e, struct eng__wl *wl)
{
    if (wl->unsent)
        DL_DELETE2(e->unsent, wl, uprev, unext);
    wl->unsent = false;
}

void eng__flush_unsent(struct eng *e)
{
    while (e->unsent) {
        struct eng__wl *wl = e->unsent;
        eng__unsent_forget(e, wl);
        struct eng_decision *d =
            eng__decision_new(e, ENG_PENDING, wl, wl->qcq ? wl->qcq->node.name : NULL);
        d->reason = xstrdup(wl->last_reason);
        d->message = xstrdup(wl->last_msg);
    }
}

void eng_result_release(struct eng_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        struct eng_decision *d = &r->items[i];
        eng_wl_ref_release(&d->wl);
        eng_wl_ref_release(&d->replaces);
        eng_wl_ref_release(&d->preemptor);
        xfree(d->cluster_queue);
        xfree(d->event_message);
        xfree(d->reason);
        xfree(d->message);
        api_admission_release(&d->admission);
    }
    XFREE(r->items);
    r->n = r->cap = 0;
    r->next_wakeup_ms = 0;
    r->cycles = 0;
    r->head_cycles = 0;
}

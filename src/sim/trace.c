/*
 * trace: the simulator's trace records, one JSON object per line. The
 * format is a contract (docs/sim.md): keys come in a fixed order (the
 * contract's keys first, in the order of `key_order`, then any other key
 * alphabetically, at every nesting level), times are seconds printed from
 * integer milliseconds, and nothing depends on hash order or wall time, so
 * the same scenario gives byte-identical output.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char *const key_order[] = {
    "time", "event", "workload", "clusterQueue", "request", "pool", "name", "count",
    "podSets", "flavors", "preemptor", "check", "state", "condition", "status", "nodes",
    "total", "names", "reason", "message", NULL,
};

static const char *const derived_events[] = {
    "QuotaReserved", "Admitted", "Pending", "Preempted", "Evicted", "Requeued", "Finished",
    "Deactivated", "AdmissionCheckUpdated", "ProvisioningRequestCreated",
    "ProvisioningRequestUpdated", "NodesScaledUp", "NodesScaledDown", NULL,
};

bool sim_trace_is_derived(const char *event)
{
    for (size_t i = 0; event && derived_events[i]; i++)
        if (derived_events[i][0] == event[0] && !strcmp(derived_events[i], event))
            return true;
    return false;
}

bool sim_trace_is_key(const char *key)
{
    for (size_t i = 0; key && key_order[i]; i++)
        if (!strcmp(key_order[i], key))
            return true;
    return false;
}

static int key_rank(const char *k)
{
    for (int i = 0; key_order[i]; i++)
        if (!strcmp(key_order[i], k))
            return i;
    return 1000;
}

static int key_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = key_rank(x), ry = key_rank(y);
    if (rx != ry)
        return rx - ry;
    return strcmp(x, y);
}

static void format_value(struct sbuf *sb, const json_t *v);

static void format_scalar(struct sbuf *sb, const json_t *v)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    sbuf_adds(sb, s ? s : "null");
    free(s); /* jansson's allocation */
}

static void format_object(struct sbuf *sb, const json_t *o)
{
    size_t n = json_object_size(o), i = 0;
    const char **keys = xcalloc(n + 1, sizeof(*keys));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
        keys[i++] = k;
    qsort(keys, n, sizeof(*keys), key_cmp);
    sbuf_addc(sb, '{');
    for (i = 0; i < n; i++) {
        json_t *key = json_string(keys[i]);
        if (i)
            sbuf_addc(sb, ',');
        format_scalar(sb, key);
        json_decref(key);
        sbuf_addc(sb, ':');
        format_value(sb, json_object_get(o, keys[i]));
    }
    sbuf_addc(sb, '}');
    xfree(keys);
}

static void format_value(struct sbuf *sb, const json_t *v)
{
    if (json_is_object(v)) {
        format_object(sb, v);
    } else if (json_is_array(v)) {
        sbuf_addc(sb, '[');
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (i)
                sbuf_addc(sb, ',');
            format_value(sb, e);
        }
        sbuf_addc(sb, ']');
    } else {
        format_scalar(sb, v);
    }
}

void sim_trace_format(struct sbuf *sb, int64_t rel_ms, const char *event, const json_t *fields)
{
    char t[SIM_SECONDS_LEN];
    json_t *ev = json_string(event);
    sbuf_addf(sb, "{\"time\":%s,\"event\":", sim_format_seconds(rel_ms, t));
    format_scalar(sb, ev);
    json_decref(ev);
    json_t *rest = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)fields, k, v)
        if (strcmp(k, "time") && strcmp(k, "event"))
            json_object_set(rest, k, v);
    if (json_object_size(rest)) {
        struct sbuf inner;
        sbuf_init(&inner, 0);
        format_object(&inner, rest);
        /* splice "{...}" after the leading keys */
        sbuf_addc(sb, ',');
        sbuf_add(sb, inner.buf + 1, inner.len - 1);
        sbuf_release(&inner);
    } else {
        sbuf_addc(sb, '}');
    }
    json_decref(rest);
}

static void count_event(struct sim *s, const char *event)
{
    /* most callers name their events with literals: the same address */
    size_t slot = ((uintptr_t)event >> 3) & (SIM_EVENT_MEMO - 1);
    struct sim_event_memo *m = &s->event_memo[slot];
    json_t *c;
    if (m->event == event && !strcmp(m->name, event)) {
        c = m->count;
    } else {
        void *it = json_object_iter_at(s->event_counts, event);
        if (!it) {
            json_object_set_new(s->event_counts, event, json_integer(0));
            it = json_object_iter_at(s->event_counts, event);
        }
        /* the key and the counter stay while the member does: always */
        m->event = event;
        m->name = json_object_iter_key(it);
        m->count = c = json_object_iter_value(it);
    }
    json_integer_set(c, json_integer_value(c) + 1); /* counted in place */
}

bool sim_trace_wants_fields(const struct sim *s)
{
    return s->opt.trace_out || s->opt.keep_records;
}

void sim_trace_emit(struct sim *s, const char *event, json_t *fields)
{
    int64_t rel = clk_now(&s->clock.clk) - s->sc->start_ms;
    count_event(s, event);
    s->n_records++;
    if (s->opt.trace_out) {
        sbuf_reset(&s->line);
        sim_trace_format(&s->line, rel, event, fields);
        sbuf_addc(&s->line, '\n');
        fwrite(s->line.buf, 1, s->line.len, s->opt.trace_out);
    }
    if (s->opt.keep_records) {
        json_t *rec = json_object();
        json_object_set_new(rec, "time", json_real((double)rel / 1000.0));
        json_object_set_new(rec, "event", json_string(event));
        if (fields)
            json_object_update(rec, fields);
        json_array_append_new(s->records, rec);
    }
    json_decref(fields);
}

void sim_trace_sink(void *ctx, json_t *rec)
{
    struct sim *s = ctx;
    const char *event = json_string_value(json_object_get(rec, "event"));
    if (!event || sim_trace_is_derived(event)) {
        json_decref(rec);
        return;
    }
    json_t *fields = jx_deep_copy(rec);
    json_object_del(fields, "time");
    json_object_del(fields, "event");
    char *ev = xstrdup(event);
    json_decref(rec);
    sim_trace_emit(s, ev, fields);
    xfree(ev);
}

/*
 * check: a scenario's expected trace facts against the trace it produced
 * (`cueue sim --check`, used by tests/conformance/run.sh).
 *
 * `expect` is a list of facts matched in order as a subsequence: a fact
 * {event: E, k: v, ...} matches the first later record whose event is E and
 * whose every given key has the given value (numbers compared as numbers,
 * objects and arrays exactly); a fact {notEvent: E, ...} asserts that no
 * record matching it lies between the previous positive fact's match and the
 * next positive fact's match (the end of the trace when none follows). A
 * key ending in "~" ("workload~: default/job-a-*") matches the record's key
 * without the "~" against a glob pattern (fnmatch), for names and messages
 * that carry generated parts (hash suffixes, UIDs). Facts about the run's
 * warnings stand apart from the trace order: {warning: W} ({warning~: G})
 * holds when some warning of the run is W (matches G), {notWarning: W}
 * ({notWarning~: G}) when none is. A
 * failed fact is reported with the records about the same workload (or
 * request, or pool) so the difference is readable; later facts are still
 * checked, from where the last match left off.
 */
#include <fnmatch.h>
#include <math.h>
#include <string.h>

#include "sim/sim-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define NEAR_RECORDS_MAX 12

static bool value_match(const json_t *want, const json_t *got)
{
    if (json_is_number(want) && json_is_number(got))
        return fabs(json_number_value(want) - json_number_value(got)) < 1e-6;
    if (json_is_object(want)) {
        if (!json_is_object(got) || json_object_size(want) != json_object_size(got))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)want, k, v)
            if (!value_match(v, json_object_get(got, k)))
                return false;
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(got) || json_array_size(want) != json_array_size(got))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!value_match(json_array_get(want, i), json_array_get(got, i)))
                return false;
        return true;
    }
    return jx_equal(want, got);
}

static bool is_negative(const json_t *fact) { return json_object_get(fact, "notEvent") != NULL; }

/* The one key of a warning fact ("warning", "warning~", "notWarning",
 * "notWarning~"), or NULL for a trace fact. */
static const char *warning_key(const json_t *fact)
{
    static const char *const keys[] = {"warning", "warning~", "notWarning", "notWarning~", NULL};
    for (size_t i = 0; keys[i]; i++)
        if (json_object_get(fact, keys[i]))
            return keys[i];
    return NULL;
}

/* "workload~" -> "workload" (caller frees), or NULL when k is no glob key. */
static char *glob_key(const char *k)
{
    size_t n = strlen(k);
    return n > 1 && k[n - 1] == '~' ? xstrndup(k, n - 1) : NULL;
}

static bool glob_match(const json_t *pattern, const json_t *got)
{
    return json_is_string(pattern) && json_is_string(got) &&
           !fnmatch(json_string_value(pattern), json_string_value(got), 0);
}

static bool fact_match(const json_t *fact, const json_t *rec)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)fact, k, v) {
        char *g = glob_key(k);
        bool ok = g ? glob_match(v, json_object_get(rec, g))
                    : value_match(v, json_object_get(rec, strcmp(k, "notEvent") ? k : "event"));
        xfree(g);
        if (!ok)
            return false;
    }
    return true;
}

static void print_record(FILE *out, const char *indent, size_t idx, const json_t *rec)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    json_t *fields = jx_deep_copy(rec);
    json_object_del(fields, "time");
    json_object_del(fields, "event");
    int64_t ms = llround(json_number_value(json_object_get(rec, "time")) * 1000.0);
    sim_trace_format(&sb, ms, jx_or_empty(JX_STR(rec, "event")), fields);
    fprintf(out, "%s#%zu %s\n", indent, idx + 1, sb.buf);
    json_decref(fields);
    sbuf_release(&sb);
}

static void print_fact(FILE *out, const char *what, size_t i, const json_t *fact)
{
    char *s = jx_dumps(fact);
    fprintf(out, "%s expect[%zu]: %s\n", what, i, s);
    xfree(s);
}

/* Does rec concern the same subject (workload, request or pool; else the
 * same event) as the fact? */
static bool same_subject(const json_t *fact, const json_t *rec, const char **label)
{
    static const char *const subjects[] = {"workload", "request", "pool", NULL};
    for (size_t i = 0; subjects[i]; i++) {
        char *g = xasprintf("%s~", subjects[i]);
        const json_t *exact = json_object_get(fact, subjects[i]);
        const json_t *pattern = json_object_get(fact, g);
        xfree(g);
        if (exact || pattern) {
            *label = subjects[i];
            return exact ? jx_equal(exact, json_object_get(rec, subjects[i]))
                         : glob_match(pattern, json_object_get(rec, subjects[i]));
        }
    }
    *label = "event";
    const json_t *ev = json_object_get(fact, "event");
    return value_match(ev ? ev : json_object_get(fact, "notEvent"), json_object_get(rec, "event"));
}

/* Records about the same subject as the fact, to show what did happen. */
static void print_near(FILE *out, const json_t *fact, const json_t *records)
{
    const char *label = "event";
    size_t shown = 0, i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        if (!same_subject(fact, rec, &label))
            continue;
        if (!shown)
            fprintf(out, "  records about the same %s:\n", label);
        if (shown++ < NEAR_RECORDS_MAX)
            print_record(out, "    ", i, rec);
    }
    if (!shown) {
        json_t *empty = json_object();
        same_subject(fact, empty, &label);
        json_decref(empty);
        fprintf(out, "  no record about the same %s\n", label);
    } else if (shown > NEAR_RECORDS_MAX) {
        fprintf(out, "    ... %zu more\n", shown - NEAR_RECORDS_MAX);
    }
}

/* Whether some record of the run has key k. */
static bool some_record_has(const json_t *records, const char *k)
{
    size_t j;
    json_t *r;
    json_array_foreach(records, j, r) {
        if (json_object_get(r, k))
            return true;
    }
    return false;
}

/* A trace fact's event name and keys must be ones the trace can hold: a
 * typo would otherwise only show as "no record matches", or, in a
 * notEvent fact, as a fact that can never fail. */
static int validate_trace_fact(const json_t *f, size_t i, const json_t *records, FILE *out)
{
    const char *ev = JX_STR(f, "event") ? JX_STR(f, "event") : JX_STR(f, "notEvent");
    if (!sim_trace_is_derived(ev)) {
        fprintf(out, "malformed expect[%zu]: unknown event \"%s\" (the trace's events are "
                     "listed in docs/sim.md)\n", i, ev);
        return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)f, k, v) {
        if (!strcmp(k, "event") || !strcmp(k, "notEvent"))
            continue;
        char *bare = xstrdup(k);
        size_t n = strlen(bare);
        if (n && bare[n - 1] == '~')
            bare[n - 1] = '\0';
        bool known = sim_trace_is_key(bare) || some_record_has(records, bare);
        const char *type_err = NULL;
        if (n && k[n - 1] == '~' && !json_is_string(v))
            type_err = "a glob key (ending in ~) takes a string pattern";
        else if ((!strcmp(bare, "time") || !strcmp(bare, "nodes") || !strcmp(bare, "total")) &&
                 !json_is_number(v))
            type_err = "takes a number";
        if (!known)
            fprintf(out, "malformed expect[%zu]: unknown key \"%s\" (no trace record has it; "
                         "the keys are listed in docs/sim.md)\n", i, k);
        else if (type_err)
            fprintf(out, "malformed expect[%zu]: key \"%s\" %s\n", i, k, type_err);
        xfree(bare);
        if (!known || type_err)
            return -1;
    }
    return 0;
}

static int validate(const json_t *expect, const json_t *records, FILE *out)
{
    size_t i;
    json_t *f;
    json_array_foreach(expect, i, f) {
        const char *wk = json_is_object(f) ? warning_key(f) : NULL;
        if (wk) {
            if (json_object_size(f) != 1 || !json_is_string(json_object_get(f, wk))) {
                fprintf(out, "malformed expect[%zu]: a warning fact has one string key: "
                             "warning, warning~, notWarning or notWarning~\n", i);
                return -1;
            }
            continue;
        }
        bool pos = json_is_string(json_object_get(f, "event"));
        bool neg = json_is_string(json_object_get(f, "notEvent"));
        if (!json_is_object(f) || pos == neg) {
            fprintf(out, "malformed expect[%zu]: each fact is an object with a string `event` "
                         "or a string `notEvent` (not both), or a warning fact\n", i);
            return -1;
        }
        if (validate_trace_fact(f, i, records, out))
            return -1;
    }
    return 0;
}

/* A warning fact against the run's warnings. Returns 1 when it fails. */
static int check_warning(const json_t *fact, size_t i, const json_t *warnings, FILE *out)
{
    const char *key = warning_key(fact);
    const json_t *want = json_object_get(fact, key);
    bool glob = key[strlen(key) - 1] == '~';
    bool negative = key[0] == 'n';
    const json_t *found = NULL;
    size_t j;
    json_t *w;
    json_array_foreach(warnings, j, w) {
        if (glob ? glob_match(want, w) : jx_equal(want, w)) {
            found = w;
            break;
        }
    }
    if ((found != NULL) != negative)
        return 0; /* held */
    print_fact(out, negative ? "FAIL: a warning matches" : "FAIL: no warning matches", i, fact);
    if (negative)
        fprintf(out, "  warning: %s\n", json_string_value(found));
    else if (!json_array_size(warnings))
        fprintf(out, "  the run gave no warning\n");
    json_array_foreach(warnings, j, w)
        if (!negative && j < NEAR_RECORDS_MAX)
            fprintf(out, "  warning: %s\n", json_string_value(w));
    return 1;
}

/* Negative facts pending[0..n) must not match records [from, to). */
static int check_negatives(const json_t *expect, const size_t *pending, size_t n,
                           const json_t *records, size_t from, size_t to, FILE *out)
{
    int failed = 0;
    for (size_t k = 0; k < n; k++) {
        const json_t *fact = json_array_get(expect, pending[k]);
        for (size_t j = from; j < to; j++) {
            if (fact_match(fact, json_array_get(records, j))) {
                print_fact(out, "FAIL: unexpected record for", pending[k], fact);
                print_record(out, "  found ", j, json_array_get(records, j));
                failed++;
                break;
            }
        }
    }
    return failed;
}

int sim_check(const json_t *expect, const json_t *records, const json_t *warnings, FILE *out)
{
    if (!json_is_array(expect) || !json_array_size(expect)) {
        fprintf(out, "the scenario has no `expect` facts\n");
        return -1;
    }
    if (validate(expect, records, out))
        return -1;
    size_t n_fact = json_array_size(expect), n_rec = json_array_size(records);
    size_t *pending = xcalloc(n_fact + 1, sizeof(*pending));
    size_t n_pending = 0, pos = 0, window_from = 0, matched = 0, n_warning_facts = 0;
    int failed = 0;
    for (size_t i = 0; i < n_fact; i++) {
        const json_t *fact = json_array_get(expect, i);
        if (warning_key(fact)) {
            failed += check_warning(fact, i, warnings, out);
            n_warning_facts++;
            continue;
        }
        if (is_negative(fact)) {
            pending[n_pending++] = i;
            continue;
        }
        size_t j = pos;
        while (j < n_rec && !fact_match(fact, json_array_get(records, j)))
            j++;
        if (j == n_rec) {
            print_fact(out, "FAIL: no record matches", i, fact);
            if (pos)
                print_record(out, "  searched after ", pos - 1, json_array_get(records, pos - 1));
            print_near(out, fact, records);
            failed++;
            continue;
        }
        failed += check_negatives(expect, pending, n_pending, records, window_from, j, out);
        n_pending = 0;
        matched++;
        pos = j + 1;
        window_from = pos;
    }
    failed += check_negatives(expect, pending, n_pending, records, window_from, n_rec, out);
    if (!failed && n_warning_facts)
        fprintf(out, "ok: %zu facts hold (%zu matched in order, %zu trace records; %zu about "
                     "%zu warnings)\n", n_fact, matched, n_rec, n_warning_facts,
                json_array_size(warnings));
    else if (!failed)
        fprintf(out, "ok: %zu facts hold (%zu matched in order, %zu trace records)\n", n_fact,
                matched, n_rec);
    xfree(pending);
    return failed;
}

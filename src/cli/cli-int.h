/*
 * cli-int: declarations shared by the cli module's files only (the libuv
 * convention: cli__ names are internal, cli_ names public).
 *
 * Shape of the module: cli.c dispatches a verb to its cmd_<verb>.c file;
 * every verb parses its flags with cli__parse (opts.c), talks to the server
 * only through client.c (libcurl), prints objects through output.c,
 * table.c, yamlout.c and jsonpath.c, and reports server errors with
 * status.c exactly as kubectl words them. Pure parts (flag mapping,
 * projections, patch computation) take no context and do no I/O so unit
 * tests can drive them.
 *
 * Invariants: a verb returns the process exit status (0 ok, 1 error) and
 * prints every error itself, on the context's err stream, as one line
 * starting "error: " or "Error from server (<reason>): ".
 */
#ifndef CUEUE_CLI_CLI_INT_H
#define CUEUE_CLI_CLI_INT_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api/kinds.h"
#include "util/sbuf.h"

#define CLI_VERSION "0.1.0"
#define CLI_DEFAULT_SERVER "http://127.0.0.1:6443"
#define CLI_DEFAULT_NAMESPACE "default"

/* ---- context (cli.c) ---- */

/* What every verb gets: the resolved global flags and the output streams.
 * Strings are owned by the context unless noted. */
struct cli_ctx {
    char *server_flag;    /* --server, or NULL */
    char *state_dir_flag; /* --state-dir, or NULL */
    char *server;         /* resolved base URL without trailing '/', set lazily */
    struct cli_creds *creds; /* bearer token and CA, resolved lazily (config.c) */
    char *ns;             /* -n/--namespace, or "default" */
    bool ns_explicit;     /* -n was given */
    bool all_ns;          /* -A/--all-namespaces */
    const char *verb;     /* "get", "nodepool create": for messages (static) */
    FILE *out;            /* stdout (borrowed) */
    FILE *err;            /* stderr (borrowed) */
    void *curl;           /* CURL easy handle reused for keep-alive, or NULL */
    bool unreachable;     /* the server could not be reached once: said once, and
                           * verbs that send many requests stop there */
};

/* Release the context's strings and HTTP handle (not the streams).
 * (client.c) */
void cli__ctx_release(struct cli_ctx *c);

/* ---- flag parsing (opts.c) ---- */

/* One verb's flags: getopt_long options (terminated by a zero entry; may
 * be NULL) and getopt short-option letters (may be NULL). The global flags
 * (--server, -n/--namespace, -A/--all-namespaces, --state-dir, -h/--help)
 * are added by cli__parse. Codes of long-only options must be >= 256 and
 * below CLI_OPT_GLOBAL_BASE. */
struct cli_verb {
    const char *name;          /* "get", "nodepool create" */
    const char *help;          /* full --help text */
    const struct option *opts; /* verb flags */
    const char *short_opts;    /* e.g. "o:l:w" */
};

#define CLI_OPT_GLOBAL_BASE 0x4000
#define CLI_HELP 100 /* cli__parse: --help was given (help already printed); never an
                        * exit status (verbs return 0/1, so no clash) */

/* Positional arguments left after flags (borrowed from argv). */
struct cli_args {
    int n;
    char **v;
};

/* Called for each verb flag: code is the option's val, arg its value or
 * NULL. Returns 0, or -1 after printing an error. */
typedef int (*cli_opt_fn)(struct cli_ctx *c, void *st, int code, const char *arg);

/* Parse argv[0..argc) (argv[0] is the verb name; GNU permutation lets flags
 * and positionals mix, "--" ends flags). Global flags fill c; verb flags go
 * to fn. Returns 0 with positionals in *pos, CLI_HELP after printing the
 * verb's help to c->out, or -1 after printing a usage error to c->err
 * ("error: unknown flag: --x" + "See 'cueue get --help' for usage."). */
int cli__parse(struct cli_ctx *c, const struct cli_verb *verb, int argc, char **argv,
               cli_opt_fn fn, void *st, struct cli_args *pos);

/* Print "error: <msg>\nSee 'cueue <verb> --help' for usage.\n"; returns 1. */
int cli__usage_error(struct cli_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print "error: <msg>\n" to c->err; returns 1 (the exit status). */
int cli__error(struct cli_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a non-negative decimal integer (at most INT32_MAX). 0 or -1. */
int cli__parse_count(const char *s, int32_t *out);
/* Parse a boolean flag value as kubectl/gcloud do: true/false/1/0/yes/no
 * (case-insensitive). 0 or -1. */
int cli__parse_bool(const char *s, bool *out);

/* Splits a byte stream into lines (watch events, log lines). */
struct cli_lines {
    struct sbuf partial;                                   /* bytes after the last '\n' */
    int (*on_line)(void *st, const char *line, size_t n); /* without the '\n' */
    void *st;
};
void cli__lines_init(struct cli_lines *l, int (*on_line)(void *, const char *, size_t),
                     void *st);
/* Feed bytes; calls on_line for each complete line. Returns the first
 * non-zero on_line result (stop), else 0. */
int cli__lines_feed(struct cli_lines *l, const char *data, size_t n);
/* Deliver a trailing partial line, if any, and release the buffer. */
int cli__lines_finish(struct cli_lines *l);

/* The buffer's string, with the buffer released (sbuf_take re-initialises
 * the buffer, which would otherwise leak). Caller frees with xfree. */
static inline char *cli__sbuf_done(struct sbuf *sb)
{
    char *s = sbuf_take(sb);
    sbuf_release(sb);
    return s;
}

/* ---- configuration (config.c) ---- */

/* Where the CLI finds the server, in order: --server, $CUEUE_SERVER, the
 * file <state-dir>/server.url (state dir = --state-dir, $CUEUE_STATE_DIR,
 * $XDG_STATE_HOME/cueue, $HOME/.local/state/cueue, the same defaults as
 * `cueue server`), else CLI_DEFAULT_SERVER. getenv_fn lets tests supply
 * the environment (pass getenv). Returns a new string without a trailing
 * '/'; caller frees. */
char *cli__resolve_server(const char *server_flag, const char *state_dir_flag,
                          char *(*getenv_fn)(const char *));
/* The state directory `cueue server` uses by default: flag, else
 * $CUEUE_STATE_DIR, $XDG_STATE_HOME/cueue, $HOME/.local/state/cueue; NULL
 * when none is known. Caller frees. */
char *cli__state_dir(const char *state_dir_flag, char *(*getenv_fn)(const char *));
/* The base URL for c, resolved once (see cli__resolve_server). Borrowed. */
const char *cli__server(struct cli_ctx *c);
/* How the CLI proves who it is to the server and checks the server's
 * certificate: the bearer token ($CUEUE_TOKEN, else the current user's
 * token in <state-dir>/kubeconfig, the file `cueue server` writes) and the
 * CA (the current cluster's certificate-authority-data there, PEM). */
struct cli_creds {
    char *token;  /* NULL: none */
    char *ca_pem; /* NULL: none (the system's CAs) */
    char *server; /* the kubeconfig cluster's server URL; NULL: none */
};
/* Fill creds from kubeconfig text (YAML): the current context's user token,
 * cluster CA (base64-decoded) and cluster server. Missing parts stay NULL;
 * returns 0, or CU_EBADREQ when the text does not parse. All owned by
 * creds (cli__creds_free, or xfree each). */
int cli__kubeconfig_creds(const char *text, size_t len, struct cli_creds *creds);
/* Keep creds' token and CA only when they belong to server (a base URL as
 * cli__resolve_server gives it): the kubeconfig's cluster server, normalised
 * the same way, must be the same URL. Otherwise both are freed and set to
 * NULL, so a token is never sent to another server (kubectl likewise binds
 * a user's token to its context's cluster). */
void cli__creds_bind(struct cli_creds *creds, const char *server);
/* c's credentials, resolved once: the state directory's kubeconfig, kept
 * only for the server c talks to (cli__creds_bind), then $CUEUE_TOKEN,
 * which always wins. Borrowed. */
const struct cli_creds *cli__creds(struct cli_ctx *c);
void cli__creds_free(struct cli_creds *creds);

/* ---- HTTP (client.c) ---- */

/* Media types. */
#define CLI_JSON "application/json"
#define CLI_TABLE "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
#define CLI_MERGE_PATCH "application/merge-patch+json"

/* The outcome of one API call. */
struct cli_call {
    long http_status; /* 0 when no HTTP response arrived */
    struct sbuf body; /* raw response body (capped) */
    json_t *json;     /* body parsed as JSON, or NULL */
    char *transport;  /* libcurl's message when http_status == 0 (owned) */
};

void cli__call_init(struct cli_call *r);
void cli__call_release(struct cli_call *r);
/* True when the call got a 2xx answer. */
bool cli__call_ok(const struct cli_call *r);

/* One request to path (absolute path plus query, e.g.
 * "/api/v1/namespaces/default/pods?limit=500") on c's server. body may be
 * NULL; content_type is required with a body. Waits at most 30 s. Fills r
 * (initialise it first). Returns 0 when an HTTP answer arrived (any
 * status), CU_EIO when the server could not be reached (r->transport set).
 * Never prints. */
int cli__http(struct cli_ctx *c, const char *method, const char *path, const char *accept,
              const char *content_type, const char *body, struct cli_call *r);

/* Sink for streamed bodies: return 0 to continue, non-zero to stop. */
typedef int (*cli_sink_fn)(void *st, const char *data, size_t n);

/* A GET whose 2xx body is handed to sink as it arrives (watch, logs -f),
 * with no overall time limit. Non-2xx bodies are collected into r instead.
 * Returns 0 when the stream ended (server closed it, or the sink stopped
 * it), CU_EIO when the server could not be reached. */
int cli__http_stream(struct cli_ctx *c, const char *path, const char *accept, cli_sink_fn sink,
                     void *st, struct cli_call *r);

/* Build a curl easy handle for a streaming GET of path (used by logs -f to
 * follow several pods with one curl multi handle). 2xx bodies go to
 * sink(st); other bodies are dropped (check CURLINFO_RESPONSE_CODE). Free
 * with cli__stream_handle_free. Returns NULL only when libcurl cannot
 * allocate. */
void *cli__stream_handle(struct cli_ctx *c, const char *path, cli_sink_fn sink, void *st);
void cli__stream_handle_free(void *handle);

/* Print the one-line "server unreachable" error for a failed call, once
 * per command (c->unreachable is set and later calls print nothing);
 * returns 1. */
int cli__print_unreachable(struct cli_ctx *c, const struct cli_call *r);

/* ---- paths (paths.c) ---- */

/* client-go's rule for a name or namespace used as one URL path segment
 * (apimachinery's IsValidPathSegmentName, plus "not empty"): what is
 * "resource name" or "namespace". Returns 0, or -1 with kubectl's message
 * in err: "resource name may not be empty", "invalid resource name \"..\":
 * [may not be '..']", "invalid namespace \"a/b%\": [may not contain '/'
 * may not contain '%']" (an empty namespace: "[may not be empty]"). Pure. */
int cli__segment_check(const char *what, const char *s, char *err, size_t errlen);
/* cli__segment_check on a resource name / a namespace, printing
 * "error: <message>". Returns 0, or 1 after printing. */
int cli__check_name(struct cli_ctx *c, const char *name);
int cli__check_namespace(struct cli_ctx *c, const char *ns);

/* Append the API path of kind k to sb: "/api/v1" or "/apis/G/V", then
 * "/namespaces/NS" when k is namespaced and ns is non-NULL, then "/PLURAL",
 * "/NAME" when name is non-NULL and "/SUB" (a subresource such as "log")
 * when sub and name are. NS and NAME must pass cli__segment_check (an
 * empty name is refused: NULL, not "", means the collection) and are
 * percent-escaped. This and cli__pending_workloads_path are the only
 * builders of API paths. Returns 0, or 1 after printing kubectl's error
 * (sb unchanged). */
int cli__path(struct cli_ctx *c, struct sbuf *sb, const struct api_kind *k, const char *ns,
              const char *name, const char *sub);
/* Kueue's visibility API path for a LocalQueue's pending workloads
 * (/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/NS/localqueues/LQ/
 * pendingworkloads), checked and escaped as cli__path does. 0 or 1. */
int cli__pending_workloads_path(struct cli_ctx *c, struct sbuf *sb, const char *ns,
                                const char *lq);
/* Append "?k=v" or "&k=v" (v URL-encoded) depending on whether sb already
 * holds a '?'. */
void cli__query(struct sbuf *sb, const char *key, const char *value);
/* The namespace to use for kind k given the context: NULL for
 * cluster-scoped kinds and for -A, else c->ns. Borrowed. */
const char *cli__ns_for(const struct cli_ctx *c, const struct api_kind *k);
/* "clusterqueue.kueue.x-k8s.io" or "pod" (core): the resource prefix kubectl
 * prints in "<prefix>/<name> created" and "-o name". Static. */
const char *cli__kind_prefix(const struct api_kind *k);
/* The kinds whose categories (api/kinds.h) include word ("all": Pod, Job,
 * RayJob), in kind-table order, as kubectl expands `get all`. Stores at most
 * max of them in out; returns how many there are. */
size_t cli__category_kinds(const char *word, const struct api_kind **out, size_t max);

/* Split "kind/name" into its kind (resolved) and name; without a slash the
 * whole text is a kind and *name is NULL. Returns NULL (and prints an
 * error) when the kind is unknown. *name borrows from text. */
const struct api_kind *cli__resolve_kind(struct cli_ctx *c, const char *text,
                                         const char **name, size_t *name_len);

/* What a request is about, for kubectl's error text. */
struct cli_what {
    const struct api_kind *k; /* may be NULL */
    const char *name;         /* may be NULL */
    const char *verb;         /* "get", "post", "patch", "delete" */
    const char *action;       /* "error when creating \"f.yaml\": " or NULL */
    bool quiet_404;           /* do not print a 404 (CU_ENOTFOUND is returned) */
};

/* Send method to path with body (JSON text of body, NULL for none;
 * content type ctype, default application/json). Returns 0 on a 2xx answer
 * with *out set to the parsed answer (new ref, may be NULL; out may be
 * NULL); CU_ENOTFOUND for a 404 (printed unless w->quiet_404); otherwise 1
 * after printing the error kubectl-style (or the unreachable message). */
int cli__send(struct cli_ctx *c, const char *method, const char *path, const char *ctype,
              const json_t *body, const struct cli_what *w, json_t **out);
/* Print kubectl's "No resources found[ in NS namespace]." for kind k. */
void cli__no_resources(struct cli_ctx *c, const struct api_kind *k);

/* Objects named on the command line. */
struct cli_target {
    const struct api_kind *k;
    const char *name; /* NULL: every object of the kind (borrowed from argv) */
};
struct cli_targets {
    struct cli_target *items;
    size_t n, cap;
};
/* Parse positionals "KIND[,KIND...] [NAME...]" (each kind with each name,
 * or one name-less target per kind; a KIND may be a category such as
 * "all") or "KIND/NAME...". Every NAME passes cli__check_name. Returns 0,
 * or 1 after printing kubectl's error (unknown kind, bad name, a name with
 * -A, mixed forms, "resource/name form may not have more than one slash").
 * Release with xfree(out->items). */
int cli__parse_targets(struct cli_ctx *c, const struct cli_args *a, struct cli_targets *out);

/* GET one object as JSON. Returns 0 with *out (new ref), CU_ENOTFOUND
 * (404), or another error after printing it kubectl-style with "get" as
 * the verb. When quiet_404 is false a 404 is printed too. */
int cli__get_object(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                    const char *name, bool quiet_404, json_t **out);
/* GET every page of a list (path as built by cli__path, plus any query):
 * limit=500 and then metadata.continue until the server sends none, as
 * kubectl's chunked lists do. accept is CLI_JSON or CLI_TABLE. Returns 0
 * with *doc (new ref): the first page with the items (or Table rows) of
 * every later page appended and metadata.continue removed; or 1 after
 * printing the error (k names the kind in it, may be NULL). A server that
 * repeats a continue token is an error, not a loop. */
int cli__list_pages(struct cli_ctx *c, const char *path, const char *accept,
                    const struct api_kind *k, json_t **doc);
/* cli__list_pages for a plain list. Returns 0 with the items of every
 * page (new ref) and the first page's resourceVersion copied into rv (if
 * non-NULL, rv_len bytes), or 1 after printing the error. */
int cli__list(struct cli_ctx *c, const char *path, json_t **items, char *rv, size_t rv_len);

/* List kind k (in namespace ns, every namespace when NULL) with optional
 * label and field selectors (NULL or "" for none), every page. Returns 0 with the items (new ref), each with
 * apiVersion and kind filled in when the server left them out, and the
 * list's resourceVersion in rv (when non-NULL); or 1 after printing. */
int cli__list_kind(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                   const char *label_sel, const char *field_sel, json_t **items, char *rv,
                   size_t rv_len);

/* ---- errors (status.c) ---- */

/* The kubectl text for a failed call on an object of kind k named name:
 * "Error from server (NotFound): clusterqueues.kueue.x-k8s.io \"x\" not
 * found", the Invalid form "The ClusterQueue \"x\" is invalid: ..." (with
 * one "* field: message" line per cause when there are several), and the
 * generic "the server could not find the requested resource (get ...)" when
 * the body is not a Status. action, when non-NULL, is inserted as kubectl
 * does ("error when creating \"f.yaml\": "). verb names the request for
 * the generic form ("get", "delete", "create", "patch"). Caller frees. */
char *cli__status_text(const struct cli_call *r, const struct api_kind *k, const char *name,
                       const char *verb, const char *action);
/* Print a failed call: the unreachable message, or cli__status_text.
 * Returns 1. */
int cli__print_call_error(struct cli_ctx *c, const struct cli_call *r, const struct api_kind *k,
                          const char *name, const char *verb, const char *action);
/* Status.reason of a failed call ("NotFound"), derived from the HTTP code
 * when the body is not a Status. Borrowed; "" when none. */
const char *cli__status_reason(const struct cli_call *r);

/* ---- output (yamlout.c, jsonpath.c, output.c, table.c) ---- */

/* Append v as a YAML document (no "---" marker) to sb through libyaml's
 * emitter: mapping keys sorted, sequences in mappings not indented (as
 * kubectl prints), strings that would read back as another type
 * double-quoted, multi-line strings as literal blocks. Returns 0 or
 * CU_EINTERNAL if the emitter failed. */
int cli__yaml_append(struct sbuf *sb, const json_t *v);

/* A parsed kubectl JSONPath template ("{.items[*].metadata.name}"). */
struct cli_jsonpath;
/* Parse a template; kubectl's subset: text, {.a.b}, ['key'] and \. escapes,
 * [N] (negative from the end), [*], [a:b], .., [?(@.x=="v")] filters with
 * == and !=, {range ...}{end}, {"literal"} and {@}. Returns NULL with a
 * message in err (errlen bytes) on a syntax error. Free with
 * cli__jsonpath_free. */
struct cli_jsonpath *cli__jsonpath_parse(const char *tmpl, char *err, size_t errlen);
void cli__jsonpath_free(struct cli_jsonpath *jp);
/* Evaluate on root and append the text to sb: strings raw, other scalars
 * as JSON, objects/arrays as compact JSON, several results of one
 * expression joined by a space; missing keys give nothing (kubectl get's
 * allowMissingKeys). Returns 0. */
int cli__jsonpath_exec(const struct cli_jsonpath *jp, const json_t *root, struct sbuf *sb);
/* Evaluate and collect the raw values (borrowed refs, in order) into a new
 * JSON array (for `wait --for=jsonpath`). */
json_t *cli__jsonpath_values(const struct cli_jsonpath *jp, const json_t *root);

/* How `get` prints. */
enum cli_output {
    CLI_OUT_TABLE, /* server Table, priority-0 columns */
    CLI_OUT_WIDE,  /* server Table, every column */
    CLI_OUT_YAML,
    CLI_OUT_JSON,
    CLI_OUT_NAME,
    CLI_OUT_JSONPATH,
};

struct cli_outfmt {
    enum cli_output kind;
    struct cli_jsonpath *jp; /* CLI_OUT_JSONPATH (owned) */
};

/* Parse the value of -o ("yaml", "json", "wide", "name", "jsonpath=TMPL",
 * "jsonpath='TMPL'"). Returns 0, or -1 with a message in err. */
int cli__outfmt_parse(const char *s, struct cli_outfmt *out, char *err, size_t errlen);
void cli__outfmt_release(struct cli_outfmt *f);
/* Print one object (or a List) in a non-table format (yaml/json/name/
 * jsonpath) to c->out. k is the object's kind (for -o name). */
void cli__print_object(struct cli_ctx *c, const struct cli_outfmt *f, const struct api_kind *k,
                       const json_t *obj);

/* A text table with aligned columns (kubectl's tabwriter: 3 spaces). */
struct cli_table {
    size_t ncols;
    size_t nrows;
    char **cells; /* (nrows + 1) * ncols, row 0 = header; owned */
    size_t cap;
};
void cli__table_init(struct cli_table *t, size_t ncols);
/* Append a row of ncols strings (copied; NULL prints empty). Row 0 is the
 * header. */
void cli__table_row(struct cli_table *t, const char *const *cells);
/* Append a row from printf-free varargs: exactly ncols const char *. */
void cli__table_rowv(struct cli_table *t, ...);
/* Print with each column padded to its widest cell + 3 spaces (the last
 * column unpadded), every line prefixed by indent. */
void cli__table_print(const struct cli_table *t, FILE *out, const char *indent);
/* Print rows [from, nrows) padded with the widths of the whole table (so
 * rows appended later line up with those printed before). */
void cli__table_print_rows(const struct cli_table *t, size_t from, FILE *out, const char *indent);
void cli__table_release(struct cli_table *t);

/* Write text to out with tabwriter alignment as kubectl describe does: in
 * each run of consecutive lines that hold a tab, the text before the first
 * tab is padded to the run's widest plus 2 spaces. Other lines unchanged. */
void cli__align_tabs(const char *text, FILE *out);

/* Age of an RFC 3339 timestamp relative to now ("5m", "<unknown>"). out
 * holds 32 bytes. */
const char *cli__age(const char *rfc3339, char out[32]);
/* Now in ms on the monotonic clock (util/clock's clk_mono_s; the origin is
 * arbitrary): for deadlines and intervals (wait/delete --timeout, logs -f,
 * elapsed times), which a change of the wall clock must not stretch or cut.
 * Not a time of day: ages of timestamps use clk_real. */
int64_t cli__now_ms(void);
/* Sleep ms milliseconds (polling loops in wait/delete/logs -f only). */
void cli__sleep_ms(int64_t ms);

/* ---- manifests (manifest.c) ---- */

/* One document read from -f, with where it came from. */
struct cli_doc {
    json_t *obj;         /* owned */
    char *source;        /* file name or "STDIN" (owned) */
};
struct cli_docs {
    struct cli_doc *items;
    size_t n, cap;
};
/* Read every -f argument in order: "-" is stdin, a directory is its
 * .yaml, .yml and .json files in name order (recursively with recursive),
 * a file is read whole. Documents are decoded with api_parse_documents.
 * Appends to docs. Returns 0, or 1 after printing the error (nothing is
 * appended from the failing input). */
int cli__read_manifests(struct cli_ctx *c, char **files, size_t nfiles, bool recursive,
                        struct cli_docs *docs);
void cli__docs_release(struct cli_docs *docs);
/* Resolve a document's kind, name and namespace for the request. Prints
 * kubectl's error and returns 1 when the kind is unknown, the name empty, or
 * the namespace conflicts with an explicit -n. ns is NULL for
 * cluster-scoped kinds (borrowed from doc or c). */
int cli__doc_target(struct cli_ctx *c, const struct cli_doc *d, const struct api_kind **k,
                    const char **name, const char **ns);

/* POST obj to k's collection (namespace ns; fieldManager manager,
 * fieldValidation=Strict) and print "KIND/NAME created", or the error with
 * kubectl's `error when creating "SOURCE": ` when source is non-NULL.
 * Returns 0 or 1. (cmd_apply.c) */
int cli__create_object(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                       const char *name, const json_t *obj, const char *source,
                       const char *manager);

/* ---- apply patch computation (applypatch.c, pure) ---- */

#define CLI_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* The object to send for doc: a deep copy with the last-applied annotation
 * set to doc's compact JSON (keys sorted, with "annotations" present and
 * without the annotation itself) plus "\n", as kubectl's client-side apply
 * stores it. New ref. */
json_t *cli__apply_modified(const json_t *doc);
/* kubectl's three-way JSON merge patch: changes and additions from live to
 * modified, plus deletions (null) of fields present in original (the
 * previous last-applied configuration, may be NULL) but absent from
 * modified. Objects are merged key by key, lists and scalars replaced
 * whole. Returns a new object, empty when nothing needs to change. */
json_t *cli__apply_patch(const json_t *original, const json_t *modified, const json_t *live);

/* ---- gcloud-like flags and formats (npflags.c, gformat.c; pure) ---- */

/* GKE's limit on a node pool: at most 1,000 nodes per zone. --num-nodes,
 * --min-nodes and --max-nodes above it are refused by name. */
#define CLI_NP_MAX_NODES 1000

/* `nodepool create` flags as given. Unset flags are NULL/false. */
struct cli_np_flags {
    const char *machine_type;
    const char *tpu_topology;
    const char *reservation_affinity; /* none|any|specific */
    int autoscaling;                  /* -1 unset, 0 --no-enable-autoscaling, 1 */
    int queued_provisioning;          /* -1, 0, 1 */
    int flex_start;                   /* -1, 0, 1 */
    const char *num_nodes;
    const char *min_nodes;
    const char *max_nodes;
    const char *capacity;             /* immediate|delay:30s|stockout */
    const char *node_labels;          /* k=v,k2=v2 */
    const char *node_taints;          /* k=v:Effect,... */
    const char *provider;             /* local|slurm */
    const char *partition;            /* Slurm partition */
};
/* Initialise every field to unset. */
void cli__np_flags_init(struct cli_np_flags *f);
/* The NodePool object (cueue.dev/v1alpha1, docs/nodepool.md) for pool name
 * and flags: --machine-type -> spec.config.machineType, --tpu-topology ->
 * spec.placementPolicy.tpuTopology, --reservation-affinity none|any|specific
 * -> spec.config.reservationAffinity.consumeReservationType
 * NO_RESERVATION|ANY_RESERVATION|SPECIFIC_RESERVATION, --enable-autoscaling
 * -> spec.autoscaling.enabled, --num-nodes -> spec.initialNodeCount,
 * --min-nodes/--max-nodes -> spec.autoscaling.min/maxNodeCount,
 * --enable-queued-provisioning -> spec.queuedProvisioning.enabled,
 * --flex-start -> spec.config.flexStart, --capacity -> spec.capacity
 * {mode Immediate|Delayed|Stockout, delaySeconds}, --node-labels ->
 * spec.config.labels, --node-taints -> spec.config.taints, --provider ->
 * spec.provider (local|slurm), --partition -> spec.slurm.partition. Semantic rules
 * are the server's; only the flags' own syntax is checked here (counts are
 * 0..CLI_NP_MAX_NODES). Returns a
 * new object, or NULL with a message naming the flag in err. */
json_t *cli__nodepool_from_flags(const char *name, const struct cli_np_flags *f, char *err,
                                 size_t errlen);

/* gcloud's --format="get(a.b,c)" / "value(...)" over obj: each key path's
 * value, tab-separated, then "\n". Booleans print Python-style (True,
 * False), null/missing as empty, lists joined by ";", objects as
 * "k=v;k2=v2". Returns 0 and appends to sb, or -1 with a message in err
 * when the format is not get(...)/value(...) (yaml and json are handled by
 * the caller). */
int cli__gformat(const char *format, const json_t *obj, struct sbuf *sb, char *err,
                 size_t errlen);

/* The gcloud-shaped view of a NodePool object: {name, ...spec fields...,
 * status: RUNNING|PROVISIONING|..., nodeCount}. New ref. */
json_t *cli__nodepool_view(const json_t *pool);

/* DELETE NodePool name and print "Deleted node pool [NAME]."; with wait,
 * poll (up to 2 min) until it is gone. Returns 0 or 1. (cmd_nodepool.c) */
int cli__nodepool_delete(struct cli_ctx *c, const char *name, bool wait);

/* "Server Version: v1.32.0", plus " (cueue X)" when the server's /version
 * answer has a non-empty cueueVersion. Caller frees. (cmd_version.c) */
char *cli__server_version_line(const json_t *server);

/* ---- verbs ---- */

int cli__cmd_apply(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_get(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_describe(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_delete(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_logs(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_create(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_wait(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_nodepool(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_cluster(struct cli_ctx *c, int argc, char **argv);
int cli__cmd_version(struct cli_ctx *c, int argc, char **argv);

/* describe helpers (describe.c, describe_kinds.c) */

/* A describe printer for one kind family. */
typedef void (*cli_describe_fn)(struct cli_ctx *c, const struct api_kind *k, const json_t *obj);
/* Print "Key:\tvalue" at a 2-space indent level; describe output is
 * aligned afterwards with cli__align_tabs (kubectl describe's layout). A
 * NULL fmt prints the key alone (a section title). */
void cli__desc_kv(struct cli_ctx *c, int level, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Print a string map ("Labels:") as kubectl does: "<none>" when empty,
 * one "k=v" per line otherwise. hide names a key to leave out (NULL). */
void cli__desc_map(struct cli_ctx *c, int level, const char *key, const json_t *map,
                   const char *hide);
/* Print the common header (Name, Namespace, Labels, Annotations, API
 * Version, Kind, Created). */
void cli__desc_meta(struct cli_ctx *c, const json_t *obj);
/* Print status.conditions as a table (Type Status Reason Age Message). */
void cli__desc_conditions(struct cli_ctx *c, int level, const json_t *obj);
/* Print "Title:" and the table t under it (indented one level deeper),
 * or "Title:  <none>" when t holds only its header; releases t. */
void cli__desc_table(struct cli_ctx *c, int level, const char *title, struct cli_table *t);
/* Print v as an indented YAML block under key (generic fallback). */
void cli__desc_yaml(struct cli_ctx *c, int level, const char *key, const json_t *v);
/* Print the events whose involvedObject.uid is obj's uid. */
void cli__desc_events(struct cli_ctx *c, const struct api_kind *k, const json_t *obj);
/* Kind-specific sections (after the header, before Events). */
cli_describe_fn cli__describer_for(const struct api_kind *k);

/* The Job logs' closing line ("Job 'x' succeeded", "Job 'x' failed:
 * reason"), or NULL while the job runs. Caller frees. */
char *cli__job_final_line(const json_t *job);
/* True when the Job has the condition Failed=True. */
bool cli__job_failed(const json_t *job);

/* Why a pod failed, from its status (podstate.c, pure): the first
 * container whose state, else last state, is terminated with a non-zero
 * exit code or reason StartError: "REASON: MESSAGE (exit code N)"; else,
 * for phase Failed, a waiting container's "REASON: MESSAGE" or the pod's
 * status reason and message. NULL when the pod did not fail. Caller frees. */
char *cli__pod_failure(const json_t *pod);
/* For a failed Job's output: one line "Pod 'NAME' failed: WHY\n" per pod
 * i of pods (in order) with quiet[i] true (its log was empty) that failed
 * (cli__pod_failure), pods with the same WHY folded into the first one's
 * line with " (and N more pods with the same error)". Appends to sb. */
void cli__pod_failure_lines(const json_t *pods, const bool *quiet, struct sbuf *sb);

/* Why a deleted object is still there (finalizers.c, pure):
 * "resourceflavor.kueue.x-k8s.io \"x\" is being deleted: waiting for
 * finalizer kueue.x-k8s.io/resource-in-use (USERS)" when obj has a
 * deletionTimestamp and finalizers (" (USERS)" only when users is non-empty);
 * NULL otherwise. Caller frees. */
char *cli__deletion_holdup(const struct api_kind *k, const json_t *obj, const char *users);
/* "still used by ClusterQueue a[, b]" for the ClusterQueues of cqs (an
 * array of ClusterQueue objects) that use the ResourceFlavor or, when k is
 * AdmissionCheck, the admission check `name` (api_cluster_queue_uses_*);
 * NULL when none. Caller frees. */
char *cli__in_use_by(const json_t *cqs, const struct api_kind *k, const char *name);

/* Compare pods by completion index (annotation/label
 * batch.kubernetes.io/job-completion-index), then creation time, then
 * name. qsort comparator over json_t * elements. */
int cli__pod_index_cmp(const void *a, const void *b);

/* Per-worker metrics table from the job annotation cueue.dev/metrics (a
 * JSON object {pod: {metric: value}}): one row per pod (sorted), one column
 * per metric name (sorted union). Fills t (initialised here). Returns 0, or
 * -1 when the annotation is absent or not that shape. */
int cli__metrics_table(const json_t *obj, struct cli_table *t);

#endif

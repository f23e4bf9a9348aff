/*
 * proto: Kubernetes protobuf request bodies (Content-Type
 * application/vnd.kubernetes.protobuf), which kubectl ≥ 1.32 sends for
 * `create configmap` and `create namespace`: the 4-byte magic "k8s\0",
 * then a runtime.Unknown {typeMeta, raw} whose raw bytes are the typed
 * message. Decoded with protobuf-c (src/server/proto/k8s.proto) into the
 * same JSON the JSON path would have produced; admission then treats both
 * alike. Accepted: ConfigMap and Namespace (`create configmap`, `create
 * namespace`) and batch/v1 Job (`create job`: its pod template's
 * containers with name, image, command, args, workingDir and env, the
 * restart policy, and the Job's simple counts and flags).
 * Invariant: nothing on the wire is dropped silently. Kubernetes' encoder
 * writes every non-pointer field, so undeclared fields arrive, empty; a
 * body in which an undeclared field holds a value is refused (400) with
 * the field's number and message, so the sender can use JSON instead.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "k8s.pb-c.h"
#include "server/srv-int.h"
#include "util/xalloc.h"

static const unsigned char magic[4] = {'k', '8', 's', 0};

/* An undeclared field with its zero value: a varint 0, an empty string,
 * bytes or message (protobuf-c keeps the length prefix in data), or a
 * fixed-size zero. */
static bool unknown_is_empty(const ProtobufCMessageUnknownField *u)
{
    if (u->wire_type == PROTOBUF_C_WIRE_TYPE_VARINT ||
        u->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
        return u->len == 1 && u->data[0] == 0;
    for (size_t i = 0; i < u->len; i++)
        if (u->data[i])
            return false;
    return true;
}

/* True when m and every message below it carry no undeclared field with a
 * value; else err names the first one. */
static bool only_declared(const ProtobufCMessage *m, char *err, size_t errlen)
{
    for (unsigned i = 0; i < m->n_unknown_fields; i++) {
        if (!unknown_is_empty(&m->unknown_fields[i])) {
            snprintf(err, errlen,
                     "field %u of %s is not supported in protobuf bodies; send the object as JSON",
                     m->unknown_fields[i].tag, m->descriptor->short_name);
            return false;
        }
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *at = (const char *)m + fd->offset;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(const void *)((const char *)m + fd->quantifier_offset);
            ProtobufCMessage *const *items = *(ProtobufCMessage *const *const *)(const void *)at;
            for (size_t j = 0; j < n; j++)
                if (!only_declared(items[j], err, errlen))
                    return false;
        } else {
            const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)(const void *)at;
            if (sub && !only_declared(sub, err, errlen))
                return false;
        }
    }
    return true;
}

static json_t *string_map(Cueue__K8s__StringEntry **items, size_t n, const char *what,
                          char *err, size_t errlen)
{
    json_t *m = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *k = items[i]->key ? items[i]->key : "";
        const char *v = items[i]->value ? items[i]->value : "";
        json_t *s = json_string(v);
        if (!s || json_object_set_new(m, k, s)) {
            snprintf(err, errlen, "%s[%s]: not valid UTF-8", what, k);
            json_decref(m);
            return NULL;
        }
    }
    return m;
}

static json_t *object_meta(const Cueue__K8s__ObjectMeta *om, char *err, size_t errlen)
{
    json_t *md = json_object();
    if (!om)
        return md;
    if (om->name && *om->name)
        json_object_set_new(md, "name", json_string(om->name));
    if (om->generatename && *om->generatename)
        json_object_set_new(md, "generateName", json_string(om->generatename));
    if (om->namespace_ && *om->namespace_)
        json_object_set_new(md, "namespace", json_string(om->namespace_));
    if (om->n_labels) {
        json_t *l = string_map(om->labels, om->n_labels, "metadata.labels", err, errlen);
        if (!l)
            goto fail;
        json_object_set_new(md, "labels", l);
    }
    if (om->n_annotations) {
        json_t *a = string_map(om->annotations, om->n_annotations, "metadata.annotations", err,
                               errlen);
        if (!a)
            goto fail;
        json_object_set_new(md, "annotations", a);
    }
    if (om->n_finalizers) {
        json_t *f = json_array();
        for (size_t i = 0; i < om->n_finalizers; i++)
            json_array_append_new(f, json_string(om->finalizers[i]));
        json_object_set_new(md, "finalizers", f);
    }
    return md;
fail:
    json_decref(md);
    return NULL;
}

static json_t *binary_map(Cueue__K8s__BytesEntry **items, size_t n)
{
    json_t *m = json_object();
    for (size_t i = 0; i < n; i++) {
        size_t len = items[i]->has_value ? items[i]->value.len : 0;
        char *b64 = xmalloc(4 * ((len + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)b64, len ? items[i]->value.data : (uint8_t *)"",
                        (int)len);
        json_object_set_new(m, items[i]->key ? items[i]->key : "", json_string(b64));
        xfree(b64);
    }
    return m;
}

static json_t *decode_configmap(const ProtobufCBinaryData *raw, char *err, size_t errlen)
{
    Cueue__K8s__ConfigMap *cm = cueue__k8s__config_map__unpack(NULL, raw->len, raw->data);
    if (!cm) {
        snprintf(err, errlen, "malformed ConfigMap message");
        return NULL;
    }
    json_t *obj = NULL;
    json_t *md = only_declared(&cm->base, err, errlen) ? object_meta(cm->metadata, err, errlen)
                                                       : NULL;
    json_t *data = md ? string_map(cm->data, cm->n_data, "data", err, errlen) : NULL;
    if (md && data) {
        obj = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                        md);
        md = NULL;
        if (cm->n_data)
            json_object_set(obj, "data", data);
        if (cm->n_binarydata)
            json_object_set_new(obj, "binaryData", binary_map(cm->binarydata, cm->n_binarydata));
        if (cm->has_immutable)
            json_object_set_new(obj, "immutable", json_boolean(cm->immutable));
    }
    json_decref(md);
    json_decref(data);
    cueue__k8s__config_map__free_unpacked(cm, NULL);
    return obj;
}

static json_t *decode_namespace(const ProtobufCBinaryData *raw, char *err, size_t errlen)
{
    Cueue__K8s__Namespace *ns = cueue__k8s__namespace__unpack(NULL, raw->len, raw->data);
    if (!ns) {
        snprintf(err, errlen, "malformed Namespace message");
        return NULL;
    }
    json_t *obj = NULL;
    json_t *md = only_declared(&ns->base, err, errlen) ? object_meta(ns->metadata, err, errlen)
                                                       : NULL;
    if (md) {
        obj = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                        md);
        if (ns->spec && ns->spec->n_finalizers) {
            json_t *f = json_array();
            for (size_t i = 0; i < ns->spec->n_finalizers; i++)
                json_array_append_new(f, json_string(ns->spec->finalizers[i]));
            json_object_set_new(obj, "spec", json_pack("{s:o}", "finalizers", f));
        }
    }
    cueue__k8s__namespace__free_unpacked(ns, NULL);
    return obj;
}

static json_t *str_list(char **items, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(items[i] ? items[i] : ""));
    return a;
}

/* Set key to a string only when it is non-empty (empty = unset on the wire). */
static void set_str(json_t *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_set_new(o, key, json_string(v));
}

static json_t *container_json(const Cueue__K8s__Container *c)
{
    json_t *o = json_object();
    set_str(o, "name", c->name);
    set_str(o, "image", c->image);
    if (c->n_command)
        json_object_set_new(o, "command", str_list(c->command, c->n_command));
    if (c->n_args)
        json_object_set_new(o, "args", str_list(c->args, c->n_args));
    set_str(o, "workingDir", c->workingdir);
    if (c->n_env) {
        json_t *env = json_array();
        for (size_t i = 0; i < c->n_env; i++) {
            json_t *e = json_pack("{s:s}", "name", c->env[i]->name ? c->env[i]->name : "");
            set_str(e, "value", c->env[i]->value);
            json_array_append_new(env, e);
        }
        json_object_set_new(o, "env", env);
    }
    return o;
}

static json_t *pod_template_json(const Cueue__K8s__PodTemplateSpec *t, char *err, size_t errlen)
{
    json_t *md = object_meta(t->metadata, err, errlen);
    if (!md)
        return NULL;
    json_t *spec = json_object();
    json_t *tmpl = json_pack("{s:o, s:o}", "metadata", md, "spec", spec);
    const Cueue__K8s__PodSpec *ps = t->spec;
    if (!ps)
        return tmpl;
    json_t *cs = json_array();
    for (size_t i = 0; i < ps->n_containers; i++)
        json_array_append_new(cs, container_json(ps->containers[i]));
    json_object_set_new(spec, "containers", cs);
    set_str(spec, "restartPolicy", ps->restartpolicy);
    if (ps->has_terminationgraceperiodseconds)
        json_object_set_new(spec, "terminationGracePeriodSeconds",
                            json_integer(ps->terminationgraceperiodseconds));
    return tmpl;
}

static json_t *job_spec_json(const Cueue__K8s__JobSpec *js, char *err, size_t errlen)
{
    json_t *spec = json_object();
    if (!js)
        return spec;
    if (js->template_) {
        json_t *t = pod_template_json(js->template_, err, errlen);
        if (!t) {
            json_decref(spec);
            return NULL;
        }
        json_object_set_new(spec, "template", t);
    }
    if (js->has_parallelism)
        json_object_set_new(spec, "parallelism", json_integer(js->parallelism));
    if (js->has_completions)
        json_object_set_new(spec, "completions", json_integer(js->completions));
    if (js->has_activedeadlineseconds)
        json_object_set_new(spec, "activeDeadlineSeconds", json_integer(js->activedeadlineseconds));
    if (js->has_backofflimit)
        json_object_set_new(spec, "backoffLimit", json_integer(js->backofflimit));
    set_str(spec, "completionMode", js->completionmode);
    if (js->has_suspend)
        json_object_set_new(spec, "suspend", json_boolean(js->suspend));
    return spec;
}

static json_t *decode_job(const ProtobufCBinaryData *raw, char *err, size_t errlen)
{
    Cueue__K8s__Job *job = cueue__k8s__job__unpack(NULL, raw->len, raw->data);
    if (!job) {
        snprintf(err, errlen, "malformed Job message");
        return NULL;
    }
    json_t *obj = NULL;
    if (only_declared(&job->base, err, errlen)) {
        json_t *md = object_meta(job->metadata, err, errlen);
        json_t *spec = md ? job_spec_json(job->spec, err, errlen) : NULL;
        if (spec)
            obj = json_pack("{s:s, s:s, s:O, s:O}", "apiVersion", "batch/v1", "kind", "Job",
                            "metadata", md, "spec", spec);
        json_decref(md);
        json_decref(spec);
    }
    cueue__k8s__job__free_unpacked(job, NULL);
    return obj;
}

json_t *srv_proto_decode(const void *data, size_t len, char *err, size_t errlen)
{
    if (len < sizeof(magic) || memcmp(data, magic, sizeof(magic))) {
        snprintf(err, errlen, "provided data does not appear to be a protobuf message, "
                              "expected prefix [107 56 115 0]");
        return NULL;
    }
    Cueue__K8s__Unknown *u = cueue__k8s__unknown__unpack(NULL, len - sizeof(magic),
                                                          (const uint8_t *)data + sizeof(magic));
    if (!u) {
        snprintf(err, errlen, "malformed protobuf envelope");
        return NULL;
    }
    json_t *obj = NULL;
    const char *kind = u->typemeta && u->typemeta->kind ? u->typemeta->kind : "";
    const char *av = u->typemeta && u->typemeta->apiversion ? u->typemeta->apiversion : "";
    ProtobufCBinaryData raw = u->has_raw ? u->raw : (ProtobufCBinaryData){0, NULL};
    if (u->contentencoding && *u->contentencoding)
        snprintf(err, errlen, "unsupported content encoding \"%s\"", u->contentencoding);
    else if (!strcmp(av, "v1") && !strcmp(kind, "ConfigMap"))
        obj = decode_configmap(&raw, err, errlen);
    else if (!strcmp(av, "v1") && !strcmp(kind, "Namespace"))
        obj = decode_namespace(&raw, err, errlen);
    else if (!strcmp(av, "batch/v1") && !strcmp(kind, "Job"))
        obj = decode_job(&raw, err, errlen);
    else
        snprintf(err, errlen,
                 "protobuf bodies are accepted for v1 ConfigMap and Namespace and batch/v1 Job "
                 "only, not %s \"%s\"; send JSON", av, kind);
    cueue__k8s__unknown__free_unpacked(u, NULL);
    return obj;
}

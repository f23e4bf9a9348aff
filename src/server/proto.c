/*
 * proto: Kubernetes protobuf request bodies (Content-Type
 * application/vnd.kubernetes.protobuf), which kubectl ≥ 1.32 sends for
 * `create configmap` and `create namespace`: the 4-byte magic "k8s\0",
 * then a runtime.Unknown {typeMeta, raw} whose raw bytes are the typed
 * message. Decoded with protobuf-c (src/server/proto/k8s.proto) into the
 * same JSON the JSON path would have produced; admission then treats both
 * alike. Only ConfigMap and Namespace are accepted.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "k8s.pb-c.h"
#include "server/srv-int.h"
#include "util/xalloc.h"

static const unsigned char magic[4] = {'k', '8', 's', 0};

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
    json_t *md = object_meta(cm->metadata, err, errlen);
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
    json_t *md = object_meta(ns->metadata, err, errlen);
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
    else if (strcmp(av, "v1"))
        snprintf(err, errlen, "protobuf bodies are accepted for v1 objects only, not \"%s\"", av);
    else if (!strcmp(kind, "ConfigMap"))
        obj = decode_configmap(&raw, err, errlen);
    else if (!strcmp(kind, "Namespace"))
        obj = decode_namespace(&raw, err, errlen);
    else
        snprintf(err, errlen, "protobuf bodies are accepted for ConfigMap and Namespace only, not \"%s\"",
                 kind);
    cueue__k8s__unknown__free_unpacked(u, NULL);
    return obj;
}

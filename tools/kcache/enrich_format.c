/*
 * enrich_format.c — the fields `kcache enrich` adds to a record, in the selected anchor's shape.
 *
 * --format=mmkubernetes (EF7–EF12; rsyslog contrib/mmkubernetes doAction): "kubernetes" with
 * namespace_id, namespace_labels, namespace_annotations, creation_timestamp (the Namespace's, not
 * the Pod's), pod_id, annotations (only keys annotation_match keeps; none by default), labels,
 * host, pod_name, namespace_name, container_name, master_url; and "docker" with container_id.
 * Labels and annotations de-dotted by default ('.' → "_"). A pod not known (gone past its
 * tombstone, not on this node, cache not synced) gives the file-derived fields, master_url and
 * docker.container_id, as mmk does after a 404 (AN4, DP4). Extras (EF14, off by default): pod_ip,
 * container_image, container_hash, ownerReferences.
 *
 * --format=fluentbit (EF1–EF6, EF13; plugins/filter_kubernetes kube_meta.c merge_pod_meta):
 * "kubernetes" with pod_name, namespace_name, pod_id, labels, annotations, ownerReferences (when
 * enabled), host, pod_ip, container_name, docker_id, container_hash, container_image — in that
 * order, each only when its source exists; "kubernetes_namespace" {name, labels, annotations} when
 * namespace_labels or namespace_annotations is on. No de-dotting. docker_id is the file name's id,
 * else the matching containerStatuses entry's containerID without "<runtime>://"; container_hash
 * its imageID stripped the same way; container_image its image (EF4). A pod not known gives no
 * "kubernetes" key (flb after a failed GET, AN11), or the file-derived fields with orphans=keep.
 */
#include "enrich.h"

#include <string.h>

void kc__enrich_meta_clear(kc__enrich_meta *m)
{
    json_decref(m->pod);
    json_decref(m->ns);
    m->pod = m->ns = NULL;
    m->deleted = m->same = false;
    m->version[0] = '\0';
}

static json_t *at(json_t *v, const char *a, const char *b)
{
    v = json_object_get(v, a);
    return b ? json_object_get(v, b) : v;
}

static void set_str(json_t *o, const char *k, const char *v)
{
    if (v && *v)
        json_object_set_new(o, k, json_string(v));
}

static void set_copy(json_t *o, const char *k, json_t *v)
{
    if (v)
        json_object_set(o, k, v);
}

/* v is a new reference (or NULL: nothing set). */
static void set_new(json_t *o, const char *k, json_t *v)
{
    if (v)
        json_object_set_new(o, k, v);
}

/* The status entry of the named container (containers, then init, then ephemeral), or the one
 * whose containerID ends with id. */
static json_t *container_status(json_t *pod, const kc__enrich_key *key)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses",
                                        "ephemeralContainerStatuses"};
    json_t *by_name = NULL;
    for (size_t l = 0; l < 3; l++) {
        json_t *arr = at(pod, "status", lists[l]), *c;
        size_t i;
        json_array_foreach(arr, i, c)
        {
            const char *cid = json_string_value(json_object_get(c, "containerID"));
            const char *sep = cid ? strstr(cid, "://") : NULL;
            const char *bare = sep ? sep + 3 : cid;
            if (key->container_id && bare && !strcmp(bare, key->container_id))
                return c;
            const char *name = json_string_value(json_object_get(c, "name"));
            if (!by_name && key->container && name && !strcmp(name, key->container))
                by_name = c;
        }
    }
    return by_name;
}

/* EF4: everything up to and including "://" removed, when "://" follows the first colon. */
static const char *strip_scheme(const char *s)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    return colon && !strncmp(colon, "://", 3) ? colon + 3 : s;
}

static json_t *keys_of(const kc__enrich_out *o, json_t *obj, const kc__enrich_filter *f)
{
    const char *dot = o->de_dot ? o->de_dot_sep : NULL,
               *slash = o->de_slash ? o->de_slash_sep : NULL;
    json_t *r = kc__enrich_keys(obj, f, dot, slash);
    if (r && !json_object_size(r) && f && f->n) { /* nothing matched: no object (EF10) */
        json_decref(r);
        r = NULL;
    }
    return r;
}

static void mmk_namespace(const kc__enrich_out *o, json_t *k, json_t *ns)
{
    if (!ns || !o->ns_meta)
        return;
    json_t *md = json_object_get(ns, "metadata");
    set_str(k, "namespace_id", json_string_value(json_object_get(md, "uid")));
    json_t *l = json_object_get(md, "labels");
    if (l && o->labels)
        set_new(k, "namespace_labels", keys_of(o, l, &o->label_match));
    json_t *a = json_object_get(md, "annotations");
    if (a && o->annotation_match.n)
        set_new(k, "namespace_annotations", keys_of(o, a, &o->annotation_match));
    set_str(k, "creation_timestamp", json_string_value(json_object_get(md, "creationTimestamp")));
}

static json_t *mmk(const kc__enrich_out *o, const kc__enrich_key *key, const kc__enrich_meta *m)
{
    json_t *k = json_object(), *out = json_object();
    json_t *pod = m ? m->pod : NULL, *md = json_object_get(pod, "metadata");
    if (pod) {
        mmk_namespace(o, k, m->ns);
        set_str(k, "pod_id", json_string_value(json_object_get(md, "uid")));
        json_t *a = json_object_get(md, "annotations");
        if (a && o->annotation_match.n)
            set_new(k, "annotations", keys_of(o, a, &o->annotation_match));
        json_t *l = json_object_get(md, "labels");
        if (l && o->labels)
            set_new(k, "labels", keys_of(o, l, &o->label_match));
        set_str(k, "host", json_string_value(at(pod, "spec", "nodeName")));
    }
    set_str(k, "pod_name", key->pod);
    set_str(k, "namespace_name", key->ns);
    set_str(k, "container_name", key->container);
    set_str(k, "master_url", o->master_url);
    if (pod) { /* extras (EF14), off by default */
        json_t *cs = container_status(pod, key);
        if (o->pod_ip)
            set_str(k, "pod_ip", json_string_value(at(pod, "status", "podIP")));
        if (o->image) {
            set_str(k, "container_image", json_string_value(json_object_get(cs, "image")));
            set_str(k, "container_hash",
                    strip_scheme(json_string_value(json_object_get(cs, "imageID"))));
        }
        if (o->owner_refs)
            set_copy(k, "ownerReferences", json_object_get(md, "ownerReferences"));
    }
    json_object_set_new(out, "kubernetes", k);
    if (key->container_id) {
        json_t *d = json_object();
        set_str(d, "container_id", key->container_id);
        json_object_set_new(out, "docker", d);
    }
    return out;
}

static void flb_container(json_t *k, const kc__enrich_key *key, json_t *pod)
{
    set_str(k, "container_name", key->container);
    json_t *cs = pod ? container_status(pod, key) : NULL;
    const char *id = key->container_id;
    if (!id)
        id = strip_scheme(json_string_value(json_object_get(cs, "containerID")));
    set_str(k, "docker_id", id);
    set_str(k, "container_hash", strip_scheme(json_string_value(json_object_get(cs, "imageID"))));
    set_str(k, "container_image", json_string_value(json_object_get(cs, "image")));
}

static json_t *flb(const kc__enrich_out *o, const kc__enrich_key *key, const kc__enrich_meta *m)
{
    json_t *pod = m ? m->pod : NULL, *md = json_object_get(pod, "metadata");
    if (!pod && !o->orphans_keep)
        return NULL;
    json_t *k = json_object(), *out = json_object();
    set_str(k, "pod_name", key->pod);
    set_str(k, "namespace_name", key->ns);
    if (pod) {
        set_str(k, "pod_id", json_string_value(json_object_get(md, "uid")));
        json_t *l = json_object_get(md, "labels"), *a = json_object_get(md, "annotations");
        if (l && o->labels)
            set_new(k, "labels", keys_of(o, l, &o->label_match));
        if (a && o->annotations)
            set_new(k, "annotations", keys_of(o, a, &o->annotation_match));
        if (o->owner_refs)
            set_copy(k, "ownerReferences", json_object_get(md, "ownerReferences"));
        set_str(k, "host", json_string_value(at(pod, "spec", "nodeName")));
        set_str(k, "pod_ip", json_string_value(at(pod, "status", "podIP")));
    }
    flb_container(k, key, pod);
    json_object_set_new(out, "kubernetes", k);
    if (o->ns_labels || o->ns_annotations) {
        json_t *n = json_object(), *nmd = json_object_get(m ? m->ns : NULL, "metadata");
        set_str(n, "name", key->ns);
        if (o->ns_labels)
            set_copy(n, "labels", json_object_get(nmd, "labels"));
        if (o->ns_annotations)
            set_copy(n, "annotations", json_object_get(nmd, "annotations"));
        json_object_set_new(out, "kubernetes_namespace", n);
    }
    return out;
}

json_t *kc__enrich_format(const kc__enrich_out *o, const kc__enrich_key *key,
                          const kc__enrich_meta *meta)
{
    if (!key->pod || !key->ns)
        return NULL;
    return o->fmt == KC_ENRICH_FMT_FLB ? flb(o, key, meta) : mmk(o, key, meta);
}

/*
 * create_fast.c — the seeding create path without jansson. Seeding 100 000 Pods through the
 * general create path spends ~0.4 ms per Pod in jansson (parse + dump of 6 KB); here the seed
 * text is parsed once with kc_obj_parse (simdjson), the system fields (namespace when missing,
 * uid, creationTimestamp when missing, generation when the type has one, resourceVersion) are
 * spliced in right after the `{` of `metadata` (located with kc_obj_get_raw, i.e. by the JSON
 * parser, not by scanning), and the result is parsed again into the stored object.
 * o0 is the seed object parsed by the caller (borrowed).
 * Objects this path cannot handle (uid or resourceVersion already set, no metadata object,
 * generateName, CRDs, namespaces) are reported as KC_EUNSUPPORTED and the caller uses the
 * general path. Runs with srv->mu held.
 * Also kc__create_json(_ex): an object from JSON text (seeding, the namespace controller's
 * "default" ServiceAccount) through this path or the general create path of write.c.
 */
#include "server/storage/storage_internal.h"

#include "server/defaults/defaults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fast path (mu held). o0 borrowed. KC_EUNSUPPORTED when the object needs the general path. */
static int create_fast(kc_server *srv, kc__rsrc *r, kc_obj *o0, kc_error *err)
{
    kc_obj *obj = NULL;
    int rc;
    const char *name = kc_obj_name(o0), *ns = kc_obj_namespace(o0);
    const char *meta;
    size_t mlen;
    rc = KC_EUNSUPPORTED;
    if (r->is_crd || !strcmp(r->plural, "customresourcedefinitions") ||
        !strcmp(r->plural, "namespaces") || !*name || *kc_obj_uid(o0) ||
        *kc_obj_resource_version(o0) || strcmp(kc_obj_kind(o0), r->kind) != 0 ||
        kc_obj_get_raw(o0, "/metadata", &meta, &mlen, NULL) != 0 || mlen < 2 || meta[0] != '{' ||
        (!r->namespaced && *ns))
        goto out;
    if (r->namespaced && !*ns)
        ns = "default";
    if (r->namespaced && (rc = kc__check_namespace(srv, ns, r, name, err)) != 0)
        goto out;
    if ((rc = kc__validate_name(name, r->name_rule, r->kind, err)) != 0)
        goto out;
    if (kc__store_find(r, ns, name)) {
        char q[300];
        kc__rsrc_qualified(r, q, sizeof(q));
        rc = kc__fail(err, 409, "AlreadyExists", "%s \"%s\" already exists", q, name);
        goto out;
    }
    const char *dummy;
    size_t dl;
    bool has_ts = kc_obj_get_raw(o0, "/metadata/creationTimestamp", &dummy, &dl, NULL) == 0;
    bool has_gen = kc_obj_get_raw(o0, "/metadata/generation", &dummy, &dl, NULL) == 0;
    char uid[37], ts[32], ins[512];
    kc__uuid_v4(&srv->rng, uid);
    kc__now_rfc3339(ts);
    uint64_t rv = srv->rv + 1;
    int n =
        snprintf(ins, sizeof(ins), "%s%s%s\"uid\":\"%s\",\"resourceVersion\":\"%llu\"%s%s%s%s",
                 r->namespaced && !*kc_obj_namespace(o0) ? "\"namespace\":\"" : "",
                 r->namespaced && !*kc_obj_namespace(o0) ? ns : "",
                 r->namespaced && !*kc_obj_namespace(o0) ? "\"," : "", uid, (unsigned long long)rv,
                 has_ts ? "" : ",\"creationTimestamp\":\"", has_ts ? "" : ts, has_ts ? "" : "\"",
                 r->gen_rule != KC__GEN_NONE && !has_gen ? ",\"generation\":1" : "");
    if (n <= 0 || (size_t)n >= sizeof(ins) - 1) {
        rc = KC_EUNSUPPORTED;
        goto out;
    }
    if (mlen > 2)
        ins[n++] = ',';
    size_t tl;
    const char *text = kc_obj_json(o0, &tl);
    size_t head = (size_t)(meta - text) + 1;
    char *buf = malloc(tl + (size_t)n + 1);
    if (!buf) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(buf, text, head);
    memcpy(buf + head, ins, (size_t)n);
    memcpy(buf + head + n, text + head, tl - head);
    rc = kc__obj_from_json(srv, buf, tl + (size_t)n, &obj, err);
    free(buf);
    if (rc)
        goto out;
    if ((rc = kc__store_commit(srv, r, KC_WATCH_ADDED, obj, NULL, rv)) != 0)
        rc = kc_error_set(err, rc, "out of memory");
    else if (srv->ctl)
        srv->ctl->created(srv, r, obj);
out:
    kc_obj_unref(obj);
    return rc;
}

int kc__create_json_ex(kc_server *srv, const char *json, size_t len, bool have_lock, bool as_stored,
                       kc_error *err)
{
    kc_obj *o0 = NULL;
    if (kc_obj_parse(json, len, &srv->dopts, &o0, NULL) == 0) {
        if (!have_lock)
            pthread_mutex_lock(&srv->mu);
        kc__rsrc *fr = kc__registry_find_kind(srv, kc_obj_api_version(o0), kc_obj_kind(o0));
        /* the fast path stores objects as given: only for text already in the stored form or
         * kinds without defaults */
        if (fr && !as_stored && !fr->is_crd && kc__defaults_known(fr->group, fr->kind))
            fr = NULL;
        int frc = fr ? create_fast(srv, fr, o0, err) : KC_EUNSUPPORTED;
        if (!have_lock)
            pthread_mutex_unlock(&srv->mu);
        kc_obj_unref(o0);
        if (frc != KC_EUNSUPPORTED)
            return frc;
        kc_error_clear(err);
    }
    json_error_t je;
    json_t *doc = json_loadb(json, len, 0, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return kc__fail(err, 400, "BadRequest", "seed object is not a JSON object: %s", je.text);
    }
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    int rc;
    if (!have_lock)
        pthread_mutex_lock(&srv->mu);
    kc__rsrc *r = av && kind ? kc__registry_find_kind(srv, av, kind) : NULL;
    if (!r) {
        rc = kc__fail(err, 404, "NotFound", "no resource for apiVersion %s kind %s", av ? av : "?",
                      kind ? kind : "?");
    } else {
        const char *ns = kc__meta_str(doc, "namespace");
        const char *slash = strchr(av, '/');
        kc__write w = {.r = r,
                       .ns = r->namespaced ? (ns && *ns ? ns : "default") : "",
                       .version = slash ? slash + 1 : av,
                       .keep_status = true};
        char nsbuf[256];
        snprintf(nsbuf, sizeof(nsbuf), "%s", w.ns);
        w.ns = nsbuf;
        kc_obj *obj = NULL;
        rc = kc__write_create(srv, &w, doc, &obj, err);
        kc_obj_unref(obj);
    }
    if (!have_lock)
        pthread_mutex_unlock(&srv->mu);
    json_decref(doc);
    return rc;
}

int kc__create_json(kc_server *srv, const char *json, size_t len, bool as_stored, kc_error *err)
{
    return kc__create_json_ex(srv, json, len, false, as_stored, err);
}

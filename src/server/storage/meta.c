/*
 * meta.c — small helpers on jansson object documents (metadata fields) and namespace checks for
 * the write path of the embedded server. Documents are request-local: no locking needed, except
 * kc__check_namespace which reads the store (srv->mu held); the no-op comparison of updates.
 */
#include "server/storage/storage_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

json_t *kc__meta(json_t *doc)
{
    json_t *m = json_object_get(doc, "metadata");
    if (json_is_object(m))
        return m;
    m = json_object();
    if (!m || json_object_set_new(doc, "metadata", m) != 0)
        return NULL;
    return m;
}

const char *kc__meta_str(json_t *doc, const char *key)
{
    json_t *m = json_object_get(doc, "metadata");
    return json_string_value(json_object_get(m, key));
}

int kc__meta_set_str(json_t *doc, const char *key, const char *val)
{
    json_t *m = kc__meta(doc);
    if (!m || json_object_set_new(m, key, json_string(val)) != 0)
        return KC_ENOMEM;
    return 0;
}

void kc__meta_del(json_t *doc, const char *key)
{
    json_object_del(json_object_get(doc, "metadata"), key);
}

void kc__meta_omit_empty(json_t *doc)
{
    static const char *const keys[] = {"labels",          "annotations",   "finalizers",
                                       "ownerReferences", "managedFields", "generateName",
                                       "namespace"};
    json_t *m = json_object_get(doc, "metadata");
    for (size_t i = 0; json_is_object(m) && i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(m, keys[i]);
        if (json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
            (json_is_array(v) && json_array_size(v) == 0) ||
            (json_is_string(v) && json_string_length(v) == 0))
            json_object_del(m, keys[i]);
    }
}

void kc__rv_str(uint64_t rv, char out[24])
{
    snprintf(out, 24, "%" PRIu64, rv);
}

int kc__check_namespace(kc_server *srv, const char *ns, const kc__rsrc *r, const char *name,
                        kc_error *err)
{
    kc__rsrc *nsr = kc__rsrc_namespaces(srv);
    kc__entry *e = nsr ? kc__store_find(nsr, "", ns) : NULL;
    if (!e) {
        int rc = kc__fail(err, 404, "NotFound", "namespaces \"%s\" not found", ns);
        kc__fail_details(err, ns, NULL, "namespaces");
        return rc;
    }
    if (kc_obj_deleting(e->obj)) { /* the NamespaceLifecycle admission plugin's refusal */
        char q[300], why[400];
        kc__rsrc_qualified(r, q, sizeof(q));
        snprintf(why, sizeof(why), "namespace %s is being terminated", ns);
        int rc = kc__fail(err, 403, "Forbidden",
                          "%s \"%s\" is forbidden: unable to create new content in namespace %s "
                          "because it is being terminated",
                          q, name ? name : "", ns);
        kc__fail_details(err, name ? name : "", r->group[0] ? r->group : NULL, r->plural);
        kc__fail_cause(err, "NamespaceTerminating", "metadata.namespace", why);
        return rc;
    }
    return 0;
}

/* json_equal that holds for two absent values (jansson's is false when either is NULL). */
static bool same_or_absent(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

/* Two managedFields lists alike but for their entries' "time": an apply repeated a second later
 * restamps its entry and changes nothing else (spec §2, resourceVersion: no-op writes; #29, #82).
 */
static bool same_entries_but_times(const json_t *a, const json_t *b)
{
    if (!json_is_array(a) || !json_is_array(b) || json_array_size(a) != json_array_size(b))
        return same_or_absent(a, b);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        if (!json_is_object(x) || !json_is_object(y)) {
            if (!json_equal(x, y))
                return false;
            continue;
        }
        const char *key;
        json_t *v;
        size_t nx = 0, ny = 0;
        json_object_foreach((json_t *)x, key, v)
        {
            if (strcmp(key, "time") == 0)
                continue;
            nx++;
            if (!same_or_absent(v, json_object_get(y, key)))
                return false;
        }
        json_object_foreach((json_t *)y, key, v) ny += strcmp(key, "time") != 0;
        if (nx != ny)
            return false;
    }
    return true;
}

/* Would storing nu change nothing of old? Every member equal, managedFields compared without
 * their entries' times (a real API server neither stores nor announces such a write: the
 * object equals the stored one once defaulted, and a manager's time moves only with a change). */
bool kc__doc_same_but_times(json_t *nu, json_t *old)
{
    if (json_object_size(nu) != json_object_size(old))
        return false;
    const char *key;
    json_t *v;
    json_object_foreach(nu, key, v)
    {
        if (strcmp(key, "metadata") != 0 && !json_equal(v, json_object_get(old, key)))
            return false;
    }
    json_t *nm = json_object_get(nu, "metadata"), *om = json_object_get(old, "metadata");
    if (!json_is_object(nm) || !json_is_object(om))
        return same_or_absent(nm, om);
    if (json_object_size(nm) != json_object_size(om))
        return false;
    json_object_foreach(nm, key, v)
    {
        json_t *o = json_object_get(om, key);
        if (strcmp(key, "managedFields") == 0 ? !same_entries_but_times(v, o)
                                              : !same_or_absent(v, o))
            return false;
    }
    return true;
}

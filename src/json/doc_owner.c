/*
 * doc_owner.c — owner references of a kc_doc from an owner kc_obj (kcache/owner.h), with
 * controller-runtime's controllerutil semantics, and ownership tests by uid.
 *
 * Built on kc_doc's public API only (doc.h): each reference is read member by member through
 * pointers "/metadata/ownerReferences/<i>/<field>", and a new reference is a small kc_doc set
 * into place (kc_doc_set_doc), so every string is escaped by the document's serialiser, never
 * here. An object has a handful of owners: the linear scans are the whole algorithm.
 *
 * Same owner = same API group, kind and name (controllerutil's referSameObject: the version and
 * the uid may differ — an owner re-created under the same name takes the reference over, as
 * upsertOwnerRef does). The controller is the first reference with controller=true
 * (metav1.GetControllerOf). Ownership tests compare uids (metav1.IsControlledBy).
 */
#include "core/internal.h"
#include "json/obj_internal.h"
#include "kcache/owner.h"

#include <stdio.h>
#include <string.h>

#define REFS "/metadata/ownerReferences"

/* The string at REFS/i/field, "" when absent or not a string (borrowed from doc). */
static const char *ref_field(const kc_doc *doc, size_t i, const char *field)
{
    char ptr[96];
    snprintf(ptr, sizeof ptr, REFS "/%zu/%s", i, field);
    const char *s = NULL;
    if (kc_doc_get_string(doc, ptr, &s, NULL, NULL) != 0)
        return "";
    return s;
}

static bool ref_controller(const kc_doc *doc, size_t i)
{
    char ptr[96];
    snprintf(ptr, sizeof ptr, REFS "/%zu/controller", i);
    bool b = false;
    return kc_doc_get_bool(doc, ptr, &b, NULL) == 0 && b;
}

/* Length of the group part of an apiVersion ("apps/v1" → "apps", "v1" → ""). */
static size_t group_len(const char *api_version)
{
    const char *slash = strchr(api_version, '/');
    return slash ? (size_t)(slash - api_version) : 0;
}

static bool same_group(const char *a, const char *b)
{
    size_t n = group_len(a);
    return n == group_len(b) && memcmp(a, b, n) == 0;
}

/* Reference i of doc names owner (group, kind, name). */
static bool refers_to(const kc_doc *doc, size_t i, const kc_obj *owner)
{
    return same_group(ref_field(doc, i, "apiVersion"), kc_obj_api_version(owner)) &&
           strcmp(ref_field(doc, i, "kind"), kc_obj_kind(owner)) == 0 &&
           strcmp(ref_field(doc, i, "name"), kc_obj_name(owner)) == 0;
}

/* Number of owner references in doc (0 when absent or null); KC_EINVAL when not an array. */
static int ref_count(const kc_doc *doc, size_t *n, kc_error *err)
{
    kc_json_type t;
    *n = 0;
    int r = kc_doc_type(doc, REFS, &t, NULL);
    if (r == KC_ENOTFOUND || (r == 0 && t == KC_JSON_NULL))
        return 0;
    if (r == 0 && t != KC_JSON_ARRAY)
        return kc_error_set(err, KC_EINVAL, REFS " is %s, not an array", kc_json_type_name(t));
    if (r)
        return kc_error_set(err, r, REFS ": cannot be read");
    return kc_doc_count(doc, REFS, n, err);
}

/* The owner's fields a reference needs; require_uid: also its uid. */
static int check_owner(const kc_obj *owner, bool require_uid, kc_error *err)
{
    const char *missing = !*kc_obj_api_version(owner)          ? "apiVersion"
                          : !*kc_obj_kind(owner)               ? "kind"
                          : !*kc_obj_name(owner)               ? "name"
                          : require_uid && !*kc_obj_uid(owner) ? "uid"
                                                               : NULL;
    if (missing)
        return kc_error_set(err, KC_EINVAL, "owner %s/%s has no %s: cannot reference it",
                            kc_obj_kind(owner), kc_obj_name(owner), missing);
    return 0;
}

/* controllerutil's validateOwner: namespaced owners own only objects of their namespace. */
static int check_namespaces(const kc_doc *doc, const kc_obj *owner, kc_error *err)
{
    const char *ons = kc_obj_namespace(owner), *dns = NULL;
    if (!*ons)
        return 0; /* a cluster-scoped owner may own anything */
    if (kc_doc_get_string(doc, "/metadata/namespace", &dns, NULL, NULL) != 0 || !*dns)
        return kc_error_set(err, KC_EINVAL,
                            "cluster-scoped resource must not have a namespace-scoped owner, "
                            "owner's namespace %s",
                            ons);
    if (strcmp(ons, dns) != 0)
        return kc_error_set(err, KC_EINVAL,
                            "cross-namespace owner references are disallowed, owner's namespace "
                            "%s, obj's namespace %s",
                            ons, dns);
    return 0;
}

/* The reference to owner as a new document. */
static int make_ref(const kc_obj *owner, bool controller, kc_doc **ret, kc_error *err)
{
    kc_doc *ref = NULL;
    int r = kc_doc_new(&ref, err);
    if (!r)
        r = kc_doc_set_string(ref, "/apiVersion", kc_obj_api_version(owner), err);
    if (!r)
        r = kc_doc_set_string(ref, "/kind", kc_obj_kind(owner), err);
    if (!r)
        r = kc_doc_set_string(ref, "/name", kc_obj_name(owner), err);
    if (!r)
        r = kc_doc_set_string(ref, "/uid", kc_obj_uid(owner), err);
    if (!r && controller)
        r = kc_doc_set_bool(ref, "/controller", true, err);
    if (!r && controller)
        r = kc_doc_set_bool(ref, "/blockOwnerDeletion", true, err);
    if (r) {
        kc_doc_free(ref);
        return r;
    }
    *ret = ref;
    return 0;
}

static int already_owned(const kc_doc *doc, size_t i, kc_error *err)
{
    const char *ns = NULL, *name = NULL;
    if (kc_doc_get_string(doc, "/metadata/namespace", &ns, NULL, NULL))
        ns = "";
    if (kc_doc_get_string(doc, "/metadata/name", &name, NULL, NULL))
        name = "";
    kc_error_set(err, KC_ECONFLICT,
                 "Object %s/%s is already owned by another %s controller %s (uid %s)", ns, name,
                 ref_field(doc, i, "kind"), ref_field(doc, i, "name"), ref_field(doc, i, "uid"));
    if (err)
        err->reason = kc__strdup("AlreadyOwned");
    return KC_ECONFLICT;
}

/* SetControllerReference (controller) / SetOwnerReference: checks, then upsert. */
static int set_ref(kc_doc *doc, const kc_obj *owner, bool controller, kc_error *err)
{
    if (!doc || !owner)
        return kc_error_set(err, KC_EINVAL, "owner reference: NULL argument");
    int r = check_owner(owner, true, err);
    if (!r)
        r = check_namespaces(doc, owner, err);
    size_t n = 0;
    if (!r)
        r = ref_count(doc, &n, err);
    if (r)
        return r;
    size_t at = n;
    bool seen_controller = false; /* only the first one counts (metav1.GetControllerOf) */
    for (size_t i = 0; i < n; i++) {
        bool same = refers_to(doc, i, owner);
        if (controller && !seen_controller && ref_controller(doc, i)) {
            seen_controller = true;
            if (!same)
                return already_owned(doc, i, err);
        }
        if (same && at == n)
            at = i;
    }
    kc_doc *ref = NULL;
    if ((r = make_ref(owner, controller, &ref, err)))
        return r;
    char ptr[64];
    if (n == 0)
        r = kc_doc_set_raw(doc, REFS, "[]", 2, err);
    if (!r) {
        snprintf(ptr, sizeof ptr, at == n ? REFS "/-" : REFS "/%zu", at);
        r = kc_doc_set_doc(doc, ptr, ref, err);
    }
    kc_doc_free(ref);
    return r;
}

int kc_doc_set_controller_reference(kc_doc *doc, const kc_obj *owner, kc_error *err)
{
    return set_ref(doc, owner, true, err);
}

int kc_doc_set_owner_reference(kc_doc *doc, const kc_obj *owner, kc_error *err)
{
    return set_ref(doc, owner, false, err);
}

int kc_doc_remove_owner_reference(kc_doc *doc, const kc_obj *owner, kc_error *err)
{
    if (!doc || !owner)
        return kc_error_set(err, KC_EINVAL, "owner reference: NULL argument");
    int r = check_owner(owner, false, err);
    size_t n = 0;
    if (!r)
        r = ref_count(doc, &n, err);
    if (r)
        return r;
    for (size_t i = 0; i < n; i++) {
        if (!refers_to(doc, i, owner))
            continue;
        char ptr[64];
        snprintf(ptr, sizeof ptr, REFS "/%zu", i);
        return kc_doc_remove(doc, ptr, err);
    }
    return kc_error_set(err, KC_ENOTFOUND, "no owner reference to %s %s/%s",
                        kc_obj_api_version(owner), kc_obj_kind(owner), kc_obj_name(owner));
}

bool kc_doc_is_owned_by(const kc_doc *doc, const kc_obj *owner)
{
    size_t n = 0;
    if (!doc || !owner || !*kc_obj_uid(owner) || ref_count(doc, &n, NULL))
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ref_field(doc, i, "uid"), kc_obj_uid(owner)) == 0)
            return true;
    return false;
}

bool kc_obj_is_owned_by(const kc_obj *obj, const kc_obj *owner)
{
    if (!obj || !owner || !*kc_obj_uid(owner))
        return false;
    if (strcmp(kc_obj_controller_uid(obj), kc_obj_uid(owner)) == 0)
        return true; /* the common case, without a parse */
    return kc_obj_owner_count(obj) > 0 &&
           kc__obj_array_lookup(obj, REFS, "uid", kc_obj_uid(owner), NULL, NULL, 0, NULL) == 0;
}

bool kc_obj_is_controlled_by(const kc_obj *obj, const kc_obj *owner)
{
    return obj && owner && *kc_obj_uid(owner) &&
           strcmp(kc_obj_controller_uid(obj), kc_obj_uid(owner)) == 0;
}

/*
 * json/doc_finalizer.c — finalizer helpers on a kc_doc (controllerutil.ContainsFinalizer /
 * AddFinalizer / RemoveFinalizer): they edit /metadata/finalizers through kc_doc's pointer API and
 * report whether the document changed, so a caller writes only when something did.
 *
 * Names are checked as the API server checks them (a qualified name: kc__check_qualified_name);
 * the array keeps the other entries and their order. Add appends once (creating metadata and the
 * array when missing); remove drops every copy, from the last index down so earlier indexes stay
 * valid while removing.
 */
#include "core/internal.h"
#include "kcache/finalizer.h"

#include <stdio.h>
#include <string.h>

#define FINALIZERS "/metadata/finalizers"

static int check_name(const char *name, kc_error *err)
{
    if (!name)
        return kc_error_set(err, KC_EINVAL, "finalizer: NULL name");
    const char *bad = kc__check_qualified_name(name, strlen(name));
    return bad ? kc_error_set(err, KC_EINVAL, "finalizer \"%s\": %s", name, bad) : 0;
}

/* The number of finalizers (0 when absent); KC_EINVAL when /metadata/finalizers is not an array. */
static int count(const kc_doc *doc, size_t *ret, kc_error *err)
{
    *ret = 0;
    kc_json_type t;
    if (kc_doc_type(doc, FINALIZERS, &t, NULL) < 0)
        return 0;
    if (t != KC_JSON_ARRAY)
        return kc_error_set(err, KC_EINVAL, "%s is a %s, not an array", FINALIZERS,
                            kc_json_type_name(t));
    return kc_doc_count(doc, FINALIZERS, ret, err);
}

static bool is_at(const kc_doc *doc, size_t i, const char *name)
{
    char ptr[64];
    snprintf(ptr, sizeof ptr, FINALIZERS "/%zu", i);
    const char *s = NULL;
    size_t len = 0;
    return kc_doc_get_string(doc, ptr, &s, &len, NULL) == 0 && len == strlen(name) &&
           memcmp(s, name, len) == 0;
}

bool kc_doc_finalizer_has(const kc_doc *doc, const char *name)
{
    size_t n = 0;
    if (!doc || !name || count(doc, &n, NULL) < 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (is_at(doc, i, name))
            return true;
    return false;
}

int kc_doc_finalizer_add(kc_doc *doc, const char *name, bool *ret_changed, kc_error *err)
{
    if (ret_changed)
        *ret_changed = false;
    if (!doc)
        return kc_error_set(err, KC_EINVAL, "finalizer: NULL document");
    size_t n = 0;
    int rc = check_name(name, err);
    if (rc == 0)
        rc = count(doc, &n, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (is_at(doc, i, name))
            return 0;
    if (!kc_doc_has(doc, FINALIZERS) && (rc = kc_doc_set_raw(doc, FINALIZERS, "[]", 2, err)) < 0)
        return rc;
    if ((rc = kc_doc_set_string(doc, FINALIZERS "/-", name, err)) < 0)
        return rc;
    if (ret_changed)
        *ret_changed = true;
    return 0;
}

int kc_doc_finalizer_remove(kc_doc *doc, const char *name, bool *ret_changed, kc_error *err)
{
    if (ret_changed)
        *ret_changed = false;
    if (!doc)
        return kc_error_set(err, KC_EINVAL, "finalizer: NULL document");
    size_t n = 0;
    int rc = check_name(name, err);
    if (rc == 0)
        rc = count(doc, &n, err);
    if (rc < 0)
        return rc;
    for (size_t i = n; i-- > 0;) {
        if (!is_at(doc, i, name))
            continue;
        char ptr[64];
        snprintf(ptr, sizeof ptr, FINALIZERS "/%zu", i);
        if ((rc = kc_doc_remove(doc, ptr, err)) < 0)
            return rc;
        if (ret_changed)
            *ret_changed = true;
    }
    return 0;
}

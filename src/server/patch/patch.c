/*
 * patch.c — PATCH entry point of the embedded server: Content-Type → patch type (#41), body
 * decoding with limits, JSON merge patch (RFC 7386, #38), and dispatch to the JSON-patch
 * (patch_json.c) and strategic (patch_strategic.c) engines.
 *
 * Design: every engine works on a deep copy of `current`, so the stored object is never touched
 * and a failure half way leaves nothing behind. Bodies are decoded by jansson (its own depth limit
 * is 2048); we then reject anything nested deeper than KC__PATCH_MAX_DEPTH with 400, and check the
 * patched result again, so a patch cannot build a document deeper than the limit either.
 * Thread-safe: pure functions.
 */
#include "server/patch/patch.h"
#include "server/patch/patch_internal.h"

#include "core/internal.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* ---- Content-Type ------------------------------------------------------------------------- */

#define KC__ACCEPTED_PATCH_TYPES                                                                   \
    "application/json-patch+json, application/merge-patch+json, "                                  \
    "application/strategic-merge-patch+json, application/apply-patch+yaml"

int kc__patch_type_from_content_type(const char *content_type, kc__patch_type *ret, kc_error *err)
{
    static const struct {
        const char *name;
        kc__patch_type type;
    } types[] = {
        {"application/merge-patch+json", KC__PATCH_MERGE},
        {"application/json-patch+json", KC__PATCH_JSON},
        {"application/strategic-merge-patch+json", KC__PATCH_STRATEGIC},
        {"application/apply-patch+yaml", KC__PATCH_APPLY},
    };
    const char *ct = content_type ? content_type : "";
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    for (size_t i = 0; i < KC__ARRAY_LEN(types); i++) {
        if (strlen(types[i].name) == n && strncasecmp(ct, types[i].name, n) == 0) {
            *ret = types[i].type;
            return 0;
        }
    }
    int code = kc_error_set(err, KC_EMEDIATYPE,
                            "the body of the request was in an unknown format - accepted media "
                            "types include: " KC__ACCEPTED_PATCH_TYPES);
    if (err) {
        err->http_status = 415;
        err->reason = kc__strdup("UnsupportedMediaType");
    }
    return code;
}

/* ---- decoding and limits ------------------------------------------------------------------ */

bool kc__json_depth_ok(const json_t *v, int max_depth)
{
    if (json_is_object(v)) {
        if (max_depth <= 0)
            return false;
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c)
        {
            if (!kc__json_depth_ok(c, max_depth - 1))
                return false;
        }
    } else if (json_is_array(v)) {
        if (max_depth <= 0)
            return false;
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c)
        {
            if (!kc__json_depth_ok(c, max_depth - 1))
                return false;
        }
    }
    return true;
}

int kc__patch_json_decode(const char *body, size_t len, json_t **ret, kc_error *err)
{
    json_error_t jerr;
    json_t *v = json_loadb(body ? body : "", len, JSON_DECODE_ANY, &jerr);
    if (!v) {
        int code = kc_error_set(err, KC_EBADREQUEST, "error decoding patch: %s (at byte %d)",
                                jerr.text, jerr.position);
        if (err)
            err->offset = jerr.position;
        return code;
    }
    if (!kc__json_depth_ok(v, KC__PATCH_MAX_DEPTH)) {
        json_decref(v);
        return kc_error_set(err, KC_EBADREQUEST,
                            "error decoding patch: nesting deeper than %d levels",
                            KC__PATCH_MAX_DEPTH);
    }
    *ret = v;
    return 0;
}

bool kc__json_equal(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *av;
        json_object_foreach((json_t *)a, k, av)
        {
            if (!kc__json_equal(av, json_object_get(b, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++) {
            if (!kc__json_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        }
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* ---- RFC 7386 merge patch ----------------------------------------------------------------- */

int kc__merge_patch(json_t **target, const json_t *patch)
{
    if (!json_is_object(patch)) {
        json_t *copy = json_deep_copy(patch);
        if (!copy)
            return KC_ENOMEM;
        json_decref(*target);
        *target = copy;
        return 0;
    }
    if (!json_is_object(*target)) {
        json_t *obj = json_object();
        if (!obj)
            return KC_ENOMEM;
        json_decref(*target);
        *target = obj;
    }
    const char *k;
    json_t *pv;
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (json_is_null(pv)) {
            json_object_del(*target, k);
            continue;
        }
        json_t *cur = json_object_get(*target, k);
        /* target is the caller's private copy: merging into cur in place is safe. */
        json_t *child = cur ? json_incref(cur) : json_null();
        if (kc__merge_patch(&child, pv) < 0 || json_object_set_new(*target, k, child) < 0) {
            json_decref(child);
            return KC_ENOMEM;
        }
    }
    return 0;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

int kc__patch_apply(kc__patch_type type, const json_t *current, const char *body, size_t len,
                    const char *kind, bool builtin, json_t **ret_new, kc_error *err)
{
    if (!current || !ret_new)
        return kc_error_set(err, KC_EINVAL, "patch: current and ret_new are required");
    if (type == KC__PATCH_STRATEGIC && !builtin) {
        int code = kc_error_set(err, KC_EMEDIATYPE,
                                "the body of the request was in an unknown format - accepted "
                                "media types include: application/json-patch+json, "
                                "application/merge-patch+json, application/apply-patch+yaml");
        if (err) {
            err->http_status = 415;
            err->reason = kc__strdup("UnsupportedMediaType");
        }
        return code;
    }
    if (type == KC__PATCH_APPLY)
        return kc_error_set(err, KC_EINVAL, "patch: apply patches go through kc__apply");
    if (type != KC__PATCH_MERGE && type != KC__PATCH_JSON && type != KC__PATCH_STRATEGIC)
        return kc_error_set(err, KC_EINVAL, "patch: unknown patch type %d", (int)type);

    json_t *patch = NULL;
    int rc = kc__patch_json_decode(body, len, &patch, err);
    if (rc < 0)
        return rc;
    json_t *doc = json_deep_copy(current);
    if (!doc) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory copying the object");
        goto out_patch;
    }
    switch (type) {
    case KC__PATCH_MERGE:
        if (!json_is_object(patch)) {
            rc = kc_error_set(err, KC_EBADREQUEST,
                              "error decoding patch: a merge patch must be a JSON object");
            break;
        }
        rc = kc__merge_patch(&doc, patch);
        if (rc < 0)
            kc_error_set(err, rc, "out of memory applying the merge patch");
        break;
    case KC__PATCH_JSON:
        rc = kc__json_patch(&doc, patch, err);
        break;
    default:
        if (!json_is_object(patch)) {
            rc = kc_error_set(err, KC_EBADREQUEST,
                              "error decoding patch: a strategic merge patch must be a JSON "
                              "object");
            break;
        }
        if (!json_is_object(doc)) {
            rc = kc_error_set(err, KC_EINVAL, "patch: current object is not a JSON object");
            break;
        }
        rc = kc__strategic_merge(doc, patch, kind ? kind : "", err);
        break;
    }
    if (rc == 0 && !json_is_object(doc))
        rc = kc_error_set(err, KC_EBADREQUEST, "the patched document is not a JSON object");
    if (rc == 0 && !kc__json_depth_ok(doc, KC__PATCH_MAX_DEPTH))
        rc = kc_error_set(err, KC_EBADREQUEST, "the patched document nests deeper than %d levels",
                          KC__PATCH_MAX_DEPTH);
    if (rc < 0) {
        json_decref(doc);
        goto out_patch;
    }
    *ret_new = doc;
out_patch:
    json_decref(patch);
    return rc;
}

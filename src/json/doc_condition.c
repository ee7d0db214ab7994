/*
 * doc_condition.c — status conditions (kcache/condition.h): apimachinery's meta.SetStatusCondition,
 * FindStatusCondition, RemoveStatusCondition and IsStatusConditionTrue over a kc_doc's
 * /status/conditions, and the status of a stored object's condition read in place.
 *
 * The document side uses kc_doc's public API (doc.h) only: a condition is found by reading
 * "/status/conditions/<i>/type" for each i, changed member by member, and a new one is a small
 * kc_doc appended with kc_doc_set_doc (strings escaped by the document's serialiser). The new
 * condition's members follow metav1.Condition's field order (type, status, observedGeneration —
 * omitted when 0 —, lastTransitionTime, reason, message), as the API server writes them.
 *
 * The stored-object side iterates /status/conditions with kc_obj_iter (kc__obj_array_lookup):
 * one pass over the object, one over each condition, and no copy of the text.
 */
#include "core/internal.h"
#include "json/obj_internal.h"
#include "kcache/condition.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define CONDS "/status/conditions"

static const char *const STATUSES[] = {"True", "False", "Unknown"};

/* metav1.Condition's reason pattern ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024. */
static bool reason_ok(const char *r)
{
    size_t n = strlen(r);
    if (n == 0 || n > 1024 || !((r[0] >= 'A' && r[0] <= 'Z') || (r[0] >= 'a' && r[0] <= 'z')))
        return false;
    for (size_t i = 1; i < n; i++) {
        char ch = r[i];
        bool alnum_ = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                      (ch >= '0' && ch <= '9') || ch == '_';
        if (!alnum_ && (i == n - 1 || (ch != ',' && ch != ':')))
            return false;
    }
    return true;
}

static int check(const kc_condition *c, kc_error *err)
{
    if (!c->type || !*c->type)
        return kc_error_set(err, KC_EINVAL, "condition: type is required");
    bool status_ok = false;
    for (size_t i = 0; c->status && i < 3; i++)
        status_ok |= strcmp(c->status, STATUSES[i]) == 0;
    if (!status_ok)
        return kc_error_set(err, KC_EINVAL,
                            "condition %s: status \"%s\" is not one of True, False, Unknown",
                            c->type, c->status ? c->status : "");
    if (!c->reason || !reason_ok(c->reason))
        return kc_error_set(err, KC_EINVAL,
                            "condition %s: reason \"%s\" is %s (a letter, then letters, digits, "
                            "'_', ',' or ':', at most 1024)",
                            c->type, c->reason ? c->reason : "",
                            c->reason && *c->reason ? "malformed" : "required");
    if (c->message && strlen(c->message) > 32768)
        return kc_error_set(err, KC_EINVAL, "condition %s: message over 32768 bytes", c->type);
    if (c->observed_generation < 0)
        return kc_error_set(err, KC_EINVAL, "condition %s: observedGeneration is negative",
                            c->type);
    return 0;
}

/* Index of the condition of type in doc into *at; KC_ENOTFOUND; KC_EINVAL when CONDS is
 * something else than an array or null. *n gets the number of conditions. */
static int find(const kc_doc *doc, const char *type, size_t *at, size_t *n, kc_error *err)
{
    kc_json_type t;
    *n = 0;
    int r = kc_doc_type(doc, CONDS, &t, NULL);
    if (r == KC_ENOTFOUND || (r == 0 && t == KC_JSON_NULL))
        return KC_ENOTFOUND;
    if (r == 0 && t != KC_JSON_ARRAY)
        return kc_error_set(err, KC_EINVAL, CONDS " is %s, not an array", kc_json_type_name(t));
    if (r)
        return kc_error_set(err, r, CONDS ": cannot be read");
    if ((r = kc_doc_count(doc, CONDS, n, err)))
        return r;
    for (size_t i = 0; i < *n; i++) {
        char ptr[64];
        const char *s = NULL;
        snprintf(ptr, sizeof ptr, CONDS "/%zu/type", i);
        if (kc_doc_get_string(doc, ptr, &s, NULL, NULL) == 0 && strcmp(s, type) == 0) {
            *at = i;
            return 0;
        }
    }
    return KC_ENOTFOUND;
}

/* Now as RFC 3339 in UTC, seconds ("2026-01-02T03:04:05Z"), as metav1.Time marshals. */
static void now_rfc3339(char buf[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int append(kc_doc *doc, const kc_condition *c, const char *ltt, bool have_array,
                  kc_error *err)
{
    kc_doc *nc = NULL;
    int r = kc_doc_new(&nc, err);
    if (!r)
        r = kc_doc_set_string(nc, "/type", c->type, err);
    if (!r)
        r = kc_doc_set_string(nc, "/status", c->status, err);
    if (!r && c->observed_generation)
        r = kc_doc_set_int(nc, "/observedGeneration", c->observed_generation, err);
    if (!r)
        r = kc_doc_set_string(nc, "/lastTransitionTime", ltt, err);
    if (!r)
        r = kc_doc_set_string(nc, "/reason", c->reason, err);
    if (!r)
        r = kc_doc_set_string(nc, "/message", c->message ? c->message : "", err);
    if (!r && !have_array)
        r = kc_doc_set_raw(doc, CONDS, "[]", 2, err);
    if (!r)
        r = kc_doc_set_doc(doc, CONDS "/-", nc, err);
    kc_doc_free(nc);
    return r;
}

/* Member name of condition i set to s when it differs; *changed set then. */
static int update_string(kc_doc *doc, size_t i, const char *name, const char *s, bool *changed,
                         kc_error *err)
{
    char ptr[96];
    const char *old = NULL;
    snprintf(ptr, sizeof ptr, CONDS "/%zu/%s", i, name);
    if (kc_doc_get_string(doc, ptr, &old, NULL, NULL) == 0 && strcmp(old, s) == 0)
        return 0;
    *changed = true;
    return kc_doc_set_string(doc, ptr, s, err);
}

static int update_generation(kc_doc *doc, size_t i, int64_t g, bool *changed, kc_error *err)
{
    char ptr[96];
    int64_t old = 0;
    snprintf(ptr, sizeof ptr, CONDS "/%zu/observedGeneration", i);
    bool present = kc_doc_get_int(doc, ptr, &old, NULL) == 0;
    if (!present && kc_doc_has(doc, ptr))
        old = -1; /* present but not an integer: replace it */
    if (old == g)
        return 0;
    *changed = true;
    if (g == 0) /* omitempty: 0 is written as no member */
        return kc_doc_remove(doc, ptr, err);
    return kc_doc_set_int(doc, ptr, g, err);
}

int(kc_doc_condition_set)(kc_doc *doc, const kc_condition *c, size_t c_size, bool *ret_changed,
                          kc_error *err)
{
    if (ret_changed)
        *ret_changed = false;
    if (!doc || !c)
        return kc_error_set(err, KC_EINVAL, "kc_doc_condition_set: NULL argument");
    KC__OPTS_TAKE(c, kc_condition, err);
    int r = check(c, err);
    if (r)
        return r;
    char now[32];
    const char *ltt = c->last_transition_time;
    if (!ltt || !*ltt) {
        now_rfc3339(now);
        ltt = now;
    }
    size_t at = 0, n = 0;
    bool changed = false;
    r = find(doc, c->type, &at, &n, err);
    if (r == KC_ENOTFOUND) {
        /* a new condition is appended, with the given time or now */
        r = append(doc, c, ltt, n > 0, err);
        changed = r == 0;
    } else if (r == 0) {
        /* the time changes only with the status (meta.SetStatusCondition) */
        bool status_changed = false;
        r = update_string(doc, at, "status", c->status, &status_changed, err);
        if (!r && status_changed)
            r = update_string(doc, at, "lastTransitionTime", ltt, &changed, err);
        changed |= status_changed;
        if (!r)
            r = update_string(doc, at, "reason", c->reason, &changed, err);
        if (!r)
            r = update_string(doc, at, "message", c->message ? c->message : "", &changed, err);
        if (!r)
            r = update_generation(doc, at, c->observed_generation, &changed, err);
    }
    if (ret_changed)
        *ret_changed = changed;
    return r;
}

/* The string member name of condition i, "" when absent (borrowed from doc). */
static const char *member(const kc_doc *doc, size_t i, const char *name)
{
    char ptr[96];
    const char *s = NULL;
    snprintf(ptr, sizeof ptr, CONDS "/%zu/%s", i, name);
    return kc_doc_get_string(doc, ptr, &s, NULL, NULL) == 0 ? s : "";
}

int(kc_doc_condition_find)(const kc_doc *doc, const char *type, kc_condition *ret, size_t ret_size,
                           kc_error *err)
{
    if (!doc || !type || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_condition_find: NULL argument");
    size_t at = 0, n = 0;
    int r = find(doc, type, &at, &n, err);
    if (r == KC_ENOTFOUND)
        return kc_error_set(err, r, "no condition of type %s", type);
    if (r)
        return r;
    kc_condition c = {0};
    c.type = member(doc, at, "type");
    c.status = member(doc, at, "status");
    c.reason = member(doc, at, "reason");
    c.message = member(doc, at, "message");
    c.last_transition_time = member(doc, at, "lastTransitionTime");
    char ptr[96];
    snprintf(ptr, sizeof ptr, CONDS "/%zu/observedGeneration", at);
    if (kc_doc_get_int(doc, ptr, &c.observed_generation, NULL))
        c.observed_generation = 0;
    kc__result_copy(ret, ret_size, &c, sizeof c);
    return 0;
}

int kc_doc_condition_remove(kc_doc *doc, const char *type, bool *ret_removed, kc_error *err)
{
    if (ret_removed)
        *ret_removed = false;
    if (!doc || !type)
        return kc_error_set(err, KC_EINVAL, "kc_doc_condition_remove: NULL argument");
    size_t at = 0, n = 0;
    int r = find(doc, type, &at, &n, err);
    if (r == KC_ENOTFOUND)
        return 0;
    if (r)
        return r;
    char ptr[64];
    snprintf(ptr, sizeof ptr, CONDS "/%zu", at);
    r = kc_doc_remove(doc, ptr, err);
    if (!r && ret_removed)
        *ret_removed = true;
    return r;
}

bool kc_doc_condition_is_true(const kc_doc *doc, const char *type)
{
    size_t at = 0, n = 0;
    if (!doc || !type || find(doc, type, &at, &n, NULL))
        return false;
    return strcmp(member(doc, at, "status"), "True") == 0;
}

int kc_obj_condition_status(const kc_obj *obj, const char *type, const char **ret, kc_error *err)
{
    if (!obj || !type || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_obj_condition_status: NULL argument");
    char status[16];
    int r = kc__obj_array_lookup(obj, CONDS, "type", type, "status", status, sizeof status, err);
    if (r == KC_ENOTFOUND)
        return kc_error_set(err, r, "%s/%s: no condition of type %s", kc_obj_namespace(obj),
                            kc_obj_name(obj), type);
    if (r)
        return r;
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(status, STATUSES[i]) == 0) {
            *ret = STATUSES[i];
            return 0;
        }
    }
    return kc_error_set(err, KC_EPARSE, "%s/%s: condition %s has status \"%s\"",
                        kc_obj_namespace(obj), kc_obj_name(obj), type, status);
}

bool kc_obj_condition_is_true(const kc_obj *obj, const char *type)
{
    const char *s = NULL;
    return kc_obj_condition_status(obj, type, &s, NULL) == 0 && strcmp(s, "True") == 0;
}

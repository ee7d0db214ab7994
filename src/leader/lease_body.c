/*
 * lease_body.c — what the lease lock reads from and writes to a Lease: the spec parsed into a
 * kc__lease_record; the JSON of a Create (metadata name, namespace, the lock's annotations) and of
 * an Update — the observed object's metadata text as the server returned it (resourceVersion
 * included: the L4 precondition; labels, owner references, other annotations kept) with the
 * lock's annotations merged into metadata.annotations, and a fresh spec that carries strategy and
 * preferredHolder over (L2).
 *
 * Annotation merge: annotations are a flat object of strings, so a small scanner walks the
 * observed object's entries and copies each one, as raw text, unless the lock sets that key; the
 * lock's entries follow. Keys are compared in their JSON-escaped form (kc_json_format's), which
 * is exact for qualified names (letters, digits, '-', '_', '.', '/'). A non-string value makes the
 * body KC_EPARSE. Also the annotation accessors of lease_lock.h.
 */
#include "leader/lease_body.h"

#include "json/decode_internal.h"
#include "kcache/obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The string at ptr, NULL when absent. One holding a NUL (\u0000) keeps it written as the six
 * characters \u0000: cut at the NUL, "replica-a\u0000x" would read as "replica-a" — another
 * replica's identity, which would then believe it holds the lease (issue 29 point 9); read as
 * absent, the lease would look free. */
static char *get_str(const kc_obj *obj, const char *ptr)
{
    char *s = NULL;
    if (kc__obj_get_cstring(obj, ptr, &s, true, NULL) < 0)
        return NULL;
    return s;
}

static int64_t get_int(const kc_obj *obj, const char *ptr)
{
    int64_t v = 0;
    if (kc_obj_get_int(obj, ptr, &v, NULL) < 0)
        return 0;
    return v;
}

int kc__lease_record_parse(const kc_obj *obj, kc__lease_record *rec, kc_error *err)
{
    memset(rec, 0, sizeof(*rec));
    rec->holder = get_str(obj, "/spec/holderIdentity");
    if (!rec->holder)
        rec->holder = kc__strdup("");
    rec->duration_s = get_int(obj, "/spec/leaseDurationSeconds");
    rec->acquire_time = get_str(obj, "/spec/acquireTime");
    rec->renew_time = get_str(obj, "/spec/renewTime");
    rec->transitions = get_int(obj, "/spec/leaseTransitions");
    rec->strategy = get_str(obj, "/spec/strategy");
    rec->preferred_holder = get_str(obj, "/spec/preferredHolder");
    if (!rec->holder) {
        kc__lease_record_clear(rec);
        return kc_error_set(err, KC_ENOMEM, "lease lock: out of memory");
    }
    return 0;
}

void kc__lease_record_clear(kc__lease_record *rec)
{
    free(rec->holder);
    free(rec->acquire_time);
    free(rec->renew_time);
    free(rec->strategy);
    free(rec->preferred_holder);
    memset(rec, 0, sizeof(*rec));
}

void kc__lease_microtime(char out[40])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    time_t t = ts.tv_sec;
    gmtime_r(&t, &tm);
    char day[24];
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%s.%06ldZ", day, (long)(ts.tv_nsec / 1000));
}

int64_t kc__lease_seconds(uint64_t ns)
{
    uint64_t s = (ns + KC__NS_PER_SEC - 1) / KC__NS_PER_SEC;
    return s ? (int64_t)s : 1;
}

/* ,"key":<quoted value> (or without the comma first), a NULL value left out. */
static int put_str(kc__buf *b, bool comma, const char *key, const char *value)
{
    if (!value)
        return 0;
    char *q = NULL;
    size_t n = 0;
    int rc = kc_json_format(&q, &n, NULL, "%s", value);
    if (rc < 0)
        return rc;
    rc = kc__buf_printf(b, "%s\"%s\":", comma ? "," : "", key);
    if (rc == 0)
        rc = kc__buf_append(b, q, n);
    free(q);
    return rc;
}

static int put_spec(kc__buf *b, const kc__lease_spec *s)
{
    int rc = kc__buf_append_str(b, "\"spec\":{");
    if (rc == 0)
        rc = put_str(b, false, "holderIdentity", s->holder);
    if (rc == 0)
        rc = kc__buf_printf(b, ",\"leaseDurationSeconds\":%lld", (long long)s->duration_s);
    if (rc == 0)
        rc = put_str(b, true, "acquireTime", s->acquire_time);
    if (rc == 0)
        rc = put_str(b, true, "renewTime", s->renew_time);
    if (rc == 0)
        rc = kc__buf_printf(b, ",\"leaseTransitions\":%lld", (long long)s->transitions);
    if (rc == 0)
        rc = put_str(b, true, "strategy", s->strategy);
    if (rc == 0)
        rc = put_str(b, true, "preferredHolder", s->preferred_holder);
    if (rc == 0)
        rc = kc__buf_append_str(b, "}}");
    return rc;
}

/* The lock's own annotations as entries "k":"v",… (no braces). */
static int put_own_annotations(kc__buf *b, const kc__lease_lock *l)
{
    int rc = 0;
    for (size_t i = 0; i < l->n_ann && rc == 0; i++)
        rc = put_str(b, i > 0, l->ann[i].key, l->ann[i].value);
    return rc;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* End of the JSON string starting at p (at its '"'), or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Whether the raw key text (quotes included) is one the lock sets. */
static bool own_key(const kc__lease_lock *l, const char *k, size_t n)
{
    for (size_t i = 0; i < l->n_ann; i++) {
        char *q = NULL;
        size_t qn = 0;
        if (kc_json_format(&q, &qn, NULL, "%s", l->ann[i].key) < 0)
            continue;
        bool same = qn == n && !memcmp(q, k, n);
        free(q);
        if (same)
            return true;
    }
    return false;
}

/* {observed entries the lock does not set, then the lock's}. p..end is the observed object. */
static int merge_annotations(kc__buf *b, const kc__lease_lock *l, const char *p, const char *end)
{
    int rc = kc__buf_append_char(b, '{');
    bool any = false;
    p = skip_ws(p + 1, end);
    while (rc == 0 && p < end && *p != '}') {
        const char *k = p, *ke = skip_string(p, end);
        const char *v = ke ? skip_ws(skip_ws(ke, end) + 1, end) : NULL;
        const char *ve = v ? skip_string(v, end) : NULL;
        if (!ve)
            return KC_EPARSE;
        if (!own_key(l, k, (size_t)(ke - k))) {
            rc = any ? kc__buf_append_char(b, ',') : 0;
            if (rc == 0)
                rc = kc__buf_append(b, k, (size_t)(ve - k));
            any = true;
        }
        p = skip_ws(ve, end);
        if (p < end && *p == ',')
            p = skip_ws(p + 1, end);
    }
    if (rc == 0 && any && l->n_ann)
        rc = kc__buf_append_char(b, ',');
    if (rc == 0)
        rc = put_own_annotations(b, l);
    if (rc == 0)
        rc = kc__buf_append_char(b, '}');
    return rc;
}

int kc__lease_create_body(const kc__lease_lock *l, const kc__lease_spec *s, kc__buf *b,
                          kc_error *err)
{
    int rc = kc__buf_append_str(b, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                                   "\"metadata\":{");
    if (rc == 0)
        rc = put_str(b, false, "name", l->name);
    if (rc == 0)
        rc = put_str(b, true, "namespace", l->ns);
    if (rc == 0 && l->n_ann) {
        rc = kc__buf_append_str(b, ",\"annotations\":{");
        if (rc == 0)
            rc = put_own_annotations(b, l);
        if (rc == 0)
            rc = kc__buf_append_char(b, '}');
    }
    if (rc == 0)
        rc = kc__buf_append_str(b, "},");
    if (rc == 0)
        rc = put_spec(b, s);
    return rc < 0 ? kc_error_set(err, rc, "lease lock: cannot build the Lease body") : 0;
}

/* The observed metadata with the lock's annotations merged in. */
static int put_metadata(kc__buf *b, const kc__lease_lock *l)
{
    const char *meta = NULL, *ann = NULL;
    size_t mn = 0, an = 0;
    if (kc_obj_get_raw(l->obj, "/metadata", &meta, &mn, NULL) < 0 || mn < 2 || meta[0] != '{')
        return KC_EPARSE;
    if (!l->n_ann)
        return kc__buf_append(b, meta, mn);
    if (kc_obj_get_raw(l->obj, "/metadata/annotations", &ann, &an, NULL) == 0 && an &&
        ann[0] == '{' && ann > meta && ann + an <= meta + mn) {
        int rc = kc__buf_append(b, meta, (size_t)(ann - meta));
        if (rc == 0)
            rc = merge_annotations(b, l, ann, ann + an);
        if (rc == 0)
            rc = kc__buf_append(b, ann + an, (size_t)(meta + mn - (ann + an)));
        return rc;
    }
    int rc = kc__buf_append_str(b, "{\"annotations\":{");
    if (rc == 0)
        rc = put_own_annotations(b, l);
    if (rc == 0)
        rc = kc__buf_append_str(b, "},");
    if (rc == 0)
        rc = kc__buf_append(b, meta + 1, mn - 1);
    return rc;
}

int kc__lease_update_body(const kc__lease_lock *l, const kc__lease_spec *s, kc__buf *b,
                          kc_error *err)
{
    int rc = kc__buf_append_str(b, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                                   "\"metadata\":");
    if (rc == 0)
        rc = put_metadata(b, l);
    if (rc == 0)
        rc = kc__buf_append_char(b, ',');
    if (rc == 0)
        rc = put_spec(b, s);
    return rc < 0 ? kc_error_set(err, rc, "lease lock: cannot build the Lease update") : 0;
}

/* ---- annotations ---------------------------------------------------------------------------- */

int kc__lease_lock_set_annotation(kc__lease_lock *l, const char *key, const char *value)
{
    if (!l || !key || !*key || !value)
        return KC_EINVAL;
    size_t i = 0;
    while (i < l->n_ann && strcmp(l->ann[i].key, key) != 0)
        i++;
    if (i == KC__LEASE_ANN_MAX)
        return KC_ETOOLARGE;
    char *v = kc__strdup(value);
    char *k = i < l->n_ann ? l->ann[i].key : kc__strdup(key);
    if (!v || !k) {
        free(v);
        if (i == l->n_ann)
            free(k);
        return KC_ENOMEM;
    }
    if (i < l->n_ann)
        free(l->ann[i].value);
    else
        l->n_ann++;
    l->ann[i].key = k;
    l->ann[i].value = v;
    return 0;
}

int kc__lease_lock_annotation(const kc__lease_lock *l, const char *key, char **ret)
{
    if (!l || !key || !ret)
        return KC_EINVAL;
    if (!l->obj)
        return KC_ENOTFOUND;
    kc__buf p = KC__BUF_INIT(4096);
    int rc = kc__buf_append_str(&p, "/metadata/annotations/");
    for (const char *c = key; rc == 0 && *c; c++)
        rc = *c == '~'   ? kc__buf_append_str(&p, "~0")
             : *c == '/' ? kc__buf_append_str(&p, "~1")
                         : kc__buf_append_char(&p, *c);
    if (rc == 0)
        rc = kc__obj_get_cstring(l->obj, p.data, ret, false, NULL);
    kc__buf_free(&p);
    return rc == KC_EINVAL ? KC_ENOTFOUND : rc;
}

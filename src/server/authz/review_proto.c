/*
 * review_proto.c — the protobuf bodies of the review resources and TokenRequest: kubectl's typed
 * clients (`kubectl auth can-i`, `auth whoami`, `create token`) send them as
 * application/vnd.kubernetes.protobuf, "k8s\0" + runtime.Unknown {1 typeMeta {1 apiVersion,
 * 2 kind}, 2 raw}. raw is decoded by the field tables below (generated.proto of
 * k8s.io/api/authorization/v1, authentication/v1 and rbac/v1: spec fields only — metadata and
 * status are not read from a review; of an RBAC object what escalation prevention reads; an
 * aggregationRule is only noted as present) into the JSON document the review code takes. Wire
 * types: varint (0), length-delimited (2) read; 64-bit (1) and 32-bit (5) skipped; anything else is
 * malformed. Unknown fields are skipped; nesting is at most three messages deep. Thread-safe
 * (pure).
 */
#include "server/authz/authz_internal.h"

#include <string.h>

enum { T_STR = 1, T_STRS, T_INT, T_MSG, T_MSGS };

typedef struct pf {
    unsigned num;
    const char *name;
    int t;
    const struct pf *sub; /* T_MSG: its fields, ended by num 0 */
} pf;

static const pf res_attrs[] = {{1, "namespace", T_STR, NULL}, {2, "verb", T_STR, NULL},
                               {3, "group", T_STR, NULL},     {4, "version", T_STR, NULL},
                               {5, "resource", T_STR, NULL},  {6, "subresource", T_STR, NULL},
                               {7, "name", T_STR, NULL},      {0, NULL, 0, NULL}};
static const pf nonres_attrs[] = {{1, "path", T_STR, NULL}, {2, "verb", T_STR, NULL}, {0, 0, 0, 0}};
static const pf sar_spec[] = {{1, "resourceAttributes", T_MSG, res_attrs},
                              {2, "nonResourceAttributes", T_MSG, nonres_attrs},
                              {3, "user", T_STR, NULL},
                              {4, "groups", T_STRS, NULL},
                              {6, "uid", T_STR, NULL},
                              {0, NULL, 0, NULL}};
static const pf rules_spec[] = {{1, "namespace", T_STR, NULL}, {0, NULL, 0, NULL}};
static const pf token_review_spec[] = {
    {1, "token", T_STR, NULL}, {2, "audiences", T_STRS, NULL}, {0, NULL, 0, NULL}};
static const pf token_request_spec[] = {
    {1, "audiences", T_STRS, NULL}, {2, "expirationSeconds", T_INT, NULL}, {0, NULL, 0, NULL}};
static const pf policy_rule[] = {
    {1, "verbs", T_STRS, NULL},           {3, "apiGroups", T_STRS, NULL},
    {4, "resources", T_STRS, NULL},       {5, "resourceNames", T_STRS, NULL},
    {6, "nonResourceURLs", T_STRS, NULL}, {0, NULL, 0, NULL}};
static const pf role_ref[] = {{1, "apiGroup", T_STR, NULL},
                              {2, "kind", T_STR, NULL},
                              {3, "name", T_STR, NULL},
                              {0, NULL, 0, NULL}};
static const pf subject[] = {{1, "kind", T_STR, NULL},
                             {2, "apiGroup", T_STR, NULL},
                             {3, "name", T_STR, NULL},
                             {4, "namespace", T_STR, NULL},
                             {0, NULL, 0, NULL}};
static const pf meta[] = {{1, "name", T_STR, NULL}, {3, "namespace", T_STR, NULL}, {0, 0, 0, 0}};

#define KIND(spec)                                                                                 \
    {                                                                                              \
        {1, "metadata", T_MSG, meta}, {2, "spec", T_MSG, spec},                                    \
        {                                                                                          \
            0, NULL, 0, NULL                                                                       \
        }                                                                                          \
    }
static const pf sar[] = KIND(sar_spec);
static const pf rules[] = KIND(rules_spec);
static const pf token_review[] = KIND(token_review_spec);
static const pf token_request[] = KIND(token_request_spec);
static const pf ssr[] = {{1, "metadata", T_MSG, meta}, {0, NULL, 0, NULL}};
static const pf role[] = {
    {1, "metadata", T_MSG, meta}, {2, "rules", T_MSGS, policy_rule}, {0, NULL, 0, NULL}};
static const pf cluster_role[] = {{1, "metadata", T_MSG, meta},
                                  {2, "rules", T_MSGS, policy_rule},
                                  {3, "aggregationRule", T_MSG, meta},
                                  {0, NULL, 0, NULL}};
static const pf binding[] = {{1, "metadata", T_MSG, meta},
                             {2, "subjects", T_MSGS, subject},
                             {3, "roleRef", T_MSG, role_ref},
                             {0, NULL, 0, NULL}};
static const pf type_meta[] = {
    {1, "apiVersion", T_STR, NULL}, {2, "kind", T_STR, NULL}, {0, NULL, 0, NULL}};

static const struct {
    const char *kind;
    const pf *fields;
} kinds[] = {{"SubjectAccessReview", sar},     {"LocalSubjectAccessReview", sar},
             {"SelfSubjectAccessReview", sar}, {"SelfSubjectRulesReview", rules},
             {"SelfSubjectReview", ssr},       {"TokenReview", token_review},
             {"TokenRequest", token_request},  {"Role", role},
             {"ClusterRole", cluster_role},    {"RoleBinding", binding},
             {"ClusterRoleBinding", binding}};

typedef struct in {
    const unsigned char *p, *end;
} in;

static bool uvarint(in *r, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; r->p < r->end && shift < 64; shift += 7) {
        unsigned char b = *r->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* Fill obj from the message in [p, end) by fields f. false when malformed. */
static bool read_msg(const unsigned char *p, const unsigned char *end, const pf *f, json_t *obj,
                     int depth)
{
    in r = {p, end};
    while (r.p < r.end) {
        uint64_t key, v;
        if (depth > 3 || !uvarint(&r, &key))
            return false;
        unsigned wt = (unsigned)(key & 7), num = (unsigned)(key >> 3);
        const pf *x = f;
        while (x->num && x->num != num)
            x++;
        if (wt == 0) {
            if (!uvarint(&r, &v))
                return false;
            if (x->num && x->t == T_INT)
                json_object_set_new(obj, x->name, json_integer((json_int_t)v));
        } else if (wt == 2) {
            if (!uvarint(&r, &v) || v > (uint64_t)(r.end - r.p))
                return false;
            const unsigned char *s = r.p;
            r.p += v;
            if (!x->num)
                continue;
            if (x->t == T_MSG || x->t == T_MSGS) {
                json_t *sub = json_object(), *a = json_object_get(obj, x->name);
                if (x->t == T_MSG)
                    json_object_set_new(obj, x->name, sub);
                else if (a || !json_object_set_new(obj, x->name, a = json_array()))
                    json_array_append_new(a, sub);
                if (!read_msg(s, s + v, x->sub, sub, depth + 1))
                    return false;
            } else if (x->t == T_STR) {
                json_object_set_new(obj, x->name, json_stringn((const char *)s, (size_t)v));
            } else if (x->t == T_STRS) {
                json_t *a = json_object_get(obj, x->name);
                if (!a)
                    json_object_set_new(obj, x->name, a = json_array());
                json_array_append_new(a, json_stringn((const char *)s, (size_t)v));
            }
        } else if (wt == 1 || wt == 5) {
            size_t n = wt == 1 ? 8 : 4;
            if ((size_t)(r.end - r.p) < n)
                return false;
            r.p += n;
        } else {
            return false;
        }
    }
    return true;
}

json_t *kc__authz_proto_doc(const char *body, size_t len)
{
    if (len < 4 || memcmp(body, "k8s\0", 4) != 0)
        return NULL;
    in r = {(const unsigned char *)body + 4, (const unsigned char *)body + len};
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    json_t *tm = json_object(), *doc = NULL;
    while (tm && r.p < r.end) { /* runtime.Unknown: 1 typeMeta, 2 raw (bytes, not UTF-8) */
        uint64_t key, v;
        if (!uvarint(&r, &key) || (key & 7) != 2 || !uvarint(&r, &v) || v > (uint64_t)(r.end - r.p))
            goto out;
        if (key >> 3 == 1 && !read_msg(r.p, r.p + v, type_meta, tm, 1))
            goto out;
        if (key >> 3 == 2) {
            raw = r.p;
            raw_len = (size_t)v;
        }
        r.p += v;
    }
    const char *kind = json_string_value(json_object_get(tm, "kind"));
    for (size_t i = 0; kind && raw && i < KC__ARRAY_LEN(kinds); i++) {
        if (strcmp(kinds[i].kind, kind) != 0)
            continue;
        doc = json_object();
        if (doc && !read_msg(raw, raw + raw_len, kinds[i].fields, doc, 0)) {
            json_decref(doc);
            doc = NULL;
        }
        break;
    }
out:
    json_decref(tm);
    return doc;
}

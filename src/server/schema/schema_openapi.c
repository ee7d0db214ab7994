/*
 * schema_openapi.c — OpenAPI definitions of the built-in models (models.c), for the /openapi/v2
 * and /openapi/v3 documents (discovery/openapi.c): one definition per model, keyed
 * "<group>.<version>.<Type>" ("core.v1.Event", "v1.DeploymentSpec": the model's name split, so
 * the last segment is the Go type clients show, e.g. kubectl explain's <DeploymentSpec>), with
 * the field names, types and formats of the data and its required list; no descriptions (the
 * data has none). A field of a model type is a reference (v3: {"allOf":[{"$ref":…}]} as the
 * API server writes it; v2: {"$ref":…}); arrays and maps are "items" and
 * "additionalProperties". Scalars as upstream's definitions: int32/int64 integers, double
 * numbers, date-time strings (Time, MicroTime), byte strings ([]byte), RawExtension/JSON as
 * objects that keep unknown fields; IntOrString and Quantity refer to definitions of their own
 * (upstream's names).
 * Thread-safety: pure functions over const data; the caller owns the document it fills.
 */
#include "server/schema/schema.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void kc__schema_openapi_key(int m, char *out, size_t cap)
{
    const char *n = kc__smodels[m].name;
    char go[200], group[64] = "";
    kc__schema_go_type(m, go, sizeof(go));
    /* a group prefix before "V<digit>" ("CoreV1Event" → "core") */
    if (n[0] != 'V' || !isdigit((unsigned char)n[1])) {
        size_t i = 0;
        while (n[i] && !(n[i] == 'V' && isdigit((unsigned char)n[i + 1])) && i + 1 < sizeof(group))
            group[i] = (char)tolower((unsigned char)n[i]), i++;
        group[i] = 0;
    }
    snprintf(out, cap, "%s%s%s", group, group[0] ? "." : "", go);
}

static json_t *scalar(enum kc__stype t)
{
    switch (t) {
    case KC__ST_BOOL:
        return json_pack("{s:s}", "type", "boolean");
    case KC__ST_INT32:
        return json_pack("{s:s,s:s}", "type", "integer", "format", "int32");
    case KC__ST_INT64:
        return json_pack("{s:s,s:s}", "type", "integer", "format", "int64");
    case KC__ST_NUMBER:
        return json_pack("{s:s,s:s}", "type", "number", "format", "double");
    case KC__ST_ANY:
        return json_pack("{s:s,s:b}", "type", "object", "x-kubernetes-preserve-unknown-fields", 1);
    case KC__ST_TIME:
    case KC__ST_MICROTIME:
        return json_pack("{s:s,s:s}", "type", "string", "format", "date-time");
    case KC__ST_BYTES:
        return json_pack("{s:s,s:s}", "type", "string", "format", "byte");
    default: /* string, quantity */
        return json_pack("{s:s}", "type", "string");
    }
}

/* IntOrString and Quantity are definitions of their own, as upstream's: v3 writes them as a
 * oneOf without a type (so kubectl explain shows <IntOrString>, <Quantity>), v2 as strings. */
static const char *const intstr_key = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
static const char *const quantity_key = "io.k8s.apimachinery.pkg.api.resource.Quantity";

static json_t *ref_to(const char *key, bool v3, bool wrap)
{
    char ref[320];
    snprintf(ref, sizeof(ref), "%s%s", v3 ? "#/components/schemas/" : "#/definitions/", key);
    json_t *r = json_pack("{s:s}", "$ref", ref);
    return v3 && wrap ? json_pack("{s:[o]}", "allOf", r) : r;
}

static int add_special(json_t *schemas, enum kc__stype t, bool v3)
{
    const char *key = t == KC__ST_INTORSTR ? intstr_key : quantity_key;
    if (json_object_get(schemas, key))
        return 0;
    json_t *d;
    if (t == KC__ST_INTORSTR)
        d = v3 ? json_pack("{s:[{s:s},{s:s}],s:s,s:b}", "oneOf", "type", "integer", "type",
                           "string", "format", "int-or-string", "x-kubernetes-int-or-string", 1)
               : json_pack("{s:s,s:s}", "type", "string", "format", "int-or-string");
    else
        d = v3 ? json_pack("{s:[{s:s},{s:s}]}", "oneOf", "type", "string", "type", "number")
               : json_pack("{s:s}", "type", "string");
    return json_object_set_new(schemas, key, d) < 0 ? KC_ENOMEM : 0;
}

/* The schema of one value of field f: a reference or a scalar; wrap: v3's allOf form. */
static json_t *element(const kc__sfield *f, bool v3, bool wrap)
{
    if (f->type == KC__ST_INTORSTR)
        return ref_to(intstr_key, v3, wrap);
    if (f->type == KC__ST_QUANTITY)
        return ref_to(quantity_key, v3, wrap);
    if (f->type != KC__ST_OBJECT || f->ref < 0)
        return scalar((enum kc__stype)f->type);
    char key[256];
    kc__schema_openapi_key(f->ref, key, sizeof(key));
    return ref_to(key, v3, wrap);
}

static json_t *field_schema(const kc__sfield *f, bool v3)
{
    switch (f->shape) {
    case KC__SH_ARRAY:
        return json_pack("{s:s,s:o}", "type", "array", "items", element(f, v3, false));
    case KC__SH_MAP:
        return json_pack("{s:s,s:o}", "type", "object", "additionalProperties",
                         element(f, v3, false));
    case KC__SH_MAP_ARRAY:
        return json_pack("{s:s,s:{s:s,s:o}}", "type", "object", "additionalProperties", "type",
                         "array", "items", element(f, v3, false));
    default:
        return element(f, v3, true);
    }
}

int kc__schema_openapi_add(json_t *schemas, int m, bool v3)
{
    char key[256];
    kc__schema_openapi_key(m, key, sizeof(key));
    if (json_object_get(schemas, key))
        return 0;
    json_t *props = json_object(), *req = json_array();
    json_t *def = json_pack("{s:s,s:o}", "type", "object", "properties", props);
    if (!def || !req || json_object_set_new(schemas, key, def) < 0) {
        json_decref(req);
        return KC_ENOMEM;
    }
    const kc__smodel *md = &kc__smodels[m];
    for (size_t i = 0; i < md->n; i++) {
        const kc__sfield *f = &kc__sfields[md->first + i];
        if (json_object_set_new(props, f->name, field_schema(f, v3)) < 0)
            return KC_ENOMEM;
        if (f->required)
            json_array_append_new(req, json_string(f->name));
    }
    if (json_array_size(req))
        json_object_set_new(def, "required", req);
    else
        json_decref(req);
    for (size_t i = 0; i < md->n; i++) { /* then what it references, depth first */
        const kc__sfield *f = &kc__sfields[md->first + i];
        int rc = 0;
        if (f->type == KC__ST_OBJECT && f->ref >= 0)
            rc = kc__schema_openapi_add(schemas, f->ref, v3);
        else if (f->type == KC__ST_INTORSTR || f->type == KC__ST_QUANTITY)
            rc = add_special(schemas, (enum kc__stype)f->type, v3);
        if (rc)
            return rc;
    }
    return 0;
}

/* Bump when the shape of the definitions written above changes. */
#define OPENAPI_FORMAT "kcache-openapi-2"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t kc__schema_openapi_hash(void)
{
    uint64_t h = fnv(1469598103934665603ull, OPENAPI_FORMAT, sizeof(OPENAPI_FORMAT));
    for (size_t m = 0; m < kc__n_smodels; m++)
        h = fnv(h, kc__smodels[m].name, strlen(kc__smodels[m].name) + 1);
    for (size_t i = 0; i < kc__n_sfields; i++) {
        const kc__sfield *f = &kc__sfields[i];
        unsigned char t[5] = {f->type, f->shape, f->required, (unsigned char)(f->ref & 0xff),
                              (unsigned char)((f->ref >> 8) & 0xff)};
        h = fnv(fnv(h, f->name, strlen(f->name) + 1), t, sizeof(t));
    }
    return h;
}

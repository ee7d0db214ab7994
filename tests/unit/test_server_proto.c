/*
 * test_server_proto.c — the table-driven protobuf codec of the embedded server (api/proto*.c;
 * spec §6.2 "Content negotiation": built-in kinds arrive as protobuf): every served built-in
 * kind (storage/resources.c, each served version) and its list has a message in the generated
 * table; for each, a JSON object with every field of the kind set (nested messages to a bounded
 * depth, generated from the table itself) encodes to protobuf and decodes back to the same JSON;
 * malformed bodies fail with 400 naming the field path and byte offset; Go's JSON forms of the
 * special messages (Time, MicroTime, Duration, Quantity, IntOrString, RawExtension, list
 * wrappers, JSONSchemaPropsOr*). With KC_PROTO_CORPUS_DIR / KC_PROTO_JSON_CORPUS_DIR set it also
 * writes one body / JSON document per kind there (the fuzz corpora tests/fuzz/corpus/proto_body/
 * and proto_encode/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/api/api_internal.h"
#include "server/api/proto_schema.h"
#include "server/http/http.h"
#include "server/storage/storage_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLE_DEPTH 6

static json_t *sample(int mi, int depth, unsigned salt);

/* A non-zero value of a scalar field, keyed by its JSON name (inline members that share a name
 * with their parent get the same value). */
static json_t *sample_scalar(const kc__pbfield *f, unsigned salt)
{
    size_t h = strlen(f->json) * 7 + salt;
    switch (f->kind) {
    case KC__PBK_STRING: {
        char b[96];
        snprintf(b, sizeof(b), "v-%s", f->json);
        return json_string(b);
    }
    case KC__PBK_BYTES:
        return json_string("aGVsbG8="); /* "hello" */
    case KC__PBK_BOOL:
        return json_true();
    case KC__PBK_INT32:
        return json_integer(h % 2 ? -(json_int_t)h : (json_int_t)h + 1); /* sign extension */
    case KC__PBK_DOUBLE:
    case KC__PBK_FLOAT:
        return json_real(1.5);
    default:
        return json_integer((json_int_t)h + 1);
    }
}

static json_t *sample_field(const kc__pbfield *f, int depth, unsigned salt)
{
    if (f->kind == KC__PBK_MAP) {
        const kc__pbfield *vf = &kc__pb_fields[kc__pb_msgs[f->msg].first + 1];
        json_t *v =
            vf->kind == KC__PBK_MSG ? sample(vf->msg, depth + 1, salt) : sample_scalar(vf, salt);
        return v ? json_pack("{so}", "k1", v) : NULL;
    }
    return f->kind == KC__PBK_MSG ? sample(f->msg, depth + 1, salt) : sample_scalar(f, salt);
}

static json_t *sample_special(const kc__pbmsg *m, int depth, unsigned salt)
{
    const kc__pbfield *f1 = &kc__pb_fields[m->first];
    switch (m->special) {
    case KC__PBS_TIME:
        return json_string("2024-01-02T03:04:05Z");
    case KC__PBS_MICROTIME:
        return json_string("2024-01-02T03:04:05.123456Z");
    case KC__PBS_DURATION:
        return json_string(salt % 2 ? "1h2m3.5s" : "150ms");
    case KC__PBS_QUANTITY:
        return json_string(salt % 2 ? "500m" : "1Gi");
    case KC__PBS_INTSTR:
        return salt % 2 ? json_string("http") : json_integer(8080);
    case KC__PBS_RAW:
        return json_pack("{s:i,s:[s]}", "a", 1, "b", "c");
    case KC__PBS_LISTWRAP:
        return json_pack("[ss]", "x", "y");
    case KC__PBS_OR_BOOL:
        return depth >= MAX_SAMPLE_DEPTH || salt % 2 ? json_true()
                                                     : sample(f1[1].msg, depth + 1, salt);
    case KC__PBS_OR_ARRAY:
    case KC__PBS_OR_STRARRAY:
        if (depth >= MAX_SAMPLE_DEPTH || salt % 2)
            return m->special == KC__PBS_OR_STRARRAY
                       ? json_pack("[s]", "p")
                       : json_pack("[o]", sample(f1->msg, MAX_SAMPLE_DEPTH, salt));
        return sample(f1->msg, depth + 1, salt);
    default:
        return NULL;
    }
}

/* The JSON a Go client would send for message mi with every field set (to a depth). */
static json_t *sample(int mi, int depth, unsigned salt)
{
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    if (m->special != KC__PBS_NONE)
        return sample_special(m, depth, salt);
    if (depth >= MAX_SAMPLE_DEPTH) { /* the decode of an empty message: Go's non-omitempty zeros */
        char err[256];
        return kc__pb_decode((const uint8_t *)"", (const uint8_t *)"", 0, mi, "x", err, sizeof(err),
                             0);
    }
    json_t *obj = json_object();
    for (size_t i = 0; i < m->n; i++) {
        const kc__pbfield *f = &kc__pb_fields[m->first + i];
        if (f->flags & KC__PBF_INLINE) {
            json_t *in = sample(f->msg, depth + 1, salt);
            json_object_update_missing(obj, in);
            json_decref(in);
            continue;
        }
        json_t *v = sample_field(f, depth, salt + (unsigned)i);
        if (v && (f->flags & KC__PBF_REP) && f->kind != KC__PBK_MAP)
            v = json_pack("[o]", v);
        if (v && !json_object_get(obj, f->json))
            json_object_set_new(obj, f->json, v);
        else
            json_decref(v);
    }
    return obj;
}

/* One seed file per kind into the directory named by env (the fuzz corpora), when set. */
static void write_corpus(const char *env, const char *ext, const kc__pbtype *t, const char *p,
                         size_t n)
{
    const char *dir = getenv(env);
    if (!dir || strstr(t->kind, "List"))
        return;
    char name[256], path[512];
    snprintf(name, sizeof(name), "%s_%s", t->api_version, t->kind);
    for (char *c = name; *c; c++)
        if (*c == '/' || *c == '.')
            *c = '_';
    snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

/* One kind: sample → JSON text → protobuf envelope → JSON document, equal to the sample. */
static void roundtrip(const kc__pbtype *t, unsigned salt)
{
    json_t *doc = json_pack("{s:s,s:s}", "apiVersion", t->api_version, "kind", t->kind);
    json_t *body = sample(t->msg, 0, salt);
    assert_non_null(body);
    json_object_update(doc, body);
    json_decref(body);
    char *text = json_dumps(doc, JSON_COMPACT);
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__proto_obj(&b, text, strlen(text)), 0);
    if (salt == 0) {
        write_corpus("KC_PROTO_CORPUS_DIR", "pb", t, b.data, b.len);
        write_corpus("KC_PROTO_JSON_CORPUS_DIR", "json", t, text, strlen(text));
    }
    json_t *back = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc__proto_to_json(b.data, b.len, &back, &e);
    if (getenv("KC_PROTO_VERBOSE"))
        fprintf(stderr, "%s %s: %zu bytes\n", t->api_version, t->kind, b.len);
    if (rc || !json_equal(doc, back)) {
        char *s = back ? json_dumps(back, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        char *w = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
        fprintf(stderr, "%s %s: rc %d %s\nwant %.3000s\ngot  %.3000s\n", t->api_version, t->kind,
                rc, e.message ? e.message : "", w, s ? s : "(none)");
        free(s);
        free(w);
    }
    assert_int_equal(rc, 0);
    assert_true(json_equal(doc, back));
    json_decref(back);
    kc_error_clear(&e);
    kc__buf_free(&b);
    free(text);
    json_decref(doc);
}

static void test_server_proto_roundtrip_every_kind(void **state)
{
    (void)state;
    for (size_t i = 0; i < kc__pb_ntypes; i++)
        for (unsigned salt = 0; salt < 2; salt++)
            roundtrip(&kc__pb_types[i], salt);
}

/* Every served built-in resource, in each version it is served in, and its list. */
static void test_server_proto_covers_served_builtins(void **state)
{
    (void)state;
    size_t n, covered = 0;
    const kc__builtin *b = kc__builtins(&n);
    for (size_t i = 0; i < n; i++) {
        char vs[64];
        snprintf(vs, sizeof(vs), "%s", b[i].versions);
        for (char *sp, *v = strtok_r(vs, ",", &sp); v; v = strtok_r(NULL, ",", &sp)) {
            char av[192], lk[160];
            snprintf(av, sizeof(av), "%s%s%s", b[i].group, *b[i].group ? "/" : "", v);
            snprintf(lk, sizeof(lk), "%sList", b[i].kind);
            /* the reviews (create-only, KC__BI_VIRTUAL) have no list, as upstream */
            bool list = !(b[i].flags & KC__BI_VIRTUAL);
            if (kc__pb_lookup(av, b[i].kind) < 0 || (list && kc__pb_lookup(av, lk) < 0))
                fprintf(stderr, "no protobuf message for %s %s\n", av, b[i].kind);
            assert_true(kc__pb_lookup(av, b[i].kind) >= 0);
            assert_true(!list || kc__pb_lookup(av, lk) >= 0);
        }
        covered++;
    }
    assert_int_equal(covered, n);
    fprintf(stderr, "%zu served built-in resources covered\n", n);
    assert_true(n >= 57); /* resources.c: 57 rows at this writing */
}

static json_t *decode_ok(const char *json)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__proto_obj(&b, json, strlen(json)), 0);
    json_t *doc = NULL;
    assert_int_equal(kc__proto_to_json(b.data, b.len, &doc, NULL), 0);
    kc__buf_free(&b);
    return doc;
}

/* omitempty as Go's JSON: zero non-pointer fields gogo writes are left out, pointer zeros and
 * non-omitempty zeros kept; a Role as `kubectl create role` sends it. */
static void test_server_proto_zero_values_and_pointers(void **state)
{
    (void)state;
    json_t *d = decode_ok("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
                          "\"name\":\"d\",\"generation\":0},\"spec\":{\"replicas\":0,"
                          "\"paused\":false,\"minReadySeconds\":0}}");
    json_t *spec = json_object_get(d, "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "replicas")), 0); /* *int32 */
    assert_null(json_object_get(spec, "paused"));                               /* bool,omitempty */
    assert_null(json_object_get(spec, "minReadySeconds"));
    assert_null(json_object_get(json_object_get(d, "metadata"), "generation"));
    json_decref(d);
    d = decode_ok("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\","
                  "\"metadata\":{\"name\":\"rb\"},\"roleRef\":{\"apiGroup\":\"\",\"kind\":"
                  "\"Role\",\"name\":\"r\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"u\"}]}");
    /* RoleRef.apiGroup has no omitempty: "" is kept, as a JSON client sends it */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(d, "roleRef"), "apiGroup")), "");
    json_decref(d);
}

static void test_server_proto_special_forms(void **state)
{
    (void)state;
    json_t *d = decode_ok(
        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
        "\"creationTimestamp\":\"2024-05-06T07:08:09Z\"},\"data\":{\"tls.crt\":\"AAEC/w==\"},"
        "\"type\":\"kubernetes.io/tls\"}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(d, "data"), "tls.crt")),
                        "AAEC/w==");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(d, "metadata"), "creationTimestamp")),
        "2024-05-06T07:08:09Z");
    json_decref(d);
    d = decode_ok("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
                  "\"name\":\"l\"},\"spec\":{\"renewTime\":\"2024-05-06T07:08:09.250000Z\","
                  "\"leaseDurationSeconds\":15}}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(d, "spec"), "renewTime")),
                        "2024-05-06T07:08:09.250000Z");
    json_decref(d);
    /* a timestamp with an offset is stored in UTC, as Go's Time.MarshalJSON writes it */
    d = decode_ok("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                  "\"creationTimestamp\":\"2024-05-06T09:08:09+02:00\"}}");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(d, "metadata"), "creationTimestamp")),
        "2024-05-06T07:08:09Z");
    json_decref(d);
}

static void test_server_proto_errors_name_path_and_offset(void **state)
{
    (void)state;
    kc__buf b = KC__BUF_INIT(0);
    const char *j = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}";
    assert_int_equal(kc__proto_obj(&b, j, strlen(j)), 0);
    /* cut inside spec.containers[0].image: the nested length runs past its parent */
    for (size_t cut = 20; cut < b.len - 9; cut++) {
        json_t *doc = NULL;
        kc_error e = KC_ERROR_INIT;
        int rc = kc__proto_to_json(b.data, cut, &doc, &e);
        if (rc == 0) { /* a cut at a field boundary of the envelope is a shorter valid body */
            json_decref(doc);
            continue;
        }
        assert_int_equal(rc, KC_EBADREQUEST);
        assert_int_equal(e.http_status, 400);
        assert_non_null(strstr(e.message, "at byte "));
        kc_error_clear(&e);
    }
    /* a wrong wire type deep inside: spec.containers[0].name as a varint */
    kc__buf_reset(&b);
    const unsigned char body[] = {'k',  '8',  's',  0,    0x0a, 0x09, 0x0a, 0x02,
                                  'v',  '1',  0x12, 0x03, 'P',  'o',  'd',  0x12,
                                  0x06, 0x12, 0x04, 0x12, 0x02, 0x08, 0x01};
    json_t *doc = NULL;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc__proto_to_json((const char *)body, sizeof body, &doc, &e), KC_EBADREQUEST);
    assert_non_null(strstr(e.message, "Pod.spec.containers.name at byte 21"));
    assert_non_null(strstr(e.message, "wrong wire type"));
    kc_error_clear(&e);
    kc__buf_free(&b);
}

/* Bounded memory: Go's zero values for absent fields (fill-in of non-omitempty members) can't
 * turn a small body into a large document — past input bytes + 4096 JSON values it is a 400.
 * An autoscaling/v2 HPA with N metrics {object: {}}: 4 bytes each on the wire, each decoding to
 * a MetricSpec whose ObjectMetricSource has its describedObject, target and metric zeros. */
static json_t *ts_metrics(json_t *doc)
{
    return json_object_get(json_object_get(doc, "spec"), "metrics");
}

static void test_server_proto_expansion_is_bounded(void **state)
{
    (void)state;
    for (int n = 100; n <= 20000; n *= 200) {
        json_t *metrics = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(metrics, json_pack("{s:{}}", "object"));
        json_t *hpa = json_pack("{s:s,s:s,s:{s:s},s:{s:o}}", "apiVersion", "autoscaling/v2", "kind",
                                "HorizontalPodAutoscaler", "metadata", "name", "h", "spec",
                                "metrics", metrics);
        char *t = json_dumps(hpa, JSON_COMPACT);
        kc__buf b = KC__BUF_INIT(0);
        assert_int_equal(kc__proto_obj(&b, t, strlen(t)), 0);
        json_t *doc = NULL;
        kc_error e = KC_ERROR_INIT;
        int rc = kc__proto_to_json(b.data, b.len, &doc, &e);
        if (n == 100) { /* small: decodes, with Go's zeros filled in */
            assert_int_equal(rc, 0);
            json_t *m0 = json_array_get(ts_metrics(doc), 0);
            assert_string_equal(json_string_value(json_object_get(m0, "type")), "");
            assert_non_null(json_object_get(json_object_get(m0, "object"), "describedObject"));
        } else {
            assert_int_equal(rc, KC_EBADREQUEST);
            assert_non_null(strstr(e.message, "too many JSON values"));
        }
        json_decref(doc);
        kc_error_clear(&e);
        kc__buf_free(&b);
        free(t);
        json_decref(hpa);
    }
}

/* Accept: protobuf for built-in kinds; q-values; JSON alternative; 406 with nothing usable. */
static void test_server_proto_negotiate(void **state)
{
    (void)state;
    enum kc__fmt f;
    assert_int_equal(kc__negotiate("application/vnd.kubernetes.protobuf", &f, NULL), 0);
    assert_int_equal(f, KC__FMT_PROTO);
    assert_int_equal(
        kc__negotiate("application/vnd.kubernetes.protobuf, application/json", &f, NULL), 0);
    assert_int_equal(f, KC__FMT_PROTO_JSON);
    assert_int_equal(
        kc__negotiate("application/vnd.kubernetes.protobuf;q=0.5, application/json", &f, NULL), 0);
    assert_int_equal(f, KC__FMT_JSON);
    assert_int_equal(
        kc__negotiate("application/json;q=0.9,application/vnd.kubernetes.protobuf", &f, NULL), 0);
    assert_int_equal(f, KC__FMT_PROTO_JSON);
    assert_int_equal(
        kc__negotiate("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,"
                      "application/json",
                      &f, NULL),
        0);
    assert_int_equal(f, KC__FMT_JSON);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc__negotiate("application/json;q=0, application/yaml", &f, &e),
                     KC_EMEDIATYPE);
    assert_int_equal(e.http_status, 406);
    kc_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_proto_roundtrip_every_kind),
        cmocka_unit_test(test_server_proto_covers_served_builtins),
        cmocka_unit_test(test_server_proto_zero_values_and_pointers),
        cmocka_unit_test(test_server_proto_special_forms),
        cmocka_unit_test(test_server_proto_errors_name_path_and_offset),
        cmocka_unit_test(test_server_proto_expansion_is_bounded),
        cmocka_unit_test(test_server_proto_negotiate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

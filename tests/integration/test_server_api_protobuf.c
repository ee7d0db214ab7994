/*
 * test_server_api_protobuf.c — the embedded server speaks the Kubernetes protobuf encoding
 * (spec §6.2 "Content negotiation", §5.1 watch framing; #24, #25): protobuf request bodies of
 * kinds kubectl's generators send (Role, RoleBinding, CronJob, Ingress, PodDisruptionBudget,
 * PriorityClass, ResourceQuota) create the same objects as their JSON; GET and LIST with
 * `Accept: application/vnd.kubernetes.protobuf` answer protobuf that decodes to the JSON reply;
 * a watch answers length-prefixed WatchEvent frames; custom resources get JSON when the client
 * also accepts it, else 406.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/api/api_internal.h"
#include "test_server_util.h"

#define PB "application/vnd.kubernetes.protobuf"

static int setup(void **state)
{
    *state = ts_start();
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

/* POST a binary body. */
static long post_bin(kc_server *s, const char *path, const char *ctype, const char *body,
                     size_t len, ts_resp *r)
{
    memset(r, 0, sizeof(*r));
    CURL *c = curl_easy_init();
    char url[1024], h1[256];
    snprintf(url, sizeof(url), "%s%s", kc_server_url(s), path);
    snprintf(h1, sizeof(h1), "Content-Type: %s", ctype);
    struct curl_slist *h = curl_slist_append(NULL, h1);
    h = curl_slist_append(h, "Accept: application/json");
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_body_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (r->body)
        r->json = json_loadb(r->body, r->len, 0, NULL);
    return r->status;
}

/* Create doc from its protobuf body at path and from its JSON at path with name+"-json"; the
 * two stored objects agree on everything but the metadata the server assigns. */
static void create_both(kc_server *s, const char *path, const char *json)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__proto_obj(&b, json, strlen(json)), 0);
    ts_resp pr, jr;
    assert_int_equal(post_bin(s, path, PB, b.data, b.len, &pr), 201);
    json_t *doc = json_loads(json, 0, NULL);
    json_t *md = json_object_get(doc, "metadata");
    char name[256];
    snprintf(name, sizeof(name), "%s-json", json_string_value(json_object_get(md, "name")));
    json_object_set_new(md, "name", json_string(name));
    char *t = json_dumps(doc, JSON_COMPACT);
    assert_int_equal(ts_post(s, path, t, &jr), 201);
    free(t);
    json_decref(doc);
    json_t *a = json_deep_copy(pr.json), *c = json_deep_copy(jr.json);
    const char *strip[] = {"name", "uid", "resourceVersion", "creationTimestamp", "managedFields"};
    for (size_t i = 0; i < sizeof(strip) / sizeof(strip[0]); i++) {
        json_object_del(json_object_get(a, "metadata"), strip[i]);
        json_object_del(json_object_get(c, "metadata"), strip[i]);
    }
    if (!json_equal(a, c)) {
        char *x = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS),
             *y = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
        fprintf(stderr, "protobuf: %s\njson:     %s\n", x, y);
        free(x);
        free(y);
    }
    assert_true(json_equal(a, c));
    json_decref(a);
    json_decref(c);
    ts_resp_free(&pr);
    ts_resp_free(&jr);
    kc__buf_free(&b);
}

static void test_server_api_protobuf_create_generated_kinds(void **state)
{
    kc_server *s = *state;
    create_both(s, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
                "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":"
                "{\"name\":\"r\"},\"rules\":[{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],"
                "\"resources\":[\"pods\"]}]}");
    create_both(s, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\","
                "\"metadata\":{\"name\":\"rb\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization."
                "k8s.io\",\"kind\":\"Role\",\"name\":\"r\"},\"subjects\":[{\"kind\":\"User\","
                "\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"u\"}]}");
    create_both(s, "/apis/batch/v1/namespaces/default/cronjobs",
                "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"cj\"},"
                "\"spec\":{\"schedule\":\"*/1 * * * *\",\"jobTemplate\":{\"metadata\":{\"name\":"
                "\"cj\"},\"spec\":{\"template\":{\"metadata\":{},\"spec\":{\"containers\":[{"
                "\"name\":\"cj\",\"image\":\"busybox\",\"resources\":{}}],\"restartPolicy\":"
                "\"OnFailure\"}}}}},\"status\":{}}");
    create_both(s, "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
                "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"Ingress\",\"metadata\":{"
                "\"name\":\"ing\"},\"spec\":{\"rules\":[{\"host\":\"a.example.com\",\"http\":{"
                "\"paths\":[{\"path\":\"/\",\"pathType\":\"Exact\",\"backend\":{\"service\":{"
                "\"name\":\"svc\",\"port\":{\"number\":80}}}}]}}]},\"status\":{\"loadBalancer\":{}"
                "}}");
    create_both(s, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{"
                "\"name\":\"pdb\"},\"spec\":{\"minAvailable\":\"50%\",\"selector\":{\"matchLabels\""
                ":{\"app\":\"x\"}}},\"status\":{\"disruptionsAllowed\":0,\"currentHealthy\":0,"
                "\"desiredHealthy\":0,\"expectedPods\":0}}");
    create_both(s, "/apis/scheduling.k8s.io/v1/priorityclasses",
                "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":"
                "{\"name\":\"pc\"},\"value\":1000,\"description\":\"d\",\"preemptionPolicy\":"
                "\"Never\"}");
    create_both(s, "/api/v1/namespaces/default/resourcequotas",
                "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},"
                "\"spec\":{\"hard\":{\"cpu\":\"1\",\"pods\":\"10\"},\"scopes\":[\"BestEffort\"]},"
                "\"status\":{}}");
}

/* GET, LIST and WATCH in protobuf decode to what the JSON replies carry. */
static void test_server_api_protobuf_responses(void **state)
{
    kc_server *s = *state;
    ts_resp r, j;
    assert_int_equal(ts_post(s, "/api/v1/namespaces/default/secrets",
                             "{\"metadata\":{\"name\":\"pb\",\"labels\":{\"a\":\"b\"}},\"data\":"
                             "{\"k\":\"AAEC/w==\"},\"type\":\"Opaque\"}",
                             &r),
                     201);
    ts_resp_free(&r);
    ts_req(s, "GET", "/api/v1/namespaces/default/secrets/pb", NULL, NULL, PB, &r);
    ts_req(s, "GET", "/api/v1/namespaces/default/secrets/pb", NULL, NULL, NULL, &j);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, PB);
    json_t *doc = NULL;
    assert_int_equal(kc__proto_to_json(r.body, r.len, &doc, NULL), 0);
    assert_true(json_equal(doc, j.json)); /* managedFields, times, bytes and maps included */
    json_decref(doc);
    ts_resp_free(&r);
    ts_resp_free(&j);

    ts_req(s, "GET", "/api/v1/namespaces/default/secrets", NULL, NULL, PB ", application/json", &r);
    ts_req(s, "GET", "/api/v1/namespaces/default/secrets", NULL, NULL, NULL, &j);
    assert_string_equal(r.ctype, PB);
    assert_int_equal(kc__proto_to_json(r.body, r.len, &doc, NULL), 0);
    assert_string_equal(ts_s(doc, "kind"), "SecretList");
    assert_string_equal(ts_s(doc, "metadata.resourceVersion"),
                        ts_s(j.json, "metadata.resourceVersion"));
    /* items of a protobuf list carry no TypeMeta (upstream the same): the rest is equal */
    size_t i;
    json_t *it;
    json_array_foreach(ts_j(j.json, "items"), i, it)
    {
        json_object_del(it, "apiVersion");
        json_object_del(it, "kind");
    }
    assert_true(json_array_size(ts_j(doc, "items")) >= 1);
    assert_true(json_equal(ts_j(doc, "items"), ts_j(j.json, "items")));
    json_decref(doc);
    ts_resp_free(&r);
    ts_resp_free(&j);

    /* a watch from "0": the ADDED events as 4-byte big-endian length-prefixed WatchEvents */
    ts_req(s, "GET",
           "/api/v1/namespaces/default/secrets?watch=1&resourceVersion=0&timeoutSeconds=1", NULL,
           NULL, PB, &r);
    assert_string_equal(r.ctype, PB ";stream=watch");
    assert_true(r.len > 8);
    size_t len = ((size_t)(uint8_t)r.body[0] << 24) | ((size_t)(uint8_t)r.body[1] << 16) |
                 ((size_t)(uint8_t)r.body[2] << 8) | (uint8_t)r.body[3];
    assert_true(len + 4 <= r.len);
    /* WatchEvent{1 "ADDED", 2 RawExtension{1 raw = k8s\0 Unknown{Secret}}} */
    const char *ev = r.body + 4;
    assert_int_equal(ev[0], 0x0a);
    assert_int_equal(ev[1], 5);
    assert_memory_equal(ev + 2, "ADDED", 5);
    assert_non_null(memmem(ev, len, "k8s\0", 4));
    const char *inner = memmem(ev, len, "k8s\0", 4);
    /* the object runs to the end of the frame */
    assert_int_equal(kc__proto_to_json(inner, (size_t)(ev + len - inner), &doc, NULL), 0);
    assert_string_equal(ts_s(doc, "kind"), "Secret");
    json_decref(doc);
    ts_resp_free(&r);
}

static void test_server_api_protobuf_custom_resources_json_or_406(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    ts_post(s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "{\"metadata\":{\"name\":\"gizmos.ex.io\"},\"spec\":{\"group\":\"ex.io\",\"scope\":"
            "\"Namespaced\",\"names\":{\"plural\":\"gizmos\",\"kind\":\"Gizmo\"},\"versions\":[{"
            "\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{"
            "\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}",
            &r);
    ts_resp_free(&r);
    assert_int_equal(ts_post(s, "/apis/ex.io/v1/namespaces/default/gizmos",
                             "{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Gizmo\",\"metadata\":{"
                             "\"name\":\"g\"}}",
                             &r),
                     201);
    ts_resp_free(&r);
    ts_req(s, "GET", "/apis/ex.io/v1/namespaces/default/gizmos/g", NULL, NULL,
           PB ", application/json", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/json");
    ts_resp_free(&r);
    ts_req(s, "GET", "/apis/ex.io/v1/namespaces/default/gizmos", NULL, NULL, PB, &r);
    assert_int_equal(r.status, 406);
    ts_resp_free(&r);
    /* the CRD itself is a built-in kind: protobuf */
    ts_req(s, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.ex.io", NULL,
           NULL, PB, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, PB);
    json_t *doc = NULL;
    assert_int_equal(kc__proto_to_json(r.body, r.len, &doc, NULL), 0);
    assert_true(json_is_true(ts_j(doc, "spec.versions.0.schema.openAPIV3Schema."
                                       "x-kubernetes-preserve-unknown-fields")));
    json_decref(doc);
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_api_protobuf_create_generated_kinds),
        cmocka_unit_test(test_server_api_protobuf_responses),
        cmocka_unit_test(test_server_api_protobuf_custom_resources_json_or_406),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

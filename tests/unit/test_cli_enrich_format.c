/*
 * test_cli_enrich_format.c — the fields `kcache enrich` emits (tools/kcache/enrich_format.c,
 * enrich_keys.c) for a fake cached Pod and Namespace: spec enrich-semantics.md EF rules and §9
 * checklist items 5–9.
 */
#include "enrich.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char pod_json[] =
    "{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\",\"uid\":\"pod-uid\","
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
    "\"labels\":{\"app.kubernetes.io/name\":\"web\",\"tier\":\"front\"},"
    "\"annotations\":{\"k8s.v1.cni/status\":\"ok\",\"team\":\"a\",\"k8sish\":\"b\"},"
    "\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"web\",\"uid\":\"o\"}]},"
    "\"spec\":{\"nodeName\":\"node-1\"},"
    "\"status\":{\"podIP\":\"10.0.0.5\",\"containerStatuses\":["
    "{\"name\":\"side\",\"image\":\"busybox:1\",\"imageID\":\"docker-pullable://"
    "busybox@sha256:11\","
    "\"containerID\":\"containerd://" ID64 "\"},"
    "{\"name\":\"app\",\"image\":\"nginx:1.27\",\"imageID\":\"docker.io/nginx@sha256:ab\","
    "\"containerID\":\"cri-o://feed\"}],"
    "\"initContainerStatuses\":[{\"name\":\"init\",\"image\":\"i\",\"imageID\":\"x://y\","
    "\"containerID\":\"docker://beef\"}]}}";

static const char ns_json[] = "{\"metadata\":{\"name\":\"shop\",\"uid\":\"ns-uid\","
                              "\"creationTimestamp\":\"2020-05-05T05:05:05Z\","
                              "\"labels\":{\"kubernetes.io/metadata.name\":\"shop\"},"
                              "\"annotations\":{\"k8s.io/owner\":\"ops\",\"note\":\"n\"}}}";

typedef struct fixture {
    kc__enrich_out out;
    kc__enrich_meta meta;
    kc__enrich_key key;
} fixture;

static void out_defaults(kc__enrich_out *o, kc__enrich_fmt fmt)
{
    memset(o, 0, sizeof *o);
    o->fmt = fmt;
    o->labels = o->annotations = o->ns_meta = true;
    o->de_dot = fmt == KC_ENRICH_FMT_MMK;
    strcpy(o->de_dot_sep, "_");
    strcpy(o->de_slash_sep, "_");
    o->master_url = "https://kubernetes.default.svc.cluster.local:443";
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->meta.pod = json_loads(pod_json, 0, NULL);
    f->meta.ns = json_loads(ns_json, 0, NULL);
    assert_non_null(f->meta.pod);
    assert_non_null(f->meta.ns);
    out_defaults(&f->out, KC_ENRICH_FMT_MMK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kc__enrich_meta_clear(&f->meta);
    kc__enrich_filter_free(&f->out.annotation_match);
    kc__enrich_filter_free(&f->out.label_match);
    free(f);
    return 0;
}

static void file_key(fixture *f, const char *container, bool with_id)
{
    char path[512];
    snprintf(path, sizeof path, "/var/log/containers/web-0_shop_%s-%s.log", container,
             with_id ? ID64 : "0000000000000000000000000000000000000000000000000000000000000000");
    assert_int_equal(kc__enrich_parse_filename(f->out.fmt, path, false, &f->key), 0);
}

/* Sorted key list of an object, joined by ','. */
static void keys_of(json_t *o, char *buf, size_t n)
{
    const char *names[64];
    size_t c = 0;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) names[c++] = k;
    for (size_t i = 1; i < c; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    buf[0] = '\0';
    for (size_t i = 0; i < c; i++) {
        strncat(buf, names[i], n - strlen(buf) - 2);
        if (i + 1 < c)
            strcat(buf, ",");
    }
}

static const char *str(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

/* §9.5 (EF7, EF8, EF12): the mmk key set; creation_timestamp from the Namespace. */
static void test_cli_enrich_format_mmk_keys(void **state)
{
    fixture *f = *state;
    file_key(f, "app", true);
    json_t *r = kc__enrich_format(&f->out, &f->key, &f->meta);
    assert_non_null(r);
    char buf[1024];
    keys_of(r, buf, sizeof buf);
    assert_string_equal(buf, "docker,kubernetes");
    json_t *k = json_object_get(r, "kubernetes");
    keys_of(k, buf, sizeof buf);
    /* default: no annotations, no namespace_annotations (EF10), no extras (EF9, EF14) */
    assert_string_equal(buf,
                        "container_name,creation_timestamp,host,labels,master_url,namespace_id,"
                        "namespace_labels,namespace_name,pod_id,pod_name");
    assert_string_equal(str(k, "creation_timestamp", NULL), "2020-05-05T05:05:05Z");
    assert_string_equal(str(k, "namespace_id", NULL), "ns-uid");
    assert_string_equal(str(k, "pod_id", NULL), "pod-uid");
    assert_string_equal(str(k, "host", NULL), "node-1");
    assert_string_equal(str(k, "master_url", NULL),
                        "https://kubernetes.default.svc.cluster.local:443");
    json_t *d = json_object_get(r, "docker");
    assert_int_equal(json_object_size(d), 1);
    assert_string_equal(str(d, "container_id", NULL), ID64);
    json_decref(r);
    /* includeNamespaceMetadata=off: the four namespace keys go (EF9) */
    f->out.ns_meta = false;
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    keys_of(json_object_get(r, "kubernetes"), buf, sizeof buf);
    assert_string_equal(buf,
                        "container_name,host,labels,master_url,namespace_name,pod_id,pod_name");
    json_decref(r);
}

/* §9.6 (EF11): de-dot by default in mmk mode, '/' kept; off leaves keys alone; values kept. */
static void test_cli_enrich_format_de_dot(void **state)
{
    fixture *f = *state;
    file_key(f, "app", true);
    json_t *r = kc__enrich_format(&f->out, &f->key, &f->meta);
    json_t *l = json_object_get(json_object_get(r, "kubernetes"), "labels");
    assert_string_equal(str(l, "app_kubernetes_io/name", NULL), "web");
    assert_null(json_object_get(l, "app.kubernetes.io/name"));
    assert_string_equal(
        str(json_object_get(r, "kubernetes"), "namespace_labels", "kubernetes_io/metadata_name"),
        "shop");
    json_decref(r);
    f->out.de_dot = false;
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    l = json_object_get(json_object_get(r, "kubernetes"), "labels");
    assert_string_equal(str(l, "app.kubernetes.io/name", NULL), "web");
    json_decref(r);
    /* another separator, and the de-slash extra (EF14) */
    f->out.de_dot = f->out.de_slash = true;
    strcpy(f->out.de_dot_sep, "__");
    strcpy(f->out.de_slash_sep, "-");
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    l = json_object_get(json_object_get(r, "kubernetes"), "labels");
    assert_string_equal(str(l, "app__kubernetes__io-name", NULL), "web");
    json_decref(r);
}

/* §9.7 (EF10): no annotations by default; annotation_match keeps matching keys, Pod and
 * Namespace alike, matched before de-dotting; a key matched twice is kept once. */
static void test_cli_enrich_format_annotation_match(void **state)
{
    fixture *f = *state;
    file_key(f, "app", true);
    char msg[256];
    assert_int_equal(kc__enrich_filter_add(&f->out.annotation_match, "^k8s", msg, sizeof msg), 0);
    assert_int_equal(kc__enrich_filter_add(&f->out.annotation_match, "k8s\\.", msg, sizeof msg), 0);
    json_t *r = kc__enrich_format(&f->out, &f->key, &f->meta);
    json_t *k = json_object_get(r, "kubernetes");
    char buf[512];
    keys_of(json_object_get(k, "annotations"), buf, sizeof buf);
    assert_string_equal(buf, "k8s_v1_cni/status,k8sish");
    keys_of(json_object_get(k, "namespace_annotations"), buf, sizeof buf);
    assert_string_equal(buf, "k8s_io/owner");
    json_decref(r);
    /* a pattern that matches nothing: no annotations object at all */
    kc__enrich_filter_free(&f->out.annotation_match);
    assert_int_equal(kc__enrich_filter_add(&f->out.annotation_match, "^zzz$", msg, sizeof msg), 0);
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    assert_null(json_object_get(json_object_get(r, "kubernetes"), "annotations"));
    json_decref(r);
    /* a bad pattern is refused with the reason */
    assert_int_not_equal(kc__enrich_filter_add(&f->out.annotation_match, "(", msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "bad regular expression"));
}

/* AN4/DP4: pod not known → file-derived fields, master_url and docker.container_id (mmk); no
 * kubernetes key in flb mode unless orphans=keep. */
static void test_cli_enrich_format_not_found(void **state)
{
    fixture *f = *state;
    file_key(f, "my-app", true);
    json_t *r = kc__enrich_format(&f->out, &f->key, NULL);
    char buf[512];
    keys_of(json_object_get(r, "kubernetes"), buf, sizeof buf);
    assert_string_equal(buf, "container_name,master_url,namespace_name,pod_name");
    assert_string_equal(str(r, "kubernetes", "container_name"), "my-app");
    assert_string_equal(str(r, "docker", "container_id"), ID64);
    json_decref(r);
    out_defaults(&f->out, KC_ENRICH_FMT_FLB);
    assert_null(kc__enrich_format(&f->out, &f->key, NULL));
    f->out.orphans_keep = true;
    r = kc__enrich_format(&f->out, &f->key, NULL);
    keys_of(json_object_get(r, "kubernetes"), buf, sizeof buf);
    assert_string_equal(buf, "container_name,docker_id,namespace_name,pod_name");
    json_decref(r);
}

static void key_order(json_t *o, char *buf, size_t n)
{
    buf[0] = '\0';
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        strncat(buf, k, n - strlen(buf) - 2);
        strcat(buf, ",");
    }
}

/* §9.8 (EF1, EF2, EF3, EF5, EF6, EF13): flb keys in EF2 order; ownerReferences and
 * kubernetes_namespace only when enabled; no de-dot, annotations kept. */
static void test_cli_enrich_format_flb_order(void **state)
{
    fixture *f = *state;
    out_defaults(&f->out, KC_ENRICH_FMT_FLB);
    file_key(f, "app", true);
    json_t *r = kc__enrich_format(&f->out, &f->key, &f->meta);
    char buf[1024];
    key_order(r, buf, sizeof buf);
    assert_string_equal(buf, "kubernetes,");
    json_t *k = json_object_get(r, "kubernetes");
    key_order(k, buf, sizeof buf);
    assert_string_equal(buf, "pod_name,namespace_name,pod_id,labels,annotations,host,pod_ip,"
                             "container_name,docker_id,container_hash,container_image,");
    assert_string_equal(str(k, "labels", "app.kubernetes.io/name"), "web");
    assert_string_equal(str(k, "annotations", "k8s.v1.cni/status"), "ok");
    assert_string_equal(str(k, "docker_id", NULL), ID64); /* from the file name (EF4) */
    /* the container is matched by the file's id, not by name: "side" has this id */
    assert_string_equal(str(k, "container_image", NULL), "busybox:1");
    assert_string_equal(str(k, "container_hash", NULL), "busybox@sha256:11");
    json_decref(r);
    f->out.owner_refs = f->out.ns_labels = f->out.ns_annotations = true;
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    key_order(r, buf, sizeof buf);
    assert_string_equal(buf, "kubernetes,kubernetes_namespace,");
    key_order(json_object_get(r, "kubernetes"), buf, sizeof buf);
    assert_string_equal(buf, "pod_name,namespace_name,pod_id,labels,annotations,ownerReferences,"
                             "host,pod_ip,container_name,docker_id,container_hash,"
                             "container_image,");
    key_order(json_object_get(r, "kubernetes_namespace"), buf, sizeof buf);
    assert_string_equal(buf, "name,labels,annotations,");
    assert_string_equal(str(r, "kubernetes_namespace", "name"), "shop");
    json_decref(r);
    f->out.labels = f->out.annotations = false;
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    key_order(json_object_get(r, "kubernetes"), buf, sizeof buf);
    assert_null(strstr(buf, "labels"));
    assert_null(strstr(buf, "annotations"));
    json_decref(r);
}

/* §9.9 (EF4, FN6): journald input in flb mode: docker_id, container_hash and container_image
 * from containerStatuses by container name (scheme stripped; imageID without "://" whole). */
static void test_cli_enrich_format_flb_journald(void **state)
{
    fixture *f = *state;
    out_defaults(&f->out, KC_ENRICH_FMT_FLB);
    assert_int_equal(kc__enrich_parse_journald(KC_ENRICH_FMT_FLB, "k8s_app.99_web-0_shop_u_0",
                                               "ignored", &f->key),
                     0);
    json_t *r = kc__enrich_format(&f->out, &f->key, &f->meta);
    json_t *k = json_object_get(r, "kubernetes");
    assert_string_equal(str(k, "docker_id", NULL), "feed");
    assert_string_equal(str(k, "container_hash", NULL), "docker.io/nginx@sha256:ab");
    assert_string_equal(str(k, "container_image", NULL), "nginx:1.27");
    assert_string_equal(str(k, "container_name", NULL), "app");
    json_decref(r);
    /* an init container is found too */
    assert_int_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_FLB, "k8s_init_web-0_shop_u_0", NULL, &f->key), 0);
    r = kc__enrich_format(&f->out, &f->key, &f->meta);
    assert_string_equal(str(r, "kubernetes", "docker_id"), "beef");
    assert_string_equal(str(r, "kubernetes", "container_hash"), "y");
    json_decref(r);
}

/* EF14: mmk extras, off by default, on by switch. */
static void test_cli_enrich_format_mmk_extras(void **state)
{
    fixture *f = *state;
    file_key(f, "app", false);
    f->out.pod_ip = f->out.image = f->out.owner_refs = true;
    json_t *r = kc__enrich_format(&f->out, &f->key, &f->meta);
    json_t *k = json_object_get(r, "kubernetes");
    assert_string_equal(str(k, "pod_ip", NULL), "10.0.0.5");
    assert_string_equal(str(k, "container_image", NULL), "nginx:1.27");
    assert_true(json_is_array(json_object_get(k, "ownerReferences")));
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_mmk_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_de_dot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_annotation_match, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_flb_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_flb_journald, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_enrich_format_mmk_extras, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

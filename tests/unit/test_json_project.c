/*
 * test_json_project — the field projection of kc_decode_opts.keep (src/json/sj_project.cpp):
 * kept paths copied verbatim, everything else dropped, "*" over array elements, managedFields cut
 * inside a kept metadata, extracted metadata intact, the same result from kc_obj_parse, a LIST
 * (with kind/apiVersion injected from the list and a pretty-printed item) and a watch stream, and
 * the Pod projection of the node agents (enrich-semantics CA2, CI1).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const POD_KEEP[] = {"/metadata",
                                       "/spec/nodeName",
                                       "/status/hostIP",
                                       "/status/podIP",
                                       "/status/podIPs",
                                       "/status/containerStatuses/*/name",
                                       "/status/containerStatuses/*/image",
                                       "/status/containerStatuses/*/imageID",
                                       "/status/containerStatuses/*/containerID",
                                       NULL};

static const char POD[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\",\"namespace\":"
    "\"default\",\"uid\":\"u1\",\"labels\":{\"app\":\"web\"},\"managedFields\":[{\"manager\":"
    "\"kubectl\"}],\"annotations\":{\"a\":\"b\"}},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{"
    "\"name\":\"c\",\"image\":\"nginx\",\"env\":[{\"name\":\"X\",\"value\":\"1\"}]}]},\"status\":{"
    "\"phase\":\"Running\",\"hostIP\":\"10.0.0.1\",\"podIP\":\"10.1.0.5\",\"podIPs\":[{\"ip\":"
    "\"10.1.0.5\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
    "\"containerStatuses\":[{\"name\":\"c\",\"ready\":true,\"restartCount\":0,\"image\":"
    "\"nginx:1\",\"imageID\":\"docker-pullable://nginx@sha256:ab\",\"containerID\":"
    "\"containerd://0123\",\"state\":{\"running\":{}}}]}}";

static const char WANT[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\",\"namespace\":"
    "\"default\",\"uid\":\"u1\",\"labels\":{\"app\":\"web\"},\"annotations\":{\"a\":\"b\"}},"
    "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"hostIP\":\"10.0.0.1\",\"podIP\":\"10.1.0.5\","
    "\"podIPs\":[{\"ip\":\"10.1.0.5\"}],\"containerStatuses\":[{\"name\":\"c\",\"image\":"
    "\"nginx:1\",\"imageID\":\"docker-pullable://nginx@sha256:ab\",\"containerID\":"
    "\"containerd://0123\"}]}}";

static kc_obj *parse_keep(const char *json, const char *const *keep, unsigned flags)
{
    kc_decode_opts o = {.flags = flags, .keep = keep};
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    int r = kc_obj_parse(json, strlen(json), &o, &obj, &e);
    if (r)
        fail_msg("kc_obj_parse: %s", e.message);
    return obj;
}

static void test_json_project_pod(void **state)
{
    (void)state;
    kc_obj *o = parse_keep(POD, POD_KEEP, 0);
    assert_string_equal(kc_obj_json(o, NULL), WANT);
    assert_string_equal(kc_obj_name(o), "web-0");
    assert_string_equal(kc_obj_uid(o), "u1");
    assert_string_equal(kc_obj_label(o, "app"), "web");
    kc_obj *full = parse_keep(POD, NULL, 0);
    assert_true(kc_obj_heap_size(o) < kc_obj_heap_size(full)); /* the dropped fields cost nothing */
    kc_obj_unref(full);
    kc_obj_unref(o);
}

static void test_json_project_managed_fields_kept_on_request(void **state)
{
    (void)state;
    kc_obj *o = parse_keep(POD, (const char *const[]){"/metadata/name", NULL},
                           KC_DECODE_KEEP_MANAGED_FIELDS);
    assert_string_equal(
        kc_obj_json(o, NULL),
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\"}}");
    kc_obj_unref(o);
    o = parse_keep(POD, (const char *const[]){"/metadata", NULL}, KC_DECODE_KEEP_MANAGED_FIELDS);
    assert_non_null(strstr(kc_obj_json(o, NULL), "\"managedFields\":[{\"manager\":\"kubectl\"}]"));
    kc_obj_unref(o);
}

/* Nothing kept but kind/apiVersion; containers descended into that keep nothing are dropped. */
static void test_json_project_empty_and_missing(void **state)
{
    (void)state;
    kc_obj *o = parse_keep(POD, (const char *const[]){"/status/nothing/*/x", "/spec/x", NULL}, 0);
    assert_string_equal(kc_obj_json(o, NULL), "{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}");
    assert_string_equal(kc_obj_name(o), "web-0");
    kc_obj_unref(o);
    o = parse_keep("{\"a\":[1,{\"b\":2,\"c\":3},{\"c\":4}],\"d\":[[{\"b\":5}]]}",
                   (const char *const[]){"/a/*/b", "/d/*/*/b", NULL}, 0);
    assert_string_equal(kc_obj_json(o, NULL), "{\"a\":[{\"b\":2}],\"d\":[[{\"b\":5}]]}");
    kc_obj_unref(o);
    /* a pointer naming a whole array keeps it verbatim */
    o = parse_keep("{\"a\":[1, 2],\"z\":{\"y\":null}}", (const char *const[]){"/a", "/z/y", NULL},
                   0);
    assert_string_equal(kc_obj_json(o, NULL), "{\"a\":[1,2],\"z\":{\"y\":null}}");
    kc_obj_unref(o);
}

static int collect(void *ud, kc_obj *item)
{
    kc_obj **slot = ud;
    while (*slot)
        slot++;
    *slot = item;
    return 0;
}

/* LIST items: kind/apiVersion injected from the list, a pretty-printed item minified. */
static void test_json_project_list(void **state)
{
    (void)state;
    const char body[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":["
                        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"d\"},\"spec\":{\"nodeName\":"
                        "\"n1\",\"x\":1}},\n  { \"metadata\" : { \"name\" : \"b\" } ,\n"
                        "  \"spec\" : { \"nodeName\" : \"n 2\" , \"y\" : [ 1 ] } } ]}";
    kc_decode_opts o = {.keep = POD_KEEP};
    kc_obj *items[3] = {0};
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_list_decode(body, strlen(body), &o, NULL, collect, items, &e), 0);
    assert_string_equal(kc_obj_json(items[0], NULL),
                        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\","
                        "\"namespace\":\"d\"},\"spec\":{\"nodeName\":\"n1\"}}");
    assert_string_equal(kc_obj_json(items[1], NULL),
                        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"b\"},"
                        "\"spec\":{\"nodeName\":\"n 2\"}}");
    kc_obj_unref(items[0]);
    kc_obj_unref(items[1]);
}

static int watch_cb(void *ud, const kc_watch_event *ev)
{
    kc_obj **got = ud;
    *got = kc_obj_ref(ev->obj);
    return 0;
}

static void test_json_project_watch(void **state)
{
    (void)state;
    kc_decode_opts o = {.keep = POD_KEEP};
    kc_watch_decoder *d = NULL;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_watch_decoder_new(&o, &d, &e), 0);
    char line[2048];
    snprintf(line, sizeof line, "{\"type\":\"ADDED\",\"object\":%s}\n", POD);
    kc_obj *got = NULL;
    assert_int_equal(kc_watch_decoder_feed(d, line, strlen(line), watch_cb, &got, &e), 0);
    assert_non_null(got);
    assert_string_equal(kc_obj_json(got, NULL), WANT);
    kc_obj_unref(got);
    kc_watch_decoder_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_project_pod),
        cmocka_unit_test(test_json_project_managed_fields_kept_on_request),
        cmocka_unit_test(test_json_project_empty_and_missing),
        cmocka_unit_test(test_json_project_list),
        cmocka_unit_test(test_json_project_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

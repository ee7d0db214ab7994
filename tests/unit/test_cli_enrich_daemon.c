/*
 * test_cli_enrich_daemon.c — the node daemon's socket server and the helpers' client
 * (tools/kcache/enrich_daemon.c, enrich_client.c, enrich_proto.c) with a fake view: many clients
 * share one view (CA8, §9.21 at the protocol level), a pod over 64 KiB crosses whole (AN11,
 * §9.19 at the protocol level), a missing daemon gives a fast failure and a bounded number of
 * connection attempts (CA4, §9.20: never a hot loop), and a restarted daemon is found again.
 */
#include "enrich.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kcache/error.h"

static int generation = 1; /* the fake cache's version: bumped = every answer changed */

static int fake_lookup(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    (void)ud;
    memset(ret, 0, sizeof *ret);
    if (!key->pod || !strcmp(key->pod, "gone"))
        return KC_ENOTFOUND;
    snprintf(ret->version, sizeof ret->version, "%s/%d", key->pod, generation);
    if (key->have_version && !strcmp(key->have_version, ret->version)) {
        ret->same = true;
        return 0;
    }
    json_t *labels = json_object();
    if (!strcmp(key->pod, "big")) { /* ~200 KiB of labels */
        char k[32], v[256];
        memset(v, 'v', sizeof v - 1);
        v[sizeof v - 1] = '\0';
        for (int i = 0; i < 800; i++) {
            snprintf(k, sizeof k, "label-%d", i);
            json_object_set_new(labels, k, json_string(v));
        }
    }
    json_object_set_new(labels, "pod", json_string(key->pod));
    json_object_set_new(labels, "generation", json_integer(generation));
    ret->pod = json_pack("{s:{s:s,s:o}}", "metadata", "name", key->pod, "labels", labels);
    ret->ns = json_pack("{s:{s:s}}", "metadata", "name", key->ns ? key->ns : "");
    ret->deleted = !strcmp(key->pod, "tomb");
    return 0;
}

static char sock_path[108];

static kc__enrich_daemon *start(void)
{
    char msg[256];
    kc__enrich_daemon *d = kc__enrich_daemon_start(sock_path, (kc__enrich_view){.lookup = fake_lookup},
                                                   8, msg, sizeof msg);
    if (!d)
        fail_msg("%s", msg);
    return d;
}

/* Fill *k (its strings point into k->buf, so k must not be copied). */
static void key_of(kc__enrich_key *k, const char *ns, const char *pod)
{
    memset(k, 0, sizeof *k);
    snprintf(k->buf, sizeof k->buf, "%s%c%s", ns, 0, pod);
    k->ns = k->buf;
    k->pod = k->buf + strlen(ns) + 1;
    k->container = "app";
}

static int setup(void **state)
{
    (void)state;
    snprintf(sock_path, sizeof sock_path, "/tmp/kc-enrich-test.%d.sock", (int)getpid());
    return 0;
}

/* A client of the test's daemon (2 s per exchange, backoff 50–400 ms) and its view. */
static kc__enrich_client *client_for(kc__enrich_view *v)
{
    kc__enrich_client *c = kc__enrich_client_new(sock_path, 2000, 50, 400);
    assert_non_null(c);
    *v = kc__enrich_client_view(c);
    return c;
}

static void test_cli_enrich_daemon_roundtrip(void **state)
{
    (void)state;
    kc__enrich_daemon *d = start();
    kc__enrich_view v;
    kc__enrich_client *c = client_for(&v);
    kc__enrich_key k;
    key_of(&k, "shop", "web-0");
    kc__enrich_meta m;
    assert_int_equal(v.lookup(v.ud, &k, &m), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(m.pod, "metadata"), "labels"), "pod")),
                        "web-0");
    assert_false(m.deleted);
    kc__enrich_meta_clear(&m);
    key_of(&k, "shop", "gone");
    assert_int_equal(v.lookup(v.ud, &k, &m), KC_ENOTFOUND);
    assert_null(m.pod);
    key_of(&k, "shop", "tomb");
    assert_int_equal(v.lookup(v.ud, &k, &m), 0);
    assert_true(m.deleted);
    kc__enrich_meta_clear(&m);
    /* §9.19 at the protocol level: a pod over 64 KiB comes across whole */
    key_of(&k, "shop", "big");
    assert_int_equal(v.lookup(v.ud, &k, &m), 0);
    json_t *labels = json_object_get(json_object_get(m.pod, "metadata"), "labels");
    assert_int_equal(json_object_size(labels), 802); /* + pod, generation */
    char *dump = json_dumps(m.pod, JSON_COMPACT);
    assert_true(strlen(dump) > 65536);
    free(dump);
    kc__enrich_meta_clear(&m);
    assert_int_equal(kc__enrich_client_connects(c), 1); /* one connection for all of them */
    assert_int_equal(kc__enrich_daemon_requests(d), 4);
    kc__enrich_client_free(c);
    kc__enrich_daemon_stop(d);
    assert_int_not_equal(access(sock_path, F_OK), 0); /* socket file removed */
}

static void *client_main(void *arg)
{
    int *fails = arg;
    kc__enrich_client *c = kc__enrich_client_new(sock_path, 5000, 50, 400);
    kc__enrich_view v = kc__enrich_client_view(c);
    for (int i = 0; i < 500; i++) {
        char pod[32];
        snprintf(pod, sizeof pod, "p-%d", i);
        kc__enrich_key k;
        key_of(&k, "ns", pod);
        kc__enrich_meta m;
        if (v.lookup(v.ud, &k, &m) ||
            strcmp(json_string_value(json_object_get(json_object_get(m.pod, "metadata"), "name")),
                   pod))
            (*fails)++;
        kc__enrich_meta_clear(&m);
    }
    kc__enrich_client_free(c);
    return NULL;
}

/* CA8/MX3: four helpers at once on one daemon, each answered its own pods. */
static void test_cli_enrich_daemon_concurrent_clients(void **state)
{
    (void)state;
    kc__enrich_daemon *d = start();
    pthread_t th[4];
    int fails[4] = {0};
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, client_main, &fails[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(fails[i], 0);
    }
    assert_int_equal(kc__enrich_daemon_requests(d), 2000);
    kc__enrich_daemon_stop(d);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CA4 and §9.20 at the protocol level: no daemon → every lookup fails at once; connection
 * attempts are spaced by the backoff (not one per record); a daemon that appears is used. */
static void test_cli_enrich_daemon_absent_then_back(void **state)
{
    (void)state;
    unlink(sock_path);
    kc__enrich_client *c = kc__enrich_client_new(sock_path, 2000, 50, 400);
    kc__enrich_view v = kc__enrich_client_view(c);
    kc__enrich_key k;
    key_of(&k, "shop", "web-0");
    kc__enrich_meta m;
    int64_t t0 = mono_ms();
    for (int i = 0; i < 10000; i++)
        assert_int_equal(v.lookup(v.ud, &k, &m), KC_EIO);
    assert_true(mono_ms() - t0 < 2000); /* 10k answers without waiting on anything */
    assert_int_equal(kc__enrich_client_connects(c), 0);
    kc__enrich_daemon *d = start();
    /* within the backoff's maximum (400 ms) the client tries again and gets through */
    int rc = KC_EIO;
    for (int64_t end = mono_ms() + 5000; rc && mono_ms() < end;) {
        rc = v.lookup(v.ud, &k, &m);
        if (rc)
            usleep(10 * 1000);
    }
    assert_int_equal(rc, 0);
    kc__enrich_meta_clear(&m);
    assert_int_equal(kc__enrich_client_connects(c), 1);
    /* the daemon goes away: the next lookup fails fast, the one after it does not reconnect */
    kc__enrich_daemon_stop(d);
    assert_int_not_equal(v.lookup(v.ud, &k, &m), 0);
    assert_int_not_equal(v.lookup(v.ud, &k, &m), 0);
    assert_int_equal(kc__enrich_client_connects(c), 1);
    kc__enrich_client_free(c);
}

static json_int_t gen_of(const kc__enrich_meta *m)
{
    return json_integer_value(json_object_get(
        json_object_get(json_object_get(m->pod, "metadata"), "labels"), "generation"));
}

/* A run of one pod's records: the client asks with the version it holds and the daemon answers
 * "same" (no pod JSON) until the answer changes; a change is seen on the next lookup (CA3). */
static void test_cli_enrich_daemon_same_version(void **state)
{
    (void)state;
    kc__enrich_daemon *d = start();
    kc__enrich_view v;
    kc__enrich_client *c = client_for(&v);
    kc__enrich_key k;
    key_of(&k, "shop", "web-0");
    kc__enrich_meta m;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(v.lookup(v.ud, &k, &m), 0);
        assert_int_equal(gen_of(&m), generation);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(m.pod, "metadata"), "name")),
            "web-0");
        kc__enrich_meta_clear(&m);
    }
    assert_int_equal(kc__enrich_client_reused(c), 9);
    generation++; /* a watch event changed the pod */
    assert_int_equal(v.lookup(v.ud, &k, &m), 0);
    assert_int_equal(gen_of(&m), generation);
    kc__enrich_meta_clear(&m);
    assert_int_equal(kc__enrich_client_reused(c), 9);
    /* another pod has its own slot; a pod gone clears the answer held */
    kc__enrich_key k2;
    key_of(&k2, "shop", "gone");
    assert_int_equal(v.lookup(v.ud, &k2, &m), KC_ENOTFOUND);
    assert_int_equal(v.lookup(v.ud, &k, &m), 0);
    kc__enrich_meta_clear(&m);
    assert_int_equal(kc__enrich_client_reused(c), 10);
    kc__enrich_client_free(c);
    kc__enrich_daemon_stop(d);
}

/* Bad requests get an error reply, not a dead connection; the protocol parsers refuse garbage. */
static void test_cli_enrich_daemon_protocol(void **state)
{
    (void)state;
    kc__enrich_key k;
    assert_int_not_equal(kc__enrich_proto_parse_request("{}", 2, &k), 0);
    assert_int_not_equal(kc__enrich_proto_parse_request("[", 1, &k), 0);
    assert_int_not_equal(kc__enrich_proto_parse_request("{\"ns\":\"a\"}", 10, &k), 0);
    assert_int_equal(kc__enrich_proto_parse_request("{\"uid\":\"u\"}", 11, &k), 0);
    assert_string_equal(k.uid, "u");
    kc__enrich_meta m;
    assert_int_equal(kc__enrich_proto_parse_reply("{\"rc\":-8}", 9, &m), KC_ENOTFOUND);
    assert_int_equal(kc__enrich_proto_parse_reply("{\"rc\":0}", 8, &m), -1); /* no pod */
    assert_int_equal(kc__enrich_proto_parse_reply("{\"rc\":3}", 8, &m), -1);
    assert_int_equal(kc__enrich_proto_parse_reply("nope", 4, &m), -1);
    kc__enrich_key in;
    key_of(&in, "shop", "web-0");
    in.container_id = "abc";
    char *req = kc__enrich_proto_request(&in);
    assert_int_equal(kc__enrich_proto_parse_request(req, strlen(req), &k), 0);
    assert_string_equal(k.ns, "shop");
    assert_string_equal(k.pod, "web-0");
    assert_string_equal(k.container, "app");
    assert_string_equal(k.container_id, "abc");
    free(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_cli_enrich_daemon_roundtrip, setup),
        cmocka_unit_test_setup(test_cli_enrich_daemon_concurrent_clients, setup),
        cmocka_unit_test_setup(test_cli_enrich_daemon_absent_then_back, setup),
        cmocka_unit_test_setup(test_cli_enrich_daemon_same_version, setup),
        cmocka_unit_test(test_cli_enrich_daemon_protocol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

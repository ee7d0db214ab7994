/*
 * test_cli_enrich_record.c — `kcache enrich` record parsing (tools/kcache/enrich_record.c):
 * file names, journald fields and explicit fields, against the spec's FN rules and §9 checklist
 * items 1–4 (enrich-semantics.md).
 */
#include "enrich.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define ID64       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CONTAINERS "/var/log/containers/"

static const kc__enrich_fields default_fields = {.filename = "$!metadata!filename",
                                                 .container_name = "$!CONTAINER_NAME",
                                                 .container_id_full = "$!CONTAINER_ID_FULL"};

static void expect_key(const kc__enrich_key *k, const char *pod, const char *ns, const char *c,
                       const char *id)
{
    assert_string_equal(k->pod, pod);
    assert_string_equal(k->ns, ns);
    assert_string_equal(k->container, c);
    if (id)
        assert_string_equal(k->container_id, id);
    else
        assert_null(k->container_id);
}

/* §9.1 (FN3, FN7): both anchors' defaults split the CRI/docker link name the same way. */
static void test_cli_enrich_record_containers_name(void **state)
{
    (void)state;
    kc__enrich_key k;
    for (int fmt = 0; fmt < 2; fmt++) {
        assert_int_equal(
            kc__enrich_parse_filename(fmt, CONTAINERS "web-0_shop_app-" ID64 ".log", false, &k), 0);
        expect_key(&k, "web-0", "shop", "app", ID64);
        assert_null(k.uid);
    }
}

/* §9.2 (FN3, FN7): a container name with '-' is split at the last '-' before the id. */
static void test_cli_enrich_record_dash_in_container(void **state)
{
    (void)state;
    kc__enrich_key k;
    for (int fmt = 0; fmt < 2; fmt++) {
        assert_int_equal(kc__enrich_parse_filename(
                             fmt, CONTAINERS "web-0_shop_my-app-x-" ID64 ".log", false, &k),
                         0);
        expect_key(&k, "web-0", "shop", "my-app-x", ID64);
    }
}

/* §9.3 (FN4, FN10, FN12): names each anchor rejects are rejected in its mode. */
static void test_cli_enrich_record_rejects(void **state)
{
    (void)state;
    static const char *const both[] = {
        "/var/log/messages",
        "/var/log/containers/",
        "/var/log/pods/shop_web-0_uid/app/0.log", /* not without --pods-dir */
        CONTAINERS "web-0_shop_app" ID64 ".log",  /* no '-' before the id */
        CONTAINERS "web-0_shop_app-" ID64 ".log.1",
        CONTAINERS "web-0_shop_-" ID64 ".log", /* '-' first (FN7); empty container (FN3) */
        CONTAINERS "_shop_app-" ID64 ".log",
        "/tmp/containers/web-0_shop_app-" ID64 ".log",
        "",
    };
    kc__enrich_key k;
    for (size_t i = 0; i < sizeof both / sizeof *both; i++)
        for (int fmt = 0; fmt < 2; fmt++)
            assert_int_not_equal(kc__enrich_parse_filename(fmt, both[i], false, &k), 0);
    assert_int_not_equal(kc__enrich_parse_filename(0, NULL, false, &k), 0);
    /* FN7 does not check the id; FN3 wants 64 of [a-z0-9] */
    assert_int_equal(
        kc__enrich_parse_filename(KC_ENRICH_FMT_MMK, CONTAINERS "a_b_c-xyz.log", false, &k), 0);
    expect_key(&k, "a", "b", "c", "xyz");
    assert_int_not_equal(
        kc__enrich_parse_filename(KC_ENRICH_FMT_FLB, CONTAINERS "a_b_c-xyz.log", false, &k), 0);
    /* FN7: a '-' with nothing after it; FN3 is unanchored at the start, so "Web-0" matches from
     * "eb-0" there, while mmk takes the whole field */
    assert_int_not_equal(
        kc__enrich_parse_filename(KC_ENRICH_FMT_MMK, CONTAINERS "a_b_c-.log", false, &k), 0);
    assert_int_equal(kc__enrich_parse_filename(KC_ENRICH_FMT_FLB,
                                               CONTAINERS "Web-0_shop_app-" ID64 ".log", false, &k),
                     0);
    assert_string_equal(k.pod, "eb-0");
    assert_int_equal(kc__enrich_parse_filename(KC_ENRICH_FMT_MMK,
                                               CONTAINERS "Web-0_shop_app-" ID64 ".log", false, &k),
                     0);
    assert_string_equal(k.pod, "Web-0");
    /* a dot in the container field: FN7's char-to:. stops there, FN3 accepts it */
    assert_int_not_equal(
        kc__enrich_parse_filename(KC_ENRICH_FMT_MMK, CONTAINERS "a_b_c.d-" ID64 ".log", false, &k),
        0);
    assert_int_equal(
        kc__enrich_parse_filename(KC_ENRICH_FMT_FLB, CONTAINERS "a_b_c.d-" ID64 ".log", false, &k),
        0);
    assert_string_equal(k.container, "c.d");
}

/* FN2: /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log, with --pods-dir only. */
static void test_cli_enrich_record_pods_dir(void **state)
{
    (void)state;
    kc__enrich_key k;
    const char *p = "/var/log/pods/shop_web-0_5f2c-11/my-app/3.log";
    assert_int_equal(kc__enrich_parse_filename(KC_ENRICH_FMT_MMK, p, true, &k), 0);
    expect_key(&k, "web-0", "shop", "my-app", NULL);
    assert_string_equal(k.uid, "5f2c-11");
    assert_int_not_equal(kc__enrich_parse_filename(KC_ENRICH_FMT_MMK, p, false, &k), 0);
    assert_int_not_equal(kc__enrich_parse_filename(
                             KC_ENRICH_FMT_FLB, "/var/log/pods/shop_web-0_u/app/x.log", true, &k),
                         0);
}

/* §9.4 (FN8): CONTAINER_NAME with and without the hash; id = CONTAINER_ID_FULL verbatim; both
 * fields must be non-empty in mmk mode. */
static void test_cli_enrich_record_journald_mmk(void **state)
{
    (void)state;
    kc__enrich_key k;
    assert_int_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_MMK, "k8s_app.1a2b_web-0_shop_uid_0", "X", &k), 0);
    expect_key(&k, "web-0", "shop", "app", "X");
    assert_string_equal(k.container_hash, "1a2b");
    assert_int_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_MMK, "k8s_app_web-0_shop_uid_0", "Y", &k), 0);
    expect_key(&k, "web-0", "shop", "app", "Y");
    assert_null(k.container_hash);
    assert_int_not_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_MMK, "k8s_app_web-0_shop_uid_0", "", &k), 0);
    assert_int_not_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_MMK, "k8s_app_web-0_shop_uid_0", NULL, &k), 0);
    assert_int_not_equal(kc__enrich_parse_journald(KC_ENRICH_FMT_MMK, "k8s_app_web-0", "Y", &k), 0);
    assert_int_not_equal(kc__enrich_parse_journald(KC_ENRICH_FMT_MMK, "", "Y", &k), 0);
}

/* FN6: flb's CONTAINER_NAME regex; CONTAINER_ID_FULL is not read (EF4: from the API). */
static void test_cli_enrich_record_journald_flb(void **state)
{
    (void)state;
    kc__enrich_key k;
    assert_int_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_FLB, "k8s_app.1a2b_web-0_shop_uid_0", "X", &k), 0);
    expect_key(&k, "web-0", "shop", "app", NULL);
    assert_string_equal(k.container_hash, "1a2b");
    assert_int_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_FLB, "k8s_app_web-0_shop_uid_0", NULL, &k), 0);
    expect_key(&k, "web-0", "shop", "app", NULL);
    /* one '_' field too many: the regex is anchored at both ends */
    assert_int_not_equal(
        kc__enrich_parse_journald(KC_ENRICH_FMT_FLB, "k8s_app_web-0_shop_uid_0_extra", NULL, &k),
        0);
}

static json_t *rec(const char *json)
{
    json_t *r = json_loads(json, 0, NULL);
    assert_non_null(r);
    return r;
}

/* FN11: the file name from $!metadata!filename, journald from $!CONTAINER_NAME and
 * $!CONTAINER_ID_FULL of the fulljson input; journald first when it matches. */
static void test_cli_enrich_record_fulljson_paths(void **state)
{
    (void)state;
    kc__enrich_key k;
    json_t *r = rec("{\"msg\":\"x\",\"$!\":{\"metadata\":{\"filename\":\"" CONTAINERS
                    "web-0_shop_app-" ID64 ".log\"}}}");
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &default_fields, r, &k), 0);
    expect_key(&k, "web-0", "shop", "app", ID64);
    json_decref(r);
    r = rec("{\"$!\":{\"CONTAINER_NAME\":\"k8s_c_p_n_u_0\",\"CONTAINER_ID_FULL\":\"I\","
            "\"metadata\":{\"filename\":\"" CONTAINERS "web-0_shop_app-" ID64 ".log\"}}}");
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &default_fields, r, &k), 0);
    expect_key(&k, "p", "n", "c", "I");
    json_decref(r);
    /* a top-level "filename" is not the default path */
    r = rec("{\"filename\":\"" CONTAINERS "web-0_shop_app-" ID64 ".log\"}");
    assert_int_not_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &default_fields, r, &k), 0);
    kc__enrich_fields f = default_fields;
    f.filename = "filename";
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &f, r, &k), 0);
    json_decref(r);
    /* not an object, wrong types */
    r = rec("[1,2]");
    assert_int_not_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &default_fields, r, &k), 0);
    json_decref(r);
    r = rec("{\"$!\":{\"metadata\":{\"filename\":7}}}");
    assert_int_not_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &default_fields, r, &k), 0);
    json_decref(r);
    r = rec("{\"$!\":\"metadata\"}");
    assert_int_not_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &default_fields, r, &k), 0);
    json_decref(r);
}

/* Explicit namespace/pod/container fields, configurable, read first. */
static void test_cli_enrich_record_explicit_fields(void **state)
{
    (void)state;
    kc__enrich_fields f = default_fields;
    f.ns = "k8s!ns";
    f.pod = "k8s!pod";
    f.container = "k8s!c";
    kc__enrich_key k;
    json_t *r =
        rec("{\"k8s\":{\"ns\":\"shop\",\"pod\":\"web-1\",\"c\":\"side\"},\"$!\":{\"metadata\""
            ":{\"filename\":\"" CONTAINERS "web-0_shop_app-" ID64 ".log\"}}}");
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_FLB, &f, r, &k), 0);
    expect_key(&k, "web-1", "shop", "side", NULL);
    json_decref(r);
    /* missing explicit fields: falls back to the file name */
    r = rec("{\"k8s\":{\"ns\":\"shop\"},\"$!\":{\"metadata\":{\"filename\":\"" CONTAINERS
            "web-0_shop_app-" ID64 ".log\"}}}");
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_FLB, &f, r, &k), 0);
    expect_key(&k, "web-0", "shop", "app", ID64);
    json_decref(r);
}

/* FN4: Fluent Bit's tag — the prefix skipped by its length without a check, a tag not longer
 * than prefix + 1 left alone, then FN3's regex. */
static void test_cli_enrich_record_flb_tag(void **state)
{
    (void)state;
    kc__enrich_key k;
    assert_int_equal(
        kc__enrich_parse_tag("kube.var.log.containers.web-0_shop_app-" ID64 ".log", NULL, &k), 0);
    expect_key(&k, "web-0", "shop", "app", ID64);
    /* not checked: any 24 characters are skipped */
    assert_int_equal(
        kc__enrich_parse_tag("XXXXXXXXXXXXXXXXXXXXXXXXweb-0_shop_app-" ID64 ".log", NULL, &k), 0);
    assert_int_not_equal(kc__enrich_parse_tag("kube.var.log.containers.a", NULL, &k), 0);
    assert_int_not_equal(kc__enrich_parse_tag("kube.x", NULL, &k), 0);
    assert_int_equal(kc__enrich_parse_tag("k.web-0_shop_app-" ID64 ".log", "k.", &k), 0);
    kc__enrich_fields f = default_fields;
    f.tag = "tag";
    json_t *r = rec("{\"tag\":\"kube.var.log.containers.w_n_c-" ID64 ".log\"}");
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_FLB, &f, r, &k), 0);
    expect_key(&k, "w", "n", "c", ID64);
    json_decref(r);
}

/* §9.23 (FN1, FN2, FN13): a link in the containers directory is read for its /var/log/pods
 * target — the pod UID for a name that parsed, the whole key for a name cut at 255 bytes. */
static void test_cli_enrich_record_links(void **state)
{
    (void)state;
    char dir[] = "/tmp/kc-enrich-links.XXXXXX", link[1024], name[300], dirslash[64];
    assert_non_null(mkdtemp(dir));
    snprintf(dirslash, sizeof dirslash, "%s/", dir);
    kc__enrich_fields f = default_fields;
    f.resolve_link = true;
    f.containers_dir = dirslash;
    kc__enrich_key k;
    /* a whole name: the UID joins the parsed key */
    snprintf(link, sizeof link, "%s/web-0_shop_app-" ID64 ".log", dir);
    assert_int_equal(symlink("/var/log/pods/shop_web-0_uid-1/app/0.log", link), 0);
    char js[1400];
    snprintf(js, sizeof js, "{\"$!\":{\"metadata\":{\"filename\":\"%s\"}}}", link);
    json_t *r = rec(js);
    for (int fmt = 0; fmt < 2; fmt++) {
        assert_int_equal(kc__enrich_record_key(fmt, &f, r, &k), 0);
        expect_key(&k, "web-0", "shop", "app", ID64);
        assert_string_equal(k.uid, "uid-1");
    }
    f.resolve_link = false;
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &f, r, &k), 0);
    assert_null(k.uid);
    f.resolve_link = true;
    json_decref(r);
    unlink(link);
    /* a name cut at 255 bytes (pod name of 240 characters: the id is lost) */
    char pod[241];
    memset(pod, 'p', 240);
    pod[240] = '\0';
    snprintf(name, sizeof name, "%s_shop_app-" ID64, pod);
    name[251] = '\0';
    snprintf(link, sizeof link, "%s/%s.log", dir, name);
    char target[512];
    snprintf(target, sizeof target, "/var/log/pods/shop_%s_uid-2/app/0.log", pod);
    assert_int_equal(symlink(target, link), 0);
    snprintf(js, sizeof js, "{\"$!\":{\"metadata\":{\"filename\":\"%s\"}}}", link);
    r = rec(js);
    for (int fmt = 0; fmt < 2; fmt++) { /* FN7 takes the id's first character as the id; FN3
                                         * rejects the name, and the target gives the key */
        assert_int_equal(kc__enrich_record_key(fmt, &f, r, &k), 0);
        expect_key(&k, pod, "shop", "app", fmt == KC_ENRICH_FMT_MMK ? "0" : NULL);
        assert_string_equal(k.uid, "uid-2");
    }
    json_decref(r);
    unlink(link);
    /* a target naming another pod adds nothing; a target outside /var/log/pods neither */
    snprintf(link, sizeof link, "%s/web-0_shop_app-" ID64 ".log", dir);
    assert_int_equal(symlink("/var/log/pods/shop_other_uid-3/app/0.log", link), 0);
    snprintf(js, sizeof js, "{\"$!\":{\"metadata\":{\"filename\":\"%s\"}}}", link);
    r = rec(js);
    assert_int_equal(kc__enrich_record_key(KC_ENRICH_FMT_MMK, &f, r, &k), 0);
    assert_null(k.uid);
    json_decref(r);
    unlink(link);
    rmdir(dir);
}

/* A name longer than the key's buffer is a non-match, not a truncation. */
static void test_cli_enrich_record_long_name(void **state)
{
    (void)state;
    char path[4096];
    int n = snprintf(path, sizeof path, CONTAINERS);
    memset(path + n, 'a', 2000);
    snprintf(path + n + 2000, sizeof path - (size_t)n - 2000, "_shop_app-" ID64 ".log");
    kc__enrich_key k;
    for (int fmt = 0; fmt < 2; fmt++)
        assert_int_not_equal(kc__enrich_parse_filename(fmt, path, false, &k), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_enrich_record_containers_name),
        cmocka_unit_test(test_cli_enrich_record_dash_in_container),
        cmocka_unit_test(test_cli_enrich_record_rejects),
        cmocka_unit_test(test_cli_enrich_record_pods_dir),
        cmocka_unit_test(test_cli_enrich_record_journald_mmk),
        cmocka_unit_test(test_cli_enrich_record_journald_flb),
        cmocka_unit_test(test_cli_enrich_record_fulljson_paths),
        cmocka_unit_test(test_cli_enrich_record_explicit_fields),
        cmocka_unit_test(test_cli_enrich_record_flb_tag),
        cmocka_unit_test(test_cli_enrich_record_links),
        cmocka_unit_test(test_cli_enrich_record_long_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

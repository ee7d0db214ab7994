/*
 * test_json_finalizer — finalizer helpers (kcache/finalizer.h; Issue 31 point 6): on a kc_doc
 * (has / add / remove with "changed", order kept, names validated, wrong types refused) and
 * kc_obj_has_finalizer on an immutable object (escaped and unescaped names).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/finalizer.h>

#include <stdlib.h>
#include <string.h>

static kc_doc *parse(const char *json)
{
    kc_doc *d = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc_doc_parse(json, strlen(json), &d, &e);
    if (rc)
        fail_msg("parse: %s (%s)", kc_errno_name(rc), e.message);
    return d;
}

static void want_json(const kc_doc *d, const char *ptr, const char *want)
{
    char *s = NULL;
    assert_int_equal(kc_doc_get_raw(d, ptr, &s, NULL, NULL), 0);
    assert_string_equal(s, want);
    free(s);
}

static void test_json_finalizer_add_creates_and_appends_once(void **st)
{
    (void)st;
    kc_doc *d = parse("{\"kind\":\"ConfigMap\"}");
    bool changed = false;
    kc_error e = KC_ERROR_INIT;
    assert_false(kc_doc_finalizer_has(d, "a.io/x"));
    assert_int_equal(kc_doc_finalizer_add(d, "a.io/x", &changed, &e), 0);
    assert_true(changed);
    want_json(d, "/metadata/finalizers", "[\"a.io/x\"]");
    assert_int_equal(kc_doc_finalizer_add(d, "kubernetes", &changed, &e), 0);
    assert_true(changed);
    assert_int_equal(kc_doc_finalizer_add(d, "a.io/x", &changed, &e), 0);
    assert_false(changed); /* already there: no change */
    want_json(d, "/metadata/finalizers", "[\"a.io/x\",\"kubernetes\"]");
    assert_true(kc_doc_finalizer_has(d, "kubernetes"));
    assert_false(kc_doc_finalizer_has(d, "a.io"));
    kc_doc_free(d);
}

static void test_json_finalizer_remove_keeps_others(void **st)
{
    (void)st;
    kc_doc *d = parse("{\"metadata\":{\"finalizers\":[\"a.io/x\",\"b.io/y\",\"a.io/x\",\"c\"]}}");
    bool changed = false;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_doc_finalizer_remove(d, "a.io/x", &changed, &e), 0);
    assert_true(changed);
    want_json(d, "/metadata/finalizers", "[\"b.io/y\",\"c\"]"); /* every copy, order kept */
    assert_int_equal(kc_doc_finalizer_remove(d, "a.io/x", &changed, &e), 0);
    assert_false(changed);
    assert_int_equal(kc_doc_finalizer_remove(d, "b.io/y", NULL, &e), 0);
    assert_int_equal(kc_doc_finalizer_remove(d, "c", &changed, &e), 0);
    want_json(d, "/metadata/finalizers", "[]");
    kc_doc_free(d);
    d = parse("{\"kind\":\"X\"}"); /* no metadata at all: nothing to remove, no change */
    assert_int_equal(kc_doc_finalizer_remove(d, "c", &changed, &e), 0);
    assert_false(changed);
    assert_false(kc_doc_has(d, "/metadata"));
    kc_doc_free(d);
}

static void test_json_finalizer_invalid(void **st)
{
    (void)st;
    kc_doc *d = parse("{\"metadata\":{\"finalizers\":\"oops\"}}");
    kc_error e = KC_ERROR_INIT;
    bool changed = true;
    assert_int_equal(kc_doc_finalizer_add(d, "a.io/x", &changed, &e), KC_EINVAL);
    assert_false(changed);
    assert_non_null(strstr(e.message, "/metadata/finalizers"));
    kc_error_clear(&e);
    assert_false(kc_doc_finalizer_has(d, "a.io/x"));
    kc_doc_free(d);
    d = parse("{}");
    const char *bad[] = {"", "Bad Name", "-x", "a/b/c", "x/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(kc_doc_finalizer_add(d, bad[i], NULL, &e), KC_EINVAL);
        assert_non_null(strstr(e.message, bad[i]));
        kc_error_clear(&e);
        assert_int_equal(kc_doc_finalizer_remove(d, bad[i], NULL, &e), KC_EINVAL);
        kc_error_clear(&e);
    }
    assert_false(kc_doc_has(d, "/metadata")); /* nothing written */
    assert_int_equal(kc_doc_finalizer_add(NULL, "a", NULL, &e), KC_EINVAL);
    kc_error_clear(&e);
    assert_int_equal(kc_doc_finalizer_add(d, NULL, NULL, &e), KC_EINVAL);
    kc_error_clear(&e);
    assert_false(kc_doc_finalizer_has(NULL, "a"));
    kc_doc_free(d);
}

static void test_json_finalizer_obj(void **st)
{
    (void)st;
    const char *j = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
                    "\"finalizers\":[\"kubernetes\",\"a.io\\/esc\",\"b.io/plain\"]}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(j, strlen(j), NULL, &o, NULL), 0);
    assert_true(kc_obj_has_finalizer(o, "kubernetes"));
    assert_true(kc_obj_has_finalizer(o, "a.io/esc")); /* "\/" in the text */
    assert_true(kc_obj_has_finalizer(o, "b.io/plain"));
    assert_false(kc_obj_has_finalizer(o, "b.io"));
    assert_false(kc_obj_has_finalizer(o, "kubernetes2"));
    assert_false(kc_obj_has_finalizer(o, NULL));
    assert_false(kc_obj_has_finalizer(NULL, "kubernetes"));
    kc_obj_unref(o);
    /* A document round trip: add to an object's copy, then check the new object. */
    kc_doc *d = NULL;
    const char *j2 = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"t\"}}";
    assert_int_equal(kc_obj_parse(j2, strlen(j2), NULL, &o, NULL), 0);
    assert_false(kc_obj_has_finalizer(o, "c.io/new"));
    assert_int_equal(kc_doc_from_obj(o, &d, NULL), 0);
    assert_int_equal(kc_doc_finalizer_add(d, "c.io/new", NULL, NULL), 0);
    kc_obj *o2 = NULL;
    assert_int_equal(kc_doc_to_obj(d, &o2, NULL), 0);
    assert_true(kc_obj_has_finalizer(o2, "c.io/new"));
    assert_int_equal(kc_obj_finalizer_count(o2), 1);
    kc_obj_unref(o2);
    kc_obj_unref(o);
    kc_doc_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_finalizer_add_creates_and_appends_once),
        cmocka_unit_test(test_json_finalizer_remove_keeps_others),
        cmocka_unit_test(test_json_finalizer_invalid),
        cmocka_unit_test(test_json_finalizer_obj),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_json_doc_iter — kc_doc iteration (document order, typed access), pointer escaping
 * (kc_json_pointer_escape, tokens longer than the inline buffer) and distinct documents on
 * several threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "doc_fixture.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void test_json_doc_iterate(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"data\":{\"z\":\"1\",\"a\":2,\"m\":[true],\"k/~\":false,\"d\":1.5}}");
    assert_int_equal(kc_doc_set_string(d, "/data/b", "last", NULL), 0);
    static const char *const keys[] = {"z", "a", "m", "k/~", "d", "b"};
    kc_doc_iter *it = NULL;
    assert_int_equal(kc_doc_iter_new(d, "/data", &it, NULL), 0);
    assert_null(kc_doc_iter_key(it, NULL)); /* not positioned yet */
    assert_int_equal(kc_doc_iter_type(it), KC_JSON_NULL);
    size_t i = 0, kn = 0;
    while (kc_doc_iter_next(it) == 1) {
        assert_true(i < 6);
        assert_string_equal(kc_doc_iter_key(it, &kn), keys[i]); /* document order */
        assert_int_equal(kn, strlen(keys[i]));
        i++;
    }
    assert_int_equal(i, 6);
    assert_int_equal(kc_doc_iter_next(it), 0); /* stays at the end */
    assert_null(kc_doc_iter_key(it, NULL));
    kc_doc_iter_free(it);
    /* Typed access on members. */
    assert_int_equal(kc_doc_iter_new(d, "/data", &it, NULL), 0);
    const char *s;
    int64_t iv;
    double dv;
    bool bv;
    char *raw;
    assert_int_equal(kc_doc_iter_string(it, &s, NULL), KC_EINVAL); /* not positioned */
    assert_int_equal(kc_doc_iter_next(it), 1);
    assert_int_equal(kc_doc_iter_string(it, &s, &kn), 0);
    assert_string_equal(s, "1");
    assert_int_equal(kc_doc_iter_int(it, &iv), KC_EINVAL);
    assert_int_equal(kc_doc_iter_next(it), 1);
    assert_int_equal(kc_doc_iter_type(it), KC_JSON_INT);
    assert_int_equal(kc_doc_iter_int(it, &iv), 0);
    assert_int_equal(iv, 2);
    assert_int_equal(kc_doc_iter_double(it, &dv), 0);
    assert_true(dv == 2.0);
    assert_int_equal(kc_doc_iter_next(it), 1);
    assert_int_equal(kc_doc_iter_raw(it, &raw, &kn), 0);
    assert_string_equal(raw, "[true]");
    assert_int_equal(kn, 6);
    free(raw);
    assert_int_equal(kc_doc_iter_bool(it, &bv), KC_EINVAL);
    assert_int_equal(kc_doc_iter_next(it), 1);
    assert_int_equal(kc_doc_iter_bool(it, &bv), 0);
    assert_false(bv);
    kc_doc_iter_free(it);
    /* Arrays: elements in order, no keys. */
    assert_int_equal(kc_doc_iter_new(d, "/data/m", &it, NULL), 0);
    assert_int_equal(kc_doc_iter_next(it), 1);
    assert_null(kc_doc_iter_key(it, &kn));
    assert_int_equal(kc_doc_iter_bool(it, &bv), 0);
    assert_true(bv);
    assert_int_equal(kc_doc_iter_next(it), 0);
    kc_doc_iter_free(it);
    kc_error err = KC_ERROR_INIT;
    want_err(kc_doc_iter_new(d, "/data/a", &it, &err), &err, KC_EINVAL, "integer", "/data/a");
    want_err(kc_doc_iter_new(d, "/nope", &it, &err), &err, KC_ENOTFOUND, "/nope", NULL);
    assert_int_equal(kc_doc_iter_next(NULL), KC_EINVAL);
    assert_int_equal(kc_doc_iter_raw(NULL, &raw, NULL), KC_EINVAL);
    kc_doc_iter_free(NULL);
    kc_doc_free(d);
    kc_error_clear(&err);
}

static void test_json_doc_pointer_escape(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(kc_json_pointer_escape("app.kubernetes.io/name", 22, buf, sizeof buf), 23);
    assert_string_equal(buf, "app.kubernetes.io~1name");
    assert_int_equal(kc_json_pointer_escape("a~b/", 4, buf, sizeof buf), 6);
    assert_string_equal(buf, "a~0b~1");
    assert_int_equal(kc_json_pointer_escape("a~b/", 4, buf, 4), 6); /* cut: the full length */
    assert_string_equal(buf, "a~0");
    assert_int_equal(kc_json_pointer_escape("", 0, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(kc_json_pointer_escape("abc", 3, NULL, 0), 3);
    /* An escaped key round-trips through a setter and a getter. */
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    char ptr[64] = "/labels/";
    kc_json_pointer_escape("x~/y", 4, ptr + 8, sizeof ptr - 8);
    assert_int_equal(kc_doc_set_string(d, ptr, "v", NULL), 0);
    want_json(d, "{\"labels\":{\"x~/y\":\"v\"}}");
    kc_doc_free(d);
}

static void test_json_doc_long_tokens(void **state)
{
    (void)state;
    /* Tokens longer than the cursor's inline buffer (128 bytes) take the heap. */
    char key[301], ptr[700];
    memset(key, 'k', 300);
    key[300] = '\0';
    key[150] = '/';
    strcpy(ptr, "/a/");
    kc_json_pointer_escape(key, strlen(key), ptr + 3, sizeof ptr - 3);
    strcat(ptr, "/");
    strcat(ptr, key + 151);
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    assert_int_equal(kc_doc_set_int(d, ptr, 5, NULL), 0);
    int64_t v = 0;
    assert_int_equal(kc_doc_get_int(d, ptr, &v, NULL), 0);
    assert_int_equal(v, 5);
    kc_doc_iter *it = NULL;
    assert_int_equal(kc_doc_iter_new(d, "/a", &it, NULL), 0);
    assert_int_equal(kc_doc_iter_next(it), 1);
    assert_string_equal(kc_doc_iter_key(it, NULL), key); /* unescaped */
    kc_doc_iter_free(it);
    assert_int_equal(kc_doc_remove(d, ptr, NULL), 0);
    assert_false(kc_doc_has(d, ptr));
    kc_doc_free(d);
}

/* Distinct documents from one shared kc_obj on several threads at once (doc.h: a document belongs
 * to one thread; the object is shared and never changed). */
static void *edit_thread(void *arg)
{
    const kc_obj *o = arg;
    for (int i = 0; i < 200; i++) {
        kc_doc *d = NULL;
        char *s = NULL;
        if (kc_doc_from_obj(o, &d, NULL) != 0 ||
            kc_doc_set_int(d, "/metadata/generation", i, NULL) != 0 ||
            kc_doc_json(d, &s, NULL, NULL) != 0 || !strstr(s, "\"generation\":"))
            return (void *)1;
        free(s);
        kc_doc_free(d);
    }
    return NULL;
}

static void test_json_doc_threads(void **state)
{
    (void)state;
    static const char CM[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                             "\"name\":\"cm\"},\"data\":{\"a\":\"1\",\"b\":[1,2.5,null]}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(CM, sizeof CM - 1, NULL, &o, NULL), 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, edit_thread, o), 0);
    for (int i = 0; i < 4; i++) {
        void *r = (void *)1;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_null(r);
    }
    char *v = NULL;
    assert_int_equal(kc_obj_get_string(o, "/data/a", &v, NULL, NULL), 0); /* unchanged */
    assert_string_equal(v, "1");
    free(v);
    kc_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_doc_iterate),
        cmocka_unit_test(test_json_doc_pointer_escape),
        cmocka_unit_test(test_json_doc_long_tokens),
        cmocka_unit_test(test_json_doc_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

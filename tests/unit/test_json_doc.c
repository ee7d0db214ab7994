/*
 * test_json_doc — kc_doc (kcache/doc.h): construction, output, reading, editing and
 * equality; pointers per RFC 6901 (escapes ~0/~1, "-" past the end). Iteration, pointer escaping
 * and threads are in test_json_doc_iter.c; merge diffs, bounds and base64 in test_json_doc_diff.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "doc_fixture.h"

#include <stdlib.h>
#include <string.h>

static void test_json_doc_new_parse_output(void **state)
{
    (void)state;
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    want_json(d, "{}");
    kc_doc_free(d);
    /* Any value; members keep document order; whitespace dropped. */
    d = parse(" { \"z\" : 1, \"a\" : [true, null, 1.5, \"s\"], \"m\": {} } ");
    want_json(d, "{\"z\":1,\"a\":[true,null,1.5,\"s\"],\"m\":{}}");
    kc_doc_free(d);
    d = parse("\"just a string\"");
    want_json(d, "\"just a string\"");
    kc_doc_free(d);
    d = parse("42");
    want_json(d, "42");
    kc_doc_free(d);
    /* Not NUL-terminated input: only len bytes are read. */
    assert_int_equal(kc_doc_parse("[1,2]garbage", 5, &d, NULL), 0);
    want_json(d, "[1,2]");
    kc_doc_free(d);
    kc_doc_free(NULL);
}

static void test_json_doc_output_format(void **state)
{
    (void)state;
    /* Doubles: the shortest text that reads back exactly, always readable as a double. */
    kc_doc *d = parse("[0.1,1.0,1e300,-0.0,2.5e-8,0.30000000000000004,123456789.125,-7]");
    want_json(d, "[0.1,1.0,1e+300,-0.0,2.5e-08,0.30000000000000004,123456789.125,-7]");
    kc_doc_free(d);
    /* Integers at the edges of int64. */
    d = parse("[9223372036854775807,-9223372036854775808,0]");
    want_json(d, "[9223372036854775807,-9223372036854775808,0]");
    kc_doc_free(d);
    /* Escapes: quotes, backslashes, controls; '/' and UTF-8 as they are. */
    d = parse("{\"k\\\"\":\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f/\u00e9\"}");
    want_json(d, "{\"k\\\"\":\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f/\u00e9\"}");
    kc_doc_free(d);
}

static void test_json_doc_parse_errors(void **state)
{
    (void)state;
    kc_doc *d = NULL;
    kc_error err = KC_ERROR_INIT;
    want_err(kc_doc_parse("{\"a\":\n  1,}", 11, &d, &err), &err, KC_EPARSE, "line 2", "byte");
    want_err(kc_doc_parse("", 0, &d, &err), &err, KC_EPARSE, NULL, NULL);
    want_err(kc_doc_parse("[1]", 3, NULL, &err), &err, KC_EINVAL, NULL, NULL);
    want_err(kc_doc_parse(NULL, 3, &d, &err), &err, KC_EINVAL, NULL, NULL);
    /* NaN and infinities are not JSON. */
    want_err(kc_doc_parse("[NaN]", 5, &d, &err), &err, KC_EPARSE, NULL, NULL);
    want_err(kc_doc_parse("[1e999]", 7, &d, &err), &err, KC_EPARSE, NULL, NULL);
    assert_null(d);
    kc_error_clear(&err);
}

static void test_json_doc_obj_round_trip(void **state)
{
    (void)state;
    static const char POD[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
        "\"cm\",\"namespace\":\"ns\",\"labels\":{\"mirror\":\"true\"}},"
        "\"data\":{\"k\":\"v\"}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(POD, sizeof POD - 1, NULL, &o, NULL), 0);
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_from_obj(o, &d, NULL), 0);
    want_json(d, POD);
    assert_int_equal(kc_doc_set_string(d, "/data/k2", "v2", NULL), 0);
    kc_obj *o2 = NULL;
    assert_int_equal(kc_doc_to_obj(d, &o2, NULL), 0);
    assert_string_equal(kc_obj_name(o2), "cm");
    assert_string_equal(kc_obj_namespace(o2), "ns");
    char *v = NULL;
    assert_int_equal(kc_obj_get_string(o2, "/data/k2", &v, NULL, NULL), 0);
    assert_string_equal(v, "v2");
    free(v);
    /* The original object is never changed. */
    assert_int_equal(kc_obj_get_string(o, "/data/k2", &v, NULL, NULL), KC_ENOTFOUND);
    kc_obj_unref(o2);
    kc_obj_unref(o);
    /* Not an object, or metadata of the wrong type: KC_EPARSE. */
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_set_raw(d, "", "[1]", 3, NULL), 0);
    want_err(kc_doc_to_obj(d, &o2, &err), &err, KC_EPARSE, "array", NULL);
    assert_int_equal(kc_doc_set_raw(d, "", "{\"metadata\":{\"name\":5}}", 23, NULL), 0);
    assert_int_equal(kc_doc_to_obj(d, &o2, &err), KC_EPARSE);
    want_err(kc_doc_from_obj(NULL, &d, &err), &err, KC_EINVAL, NULL, NULL);
    kc_doc_free(d);
    /* An integer beyond int64, which kc_obj stores unread, becomes a double (doc.h). */
    static const char BIG[] = "{\"metadata\":{\"name\":\"b\"},\"n\":[12345678901234567890,"
                              "9223372036854775807,\"\\u0000\",1e2]}";
    assert_int_equal(kc_obj_parse(BIG, sizeof BIG - 1, NULL, &o, NULL), 0);
    assert_int_equal(kc_doc_from_obj(o, &d, NULL), 0);
    kc_obj_unref(o);
    kc_json_type t;
    assert_int_equal(kc_doc_type(d, "/n/0", &t, NULL), 0);
    assert_int_equal(t, KC_JSON_DOUBLE);
    int64_t i = 0;
    assert_int_equal(kc_doc_get_int(d, "/n/1", &i, NULL), 0);
    assert_true(i == INT64_MAX);
    size_t n = 9;
    const char *s = NULL;
    assert_int_equal(kc_doc_get_string(d, "/n/2", &s, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(kc_doc_type(d, "/n/3", &t, NULL), 0);
    assert_int_equal(t, KC_JSON_DOUBLE);
    want_err(kc_doc_to_obj(NULL, &o2, &err), &err, KC_EINVAL, NULL, NULL);
    kc_doc_free(d);
    kc_error_clear(&err);
}

/* kc_doc_copy shares the tree (copy-on-write): a change of either document, at any depth, by
 * every kind of write — set, append, remove, set_doc, root replace — never shows in the other,
 * and documents chained through several copies stay independent. */
static void test_json_doc_copy_on_write(void **state)
{
    (void)state;
    static const char *const TEXT =
        "{\"m\":{\"l\":{\"a\":\"1\"},\"f\":[\"x\"]},\"s\":{\"steps\":[{\"n\":1},{\"n\":2}]}}";
    kc_doc *a = parse(TEXT), *orig = parse(TEXT), *b = NULL, *c = NULL;
    assert_int_equal(kc_doc_copy(a, &b, NULL), 0);
    assert_int_equal(kc_doc_copy(b, &c, NULL), 0);
    assert_int_equal(kc_doc_set_string(b, "/m/l/b", "2", NULL), 0);
    assert_int_equal(kc_doc_set_string(b, "/m/f/-", "y", NULL), 0);
    assert_int_equal(kc_doc_set_int(b, "/s/steps/1/n", 7, NULL), 0);
    assert_true(kc_doc_equal(a, orig));
    assert_true(kc_doc_equal(c, orig));
    assert_int_equal(kc_doc_remove(c, "/s/steps/0", NULL), 0);
    assert_int_equal(kc_doc_remove(c, "/m/l/a", NULL), 0);
    assert_true(kc_doc_equal(a, orig));
    int64_t v = 0;
    assert_int_equal(kc_doc_get_int(b, "/s/steps/0/n", &v, NULL), 0);
    assert_int_equal(v, 1); /* c's remove did not reach b */
    assert_int_equal(kc_doc_get_int(b, "/s/steps/1/n", &v, NULL), 0);
    assert_int_equal(v, 7);
    size_t n = 0;
    assert_int_equal(kc_doc_count(c, "/s/steps", &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(kc_doc_set_doc(a, "/m/copy", b, NULL), 0); /* a holds b's tree now */
    assert_int_equal(kc_doc_set_string(b, "/m/l/b", "3", NULL), 0);
    const char *s = NULL;
    assert_int_equal(kc_doc_get_string(a, "/m/copy/m/l/b", &s, NULL, NULL), 0);
    assert_string_equal(s, "2");
    assert_int_equal(kc_doc_set_raw(c, "", "[1]", 3, NULL), 0); /* root replaced */
    assert_int_equal(kc_doc_get_string(b, "/m/f/1", &s, NULL, NULL), 0);
    assert_string_equal(s, "y");
    kc_doc_free(a); /* the others outlive the one they were copied from */
    assert_int_equal(kc_doc_get_string(b, "/m/l/a", &s, NULL, NULL), 0);
    assert_string_equal(s, "1");
    kc_doc_free(b);
    kc_doc_free(c);
    kc_doc_free(orig);
}

static void test_json_doc_copy_and_equal(void **state)
{
    (void)state;
    kc_doc *a = parse("{\"a\":1,\"b\":{\"x\":[1,2,{\"y\":null}],\"s\":\"t\"},\"f\":2.5}");
    kc_doc *b = parse("{\"f\":2.5,\"b\":{\"s\":\"t\",\"x\":[1.0,2,{\"y\":null}]},\"a\":1.0}");
    assert_true(kc_doc_equal(a, b)); /* reordered members; 1 == 1.0 */
    kc_doc *c = NULL;
    assert_int_equal(kc_doc_copy(a, &c, NULL), 0);
    assert_true(kc_doc_equal(a, c));
    assert_int_equal(kc_doc_set_int(c, "/b/x/1", 3, NULL), 0); /* the copy is independent */
    assert_false(kc_doc_equal(a, c));
    assert_true(kc_doc_equal(a, b));
    kc_doc_free(c);
    c = parse("{\"a\":1.5,\"b\":{},\"f\":2.5}");
    assert_false(kc_doc_equal(a, c));
    kc_doc_free(c);
    c = parse("[2,1]");
    kc_doc *d = parse("[1,2]");
    assert_false(kc_doc_equal(c, d)); /* arrays keep their order */
    assert_false(kc_doc_equal(a, NULL));
    assert_false(kc_doc_equal(NULL, NULL));
    kc_doc_free(c);
    kc_doc_free(d);
    c = parse("{\"a\":1,\"b\":2}");
    d = parse("{\"a\":1,\"c\":2}");
    assert_false(kc_doc_equal(c, d)); /* same size, other member */
    kc_doc_free(c);
    kc_doc_free(d);
    c = parse("[9007199254740993]");
    d = parse("[9007199254740992.0]");
    assert_false(kc_doc_equal(c, d)); /* compared exactly, not through a double */
    kc_doc_free(c);
    kc_doc_free(d);
    kc_doc_free(a);
    kc_doc_free(b);
}

static const char DOC[] =
    "{\"metadata\":{\"name\":\"n\",\"labels\":{\"app.kubernetes.io/name\":"
    "\"web\",\"m~n\":\"tilde\",\"~1\":\"lit\"}},\"spec\":{\"i\":-42,\"f\":1.5,"
    "\"t\":true,\"nul\":null,\"arr\":[10,{\"k\":\"v\"},[1,2]],\"\":\"empty\"}}";

static void test_json_doc_get(void **state)
{
    (void)state;
    kc_doc *d = parse(DOC);
    const char *s = NULL;
    size_t n = 0;
    assert_int_equal(kc_doc_get_string(d, "/metadata/labels/app.kubernetes.io~1name", &s, &n, NULL),
                     0);
    assert_string_equal(s, "web");
    assert_int_equal(n, 3);
    assert_int_equal(kc_doc_get_string(d, "/metadata/labels/m~0n", &s, NULL, NULL), 0);
    assert_string_equal(s, "tilde");
    /* "~01" is "~1" (unescaped once, left to right), not "/". */
    assert_int_equal(kc_doc_get_string(d, "/metadata/labels/~01", &s, NULL, NULL), 0);
    assert_string_equal(s, "lit");
    assert_int_equal(kc_doc_get_string(d, "/spec/", &s, NULL, NULL), 0); /* the "" member */
    assert_string_equal(s, "empty");
    assert_int_equal(kc_doc_get_string(d, "/spec/arr/1/k", &s, NULL, NULL), 0);
    assert_string_equal(s, "v");
    int64_t i = 0;
    assert_int_equal(kc_doc_get_int(d, "/spec/i", &i, NULL), 0);
    assert_int_equal(i, -42);
    assert_int_equal(kc_doc_get_int(d, "/spec/arr/2/1", &i, NULL), 0);
    assert_int_equal(i, 2);
    double f = 0;
    assert_int_equal(kc_doc_get_double(d, "/spec/f", &f, NULL), 0);
    assert_true(f == 1.5);
    assert_int_equal(kc_doc_get_double(d, "/spec/i", &f, NULL), 0); /* an integer is a number */
    assert_true(f == -42.0);
    bool b = false;
    assert_int_equal(kc_doc_get_bool(d, "/spec/t", &b, NULL), 0);
    assert_true(b);
    char *raw = NULL;
    size_t rn = 0;
    assert_int_equal(kc_doc_get_raw(d, "/spec/arr", &raw, &rn, NULL), 0);
    assert_string_equal(raw, "[10,{\"k\":\"v\"},[1,2]]");
    assert_int_equal(rn, strlen(raw));
    free(raw);
    assert_int_equal(kc_doc_get_raw(d, "/spec/nul", &raw, NULL, NULL), 0);
    assert_string_equal(raw, "null");
    free(raw);
    size_t cnt = 0;
    assert_int_equal(kc_doc_count(d, "/spec/arr", &cnt, NULL), 0);
    assert_int_equal(cnt, 3);
    assert_int_equal(kc_doc_count(d, "", &cnt, NULL), 0);
    assert_int_equal(cnt, 2);
    kc_json_type t;
    assert_int_equal(kc_doc_type(d, "/spec/nul", &t, NULL), 0);
    assert_int_equal(t, KC_JSON_NULL);
    assert_int_equal(kc_doc_type(d, "/spec/f", &t, NULL), 0);
    assert_int_equal(t, KC_JSON_DOUBLE);
    assert_int_equal(kc_doc_type(d, "/spec/i", &t, NULL), 0);
    assert_int_equal(t, KC_JSON_INT);
    assert_int_equal(kc_doc_type(d, "", &t, NULL), 0);
    assert_int_equal(t, KC_JSON_OBJECT);
    assert_true(kc_doc_has(d, "/spec/nul"));
    assert_true(kc_doc_has(d, ""));
    assert_false(kc_doc_has(d, "/spec/none"));
    assert_false(kc_doc_has(d, "/spec/arr/3"));
    assert_false(kc_doc_has(d, "spec"));
    assert_false(kc_doc_has(NULL, ""));
    assert_string_equal(kc_json_type_name(KC_JSON_STRING), "string");
    assert_string_equal(kc_json_type_name((kc_json_type)99), "?");
    kc_doc_free(d);
}

static void test_json_doc_get_errors(void **state)
{
    (void)state;
    kc_doc *d = parse(DOC);
    kc_error err = KC_ERROR_INIT;
    const char *s;
    int64_t i;
    size_t n;
    want_err(kc_doc_get_string(d, "/metadata/nope", &s, NULL, &err), &err, KC_ENOTFOUND,
             "\"/metadata/nope\"", "nope");
    want_err(kc_doc_get_int(d, "/spec/arr/3", &i, &err), &err, KC_ENOTFOUND, "/spec/arr/3", NULL);
    want_err(kc_doc_get_int(d, "/spec/arr/-", &i, &err), &err, KC_ENOTFOUND, "/spec/arr/-", NULL);
    /* A type mismatch names the pointer and the type found. */
    want_err(kc_doc_get_int(d, "/metadata/name", &i, &err), &err, KC_EINVAL, "/metadata/name",
             "string");
    want_err(kc_doc_get_string(d, "/spec/i", &s, NULL, &err), &err, KC_EINVAL, "/spec/i",
             "integer");
    want_err(kc_doc_get_string(d, "/metadata/name/x", &s, NULL, &err), &err, KC_EINVAL,
             "/metadata/name/x", "string");
    want_err(kc_doc_get_int(d, "/spec/arr/x", &i, &err), &err, KC_EINVAL, "/spec/arr/x",
             "not an index");
    want_err(kc_doc_get_int(d, "/spec/arr/01", &i, &err), &err, KC_EINVAL, "/spec/arr/01", NULL);
    want_err(kc_doc_count(d, "/spec/t", &n, &err), &err, KC_EINVAL, "boolean", NULL);
    bool b;
    want_err(kc_doc_get_bool(d, "/spec/nul", &b, &err), &err, KC_EINVAL, "null", NULL);
    double f;
    want_err(kc_doc_get_double(d, "/spec/t", &f, &err), &err, KC_EINVAL, "boolean", NULL);
    /* Malformed pointers. */
    want_err(kc_doc_get_string(d, "metadata", &s, NULL, &err), &err, KC_EINVAL, "malformed",
             "\"metadata\"");
    want_err(kc_doc_get_string(d, "/a~2", &s, NULL, &err), &err, KC_EINVAL, "malformed", NULL);
    want_err(kc_doc_get_string(d, "/a~", &s, NULL, &err), &err, KC_EINVAL, "malformed", NULL);
    want_err(kc_doc_get_string(NULL, "", &s, NULL, &err), &err, KC_EINVAL, NULL, NULL);
    want_err(kc_doc_get_string(d, NULL, &s, NULL, &err), &err, KC_EINVAL, NULL, NULL);
    want_err(kc_doc_get_string(d, "", NULL, NULL, &err), &err, KC_EINVAL, NULL, NULL);
    kc_doc_free(d);
    kc_error_clear(&err);
}

static void test_json_doc_set_creates_parents(void **state)
{
    (void)state;
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    assert_int_equal(kc_doc_set_string(d, "/metadata/labels/app.kubernetes.io~1name", "web", NULL),
                     0);
    assert_int_equal(kc_doc_set_string(d, "/metadata/annotations/a~0b", "t", NULL), 0);
    assert_int_equal(kc_doc_set_int(d, "/spec/replicas", 3, NULL), 0);
    assert_int_equal(kc_doc_set_double(d, "/spec/ratio", 0.25, NULL), 0);
    assert_int_equal(kc_doc_set_bool(d, "/spec/paused", true, NULL), 0);
    assert_int_equal(kc_doc_set_null(d, "/spec/x", NULL), 0);
    /* A missing parent followed by "-" is created as an array. */
    assert_int_equal(kc_doc_set_string(d, "/metadata/finalizers/-", "a.io/f", NULL), 0);
    assert_int_equal(kc_doc_set_string(d, "/metadata/finalizers/-", "b.io/f", NULL), 0);
    want_json(d, "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"web\"},\"annotations\":"
                 "{\"a~b\":\"t\"},\"finalizers\":[\"a.io/f\",\"b.io/f\"]},\"spec\":{\"replicas\":3,"
                 "\"ratio\":0.25,\"paused\":true,\"x\":null}}");
    /* Into an object a numeric token is a member name. */
    assert_int_equal(kc_doc_set_int(d, "/spec/0", 0, NULL), 0);
    assert_int_equal(kc_doc_remove(d, "/spec/0", NULL), 0);
    /* Replacing keeps the member's place. */
    assert_int_equal(kc_doc_set_int(d, "/spec/replicas", 5, NULL), 0);
    char *raw = NULL;
    assert_int_equal(kc_doc_get_raw(d, "/spec", &raw, NULL, NULL), 0);
    assert_string_equal(raw, "{\"replicas\":5,\"ratio\":0.25,\"paused\":true,\"x\":null}");
    free(raw);
    kc_doc_free(d);
}

static void test_json_doc_set_arrays(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"a\":[0,1,2]}");
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_set_int(d, "/a/-", 3, NULL), 0); /* "-" appends */
    assert_int_equal(kc_doc_set_int(d, "/a/4", 4, NULL), 0); /* index == length appends */
    assert_int_equal(kc_doc_set_int(d, "/a/0", 9, NULL), 0); /* an existing index replaces */
    want_json(d, "{\"a\":[9,1,2,3,4]}");
    want_err(kc_doc_set_int(d, "/a/6", 6, &err), &err, KC_EINVAL, "/a/6", "past the end");
    want_err(kc_doc_set_int(d, "/a/x", 6, &err), &err, KC_EINVAL, "/a/x", "not an index");
    want_err(kc_doc_set_int(d, "/a/9/b", 6, &err), &err, KC_EINVAL, "/a/9/b", NULL);
    assert_int_equal(kc_doc_set_raw(d, "/a/1", "{}", 2, NULL), 0);
    assert_int_equal(kc_doc_set_int(d, "/a/1/k", 1, NULL), 0); /* through an element */
    /* Removal: later elements move down. */
    assert_int_equal(kc_doc_remove(d, "/a/0", NULL), 0);
    assert_int_equal(kc_doc_remove(d, "/a/2", NULL), 0);
    want_json(d, "{\"a\":[{\"k\":1},2,4]}");
    want_err(kc_doc_remove(d, "/a/3", &err), &err, KC_ENOTFOUND, "/a/3", NULL);
    want_err(kc_doc_remove(d, "/a/-", &err), &err, KC_ENOTFOUND, "/a/-", NULL);
    kc_doc_free(d);
    kc_error_clear(&err);
}

static void test_json_doc_set_type_mismatch(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"s\":\"str\",\"o\":{\"k\":1},\"n\":null}");
    kc_error err = KC_ERROR_INIT;
    /* A member of a string: the message names the pointer, the parent and the type found. */
    want_err(kc_doc_set_int(d, "/s/x", 1, &err), &err, KC_EINVAL, "\"/s/x\"", "string");
    want_err(kc_doc_set_int(d, "/s/x/y", 1, &err), &err, KC_EINVAL, "\"/s\" is a string", NULL);
    want_err(kc_doc_set_int(d, "/n/x", 1, &err), &err, KC_EINVAL, "null", NULL);
    want_err(kc_doc_set_int(d, "/o/k/z", 1, &err), &err, KC_EINVAL, "integer", "/o/k");
    /* Scalar setters need a place inside the document. */
    want_err(kc_doc_set_int(d, "", 1, &err), &err, KC_EINVAL, "whole document", NULL);
    want_err(kc_doc_set_string(d, "x", "v", &err), &err, KC_EINVAL, "malformed", NULL);
    want_err(kc_doc_set_double(d, "/d", 0.0 / 0.0, &err), &err, KC_EINVAL, "/d", NULL);
    want_err(kc_doc_set_double(d, "/d", 1.0 / 0.0, &err), &err, KC_EINVAL, NULL, NULL);
    want_err(kc_doc_set_stringn(d, "/u", "\xff\xfe", 2, &err), &err, KC_EINVAL, "UTF-8", NULL);
    want_err(kc_doc_set_string(d, "/u", NULL, &err), &err, KC_EINVAL, NULL, NULL);
    /* Member names created from the pointer must be UTF-8 too (found by fuzz_doc). */
    want_err(kc_doc_set_int(d, "/a\xff/b", 1, &err), &err, KC_EINVAL, "UTF-8", "byte 2");
    want_err(kc_doc_set_int(d, "/o/\xc3", 1, &err), &err, KC_EINVAL, "UTF-8", NULL);
    want_err(kc_doc_set_int(NULL, "/u", 1, &err), &err, KC_EINVAL, NULL, NULL);
    want_err(kc_doc_set_int(d, NULL, 1, &err), &err, KC_EINVAL, NULL, NULL);
    want_err(kc_doc_set_raw(d, "/r", "{x}", 3, &err), &err, KC_EPARSE, NULL, NULL);
    want_err(kc_doc_remove(d, "", &err), &err, KC_EINVAL, "whole document", NULL);
    want_err(kc_doc_remove(d, "/o/none", &err), &err, KC_ENOTFOUND, "/o/none", NULL);
    want_err(kc_doc_remove(d, "/s/x", &err), &err, KC_EINVAL, "string", NULL);
    /* Nothing changed on the way. */
    want_json(d, "{\"s\":\"str\",\"o\":{\"k\":1},\"n\":null}");
    kc_doc_free(d);
    kc_error_clear(&err);
}

static void test_json_doc_set_root_raw_doc(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"a\":1}");
    assert_int_equal(kc_doc_set_raw(d, "", "[1,{\"b\":2}]", 11, NULL), 0); /* "" replaces it */
    want_json(d, "[1,{\"b\":2}]");
    kc_doc *src = parse("{\"x\":[true]}");
    assert_int_equal(kc_doc_set_doc(d, "/1/c", src, NULL), 0);
    assert_int_equal(kc_doc_set_doc(d, "/-", d, NULL), 0); /* itself, copied first */
    want_json(d, "[1,{\"b\":2,\"c\":{\"x\":[true]}},[1,{\"b\":2,\"c\":{\"x\":[true]}}]]");
    assert_int_equal(kc_doc_set_doc(d, "", src, NULL), 0);
    want_json(d, "{\"x\":[true]}");
    assert_int_equal(kc_doc_set_int(src, "/x/0", 1, NULL), 0); /* d holds a copy */
    want_json(d, "{\"x\":[true]}");
    assert_int_equal(kc_doc_remove(d, "/x", NULL), 0);
    want_json(d, "{}");
    kc_doc_free(src);
    kc_doc_free(d);
}

static void test_json_doc_nul_bytes(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"s\":\"a\\u0000b\"}");
    const char *s = NULL;
    size_t n = 0;
    assert_int_equal(kc_doc_get_string(d, "/s", &s, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(s, "a\0b", 3);
    assert_int_equal(kc_doc_set_stringn(d, "/t", "x\0y\0", 4, NULL), 0);
    want_json(d, "{\"s\":\"a\\u0000b\",\"t\":\"x\\u0000y\\u0000\"}");
    assert_int_equal(kc_doc_get_string(d, "/t", &s, &n, NULL), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(s, "x\0y\0", 5); /* NUL-terminated after its length too */
    kc_doc_free(d);
}

static void test_json_doc_borrowed_string(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"a\":\"first\",\"b\":\"second\"}");
    const char *a = NULL, *a2 = NULL;
    assert_int_equal(kc_doc_get_string(d, "/a", &a, NULL, NULL), 0);
    assert_int_equal(kc_doc_get_string(d, "/a", &a2, NULL, NULL), 0);
    assert_ptr_equal(a, a2); /* borrowed from the document, not a copy */
    assert_int_equal(kc_doc_set_string(d, "/b", "changed", NULL), 0);
    const char *b = NULL;
    assert_int_equal(kc_doc_get_string(d, "/b", &b, NULL, NULL), 0);
    assert_string_equal(b, "changed");
    kc_doc_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_doc_new_parse_output),
        cmocka_unit_test(test_json_doc_output_format),
        cmocka_unit_test(test_json_doc_parse_errors),
        cmocka_unit_test(test_json_doc_obj_round_trip),
        cmocka_unit_test(test_json_doc_copy_and_equal),
        cmocka_unit_test(test_json_doc_get),
        cmocka_unit_test(test_json_doc_get_errors),
        cmocka_unit_test(test_json_doc_set_creates_parents),
        cmocka_unit_test(test_json_doc_set_arrays),
        cmocka_unit_test(test_json_doc_set_type_mismatch),
        cmocka_unit_test(test_json_doc_set_root_raw_doc),
        cmocka_unit_test(test_json_doc_nul_bytes),
        cmocka_unit_test(test_json_doc_copy_on_write),
        cmocka_unit_test(test_json_doc_borrowed_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

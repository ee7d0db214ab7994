/*
 * test_json_selector_field.c — field selector grammar (fields.ParseSelector), escaping, matching
 * on objects, exact-match introspection, canonical form.
 * Spec checklist #63: fieldSelector metadata.name and metadata.namespace work; an unsupported
 * field returns 400 (the server checks kc_field_selector_field(); covered here: the parser
 * exposes every field path so the server can reject it).
 */
#include "kcache/selector.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char POD[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
    "\"shop\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"nodeName\":\"node-a\",\"hostNetwork\":"
    "true,\"priority\":5,\"restartPolicy\":\"Always\",\"schedulerName\":\"we\\\"ird\\\\n\","
    "\"tolerations\":[{\"key\":\"k\"}],\"nothing\":null},\"status\":{\"phase\":\"Running\"}}";

struct fixture {
    kc_obj *pod;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(POD, strlen(POD), NULL, &f->pod, &err) != 0) {
        fprintf(stderr, "kc_obj_parse: %s\n", err.message);
        kc_error_clear(&err);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    kc_obj_unref(f->pod);
    free(f);
    return 0;
}

/* kc_field_lookup_fn over a kc_obj: resolves the pointer the selector computed for requirement i
 * (kc_field_selector_pointer: RFC 6901, the dotted path's form) and records what it got; counts
 * its calls. */
typedef struct sel_obj {
    const kc_field_selector *sel;
    const kc_obj *o;
} sel_obj;
static int lookups;
static const char *last_field, *last_pointer;
static bool obj_lookup(void *ud, const char *field, size_t i, const char **raw, size_t *len)
{
    const sel_obj *so = ud;
    const char *pointer = kc_field_selector_pointer(so->sel, i);
    lookups++;
    last_field = field;
    last_pointer = pointer;
    return pointer && kc_obj_get_raw(so->o, pointer, raw, len, NULL) == 0;
}

static bool match_fn(const kc_field_selector *sel, const kc_obj *o)
{
    sel_obj so = {sel, o};
    return kc_field_selector_match_fn(sel, obj_lookup, &so);
}

/* kc_field_selector_match, checked against kc_field_selector_match_fn on the same object. */
static bool matches(void **state, const char *selector)
{
    struct fixture *f = *state;
    kc_field_selector *sel = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_field_selector_parse(selector, &sel, &err) != 0)
        fail_msg("parse(\"%s\") failed: %s", selector, err.message ? err.message : "?");
    bool m = kc_field_selector_match(sel, f->pod);
    bool mf = match_fn(sel, f->pod);
    if (m != mf)
        fail_msg("\"%s\": match %d, match_fn %d", selector, m, mf);
    kc_field_selector_free(sel);
    return m;
}

static void expect_parse_error(const char *selector, int64_t offset, const char *needle)
{
    kc_field_selector *sel = (kc_field_selector *)0x1;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_field_selector_parse(selector, &sel, &err);
    if (rc != KC_EINVAL)
        fail_msg("parse(\"%s\") = %d, want KC_EINVAL", selector, rc);
    assert_ptr_equal(sel, (kc_field_selector *)0x1);
    assert_non_null(err.message);
    if (!strstr(err.message, needle))
        fail_msg("parse(\"%s\") message \"%s\" lacks \"%s\"", selector, err.message, needle);
    if (err.offset != offset)
        fail_msg("parse(\"%s\") offset %lld, want %lld", selector, (long long)err.offset,
                 (long long)offset);
    kc_error_clear(&err);
}

static void expect_canonical(const char *selector, const char *want)
{
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse(selector, &sel, NULL), 0);
    char *got = kc_field_selector_string(sel);
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("string(parse(\"%s\")) = \"%s\", want \"%s\"", selector, got, want);
    kc_field_selector *again = NULL;
    assert_int_equal(kc_field_selector_parse(got, &again, NULL), 0);
    char *got2 = kc_field_selector_string(again);
    assert_string_equal(got, got2);
    free(got);
    free(got2);
    kc_field_selector_free(sel);
    kc_field_selector_free(again);
}

/* ---- metadata.name / metadata.namespace (#63) ------------------------------------------------ */

static void test_json_selector_field_metadata_name_63(void **state)
{
    assert_true(matches(state, "metadata.name=web-1"));
    assert_true(matches(state, "metadata.name==web-1"));
    assert_false(matches(state, "metadata.name=web-2"));
    assert_true(matches(state, "metadata.name!=web-2"));
    assert_false(matches(state, "metadata.name!=web-1"));
}

static void test_json_selector_field_metadata_namespace_63(void **state)
{
    assert_true(matches(state, "metadata.namespace=shop"));
    assert_false(matches(state, "metadata.namespace=default"));
    assert_true(matches(state, "metadata.namespace=shop,metadata.name=web-1"));
    assert_false(matches(state, "metadata.namespace=shop,metadata.name=x"));
}

static void test_json_selector_field_exposes_fields_for_server_check_63(void **state)
{
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse("metadata.name=a,foo=b", &sel, NULL), 0);
    assert_int_equal(kc_field_selector_count(sel), 2);
    assert_string_equal(kc_field_selector_field(sel, 0), "foo"); /* terms sorted */
    assert_string_equal(kc_field_selector_field(sel, 1), "metadata.name");
    assert_null(kc_field_selector_field(sel, 2));
    kc_field_selector_free(sel);
    assert_int_equal(kc_field_selector_count(NULL), 0);
}

static void test_json_selector_field_exact_match_introspection(void **state)
{
    kc_field_selector *sel = NULL;
    assert_int_equal(
        kc_field_selector_parse("metadata.namespace==ns1,metadata.name=n1,spec.x!=y", &sel, NULL),
        0);
    assert_string_equal(kc_field_selector_exact(sel, "metadata.name"), "n1");
    assert_string_equal(kc_field_selector_exact(sel, "metadata.namespace"), "ns1");
    assert_null(kc_field_selector_exact(sel, "spec.x")); /* != does not pin */
    assert_null(kc_field_selector_exact(sel, "status.phase"));
    assert_null(kc_field_selector_exact(NULL, "metadata.name"));
    kc_field_selector_free(sel);
}

/* ---- arbitrary dotted paths ------------------------------------------------------------------ */

static void test_json_selector_field_string_path(void **state)
{
    assert_true(matches(state, "spec.nodeName=node-a"));
    assert_false(matches(state, "spec.nodeName=node-b"));
    assert_true(matches(state, "status.phase=Running,spec.restartPolicy=Always"));
    assert_true(matches(state, "metadata.labels.app=web"));
    assert_true(matches(state, "kind=Pod")); /* a one-segment path is a pointer too */
}

static void test_json_selector_field_escaped_json_string_is_unescaped(void **state)
{
    /* spec.schedulerName is we"ird\n (JSON escapes in the object); compare the decoded text. */
    assert_true(matches(state, "spec.schedulerName=we\"ird\\\\n"));
    assert_false(matches(state, "spec.schedulerName=we\\\\\"ird\\\\n"));
}

static void test_json_selector_field_numbers_and_bools_as_printed(void **state)
{
    assert_true(matches(state, "spec.hostNetwork=true"));
    assert_false(matches(state, "spec.hostNetwork=false"));
    assert_true(matches(state, "spec.priority=5"));
    assert_true(matches(state, "spec.priority!=6"));
}

static void test_json_selector_field_missing_or_null_is_empty(void **state)
{
    assert_true(matches(state, "spec.missing="));
    assert_false(matches(state, "spec.missing=x"));
    assert_true(matches(state, "spec.missing!=x"));
    assert_true(matches(state, "spec.nothing="));
    assert_true(matches(state, "a..b=")); /* empty segment: never resolves */
    assert_true(matches(state, "="));     /* empty field path */
}

static void test_json_selector_field_path_escapes_pointer_chars(void **state)
{
    struct fixture *f = *state;
    const char *j = "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"a/b\":\"1\",\"c~d\":\"2\"}}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(j, strlen(j), NULL, &o, NULL), 0);
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse(
                         "metadata.annotations.a/b=1,metadata.annotations.c~d=2", &sel, NULL),
                     0);
    assert_true(kc_field_selector_match(sel, o));
    assert_false(kc_field_selector_match(sel, f->pod));
    assert_true(match_fn(sel, o)); /* the pointers it hands out */
    assert_false(match_fn(sel, f->pod));
    kc_field_selector_free(sel);
    kc_obj_unref(o);
}

/* What one requirement's lookup gets: its dotted path and the JSON Pointer computed at parse time
 * (RFC 6901, '~' and '/' escaped), or no call at all for a path with an empty segment. */
static void expect_lookup(const char *selector, const char *field, const char *pointer)
{
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse(selector, &sel, NULL), 0);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse("{}", 2, NULL, &o, NULL), 0);
    lookups = 0;
    last_field = last_pointer = NULL;
    match_fn(sel, o);
    assert_int_equal(lookups, pointer ? 1 : 0);
    if (pointer) {
        assert_string_equal(last_field, field);
        assert_string_equal(last_pointer, pointer);
        assert_ptr_equal(last_field, kc_field_selector_field(sel, 0)); /* borrowed from sel */
        assert_ptr_equal(last_pointer, kc_field_selector_pointer(sel, 0));
    }
    kc_obj_unref(o);
    kc_field_selector_free(sel);
}

static void test_json_selector_field_match_fn_gets_pointer(void **state)
{
    (void)state;
    expect_lookup("spec.nodeName=a", "spec.nodeName", "/spec/nodeName");
    expect_lookup("metadata.name=a", "metadata.name", "/metadata/name");
    expect_lookup("metadata.namespace!=a", "metadata.namespace", "/metadata/namespace");
    expect_lookup("metadata.annotations.a/b~c=1", "metadata.annotations.a/b~c",
                  "/metadata/annotations/a~1b~0c");
    expect_lookup("kind=Pod", "kind", "/kind");
    expect_lookup("a..b=", NULL, NULL);
    expect_lookup(".a=", NULL, NULL);
    expect_lookup("a.=", NULL, NULL);
    expect_lookup("=x", NULL, NULL);
}

/* The lookup form: one call per requirement with its index; an absent field compares as "";
 * a NULL lookup fails a non-empty selector and an empty one needs none. */
static void test_json_selector_field_match_fn_lookup_contract(void **state)
{
    struct fixture *f = *state;
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse("spec.nodeName=node-a,status.phase!=Failed,"
                                             "spec.none=",
                                             &sel, NULL),
                     0);
    lookups = 0;
    assert_true(match_fn(sel, f->pod));
    assert_int_equal(lookups, 3);
    assert_false(kc_field_selector_match_fn(sel, NULL, NULL));
    assert_string_equal(kc_field_selector_pointer(sel, 2), "/status/phase"); /* sorted */
    assert_null(kc_field_selector_pointer(sel, 3)); /* out of range */
    kc_field_selector_free(sel);
    assert_null(kc_field_selector_pointer(NULL, 0));
    assert_true(kc_field_selector_match_fn(NULL, NULL, NULL));
    kc_field_selector *empty = NULL;
    assert_int_equal(kc_field_selector_parse("", &empty, NULL), 0);
    assert_true(kc_field_selector_match_fn(empty, NULL, NULL));
    kc_field_selector_free(empty);
}

/* ---- grammar --------------------------------------------------------------------------------- */

static void test_json_selector_field_empty_matches_everything(void **state)
{
    struct fixture *f = *state;
    const char *texts[] = {"", ",", ",,,"};
    for (size_t i = 0; i < 3; i++) {
        kc_field_selector *sel = NULL;
        assert_int_equal(kc_field_selector_parse(texts[i], &sel, NULL), 0);
        assert_true(kc_field_selector_empty(sel));
        assert_true(kc_field_selector_match(sel, f->pod));
        kc_field_selector_free(sel);
    }
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse(NULL, &sel, NULL), 0);
    assert_true(kc_field_selector_empty(sel));
    kc_field_selector_free(sel);
    assert_true(kc_field_selector_match(NULL, f->pod));
    assert_true(kc_field_selector_empty(NULL));
    kc_field_selector_free(NULL);
}

static void test_json_selector_field_empty_terms_are_skipped(void **state)
{
    assert_true(matches(state, ",metadata.name=web-1,,"));
}

static void test_json_selector_field_operator_split_at_first(void **state)
{
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse("a=!b", &sel, NULL), 0); /* value "!b" */
    assert_string_equal(kc_field_selector_field(sel, 0), "a");
    kc_field_selector_free(sel);
    expect_parse_error("a!==b", 3, "unescaped character in value: 61"); /* a != "=b" */
    expect_canonical("a==b", "a=b");
}

static void test_json_selector_field_no_trimming_of_whitespace(void **state)
{
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse("metadata.name = web-1", &sel, NULL), 0);
    assert_string_equal(kc_field_selector_field(sel, 0), "metadata.name ");
    kc_field_selector_free(sel);
    assert_false(matches(state, "metadata.name= web-1"));
}

static void test_json_selector_field_missing_operator_is_error(void **state)
{
    expect_parse_error("metadata.name", 0,
                       "invalid selector: 'metadata.name'; can't understand 'metadata.name'");
    expect_parse_error("a=b,c", 4, "can't understand 'c'");
    expect_parse_error("a!b", 0, "can't understand 'a!b'");
}

/* ---- value escaping -------------------------------------------------------------------------- */

static void test_json_selector_field_escaped_values(void **state)
{
    struct fixture *f = *state;
    const char *j = "{\"metadata\":{\"name\":\"a,b=c\\\\d\"}}"; /* name is a,b=c\d */
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(j, strlen(j), NULL, &o, NULL), 0);
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse("metadata.name=a\\,b\\=c\\\\d", &sel, NULL), 0);
    assert_int_equal(kc_field_selector_count(sel), 1);
    assert_string_equal(kc_field_selector_exact(sel, "metadata.name"), "a,b=c\\d");
    assert_true(kc_field_selector_match(sel, o));
    assert_false(kc_field_selector_match(sel, f->pod));
    char *s = kc_field_selector_string(sel);
    assert_string_equal(s, "metadata.name=a\\,b\\=c\\\\d");
    free(s);
    kc_field_selector_free(sel);
    kc_obj_unref(o);
}

static void test_json_selector_field_bad_escapes(void **state)
{
    expect_parse_error("x=a\\b", 3, "invalid escape sequence: \\b");
    expect_parse_error("x=a\\", 3, "invalid escape sequence: \\");
    expect_parse_error("x=a=b", 3, "unescaped character in value: 61");
    expect_parse_error("z=1,x=a=b", 7, "unescaped character in value: 61");
}

static void test_json_selector_field_too_long_is_rejected(void **state)
{
    size_t n = 300 * 1024;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    big[n] = '\0';
    kc_field_selector *sel = NULL;
    assert_int_equal(kc_field_selector_parse(big, &sel, NULL), KC_ETOOLARGE);
    assert_null(sel);
    free(big);
    assert_int_equal(kc_field_selector_parse("a=b", NULL, NULL), KC_EINVAL);
}

/* ---- canonical form -------------------------------------------------------------------------- */

static void test_json_selector_field_canonical_string(void **state)
{
    expect_canonical("b=2,a==1,c!=x\\,y", "a=1,b=2,c!=x\\,y");
    expect_canonical("metadata.name=", "metadata.name=");
    expect_canonical("", "");
    expect_canonical("a\\,b=c", "a\\,b=c"); /* an escaped comma in the field stays one term */
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_json_selector_field_metadata_name_63),
        T(test_json_selector_field_metadata_namespace_63),
        T(test_json_selector_field_exposes_fields_for_server_check_63),
        T(test_json_selector_field_exact_match_introspection),
        T(test_json_selector_field_string_path),
        T(test_json_selector_field_escaped_json_string_is_unescaped),
        T(test_json_selector_field_numbers_and_bools_as_printed),
        T(test_json_selector_field_missing_or_null_is_empty),
        T(test_json_selector_field_path_escapes_pointer_chars),
        T(test_json_selector_field_match_fn_lookup_contract),
        T(test_json_selector_field_match_fn_gets_pointer),
        T(test_json_selector_field_empty_matches_everything),
        T(test_json_selector_field_empty_terms_are_skipped),
        T(test_json_selector_field_operator_split_at_first),
        T(test_json_selector_field_no_trimming_of_whitespace),
        T(test_json_selector_field_missing_operator_is_error),
        T(test_json_selector_field_escaped_values),
        T(test_json_selector_field_bad_escapes),
        T(test_json_selector_field_too_long_is_rejected),
        T(test_json_selector_field_canonical_string),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_json_selector_label.c — label selector grammar and matching (labels.Parse semantics).
 * Spec checklist #62: labelSelector covers =, ==, !=, in, notin, k, !k; != and notin include
 * objects that lack the key.
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

/* ---- helpers: labels as a NULL-terminated {key, value, ...} array ---------------------------- */

static const char *lookup(void *ud, const char *key)
{
    const char **kv = ud;
    for (size_t i = 0; kv[i]; i += 2)
        if (strcmp(kv[i], key) == 0)
            return kv[i + 1];
    return NULL;
}

static bool matches(const char *selector, const char **labels)
{
    kc_label_selector *sel = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_label_selector_parse(selector, &sel, &err);
    if (rc != 0)
        fail_msg("parse(\"%s\") failed: %s", selector, err.message ? err.message : "?");
    bool m = kc_label_selector_match_fn(sel, lookup, (void *)labels);
    kc_label_selector_free(sel);
    return m;
}

static void expect_canonical(const char *selector, const char *want)
{
    kc_label_selector *sel = NULL;
    assert_int_equal(kc_label_selector_parse(selector, &sel, NULL), 0);
    char *got = kc_label_selector_string(sel);
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("string(parse(\"%s\")) = \"%s\", want \"%s\"", selector, got, want);
    free(got);
    kc_label_selector_free(sel);
}

/* Parse must fail with KC_EINVAL at the given offset, with a message containing needle. */
static void expect_parse_error(const char *selector, int64_t offset, const char *needle)
{
    kc_label_selector *sel = (kc_label_selector *)0x1;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_label_selector_parse(selector, &sel, &err);
    if (rc != KC_EINVAL)
        fail_msg("parse(\"%s\") = %d, want KC_EINVAL", selector, rc);
    assert_ptr_equal(sel, (kc_label_selector *)0x1); /* untouched */
    assert_int_equal(err.code, KC_EINVAL);
    assert_non_null(err.message);
    if (!strstr(err.message, needle))
        fail_msg("parse(\"%s\") message \"%s\" lacks \"%s\"", selector, err.message, needle);
    if (err.offset != offset)
        fail_msg("parse(\"%s\") offset %lld, want %lld (%s)", selector, (long long)err.offset,
                 (long long)offset, err.message);
    kc_error_clear(&err);
}

static const char *APP_WEB[] = {"app", "web", "tier", "front", NULL};
static const char *APP_DB[] = {"app", "db", NULL};
static const char *NO_LABELS[] = {NULL};
static const char *APP_EMPTY[] = {"app", "", NULL};

/* ---- operators (#62) ------------------------------------------------------------------------- */

static void test_json_selector_label_equals_62(void **state)
{
    assert_true(matches("app=web", APP_WEB));
    assert_true(matches("app==web", APP_WEB));
    assert_false(matches("app=web", APP_DB));
    assert_false(matches("app=web", NO_LABELS));
}

static void test_json_selector_label_not_equals_matches_missing_key_62(void **state)
{
    assert_false(matches("app!=web", APP_WEB));
    assert_true(matches("app!=web", APP_DB));
    assert_true(matches("app!=web", NO_LABELS)); /* #62: lacking the key matches */
}

static void test_json_selector_label_in_62(void **state)
{
    assert_true(matches("app in (db,web)", APP_WEB));
    assert_true(matches("app in (db,web)", APP_DB));
    assert_false(matches("app in (cache)", APP_WEB));
    assert_false(matches("app in (web)", NO_LABELS));
}

static void test_json_selector_label_notin_matches_missing_key_62(void **state)
{
    assert_false(matches("app notin (web)", APP_WEB));
    assert_true(matches("app notin (web)", APP_DB));
    assert_true(matches("app notin (web,db)", NO_LABELS)); /* #62 */
}

static void test_json_selector_label_exists_62(void **state)
{
    assert_true(matches("app", APP_WEB));
    assert_true(matches("app", APP_EMPTY));
    assert_false(matches("app", NO_LABELS));
}

static void test_json_selector_label_not_exists_62(void **state)
{
    assert_false(matches("!app", APP_WEB));
    assert_true(matches("!app", NO_LABELS));
    assert_true(matches("!missing", APP_WEB));
}

static void test_json_selector_label_requirements_are_anded(void **state)
{
    assert_true(matches("app=web,tier=front", APP_WEB));
    assert_false(matches("app=web,tier=back", APP_WEB));
    assert_true(matches("app in (web),!missing,tier", APP_WEB));
}

static void test_json_selector_label_gt_lt_integers(void **state)
{
    const char *v10[] = {"n", "10", NULL};
    const char *vtext[] = {"n", "ten", NULL};
    assert_true(matches("n>5", v10));
    assert_false(matches("n>10", v10));
    assert_true(matches("n<11", v10));
    assert_false(matches("n<5", v10));
    assert_false(matches("n>5", vtext));
    assert_false(matches("n>5", NO_LABELS));
    expect_parse_error("n>abc", 2, "must be an integer");
    expect_parse_error("n<99999999999999999999", 2, "must be an integer");
}

static void test_json_selector_label_empty_value(void **state)
{
    assert_true(matches("app=", APP_EMPTY));
    assert_false(matches("app=", APP_WEB));
    assert_true(matches("app!=", APP_WEB));
    assert_true(matches("app=,tier", (const char *[]){"app", "", "tier", "x", NULL}));
}

static void test_json_selector_label_in_empty_parens_is_empty_string_set(void **state)
{
    /* Upstream Parse turns "()" into the set {""} (documented example "z notin ()"). */
    assert_true(matches("app in ()", APP_EMPTY));
    assert_false(matches("app in ()", APP_WEB));
    assert_true(matches("app notin ()", APP_WEB));
    expect_canonical("app in ()", "app in ()");
    expect_canonical("x in (,a)", "x in (,a)");
    expect_canonical("x in (a,)", "x in (,a)");
    expect_canonical("x in (a,,b)", "x in (,a,b)");
}

/* ---- whitespace and keywords ----------------------------------------------------------------- */

static void test_json_selector_label_whitespace_separates_tokens(void **state)
{
    assert_true(matches("  app = web ,\ttier\r\nin ( front , back )  ", APP_WEB));
    assert_true(matches("app==web", APP_WEB));
    assert_true(matches("! missing", APP_WEB));
    expect_parse_error("app=web tier", 8, "expected: ',' or 'end of string'");
}

static void test_json_selector_label_in_and_notin_usable_as_key_and_value(void **state)
{
    const char *kw[] = {"notin", "x", NULL};
    assert_true(matches("in in (notin,in)", (const char *[]){"in", "in", NULL}));
    assert_true(matches("in=notin", (const char *[]){"in", "notin", NULL}));
    assert_true(matches("notin", kw));
    expect_canonical("in in (notin,in)", "in in (in,notin)");
}

static void test_json_selector_label_empty_selector_matches_everything(void **state)
{
    const char *texts[] = {"", "   ", "\t\n"};
    for (size_t i = 0; i < 3; i++) {
        kc_label_selector *sel = NULL;
        assert_int_equal(kc_label_selector_parse(texts[i], &sel, NULL), 0);
        assert_true(kc_label_selector_empty(sel));
        assert_true(kc_label_selector_match_fn(sel, lookup, (void *)NO_LABELS));
        char *s = kc_label_selector_string(sel);
        assert_string_equal(s, "");
        free(s);
        kc_label_selector_free(sel);
    }
    kc_label_selector *sel = NULL;
    assert_int_equal(kc_label_selector_parse(NULL, &sel, NULL), 0);
    assert_true(kc_label_selector_empty(sel));
    kc_label_selector_free(sel);
    assert_true(kc_label_selector_match_fn(NULL, lookup, (void *)APP_WEB));
    assert_true(kc_label_selector_empty(NULL));
    kc_label_selector_free(NULL);
}

/* ---- key and value syntax -------------------------------------------------------------------- */

static void test_json_selector_label_valid_keys(void **state)
{
    const char *ok[] = {"a",
                        "A",
                        "a_b.c-d",
                        "app.kubernetes.io/name",
                        "example.com/MyName",
                        "k8s.io/x",
                        "1.2-3/Z9",
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" /* 63 */};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        kc_label_selector *sel = NULL;
        kc_error err = KC_ERROR_INIT;
        if (kc_label_selector_parse(ok[i], &sel, &err) != 0)
            fail_msg("key \"%s\" rejected: %s", ok[i], err.message);
        kc_label_selector_free(sel);
    }
}

static void test_json_selector_label_invalid_keys(void **state)
{
    expect_parse_error("-a=b", 0, "name part must consist of");
    expect_parse_error("a-=b", 0, "name part must consist of");
    expect_parse_error("a$b", 0, "name part must consist of");
    expect_parse_error("x=1,/a", 4, "prefix part must be non-empty");
    expect_parse_error("Example.com/a", 0, "RFC 1123 subdomain");
    expect_parse_error("example..com/a", 0, "RFC 1123 subdomain");
    expect_parse_error("-example.com/a", 0, "RFC 1123 subdomain");
    expect_parse_error("a/", 0, "name part must be non-empty");
    expect_parse_error("a/b/c", 0, "qualified name");
    expect_parse_error(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1" /* 64 */, 0,
        "no more than 63 characters");
}

static void test_json_selector_label_prefix_length_limit(void **state)
{
    char key[300];
    memset(key, 'a', 253);
    strcpy(key + 253, "/n");
    kc_label_selector *sel = NULL;
    assert_int_equal(kc_label_selector_parse(key, &sel, NULL), 0);
    kc_label_selector_free(sel);
    memset(key, 'a', 254);
    strcpy(key + 254, "/n");
    expect_parse_error(key, 0, "no more than 253 characters");
}

static void test_json_selector_label_value_syntax(void **state)
{
    expect_parse_error("a=-x", 2, "a valid label must be");
    expect_parse_error("a=x-", 2, "a valid label must be");
    expect_parse_error("a in (ok,b@d)", 9, "a valid label must be");
    char text[80] = "a=";
    memset(text + 2, 'v', 64);
    text[66] = '\0';
    expect_parse_error(text, 2, "no more than 63 characters");
    text[65] = '\0'; /* 63 characters */
    kc_label_selector *sel = NULL;
    assert_int_equal(kc_label_selector_parse(text, &sel, NULL), 0);
    kc_label_selector_free(sel);
    assert_true(matches("a=A_b.C-9", (const char *[]){"a", "A_b.C-9", NULL}));
}

/* ---- grammar errors with offsets ------------------------------------------------------------- */

static void test_json_selector_label_grammar_errors(void **state)
{
    expect_parse_error("=a", 0, "found '=', expected: !, identifier, or 'end of string'");
    expect_parse_error("a=b,,c", 4, "found ',', expected: identifier after ','");
    expect_parse_error("a=b,", 4, "found '', expected: identifier after ','");
    expect_parse_error("!a=b", 2, "found '=', expected: ',' or 'end of string'");
    expect_parse_error("a b", 2, "found 'b', expected: in, notin, =, ==, !=, gt, lt");
    expect_parse_error("a in x", 5, "found 'x' expected: '('");
    expect_parse_error("a in (x", 7, "found '', expected: ',' or ')'");
    expect_parse_error("a in (x y)", 8, "found 'y', expected: ',' or ')'");
    expect_parse_error("a in (=)", 6, "expected: ',', ')' or identifier");
    expect_parse_error("a in (x,=)", 8, "expected: ',', or identifier");
    expect_parse_error("a==b==c", 4, "found '==', expected: ',' or 'end of string'");
    expect_parse_error("a=(", 2, "found '(', expected: identifier");
    expect_parse_error("!", 1, "found '', expected: identifier");
    expect_parse_error("x=a||y=b", 2, "a valid label must be");
    /* the inputs of issue 16 point 6 */
    expect_parse_error("a in (", 6, "found '', expected: ',', ')' or identifier");
    expect_parse_error("a=b,,", 4, "found ',', expected: identifier after ','");
    expect_parse_error("a=b=c", 3, "found '=', expected: ',' or 'end of string'");
}

static void test_json_selector_label_error_message_prefix(void **state)
{
    kc_error err = KC_ERROR_INIT;
    kc_label_selector *sel = NULL;
    assert_int_equal(kc_label_selector_parse("a in x", &sel, &err), KC_EINVAL);
    assert_string_equal(err.message, "unable to parse requirement: found 'x' expected: '('");
    kc_error_clear(&err);
    assert_int_equal(kc_label_selector_parse(NULL, NULL, NULL), KC_EINVAL);
}

static void test_json_selector_label_too_long_is_rejected(void **state)
{
    size_t n = 300 * 1024;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    big[n] = '\0';
    kc_label_selector *sel = NULL;
    assert_int_equal(kc_label_selector_parse(big, &sel, NULL), KC_ETOOLARGE);
    assert_null(sel);
    free(big);
}

/* ---- canonical form -------------------------------------------------------------------------- */

static void test_json_selector_label_string_is_canonical(void **state)
{
    expect_canonical("b=1,a=2", "a=2,b=1");
    expect_canonical("  x  in (c, a ,b,a)", "x in (a,b,c)");
    expect_canonical("x notin (b,a),!y,z", "x notin (a,b),!y,z");
    expect_canonical("a==b,c!=d,e>1,f<2", "a==b,c!=d,e>1,f<2");
    expect_canonical("k=v,k=w", "k=v,k=w"); /* same key: order kept (stable) */
}

static void test_json_selector_label_string_round_trips(void **state)
{
    const char *inputs[] = {"a in (x,,y),b notin (),!c,d,e=,f==g,h!=i,j>3,k<-1", "example.com/a=b",
                            "in in (in)"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        kc_label_selector *s1 = NULL, *s2 = NULL;
        kc_error err = KC_ERROR_INIT;
        if (kc_label_selector_parse(inputs[i], &s1, &err) != 0) {
            /* k<-1: "-1" is not a valid label value, as upstream */
            assert_non_null(strstr(err.message, "a valid label must be"));
            kc_error_clear(&err);
            continue;
        }
        char *t1 = kc_label_selector_string(s1);
        assert_int_equal(kc_label_selector_parse(t1, &s2, NULL), 0);
        char *t2 = kc_label_selector_string(s2);
        assert_string_equal(t1, t2);
        free(t1);
        free(t2);
        kc_label_selector_free(s1);
        kc_label_selector_free(s2);
    }
    expect_canonical("a in (x,,y),b notin (),!c,d,e=,f==g,h!=i,j>3",
                     "a in (,x,y),b notin (),!c,d,e=,f==g,h!=i,j>3");
}

/* ---- matching real objects ------------------------------------------------------------------- */

static kc_obj *make_obj(const char *json)
{
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(json, strlen(json), NULL, &o, &err) != 0)
        fail_msg("kc_obj_parse: %s", err.message);
    return o;
}

static void test_json_selector_label_matches_kc_obj_labels_62(void **state)
{
    kc_obj *o = make_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                         "\"namespace\":\"d\",\"labels\":{\"app\":\"web\",\"app.kubernetes.io/"
                         "part-of\":\"shop\"}}}");
    kc_obj *bare =
        make_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\"}}");
    const char *cases[][3] = {
        /* selector, matches o?, matches bare? */
        {"app=web", "1", "0"},
        {"app==web", "1", "0"},
        {"app!=web", "0", "1"},
        {"app in (web,db)", "1", "0"},
        {"app notin (web)", "0", "1"},
        {"app", "1", "0"},
        {"!app", "0", "1"},
        {"app.kubernetes.io/part-of=shop", "1", "0"},
        {"", "1", "1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kc_label_selector *sel = NULL;
        assert_int_equal(kc_label_selector_parse(cases[i][0], &sel, NULL), 0);
        if (kc_label_selector_match(sel, o) != (cases[i][1][0] == '1'))
            fail_msg("\"%s\" on labelled object: want %s", cases[i][0], cases[i][1]);
        if (kc_label_selector_match(sel, bare) != (cases[i][2][0] == '1'))
            fail_msg("\"%s\" on unlabelled object: want %s", cases[i][0], cases[i][2]);
        kc_label_selector_free(sel);
    }
    assert_true(kc_label_selector_match(NULL, o));
    kc_obj_unref(o);
    kc_obj_unref(bare);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_selector_label_equals_62),
        cmocka_unit_test(test_json_selector_label_not_equals_matches_missing_key_62),
        cmocka_unit_test(test_json_selector_label_in_62),
        cmocka_unit_test(test_json_selector_label_notin_matches_missing_key_62),
        cmocka_unit_test(test_json_selector_label_exists_62),
        cmocka_unit_test(test_json_selector_label_not_exists_62),
        cmocka_unit_test(test_json_selector_label_requirements_are_anded),
        cmocka_unit_test(test_json_selector_label_gt_lt_integers),
        cmocka_unit_test(test_json_selector_label_empty_value),
        cmocka_unit_test(test_json_selector_label_in_empty_parens_is_empty_string_set),
        cmocka_unit_test(test_json_selector_label_whitespace_separates_tokens),
        cmocka_unit_test(test_json_selector_label_in_and_notin_usable_as_key_and_value),
        cmocka_unit_test(test_json_selector_label_empty_selector_matches_everything),
        cmocka_unit_test(test_json_selector_label_valid_keys),
        cmocka_unit_test(test_json_selector_label_invalid_keys),
        cmocka_unit_test(test_json_selector_label_prefix_length_limit),
        cmocka_unit_test(test_json_selector_label_value_syntax),
        cmocka_unit_test(test_json_selector_label_grammar_errors),
        cmocka_unit_test(test_json_selector_label_error_message_prefix),
        cmocka_unit_test(test_json_selector_label_too_long_is_rejected),
        cmocka_unit_test(test_json_selector_label_string_is_canonical),
        cmocka_unit_test(test_json_selector_label_string_round_trips),
        cmocka_unit_test(test_json_selector_label_matches_kc_obj_labels_62),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

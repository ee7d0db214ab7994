/*
 * test_json_jsonpatch — kc_doc_json_patch_diff: RFC 6902 operations between two documents
 * (pointers escaped per RFC 6901, arrays diffed after their common prefix and suffix, removals
 * from the highest index down). The admission spec's JP2 and JP6 ask for exactly this of a
 * mutating webhook's patch; tests/unit/test_server_jsonpatch_oracle.c applies the results.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "doc_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void want_patch(const char *from, const char *to, const char *want)
{
    kc_doc *a = parse(from), *b = parse(to);
    char *p = NULL;
    size_t n = 0;
    kc_error err = KC_ERROR_INIT;
    if (kc_doc_json_patch_diff(a, b, &p, &n, &err))
        fail_msg("diff: %s", err.message);
    if (strcmp(p, want) != 0)
        fail_msg("%s -> %s:\n got  %s\n want %s", from, to, p, want);
    assert_int_equal(n, strlen(want));
    free(p);
    kc_doc_free(a);
    kc_doc_free(b);
}

static void test_json_jsonpatch_objects(void **state)
{
    (void)state;
    want_patch("{\"a\":1,\"b\":[1]}", "{\"b\":[1],\"a\":1.0}", "[]"); /* equal by value */
    want_patch("{\"a\":1}", "{\"a\":1,\"b\":\"x\"}",
               "[{\"op\":\"add\",\"path\":\"/b\",\"value\":\"x\"}]");
    want_patch("{\"a\":1,\"b\":2}", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]");
    want_patch("{\"a\":1}", "{\"a\":null}",
               "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":null}]");
    want_patch("{\"a\":null}", "{}", "[{\"op\":\"remove\",\"path\":\"/a\"}]");
    want_patch("{\"m\":{\"x\":{\"y\":1}}}", "{\"m\":{\"x\":{\"y\":2,\"z\":3}}}",
               "[{\"op\":\"replace\",\"path\":\"/m/x/y\",\"value\":2},"
               "{\"op\":\"add\",\"path\":\"/m/x/z\",\"value\":3}]");
    /* JP2: '~' and '/' in keys. */
    want_patch(
        "{\"metadata\":{\"annotations\":{}}}",
        "{\"metadata\":{\"annotations\":{\"example.com/x\":\"1\",\"a~b\":\"2\"}}}",
        "[{\"op\":\"add\",\"path\":\"/metadata/annotations/example.com~1x\",\"value\":\"1\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations/a~0b\",\"value\":\"2\"}]");
    want_patch("{\"~/\":1}", "{}", "[{\"op\":\"remove\",\"path\":\"/~0~1\"}]");
    want_patch("{\"\":1}", "{\"\":2}", "[{\"op\":\"replace\",\"path\":\"/\",\"value\":2}]");
    /* Type changes replace. */
    want_patch("{\"s\":\"x\"}", "{\"s\":{\"k\":1}}",
               "[{\"op\":\"replace\",\"path\":\"/s\",\"value\":{\"k\":1}}]");
    want_patch("{\"s\":{}}", "{\"s\":[]}", "[{\"op\":\"replace\",\"path\":\"/s\",\"value\":[]}]");
    want_patch("{\"s\":1}", "{\"s\":1.5}", "[{\"op\":\"replace\",\"path\":\"/s\",\"value\":1.5}]");
    /* The root. */
    want_patch("{\"a\":1}", "[1]", "[{\"op\":\"replace\",\"path\":\"\",\"value\":[1]}]");
    want_patch("3", "\"x\"", "[{\"op\":\"replace\",\"path\":\"\",\"value\":\"x\"}]");
    want_patch("null", "null", "[]");
}

static void test_json_jsonpatch_arrays(void **state)
{
    (void)state;
    want_patch("[1,2,3]", "[1,2,3,4]", "[{\"op\":\"add\",\"path\":\"/3\",\"value\":4}]");
    want_patch("[1,2,3]", "[0,1,2,3]", "[{\"op\":\"add\",\"path\":\"/0\",\"value\":0}]");
    want_patch("[1,2,3]", "[1,3]", "[{\"op\":\"remove\",\"path\":\"/1\"}]");
    /* Removals from the highest index down. */
    want_patch("[1,2,3,4,5]", "[1,5]",
               "[{\"op\":\"remove\",\"path\":\"/3\"},{\"op\":\"remove\",\"path\":\"/2\"},"
               "{\"op\":\"remove\",\"path\":\"/1\"}]");
    want_patch("[1,2,3]", "[]",
               "[{\"op\":\"remove\",\"path\":\"/2\"},{\"op\":\"remove\",\"path\":\"/1\"},"
               "{\"op\":\"remove\",\"path\":\"/0\"}]");
    want_patch("[]", "[\"a\",\"b\"]",
               "[{\"op\":\"add\",\"path\":\"/0\",\"value\":\"a\"},"
               "{\"op\":\"add\",\"path\":\"/1\",\"value\":\"b\"}]");
    /* Pairwise in the middle, then the extra ones. */
    want_patch("[1,{\"a\":1},9]", "[1,{\"a\":2},7,8,9]",
               "[{\"op\":\"replace\",\"path\":\"/1/a\",\"value\":2},"
               "{\"op\":\"add\",\"path\":\"/2\",\"value\":7},{\"op\":\"add\",\"path\":\"/3\","
               "\"value\":8}]");
    want_patch("{\"c\":[[1,2],[3]]}", "{\"c\":[[1],[3,4]]}",
               "[{\"op\":\"remove\",\"path\":\"/c/0/1\"},"
               "{\"op\":\"add\",\"path\":\"/c/1/1\",\"value\":4}]");
    kc_doc *a = parse("{}");
    char *p = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_json_patch_diff(a, NULL, &p, NULL, &err), KC_EINVAL);
    assert_int_equal(kc_doc_json_patch_diff(NULL, a, &p, NULL, &err), KC_EINVAL);
    assert_int_equal(kc_doc_json_patch_diff(a, a, NULL, NULL, &err), KC_EINVAL);
    assert_int_equal(kc_doc_json_patch_diff(a, a, &p, NULL, &err), 0);
    assert_string_equal(p, "[]");
    free(p);
    kc_doc_free(a);
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_jsonpatch_objects),
        cmocka_unit_test(test_json_jsonpatch_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

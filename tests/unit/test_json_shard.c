/*
 * test_json_shard.c — hash ranges (kcache/shard.h): the FNV-1a vectors and the range index among
 * four (controller-semantics S6), even splits (S15), the selector grammar and its rejections (S2,
 * S3, S4, S5), the canonical form (S8) and matching (S7) on objects' uid and namespace.
 */
#include "kcache/shard.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* S6: input, FNV-1a 64, index among 4 even ranges. */
static const struct {
    const char *in;
    uint64_t h;
    int idx4;
} VEC[] = {
    {"", 0xcbf29ce484222325ULL, 3},
    {"a", 0xaf63dc4c8601ec8cULL, 2},
    {"foobar", 0x85944171f73967e8ULL, 2},
    {"6f3f2d4e-8c1a-4b7e-9d2f-1a2b3c4d5e6f", 0x6906f359644750dfULL, 1},
    {"default", 0xebada5168620c5feULL, 3},
};

static void test_hash_vectors(void **state)
{
    (void)state;
    kc_shard_range q[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(kc_shard_range_split(4, (uint64_t)i, &q[i]), 0);
    for (size_t v = 0; v < sizeof VEC / sizeof VEC[0]; v++) {
        uint64_t h = kc_shard_hash(VEC[v].in, strlen(VEC[v].in));
        assert_true(h == VEC[v].h);
        int hits = 0;
        for (int i = 0; i < 4; i++)
            if (kc_shard_range_contains(&q[i], h)) {
                assert_int_equal(i, VEC[v].idx4);
                hits++;
            }
        assert_int_equal(hits, 1);
        assert_int_equal((int)(h >> 62), VEC[v].idx4); /* S15: power of two → top bits */
    }
    assert_true(kc_shard_hash(NULL, 0) == 0xcbf29ce484222325ULL);
}

static void test_split(void **state)
{
    (void)state;
    kc_shard_range r;
    assert_int_equal(kc_shard_range_split(3, 1, &r), 0);
    assert_true(r.start == 0x5555555555555555ULL && r.end == 0xaaaaaaaaaaaaaaaaULL && !r.end_max);
    assert_int_equal(kc_shard_range_split(3, 2, &r), 0);
    assert_true(r.start == 0xaaaaaaaaaaaaaaaaULL && r.end_max);
    assert_int_equal(kc_shard_range_split(1, 0, &r), 0);
    assert_true(r.start == 0 && r.end_max);
    assert_true(kc_shard_range_contains(&r, UINT64_MAX));
    assert_int_equal(kc_shard_range_split(0, 0, &r), KC_EINVAL);
    assert_int_equal(kc_shard_range_split(4, 4, &r), KC_EINVAL);
    assert_int_equal(kc_shard_range_split(4, 0, NULL), KC_EINVAL);
    /* 64 ranges tile the space: each end is the next start. */
    kc_shard_range prev, cur;
    kc_shard_range_split(64, 0, &prev);
    for (uint64_t i = 1; i < 64; i++) {
        kc_shard_range_split(64, i, &cur);
        assert_true(prev.end == cur.start);
        prev = cur;
    }
    assert_true(prev.end_max);
}

static void test_parse_canonical(void **state)
{
    (void)state;
    kc_shard_selector *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(
        kc_shard_selector_parse("  shardRange( object.metadata.uid ,\"0x0000000000000000\""
                                ",'0x4000000000000000')||shardRange(object.metadata.uid,"
                                " '0xc000000000000000', '0x10000000000000000')\n",
                                &s, &err),
        0);
    assert_string_equal(kc_shard_selector_string(s),
                        "shardRange(object.metadata.uid, '0x0000000000000000', "
                        "'0x4000000000000000') || shardRange(object.metadata.uid, "
                        "'0xc000000000000000', '0x10000000000000000')");
    assert_int_equal(kc_shard_selector_field(s), KC_SHARD_FIELD_UID);
    assert_int_equal((int)kc_shard_selector_count(s), 2);
    assert_true(kc_shard_selector_range(s, 1)->end_max);
    assert_null(kc_shard_selector_range(s, 2));
    assert_true(kc_shard_selector_match_hash(s, 0));
    assert_false(kc_shard_selector_match_hash(s, 0x4000000000000000ULL));
    assert_true(kc_shard_selector_match_hash(s, UINT64_MAX));
    /* The canonical text parses to itself. */
    kc_shard_selector *t = NULL;
    assert_int_equal(kc_shard_selector_parse(kc_shard_selector_string(s), &t, &err), 0);
    assert_string_equal(kc_shard_selector_string(t), kc_shard_selector_string(s));
    kc_shard_selector_free(t);
    kc_shard_selector_free(s);

    /* Built from ranges: the same text. Overlap and non-contiguity are allowed (S5). */
    kc_shard_range r[2] = {{.start = 0x10, .end = 0x20}, {.start = 0x15, .end_max = true}};
    assert_int_equal(kc_shard_selector_new(KC_SHARD_FIELD_NAMESPACE, r, 2, &s, &err), 0);
    assert_string_equal(kc_shard_selector_string(s),
                        "shardRange(object.metadata.namespace, '0x0000000000000010', "
                        "'0x0000000000000020') || shardRange(object.metadata.namespace, "
                        "'0x0000000000000015', '0x10000000000000000')");
    kc_shard_selector_free(s);
    r[0].end = 0x10;
    assert_int_equal(kc_shard_selector_new(KC_SHARD_FIELD_UID, r, 2, &s, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_int_equal(kc_shard_selector_new(KC_SHARD_FIELD_NONE, r + 1, 1, &s, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_int_equal(kc_shard_selector_new(KC_SHARD_FIELD_UID, r, 0, &s, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_null(s);
}

static void expect_bad(const char *text, const char *needle)
{
    kc_shard_selector *s = (kc_shard_selector *)1;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_shard_selector_parse(text, &s, &err);
    if (rc != KC_EINVAL || !strstr(err.message, needle))
        fail_msg("'%s': rc %d, message '%s' (want '%s')", text, rc, err.message, needle);
    assert_null(s);
    assert_true(err.offset >= 0);
    kc_error_clear(&err);
}

#define T(a, b) "shardRange(object.metadata.uid, '" a "', '" b "')"

static void test_parse_rejections(void **state)
{
    (void)state;
    expect_bad("", "empty");
    expect_bad("   \t", "empty");
    expect_bad(T("0x0", "0x10000000000000000"), "did you mean '0x0000000000000000'");
    expect_bad(T("0x", "0x10000000000000000"), "no digits");
    expect_bad(T("0x000000000000000A", "0x10000000000000000"), "lowercase hex");
    expect_bad(T("0x0000000000000000", "0x20000000000000000"), "above");
    expect_bad(T("0x0000000000000000", "0x100000000000000000"), "more than 17");
    expect_bad(T("0x8000000000000000", "0x4000000000000000"), "less than end");
    expect_bad(T("0x8000000000000000", "0x8000000000000000"), "less than end");
    expect_bad(T("0x10000000000000000", "0x10000000000000000"), "less than end");
    expect_bad(T("0000000000000000", "0x10000000000000000"), "0x");
    expect_bad("shardRange(object.metadata.uid, 0x0000000000000000, '0x10000000000000000')",
               "quoted");
    expect_bad("shardRange(metadata.uid, '0x0000000000000000', '0x10000000000000000')",
               "unsupported field");
    expect_bad("shardRange(object.metadata.name, '0x0000000000000000', '0x10000000000000000')",
               "unsupported field");
    expect_bad(T("0x0000000000000000", "0x8000000000000000") " && " T("0x8000000000000000",
                                                                      "0x10000000000000000"),
               "'||'");
    expect_bad(T("0x0000000000000000",
                 "0x8000000000000000") " || "
                                       "shardRange(object.metadata.namespace, "
                                       "'0x8000000000000000', '0x10000000000000000')",
               "same field");
    expect_bad("shardRanges(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
               "unknown function");
    expect_bad("size(object.metadata.uid) > 3", "expected shardRange");
    expect_bad(T("0x0000000000000000", "0x8000000000000000") " ||", "expected shardRange");
    expect_bad("shardRange(object.metadata.uid, '0x0000000000000000')", "expected ','");
    expect_bad("shardRange(object.metadata.uid, '0x0000000000000000", "unterminated");

    kc_shard_selector *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_shard_selector_parse(NULL, &s, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_int_equal(kc_shard_selector_parse("x", NULL, &err), KC_EINVAL);
    kc_error_clear(&err);
    size_t big = KC_SHARD_SELECTOR_MAX_LEN + 10;
    char *t = malloc(big + 1);
    memset(t, ' ', big);
    t[big] = '\0';
    assert_int_equal(kc_shard_selector_parse(t, &s, &err), KC_ETOOLARGE);
    kc_error_clear(&err);
    free(t);
}

static void test_match_objects(void **state)
{
    (void)state;
    static const char POD[] = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":"
                              "\"6f3f2d4e-8c1a-4b7e-9d2f-1a2b3c4d5e6f\"}}";
    static const char NODE[] = "{\"metadata\":{\"name\":\"n\",\"uid\":\"a\"}}";
    kc_obj *pod = NULL, *node = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_obj_parse(POD, strlen(POD), NULL, &pod, &err), 0);
    assert_int_equal(kc_obj_parse(NODE, strlen(NODE), NULL, &node, &err), 0);
    kc_shard_range q[4];
    kc_shard_selector *uid[4], *ns[4];
    for (int i = 0; i < 4; i++) {
        kc_shard_range_split(4, (uint64_t)i, &q[i]);
        assert_int_equal(kc_shard_selector_new(KC_SHARD_FIELD_UID, &q[i], 1, &uid[i], &err), 0);
        assert_int_equal(kc_shard_selector_new(KC_SHARD_FIELD_NAMESPACE, &q[i], 1, &ns[i], &err),
                         0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(kc_shard_selector_match(uid[i], pod), i == 1);  /* sample uid → 1 */
        assert_int_equal(kc_shard_selector_match(ns[i], pod), i == 3);   /* "default" → 3 */
        assert_int_equal(kc_shard_selector_match(uid[i], node), i == 2); /* "a" → 2 */
        assert_int_equal(kc_shard_selector_match(ns[i], node), i == 3);  /* "" → 3 */
        assert_false(kc_shard_selector_match(uid[i], NULL));
        kc_shard_selector_free(uid[i]);
        kc_shard_selector_free(ns[i]);
    }
    assert_true(kc_shard_selector_match(NULL, pod));
    assert_string_equal(kc_shard_key(node, KC_SHARD_FIELD_NAMESPACE), "");
    assert_null(kc_shard_key(node, KC_SHARD_FIELD_NONE));
    kc_obj_unref(pod);
    kc_obj_unref(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_vectors),    cmocka_unit_test(test_split),
        cmocka_unit_test(test_parse_canonical), cmocka_unit_test(test_parse_rejections),
        cmocka_unit_test(test_match_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

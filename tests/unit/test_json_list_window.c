/*
 * test_json_list_window — LIST bodies decoded in windows (json/sj_list.cpp, the path bodies over
 * KC__SJ_LIST_WINDOW_MIN take) give what one pass gives: the same result code, the same items,
 * the same list metadata. A LIST response is the reflector's initial state (informer-semantics
 * §2.1); malformed server data is a clear KC_EPARSE in both paths, and nothing one path refuses
 * is accepted by the other (docs/decoding.md, "Validation").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../bench/genpod.h"

#include <kcache/decode.h>

#include "json/sj.h" /* kc__sj_list_window_set */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pass {
    int rc;
    size_t n;
    char *json[64];
    char *meta[4];
    int64_t remaining;
};

static int keep_json(void *ud, kc_obj *obj)
{
    struct pass *p = ud;
    size_t len;
    const char *j = kc_obj_json(obj, &len);
    if (p->n < 64)
        p->json[p->n] = strndup(j, len);
    p->n++;
    kc_obj_unref(obj);
    return 0;
}

static void pass_run_flags(const char *body, size_t len, size_t window, unsigned flags,
                           struct pass *p)
{
    memset(p, 0, sizeof *p);
    kc__sj_list_window_set(window ? 1 : SIZE_MAX, window);
    kc_list_meta m = {0};
    kc_error err = KC_ERROR_INIT;
    kc_decode_opts o = {.flags = flags, .max_object_size = 0};
    p->rc = kc_list_decode(body, len, &o, &m, keep_json, p, &err);
    kc__sj_list_window_set(0, 0);
    if (p->rc == KC_EPARSE && (err.offset < 0 || err.offset > (int64_t)len))
        fail_msg("window %zu: offset %lld outside the body (%zu bytes): %s", window,
                 (long long)err.offset, len, err.message);
    kc_error_clear(&err);
    if (p->rc == 0) {
        char *f[4] = {m.kind, m.api_version, m.resource_version, m.continue_token};
        for (int i = 0; i < 4; i++)
            p->meta[i] = f[i] ? strdup(f[i]) : NULL;
        p->remaining = m.remaining_item_count;
        kc_list_meta_clear(&m);
    }
}

static void pass_run(const char *body, size_t len, size_t window, struct pass *p)
{
    pass_run_flags(body, len, window, 0, p);
}

static void pass_free(struct pass *p)
{
    for (size_t i = 0; i < p->n && i < 64; i++)
        free(p->json[i]);
    for (int i = 0; i < 4; i++)
        free(p->meta[i]);
}

static void same_pass(const struct pass *a, const struct pass *b, const char *what, size_t w)
{
    if ((a->rc == 0) != (b->rc == 0))
        fail_msg("%s, window %zu: %s in one pass, %s in windows", what, w, kc_errno_name(a->rc),
                 kc_errno_name(b->rc));
    if (a->rc)
        return;
    if (a->n != b->n)
        fail_msg("%s, window %zu: %zu items in one pass, %zu in windows", what, w, a->n, b->n);
    for (size_t i = 0; i < a->n && i < 64; i++)
        if (strcmp(a->json[i], b->json[i]))
            fail_msg("%s, window %zu, item %zu:\n%s\n%s", what, w, i, a->json[i], b->json[i]);
    for (int i = 0; i < 4; i++)
        if ((a->meta[i] == NULL) != (b->meta[i] == NULL) ||
            (a->meta[i] && strcmp(a->meta[i], b->meta[i])))
            fail_msg("%s, window %zu: list meta %d differs", what, w, i);
    assert_int_equal(a->remaining, b->remaining);
}

/* body decoded in one pass and in windows of w bytes: the same outcome. */
static void compare_windows(const char *body, size_t len, size_t w, const char *what)
{
    struct pass one, win;
    pass_run(body, len, 0, &one);
    pass_run(body, len, w, &win);
    same_pass(&one, &win, what, w);
    pass_free(&one);
    pass_free(&win);
}

/* Strings with "},{", escaped quotes and backslashes, multi-byte UTF-8 and whitespace in and
 * between items; metadata and apiVersion after items. */
static const char TRICKY[] =
    "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\",\"continue\":\"c},{\\\"x\"},"
    "\"items\":[{\"metadata\":{\"name\":\"a\",\"annotations\":{\"j\":\"},{\\\"k\\\":[1]},{\\\\\"}}}"
    ","
    " {\"metadata\":{\"name\":\"b\\u00e9\",\"labels\":{\"l\":\"\xc3\xa9\xf0\x9f\x98\x80},{\"}},"
    "\"spec\":{\"s\":\"\\\\\\\"},{\"}} ,\n{ \"metadata\" : { \"name\" : \"c\" } },"
    "{\"metadata\":{\"name\":\"d\"},\"status\":{\"x\":[[],{},\"]\",\"}\"]}}"
    "],\"apiVersion\":\"v1\",\"extra\":{\"items\":[]}}";

static void test_json_list_windows_match_one_pass(void **state)
{
    size_t glen;
    char *gen = kc_genpod_list(6, &glen);
    struct {
        const char *body;
        size_t len;
        const char *what;
    } bodies[] = {{gen, glen, "genpod"}, {TRICKY, sizeof TRICKY - 1, "tricky"}};
    for (size_t b = 0; b < 2; b++) {
        struct pass one, win;
        pass_run(bodies[b].body, bodies[b].len, 0, &one);
        assert_int_equal(one.rc, 0);
        assert_true(one.n == (b ? 4u : 6u));
        for (size_t w = 1; w < bodies[b].len + 64; w = w < 64 ? w + 1 : w * 3 / 2) {
            pass_run(bodies[b].body, bodies[b].len, w, &win);
            same_pass(&one, &win, bodies[b].what, w);
            pass_free(&win);
        }
        pass_free(&one);
    }
    free(gen);
}

/* Every prefix of a body, and every body with one byte changed, is accepted in windows exactly
 * when it is in one pass, with the same items. */
static void test_json_list_windows_reject_what_one_pass_rejects(void **state)
{
    size_t len = sizeof TRICKY - 1;
    char *b = malloc(len + 1);
    static const size_t windows[] = {1, 7, 64};
    static const char swap[] = {'}', '"', '\\', ']', ',', '\xff', ' ', 'U', '0'};
    for (size_t cut = 0; cut <= len; cut++) {
        for (size_t k = 0; k < 3; k++)
            compare_windows(TRICKY, cut, windows[k], "prefix");
        if (cut == len)
            break;
        memcpy(b, TRICKY, len);
        b[cut] = swap[cut % sizeof swap];
        compare_windows(b, len, 1 + cut % 13, "changed byte");
    }
    free(b);
}

/* A byte inserted anywhere — between two items, after items' ']' — is caught in windows whatever
 * token a window puts before it (the dummy element "0" must not absorb a following "U"). */
static void test_json_list_windows_inserted_byte(void **state)
{
    size_t len = sizeof TRICKY - 1;
    char *b = malloc(len + 2);
    for (size_t at = 0; at <= len; at++) {
        memcpy(b, TRICKY, at);
        b[at] = at % 2 ? 'U' : '7';
        memcpy(b + at + 1, TRICKY + at, len - at);
        for (size_t w = 1; w <= 40; w++)
            compare_windows(b, len + 1, w, "inserted byte");
    }
    free(b);
}

/* Items nest as deep in a window as in the list object: depth limits cut at the same place. */
static void test_json_list_windows_same_depth_limits(void **state)
{
    char *body = malloc(4096);
    for (size_t d = 500; d < 516; d++) {
        strcpy(body, "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\"},\"spec\":");
        size_t at = strlen(body);
        memset(body + at, '[', d);
        memset(body + at + d, ']', d);
        strcpy(body + at + 2 * d, "}]}");
        compare_windows(body, strlen(body), 64, "deep");
        struct pass one, win; /* strict mode counts depth from the document's root */
        pass_run_flags(body, strlen(body), 0, KC_DECODE_STRICT, &one);
        pass_run_flags(body, strlen(body), 64, KC_DECODE_STRICT, &win);
        same_pass(&one, &win, "deep, strict", d);
        pass_free(&one);
        pass_free(&win);
    }
    free(body);
}

/* Each body refused with KC_EPARSE in one pass and in windows of every size from 1 byte. */
static void refused_everywhere(const char *const *bodies, size_t n)
{
    for (size_t b = 0; b < n; b++) {
        size_t len = strlen(bodies[b]);
        struct pass one, win;
        pass_run(bodies[b], len, 0, &one);
        if (one.rc != KC_EPARSE)
            fail_msg("body %zu: %s in one pass, not KC_EPARSE: %s", b, kc_errno_name(one.rc),
                     bodies[b]);
        pass_free(&one);
        for (size_t w = 1; w <= len + 1; w++) {
            pass_run(bodies[b], len, w, &win);
            if (win.rc != KC_EPARSE)
                fail_msg("body %zu, window %zu: %s (%zu items), not KC_EPARSE: %s", b, w,
                         kc_errno_name(win.rc), win.n, bodies[b]);
            pass_free(&win);
        }
    }
}

/* fuzz_list finding windowed-accepts-invalid-item (tests/fuzz/corpus/list/): an item whose member
 * value, a string, is followed by ':' — {"metadatla":"{abels":[]} — with one '}' too many after
 * it. On-Demand's skip_child took the string for a key and the [] after it for its value, whose
 * bracket closed the item: the walk ended one '}' late. In 1-byte windows the item was delivered
 * ({"metadatla":"{abels":[]}}, invalid JSON stored as an object); one pass refused the body only
 * because its look-ahead (no kind before items) skips items by bracket count, and accepted it with
 * kind first. Both paths must refuse it, with KC_EPARSE inside the body (informer-semantics §2.1:
 * the LIST is the cache's state; malformed server data is refused, never stored). */
static void test_json_list_windows_string_then_colon(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "{\"items\":[{\"metadatla\":\"{abels\":[]}}]}", /* the finding, as found */
        "{\"kind\":\"L\",\"items\":[{\"metadatla\":\"{abels\":[]}}]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\"},\"spec\":\"a\":1}}]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\",\"creationTimestamp\":\"t\":{}}}}"
        "]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\",\"annotations\":{\"a\":\"b\":{}}}"
        "}}]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\",\"finalizers\":[\"f\":[]]}}]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\",\"ownerReferences\":[{\"uid\":"
        "\"u\","
        "\"blockOwnerDeletion\":\"b\":{}}}]}}]}",
        "{\"kind\":\"L\",\"metadata\":{\"selfLink\":\"s\":[]}},\"items\":[]}",
        "{\"kind\":\"L\",\"x\":\"y\":[]},\"items\":[]}",
    };
    refused_everywhere(bodies, sizeof bodies / sizeof bodies[0]);
}

/* fuzz_list (its check that what one pass accepts is one balanced document) then found
 * {"a"::[[[[…]]]]]}: a ':' where a member's value should be, which skip_child takes for an opening
 * bracket (and ',' likewise; ']' '}' for the value's end): the walk ended one bracket late (or
 * early) and one pass and windows both accepted an unbalanced body. No value is KC_EPARSE at its
 * token (the same rule: malformed server data is refused, never stored). */
static void test_json_list_windows_no_value(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "{\"a\"::[[[[\"namee\":\"n\",:\"u\"]]]]]}", /* the finding, as found */
        "{\"kind\":\"L\",\"a\":,\"items\":[]}}",
        "{\"kind\":\"L\",\"items\":[{\"a\":}}]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\",\"b\":]}}]}",
        "{\"kind\":\"L\",\"items\":[{\"metadata\":{\"name\":\"x\",\"finalizers\":[:[]]]}}]}",
    };
    refused_everywhere(bodies, sizeof bodies / sizeof bodies[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_list_windows_match_one_pass),
        cmocka_unit_test(test_json_list_windows_reject_what_one_pass_rejects),
        cmocka_unit_test(test_json_list_windows_same_depth_limits),
        cmocka_unit_test(test_json_list_windows_inserted_byte),
        cmocka_unit_test(test_json_list_windows_string_then_colon),
        cmocka_unit_test(test_json_list_windows_no_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

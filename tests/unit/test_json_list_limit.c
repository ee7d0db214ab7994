/*
 * test_json_list_limit — an items[] element over the object size limit in a LIST body decoded in
 * windows (json/sj_list.cpp) is rejected at the cost of a window, not of its size (issue 29
 * point 6), and what is within the limit still decodes.
 *
 * The scratch is measured in bytes: a kc_list_decoder keeps its scratch (the window's copy and
 * simdjson's index) after the call, so the heap it holds then (mallinfo2: uordblks + hblkhd,
 * which counts glibc's own mmapped blocks) is the largest window it needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include "core/slab.h" /* kc__slab_set_enabled */
#include "json/sj.h"   /* kc__sj_list_window_set */

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OBJ ((size_t)16 << 10) /* the limit: raw items up to 2 * 16 KiB + 4096 bytes */

static size_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* Counts the items; each must have the kind and apiVersion the list injects. */
static int count(void *ud, kc_obj *o)
{
    assert_string_equal(kc_obj_kind(o), "ConfigMap");
    assert_string_equal(kc_obj_api_version(o), "v1");
    (*(size_t *)ud)++;
    kc_obj_unref(o);
    return 0;
}

/* A ConfigMapList: `small` items of ~100 bytes, one item whose data.x is `big` letters (none
 * when 0), then `after` small items. malloc'd, *len set. */
static char *body_with(size_t small, size_t big, size_t after, const char *big_tail, size_t *len)
{
    size_t cap = (small + after) * 128 + big + 512;
    char *b = malloc(cap);
    assert_non_null(b);
    size_t at = (size_t)sprintf(b, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":"
                                   "{\"resourceVersion\":\"5\"},\"items\":[");
    size_t k = 0;
    for (size_t i = 0; i < small + after + (big ? 1 : 0); i++) {
        if (k++)
            b[at++] = ',';
        if (big && i == small) {
            at += (size_t)sprintf(b + at, "{\"metadata\":{\"name\":\"big\",\"namespace\":\"d\"},"
                                          "\"data\":{\"x\":\"");
            memset(b + at, 'a', big);
            at += big;
            at += (size_t)sprintf(b + at, "%s", big_tail);
            continue;
        }
        at += (size_t)sprintf(b + at,
                              "{\"metadata\":{\"name\":\"c%zu\",\"namespace\":\"d\"},"
                              "\"data\":{\"x\":\"y\"}}",
                              i);
    }
    at += (size_t)sprintf(b + at, "]}");
    *len = at;
    return b;
}

/* body (from body_with, freed) with kind and apiVersion after items: the order that made the
 * decoder leave the body to the one pass, which indexed it whole. */
static char *items_first(char *body, size_t *len)
{
    static const char head[] = "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",";
    static const char tail[] = ",\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\"}";
    size_t h = sizeof head - 1, n = *len - h + sizeof tail - 1;
    assert_memory_equal(body, head, h);
    char *b = malloc(n + 1);
    assert_non_null(b);
    b[0] = '{';
    memcpy(b + 1, body + h, *len - h - 1); /* all but the head and the closing brace */
    memcpy(b + *len - h, tail, sizeof tail);
    free(body);
    *len = n;
    return b;
}

static int setup(void **st)
{
    (void)st;
    kc__slab_set_enabled(false); /* objects on the heap: nothing mapped behind mallinfo2's back */
    kc__sj_list_window_set(64u << 10, 8u << 10); /* bodies over 64 KiB in windows of 8 KiB */
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    kc__sj_list_window_set(0, 0);
    return 0;
}

/* One decode with a fresh decoder (limit MAX_OBJ): its code, items delivered, and the scratch it
 * kept afterwards. */
static int decode(const char *body, size_t len, size_t *items, size_t *scratch, kc_error *e)
{
    kc_decode_opts o = {.max_object_size = MAX_OBJ};
    kc_list_decoder *dec = NULL;
    assert_int_equal(kc_list_decoder_new(&o, &dec, NULL), 0);
    size_t h0 = heap_in_use();
    *items = 0;
    int rc = kc_list_decoder_decode(dec, body, len, NULL, count, items, e);
    size_t h1 = heap_in_use();
    *scratch = h1 > h0 ? h1 - h0 : 0;
    kc_list_decoder_free(dec);
    return rc;
}

/* The body's one big item is rejected as over the limit, at its first byte, with the `before`
 * items ahead of it delivered and at most a few windows of the limit's size of scratch kept. */
static void check_too_large(const char *body, size_t len, size_t before)
{
    size_t items, scratch;
    kc_error e = KC_ERROR_INIT;
    int rc = decode(body, len, &items, &scratch, &e);
    fprintf(stderr, "%zu bytes: %s at %lld: %s; %zu items; scratch kept %zu KiB\n", len,
            kc_errno_name(rc), (long long)e.offset, e.message ? e.message : "", items,
            scratch >> 10);
    assert_int_equal(rc, KC_ETOOLARGE);
    assert_non_null(strstr(e.message, "max_object_size"));
    assert_int_equal(items, before);
    assert_int_equal(e.offset, (long long)(strstr(body, "{\"metadata\":{\"name\":\"big\"") - body));
    assert_true(scratch < (size_t)1 << 20);
    kc_error_clear(&e);
}

/* A 4 MB item (250x the limit) after 10 small ones: unfixed, the windows doubled until the item
 * fitted (and a window ending inside its string was moved past the string's end): 33 MiB of
 * scratch kept. */
static void test_json_list_limit_huge_item_costs_a_window(void **st)
{
    (void)st;
    size_t len;
    char *body = body_with(10, (size_t)4 << 20, 5, "\"}}", &len);
    check_too_large(body, len, 10);
    free(body);
}

/* The same with kind and apiVersion after items: a first pass over the items in windows finds
 * them, bounded alike (unfixed: the body went to the one pass, +132 MiB of scratch for a 128 MiB
 * item); a body of small items in that order decodes whole, kind and apiVersion injected. */
static void test_json_list_limit_items_before_kind(void **st)
{
    (void)st;
    size_t len, items, scratch;
    char *body = items_first(body_with(10, (size_t)4 << 20, 5, "\"}}", &len), &len);
    check_too_large(body, len, 0); /* found in the first pass: nothing delivered */
    free(body);
    body = items_first(body_with(2000, 0, 0, "", &len), &len);
    assert_true(len > (64u << 10));
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(decode(body, len, &items, &scratch, &e), 0);
    assert_int_equal(items, 2000);
    free(body);
}

/* A big item whose string is escapes only (\\ and \", so a window bound falls in a run of
 * backslashes), and one of 40000 short members (no string reaches a window bound): the same. */
static void test_json_list_limit_huge_item_of_escapes_or_members(void **st)
{
    (void)st;
    size_t len;
    char *body = body_with(2, (size_t)2 << 20, 0, "\"}}", &len);
    char *s = strstr(body, "{\"metadata\":{\"name\":\"big\"");
    s = strstr(s, "\"x\":\"") + 5;
    for (size_t i = 0; i + 4 <= ((size_t)2 << 20); i += 4)
        memcpy(s + i, "\\\\\\\"", 4);
    check_too_large(body, len, 2);
    free(body);
    body = malloc((size_t)1 << 20);
    assert_non_null(body);
    len = (size_t)sprintf(body, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{},"
                                "\"items\":[{\"metadata\":{\"name\":\"big\",\"namespace\":\"d\"},"
                                "\"data\":{");
    for (int i = 0; i < 40000; i++)
        len += (size_t)sprintf(body + len, "%s\"k%d\":\"v%d\"", i ? "," : "", i, i);
    len += (size_t)sprintf(body + len, "}}]}");
    check_too_large(body, len, 0);
    free(body);
}

/* Within the limit (a compact item of 15 KB: larger than the 8 KiB window, under the 16 KiB
 * limit) everything decodes; a fault just after that big item's string is reported as the fault
 * (KC_EPARSE), with the items before it delivered. */
static void test_json_list_limit_within_the_limit_decodes(void **st)
{
    (void)st;
    size_t len, items, scratch;
    char *body = body_with(300, 15000, 700, "\"}}", &len);
    assert_true(len > (64u << 10));
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(decode(body, len, &items, &scratch, &e), 0);
    assert_int_equal(items, 1001);
    free(body);
    body = body_with(300, 15000, 700, "\"} x}", &len);
    int rc = decode(body, len, &items, &scratch, &e);
    fprintf(stderr, "%s at %lld: %s\n", kc_errno_name(rc), (long long)e.offset,
            e.message ? e.message : "");
    assert_int_equal(rc, KC_EPARSE);
    assert_int_equal(items, 300);
    kc_error_clear(&e);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_list_limit_huge_item_costs_a_window),
        cmocka_unit_test(test_json_list_limit_items_before_kind),
        cmocka_unit_test(test_json_list_limit_huge_item_of_escapes_or_members),
        cmocka_unit_test(test_json_list_limit_within_the_limit_decodes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

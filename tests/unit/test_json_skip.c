/*
 * test_json_skip — the table-driven sub-tree skip of the decoder (src/json/sj_skip.hpp): every
 * exit position inside its four-token groups, members read after a skipped one, the managedFields
 * cut, and documents that end before a skipped value closes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kc_obj *parse(const char *json, kc_error *err)
{
    kc_obj *obj = NULL;
    int r = kc_obj_parse(json, strlen(json), NULL, &obj, err);
    return r ? NULL : obj;
}

/* A spec of k array elements (k tokens plus brackets), so the closing bracket falls on every
 * position of the skip's groups of four as k varies; metadata and kind come after it and must
 * still be read, and managedFields (placed between labels and namespace) must be cut exactly. */
static void test_json_skip_every_group_position(void **state)
{
    (void)state;
    for (int k = 0; k < 24; k++) {
        char spec[512] = "{\"a\":[", mf[512] = "[";
        for (int i = 0; i < k; i++) {
            char item[32];
            snprintf(item, sizeof item, "%s{\"x\":[%d,{}]}", i ? "," : "", i);
            strcat(spec, item);
            snprintf(item, sizeof item, "%s[[%d]]", i ? "," : "", i);
            strcat(mf, item);
        }
        strcat(spec, "],\"b\":{\"c\":[[]]}}");
        strcat(mf, "]");
        char json[2048], want[2048];
        snprintf(json, sizeof json,
                 "{\"spec\":%s,\"metadata\":{\"name\":\"n%d\",\"labels\":{\"app\":\"w\"},"
                 "\"managedFields\":%s,\"namespace\":\"ns\"},\"kind\":\"Pod\",\"apiVersion\":"
                 "\"v1\",\"status\":[%s]}",
                 spec, k, mf, mf);
        snprintf(want, sizeof want,
                 "{\"spec\":%s,\"metadata\":{\"name\":\"n%d\",\"labels\":{\"app\":\"w\"},"
                 "\"namespace\":\"ns\"},\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"status\":[%s]}",
                 spec, k, mf);
        kc_error err = KC_ERROR_INIT;
        kc_obj *o = parse(json, &err);
        if (!o)
            fail_msg("k=%d: %s", k, err.message);
        char name[16];
        snprintf(name, sizeof name, "n%d", k);
        assert_string_equal(kc_obj_name(o), name);
        assert_string_equal(kc_obj_namespace(o), "ns"); /* read after the cut */
        assert_string_equal(kc_obj_kind(o), "Pod");     /* read after the skipped spec */
        assert_string_equal(kc_obj_label(o, "app"), "w");
        size_t n = 0;
        const char *text = kc_obj_json(o, &n);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(text, want, n);
        kc_obj_unref(o);
    }
}

/* A skipped value that never closes: an error naming the problem, nothing stored, no crash —
 * for a closing bracket missing at each depth of spec and of managedFields. */
static void test_json_skip_unclosed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"a\":[1,2,3}",
        "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"a\":[1,[2,[3]]}}",
        "{\"metadata\":{\"name\":\"a\"},\"spec\":[[[[[[[[[[]]]]]]]]]}",
        "{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"f\":{\"g\":{}}}}",
        "{\"metadata\":{\"name\":\"a\",\"managedFields\":[[[[[]]]]}}",
        "{\"spec\":{\"x\":{\"y\":{}},\"metadata\":{\"name\":\"a\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kc_error err = KC_ERROR_INIT;
        kc_obj *o = parse(bad[i], &err);
        if (o)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(err.code, KC_EPARSE);
        assert_non_null(err.message);
        kc_error_clear(&err);
    }
}

/* Scalars, empty containers and null where a container is usually skipped. */
static void test_json_skip_small_values(void **state)
{
    (void)state;
    static const char *ok[] = {
        "{\"spec\":1,\"metadata\":{\"name\":\"a\",\"managedFields\":[]},\"status\":\"s\"}",
        "{\"spec\":{},\"metadata\":{\"name\":\"a\",\"managedFields\":null},\"status\":[]}",
        "{\"spec\":[],\"status\":{},\"metadata\":{\"name\":\"a\"}}",
        "{\"spec\":null,\"status\":true,\"metadata\":{\"managedFields\":[{}],\"name\":\"a\"}}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        kc_error err = KC_ERROR_INIT;
        kc_obj *o = parse(ok[i], &err);
        if (!o)
            fail_msg("%s: %s", ok[i], err.message);
        assert_string_equal(kc_obj_name(o), "a");
        size_t n = 0;
        const char *text = kc_obj_json(o, &n);
        assert_null(memmem(text, n, "managedFields", 13));
        kc_obj_unref(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_skip_every_group_position),
        cmocka_unit_test(test_json_skip_unclosed),
        cmocka_unit_test(test_json_skip_small_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

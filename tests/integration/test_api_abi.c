/*
 * The struct-size handshake through the public API (docs/abi.md): a caller's struct shorter than
 * the library's gets the defaults for the missing fields; a longer one is accepted when the
 * unknown tail is zero and refused with KC_EUNSUPPORTED naming the struct otherwise; a nested
 * pointer whose _size was left 0 is KC_EINVAL; a result is written only up to the caller's size.
 * The real functions are called by their parenthesised names, as a program built against another
 * header version would through the macros.
 */
#include "kcache.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static const char POD[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                          "\"managedFields\":[{\"manager\":\"m\"}]}}";

/* A caller built against a newer header: kc_decode_opts with one more field. */
typedef struct newer_decode_opts {
    kc_decode_opts known;
    uint64_t future;
} newer_decode_opts;

static void test_api_abi_longer_struct_zero_tail_accepted(void **st)
{
    newer_decode_opts o = {.known = {.flags = KC_DECODE_KEEP_MANAGED_FIELDS}};
    kc_obj *obj = NULL;
    assert_int_equal((kc_obj_parse)(POD, strlen(POD), &o.known, sizeof o, &obj, NULL), 0);
    assert_non_null(strstr(kc_obj_json(obj, NULL), "managedFields")); /* the known field applied */
    kc_obj_unref(obj);
}

static void test_api_abi_longer_struct_unknown_field_refused(void **st)
{
    newer_decode_opts o = {.future = 1};
    kc_obj *obj = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal((kc_obj_parse)(POD, strlen(POD), &o.known, sizeof o, &obj, &err),
                     KC_EUNSUPPORTED);
    assert_null(obj);
    assert_non_null(err.message);
    assert_non_null(strstr(err.message, "kc_decode_opts"));
    kc_error_clear(&err);
}

/* A caller built against an older header that had only `flags`: max_object_size is the default. */
static void test_api_abi_shorter_struct_gets_defaults(void **st)
{
    struct {
        kc_decode_opts o;
    } old;
    memset(&old, 0, sizeof old);
    old.o.flags = KC_DECODE_KEEP_MANAGED_FIELDS;
    old.o.max_object_size = 1; /* past the old size: must not be read */
    kc_obj *obj = NULL;
    size_t old_size = offsetof(kc_decode_opts, max_object_size);
    assert_int_equal((kc_obj_parse)(POD, strlen(POD), &old.o, old_size, &obj, NULL), 0);
    assert_non_null(strstr(kc_obj_json(obj, NULL), "managedFields"));
    kc_obj_unref(obj);
}

static void test_api_abi_nested_size_zero_is_inval(void **st)
{
    kc_server_faults f = {.watch_delay_max_ms = 5};
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true, .faults = &f}; /* no faults_size */
    kc_server *srv = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_server_new(&so, &srv, &err), KC_EINVAL);
    assert_null(srv);
    assert_non_null(strstr(err.message, "kc_server_opts.faults"));
    kc_error_clear(&err);
    so.faults_size = sizeof f;
    assert_int_equal(kc_server_new(&so, &srv, &err), 0);
    kc_server_faults got;
    kc_server_get_faults(srv, &got);
    assert_int_equal(got.watch_delay_max_ms, 5); /* the nested struct was applied */
    kc_server_free(srv);
}

/* A caller built before list_delay_* existed passes the old sizeof, whose tail padding (after
 * watch_stall) it need not have zeroed: no list delay may come out of those bytes. */
static void test_api_abi_old_faults_padding_not_read(void **st)
{
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true};
    kc_server *srv = NULL;
    assert_int_equal(kc_server_new(&so, &srv, NULL), 0);
    kc_server_faults f;
    memset(&f, 0x5a, sizeof f); /* garbage in the padding, and past the old size */
    size_t end = offsetof(kc_server_faults, watch_stall) + sizeof f.watch_stall;
    size_t al = _Alignof(kc_server_faults), old_size = (end + al - 1) / al * al;
    assert_true(old_size <= offsetof(kc_server_faults, list_delay_min_ms));
    memset(&f, 0, end);
    f.watch_delay_max_ms = 7;
    (kc_server_set_faults)(srv, &f, old_size);
    kc_server_faults got;
    kc_server_get_faults(srv, &got);
    assert_int_equal(got.watch_delay_max_ms, 7);
    assert_int_equal(got.list_delay_min_ms, 0);
    assert_int_equal(got.list_delay_max_ms, 0);
    kc_server_free(srv);
}

/* The first n bytes of b are 0 and the following len - n keep the 0x5a they were filled with. */
static void assert_written_up_to(const void *b, size_t n, size_t len)
{
    const unsigned char *p = b;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(p[i], 0);
    for (size_t i = n; i < len; i++)
        assert_int_equal(p[i], 0x5a);
}

/* A result struct is written up to the caller's size only. */
static void test_api_abi_result_written_up_to_size(void **st)
{
    struct {
        kc_informer_status s;
        unsigned char guard[16];
    } buf;
    memset(&buf, 0x5a, sizeof buf);
    size_t old_size = offsetof(kc_informer_status, objects);
    (kc_informer_get_status)(NULL, &buf.s, old_size); /* NULL informer: zeros */
    assert_written_up_to(&buf, old_size, sizeof buf);
    struct {
        kc_controller_stats s;
        unsigned char guard[16];
    } cbuf;
    memset(&cbuf, 0x5a, sizeof cbuf);
    old_size = offsetof(kc_controller_stats, enqueued);
    (kc_controller_get_stats)(NULL, &cbuf.s, old_size); /* NULL controller: zeros */
    assert_written_up_to(&cbuf, old_size, sizeof cbuf);
}

static void test_api_abi_struct_sizes_stable_for_arrays(void **st)
{
    /* Array dimensions are literals, not enum counts (docs/abi.md). */
    assert_int_equal(sizeof(((kc_server_faults *)0)->rate_429) / sizeof(double),
                     KC_SERVER_FAULT_VERBS);
    assert_true(KC_SERVER_VERB__COUNT <= KC_SERVER_FAULT_VERBS);
    assert_int_equal(sizeof(((kc_informer_status *)0)->watermark), 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_abi_longer_struct_zero_tail_accepted),
        cmocka_unit_test(test_api_abi_longer_struct_unknown_field_refused),
        cmocka_unit_test(test_api_abi_shorter_struct_gets_defaults),
        cmocka_unit_test(test_api_abi_nested_size_zero_is_inval),
        cmocka_unit_test(test_api_abi_old_faults_padding_not_read),
        cmocka_unit_test(test_api_abi_result_written_up_to_size),
        cmocka_unit_test(test_api_abi_struct_sizes_stable_for_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Every public function accepts NULL handles (issue 16 point 8): a function taking a handle
 * returns KC_EINVAL for NULL (err, when given, says which argument), destructors and void
 * functions do nothing, getters return their documented "nothing" value (NULL, "", 0, false,
 * KC_EINVAL for an int). Each entry of CHECKS calls one function with NULL for every pointer.
 *
 * The table is checked against the headers: every KC_API function declared in
 * include/kcache/ (every .h) must have an entry (and every entry must still exist), so a new public
 * function cannot skip this test.
 */
#include "kcache.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_decls.h" /* after cmocka: it asserts */

#define INVAL(call) assert_int_equal((call), KC_EINVAL)

/* An int call with a kc_error: KC_EINVAL and a message. */
#define INVAL_ERR(call_with_e)                                                                     \
    do {                                                                                           \
        kc_error e = KC_ERROR_INIT;                                                                \
        assert_int_equal((call_with_e), KC_EINVAL);                                                \
        assert_int_equal(e.code, KC_EINVAL);                                                       \
        assert_non_null(e.message);                                                                \
        kc_error_clear(&e);                                                                        \
    } while (0)

static const kc_gvr CM = {"", "v1", "configmaps"};

static void c_cache(void)
{
    INVAL_ERR(kc_cache_new(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cache_add_indexer(NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cache_get_informer(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cache_wait_synced(NULL, 0, &e));
    assert_false(kc_cache_has_synced(NULL));
    assert_false(kc_cache_ready(NULL));
    INVAL(kc_cache_sync_fd(NULL));
    assert_int_equal(kc_cache_informer_count(NULL), 0);
    assert_null(kc_cache_informer_at(NULL, 0));
    assert_false(kc_cache_informer_required(NULL, 0));
    kc_cache_stop(NULL);
    kc_cache_free(NULL);
}

static void c_cached(void)
{
    INVAL_ERR(kc_cached_client_new(NULL, NULL, NULL, NULL, &e));
    kc_cached_client_free(NULL);
    INVAL(kc_cached_client_set_fence(NULL, NULL));
    kc_cached_client_stats st;
    memset(&st, 0xff, sizeof(st));
    kc_cached_client_get_stats(NULL, &st);
    assert_int_equal(st.waits, 0);
    kc_cached_client_get_stats(NULL, NULL);
    INVAL_ERR(kc_cached_client_get(NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_list(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_list_by_index(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    kc_obj_array_free(NULL, 3);
    INVAL_ERR(kc_cached_client_create(NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_update(NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_update_status(NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_patch(NULL, NULL, NULL, NULL, KC_PATCH_MERGE, NULL, 0, NULL, NULL,
                                     NULL, &e));
    INVAL_ERR(kc_cached_client_apply(NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_delete(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
}

static void c_event(void)
{
    INVAL_ERR(kc_event_recorder_new(NULL, NULL, NULL, &e));
    kc_event_recorder_free(NULL);
    kc_event_ref ref = {"v1", "Pod", "default", "p", NULL, NULL, NULL};
    INVAL(kc_event_recorder_record(NULL, &ref, KC_EVENT_NORMAL, "Reason", "message"));
    INVAL(kc_event_recorder_record(NULL, NULL, NULL, NULL, "%s", ""));
    INVAL(kc_event_recorder_record_obj(NULL, NULL, KC_EVENT_NORMAL, "Reason", "message"));
    INVAL(kc_event_recorder_record_action(NULL, &ref, NULL, KC_EVENT_NORMAL, "Reason", "Act", "m"));
    INVAL_ERR(kc_event_recorder_flush(NULL, 0, &e));
    kc_event_recorder_stats st;
    memset(&st, 0xff, sizeof(st));
    kc_event_recorder_get_stats(NULL, &st);
    assert_int_equal(st.recorded, 0);
    assert_int_equal(st.queued, 0);
    kc_event_recorder_get_stats(NULL, NULL);
    assert_null(kc_event_recorder_metrics_text(NULL));
    assert_null(kc_event_recorder_metrics_render(NULL));
}

static void c_client(void)
{
    INVAL_ERR(kc_client_new(NULL, NULL, NULL, &e));
    kc_client_free(NULL);
    assert_null(kc_client_namespace(NULL));
    kc_client_stats cst = {.bytes_received = 7};
    kc_client_get_stats(NULL, &cst);
    assert_int_equal(cst.bytes_received, 0);
    kc_client_get_stats(NULL, NULL);
    INVAL_ERR(kc_cancel_new(NULL, &e));
    kc_cancel *c = NULL;
    assert_int_equal(kc_cancel_new(&c, NULL), 0);
    assert_non_null(c);
    kc_cancel_free(c);
    kc_cancel_fire(NULL);
    assert_false(kc_cancel_fired(NULL));
    kc_cancel_free(NULL);
    INVAL_ERR(kc_client_get(NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_get(NULL, &CM, "default", "x", NULL, &e)); /* a valid gvr, no client */
    INVAL_ERR(kc_client_get_table(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_list(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_list_all(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_watch(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_create(NULL, NULL, NULL, NULL, 0, NULL, NULL, &e));
    INVAL_ERR(kc_client_update(NULL, NULL, NULL, NULL, 0, NULL, NULL, &e));
    INVAL_ERR(kc_client_update_status(NULL, NULL, NULL, NULL, 0, NULL, NULL, &e));
    INVAL_ERR(kc_client_patch(NULL, NULL, NULL, NULL, KC_PATCH_MERGE, NULL, 0, NULL, NULL, &e));
    INVAL_ERR(kc_client_delete(NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_delete_collection(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_client_raw(NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_json_format(NULL, NULL, &e, NULL));
    INVAL_ERR(kc_client_resolve(NULL, NULL, NULL, &e));
    kc_resource_info_clear(NULL);
    INVAL(kc_client_discovery_invalidate(NULL));
}

static void c_common_config(void)
{
    assert_non_null(kc_version());
    INVAL_ERR(kc_config_load(NULL, NULL, &e));
    INVAL_ERR(kc_config_from_url(NULL, NULL, NULL, NULL, &e));
    assert_null(kc_config_server(NULL));
    assert_null(kc_config_namespace(NULL));
    assert_null(kc_config_context(NULL));
    assert_null(kc_config_ref(NULL));
    kc_config_unref(NULL);
}

static void c_decode(void)
{
    kc_list_meta_clear(NULL);
    /* No handle: NULL with length 0 is an empty body, which is not a list. */
    assert_int_equal(kc_list_decode(NULL, 0, NULL, NULL, NULL, NULL, NULL), KC_EPARSE);
    INVAL_ERR(kc_list_decoder_new(NULL, NULL, &e));
    kc_list_decoder *d = NULL;
    assert_int_equal(kc_list_decoder_new(NULL, &d, NULL), 0);
    assert_non_null(d);
    kc_list_decoder_free(d);
    INVAL_ERR(kc_list_decoder_decode(NULL, NULL, 0, NULL, NULL, NULL, &e));
    kc_list_decoder_trim(NULL);
    kc_list_decoder_free(NULL);
    assert_non_null(kc_watch_type_name((kc_watch_type)0));
    INVAL_ERR(kc_watch_decoder_new(NULL, NULL, &e));
    kc_watch_decoder *w = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &w, NULL), 0);
    assert_non_null(w);
    kc_watch_decoder_free(w);
    INVAL_ERR(kc_watch_decoder_feed(NULL, NULL, 0, NULL, NULL, &e));
    INVAL_ERR(kc_watch_decoder_finish(NULL, NULL, NULL, &e));
    kc_watch_decoder_reset(NULL);
    kc_watch_decoder_free(NULL);
}

static void c_error(void)
{
    assert_non_null(kc_strerror(0));
    assert_non_null(kc_errno_name(0));
    kc_error_init(NULL);
    kc_error_clear(NULL);
    assert_int_equal(kc_error_set(NULL, KC_EIO, "x"), KC_EIO);
    assert_int_equal(kc_errno_from_http(200, NULL), 0);
    assert_int_equal(kc_status_parse(NULL, 0, NULL), KC_EPARSE); /* empty: not a Status */
}

static void c_log(void)
{
    /* No handle: NULL sink = the default; NULL subsystem/message are tolerated. */
    assert_int_equal(kc_log_set(NULL, NULL, KC_LOG_LEVEL_WARN), 0);
    assert_int_equal(kc_log_set(NULL, NULL, (kc_log_level)99), KC_EINVAL);
    (void)kc_log_enabled(KC_LOG_LEVEL_DEBUG);
    kc_log_write(KC_LOG_LEVEL_ERROR, NULL, NULL);
    kc_log_stderr(NULL, KC_LOG_LEVEL_DEBUG, NULL, NULL); /* "kcache debug app: " on stderr */
    assert_non_null(kc_log_level_name((kc_log_level)-1));
}

static void c_health(void)
{
    INVAL_ERR(kc_health_new(NULL, NULL, NULL, NULL, &e));
    assert_null(kc_health_url(NULL));
    INVAL(kc_health_port(NULL));
    assert_null(kc_health_metrics_text(NULL));
    INVAL(kc_health_add_metrics_source(NULL, NULL, NULL));
    INVAL(kc_health_remove_metrics_source(NULL, NULL, NULL));
    INVAL(kc_health_add_informer(NULL, NULL, true));
    INVAL(kc_health_remove_informer(NULL, NULL));
    kc_health_free(NULL);
}

static void c_webhook(void)
{
    INVAL_ERR(kc_webhook_server_new(NULL, NULL, &e));
    INVAL_ERR(kc_webhook_server_add_validating(NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_webhook_server_add_mutating(NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_webhook_server_add_conversion(NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_webhook_server_start(NULL, &e));
    INVAL(kc_webhook_server_port(NULL));
    assert_null(kc_webhook_server_url(NULL));
    assert_null(kc_webhook_server_health_url(NULL));
    assert_false(kc_webhook_server_ready(NULL));
    INVAL_ERR(kc_webhook_server_reload_certs(NULL, &e));
    assert_null(kc_webhook_server_metrics_text(NULL));
    INVAL(kc_webhook_server_stop(NULL));
    kc_webhook_server_free(NULL);
    INVAL_ERR(kc_webhook_cert_generate(NULL, NULL, &e));
}

static void c_informer(void)
{
    INVAL_ERR(kc_informer_new(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_informer_start(NULL, &e));
    INVAL_ERR(kc_informer_set_shard_ranges(NULL, KC_SHARD_FIELD_UID, NULL, 0, &e));
    kc_informer_stop(NULL);
    kc_informer_free(NULL);
    assert_null(kc_informer_store(NULL));
    assert_string_equal(kc_informer_name(NULL), "");
    assert_false(kc_informer_has_synced(NULL));
    assert_false(kc_informer_ready(NULL));
    INVAL_ERR(kc_informer_wait_synced(NULL, 0, &e));
    INVAL(kc_informer_sync_fd(NULL));
    assert_string_equal(kc_informer_phase_name((kc_informer_phase)99), "unknown");
    kc_informer_status st;
    memset(&st, 0xff, sizeof(st));
    kc_informer_get_status(NULL, &st);
    assert_int_equal(st.objects, 0);
    assert_false(st.synced);
    kc_informer_get_status(NULL, NULL);
    INVAL_ERR(kc_informer_add_handler(NULL, NULL, NULL, NULL, &e));
    kc_informer_remove_handler(NULL, NULL);
    assert_false(kc_informer_reg_synced(NULL));
    INVAL_ERR(kc_informer_reg_wait_synced(NULL, 0, &e));
    assert_false(kc_informer_reg_lagging(NULL));
    INVAL_ERR(kc_informer_reg_wait_idle(NULL, 0, &e));
}

static void c_obj(void)
{
    INVAL_ERR(kc_obj_parse("{}", 2, NULL, NULL, &e)); /* ret_obj is required */
    assert_true(kc_obj_parse(NULL, 0, NULL, NULL, NULL) < 0);
    assert_null(kc_obj_ref(NULL));
    kc_obj_unref(NULL);
    size_t len = 7;
    assert_string_equal(kc_obj_json(NULL, &len), "");
    assert_int_equal(len, 0);
    assert_string_equal(kc_obj_api_version(NULL), "");
    assert_string_equal(kc_obj_kind(NULL), "");
    assert_string_equal(kc_obj_namespace(NULL), "");
    assert_string_equal(kc_obj_name(NULL), "");
    assert_string_equal(kc_obj_uid(NULL), "");
    assert_string_equal(kc_obj_resource_version(NULL), "");
    assert_string_equal(kc_obj_controller_uid(NULL), "");
    assert_int_equal(kc_obj_rv_int(NULL), 0);
    assert_int_equal(kc_obj_generation(NULL), 0);
    assert_false(kc_obj_deleting(NULL));
    assert_int_equal(kc_obj_finalizer_count(NULL), 0);
    assert_int_equal(kc_obj_owner_count(NULL), 0);
    assert_null(kc_obj_label(NULL, NULL));
    assert_int_equal(kc_obj_label_count(NULL), 0);
    INVAL(kc_obj_label_at(NULL, 0, NULL, NULL));
    INVAL_ERR(kc_obj_get_string(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_obj_get_int(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_obj_get_bool(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_obj_get_raw(NULL, NULL, NULL, NULL, &e));
    assert_int_equal(kc_obj_heap_size(NULL), 0);
}

static void c_obj_iter_owner_condition(void)
{
    assert_string_equal(kc_obj_controller_api_version(NULL), "");
    assert_string_equal(kc_obj_controller_kind(NULL), "");
    assert_string_equal(kc_obj_controller_name(NULL), "");
    INVAL_ERR(kc_obj_iter_new(NULL, "", NULL, &e));
    INVAL(kc_obj_iter_next(NULL));
    assert_null(kc_obj_iter_key(NULL, NULL));
    assert_int_equal(kc_obj_iter_type(NULL), KC_JSON_NULL);
    INVAL(kc_obj_iter_string(NULL, NULL, NULL));
    INVAL(kc_obj_iter_int(NULL, NULL));
    INVAL(kc_obj_iter_double(NULL, NULL));
    INVAL(kc_obj_iter_bool(NULL, NULL));
    INVAL(kc_obj_iter_raw(NULL, NULL, NULL));
    kc_obj_iter_free(NULL);
    INVAL_ERR(kc_doc_set_controller_reference(NULL, NULL, &e));
    INVAL_ERR(kc_doc_set_owner_reference(NULL, NULL, &e));
    INVAL_ERR(kc_doc_remove_owner_reference(NULL, NULL, &e));
    assert_false(kc_obj_is_owned_by(NULL, NULL));
    assert_false(kc_doc_is_owned_by(NULL, NULL));
    assert_false(kc_obj_is_controlled_by(NULL, NULL));
    INVAL_ERR(kc_doc_condition_set(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_condition_find(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_condition_remove(NULL, NULL, NULL, &e));
    assert_false(kc_doc_condition_is_true(NULL, NULL));
    INVAL_ERR(kc_obj_condition_status(NULL, NULL, NULL, &e));
    assert_false(kc_obj_condition_is_true(NULL, NULL));
}

static void c_doc(void)
{
    assert_string_equal(kc_json_type_name((kc_json_type)-1), "?");
    INVAL_ERR(kc_doc_new(NULL, &e));
    INVAL_ERR(kc_doc_from_obj(NULL, NULL, &e));
    INVAL_ERR(kc_doc_parse(NULL, 0, NULL, &e));
    INVAL_ERR(kc_doc_copy(NULL, NULL, &e));
    kc_doc_free(NULL);
    INVAL_ERR(kc_doc_json(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_to_obj(NULL, NULL, &e));
    assert_false(kc_doc_equal(NULL, NULL));
    INVAL_ERR(kc_doc_merge_diff(NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_json_patch_diff(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_type(NULL, NULL, NULL, &e));
    assert_false(kc_doc_has(NULL, NULL));
    INVAL_ERR(kc_doc_get_string(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_get_int(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_get_double(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_get_bool(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_get_raw(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_count(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_set_string(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_set_stringn(NULL, NULL, NULL, 0, &e));
    INVAL_ERR(kc_doc_set_int(NULL, NULL, 0, &e));
    INVAL_ERR(kc_doc_set_double(NULL, NULL, 0, &e));
    INVAL_ERR(kc_doc_set_bool(NULL, NULL, false, &e));
    INVAL_ERR(kc_doc_set_null(NULL, NULL, &e));
    INVAL_ERR(kc_doc_set_raw(NULL, NULL, NULL, 0, &e));
    INVAL_ERR(kc_doc_set_doc(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_remove(NULL, NULL, &e));
    assert_int_equal(kc_json_pointer_escape(NULL, 5, NULL, 0), 0);
    INVAL_ERR(kc_doc_iter_new(NULL, NULL, NULL, &e));
    INVAL(kc_doc_iter_next(NULL));
    assert_null(kc_doc_iter_key(NULL, NULL));
    assert_int_equal(kc_doc_iter_type(NULL), KC_JSON_NULL);
    INVAL(kc_doc_iter_string(NULL, NULL, NULL));
    INVAL(kc_doc_iter_int(NULL, NULL));
    INVAL(kc_doc_iter_double(NULL, NULL));
    INVAL(kc_doc_iter_bool(NULL, NULL));
    INVAL(kc_doc_iter_raw(NULL, NULL, NULL));
    kc_doc_iter_free(NULL);
    INVAL_ERR(kc_base64_encode(NULL, 0, NULL, NULL, &e));
    INVAL_ERR(kc_base64_decode(NULL, 0, NULL, NULL, &e));
}

static void c_rv(void)
{
    assert_false(kc_rv_is_canonical(NULL));
    assert_int_equal(kc_rv_compare(NULL, NULL), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_parse(NULL, NULL, NULL), KC_EINVAL); /* ret NULL: checked first */
    uint64_t v = 0;
    assert_int_equal(kc_rv_parse(NULL, &v, NULL), KC_ENOT_COMPARABLE);
}

static const char *no_label(void *ud, const char *key)
{
    return NULL;
}

static void c_selector(void)
{
    INVAL_ERR(kc_label_selector_parse(NULL, NULL, &e));
    kc_label_selector_free(NULL);
    assert_true(kc_label_selector_empty(NULL));
    assert_true(kc_label_selector_match(NULL, NULL));
    assert_true(kc_label_selector_match_fn(NULL, no_label, NULL));
    char *s = kc_label_selector_string(NULL);
    assert_string_equal(s, "");
    free(s);
    INVAL_ERR(kc_field_selector_parse(NULL, NULL, &e));
    kc_field_selector_free(NULL);
    assert_true(kc_field_selector_empty(NULL));
    assert_int_equal(kc_field_selector_count(NULL), 0);
    assert_null(kc_field_selector_field(NULL, 0));
    assert_true(kc_field_selector_match(NULL, NULL));
    assert_true(kc_field_selector_match_fn(NULL, NULL, NULL));
    assert_null(kc_field_selector_pointer(NULL, 0));
    assert_null(kc_field_selector_exact(NULL, NULL));
    s = kc_field_selector_string(NULL);
    assert_string_equal(s, "");
    free(s);
}

static void c_shard(void)
{
    assert_int_equal(kc_shard_hash(NULL, 0), 0xcbf29ce484222325ull);
    assert_null(kc_shard_key(NULL, KC_SHARD_FIELD_UID));
    assert_false(kc_shard_range_contains(NULL, 0));
    INVAL(kc_shard_range_split(4, 0, NULL));
    INVAL_ERR(kc_shard_selector_parse(NULL, NULL, &e));
    INVAL_ERR(kc_shard_selector_new(KC_SHARD_FIELD_UID, NULL, 1, NULL, &e));
    kc_shard_selector_free(NULL);
    assert_null(kc_shard_selector_string(NULL));
    assert_int_equal(kc_shard_selector_field(NULL), KC_SHARD_FIELD_NONE);
    assert_int_equal(kc_shard_selector_count(NULL), 0);
    assert_null(kc_shard_selector_range(NULL, 0));
    assert_true(kc_shard_selector_match_hash(NULL, 0));
    assert_true(kc_shard_selector_match(NULL, NULL));
}

static void c_server(void)
{
    INVAL_ERR(kc_server_new(NULL, NULL, &e));
    INVAL_ERR(kc_server_start(NULL, &e));
    assert_null(kc_server_url(NULL));
    assert_null(kc_server_ca_pem(NULL));
    INVAL_ERR(kc_server_write_kubeconfig(NULL, NULL, &e));
    INVAL_ERR(kc_server_write_kubeconfig_as(NULL, NULL, NULL, &e));
    INVAL(kc_server_set_faults(NULL, NULL));
    kc_server_faults f;
    memset(&f, 0xff, sizeof(f));
    kc_server_get_faults(NULL, &f);
    assert_int_equal(f.watch_close_every, 0);
    kc_server_get_faults(NULL, NULL);
    INVAL(kc_server_compact(NULL));
    INVAL_ERR(kc_server_restart(NULL, KC_SERVER_RESTART_WIPE, &e));
    assert_int_equal(kc_server_current_rv(NULL), 0);
    kc_server_stop(NULL);
    kc_server_free(NULL);
    INVAL_ERR(kc_server_duration_parse(NULL, NULL, &e));
    INVAL_ERR(kc_server_faults_parse(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_server_seed_spec_check(NULL, &e));
    INVAL(kc_server_set_shard_selector_ignored(NULL, true));
    assert_false(kc_server_shard_selector_ignored(NULL));
}

static void c_store(void)
{
    INVAL_ERR(kc_store_new(NULL, NULL, &e));
    kc_store_stop(NULL);
    kc_store_free(NULL);
    INVAL_ERR(kc_store_add_indexer(NULL, NULL, NULL, NULL, &e));
    assert_null(kc_store_get(NULL, NULL, NULL));
    assert_null(kc_store_get_key(NULL, NULL));
    assert_int_equal(kc_store_len(NULL), 0);
    INVAL_ERR(kc_store_list(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_store_list_by_namespace(NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_store_list_by_index(NULL, NULL, NULL, NULL, NULL, &e));
    kc_obj_array_free(NULL, 3);
    char wm[8];
    INVAL(kc_store_watermark(NULL, wm, sizeof(wm)));
    assert_int_equal(kc_store_seq(NULL), 0);
    assert_int_equal(kc_store_key_seq(NULL, NULL, NULL), 0);
    INVAL_ERR(kc_store_check(NULL, NULL, &e));
    INVAL_ERR(kc_store_wait(NULL, NULL, 0, &e));
    kc_store_change_clear(NULL);
    INVAL_ERR(kc_store_apply(NULL, KC_WATCH_ADDED, NULL, NULL, &e));
    kc_store_bookmark(NULL, NULL);
    INVAL_ERR(kc_store_batch_new(NULL, NULL, &e));
    INVAL_ERR(kc_store_batch_add(NULL, NULL, &e));
    assert_int_equal(kc_store_batch_len(NULL), 0);
    kc_store_batch_free(NULL);
    INVAL_ERR(kc_store_replace(NULL, NULL, NULL, NULL, NULL, &e));
}

static void c_workqueue(void)
{
    INVAL_ERR(kc_workqueue_new(NULL, NULL, &e));
    INVAL(kc_workqueue_add(NULL, NULL));
    INVAL(kc_workqueue_add_after(NULL, NULL, 0));
    INVAL(kc_workqueue_add_rate_limited(NULL, NULL));
    INVAL(kc_workqueue_forget(NULL, NULL));
    INVAL(kc_workqueue_num_requeues(NULL, NULL));
    INVAL(kc_workqueue_get(NULL, 0, NULL));
    INVAL(kc_workqueue_done(NULL, NULL));
    INVAL(kc_workqueue_len(NULL));
    INVAL(kc_workqueue_add_with_priority(NULL, NULL, 0));
    INVAL(kc_workqueue_add_after_with_priority(NULL, NULL, 0, 0));
    INVAL(kc_workqueue_add_rate_limited_with_priority(NULL, NULL, 0));
    INVAL(kc_workqueue_get_with_priority(NULL, 0, NULL, NULL));
    kc_workqueue_shutdown(NULL);
    INVAL(kc_workqueue_shutdown_drain(NULL, 0));
    assert_null(kc_workqueue_metrics_text(NULL));
    assert_null(kc_workqueue_metrics_render(NULL));
    kc_workqueue_free(NULL);
}

static void c_podmeta(void)
{
    INVAL_ERR(kc_podmeta_new(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_podmeta_start(NULL, &e));
    kc_podmeta_stop(NULL);
    kc_podmeta_free(NULL);
    assert_null(kc_podmeta_pod_informer(NULL));
    assert_null(kc_podmeta_ns_informer(NULL));
    assert_false(kc_podmeta_ready(NULL));
    INVAL_ERR(kc_podmeta_wait_ready(NULL, 0, &e));
    INVAL(kc_podmeta_fd(NULL));
    assert_int_equal(kc_podmeta_fd_drain(NULL), KC_EINVAL);
    INVAL_ERR(kc_podmeta_lookup(NULL, NULL, NULL, &e));
    kc_podmeta_result_clear(NULL);
    assert_null(kc_podmeta_pod_ref(NULL));
    kc_podmeta_pod_unref(NULL);
    assert_null(kc_podmeta_ns_ref(NULL));
    kc_podmeta_ns_unref(NULL);
    assert_null(kc_podmeta_pod_obj(NULL));
    assert_false(kc_podmeta_pod_deleted(NULL));
    assert_int_equal(kc_podmeta_pod_deleted_at_ms(NULL), 0);
    assert_int_equal(kc_podmeta_pod_container_count(NULL), 0);
    INVAL(kc_podmeta_pod_container(NULL, 0, NULL));
    assert_int_equal(kc_podmeta_pod_find_container(NULL, NULL, NULL), -1);
    assert_null(kc_podmeta_ns_obj(NULL));
    size_t len = 7;
    assert_null(kc_podmeta_pod_get(NULL, KC_PODMETA_FIELD_NAME, &len));
    assert_int_equal(len, 0);
    assert_int_equal(kc_podmeta_pod_map_count(NULL, KC_PODMETA_LABELS), 0);
    INVAL(kc_podmeta_pod_map_at(NULL, KC_PODMETA_LABELS, 0, NULL, NULL, NULL));
    assert_null(kc_podmeta_pod_map_get(NULL, KC_PODMETA_LABELS, "app"));
    assert_int_equal(kc_podmeta_pod_owner_count(NULL), 0);
    INVAL(kc_podmeta_pod_owner(NULL, 0, NULL));
    assert_null(kc_podmeta_pod_json(NULL, &len));
    kc_podmeta_stats st;
    memset(&st, 0xff, sizeof st);
    kc_podmeta_get_stats(NULL, &st);
    assert_int_equal(st.pods, 0);
    assert_int_equal(st.lookups, 0);
    kc_podmeta_get_stats(NULL, NULL);
    assert_null(kc_podmeta_metrics_render(NULL));
}

static void c_leader(void)
{
    INVAL_ERR(kc_leader_elector_new(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_leader_elector_start(NULL, &e));
    INVAL(kc_leader_elector_stop(NULL));
    kc_leader_elector_free(NULL);
    assert_false(kc_leader_elector_is_leader(NULL));
    INVAL(kc_leader_elector_leader(NULL, NULL));
    assert_null(kc_leader_elector_identity(NULL));
    assert_null(kc_leader_elector_fence(NULL));
    assert_null(kc_leader_elector_metrics_render(NULL));
}

static void c_fence(void)
{
    INVAL_ERR(kc_fence_new(NULL, &e));
    kc_fence_free(NULL);
    assert_true(kc_fence_now_ns() > 0);
    kc_fence_set_valid_until(NULL, 1);
    assert_int_equal(kc_fence_valid_until(NULL), 0);
    assert_false(kc_fence_valid(NULL));
    INVAL_ERR(kc_fence_check(NULL, &e));
}

static void c_controller(void)
{
    INVAL_ERR(kc_controller_new(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_controller_own(NULL, NULL, &e));
    INVAL_ERR(kc_controller_watch(NULL, NULL, NULL, NULL, &e));
    INVAL(kc_controller_enqueue(NULL, NULL, NULL));
    INVAL_ERR(kc_controller_start(NULL, &e));
    INVAL(kc_controller_set_active(NULL, true));
    assert_false(kc_controller_active(NULL));
    kc_controller_get_stats(NULL, NULL);
    assert_null(kc_controller_cache(NULL));
    assert_null(kc_controller_client(NULL));
    assert_null(kc_controller_queue(NULL));
    assert_null(kc_controller_health_url(NULL));
    INVAL(kc_controller_stop(NULL));
    kc_controller_free(NULL);
}

static void c_coordinator(void)
{
    INVAL_ERR(kc_shard_coordinator_new(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_shard_coordinator_start(NULL, &e));
    INVAL(kc_shard_coordinator_stop(NULL));
    kc_shard_coordinator_free(NULL);
    assert_int_equal(kc_shard_coordinator_ranges(NULL), 0);
    assert_int_equal(kc_shard_coordinator_range_of(NULL, 1), 0);
    assert_false(kc_shard_coordinator_holds(NULL, 0));
    assert_null(kc_shard_coordinator_fence(NULL, 0));
    kc_shard_coordinator_get_stats(NULL, NULL);
}

/* Issue 32: the admission response calls (kcache/webhook.h; NULL response is KC_EINVAL). */
static void c_admission(void)
{
    INVAL(kc_admission_response_deny(NULL, 0, NULL, NULL));
    INVAL(kc_admission_response_warn(NULL, "w"));
    INVAL(kc_admission_response_annotate(NULL, "k", "v"));
    INVAL(kc_admission_response_set_object(NULL, NULL));
    INVAL(kc_admission_response_set_patch(NULL, "[]", 2));
}

/* Issue 31 points 5, 6: create-or-update / create-or-patch, finalizers (kcache/finalizer.h). */
static void c_idioms(void)
{
    assert_string_equal(kc_op_result_name((kc_op_result)-1), "?");
    INVAL_ERR(kc_cached_client_create_or_update(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_create_or_patch(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                               NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_add_finalizer(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    INVAL_ERR(kc_cached_client_remove_finalizer(NULL, NULL, NULL, NULL, NULL, NULL, NULL, &e));
    assert_false(kc_doc_finalizer_has(NULL, NULL));
    INVAL_ERR(kc_doc_finalizer_add(NULL, NULL, NULL, &e));
    INVAL_ERR(kc_doc_finalizer_remove(NULL, NULL, NULL, &e));
    assert_false(kc_obj_has_finalizer(NULL, NULL));
    INVAL_ERR(kc_controller_add_finalizer(NULL, NULL, &e));
}

/* ---- the table, and its check against the headers ------------------------------------------ */

/* Each group exercises the functions listed for it (names checked against the headers). */
typedef struct group {
    void (*run)(void);
    const char *functions; /* space-separated */
} group;

static const group GROUPS[] = {
    {c_cache, "kc_cache_new kc_cache_add_indexer kc_cache_get_informer kc_cache_wait_synced "
              "kc_cache_has_synced kc_cache_ready kc_cache_sync_fd kc_cache_informer_count "
              "kc_cache_informer_at kc_cache_informer_required kc_cache_stop kc_cache_free"},
    {c_cached,
     "kc_cached_client_new kc_cached_client_free kc_cached_client_get_stats "
     "kc_cached_client_set_fence "
     "kc_cached_client_get kc_cached_client_list kc_cached_client_list_by_index kc_obj_array_free "
     "kc_cached_client_create kc_cached_client_update kc_cached_client_update_status "
     "kc_cached_client_patch "
     "kc_cached_client_apply kc_cached_client_delete"},
    {c_event, "kc_event_recorder_new kc_event_recorder_free kc_event_recorder_record "
              "kc_event_recorder_record_obj kc_event_recorder_flush kc_event_recorder_get_stats "
              "kc_event_recorder_metrics_text kc_event_recorder_metrics_render "
              "kc_event_recorder_record_action"},
    {c_client, "kc_client_new kc_client_free kc_client_namespace kc_client_get_stats kc_cancel_new "
               "kc_cancel_fire "
               "kc_cancel_fired kc_cancel_free kc_client_get kc_client_get_table kc_client_list "
               "kc_client_list_all "
               "kc_client_watch kc_client_create kc_client_update kc_client_update_status "
               "kc_client_patch kc_client_delete kc_client_delete_collection kc_client_raw "
               "kc_json_format kc_client_resolve kc_resource_info_clear "
               "kc_client_discovery_invalidate"},
    {c_common_config, "kc_version kc_config_load kc_config_from_url kc_config_server "
                      "kc_config_namespace kc_config_context kc_config_ref kc_config_unref"},
    {c_decode, "kc_list_meta_clear kc_list_decode kc_list_decoder_new kc_list_decoder_decode "
               "kc_list_decoder_trim kc_list_decoder_free kc_watch_type_name "
               "kc_watch_decoder_new kc_watch_decoder_feed kc_watch_decoder_finish "
               "kc_watch_decoder_reset kc_watch_decoder_free"},
    {c_error, "kc_strerror kc_errno_name kc_error_init kc_error_clear kc_error_set "
              "kc_errno_from_http kc_status_parse"},
    {c_log, "kc_log_set kc_log_enabled kc_log_write kc_log_stderr kc_log_level_name"},
    {c_health, "kc_health_new kc_health_url kc_health_port kc_health_metrics_text "
               "kc_health_add_metrics_source kc_health_remove_metrics_source "
               "kc_health_add_informer kc_health_remove_informer kc_health_free"},
    {c_informer, "kc_informer_new kc_informer_start kc_informer_stop kc_informer_free "
                 "kc_informer_store kc_informer_name kc_informer_has_synced kc_informer_ready "
                 "kc_informer_wait_synced kc_informer_sync_fd kc_informer_phase_name "
                 "kc_informer_get_status kc_informer_add_handler kc_informer_remove_handler "
                 "kc_informer_reg_synced kc_informer_reg_wait_synced kc_informer_reg_lagging "
                 "kc_informer_reg_wait_idle kc_informer_set_shard_ranges"},
    {c_obj, "kc_obj_parse kc_obj_ref kc_obj_unref kc_obj_json kc_obj_api_version kc_obj_kind "
            "kc_obj_namespace kc_obj_name kc_obj_uid kc_obj_resource_version "
            "kc_obj_controller_uid kc_obj_rv_int kc_obj_generation kc_obj_deleting "
            "kc_obj_finalizer_count kc_obj_owner_count kc_obj_label kc_obj_label_count "
            "kc_obj_label_at kc_obj_get_string kc_obj_get_int kc_obj_get_bool kc_obj_get_raw "
            "kc_obj_heap_size"},
    {c_obj_iter_owner_condition,
     "kc_obj_controller_api_version kc_obj_controller_kind kc_obj_controller_name "
     "kc_obj_iter_new kc_obj_iter_next kc_obj_iter_key kc_obj_iter_type kc_obj_iter_string "
     "kc_obj_iter_int kc_obj_iter_double kc_obj_iter_bool kc_obj_iter_raw kc_obj_iter_free "
     "kc_doc_set_controller_reference kc_doc_set_owner_reference kc_doc_remove_owner_reference "
     "kc_obj_is_owned_by kc_doc_is_owned_by kc_obj_is_controlled_by kc_doc_condition_set "
     "kc_doc_condition_find kc_doc_condition_remove kc_doc_condition_is_true "
     "kc_obj_condition_status kc_obj_condition_is_true"},
    {c_doc, "kc_json_type_name kc_doc_new kc_doc_from_obj kc_doc_parse kc_doc_copy kc_doc_free "
            "kc_doc_json kc_doc_to_obj kc_doc_equal kc_doc_merge_diff kc_doc_json_patch_diff "
            "kc_doc_type kc_doc_has "
            "kc_doc_get_string kc_doc_get_int kc_doc_get_double kc_doc_get_bool kc_doc_get_raw "
            "kc_doc_count kc_doc_set_string kc_doc_set_stringn kc_doc_set_int kc_doc_set_double "
            "kc_doc_set_bool kc_doc_set_null kc_doc_set_raw kc_doc_set_doc kc_doc_remove "
            "kc_json_pointer_escape kc_doc_iter_new kc_doc_iter_next kc_doc_iter_key "
            "kc_doc_iter_type kc_doc_iter_string kc_doc_iter_int kc_doc_iter_double "
            "kc_doc_iter_bool kc_doc_iter_raw kc_doc_iter_free kc_base64_encode kc_base64_decode"},
    {c_rv, "kc_rv_is_canonical kc_rv_compare kc_rv_parse"},
    {c_selector, "kc_label_selector_parse kc_label_selector_free kc_label_selector_empty "
                 "kc_label_selector_match kc_label_selector_match_fn kc_label_selector_string "
                 "kc_field_selector_parse kc_field_selector_free kc_field_selector_empty "
                 "kc_field_selector_count kc_field_selector_field kc_field_selector_match "
                 "kc_field_selector_match_fn kc_field_selector_exact kc_field_selector_string "
                 "kc_field_selector_pointer"},
    {c_server,
     "kc_server_new kc_server_start kc_server_url kc_server_ca_pem "
     "kc_server_write_kubeconfig kc_server_write_kubeconfig_as kc_server_set_faults "
     "kc_server_get_faults "
     "kc_server_compact kc_server_restart kc_server_current_rv kc_server_stop "
     "kc_server_free kc_server_duration_parse kc_server_faults_parse kc_server_seed_spec_check "
     "kc_server_set_shard_selector_ignored kc_server_shard_selector_ignored"},
    {c_shard, "kc_shard_hash kc_shard_key kc_shard_range_contains kc_shard_range_split "
              "kc_shard_selector_parse kc_shard_selector_new kc_shard_selector_free "
              "kc_shard_selector_string kc_shard_selector_field kc_shard_selector_count "
              "kc_shard_selector_range kc_shard_selector_match_hash kc_shard_selector_match"},
    {c_store, "kc_store_new kc_store_stop kc_store_free kc_store_add_indexer kc_store_get "
              "kc_store_get_key kc_store_len kc_store_list kc_store_list_by_namespace "
              "kc_store_list_by_index kc_obj_array_free kc_store_watermark kc_store_seq "
              "kc_store_key_seq kc_store_check kc_store_wait kc_store_change_clear "
              "kc_store_apply kc_store_bookmark kc_store_batch_new kc_store_batch_add "
              "kc_store_batch_len kc_store_batch_free kc_store_replace"},
    {c_workqueue,
     "kc_workqueue_new kc_workqueue_add kc_workqueue_add_after "
     "kc_workqueue_add_rate_limited kc_workqueue_forget kc_workqueue_num_requeues "
     "kc_workqueue_get kc_workqueue_done kc_workqueue_len kc_workqueue_shutdown "
     "kc_workqueue_shutdown_drain kc_workqueue_metrics_text kc_workqueue_metrics_render "
     "kc_workqueue_free kc_workqueue_add_with_priority kc_workqueue_add_after_with_priority "
     "kc_workqueue_add_rate_limited_with_priority kc_workqueue_get_with_priority"},
    {c_coordinator,
     "kc_shard_coordinator_new kc_shard_coordinator_start kc_shard_coordinator_stop "
     "kc_shard_coordinator_free kc_shard_coordinator_ranges kc_shard_coordinator_range_of "
     "kc_shard_coordinator_holds kc_shard_coordinator_fence kc_shard_coordinator_get_stats"},
    {c_controller,
     "kc_controller_new kc_controller_own kc_controller_watch kc_controller_enqueue "
     "kc_controller_start kc_controller_set_active kc_controller_active kc_controller_get_stats "
     "kc_controller_cache kc_controller_client kc_controller_queue kc_controller_health_url "
     "kc_controller_stop kc_controller_free"},
    {c_leader,
     "kc_leader_elector_new kc_leader_elector_start kc_leader_elector_stop "
     "kc_leader_elector_free kc_leader_elector_is_leader kc_leader_elector_leader "
     "kc_leader_elector_identity kc_leader_elector_fence kc_leader_elector_metrics_render"},
    {c_podmeta,
     "kc_podmeta_new kc_podmeta_start kc_podmeta_stop kc_podmeta_free kc_podmeta_pod_informer "
     "kc_podmeta_ns_informer kc_podmeta_ready kc_podmeta_wait_ready kc_podmeta_fd "
     "kc_podmeta_fd_drain kc_podmeta_lookup kc_podmeta_result_clear kc_podmeta_pod_ref "
     "kc_podmeta_pod_unref kc_podmeta_ns_ref kc_podmeta_ns_unref kc_podmeta_pod_obj "
     "kc_podmeta_pod_deleted kc_podmeta_pod_deleted_at_ms kc_podmeta_pod_container_count "
     "kc_podmeta_pod_container kc_podmeta_pod_find_container kc_podmeta_ns_obj "
     "kc_podmeta_pod_get kc_podmeta_pod_map_count kc_podmeta_pod_map_at kc_podmeta_pod_map_get "
     "kc_podmeta_pod_owner_count kc_podmeta_pod_owner kc_podmeta_pod_json "
     "kc_podmeta_get_stats kc_podmeta_metrics_render"},
    {c_fence, "kc_fence_new kc_fence_free kc_fence_now_ns kc_fence_set_valid_until "
              "kc_fence_valid_until kc_fence_valid kc_fence_check"},
    {c_webhook,
     "kc_webhook_server_new kc_webhook_server_add_validating "
     "kc_webhook_server_add_mutating kc_webhook_server_add_conversion "
     "kc_webhook_server_start kc_webhook_server_port kc_webhook_server_url "
     "kc_webhook_server_health_url kc_webhook_server_ready kc_webhook_server_reload_certs "
     "kc_webhook_server_metrics_text kc_webhook_server_stop kc_webhook_server_free "
     "kc_webhook_cert_generate"},
    {c_admission, "kc_admission_response_deny kc_admission_response_warn "
                  "kc_admission_response_annotate kc_admission_response_set_object "
                  "kc_admission_response_set_patch"},
    {c_idioms,
     "kc_op_result_name kc_cached_client_create_or_update kc_cached_client_create_or_patch "
     "kc_cached_client_add_finalizer kc_cached_client_remove_finalizer "
     "kc_doc_finalizer_has kc_doc_finalizer_add kc_doc_finalizer_remove "
     "kc_obj_has_finalizer kc_controller_add_finalizer"},
};

static bool listed(const char *name)
{
    size_t n = strlen(name);
    for (size_t g = 0; g < sizeof(GROUPS) / sizeof(GROUPS[0]); g++)
        for (const char *p = strstr(GROUPS[g].functions, name); p; p = strstr(p + 1, name))
            if ((p == GROUPS[g].functions || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
                return true;
    return false;
}

static void test_api_null_every_function_listed(void **st)
{
    char *names = all_declared();
    size_t missing = 0, count = 0;
    for (char *p = names, *tok; (tok = strtok_r(p, " ", &p));) {
        count++;
        if (!listed(tok)) {
            fprintf(stderr, "KC_API function without a NULL check in test_api_null: %s\n", tok);
            missing++;
        }
    }
    free(names);
    assert_true(count > 150);
    assert_int_equal(missing, 0);
    /* and every listed function is still declared */
    names = all_declared();
    for (size_t g = 0; g < sizeof(GROUPS) / sizeof(GROUPS[0]); g++) {
        char *copy = strdup(GROUPS[g].functions);
        for (char *p = copy, *tok; (tok = strtok_r(p, " ", &p));) {
            char pat[128];
            snprintf(pat, sizeof(pat), " %s ", tok);
            if (!strstr(names, pat))
                fprintf(stderr, "listed but not declared: %s\n", tok);
            assert_non_null(strstr(names, pat));
        }
        free(copy);
    }
    free(names);
}

static void test_api_null_every_function_accepts_null(void **st)
{
    for (size_t g = 0; g < sizeof(GROUPS) / sizeof(GROUPS[0]); g++)
        GROUPS[g].run();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_null_every_function_listed),
        cmocka_unit_test(test_api_null_every_function_accepts_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

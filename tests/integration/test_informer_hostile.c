/*
 * test_informer_hostile.c — an informer against a misbehaving server (kc_badsrv.h): it must never
 * hot-loop. Each test scripts one misbehaviour and asserts the client's requests as counts over
 * the fixture's own clock: N requests cannot arrive sooner than the backoff's schedule allows.
 * A loaded machine only makes requests slower, so these bounds cannot fail by load.
 */
#include "kc_badsrv.h"
#include "test_informer_fixture.h"

#include <stdatomic.h>

/* A ConfigMap LIST at RV 10 with one item; a WATCH that sends one ADDED event and closes. */
static const char *cm_list =
    "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"10\"},"
    "\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"d\",\"resourceVersion\":\"9\"}}]}";

static int one_event_then_close(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c)
{
    (void)ud;
    if (!strstr(req->target, "watch=")) {
        kc_badsrv_reply(c, 200, NULL, cm_list);
        return KC_BADSRV_KEEP;
    }
    if (strstr(req->target, "sendInitialEvents=true")) { /* no streaming lists here */
        kc_badsrv_reply(c, 400, NULL, "{\"kind\":\"Status\",\"code\":400}");
        return KC_BADSRV_KEEP;
    }
    kc_badsrv_chunked(c, 200, NULL);
    kc_badsrv_chunkf(c, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\","
                        "\"namespace\":\"d\",\"resourceVersion\":\"11\"}}}\n");
    kc_badsrv_chunk(c, "", 0);
    return KC_BADSRV_KEEP;
}

static kc_informer *start_on(kc_badsrv *bs, kc_client **client, kc_config **cfg, int64_t backoff_ms)
{
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_config_from_url(kc_badsrv_url(bs), NULL, NULL, cfg, &e), 0, &e);
    kc_client_opts co = {.qps = -1, .max_retries = -1};
    IFX_RC(kc_client_new(*cfg, &co, client, &e), 0, &e);
    kc_informer_opts o = {.backoff_initial_ms = backoff_ms,
                          .backoff_max_ms = backoff_ms * 4,
                          .list_mode = KC_INFORMER_LIST_PAGED};
    kc_informer *inf = NULL;
    IFX_RC(kc_informer_new(*client, &ifx_cm, &o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    return inf;
}

/* Issue 29 point 1: a watch that ends after one event backs off. With a 40 ms initial backoff
 * (80, 160, then the 160 ms cap; jitter only lengthens), 8 watches cannot arrive in less than
 * 40 + 80 + 160 × 5 = 920 ms; without backoff they come in a few ms. */
static void test_hostile_watch_closing_after_one_event_backs_off(void **st)
{
    (void)st;
    kc_badsrv *bs = kc_badsrv_start(one_event_then_close, NULL);
    assert_non_null(bs);
    kc_client *client = NULL;
    kc_config *cfg = NULL;
    kc_informer *inf = start_on(bs, &client, &cfg, 40);
    assert_int_equal(kc_badsrv_wait(bs, "watch=", 8, 20000), 8);
    uint64_t t0 = kc_badsrv_time_ns(bs, "watch=", 0), t7 = kc_badsrv_time_ns(bs, "watch=", 7);
    kc_informer_free(inf);
    kc_client_free(client);
    kc_config_unref(cfg);
    fprintf(stderr, "8 watches in %.0f ms\n", (double)(t7 - t0) / 1e6);
    assert_true(t7 - t0 >= 920 * 1000000ull);
    kc_badsrv_stop(bs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_watch_closing_after_one_event_backs_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

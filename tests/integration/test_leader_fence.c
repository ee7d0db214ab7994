/*
 * test_leader_fence.c — a stale leader cannot write (spec L10, L12a): the cached
 * client refuses every write with KC_EFENCED once its fence passed, without sending it; a
 * leader-only controller (kc_controller_opts.leader_elector) reconciles only while leading, puts
 * keys back once the fence passed even while the renew thread is paused (the test hook stands in
 * for SIGSTOP), and /readyz reports "synced", not "leading". A paused leader's fence deadline is
 * before its successor's start (no overlap, P4).
 */
#include "leader/internal.h"
#include "test_controller_fixture.h"
#include "test_leader_fixture.h"

#include <curl/curl.h>
#include <stdatomic.h>

static long http_status(const char *base, const char *path)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", base, path);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, NULL);
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    long st = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
    curl_easy_cleanup(h);
    return st;
}

#define CM "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"}}"

static int cc_create(kc_cached_client *cc, const char *name, kc_error *e)
{
    char body[256];
    snprintf(body, sizeof(body), CM, name);
    return kc_cached_client_create(cc, &ifx_cm, "default", body, strlen(body), NULL, NULL, NULL, e);
}

static bool cm_exists(ifx *f, const char *name)
{
    kc_obj *o = NULL;
    int rc = kc_client_get(f->client, &ifx_cm, "default", name, &o, NULL);
    kc_obj_unref(o);
    return rc == 0;
}

/* L12a: with a fence attached (option or setter), every write kind is KC_EFENCED and never sent
 * once the fence passed; reads still work; detaching the fence lets writes through again. */
static void test_cached_client_refuses_writes(void **state)
{
    (void)state;
    ifx f;
    ifx_up(&f, "configmaps=1:ns=default");
    kc_cache *cache = NULL;
    assert_int_equal(kc_cache_new(f.client, NULL, &cache, NULL), 0);
    kc_fence *fence = NULL;
    assert_int_equal(kc_fence_new(&fence, NULL), 0);
    kc_cached_client_opts co = {.fence = fence};
    kc_cached_client *cc = NULL;
    assert_int_equal(kc_cached_client_new(f.client, cache, &co, &cc, NULL), 0);
    kc_fence_set_valid_until(fence, kc_fence_now_ns() + 60 * KC__NS_PER_SEC);
    KC_TEST_RC(cc_create(cc, "ok", NULL), 0, NULL);
    kc_fence_set_valid_until(fence, kc_fence_now_ns() - 1);
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(cc_create(cc, "stale", &e), KC_EFENCED, &e);
    assert_int_equal(e.code, KC_EFENCED);
    kc_error_clear(&e);
    assert_false(cm_exists(&f, "stale")); /* not sent */
    const char *patch = "{\"data\":{\"x\":\"1\"}}";
    assert_int_equal(kc_cached_client_patch(cc, &ifx_cm, "default", "ok", KC_PATCH_MERGE, patch,
                                            strlen(patch), NULL, NULL, NULL, NULL),
                     KC_EFENCED);
    assert_int_equal(kc_cached_client_apply(cc, &ifx_cm, "default", "ok", patch, strlen(patch),
                                            NULL, NULL, NULL, NULL),
                     KC_EFENCED);
    char body[256];
    snprintf(body, sizeof(body), CM, "ok");
    assert_int_equal(
        kc_cached_client_update(cc, &ifx_cm, "default", body, strlen(body), NULL, NULL, NULL, NULL),
        KC_EFENCED);
    assert_int_equal(kc_cached_client_update_status(cc, &ifx_cm, "default", body, strlen(body),
                                                    NULL, NULL, NULL, NULL),
                     KC_EFENCED);
    assert_int_equal(kc_cached_client_delete(cc, &ifx_cm, "default", "ok", NULL, NULL, NULL, NULL),
                     KC_EFENCED);
    assert_true(cm_exists(&f, "ok"));
    kc_obj *o = NULL;
    assert_int_equal(kc_cached_client_get(cc, &ifx_cm, "default", "ok", NULL, &o, NULL), 0);
    kc_obj_unref(o);
    assert_int_equal(kc_cached_client_set_fence(cc, NULL), 0);
    KC_TEST_RC(cc_create(cc, "after", NULL), 0, NULL);
    assert_int_equal(kc_cached_client_set_fence(cc, fence), 0);
    assert_int_equal(cc_create(cc, "again", NULL), KC_EFENCED);
    assert_int_equal(kc_cached_client_set_fence(NULL, fence), KC_EINVAL);
    kc_cache_stop(cache);
    kc_cached_client_free(cc);
    kc_cache_free(cache);
    kc_fence_free(fence);
    ifx_down(&f);
}

/* Reconcile writes a ConfigMap "out-<key name>" through the fenced cached client. */
static kc_reconcile_result write_out(crec *r, const kc_reconcile_request *req, kc_cached_client *cc,
                                     unsigned nth)
{
    (void)r, (void)nth;
    char name[128];
    snprintf(name, sizeof(name), "out-%s", req->name);
    int rc = cc_create(cc, name, NULL);
    kc_reconcile_result res = {rc == 0 || rc == KC_EEXISTS ? KC_RECONCILE_DONE : KC_RECONCILE_ERROR,
                               0};
    return res;
}

/* C10, L10, L12a: a leader-only controller starts gated off with /readyz 200 (synced, not
 * leading); reconciles once its elector leads; with the renew thread paused past RD the fence
 * passes: no reconcile, the key is put back (counted as fenced), the cached client refuses writes,
 * /readyz stays 200; after the pause the run ends (loss), and a new run re-acquires the Lease
 * nobody took, reopens the gate and the key is reconciled. */
static void test_leader_only_controller(void **state)
{
    (void)state;
    cfx x;
    cfx_up(&x, "configmaps=1:ns=default", write_out);
    lrec lr;
    lrec_init(&lr);
    kc_leader_elector_opts lo = lfx_opts("ctl", "a", &lr);
    kc_leader_elector *el = lfx_new(&x.f, &lo);
    x.o.leader_elector = el;
    x.o.health_listen = "127.0.0.1:0";
    cfx_make(&x);
    assert_false(kc_controller_active(x.c));
    cfx_start(x.c);
    const char *url = kc_controller_health_url(x.c);
    assert_int_equal(http_status(url, "/readyz"), 200); /* synced, not leading */
    kc_controller_enqueue(x.c, "default", "k1");
    kc_controller_stats st;
    assert_true(CFX_WAIT_STATS(x.c, st, st.put_back >= 1, 5000));
    assert_int_equal(crec_count(&x.r, "default/k1"), 0);
    lfx_start(el);
    assert_true(crec_wait_key(&x.r, "default/k1", 1, 5000));
    assert_true(LFX_WAIT(cm_exists(&x.f, "out-k1"), 5000));
    assert_int_equal(http_status(url, "/readyz"), 200); /* leading: still just "synced" */

    kc__leader_elector_test_pause(el, true); /* the renew thread stops, as under SIGSTOP */
    kc_fence *fence = kc_leader_elector_fence(el);
    assert_true(LFX_WAIT(!kc_fence_valid(fence), 5000)); /* at most RD after the last send */
    assert_int_equal(LREC_GET(&lr, stopped),
                     0); /* the thread has not noticed: the fence acts anyway */
    assert_int_equal(cc_create(kc_controller_client(x.c), "late", NULL), KC_EFENCED);
    assert_false(cm_exists(&x.f, "late"));
    kc_controller_enqueue(x.c, "default", "k2");
    assert_true(CFX_WAIT_STATS(x.c, st, st.fenced >= 1, 5000));
    assert_int_equal(crec_count(&x.r, "default/k2"), 0);
    assert_false(cm_exists(&x.f, "out-k2"));
    assert_int_equal(http_status(url, "/readyz"), 200);

    /* the pause ends: the thread sees the fence passed — a loss, as client-go's renew round
     * whose deadline went by — and ends the run; the gate stays closed */
    kc__leader_elector_test_pause(el, false);
    assert_true(LREC_WAIT(&lr, stopped, 1, 5000));
    assert_false(kc_controller_active(x.c));
    assert_int_equal(crec_count(&x.r, "default/k2"), 0);
    /* a new run: no rival took the Lease, so it is ours again at once; the gate reopens */
    lfx_start(el);
    assert_true(crec_wait_key(&x.r, "default/k2", 1, 5000));
    assert_true(LFX_WAIT(cm_exists(&x.f, "out-k2"), 5000));
    /* the gate opens before the started callback runs: wait for the callback, do not race it */
    assert_true(LREC_WAIT(&lr, started, 2, 5000));
    char *m = kc_leader_elector_metrics_render(el);
    assert_non_null(strstr(m, "leader_election_master_status{name=\"ctl\"} 1"));
    free(m);
    kc_controller_stop(x.c);
    kc_controller_free(x.c);
    x.c = NULL;
    kc_leader_elector_free(el);
    lrec_destroy(&lr);
    cfx_down(&x);
}

static _Atomic int exit_calls, exit_code_seen;

static void rec_exit(int code)
{
    atomic_fetch_add(&exit_calls, 1);
    atomic_store(&exit_code_seen, code);
}

/* L5, L12a, P4: a leader paused past RD is fenced before a rival can start (the rival waits LD
 * after its last observed change); when the pause ends the old leader's attempt finds the rival
 * and the run ends with stopped — its fence was already closed. L10: exit_on_loss is called once,
 * after stopped, with the default code 1 (here a recorder that returns, ending the run). */
static void test_paused_leader_replaced(void **state)
{
    (void)state;
    ifx f;
    ifx_up(&f, NULL);
    lrec ra, rb;
    lrec_init(&ra);
    lrec_init(&rb);
    kc_leader_elector_opts oa = lfx_opts("pause", "a", &ra), ob = lfx_opts("pause", "b", &rb);
    oa.exit_on_loss = rec_exit;
    kc_leader_elector *a = lfx_new(&f, &oa), *b = lfx_new(&f, &ob);
    lfx_start(a);
    assert_true(LREC_WAIT(&ra, started, 1, 5000));
    lfx_start(b);
    assert_true(LREC_WAIT(&rb, news, 1, 5000));
    kc__leader_elector_test_pause(a, true);
    uint64_t a_end = 0;
    assert_true(LFX_WAIT(!kc_fence_valid(kc_leader_elector_fence(a)), 5000));
    a_end = kc_fence_valid_until(kc_leader_elector_fence(a));
    assert_true(LREC_WAIT(&rb, started, 1, 5000));
    assert_true(a_end < rb.t_started); /* no overlap of [start, fence) intervals */
    assert_false(kc_leader_elector_is_leader(a));
    kc__leader_elector_test_pause(a, false);
    assert_true(LREC_WAIT(&ra, stopped, 1, 5000));
    assert_true(LFX_WAIT(atomic_load(&exit_calls) == 1, 5000));
    assert_int_equal(atomic_load(&exit_code_seen), 1);
    assert_int_equal(kc_fence_valid_until(kc_leader_elector_fence(a)), 0);
    char *h = lfx_lease_str(&f, "pause", "/spec/holderIdentity");
    assert_string_equal(h, "b");
    free(h);
    kc_leader_elector_free(a);
    kc_leader_elector_free(b);
    assert_int_equal(atomic_load(&exit_calls), 1); /* not on stop */
    lrec_destroy(&ra), lrec_destroy(&rb);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_client_refuses_writes),
        cmocka_unit_test(test_leader_only_controller),
        cmocka_unit_test(test_paused_leader_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

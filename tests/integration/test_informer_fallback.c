/*
 * Streaming-list fallback against a deliberately old-fashioned fake API server (libmicrohttpd in
 * the test): (1) it ignores sendInitialEvents — the watch sends ADDED events but never the
 * k8s.io/initial-events-end bookmark — so the informer must give up after
 * initial_events_timeout_ms of silence and use LIST; (2) it rejects sendInitialEvents with 400, so
 * the informer must fall back at once. Both then watch from the LIST's resourceVersion.
 */
#include "test_informer_fixture.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>

typedef struct fake {
    struct MHD_Daemon *d;
    int port;
    bool reject_streaming;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool closing;
    int lists, streaming_watches, plain_watches;
    char last_watch_rv[64];
} fake;

static const char CM_A[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
    "\"namespace\":\"default\",\"uid\":\"ua\",\"resourceVersion\":\"5\"}}";
static const char CM_B[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\","
    "\"namespace\":\"default\",\"uid\":\"ub\",\"resourceVersion\":\"7\"}}";

typedef struct stream {
    fake *f;
    char *head;
    size_t len, off;
} stream;

/* Sends head, then holds the stream open (silent) until the fake server closes. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream *s = cls;
    if (s->off < s->len) {
        size_t n = s->len - s->off < max ? s->len - s->off : max;
        memcpy(buf, s->head + s->off, n);
        s->off += n;
        return (ssize_t)n;
    }
    pthread_mutex_lock(&s->f->mu);
    while (!s->f->closing)
        pthread_cond_wait(&s->f->cv, &s->f->mu);
    pthread_mutex_unlock(&s->f->mu);
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static void stream_free(void *cls)
{
    stream *s = cls;
    free(s->head);
    free(s);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_req(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    fake *f = cls;
    const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
    const char *sie = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "sendInitialEvents");
    const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
    if (!watch) {
        pthread_mutex_lock(&f->mu);
        f->lists++;
        pthread_mutex_unlock(&f->mu);
        char body[2048];
        snprintf(body, sizeof(body),
                 "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":"
                 "{\"resourceVersion\":\"10\"},\"items\":[%s,%s]}",
                 CM_A, CM_B);
        return reply(c, 200, body);
    }
    bool streaming = sie && strcmp(sie, "true") == 0;
    pthread_mutex_lock(&f->mu);
    if (streaming)
        f->streaming_watches++;
    else
        f->plain_watches++;
    snprintf(f->last_watch_rv, sizeof(f->last_watch_rv), "%s", rv ? rv : "");
    pthread_mutex_unlock(&f->mu);
    if (streaming && f->reject_streaming)
        return reply(
            c, 400,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
            "\"sendInitialEvents is not supported\",\"reason\":\"BadRequest\",\"code\":400}");
    stream *s = calloc(1, sizeof(*s));
    s->f = f;
    s->head = calloc(1, 4096);
    if (streaming) /* ignores sendInitialEvents: plain ADDED events, no bookmark */
        s->len = (size_t)snprintf(s->head, 4096, "{\"type\":\"ADDED\",\"object\":%s}\n", CM_A);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static void fake_start(fake *f, bool reject)
{
    memset(f, 0, sizeof(*f));
    f->reject_streaming = reject;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
                            NULL, NULL, on_req, f, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_END);
    assert_non_null(f->d);
    f->port = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT)->port;
}

static void fake_stop(fake *f)
{
    pthread_mutex_lock(&f->mu);
    f->closing = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    MHD_stop_daemon(f->d);
}

static kc_informer *start_on(fake *f, ifx *x, int64_t initial_timeout_ms)
{
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
    memset(x, 0, sizeof(*x));
    ifx_client_for(x, url);
    kc_informer_opts o = {.ns = "default", .initial_events_timeout_ms = initial_timeout_ms};
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_new(x->client, &ifx_cm, &o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    return inf;
}

static void check_listed(fake *f, kc_informer *inf)
{
    kc_store *s = kc_informer_store(inf);
    assert_int_equal(kc_store_len(s), 2);
    char wm[KC_STORE_RV_MAX];
    assert_true(kc_store_watermark(s, wm, sizeof(wm)) > 0);
    assert_string_equal(wm, "10");
    kc_informer_status st;
    kc_informer_get_status(inf, &st);
    assert_false(st.streaming);
    pthread_mutex_lock(&f->mu);
    assert_int_equal(f->lists, 1);
    assert_int_equal(f->streaming_watches, 1);
    pthread_mutex_unlock(&f->mu);
}

static void test_informer_fallback_when_bookmark_never_comes(void **st)
{
    fake f;
    fake_start(&f, false);
    ifx x;
    kc_informer *inf = start_on(&f, &x, 300);
    uint64_t t0 = kc__now_ns();
    assert_int_equal(kc_informer_wait_synced(inf, 10000, NULL), 0);
    uint64_t el = kc__now_ns() - t0;
    assert_true(el >= 250 * KC__NS_PER_MS); /* it did wait for the bookmark, bounded */
    assert_true(el < 5000 * KC__NS_PER_MS);
    check_listed(&f, inf);
    kc_informer_free(inf);
    fake_stop(&f);
    kc_client_free(x.client);
    kc_config_unref(x.cfg);
}

static void test_informer_fallback_when_streaming_rejected(void **st)
{
    fake f;
    fake_start(&f, true);
    ifx x;
    kc_informer *inf = start_on(&f, &x, 60000);
    uint64_t t0 = kc__now_ns();
    assert_int_equal(kc_informer_wait_synced(inf, 10000, NULL), 0);
    assert_true(kc__now_ns() - t0 < 5000 * KC__NS_PER_MS); /* no wait for the 60 s bound */
    check_listed(&f, inf);
    kc_informer_free(inf);
    fake_stop(&f);
    kc_client_free(x.client);
    kc_config_unref(x.cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_fallback_when_bookmark_never_comes),
        cmocka_unit_test(test_informer_fallback_when_streaming_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

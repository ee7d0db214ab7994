/*
 * test_informer_hostile_memory.c — memory bounded by what arrived, not by what a misbehaving
 * server announces (issue 29 points 4-8), against kc_badsrv.h.
 *
 * Memory is asserted in bytes: the process's peak resident set (VmHWM, reset through
 * /proc/self/clear_refs before the fault) above its resident set at that moment. RSS, not
 * mallinfo2, because the library maps big buffers itself (core/buf.c: a pager's page buffers)
 * and populates what it reserves (core/populate.c), so a reservation shows up as resident at
 * once. Each fault is sized so that the unfixed client's peak (hundreds of MB) is far above the
 * bound and still under 1 GB. Requests are counted on the fixture's log and the tests wait on
 * it (kc_badsrv_wait): no sleeps. A handler that must keep a later request in flight (so that
 * the informer's status still shows the first failure) stalls it until the server stops.
 */
#include "kc_badsrv.h"
#include "test_informer_fixture.h"

#include <stdatomic.h>

/* Under ASan or TSan the shadow memory of every byte touched counts in the RSS (TSan's is 4x):
 * the peaks are printed but not asserted there, and the huge item is smaller. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

typedef struct hm {
    uint64_t stall_from; /* requests with this index and later stall until the server stops */
    size_t item_bytes;   /* huge_item: the size of the one item's string */
    _Atomic uint64_t events;
} hm;

/* ---- memory ---------------------------------------------------------------------------------- */

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':')
            v = strtol(line + kl + 1, NULL, 10);
    fclose(f);
    assert_true(v >= 0);
    return v;
}

/* Reset the peak to the current RSS; returns that RSS (kB). */
static long peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    assert_non_null(f);
    fputs("5", f);
    fclose(f);
    return status_kb("VmRSS");
}

/* The peak RSS since peak_reset(base), above base, in MiB. */
static double peak_mib(long base)
{
    return (double)(status_kb("VmHWM") - base) / 1024.0;
}

/* ---- set-up ---------------------------------------------------------------------------------- */

/* One test's server, and a client of it without rate limiter or retries, and maybe an informer. */
typedef struct rig {
    kc_badsrv *bs;
    kc_config *cfg;
    kc_client *client;
    kc_informer *inf; /* NULL until rig_informer */
} rig;

/* Serve h(ud); max_response: the client's kc_client_opts.max_response_bytes. */
static void rig_up(rig *r, kc_badsrv_handler h, void *ud, size_t max_response)
{
    memset(r, 0, sizeof *r);
    r->bs = kc_badsrv_start(h, ud);
    assert_non_null(r->bs);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_config_from_url(kc_badsrv_url(r->bs), NULL, NULL, &r->cfg, &e), 0, &e);
    kc_client_opts co = {.qps = -1, .max_retries = -1, .max_response_bytes = max_response};
    IFX_RC(kc_client_new(r->cfg, &co, &r->client, &e), 0, &e);
}

/* Start a ConfigMap informer with o and a 40 ms backoff (160 ms at most). */
static void rig_informer(rig *r, kc_informer_opts *o)
{
    kc_error e = KC_ERROR_INIT;
    o->backoff_initial_ms = 40;
    o->backoff_max_ms = 160;
    IFX_RC(kc_informer_new(r->client, &ifx_cm, o, &r->inf, &e), 0, &e);
    IFX_RC(kc_informer_start(r->inf, &e), 0, &e);
}

static void rig_down(rig *r)
{
    kc_informer_free(r->inf);
    kc_client_free(r->client);
    kc_config_unref(r->cfg);
    kc_badsrv_stop(r->bs);
}

/* The informer's last error: its code, and its message contains want. */
static void assert_last_error(kc_informer *inf, int code, const char *want)
{
    kc_informer_status st;
    kc_informer_get_status(inf, &st);
    fprintf(stderr, "last error: %s: %s\n", kc_errno_name(st.last_error_code),
            st.last_error_message);
    assert_int_equal(st.last_error_code, code);
    assert_non_null(strstr(st.last_error_message, want));
    assert_false(st.synced);
}

/* ---- point 4: continue tokens that never end ------------------------------------------------- */

static int endless_pages(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c)
{
    hm *h = ud;
    if (req->index >= h->stall_from) {
        kc_badsrv_stall(c, -1);
        return KC_BADSRV_CLOSE;
    }
    char body[512];
    snprintf(body, sizeof body,
             "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
             "\"10\",\"continue\":\"c%llu\"},\"items\":[{\"metadata\":{\"name\":\"cm%llu\","
             "\"namespace\":\"d\",\"resourceVersion\":\"9\"}}]}",
             (unsigned long long)req->index, (unsigned long long)req->index);
    kc_badsrv_reply(c, 200, NULL, body);
    return KC_BADSRV_KEEP;
}

/* Issue 29 point 4: a paged LIST whose continue tokens never end stops at max_list_pages with an
 * error naming it, and the next list comes after the backoff (40 ms at least), not at once. */
static void test_hostile_endless_continue_tokens_end_at_max_list_pages(void **st)
{
    (void)st;
    hm h = {.stall_from = 21};
    rig r;
    rig_up(&r, endless_pages, &h, 0);
    kc_informer_opts o = {.list_mode = KC_INFORMER_LIST_PAGED, .max_list_pages = 20};
    rig_informer(&r, &o);
    assert_int_equal(kc_badsrv_wait(r.bs, "limit=", 21, 20000), 21);
    uint64_t t19 = kc_badsrv_time_ns(r.bs, "limit=", 19),
             t20 = kc_badsrv_time_ns(r.bs, "limit=", 20);
    fprintf(stderr, "20 pages, then the next list after %.1f ms\n", (double)(t20 - t19) / 1e6);
    assert_last_error(r.inf, KC_ETOOLARGE, "max_list_pages");
    assert_true(t20 - t19 >= 40 * 1000000ull);
    rig_down(&r);
}

static int drop_item(void *ud, kc_obj *o)
{
    (void)ud;
    kc_obj_unref(o);
    return 0;
}

/* The same bound in kc_client_list_all (the sharded informer's walk): kc_list_opts.max_pages. */
static void test_hostile_endless_continue_tokens_end_at_max_pages(void **st)
{
    (void)st;
    hm h = {.stall_from = 100};
    rig r;
    rig_up(&r, endless_pages, &h, 0);
    kc_list_opts lo = {.max_pages = 5};
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_client_list_all(r.client, &ifx_cm, NULL, &lo, NULL, drop_item, NULL, &e),
                     KC_ETOOLARGE);
    fprintf(stderr, "%s\n", e.message);
    assert_non_null(strstr(e.message, "max_pages"));
    assert_int_equal(kc_badsrv_count(r.bs, "limit="), 5);
    kc_error_clear(&e);
    rig_down(&r);
}

/* ---- point 5: Content-Length is not a reservation -------------------------------------------- */

#define LIE_CL 600000000ull

/* n bytes of a ConfigMapList: items of ~10 KB, each {"metadata":{"name":"cmI","namespace":"d"},
 * "data":{"x":"<letters>"}}, then spaces up to n (malloc'd; *ret_items: how many). */
static char *list_of(size_t n, size_t *ret_items)
{
    char *b = malloc(n + 1);
    assert_non_null(b);
    size_t at = (size_t)sprintf(b, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\","
                                   "\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[");
    size_t k = 0;
    while (at + 10240 + 128 < n) {
        at += (size_t)sprintf(b + at,
                              "%s{\"metadata\":{\"name\":\"cm%zu\",\"namespace\":\"d\"},"
                              "\"data\":{\"x\":\"",
                              k ? "," : "", k);
        for (size_t i = 0; i < 10000; i++)
            b[at++] = (char)('a' + (i + k) % 26);
        at += (size_t)sprintf(b + at, "\"}}");
        k++;
    }
    at += (size_t)sprintf(b + at, "]}");
    memset(b + at, ' ', n - at);
    b[n] = '\0';
    *ret_items = k;
    return b;
}

static int lying_length(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c)
{
    (void)ud;
    if (strstr(req->target, "/namespaces/true/")) { /* 20 MB: grows past the first reservation */
        size_t n = 20u << 20, k;
        char *b = list_of(n, &k);
        kc_badsrv_printf(c,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\n\r\n",
                         n);
        kc_badsrv_write(c, b, n);
        free(b);
        return KC_BADSRV_KEEP;
    }
    kc_badsrv_printf(c,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Content-Length: %llu\r\n\r\n{\"kind\":\"ConfigMapList\",\"items\"",
                     LIE_CL);
    kc_badsrv_stall(c, 300); /* held open; the client reserved (or not) at the first byte */
    return KC_BADSRV_CLOSE;
}

static int count_item(void *ud, kc_obj *o)
{
    size_t len = 0;
    kc_obj_json(o, &len);
    assert_true(len > 10000);
    (*(size_t *)ud)++;
    kc_obj_unref(o);
    return 0;
}

/* Issue 29 point 5: a 27-byte reply announcing 600 MB costs the client a few MiB, not 600 MB
 * (unfixed: ~573 MiB populated for the whole request); a true 20 MB body still arrives whole. */
static void test_hostile_lying_content_length_reserves_little(void **st)
{
    (void)st;
    rig r;
    rig_up(&r, lying_length, NULL, 0);
    kc_error e = KC_ERROR_INIT;
    size_t n = 0;
    long base = peak_reset();
    int rc = kc_client_list(r.client, &ifx_cm, "lie", NULL, NULL, count_item, &n, &e);
    double peak = peak_mib(base);
    fprintf(stderr, "27 bytes announcing %llu: %s (%s); peak +%.1f MiB\n", LIE_CL,
            kc_errno_name(rc), e.message ? e.message : "", peak);
    assert_true(rc < 0); /* the connection closed early */
    kc_error_clear(&e);
    assert_true(SANITIZED || peak < 32.0);
    size_t want = 0;
    free(list_of(20u << 20, &want));
    IFX_RC(kc_client_list(r.client, &ifx_cm, "true", NULL, NULL, count_item, &n, &e), 0, &e);
    assert_int_equal(n, want);
    rig_down(&r);
}

/* ---- point 6: one huge item ------------------------------------------------------------------ */

static int huge_item(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c)
{
    hm *h = ud;
    if (req->index >= h->stall_from) {
        kc_badsrv_stall(c, -1);
        return KC_BADSRV_CLOSE;
    }
    size_t chunk = 1u << 20;
    char *b = malloc(chunk);
    assert_non_null(b);
    memset(b, 'a', chunk);
    bool ok = kc_badsrv_chunked(c, 200, NULL) &&
              kc_badsrv_chunkf(c, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\""
                                  ":{\"resourceVersion\":\"10\"},\"items\":[{\"metadata\":{"
                                  "\"name\":\"big\",\"namespace\":\"d\"},\"data\":{\"x\":\"");
    for (size_t sent = 0; ok && sent < h->item_bytes; sent += chunk)
        ok = kc_badsrv_chunk(c, b, chunk);
    free(b);
    if (ok && kc_badsrv_chunkf(c, "\"}}]}"))
        kc_badsrv_chunk(c, "", 0);
    return KC_BADSRV_KEEP;
}

/* Issue 29 point 6: a 128 MiB item (KC_TEST_HUGE_ITEM_MB: another size) in a paged LIST is
 * rejected as over the object size limit (4 MiB) at the cost of the page (its body is received
 * whole: kc_client_opts.max_response_bytes bounds that) plus a window of scratch. Unfixed, the
 * decoder's windows doubled until the item fitted: peak +389 MiB for 128 MiB, +605 MiB for 200
 * MiB (after: +153..162 and +225 MiB). */
static void test_hostile_huge_item_rejected_at_a_window(void **st)
{
    (void)st;
    const char *mb = getenv("KC_TEST_HUGE_ITEM_MB"); /* another size, to measure */
    hm h = {.stall_from = 1, .item_bytes = (size_t)(mb ? atoi(mb) : SANITIZED ? 32 : 128) << 20};
    rig r;
    rig_up(&r, huge_item, &h, 0);
    kc_informer_opts o = {.list_mode = KC_INFORMER_LIST_PAGED};
    long base = peak_reset();
    rig_informer(&r, &o);
    assert_int_equal(kc_badsrv_wait(r.bs, "limit=", 2, 60000), 2);
    double peak = peak_mib(base), item = (double)h.item_bytes / 1048576.0;
    fprintf(stderr, "a %.0f MiB item: peak +%.1f MiB\n", item, peak);
    assert_true(SANITIZED || peak < item + 64.0);
    assert_last_error(r.inf, KC_ETOOLARGE, "max_object_size");
    rig_down(&r);
}

/* ---- point 7: a streaming list that never ends ----------------------------------------------- */

static int endless_stream(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c)
{
    hm *h = ud;
    if (req->index >= h->stall_from || !strstr(req->target, "sendInitialEvents=true")) {
        kc_badsrv_stall(c, -1);
        return KC_BADSRV_CLOSE;
    }
    if (!kc_badsrv_chunked(c, 200, NULL))
        return KC_BADSRV_CLOSE;
    char buf[64 * 200];
    for (uint64_t i = 0;;) {
        size_t n = 0;
        for (int k = 0; k < 64; k++, i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n,
                                  "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
                                  "\"cm%llu\",\"namespace\":\"d\",\"resourceVersion\":\"9\"}}}\n",
                                  (unsigned long long)i);
        if (!kc_badsrv_chunk(c, buf, n))
            break;
        atomic_fetch_add(&h->events, 64);
    }
    return KC_BADSRV_CLOSE;
}

/* One endless streaming list against an informer with o's limits: ended by the limit named want
 * (before the initial-events watchdog, set to a minute), then retried after the backoff. */
static void endless_stream_case(kc_informer_opts *o, const char *want)
{
    hm h = {.stall_from = 1};
    rig r;
    rig_up(&r, endless_stream, &h, 0);
    o->list_mode = KC_INFORMER_LIST_STREAMING;
    o->initial_events_timeout_ms = 60000;
    long base = peak_reset();
    rig_informer(&r, o);
    assert_int_equal(kc_badsrv_wait(r.bs, "watch=", 2, 20000), 2);
    double peak = peak_mib(base);
    fprintf(stderr, "%s: the server wrote %llu events; peak +%.1f MiB\n", want,
            (unsigned long long)atomic_load(&h.events), peak);
    assert_last_error(r.inf, KC_ETOOLARGE, want);
    assert_true(SANITIZED || peak < 48.0);
    rig_down(&r);
}

/* Issue 29 point 7: endless ADDED events without the initial-events-end bookmark end at
 * max_list_items (20000) or max_list_bytes (4 MiB), with a backoff; unfixed, the batch grew until
 * the watchdog (2 GiB in about a second was measured). */
static void test_hostile_endless_streaming_list_ends_at_max_list_items(void **st)
{
    (void)st;
    kc_informer_opts o = {.max_list_items = 20000};
    endless_stream_case(&o, "max_list_items");
}

static void test_hostile_endless_streaming_list_ends_at_max_list_bytes(void **st)
{
    (void)st;
    kc_informer_opts o = {.max_list_items = -1, .max_list_bytes = 4 << 20};
    endless_stream_case(&o, "max_list_bytes");
}

/* ---- point 8: the response cap is an option -------------------------------------------------- */

static int sized_reply(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c)
{
    (void)ud;
    size_t n = strstr(req->target, "/small/") ? (512u << 10) : (2u << 20), k;
    char *b = list_of(n, &k);
    if (strstr(req->target, "/chunked/")) {
        if (kc_badsrv_chunked(c, 200, NULL))
            for (size_t i = 0; i < n && kc_badsrv_chunk(c, b + i, 64u << 10); i += 64u << 10)
                ;
        kc_badsrv_chunk(c, "", 0);
    } else {
        kc_badsrv_printf(c,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\n\r\n",
                         n);
        kc_badsrv_write(c, b, n);
    }
    free(b);
    return KC_BADSRV_CLOSE;
}

/* Issue 29 point 8: kc_client_opts.max_response_bytes bounds a collected body — announced
 * (refused before a byte is stored) or chunked — and the error names it. */
static void test_hostile_max_response_bytes_is_honoured(void **st)
{
    (void)st;
    rig r;
    rig_up(&r, sized_reply, NULL, 1u << 20);
    kc_error e = KC_ERROR_INIT;
    const char *nss[] = {"cl", "chunked"};
    size_t n = 0;
    for (int i = 0; i < 2; i++) {
        int rc = kc_client_list(r.client, &ifx_cm, nss[i], NULL, NULL, count_item, &n, &e);
        fprintf(stderr, "%s: %s\n", nss[i], e.message ? e.message : "");
        assert_int_equal(rc, KC_ETOOLARGE);
        assert_non_null(strstr(e.message, "max_response_bytes"));
        assert_true(i == 1 || strstr(e.message, "Content-Length"));
        kc_error_clear(&e);
    }
    assert_int_equal(n, 0);
    IFX_RC(kc_client_list(r.client, &ifx_cm, "small", NULL, NULL, count_item, &n, &e), 0, &e);
    assert_true(n > 40);
    rig_down(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_endless_continue_tokens_end_at_max_list_pages),
        cmocka_unit_test(test_hostile_endless_continue_tokens_end_at_max_pages),
        cmocka_unit_test(test_hostile_lying_content_length_reserves_little),
        cmocka_unit_test(test_hostile_huge_item_rejected_at_a_window),
        cmocka_unit_test(test_hostile_endless_streaming_list_ends_at_max_list_items),
        cmocka_unit_test(test_hostile_endless_streaming_list_ends_at_max_list_bytes),
        cmocka_unit_test(test_hostile_max_response_bytes_is_honoured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

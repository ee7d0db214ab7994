/*
 * test_server_api_body_limit.c — a request body over the server's limit (`--max-body`,
 * kc_server_opts.max_body) is answered with a 413 Status of reason RequestEntityTooLarge that the
 * client reads every time (spec §3.7, its reason table): the server reads and discards the rest of
 * the body before it answers, so it never closes a socket with unread data (which makes the kernel
 * reset the connection, and the client then sees "connection reset by peer" or "broken pipe"
 * instead of the answer). Two clients, 50 rounds each, bodies far larger than the socket buffers:
 * - libcurl's ordinary transfer (it reads the answer while it still sends): Content-Length,
 *   chunked, and `Expect: 100-continue` (answered at once, before the body is sent);
 * - a client that writes the whole request before it reads the answer, as kubectl's Go transport
 *   does (libcurl CURLOPT_CONNECT_ONLY with curl_easy_send / curl_easy_recv): its send fails
 *   (EPIPE / ECONNRESET) whenever the server answers early and closes with the body unread.
 * After a drained 413 the connection stays usable (keep-alive).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <poll.h>

#include "test_server_util.h"

#define LIMIT  4096
#define BIG    (4u << 20) /* 4 MiB: much more than loopback socket buffers hold */
#define ROUNDS 50

static char *g_big;

static int setup(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.max_body = LIMIT;
    kc_server *s = ts_start_opts(&o);
    if (!s)
        return -1;
    /* a ConfigMap far over the limit */
    g_big = malloc(BIG + 1);
    if (!g_big)
        return -1;
    const char *head = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"big\"},\"data\":{\"k\":\"";
    size_t hl = strlen(head);
    memcpy(g_big, head, hl);
    memset(g_big + hl, 'x', BIG - hl - 3);
    memcpy(g_big + BIG - 3, "\"}}", 3);
    g_big[BIG] = 0;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    free(g_big);
    return 0;
}

typedef struct upload {
    const char *data;
    size_t len, off;
} upload;

static size_t read_cb(char *buf, size_t sz, size_t n, void *ud)
{
    upload *u = ud;
    size_t c = sz * n;
    if (c > u->len - u->off)
        c = u->len - u->off;
    if (c > 64 * 1024) /* many chunks */
        c = 64 * 1024;
    memcpy(buf, u->data + u->off, c);
    u->off += c;
    return c;
}

enum mode { WITH_LENGTH, CHUNKED, EXPECT_CONTINUE };

/* POST the big body on handle c; the reply goes to *r. Returns the curl result. */
static CURLcode post_big(CURL *c, kc_server *s, enum mode m, ts_resp *r)
{
    memset(r, 0, sizeof(*r));
    char url[512];
    snprintf(url, sizeof(url), "%s" CM_PATH, kc_server_url(s));
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    /* kubectl (Go) sends no Expect header; curl would add one for large bodies */
    h = curl_slist_append(h, m == EXPECT_CONTINUE ? "Expect: 100-continue" : "Expect:");
    if (m == CHUNKED)
        h = curl_slist_append(h, "Transfer-Encoding: chunked");
    upload u = {g_big, BIG, 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(c, CURLOPT_READDATA, &u);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                     m == CHUNKED ? (curl_off_t)-1 : (curl_off_t)BIG);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_body_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, ts_hdr_cb);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    /* a long wait for 100 Continue: the server must answer the Expect itself, not time it out */
    curl_easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 20000L);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    if (r->body)
        r->json = json_loadb(r->body, r->len, 0, NULL);
    return rc;
}

static void assert_413(CURLcode rc, ts_resp *r, int round)
{
    if (rc != CURLE_OK || r->status != 413)
        fail_msg("round %d: curl says \"%s\", HTTP status %ld", round, curl_easy_strerror(rc),
                 r->status);
    assert_string_equal(ts_s(r->json, "kind"), "Status");
    assert_string_equal(ts_s(r->json, "reason"), "RequestEntityTooLarge");
    assert_int_equal(json_integer_value(ts_j(r->json, "code")), 413);
}

static void rounds(kc_server *s, enum mode m)
{
    for (int i = 0; i < ROUNDS; i++) {
        CURL *c = curl_easy_init();
        ts_resp r;
        CURLcode rc = post_big(c, s, m, &r);
        assert_413(rc, &r, i);
        ts_resp_free(&r);
        curl_easy_cleanup(c);
    }
}

static void test_server_body_over_limit_content_length_413(void **state)
{
    rounds(*state, WITH_LENGTH);
}

static void test_server_body_over_limit_chunked_413(void **state)
{
    rounds(*state, CHUNKED);
}

static void test_server_body_over_limit_expect_continue_413(void **state)
{
    rounds(*state, EXPECT_CONTINUE);
}

/* ---- the write-everything-then-read client ------------------------------------------------ */

/* Wait until the connection's socket is ready for want (POLLIN/POLLOUT); false on timeout. */
static bool wait_sock(CURL *c, short want)
{
    curl_socket_t fd;
    if (curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD)
        return false;
    struct pollfd p = {.fd = fd, .events = want};
    return poll(&p, 1, 10000) > 0;
}

/* Send all of data; false when the connection failed (reset, broken pipe). */
static bool send_all(CURL *c, const char *data, size_t len)
{
    while (len) {
        size_t n = 0;
        CURLcode rc = curl_easy_send(c, data, len, &n);
        if (rc == CURLE_AGAIN) {
            if (!wait_sock(c, POLLOUT))
                return false;
            continue;
        }
        if (rc != CURLE_OK)
            return false;
        data += n;
        len -= n;
    }
    return true;
}

/* One raw exchange: the whole request, then the whole answer into *out (NUL-terminated, caller
 * frees). Returns a description of what went wrong, or NULL. */
static const char *raw_exchange(kc_server *s, bool chunked, char **out)
{
    *out = NULL;
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, kc_server_url(s));
    curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
    if (curl_easy_perform(c) != CURLE_OK) {
        curl_easy_cleanup(c);
        return "cannot connect";
    }
    char head[512];
    if (chunked)
        snprintf(head, sizeof(head),
                 "POST " CM_PATH " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n");
    else
        snprintf(head, sizeof(head),
                 "POST " CM_PATH " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 "Content-Length: %u\r\n\r\n",
                 BIG);
    bool sent = send_all(c, head, strlen(head));
    for (size_t off = 0; sent && off < BIG;) {
        size_t n = BIG - off < 65536 ? BIG - off : 65536;
        char ch[32];
        snprintf(ch, sizeof(ch), "%zx\r\n", n);
        sent = (!chunked || send_all(c, ch, strlen(ch))) && send_all(c, g_big + off, n) &&
               (!chunked || send_all(c, "\r\n", 2));
        off += n;
    }
    if (sent && chunked)
        sent = send_all(c, "0\r\n\r\n", 5);
    /* Read the answer even when sending failed (the answer may well be there), but count the
     * failed send: Go's transport reports the write error ("broken pipe", "connection reset by
     * peer") whenever it comes before the transport has read the answer, and that is what
     * kubectl prints. */
    ts_resp b;
    memset(&b, 0, sizeof(b));
    const char *why = NULL;
    for (;;) {
        char buf[16384];
        size_t n = 0;
        CURLcode rc = curl_easy_recv(c, buf, sizeof(buf), &n);
        if (rc == CURLE_AGAIN) {
            if (!wait_sock(c, POLLIN)) {
                why = "no answer within 10 s";
                break;
            }
            continue;
        }
        if (rc != CURLE_OK) {
            why = sent ? "connection reset while reading the answer"
                       : "connection reset while sending the body";
            break;
        }
        if (n == 0)
            break; /* closed after the answer */
        ts_body_cb(buf, 1, n, &b);
        const char *end = strstr(b.body, "\r\n\r\n");
        const char *cl = end ? strcasestr(b.body, "\r\nContent-Length: ") : NULL;
        if (end && cl && cl < end &&
            b.len >= (size_t)(end + 4 - b.body) + strtoul(cl + 18, NULL, 10))
            break; /* the whole answer */
    }
    *out = b.body ? b.body : calloc(1, 1);
    if (!sent && !why)
        why = "sending the body failed (the server closed the connection without reading it)";
    curl_easy_cleanup(c);
    return why;
}

static void raw_rounds(kc_server *s, bool chunked)
{
    for (int i = 0; i < ROUNDS; i++) {
        char *ans;
        const char *why = raw_exchange(s, chunked, &ans);
        if (why || strncmp(ans, "HTTP/1.1 413 ", 13) != 0)
            fail_msg("round %d: %s; got \"%.40s\"", i, why ? why : "not a 413", ans);
        char *body = strstr(ans, "\r\n\r\n");
        json_t *j = json_loads(body + 4, 0, NULL);
        assert_string_equal(ts_s(j, "reason"), "RequestEntityTooLarge");
        json_decref(j);
        free(ans);
    }
}

static void test_server_body_over_limit_write_then_read_content_length_413(void **state)
{
    raw_rounds(*state, false);
}

static void test_server_body_over_limit_write_then_read_chunked_413(void **state)
{
    raw_rounds(*state, true);
}

/* After a 413 whose body the server drained, the same connection serves the next request. */
static void test_server_body_over_limit_keeps_connection(void **state)
{
    kc_server *s = *state;
    CURL *c = curl_easy_init();
    ts_resp r;
    assert_413(post_big(c, s, WITH_LENGTH, &r), &r, 0);
    ts_resp_free(&r);
    char url[512];
    snprintf(url, sizeof(url), "%s" CM_PATH "/big", kc_server_url(s));
    memset(&r, 0, sizeof(r));
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_body_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    assert_int_equal(r.status, 404); /* nothing was stored */
    long reused = 0;
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &reused);
    assert_int_equal(reused, 0); /* no new connection was needed */
    ts_resp_free(&r);
    curl_easy_cleanup(c);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_body_over_limit_content_length_413),
        cmocka_unit_test(test_server_body_over_limit_chunked_413),
        cmocka_unit_test(test_server_body_over_limit_expect_continue_413),
        cmocka_unit_test(test_server_body_over_limit_write_then_read_content_length_413),
        cmocka_unit_test(test_server_body_over_limit_write_then_read_chunked_413),
        cmocka_unit_test(test_server_body_over_limit_keeps_connection),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}

/*
 * tests/support/kc_badsrv.h — a misbehaving HTTP server for tests: the fixture that plays a proxy,
 * a buggy aggregated API or an attacker on the path against the client (tests/integration/
 * support_badsrv.c).
 *
 * It listens on 127.0.0.1:0 (plain HTTP, loopback only) and hands every request to the test's
 * handler, which writes whatever bytes it likes: a reply whose Content-Length lies, a watch that
 * closes after one event, a LIST whose continue token never ends, an endless chunked stream. The
 * server parses only what it needs to hand a request over (the request line and the end of the
 * headers; a request body is read by its Content-Length and dropped). Everything is bounded: at
 * most KC_BADSRV_MAX_CONNS connections at once (more are closed at accept), requests of at most
 * 64 KiB of headers, and a handler that stalls does so with kc_badsrv_stall, which kc_badsrv_stop
 * interrupts.
 *
 * Every request is logged (its target and the monotonic time it arrived), so a test asserts what
 * the client did as counts: how many WATCH requests in a window, the gap between two LISTs.
 * kc_badsrv_wait blocks on a condition variable until enough requests arrived — no sleeps.
 *
 * Thread-safety: the handler runs on the connection's thread (one per connection); every function
 * here may be called from any thread.
 */
#ifndef KC_BADSRV_H
#define KC_BADSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KC_BADSRV_MAX_CONNS 32

typedef struct kc_badsrv kc_badsrv;
typedef struct kc_badsrv_conn kc_badsrv_conn;

/* One request as the handler sees it. Strings are valid for the handler's call. */
typedef struct kc_badsrv_req {
    const char *method;  /* "GET" */
    const char *target;  /* "/api/v1/pods?watch=true&resourceVersion=5" */
    const char *headers; /* the header block, "Name: value\r\n" lines */
    uint64_t index;      /* 0 for the first request the server saw, then 1, 2, … */
    uint64_t conn_index; /* 0 for the first request on this connection */
} kc_badsrv_req;

enum { KC_BADSRV_CLOSE = 0, KC_BADSRV_KEEP = 1 };

/* Answer one request: write a reply with the functions below and return KC_BADSRV_KEEP (read the
 * next request on the same connection) or KC_BADSRV_CLOSE. */
typedef int (*kc_badsrv_handler)(void *ud, const kc_badsrv_req *req, kc_badsrv_conn *c);

/* Start on 127.0.0.1:0. NULL (with the reason on stderr) on failure. */
kc_badsrv *kc_badsrv_start(kc_badsrv_handler h, void *ud);
/* "http://127.0.0.1:PORT". Borrowed. */
const char *kc_badsrv_url(const kc_badsrv *s);
/* Stop accepting, cut every connection, wake every stall, join every thread, free. NULL: nothing.
 */
void kc_badsrv_stop(kc_badsrv *s);

/* ---- the handler's side ---------------------------------------------------------------------- */

/* Write bytes as they are. false when the peer is gone (the handler should return CLOSE). */
bool kc_badsrv_write(kc_badsrv_conn *c, const void *p, size_t n);
bool kc_badsrv_printf(kc_badsrv_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A complete reply: status line, Content-Type application/json, a true Content-Length, body.
 * extra_headers (NULL or "Name: v\r\n" lines) go before the blank line. */
bool kc_badsrv_reply(kc_badsrv_conn *c, int status, const char *extra_headers, const char *body);
/* A chunked reply's head (for watches and streams), then chunks; kc_badsrv_chunk with n 0 sends
 * the last chunk (a clean end of the stream). */
bool kc_badsrv_chunked(kc_badsrv_conn *c, int status, const char *extra_headers);
bool kc_badsrv_chunk(kc_badsrv_conn *c, const void *p, size_t n);
bool kc_badsrv_chunkf(kc_badsrv_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Wait ms (< 0: until the server stops). false when the server is stopping. */
bool kc_badsrv_stall(kc_badsrv_conn *c, int64_t ms);
/* The server a connection belongs to (for the handler's own state). */
kc_badsrv *kc_badsrv_of(kc_badsrv_conn *c);

/* ---- the test's side ------------------------------------------------------------------------- */

/* Requests whose target contains `needle` (NULL: all) so far. */
uint64_t kc_badsrv_count(kc_badsrv *s, const char *needle);
/* Block until at least n such requests arrived or timeout_ms passed; the count then (more than n
 * when more arrived before the waiter ran: assert >= n). */
uint64_t kc_badsrv_wait(kc_badsrv *s, const char *needle, uint64_t n, int64_t timeout_ms);
/* Arrival time (CLOCK_MONOTONIC ns) of the k-th (0-based) request whose target contains needle;
 * 0 when there is none. */
uint64_t kc_badsrv_time_ns(kc_badsrv *s, const char *needle, uint64_t k);
/* Connections accepted so far. */
uint64_t kc_badsrv_connections(kc_badsrv *s);

#endif

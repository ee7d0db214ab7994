/*
 * tests/support/kc_test.h — what every integration test shares (header-only, static):
 *   - KC_TEST_RC(expr, want, err): assert a return code; on a mismatch print both sides by name
 *     and message and the kc_error detail (code, HTTP status, reason, message), then fail;
 *   - kc_test_server_start(opts): the one way tests start the embedded API server — on
 *     127.0.0.1:0 (ephemeral loopback port), request log off — printing the reason on failure.
 * The per-area fixtures (test_informer_fixture.h, test_cached_fixture.h, test_client_fixture.h,
 * test_server_util.h) build on these.
 */
#ifndef KC_TEST_SUPPORT_H
#define KC_TEST_SUPPORT_H

#include "kcache/error.h"
#include "kcache/server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* "KC_ENOTFOUND (not found (404)), HTTP 404 NotFound: configmaps \"x\" not found" for rc and e. */
static inline void kc_test_print_rc(const char *what, int rc, int want, const kc_error *e)
{
    fprintf(stderr, "%s\n  got  %s (%s)\n  want %s (%s)\n", what, kc_errno_name(rc),
            kc_strerror(rc), kc_errno_name(want), kc_strerror(want));
    if (e && (e->code || e->message))
        fprintf(stderr, "  kc_error: code %s, HTTP %d%s%s, message: %s\n", kc_errno_name(e->code),
                e->http_status, e->reason ? " " : "", e->reason ? e->reason : "",
                e->message ? e->message : "(none)");
}

#define KC_TEST_RC(expr, want, e)                                                                  \
    do {                                                                                           \
        int kc_test_rc_ = (expr);                                                                  \
        int kc_test_want_ = (want);                                                                \
        if (kc_test_rc_ != kc_test_want_)                                                          \
            kc_test_print_rc(#expr, kc_test_rc_, kc_test_want_, (e));                              \
        assert_int_equal(kc_test_rc_, kc_test_want_);                                              \
    } while (0)

/* Start the embedded server with o (listen and quiet are set here; other fields the caller's).
 * The server, or NULL with the reason on stderr. */
static inline kc_server *kc_test_server_start(kc_server_opts *o)
{
    o->listen = "127.0.0.1:0";
    o->quiet = true;
    kc_server *s = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_server_new(o, &s, &e) != 0 || kc_server_start(s, &e) != 0) {
        fprintf(stderr, "server start failed: %s %s\n", kc_errno_name(e.code),
                e.message ? e.message : "?");
        kc_error_clear(&e);
        kc_server_free(s);
        return NULL;
    }
    return s;
}

#endif

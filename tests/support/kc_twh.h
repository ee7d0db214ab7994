/*
 * tests/support/kc_twh.h — a test admission webhook (tests/integration/support_webhook.c): HTTPS
 * (libmicrohttpd, MHD_USE_TLS) on 127.0.0.1:0 with an in-memory certificate made by the server
 * library's generator (a fresh CA; SANs 127.0.0.1, localhost and one extra DNS name, e.g.
 * "wh.default.svc"), answering AdmissionReviews per path as the test configures: allow, deny with
 * a Status, patch (a JSON Patch text, base64-encoded for the reply), warnings, a delay, an HTTP
 * status, a wrong uid or apiVersion, a patchType, or raw bytes. Every review it receives is
 * recorded per path (kc_twh_count / kc_twh_review), so tests assert what the API server sent.
 *
 * Thread-safety: handlers run on one thread per connection; every function may be called from
 * any thread. A delayed reply waits on a condition variable that kc_twh_stop interrupts.
 */
#ifndef KC_TWH_H
#define KC_TWH_H

#include <jansson.h>
#include <stdbool.h>

typedef struct kc_twh kc_twh;

/* What one path answers. Zero = allowed, HTTP 200, uid echoed, v1. Strings copied. */
typedef struct kc_twh_reply {
    bool deny;
    int code;                /* status.code of a denial (0 = none sent) */
    const char *message;     /* status.message (NULL = none) */
    const char *reason;      /* status.reason (NULL = none) */
    const char *patch;       /* JSON Patch array text; sent base64 with patchType JSONPatch */
    const char *patch_type;  /* override ("" = omit patchType even with a patch) */
    const char *warnings;    /* JSON array text of warnings */
    int delay_ms;            /* wait before answering */
    int http_status;         /* 0 = 200 */
    const char *uid;         /* override response.uid */
    const char *api_version; /* override the review's apiVersion */
    const char *raw;         /* the whole body as given */
    /* A ConversionReview instead: each object gets desiredAPIVersion, the label converted=VERSION
     * and metadata.resourceVersion "999" (which the API server must ignore). */
    enum {
        KC_TWH_CONVERT_NONE = 0,
        KC_TWH_CONVERT_OK,
        KC_TWH_CONVERT_FAIL, /* result {status: Failed, message} (message or "conversion failed") */
        KC_TWH_CONVERT_FEWER,  /* one object less */
        KC_TWH_CONVERT_RENAME, /* metadata.name changed */
    } convert;
} kc_twh_reply;

/* Start with a certificate whose extra SAN is dns_name (may be NULL). NULL on failure. */
kc_twh *kc_twh_start(const char *dns_name);
void kc_twh_stop(kc_twh *w);
int kc_twh_port(const kc_twh *w);
/* The CA certificate (PEM) and its base64 (a caBundle), owned by w. */
const char *kc_twh_ca_pem(const kc_twh *w);
const char *kc_twh_ca_bundle(const kc_twh *w);
/* Configure path (e.g. "/deny"); replaces an earlier reply of that path. */
void kc_twh_set(kc_twh *w, const char *path, const kc_twh_reply *reply);
/* Reviews received on path, and the i-th (new reference, NULL when absent). */
size_t kc_twh_count(kc_twh *w, const char *path);
json_t *kc_twh_review(kc_twh *w, const char *path, size_t i);
/* Wait (at most timeout_ms) until path has received n reviews; true when it has. */
bool kc_twh_wait(kc_twh *w, const char *path, size_t n, int timeout_ms);
/* TLS connections accepted so far. */
size_t kc_twh_connections(kc_twh *w);
/* Forget the recorded reviews. */
void kc_twh_clear(kc_twh *w);

#endif

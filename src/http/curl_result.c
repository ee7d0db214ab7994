/*
 * http/curl_result.c — what a finished libcurl transfer says, in the library's terms: its CURLcode
 * as one error of the error model, and the Retry-After header as seconds.
 *
 * Errors: a resolver failure (or a resolver that never answered) is KC_EDNS; a TLS failure
 * KC_ETLS, naming OpenSSL's verification result when there is one; a timeout KC_ETIMEOUT; the
 * progress callback's abort KC_ECANCELED; a response header over libcurl's limits KC_ETOOLARGE
 * naming the limit (libcurl itself says "Out of memory", issue 29 point 12); anything else KC_EIO
 * with libcurl's text. Every message names the server. Retry-After: delta-seconds only (an HTTP
 * date is ignored, as client-go does), capped at a day here — the callers cap the wait further.
 */
#include "http/internal.h"

#include <curl/curl.h>
#include <openssl/x509.h>
#include <string.h>

/* A response header over libcurl's limits: one header line over CURL_MAX_HTTP_HEADER (libcurl
 * says "Out of memory", CURLE_OUT_OF_MEMORY, before any of the body; CURLE_TOO_LARGE from curl
 * 8.6) → 1; all of them over its total of 300 KiB (CURLE_RECV_ERROR "Too large response
 * headers") → 2; else 0. */
static int header_too_large(CURLcode cc, const char *what, bool body_started)
{
#if LIBCURL_VERSION_NUM >= 0x080600
    if (cc == CURLE_TOO_LARGE)
        return 1;
#endif
    if (cc == CURLE_OUT_OF_MEMORY)
        return body_started ? 0 : 1;
    return cc == CURLE_RECV_ERROR && strstr(what, "Too large response header") ? 2 : 0;
}

int kc__curl_error(const char *server, void *easy_, int cc_, const char *errbuf, bool body_started,
                   kc_error *err)
{
    CURL *easy = easy_;
    CURLcode cc = (CURLcode)cc_;
    const char *what = errbuf[0] ? errbuf : curl_easy_strerror(cc);
    int big = header_too_large(cc, what, body_started); /* issue 29 point 12 */
    if (big == 1)
        return kc_error_set(err, KC_ETOOLARGE,
                            "%s: a response header line is over libcurl's limit of %d bytes "
                            "(CURL_MAX_HTTP_HEADER; libcurl says: %s)",
                            server, (int)CURL_MAX_HTTP_HEADER, what);
    if (big == 2)
        return kc_error_set(err, KC_ETOOLARGE,
                            "%s: the response headers are over libcurl's limit of 300 KiB in all "
                            "(libcurl says: %s)",
                            server, what);
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return kc_error_set(err, KC_EDNS, "%s: %s", server, what);
    case CURLE_OPERATION_TIMEDOUT:
        if (strstr(what, "Resolving timed out")) /* the resolver never answered: a DNS failure */
            return kc_error_set(err, KC_EDNS, "%s: %s", server, what);
        return kc_error_set(err, KC_ETIMEOUT, "%s: %s", server, what);
    case CURLE_ABORTED_BY_CALLBACK:
        return kc_error_set(err, KC_ECANCELED, "request cancelled");
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED: {
        long vr = 0;
        curl_easy_getinfo(easy, CURLINFO_SSL_VERIFYRESULT, &vr);
        if (vr != 0)
            return kc_error_set(err, KC_ETLS, "TLS to %s failed: %s (certificate verify: %s)",
                                server, what, X509_verify_cert_error_string(vr));
        return kc_error_set(err, KC_ETLS, "TLS to %s failed: %s", server, what);
    }
    default:
        return kc_error_set(err, KC_EIO, "%s: %s", server, what);
    }
}

int kc__curl_retry_after(void *easy)
{
    struct curl_header *hd = NULL;
    if (curl_easy_header(easy, "Retry-After", 0, CURLH_HEADER, -1, &hd) != CURLHE_OK || !hd)
        return -1;
    const char *v = hd->value;
    while (*v == ' ')
        v++;
    if (*v < '0' || *v > '9')
        return -1;
    long s = 0;
    for (; *v >= '0' && *v <= '9'; v++) {
        s = s * 10 + (*v - '0');
        if (s > 86400)
            return 86400;
    }
    while (*v == ' ')
        v++;
    return *v ? -1 : (int)s;
}

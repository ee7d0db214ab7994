/*
 * tls.c — throw-away CA and serving certificate for `kcache serve --tls` (OpenSSL 3 EVP API).
 *
 * Design: two EC P-256 keys are generated per server start. The CA certificate is self-signed
 * (basicConstraints critical CA:TRUE, keyUsage critical keyCertSign+cRLSign, subject key id); the
 * serving certificate is signed by it (CA:FALSE, keyUsage digitalSignature,
 * extendedKeyUsage serverAuth, subjectAltName IP:127.0.0.1, IP:::1, DNS:localhost and the extra
 * host, authority key id) so strict verifiers (Python's VERIFY_X509_STRICT, Go, Node) accept it.
 * Both are valid from one hour ago for 365 days. Everything stays in memory as PEM strings; the
 * private key is never logged and never written to disk by this module. Thread-safe: no shared
 * state (OpenSSL 3 initialises itself).
 */
#include "server/http/tls.h"

#include "core/internal.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALID_DAYS 365
#define HOST_MAX   253

/* Record the latest OpenSSL reason in err and clear the queue. */
static int tls_fail(kc_error *err, const char *what)
{
    unsigned long e = ERR_get_error();
    char reason[256] = "unknown reason";
    if (e)
        ERR_error_string_n(e, reason, sizeof reason);
    ERR_clear_error();
    return kc_error_set(err, KC_ETLS, "TLS: %s: %s", what, reason);
}

static char *bio_to_string(BIO *bio)
{
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    if (n < 0)
        return NULL;
    return kc__strdup_n(data, (size_t)n);
}

static char *cert_pem(X509 *x)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = NULL;
    if (b && PEM_write_bio_X509(b, x))
        s = bio_to_string(b);
    BIO_free(b);
    return s;
}

static char *key_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = NULL;
    if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
        s = bio_to_string(b);
    BIO_free(b);
    return s;
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return false;
    bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

/* A certificate skeleton: version 3, random 127-bit serial, validity, subject CN, public key. */
static X509 *new_cert(EVP_PKEY *pub, const char *cn)
{
    X509 *x = X509_new();
    if (!x)
        return NULL;
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    ASN1_INTEGER *sn = NULL;
    if (RAND_bytes(serial, sizeof serial) != 1)
        goto fail;
    serial[0] &= 0x7f; /* positive */
    bn = BN_bin2bn(serial, sizeof serial, NULL);
    if (!bn || !(sn = BN_to_ASN1_INTEGER(bn, NULL)) || !X509_set_serialNumber(x, sn))
        goto fail;
    if (!X509_set_version(x, 2) || !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), (long)VALID_DAYS * 24 * 3600))
        goto fail;
    X509_NAME *name = X509_get_subject_name(x);
    if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"kcache", -1,
                                    -1, 0) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0))
        goto fail;
    if (!X509_set_pubkey(x, pub))
        goto fail;
    ASN1_INTEGER_free(sn);
    BN_free(bn);
    return x;
fail:
    ASN1_INTEGER_free(sn);
    BN_free(bn);
    X509_free(x);
    return NULL;
}

/* extra_host must be an IP literal or a DNS name; anything else could smuggle SAN syntax. */
static int san_for(const char *host, char *out, size_t cap, kc_error *err)
{
    unsigned char addr[16];
    size_t n = strlen(host);
    if (n == 0 || n > HOST_MAX)
        return kc_error_set(err, KC_EINVAL, "TLS: bad host name length");
    if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1) {
        snprintf(out, cap, ",IP:%s", host);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = host[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.'))
            return kc_error_set(err, KC_EINVAL, "TLS: '%s' is neither an IP address nor a DNS name",
                                host);
    }
    snprintf(out, cap, ",DNS:%s", host);
    return 0;
}

static bool is_default_host(const char *h)
{
    return !strcmp(h, "127.0.0.1") || !strcmp(h, "::1") || !strcmp(h, "localhost") ||
           !strcmp(h, "0.0.0.0") || !strcmp(h, "::");
}

int kc__tls_generate(const char *extra_host, kc__tls_material *ret, kc_error *err)
{
    char san[HOST_MAX + 64] = "IP:127.0.0.1,IP:::1,DNS:localhost";
    if (extra_host && *extra_host && !is_default_host(extra_host)) {
        char extra[HOST_MAX + 16];
        int rc = san_for(extra_host, extra, sizeof extra, err);
        if (rc)
            return rc;
        strncat(san, extra, sizeof san - strlen(san) - 1);
    }
    int rc = KC_ETLS;
    EVP_PKEY *ca_key = NULL, *srv_key = NULL;
    X509 *ca = NULL, *srv = NULL;
    kc__tls_material m = {0};

    ca_key = EVP_EC_gen("P-256");
    srv_key = EVP_EC_gen("P-256");
    if (!ca_key || !srv_key) {
        rc = tls_fail(err, "generating EC P-256 keys");
        goto out;
    }
    ca = new_cert(ca_key, "kcache throw-away CA");
    if (!ca || !X509_set_issuer_name(ca, X509_get_subject_name(ca)) ||
        !add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") ||
        !add_ext(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
        !add_ext(ca, ca, NID_subject_key_identifier, "hash") ||
        !add_ext(ca, ca, NID_authority_key_identifier, "keyid:always") ||
        !X509_sign(ca, ca_key, EVP_sha256())) {
        rc = tls_fail(err, "building the CA certificate");
        goto out;
    }
    srv = new_cert(srv_key, "kcache serve");
    if (!srv || !X509_set_issuer_name(srv, X509_get_subject_name(ca)) ||
        !add_ext(srv, ca, NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(srv, ca, NID_key_usage, "critical,digitalSignature") ||
        !add_ext(srv, ca, NID_ext_key_usage, "serverAuth") ||
        !add_ext(srv, ca, NID_subject_alt_name, san) ||
        !add_ext(srv, ca, NID_subject_key_identifier, "hash") ||
        !add_ext(srv, ca, NID_authority_key_identifier, "keyid:always") ||
        !X509_sign(srv, ca_key, EVP_sha256())) {
        rc = tls_fail(err, "building the serving certificate");
        goto out;
    }
    m.ca_pem = cert_pem(ca);
    m.cert_pem = cert_pem(srv);
    m.key_pem = key_pem(srv_key);
    if (!m.ca_pem || !m.cert_pem || !m.key_pem) {
        kc__tls_material_clear(&m);
        rc = kc_error_set(err, KC_ENOMEM, "TLS: out of memory writing PEM");
        goto out;
    }
    *ret = m;
    rc = 0;
out:
    X509_free(srv);
    X509_free(ca);
    EVP_PKEY_free(srv_key);
    EVP_PKEY_free(ca_key);
    return rc;
}

void kc__tls_material_clear(kc__tls_material *m)
{
    if (!m)
        return;
    free(m->ca_pem);
    free(m->cert_pem);
    if (m->key_pem) {
        OPENSSL_cleanse(m->key_pem, strlen(m->key_pem));
        free(m->key_pem);
    }
    memset(m, 0, sizeof *m);
}

/*
 * webhook/cert.c — development certificates for a webhook: a CA and a serving certificate.
 *
 * Design: EC P-256 keys (OpenSSL 3 EVP). The CA is self-signed (basicConstraints critical CA:TRUE,
 * keyUsage keyCertSign+cRLSign, subject key id); with reuse_ca an existing dir/ca.crt + ca.key
 * pair is kept, so a new leaf can be issued under the same CA (rotation without touching the
 * webhook configuration's caBundle). The serving certificate has CA:FALSE, keyUsage
 * digitalSignature, extendedKeyUsage serverAuth and clientAuth (the same pair can then stand for
 * a client in tests of client_ca_file), the subjectAltName DNS and IP entries asked for
 * (the API server verifies the SAN, never the CN), a random 127-bit serial, and is valid from one
 * hour ago for valid_days. Files are written atomically: each into a temporary file in dir
 * (mode 0600 for keys, 0644 for certificates), fsync'd, then renamed over the old one; tls.key is
 * replaced before tls.crt so a watcher never pairs the new certificate with an old key for
 * longer than one rename. The layer does not use the embedded server's certificate code
 * (src/server is not below it).
 */
#include "webhook/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int openssl_fail(kc_error *err, const char *what)
{
    unsigned long e = ERR_get_error();
    char reason[256] = "unknown reason";
    if (e)
        ERR_error_string_n(e, reason, sizeof reason);
    ERR_clear_error();
    return kc_error_set(err, KC_ENOMEM, "webhook cert: %s: %s", what, reason);
}

/* Write data into dir/name atomically (temp + fsync + rename) with mode. */
static int write_atomic(const char *dir, const char *name, const char *data, size_t len, int mode,
                        kc_error *err)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%d", dir, name, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return kc_error_set(err, KC_EIO, "webhook cert: cannot write %s: %s", tmp, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    bool ok = off == len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return kc_error_set(err, KC_EIO, "webhook cert: cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

static char *pem_of(X509 *x, EVP_PKEY *k, size_t *len)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = NULL;
    if (b && (x ? PEM_write_bio_X509(b, x) : PEM_write_bio_PrivateKey(b, k, 0, 0, 0, 0, 0))) {
        char *data;
        long n = BIO_get_mem_data(b, &data);
        if (n >= 0 && (s = kc__strdup_n(data, (size_t)n)))
            *len = (size_t)n;
    }
    BIO_free(b);
    return s;
}

static bool ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    bool ok = e && X509_add_ext(cert, e, -1) == 1;
    X509_EXTENSION_free(e);
    return ok;
}

static X509 *skeleton(EVP_PKEY *key, const char *cn, int days)
{
    X509 *x = X509_new();
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    bool ok = x && RAND_bytes(serial, sizeof serial) == 1;
    if (ok) {
        serial[0] &= 0x7f;
        bn = BN_bin2bn(serial, sizeof serial, NULL);
        ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) && X509_set_version(x, 2) &&
             X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
             X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) &&
             X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
                                        (const unsigned char *)cn, -1, -1, 0) &&
             X509_set_pubkey(x, key);
    }
    BN_free(bn);
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/* "DNS:a,DNS:b,IP:1.2.3.4" from the options (KC_EINVAL for a bad name or address). */
static int san_list(const kc_webhook_cert_opts *o, kc__buf *b, kc_error *err)
{
    for (size_t i = 0; i < o->n_dns_names; i++) {
        const char *d = o->dns_names[i];
        size_t n = d ? strlen(d) : 0;
        const char *p = d + (n && d[0] == '*' && d[1] == '.' ? 2 : 0);
        if (!n || !kc__is_dns1123_subdomain(p, strlen(p)))
            return kc_error_set(err, KC_EINVAL, "webhook cert: bad DNS name %s", d ? d : "(null)");
        kc__buf_printf(b, "%sDNS:%s", b->len ? "," : "", d);
    }
    for (size_t i = 0; i < o->n_ip_addresses; i++) {
        const char *a = o->ip_addresses[i];
        unsigned char bin[16];
        if (!a || (inet_pton(AF_INET, a, bin) != 1 && inet_pton(AF_INET6, a, bin) != 1))
            return kc_error_set(err, KC_EINVAL, "webhook cert: bad IP address %s",
                                a ? a : "(null)");
        kc__buf_printf(b, "%sIP:%s", b->len ? "," : "", a);
    }
    if (!b->len)
        return kc_error_set(err, KC_EINVAL, "webhook cert: no DNS name and no IP address");
    return 0;
}

/* The CA: dir/ca.crt + ca.key when reuse_ca and both load, else a new one (written). */
static int get_ca(const kc_webhook_cert_opts *o, int days, X509 **ca, EVP_PKEY **key, kc_error *err)
{
    char p[4096];
    if (o->reuse_ca) {
        snprintf(p, sizeof p, "%s/ca.crt", o->dir);
        FILE *f = fopen(p, "r");
        *ca = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
        if (f)
            fclose(f);
        snprintf(p, sizeof p, "%s/ca.key", o->dir);
        f = fopen(p, "r");
        *key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
        if (f)
            fclose(f);
        ERR_clear_error();
        if (*ca && *key && X509_check_private_key(*ca, *key) == 1)
            return 0;
        ERR_clear_error();
        X509_free(*ca);
        EVP_PKEY_free(*key);
    }
    *key = EVP_EC_gen("P-256");
    *ca = *key ? skeleton(*key, "kcache webhook CA", days) : NULL;
    if (!*ca || !X509_set_issuer_name(*ca, X509_get_subject_name(*ca)) ||
        !ext(*ca, *ca, NID_basic_constraints, "critical,CA:TRUE") ||
        !ext(*ca, *ca, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
        !ext(*ca, *ca, NID_subject_key_identifier, "hash") || !X509_sign(*ca, *key, EVP_sha256()))
        return openssl_fail(err, "building the CA");
    size_t kl = 0;
    char *kp = pem_of(NULL, *key, &kl);
    int rc = kp ? write_atomic(o->dir, "ca.key", kp, kl, 0600, err)
                : kc_error_set(err, KC_ENOMEM, "webhook cert: out of memory");
    if (kp)
        OPENSSL_cleanse(kp, kl);
    free(kp);
    return rc;
}

static int leaf(const kc_webhook_cert_opts *o, int days, const char *san, X509 *ca,
                EVP_PKEY *ca_key, kc_error *err)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    const char *cn = o->n_dns_names ? o->dns_names[0] : o->ip_addresses[0];
    X509 *x = key ? skeleton(key, cn, days) : NULL;
    int rc = 0;
    if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca)) ||
        !ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
        !ext(x, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        !ext(x, ca, NID_ext_key_usage, "serverAuth,clientAuth") ||
        !ext(x, ca, NID_subject_alt_name, san) ||
        !ext(x, ca, NID_authority_key_identifier, "keyid:always") ||
        !X509_sign(x, ca_key, EVP_sha256()))
        rc = openssl_fail(err, "building the serving certificate");
    size_t kl = 0, cl = 0;
    char *kp = rc ? NULL : pem_of(NULL, key, &kl);
    char *cp = rc ? NULL : pem_of(x, NULL, &cl);
    if (rc == 0 && (!kp || !cp))
        rc = kc_error_set(err, KC_ENOMEM, "webhook cert: out of memory");
    if (rc == 0)
        rc = write_atomic(o->dir, "tls.key", kp, kl, 0600, err);
    if (rc == 0)
        rc = write_atomic(o->dir, "tls.crt", cp, cl, 0644, err);
    if (kp)
        OPENSSL_cleanse(kp, kl);
    free(kp);
    free(cp);
    X509_free(x);
    EVP_PKEY_free(key);
    return rc;
}

int(kc_webhook_cert_generate)(const kc_webhook_cert_opts *opts, size_t opts_size,
                              char **ret_ca_bundle, kc_error *err)
{
    if (!opts)
        return kc_error_set(err, KC_EINVAL, "webhook cert: opts is required");
    KC__OPTS_TAKE(opts, kc_webhook_cert_opts, err);
    if (!opts->dir || !*opts->dir)
        return kc_error_set(err, KC_EINVAL, "webhook cert: dir is required");
    if (opts->valid_days < 0)
        return kc_error_set(err, KC_EINVAL, "webhook cert: valid_days is negative");
    int days = opts->valid_days ? opts->valid_days : 365;
    kc__buf san = KC__BUF_INIT(64 * 1024);
    int rc = san_list(opts, &san, err);
    X509 *ca = NULL;
    EVP_PKEY *ca_key = NULL;
    if (rc == 0)
        rc = get_ca(opts, days, &ca, &ca_key, err);
    if (rc == 0)
        rc = leaf(opts, days, san.data, ca, ca_key, err);
    size_t cl = 0;
    char *ca_pem = rc ? NULL : pem_of(ca, NULL, &cl);
    if (rc == 0 && !ca_pem)
        rc = kc_error_set(err, KC_ENOMEM, "webhook cert: out of memory");
    if (rc == 0)
        rc = write_atomic(opts->dir, "ca.crt", ca_pem, cl, 0644, err);
    if (rc == 0 && ret_ca_bundle)
        rc = kc_base64_encode(ca_pem, cl, ret_ca_bundle, NULL, err);
    free(ca_pem);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    kc__buf_free(&san);
    return rc;
}

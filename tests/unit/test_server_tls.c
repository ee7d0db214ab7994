/*
 * test_server_tls.c — throw-away CA and serving certificate (src/server/http/tls.c): the chain
 * verifies with X509_verify_cert for purpose sslserver, the SANs cover 127.0.0.1, ::1, localhost
 * and the extra host, the CA is a CA, the key matches the certificate, and bad hosts are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string.h>

#include "server/http/tls.h"

static X509 *load_cert(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    assert_non_null(x);
    return x;
}

static int verify_chain(X509 *ca, X509 *leaf, const char *host, const char *ip)
{
    X509_STORE *st = X509_STORE_new();
    X509_STORE_add_cert(st, ca);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, st, leaf, NULL);
    X509_VERIFY_PARAM *p = X509_STORE_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_purpose(p, X509_PURPOSE_SSL_SERVER);
    X509_VERIFY_PARAM_set_flags(p, X509_V_FLAG_X509_STRICT);
    if (host)
        X509_VERIFY_PARAM_set1_host(p, host, 0);
    if (ip)
        X509_VERIFY_PARAM_set1_ip_asc(p, ip);
    int ok = X509_verify_cert(ctx);
    if (ok != 1)
        print_error("verify: %s\n", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(st);
    return ok;
}

static void test_server_tls_chain_verifies_for_loopback_names(void **state)
{
    kc__tls_material m = {0};
    assert_int_equal(kc__tls_generate(NULL, &m, NULL), 0);
    assert_non_null(strstr(m.ca_pem, "BEGIN CERTIFICATE"));
    assert_non_null(strstr(m.key_pem, "PRIVATE KEY"));
    X509 *ca = load_cert(m.ca_pem), *leaf = load_cert(m.cert_pem);
    assert_int_equal(verify_chain(ca, leaf, "localhost", NULL), 1);
    assert_int_equal(verify_chain(ca, leaf, NULL, "127.0.0.1"), 1);
    assert_int_equal(verify_chain(ca, leaf, NULL, "::1"), 1);
    assert_int_not_equal(verify_chain(ca, leaf, "example.com", NULL), 1);
    assert_int_not_equal(verify_chain(ca, leaf, NULL, "10.1.2.3"), 1);
    X509_free(ca);
    X509_free(leaf);
    kc__tls_material_clear(&m);
    assert_null(m.key_pem);
}

static void test_server_tls_extra_host_ip_and_dns(void **state)
{
    kc__tls_material m = {0};
    assert_int_equal(kc__tls_generate("10.1.2.3", &m, NULL), 0);
    X509 *ca = load_cert(m.ca_pem), *leaf = load_cert(m.cert_pem);
    assert_int_equal(verify_chain(ca, leaf, NULL, "10.1.2.3"), 1);
    assert_int_equal(verify_chain(ca, leaf, NULL, "127.0.0.1"), 1);
    X509_free(ca);
    X509_free(leaf);
    kc__tls_material_clear(&m);

    assert_int_equal(kc__tls_generate("kcache.test", &m, NULL), 0);
    ca = load_cert(m.ca_pem);
    leaf = load_cert(m.cert_pem);
    assert_int_equal(verify_chain(ca, leaf, "kcache.test", NULL), 1);
    X509_free(ca);
    X509_free(leaf);
    kc__tls_material_clear(&m);
}

static void test_server_tls_ca_is_ca_and_leaf_is_not(void **state)
{
    kc__tls_material m = {0};
    assert_int_equal(kc__tls_generate(NULL, &m, NULL), 0);
    X509 *ca = load_cert(m.ca_pem), *leaf = load_cert(m.cert_pem);
    assert_int_equal(X509_check_ca(ca), 1);
    assert_int_equal(X509_check_ca(leaf), 0);
    assert_true(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
    assert_int_equal(X509_check_issued(ca, leaf), X509_V_OK);
    X509_free(ca);
    X509_free(leaf);
    kc__tls_material_clear(&m);
}

static void test_server_tls_key_matches_certificate(void **state)
{
    kc__tls_material m = {0};
    assert_int_equal(kc__tls_generate(NULL, &m, NULL), 0);
    X509 *leaf = load_cert(m.cert_pem);
    BIO *b = BIO_new_mem_buf(m.key_pem, -1);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    assert_non_null(k);
    assert_int_equal(X509_check_private_key(leaf, k), 1);
    EVP_PKEY_free(k);
    X509_free(leaf);
    kc__tls_material_clear(&m);
}

static void test_server_tls_two_runs_differ(void **state)
{
    kc__tls_material a = {0}, b = {0};
    assert_int_equal(kc__tls_generate(NULL, &a, NULL), 0);
    assert_int_equal(kc__tls_generate(NULL, &b, NULL), 0);
    assert_string_not_equal(a.ca_pem, b.ca_pem);
    assert_string_not_equal(a.key_pem, b.key_pem);
    kc__tls_material_clear(&a);
    kc__tls_material_clear(&b);
}

static void test_server_tls_rejects_bad_extra_host(void **state)
{
    kc__tls_material m = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__tls_generate("evil,DNS:x", &m, &err), KC_EINVAL);
    assert_non_null(err.message);
    assert_null(m.ca_pem); /* untouched on failure */
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_tls_chain_verifies_for_loopback_names),
        cmocka_unit_test(test_server_tls_extra_host_ip_and_dns),
        cmocka_unit_test(test_server_tls_ca_is_ca_and_leaf_is_not),
        cmocka_unit_test(test_server_tls_key_matches_certificate),
        cmocka_unit_test(test_server_tls_two_runs_differ),
        cmocka_unit_test(test_server_tls_rejects_bad_extra_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

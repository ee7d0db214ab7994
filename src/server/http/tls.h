/*
 * tls.h — throw-away CA and serving certificate for `kcache serve --tls`.
 * Generated with OpenSSL at start: an EC P-256 (or RSA 2048) CA, and a serving certificate signed
 * by it with subjectAltNames for the listen address, 127.0.0.1, ::1 and localhost.
 */
#ifndef KC_SERVER_TLS_H
#define KC_SERVER_TLS_H

#include "kcache/error.h"

typedef struct kc__tls_material {
    char *ca_pem;   /* CA certificate (goes into the kubeconfig) */
    char *cert_pem; /* serving certificate */
    char *key_pem;  /* serving private key (never logged, never written to disk) */
} kc__tls_material;

/* Generate. extra_host (may be NULL) is an additional IP or DNS SAN. Errors: KC_ETLS with the
 * OpenSSL reason. On success *ret is filled; release with kc__tls_material_clear(). */
int kc__tls_generate(const char *extra_host, kc__tls_material *ret, kc_error *err);
void kc__tls_material_clear(kc__tls_material *m);

#endif

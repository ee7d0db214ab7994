/*
 * kubeconfig_out.h — write a kubeconfig for a running embedded server.
 * One cluster, one user, one context named "kcache", current-context set; the CA embedded as
 * certificate-authority-data, the token as token. Written with mode 0600, atomically (temp+rename).
 */
#ifndef KC_SERVER_KUBECONFIG_OUT_H
#define KC_SERVER_KUBECONFIG_OUT_H

#include "kcache/error.h"

/* ca_pem and token may be NULL. Errors: KC_EIO naming the path and errno text. */
int kc__kubeconfig_write(const char *path, const char *url, const char *ca_pem, const char *token,
                         kc_error *err);

#endif

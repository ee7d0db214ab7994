/*
 * serve_authz.h — `kcache serve`'s authentication and authorization flags (serve_authz.c):
 * --authorization, --user, --token-auth-file, --kubeconfig-out-as.
 */
#ifndef KC_CLI_SERVE_AUTHZ_H
#define KC_CLI_SERVE_AUTHZ_H

#include "kcache/server.h"

typedef struct kc__serve_authz {
    char *users; /* the --user entries, newline-joined (opts.users points here) */
    char **as;   /* --kubeconfig-out-as values, "USER=PATH" (borrowed from argv) */
    size_t n_as;
} kc__serve_authz;

/* One flag into *o / *z: 1 = not one of these flags, 0 = taken, else the usage error's exit
 * status (printed). */
int kc__serve_authz_flag(const char *flag, const char *val, kc_server_opts *o, kc__serve_authz *z);
/* Write the --kubeconfig-out-as kubeconfigs of a started server: 0, or 1 with the reason printed.
 */
int kc__serve_authz_write(kc_server *srv, const kc__serve_authz *z);
void kc__serve_authz_free(kc__serve_authz *z);

#endif

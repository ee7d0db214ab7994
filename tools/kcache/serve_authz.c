/*
 * serve_authz.c — `kcache serve`'s authentication and authorization flags:
 *   --authorization MODE        AlwaysAllow (default) or RBAC (kc_server_opts.authorization)
 *   --user NAME=TOKEN[:G1,G2]   an identity by bearer token (repeatable; kc_server_opts.users)
 *   --token-auth-file FILE      kube-apiserver's CSV token,user,uid,"groups" (token_auth_file)
 *   --kubeconfig-out-as USER=PATH
 *                               a kubeconfig whose token is USER's (repeatable;
 *                               kc_server_write_kubeconfig_as), written before the listening line
 */
#include "cli.h"
#include "serve_authz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int bad(const char *flag, const char *what, const char *val)
{
    return kc__cli_usage_error("serve", "%s: %s, got '%s'", flag, what, val);
}

int kc__serve_authz_flag(const char *flag, const char *val, kc_server_opts *o, kc__serve_authz *z)
{
    if (!strcmp(flag, "--authorization")) {
        if (!strcasecmp(val, "AlwaysAllow"))
            o->authorization = KC_SERVER_AUTHZ_ALWAYS_ALLOW;
        else if (!strcasecmp(val, "RBAC"))
            o->authorization = KC_SERVER_AUTHZ_RBAC;
        else
            return bad(flag, "expected AlwaysAllow or RBAC", val);
    } else if (!strcmp(flag, "--user")) {
        const char *eq = strchr(val, '=');
        if (!eq || eq == val || !eq[1] || strchr(val, '\n') || strchr(val, ';'))
            return bad(flag, "expected NAME=TOKEN[:GROUP,GROUP...]", val);
        size_t have = z->users ? strlen(z->users) : 0, l = strlen(val);
        char *u = realloc(z->users, have + l + 2);
        if (!u)
            return bad(flag, "out of memory", val);
        snprintf(u + have, l + 2, "%s%s", have ? "\n" : "", val);
        z->users = u;
        o->users = u;
    } else if (!strcmp(flag, "--token-auth-file")) {
        if (!*val)
            return bad(flag, "expected a file", val);
        o->token_auth_file = val; /* read by kc_server_new (it names a bad line) */
    } else if (!strcmp(flag, "--kubeconfig-out-as")) {
        const char *eq = strchr(val, '=');
        if (!eq || eq == val || !eq[1])
            return bad(flag, "expected USER=PATH", val);
        char **as = realloc(z->as, (z->n_as + 1) * sizeof(*as));
        if (!as)
            return bad(flag, "out of memory", val);
        z->as = as;
        z->as[z->n_as++] = (char *)val;
    } else {
        return 1;
    }
    return 0;
}

int kc__serve_authz_write(kc_server *srv, const kc__serve_authz *z)
{
    for (size_t i = 0; i < z->n_as; i++) {
        const char *eq = strchr(z->as[i], '=');
        char user[512];
        snprintf(user, sizeof user, "%.*s", (int)(eq - z->as[i]), z->as[i]);
        kc_error err = KC_ERROR_INIT;
        int rc = kc_server_write_kubeconfig_as(srv, user, eq + 1, &err);
        if (rc) {
            fprintf(stderr, "kcache serve: --kubeconfig-out-as %s: %s\n", z->as[i],
                    err.message ? err.message : kc_strerror(rc));
            kc_error_clear(&err);
            return 1;
        }
    }
    return 0;
}

void kc__serve_authz_free(kc__serve_authz *z)
{
    free(z->users);
    free(z->as);
    memset(z, 0, sizeof(*z));
}

/*
 * authn.c — who a request is. Identities come from bearer tokens, as kube-apiserver's static
 * token authenticator (--token-auth-file) and its ServiceAccount token authenticator:
 *   - the admin token (kc_server_opts.token; generated in RBAC mode when none is given): user
 *     "kubernetes-admin", groups system:masters and system:authenticated;
 *   - kc_server_opts.users, "NAME=TOKEN[:GROUP,GROUP…]" entries, one a line (`--user`);
 *   - kc_server_opts.token_auth_file, kube-apiserver's CSV: token,user,uid[,"group1,group2"];
 *   - tokens minted by TokenRequest (POST serviceaccounts/NAME/token): opaque random strings (not
 *     JWTs), identity system:serviceaccount:NS:NAME with groups system:serviceaccounts and
 *     system:serviceaccounts:NS; kept in memory (the oldest go beyond KC__AUTHZ_SA_TOKENS).
 * Every authenticated identity has group system:authenticated; a request without a token is
 * system:anonymous (group system:unauthenticated) in RBAC mode, and 401 in AlwaysAllow mode when
 * tokens are configured (the server's behaviour before RBAC). An unknown token is 401.
 * Impersonation (Impersonate-User / -Group / -Uid) replaces the identity once the original one is
 * allowed the `impersonate` verb on users / groups / serviceaccounts / uids (upstream's
 * WithImpersonation). Thread-safety: the static tokens are read-only after kc__authz_new; minted
 * ones are under az->mu.
 */
#include "server/authz/authz_internal.h"
#include "server/patch/validate.h"
#include "server/storage/write.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kc__user_add_group(kc__user *u, const char *g)
{
    for (size_t i = 0; i < u->n_groups; i++)
        if (!strcmp(u->groups[i], g))
            return;
    if (u->n_groups < KC__AUTHZ_MAX_GROUPS)
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "%s", g);
}

/* system:serviceaccount:NS:NAME → its groups. */
static void add_sa_groups(kc__user *u)
{
    const char *p = "system:serviceaccount:";
    if (strncmp(u->name, p, strlen(p)) != 0)
        return;
    const char *ns = u->name + strlen(p), *c = strchr(ns, ':');
    if (!c)
        return;
    char g[200];
    kc__user_add_group(u, "system:serviceaccounts");
    snprintf(g, sizeof g, "system:serviceaccounts:%.*s", (int)(c - ns), ns);
    kc__user_add_group(u, g);
}

static int add_token(kc__token **v, size_t *n, size_t *cap, const char *tok, size_t tl,
                     const kc__user *u)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        kc__token *t = realloc(*v, c * sizeof(*t));
        if (!t)
            return KC_ENOMEM;
        *v = t;
        *cap = c;
    }
    kc__token *t = &(*v)[*n];
    if (!(t->token = kc__strdup_n(tok, tl)))
        return KC_ENOMEM;
    t->user = *u;
    add_sa_groups(&t->user);
    kc__user_add_group(&t->user, "system:authenticated");
    (*n)++;
    return 0;
}

/* Split s at commas into u's groups. */
static void groups_from(kc__user *u, const char *s, size_t n)
{
    while (n) {
        const char *c = memchr(s, ',', n);
        size_t l = c ? (size_t)(c - s) : n;
        char g[160];
        if (l && l < sizeof g) {
            memcpy(g, s, l);
            g[l] = 0;
            kc__user_add_group(u, g);
        }
        if (!c)
            break;
        n -= l + 1;
        s = c + 1;
    }
}

/* One "NAME=TOKEN[:GROUP,GROUP…]" entry. */
static int parse_user(struct kc__authz *az, const char *e, size_t n, kc_error *err)
{
    const char *eq = memchr(e, '=', n);
    if (!eq || eq == e || eq + 1 == e + n || (size_t)(eq - e) >= sizeof(((kc__user *)0)->name))
        return kc_error_set(err, KC_EINVAL, "user \"%.*s\": want NAME=TOKEN[:GROUP,GROUP...]",
                            (int)n, e);
    kc__user u = {0};
    memcpy(u.name, e, (size_t)(eq - e));
    const char *tok = eq + 1, *end = e + n;
    const char *c = memchr(tok, ':', (size_t)(end - tok));
    size_t tl = c ? (size_t)(c - tok) : (size_t)(end - tok);
    if (!tl || memchr(tok, ',', tl))
        return kc_error_set(err, KC_EINVAL, "user \"%s\": empty token or token with ','", u.name);
    if (c)
        groups_from(&u, c + 1, (size_t)(end - c - 1));
    return add_token(&az->toks, &az->n_toks, &az->cap_toks, tok, tl, &u);
}

/* Next CSV field of line at *p (quotes allowed, "" inside quotes), into out. */
static void csv_field(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    size_t o = 0;
    bool q = *s == '"';
    if (q)
        s++;
    for (; *s; s++) {
        if (q && *s == '"') {
            if (s[1] == '"') {
                s++;
            } else {
                q = false;
                continue;
            }
        } else if (!q && *s == ',') {
            s++;
            break;
        }
        if (o + 1 < cap)
            out[o++] = *s;
    }
    out[o] = 0;
    *p = s;
}

static int parse_token_file(struct kc__authz *az, const char *path, kc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return kc_error_set(err, KC_EIO, "token auth file '%s': cannot open", path);
    char line[4096];
    int rc = 0, no = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        no++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        char tok[1024], uid[128], groups[2048];
        kc__user u = {0};
        const char *p = line;
        csv_field(&p, tok, sizeof tok);
        csv_field(&p, u.name, sizeof u.name);
        csv_field(&p, uid, sizeof uid);
        csv_field(&p, groups, sizeof groups);
        if (!tok[0] || !u.name[0]) {
            rc = kc_error_set(err, KC_EINVAL,
                              "token auth file '%s' line %d: want token,user,uid[,\"groups\"]",
                              path, no);
            break;
        }
        snprintf(u.uid, sizeof u.uid, "%s", uid);
        groups_from(&u, groups, strlen(groups));
        rc = add_token(&az->toks, &az->n_toks, &az->cap_toks, tok, strlen(tok), &u);
    }
    fclose(f);
    return rc;
}

static void random_token(char out[44])
{
    unsigned char b[21];
    if (RAND_bytes(b, sizeof b) != 1)
        memset(b, 0x5a, sizeof b); /* not reached in practice; still a token */
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

int kc__authz_new(kc_server *srv, const kc_server_opts *o, kc_error *err)
{
    if (o->authorization != KC_SERVER_AUTHZ_ALWAYS_ALLOW &&
        o->authorization != KC_SERVER_AUTHZ_RBAC)
        return kc_error_set(err, KC_EINVAL, "unknown authorization mode %d", o->authorization);
    struct kc__authz *az = calloc(1, sizeof(*az));
    if (!az)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    srv->authz = az;
    pthread_mutex_init(&az->mu, NULL);
    pthread_mutex_init(&az->agg_mu, NULL);
    az->rbac = o->authorization == KC_SERVER_AUTHZ_RBAC;
    az->crb = kc__registry_find(srv, "rbac.authorization.k8s.io", "v1", "clusterrolebindings");
    az->rb = kc__registry_find(srv, "rbac.authorization.k8s.io", "v1", "rolebindings");
    az->cr = kc__registry_find(srv, "rbac.authorization.k8s.io", "v1", "clusterroles");
    az->role = kc__registry_find(srv, "rbac.authorization.k8s.io", "v1", "roles");
    az->sa = kc__registry_find(srv, "", "v1", "serviceaccounts");
    az->agg_seen = UINT64_MAX;
    int rc = 0;
    if (az->rbac && !srv->token) { /* an admin identity for --kubeconfig-out */
        char t[44];
        random_token(t);
        if (!(srv->token = kc__strdup(t)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        srv->opts.token = srv->token;
    }
    if (srv->token) {
        kc__user admin = {0};
        snprintf(admin.name, sizeof admin.name, "%s", KC__AUTHZ_ADMIN_USER);
        kc__user_add_group(&admin, "system:masters");
        rc = add_token(&az->toks, &az->n_toks, &az->cap_toks, srv->token, strlen(srv->token),
                       &admin);
    }
    for (const char *p = o->users; !rc && p && *p;) {
        size_t l = strcspn(p, "\n;");
        if (l)
            rc = parse_user(az, p, l, err);
        p += l;
        p += *p ? 1 : 0;
    }
    if (!rc && o->token_auth_file)
        rc = parse_token_file(az, o->token_auth_file, err);
    if (rc == KC_ENOMEM)
        kc_error_set(err, rc, "out of memory");
    return rc;
}

void kc__authz_free(kc_server *srv)
{
    struct kc__authz *az = srv->authz;
    if (!az)
        return;
    for (size_t i = 0; i < az->n_toks; i++) {
        memset(az->toks[i].token, 0, strlen(az->toks[i].token));
        free(az->toks[i].token);
    }
    free(az->toks);
    for (size_t i = 0; i < az->n_sa; i++) {
        memset(az->sa_toks[i].token, 0, strlen(az->sa_toks[i].token));
        free(az->sa_toks[i].token);
    }
    free(az->sa_toks);
    for (size_t i = 0; i < KC__AUTHZ_CACHE; i++)
        kc__ruleset_free(az->cache[i]);
    pthread_mutex_destroy(&az->mu);
    pthread_mutex_destroy(&az->agg_mu);
    free(az);
    srv->authz = NULL;
}

bool kc__authz_rbac(const kc_server *srv)
{
    return srv->authz && srv->authz->rbac;
}

bool kc__authz_has_tokens(const kc_server *srv)
{
    return srv->authz && srv->authz->n_toks > 0;
}

/* Constant-time comparison of a and the NUL-terminated b (length leaks only). */
static bool same(const char *a, size_t al, const char *b)
{
    size_t bl = strlen(b);
    unsigned char d = (unsigned char)(al != bl);
    for (size_t i = 0; i < al && i < bl; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int kc__authz_authenticate(kc_server *srv, const char *h, kc__user *ret)
{
    struct kc__authz *az = srv->authz;
    memset(ret, 0, sizeof(*ret));
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        if (!az->rbac && az->n_toks)
            return KC_EUNAUTHORIZED;
        snprintf(ret->name, sizeof ret->name, "system:anonymous");
        kc__user_add_group(ret, "system:unauthenticated");
        return 0;
    }
    h += 7;
    size_t hl = strlen(h);
    for (size_t i = 0; i < az->n_toks; i++)
        if (same(h, hl, az->toks[i].token)) {
            *ret = az->toks[i].user;
            return 0;
        }
    int rc = KC_EUNAUTHORIZED;
    pthread_mutex_lock(&az->mu);
    for (size_t i = 0; i < az->n_sa; i++)
        if (same(h, hl, az->sa_toks[i].token)) {
            *ret = az->sa_toks[i].user;
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&az->mu);
    return rc;
}

const char *kc__authz_token_of(const kc_server *srv, const char *user)
{
    const struct kc__authz *az = srv->authz;
    for (size_t i = 0; az && i < az->n_toks; i++)
        if (!strcmp(az->toks[i].user.name, user))
            return az->toks[i].token;
    return NULL;
}

/* May u impersonate resource/name (in ns)? 403 in err when not. */
static int may_impersonate(kc_server *srv, const kc__user *u, const char *group,
                           const char *resource, const char *ns, const char *name, kc_error *err)
{
    kc__attrs a = {.user = u,
                   .resource_request = true,
                   .verb = "impersonate",
                   .group = group,
                   .version = "",
                   .resource = resource,
                   .sub = "",
                   .ns = ns,
                   .name = name};
    return kc__authz_allowed(srv, &a) ? 0 : kc__authz_forbidden(err, &a);
}

int kc__authz_impersonate(kc_server *srv, kc__user *inout, const char *user,
                          const char *const *groups, size_t n_groups, const char *uid,
                          kc_error *err)
{
    if (!user || !*user)
        return kc__fail(err, 400, "BadRequest", "requested %s without impersonating a user",
                        n_groups ? "Impersonate-Group" : "Impersonate-Uid");
    kc__user to = {0};
    snprintf(to.name, sizeof to.name, "%s", user);
    const char *sa = "system:serviceaccount:";
    int rc;
    if (!strncmp(user, sa, strlen(sa)) && strchr(user + strlen(sa), ':')) {
        const char *ns = user + strlen(sa), *c = strchr(ns, ':');
        char nsb[256];
        snprintf(nsb, sizeof nsb, "%.*s", (int)(c - ns), ns);
        rc = may_impersonate(srv, inout, "", "serviceaccounts", nsb, c + 1, err);
        if (!n_groups)
            add_sa_groups(&to);
    } else {
        rc = may_impersonate(srv, inout, "", "users", "", user, err);
    }
    for (size_t i = 0; !rc && i < n_groups; i++) {
        rc = may_impersonate(srv, inout, "", "groups", "", groups[i], err);
        kc__user_add_group(&to, groups[i]);
    }
    if (!rc && uid && *uid) {
        rc = may_impersonate(srv, inout, "authentication.k8s.io", "uids", "", uid, err);
        snprintf(to.uid, sizeof to.uid, "%s", uid);
    }
    if (rc)
        return rc;
    if (strcmp(user, "system:anonymous") != 0)
        kc__user_add_group(&to, "system:authenticated");
    *inout = to;
    return 0;
}

int kc__authz_token_request(kc_server *srv, const char *ns, const char *name, const char *body,
                            size_t len, char **ret, size_t *ret_len, kc_error *err)
{
    struct kc__authz *az = srv->authz;
    json_t *in = kc__authz_proto_doc(body, len);
    if (!in && len)
        in = json_loadb(body, len, 0, NULL);
    json_int_t exp = 3600;
    json_t *aud = NULL;
    if (in) {
        json_t *e = json_object_get(json_object_get(in, "spec"), "expirationSeconds");
        if (json_is_integer(e) && json_integer_value(e) >= 600)
            exp = json_integer_value(e);
        aud = json_object_get(json_object_get(in, "spec"), "audiences");
    }
    kc__user u = {0};
    snprintf(u.name, sizeof u.name, "system:serviceaccount:%s:%s", ns, name);
    pthread_mutex_lock(&srv->mu);
    kc__entry *e = kc__store_find(az->sa, ns, name);
    if (e)
        snprintf(u.uid, sizeof u.uid, "%s", kc_obj_uid(e->obj));
    pthread_mutex_unlock(&srv->mu);
    if (!e) {
        json_decref(in);
        return kc__fail_notfound(err, az->sa, name);
    }
    char tok[44];
    random_token(tok);
    pthread_mutex_lock(&az->mu);
    int rc = 0;
    if (az->n_sa >= KC__AUTHZ_SA_TOKENS) { /* replace the oldest */
        kc__token *t = &az->sa_toks[az->sa_next++ % KC__AUTHZ_SA_TOKENS];
        char *dup = kc__strdup(tok);
        if (dup) {
            free(t->token);
            t->token = dup;
            t->user = u;
            add_sa_groups(&t->user);
            kc__user_add_group(&t->user, "system:authenticated");
        } else {
            rc = KC_ENOMEM;
        }
    } else {
        rc = add_token(&az->sa_toks, &az->n_sa, &az->cap_sa, tok, strlen(tok), &u);
    }
    pthread_mutex_unlock(&az->mu);
    char now[32], until[32];
    kc__now_rfc3339(now);
    time_t t = time(NULL) + (time_t)exp;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(until, sizeof until, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *out =
        rc ? NULL
           : json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:O,s:I,s:n},s:{s:s,s:s}}", "kind",
                       "TokenRequest", "apiVersion", "authentication.k8s.io/v1", "metadata", "name",
                       name, "namespace", ns, "creationTimestamp", now, "spec", "audiences",
                       aud ? aud : json_pack("[s]", "https://kubernetes.default.svc"),
                       "expirationSeconds", (json_int_t)exp, "boundObjectRef", "status", "token",
                       tok, "expirationTimestamp", until);
    if (!aud && out)
        json_decref(json_object_get(json_object_get(out, "spec"), "audiences"));
    json_decref(in);
    *ret = out ? json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    if (!*ret)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    *ret_len = strlen(*ret);
    return 0;
}

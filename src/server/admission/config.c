/*
 * config.c — the snapshot one admission works on: under srv->mu, copies of the stored
 * MutatingWebhookConfigurations and ValidatingWebhookConfigurations (sorted by name, CH2) and of
 * the request namespace's labels (MW5 c); then, without the lock, the webhooks in call order with
 * the v1 defaults (failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10,
 * reinvocationPolicy Never). Also the --webhook-service mappings (MW12): a Service
 * NAME.NAMESPACE:PORT is dialled at a loopback HOST:PORT while TLS still verifies the name
 * NAME.NAMESPACE.svc.
 *
 * Design: a snapshot per request keeps the lock short and makes every webhook of one request see
 * one set of configurations, as kube-apiserver's informer-fed configuration manager does. Writes
 * of the configurations themselves are exempt (MW7), so they never depend on a webhook.
 */
#include "server/admission/admission_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One "NAME.NAMESPACE:PORT=HOST:PORT" entry [s, e): split; false when malformed. */
static bool service_entry(const char *s, const char *e, char *svc, size_t svc_cap, int *port,
                          char *addr, size_t addr_cap)
{
    const char *eq = memchr(s, '=', (size_t)(e - s));
    if (!eq)
        return false;
    const char *colon = NULL;
    for (const char *p = s; p < eq; p++)
        if (*p == ':')
            colon = p;
    if (!colon || (size_t)(colon - s) >= svc_cap || !memchr(s, '.', (size_t)(colon - s)))
        return false;
    char num[8] = "";
    size_t nl = (size_t)(eq - colon - 1);
    if (nl == 0 || nl >= sizeof(num))
        return false;
    memcpy(num, colon + 1, nl);
    char *end;
    long p = strtol(num, &end, 10);
    if (*end || p <= 0 || p > 65535)
        return false;
    size_t al = (size_t)(e - eq - 1);
    const char *ac = memchr(eq + 1, ':', al);
    if (al == 0 || al >= addr_cap || !ac || ac == eq + 1 || ac + 1 >= e)
        return false;
    memcpy(svc, s, (size_t)(colon - s));
    svc[colon - s] = 0;
    memcpy(addr, eq + 1, al);
    addr[al] = 0;
    *port = (int)p;
    return true;
}

int kc__adm_services_check(const char *text, kc_error *err)
{
    char svc[256], addr[300];
    int port;
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, ',');
        if (!e)
            e = s + strlen(s);
        if (e > s && !service_entry(s, e, svc, sizeof(svc), &port, addr, sizeof(addr)))
            return kc_error_set(err, KC_EINVAL,
                                "webhook service \"%.*s\" is not NAME.NAMESPACE:PORT=HOST:PORT",
                                (int)(e - s), s);
        s = *e ? e + 1 : e;
    }
    return 0;
}

bool kc__adm_service_lookup(const char *text, const char *name, const char *ns, int port, char *out,
                            size_t cap)
{
    char want[300], svc[256], addr[300];
    int p;
    snprintf(want, sizeof(want), "%s.%s", name, ns);
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, ',');
        if (!e)
            e = s + strlen(s);
        if (service_entry(s, e, svc, sizeof(svc), &p, addr, sizeof(addr)) && p == port &&
            !strcmp(svc, want)) {
            snprintf(out, cap, "%s", addr);
            return true;
        }
        s = *e ? e + 1 : e;
    }
    return false;
}

/* MW7: the configurations and policies themselves, and the virtual review resources. */
static bool exempt(const kc__rsrc *r)
{
    static const char *const adm[] = {"mutatingwebhookconfigurations",
                                      "validatingwebhookconfigurations",
                                      "validatingadmissionpolicies",
                                      "validatingadmissionpolicybindings",
                                      "mutatingadmissionpolicies",
                                      "mutatingadmissionpolicybindings",
                                      NULL};
    if (!strcmp(r->group, "admissionregistration.k8s.io"))
        for (size_t i = 0; adm[i]; i++)
            if (!strcmp(r->plural, adm[i]))
                return true;
    return !strcmp(r->group, "authentication.k8s.io") || !strcmp(r->group, "authorization.k8s.io");
}

static bool configured(kc_server *srv, const char *plural)
{
    kc__rsrc *r = kc__registry_find(srv, "admissionregistration.k8s.io", "v1", plural);
    return r && r->map.n > 0;
}

bool kc__adm_may_call(kc_server *srv, bool write, const char *group, const char *version,
                      const char *plural)
{
    pthread_mutex_lock(&srv->mu);
    bool may = write && (configured(srv, "mutatingwebhookconfigurations") ||
                         configured(srv, "validatingwebhookconfigurations"));
    if (!may) {
        kc__rsrc *r = kc__registry_find(srv, group, version, plural);
        may = r && r->is_crd && r->n_versions > 1 && strcmp(version, r->versions[0]) != 0;
    }
    pthread_mutex_unlock(&srv->mu);
    return may;
}

/* Copies of the stored configurations of plural, in name order, appended to out (mu held). */
static int snapshot_kind(kc_server *srv, const char *plural, json_t *out)
{
    kc__rsrc *r = kc__registry_find(srv, "admissionregistration.k8s.io", "v1", plural);
    if (!r || r->map.n == 0)
        return 0;
    size_t n = 0;
    kc__entry **es = kc__store_sorted(r, &n);
    if (!es && n)
        return KC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *d = kc__doc_from_obj(es[i]->obj);
        if (!d || json_array_append_new(out, d) != 0)
            return KC_ENOMEM;
    }
    return 0;
}

/* The request namespace's labels (mu held), MW5 c. */
static void snapshot_namespace(kc_server *srv, kc__adm_chain *c)
{
    if (!c->a.ns || !*c->a.ns)
        return;
    kc__rsrc *nsr = kc__rsrc_namespaces(srv);
    kc__entry *e = nsr ? kc__store_find(nsr, "", c->a.ns) : NULL;
    if (!e) {
        c->ns_missing = true;
        return;
    }
    json_t *d = kc__doc_from_obj(e->obj);
    json_t *l = json_object_get(json_object_get(d, "metadata"), "labels");
    c->ns_labels = json_is_object(l) ? json_incref(l) : NULL;
    json_decref(d);
}

static int hook_from(kc__adm_hook *h, const json_t *def, bool mutating, int index)
{
    h->def = def;
    h->name = json_string_value(json_object_get(def, "name"));
    if (!h->name)
        h->name = "";
    h->mutating = mutating;
    const char *fp = json_string_value(json_object_get(def, "failurePolicy"));
    h->ignore = fp && !strcmp(fp, "Ignore");
    const char *rp = json_string_value(json_object_get(def, "reinvocationPolicy"));
    h->reinvoke = mutating && rp && !strcmp(rp, "IfNeeded");
    json_t *t = json_object_get(def, "timeoutSeconds");
    h->timeout_s = json_is_integer(t) ? (int)json_integer_value(t) : 10;
    if (h->timeout_s < 1)
        h->timeout_s = 1;
    if (h->timeout_s > 30)
        h->timeout_s = 30;
    h->index = index;
    return 0;
}

/* The webhooks of every configuration of one kind, in order (CH2). */
static int collect(kc__adm_chain *c, const char *kind, bool mutating)
{
    size_t n = 0, i, j;
    json_t *cfg;
    json_array_foreach(c->configs, i, cfg)
    {
        if (!strcmp(json_string_value(json_object_get(cfg, "kind")) ?: "", kind))
            n += json_array_size(json_object_get(cfg, "webhooks"));
    }
    if (!n)
        return 0;
    kc__adm_hook *hs = calloc(n, sizeof(*hs));
    if (!hs)
        return KC_ENOMEM;
    size_t k = 0;
    json_array_foreach(c->configs, i, cfg)
    {
        if (strcmp(json_string_value(json_object_get(cfg, "kind")) ?: "", kind))
            continue;
        json_t *w;
        json_array_foreach(json_object_get(cfg, "webhooks"), j, w)
        {
            hook_from(&hs[k], w, mutating, (int)k);
            k++;
        }
    }
    if (mutating) {
        c->mut = hs;
        c->n_mut = k;
    } else {
        c->val = hs;
        c->n_val = k;
    }
    return 0;
}

int kc__adm_begin(kc_server *srv, const kc__adm_attrs *a, kc__adm_chain **ret, kc_error *err)
{
    *ret = NULL;
    if (exempt(a->r))
        return 0;
    kc__adm_chain *c = calloc(1, sizeof(*c));
    json_t *configs = json_array();
    if (!c || !configs) {
        free(c);
        json_decref(configs);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    c->srv = srv;
    c->a = *a;
    c->configs = configs;
    pthread_mutex_lock(&srv->mu);
    int rc = snapshot_kind(srv, "mutatingwebhookconfigurations", configs);
    if (rc == 0)
        rc = snapshot_kind(srv, "validatingwebhookconfigurations", configs);
    if (rc == 0 && json_array_size(configs))
        snapshot_namespace(srv, c);
    pthread_mutex_unlock(&srv->mu);
    if (rc == 0 && json_array_size(configs) == 0) {
        kc__adm_end(c);
        return 0;
    }
    if (rc == 0 && (rc = collect(c, "MutatingWebhookConfiguration", true)) == 0)
        rc = collect(c, "ValidatingWebhookConfiguration", false);
    if (rc == 0 && srv->webhook_services && !(c->services = strdup(srv->webhook_services)))
        rc = KC_ENOMEM;
    if (rc) {
        kc__adm_end(c);
        return kc_error_set(err, rc, "admission: out of memory");
    }
    *ret = c;
    return 0;
}

void kc__adm_set_old(kc__adm_chain *c, const char *op, const json_t *old)
{
    c->a.op = op;
    c->a.old = old;
}

void kc__adm_set_kind(kc__adm_chain *c, const char *group, const char *version, const char *kind)
{
    c->kind_group = group;
    c->kind_version = version;
    c->kind = kind;
}

void kc__adm_set_options(kc__adm_chain *c, json_t *options)
{
    json_decref(c->options);
    c->options = options;
    c->a.options = options;
}

bool kc__adm_has_validating(const kc__adm_chain *c)
{
    return c && c->n_val > 0;
}

void kc__adm_end(kc__adm_chain *c)
{
    if (!c)
        return;
    json_decref(c->configs);
    json_decref(c->ns_labels);
    json_decref(c->options);
    free(c->mut);
    free(c->val);
    free(c->services);
    for (size_t i = 0; i < c->n_seen; i++)
        free(c->seen[i]);
    free(c);
}

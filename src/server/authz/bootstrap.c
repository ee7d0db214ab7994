/*
 * bootstrap.c — the RBAC policy a new cluster has, and the ClusterRole aggregation controller.
 *
 * Bootstrap (RBAC mode, at start): the ClusterRoles users rely on, as kube-apiserver's
 * bootstrappolicy (label kubernetes.io/bootstrapping=rbac-defaults, annotation
 * rbac.authorization.kubernetes.io/autoupdate=true): cluster-admin (everything), admin, edit and
 * view (aggregated from ClusterRoles labelled rbac.authorization.k8s.io/aggregate-to-{admin,edit,
 * view}: system:aggregate-to-* hold their base rules, and edit is labelled to-admin, view
 * to-edit, so admin ⊇ edit ⊇ view), system:basic-user (the self reviews), system:discovery and
 * system:public-info-viewer (non-resource URLs); their bindings: cluster-admin to system:masters,
 * basic-user and discovery to system:authenticated, public-info-viewer to system:authenticated
 * and system:unauthenticated. The rules are a subset of upstream's (the resources this server
 * serves).
 *
 * Aggregation (both modes, as kube-controller-manager's clusterrole-aggregation controller): a
 * ClusterRole with aggregationRule.clusterRoleSelectors gets as rules the union of the rules of
 * every other ClusterRole whose labels match one of its selectors (matchLabels, matchExpressions:
 * In, NotIn, Exists, DoesNotExist), those ClusterRoles taken by name, duplicates dropped. It runs
 * lazily, before any request is authorized or served once ClusterRoles changed (one atomic compare
 * otherwise), so what a client reads after a write is already aggregated; chains (view → edit →
 * admin) settle in a few passes.
 */
#include "server/authz/authz_internal.h"
#include "server/storage/write.h"
#include "server/validation/validation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META(name, labels)                                                                         \
    "\"metadata\":{\"name\":\"" name "\",\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-"      \
    "defaults\"" labels "},\"annotations\":{\"rbac.authorization.kubernetes.io/autoupdate\":"      \
    "\"true\"}}"
#define CR     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
#define CRB    "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
#define AGG(x) ",\"rbac.authorization.k8s.io/aggregate-to-" x "\":\"true\""
#define AGG_RULE(x)                                                                                \
    "\"aggregationRule\":{\"clusterRoleSelectors\":[{\"matchLabels\":{"                            \
    "\"rbac.authorization.k8s.io/aggregate-to-" x "\":\"true\"}}]},\"rules\":[]}"
#define R(groups, resources, verbs)                                                                \
    "{\"apiGroups\":[" groups "],\"resources\":[" resources "],\"verbs\":[" verbs "]}"
#define READ  "\"get\",\"list\",\"watch\""
#define WRITE "\"create\",\"delete\",\"deletecollection\",\"patch\",\"update\""
#define REF(role)                                                                                  \
    "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":"   \
    "\"" role "\"}"
#define GROUP(g)                                                                                   \
    "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":\"" g "\"}"

#define CORE_EDIT                                                                                  \
    "\"pods\",\"pods/attach\",\"pods/exec\",\"pods/portforward\",\"pods/proxy\",\"configmaps\","   \
    "\"events\",\"persistentvolumeclaims\",\"replicationcontrollers\","                            \
    "\"replicationcontrollers/scale\",\"secrets\",\"serviceaccounts\",\"services\","               \
    "\"services/proxy\""
#define APPS_EDIT                                                                                  \
    "\"daemonsets\",\"deployments\",\"deployments/scale\",\"replicasets\","                        \
    "\"replicasets/scale\",\"statefulsets\",\"statefulsets/scale\""
#define CORE_VIEW                                                                                  \
    "\"configmaps\",\"endpoints\",\"persistentvolumeclaims\",\"persistentvolumeclaims/status\","   \
    "\"pods\",\"replicationcontrollers\",\"replicationcontrollers/scale\",\"serviceaccounts\","    \
    "\"services\",\"services/status\",\"bindings\",\"events\",\"limitranges\",\"namespaces/"       \
    "status\",\"pods/log\",\"pods/status\",\"replicationcontrollers/status\",\"resourcequotas\","  \
    "\"resourcequotas/status\",\"namespaces\""
#define APPS_VIEW                                                                                  \
    "\"controllerrevisions\",\"daemonsets\",\"daemonsets/status\",\"deployments\","                \
    "\"deployments/scale\",\"deployments/status\",\"replicasets\",\"replicasets/scale\","          \
    "\"replicasets/status\",\"statefulsets\",\"statefulsets/scale\",\"statefulsets/status\""

/* clang-format off */
static const char *const objects[] = {
    CR META("cluster-admin", ) ",\"rules\":["
        R("\"*\"", "\"*\"", "\"*\"") ",{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}]}",
    CR META("admin", ) "," AGG_RULE("admin"),
    CR META("edit", AGG("admin")) "," AGG_RULE("edit"),
    CR META("view", AGG("edit")) "," AGG_RULE("view"),
    CR META("system:aggregate-to-admin", AGG("admin")) ",\"rules\":["
        R("\"rbac.authorization.k8s.io\"", "\"rolebindings\",\"roles\"", READ "," WRITE) ","
        R("\"authorization.k8s.io\"", "\"localsubjectaccessreviews\"", "\"create\"") "]}",
    CR META("system:aggregate-to-edit", AGG("edit")) ",\"rules\":["
        R("\"\"", CORE_EDIT, WRITE) ","
        R("\"\"", "\"serviceaccounts\"", "\"impersonate\"") ","
        R("\"\"", "\"serviceaccounts/token\"", "\"create\"") ","
        R("\"apps\"", APPS_EDIT, WRITE) ","
        R("\"autoscaling\"", "\"horizontalpodautoscalers\"", WRITE) ","
        R("\"batch\"", "\"cronjobs\",\"jobs\"", WRITE) ","
        R("\"networking.k8s.io\"", "\"ingresses\",\"networkpolicies\"", WRITE) ","
        R("\"policy\"", "\"poddisruptionbudgets\"", WRITE) "]}",
    CR META("system:aggregate-to-view", AGG("view")) ",\"rules\":["
        R("\"\"", CORE_VIEW, READ) ","
        R("\"apps\"", APPS_VIEW, READ) ","
        R("\"autoscaling\"", "\"horizontalpodautoscalers\",\"horizontalpodautoscalers/status\"", READ) ","
        R("\"batch\"", "\"cronjobs\",\"cronjobs/status\",\"jobs\",\"jobs/status\"", READ) ","
        R("\"discovery.k8s.io\"", "\"endpointslices\"", READ) ","
        R("\"networking.k8s.io\"", "\"ingresses\",\"ingresses/status\",\"networkpolicies\"", READ) ","
        R("\"policy\"", "\"poddisruptionbudgets\",\"poddisruptionbudgets/status\"", READ) "]}",
    CR META("system:basic-user", ) ",\"rules\":["
        R("\"authorization.k8s.io\"", "\"selfsubjectaccessreviews\",\"selfsubjectrulesreviews\"", "\"create\"") ","
        R("\"authentication.k8s.io\"", "\"selfsubjectreviews\"", "\"create\"") "]}",
    CR META("system:discovery", ) ",\"rules\":[{\"nonResourceURLs\":[\"/api\",\"/api/*\","
        "\"/apis\",\"/apis/*\",\"/healthz\",\"/livez\",\"/openapi\",\"/openapi/*\",\"/readyz\","
        "\"/version\",\"/version/\"],\"verbs\":[\"get\"]}]}",
    CR META("system:public-info-viewer", ) ",\"rules\":[{\"nonResourceURLs\":[\"/healthz\","
        "\"/livez\",\"/readyz\",\"/version\",\"/version/\"],\"verbs\":[\"get\"]}]}",
    CRB META("cluster-admin", ) "," REF("cluster-admin") ",\"subjects\":[" GROUP("system:masters") "]}",
    CRB META("system:basic-user", ) "," REF("system:basic-user") ",\"subjects\":["
        GROUP("system:authenticated") "]}",
    CRB META("system:discovery", ) "," REF("system:discovery") ",\"subjects\":["
        GROUP("system:authenticated") "]}",
    CRB META("system:public-info-viewer", ) "," REF("system:public-info-viewer") ",\"subjects\":["
        GROUP("system:authenticated") "," GROUP("system:unauthenticated") "]}",
};
/* clang-format on */

int kc__authz_bootstrap(kc_server *srv, bool have_lock, kc_error *err)
{
    if (!kc__authz_rbac(srv))
        return 0;
    for (size_t i = 0; i < KC__ARRAY_LEN(objects); i++) {
        kc_error e = KC_ERROR_INIT;
        int rc = kc__create_json_ex(srv, objects[i], strlen(objects[i]), have_lock, false, &e);
        if (rc && rc != KC_EEXISTS) {
            kc_error_set(err, rc, "bootstrap RBAC object %zu: %s", i,
                         e.message ? e.message : kc_strerror(rc));
            kc_error_clear(&e);
            return rc;
        }
        kc_error_clear(&e);
    }
    return 0;
}

/* Does the LabelSelector sel (non-empty) match labels? An empty selector matches nothing here,
 * as upstream's aggregation skips it. */
static bool selector_matches(const json_t *sel, const json_t *labels)
{
    bool empty, bad;
    bool m = kc__v_selector_matches(sel, labels, &empty, &bad);
    return !empty && m;
}

static bool matches_any(const json_t *selectors, const json_t *doc)
{
    const json_t *labels = json_object_get(json_object_get(doc, "metadata"), "labels");
    size_t i;
    json_t *sel;
    json_array_foreach(selectors, i, sel)
    {
        if (selector_matches(sel, labels))
            return true;
    }
    return false;
}

/* The aggregated rules of docs[self] from the other ClusterRoles (docs in name order). */
static json_t *aggregated_rules(json_t **docs, size_t n, size_t self, const json_t *selectors)
{
    json_t *rules = json_array();
    for (size_t j = 0; j < n && rules; j++) {
        if (j == self || !docs[j] || !matches_any(selectors, docs[j]))
            continue;
        size_t k, m;
        json_t *pr, *have;
        json_array_foreach(json_object_get(docs[j], "rules"), k, pr)
        {
            bool dup = false;
            json_array_foreach(rules, m, have)
            {
                if (json_equal(have, pr))
                    dup = true;
            }
            if (!dup)
                json_array_append(rules, pr);
        }
    }
    return rules;
}

/* One pass over the ClusterRoles (mu held): true when a rule set was rewritten. */
static bool aggregate_pass(kc_server *srv, kc__rsrc *cr)
{
    size_t n = 0;
    kc__entry **es = kc__store_sorted(cr, &n);
    json_t **docs = n ? calloc(n, sizeof(*docs)) : NULL;
    if (!docs)
        return false;
    for (size_t i = 0; i < n; i++)
        docs[i] = kc__doc_from_obj(es[i]->obj);
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        const json_t *sels =
            json_object_get(json_object_get(docs[i], "aggregationRule"), "clusterRoleSelectors");
        if (!docs[i] || !json_array_size(sels))
            continue;
        json_t *rules = aggregated_rules(docs, n, i, sels);
        if (rules && !json_equal(rules, json_object_get(docs[i], "rules"))) {
            json_object_set(docs[i], "rules", rules);
            kc_error err = KC_ERROR_INIT;
            if (kc__write_internal_update(srv, cr, es[i], docs[i], &err) == 0)
                changed = true;
            kc_error_clear(&err);
        }
        json_decref(rules);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(docs[i]);
    free(docs);
    return changed;
}

void kc__authz_aggregate(kc_server *srv)
{
    struct kc__authz *az = srv->authz;
    if (!az || az->cr->changes == az->agg_seen)
        return;
    pthread_mutex_lock(&az->agg_mu);
    pthread_mutex_lock(&srv->mu);
    for (int pass = 0; pass < 8 && aggregate_pass(srv, az->cr); pass++)
        ;
    az->agg_seen = az->cr->changes;
    pthread_mutex_unlock(&srv->mu);
    pthread_mutex_unlock(&az->agg_mu);
}

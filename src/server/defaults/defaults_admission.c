/*
 * defaults_admission.c — the scheme's defaults of admissionregistration.k8s.io/v1
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration (SetDefaults_ValidatingWebhook,
 * SetDefaults_MutatingWebhook, SetDefaults_Rule, SetDefaults_ServiceReference), so a stored
 * configuration reads back as from a cluster: failurePolicy Fail, matchPolicy Equivalent,
 * namespaceSelector and objectSelector {}, sideEffects left alone (required in v1),
 * timeoutSeconds 10, reinvocationPolicy Never (mutating), each rule's scope "*", a Service's port
 * 443. The admission room reads the same defaults when a field is missing.
 */
#include "server/defaults/defaults_internal.h"

#include <string.h>

static void webhook(kc__dctx *c, json_t *w, bool mutating)
{
    kc__dj_ptr_str(c, w, "failurePolicy", "Fail");
    kc__dj_ptr_str(c, w, "matchPolicy", "Equivalent");
    kc__dj_struct(c, w, "namespaceSelector");
    kc__dj_struct(c, w, "objectSelector");
    kc__dj_ptr_int(c, w, "timeoutSeconds", 10);
    if (mutating)
        kc__dj_ptr_str(c, w, "reinvocationPolicy", "Never");
    size_t i;
    json_t *rule;
    json_array_foreach(json_object_get(w, "rules"), i, rule)
    {
        if (json_is_object(rule))
            kc__dj_ptr_str(c, rule, "scope", "*");
    }
    json_t *svc = kc__dj_get_obj(kc__dj_get_obj(w, "clientConfig"), "service");
    if (svc)
        kc__dj_ptr_int(c, svc, "port", 443);
}

bool kc__defaults_admission(kc__dctx *c, const char *group, const char *kind, json_t *doc)
{
    if (strcmp(group, "admissionregistration.k8s.io") != 0)
        return false;
    bool mutating = !strcmp(kind, "MutatingWebhookConfiguration");
    if (!mutating && strcmp(kind, "ValidatingWebhookConfiguration") != 0)
        return false;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "webhooks"), i, w)
    {
        if (json_is_object(w))
            webhook(c, w, mutating);
    }
    return true;
}

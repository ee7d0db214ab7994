/*
 * sim_sts.c — the StatefulSet controller of the simulated cluster: pods "<sts>-0".."<sts>-N-1"
 * with labels controller-revision-hash ("<sts>-<hash of the template>"),
 * statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index, hostname and subdomain
 * (spec.serviceName). OrderedReady (default): pod i is created only once pods 0..i-1 are Running
 * and Ready, one at a time, and scale-down removes the highest ordinal first, one at a time.
 * Parallel: all at once. RollingUpdate: once every pod is ready, the highest-ordinal pod of an
 * older revision is deleted (and comes back at the new one). Status: replicas, readyReplicas,
 * availableReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision,
 * observedGeneration, collisionCount. Not simulated: volumeClaimTemplates (no PVCs), partition.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t ordinal(const kc__sim_pod *p, const char *sts)
{
    const char *name = p->key + strlen(p->key) + 1;
    size_t n = strlen(sts);
    if (strncmp(name, sts, n) != 0 || name[n] != '-')
        return -1;
    char *end;
    long long v = strtoll(name + n + 1, &end, 10);
    return *end ? -1 : v;
}

static void create_pod(kc__sim *s, const char *ns, const char *name, json_t *doc, int64_t i,
                       const char *rev)
{
    char pname[320], idx[24];
    snprintf(pname, sizeof(pname), "%s-%lld", name, (long long)i);
    snprintf(idx, sizeof(idx), "%lld", (long long)i);
    json_t *spec = json_object_get(doc, "spec");
    json_t *extra =
        json_pack("{s:s, s:s, s:s}", "controller-revision-hash", rev,
                  "statefulset.kubernetes.io/pod-name", pname, "apps.kubernetes.io/pod-index", idx);
    json_t *pod = kc__sim_pod_from_template(json_object_get(spec, "template"), doc, "apps/v1",
                                            "StatefulSet", pname, NULL, extra);
    json_decref(extra);
    if (!pod)
        return;
    json_t *ps = json_object_get(pod, "spec");
    json_object_set_new(ps, "hostname", json_string(pname));
    const char *svc = json_string_value(json_object_get(spec, "serviceName"));
    if (svc && *svc)
        json_object_set_new(ps, "subdomain", json_string(svc));
    kc__sim_create(s, s->r[SIM_POD], ns, pod, false, NULL);
    json_decref(pod);
}

static void delete_pod(kc__sim *s, const char *ns, const char *name, int64_t i)
{
    char pname[320];
    snprintf(pname, sizeof(pname), "%s-%lld", name, (long long)i);
    kc__entry *e = kc__store_find(s->r[SIM_POD], ns, pname);
    if (e)
        kc__sim_delete(s, s->r[SIM_POD], e);
}

/* Create / delete toward replicas; returns true when every wanted pod is there and ready. */
static bool converge(kc__sim *s, const char *ns, const char *name, const char *uid, json_t *doc,
                     int64_t replicas, bool ordered, const char *rev)
{
    int64_t top = -1;
    bool busy = false; /* a pod being deleted or not ready: ordered waits */
    for (size_t i = 0; i < s->pods.cap; i++) {
        kc__sim_pod *p = (kc__sim_pod *)KC__HTAB_AT(&s->pods, i);
        if (!p || strcmp(p->owner_uid, uid) != 0)
            continue;
        int64_t o = ordinal(p, name);
        if (p->deleting || !p->ready)
            busy = true;
        if (o >= replicas && !p->deleting && o > top)
            top = o;
        if (o >= replicas && !p->deleting && !ordered)
            delete_pod(s, ns, name, o), i = (size_t)-1;
    }
    if (ordered && top >= 0 && !busy)
        delete_pod(s, ns, name, top);
    bool all = true;
    for (int64_t i = 0; i < replicas; i++) {
        char pname[320];
        snprintf(pname, sizeof(pname), "%s-%lld", name, (long long)i);
        kc__sim_pod *p = kc__sim_pod_find(s, ns, pname);
        if (!p) {
            all = false;
            create_pod(s, ns, name, doc, i, rev);
            if (ordered)
                return false;
            continue;
        }
        if (p->deleting || !p->ready) {
            all = false;
            if (ordered)
                return false;
        }
    }
    return all && top < 0;
}

void kc__sim_reconcile_sts(kc__sim *s, const char *ns, const char *name)
{
    pthread_mutex_lock(&s->srv->mu);
    kc__entry *e = kc__store_find(s->r[SIM_STS], ns, name);
    json_t *doc = e && !kc_obj_deleting(e->obj) ? kc__doc_from_obj(e->obj) : NULL;
    if (!doc)
        goto out;
    char uid[64], hash[16], rev[320];
    snprintf(uid, sizeof(uid), "%s", kc_obj_uid(e->obj));
    json_t *spec = json_object_get(doc, "spec");
    int64_t replicas = kc__sim_int(spec, "replicas", 1);
    const char *pol = json_string_value(json_object_get(spec, "podManagementPolicy"));
    bool ordered = !pol || strcmp(pol, "Parallel") != 0;
    kc__sim_template_hash(json_object_get(spec, "template"), 0, hash);
    snprintf(rev, sizeof(rev), "%.250s-%s", name, hash);
    if (converge(s, ns, name, uid, doc, replicas, ordered, rev)) {
        /* rolling update: the highest ordinal of an older revision goes */
        for (int64_t i = replicas - 1; i >= 0; i--) {
            char pname[320];
            snprintf(pname, sizeof(pname), "%s-%lld", name, (long long)i);
            kc__sim_pod *p = kc__sim_pod_find(s, ns, pname);
            if (p && strcmp(p->rev, rev) != 0) {
                delete_pod(s, ns, name, i);
                break;
            }
        }
    }
    kc__sim_count c;
    kc__sim_count_pods(s, ns, uid, rev, &c);
    json_t *old = json_object_get(doc, "status");
    const char *cur_rev = json_string_value(json_object_get(old, "currentRevision"));
    json_t *st = json_pack(
        "{s:I, s:I, s:I, s:I, s:s, s:s, s:I, s:I}", "observedGeneration",
        (json_int_t)kc_obj_generation(e->obj), "replicas", (json_int_t)c.active, "readyReplicas",
        (json_int_t)c.ready, "availableReplicas", (json_int_t)c.ready, "currentRevision",
        c.updated == replicas || !cur_rev ? rev : cur_rev, "updateRevision", rev, "collisionCount",
        (json_int_t)0, "currentReplicas", (json_int_t)c.updated);
    json_object_set_new(st, "updatedReplicas", json_integer(c.updated));
    json_object_set_new(doc, "status", st);
    if ((e = kc__store_find(s->r[SIM_STS], ns, name)))
        kc__sim_update(s, s->r[SIM_STS], e, doc, SIM_STATUS, NULL);
out:
    json_decref(doc);
    pthread_mutex_unlock(&s->srv->mu);
}

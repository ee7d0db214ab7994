/*
 * sim_rs.c — the ReplicaSet controller of the simulated cluster: as many active pods (not being
 * deleted, not finished) controlled by the ReplicaSet as spec.replicas (default 1): missing ones
 * created from spec.template with generateName "<rs>-" (a 5-character suffix) and an
 * ownerReference (controller, blockOwnerDeletion), extra ones deleted — unscheduled first, then
 * not ready, then ready (the delete is graceful: the kubelet removes them). Status as upstream:
 * replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (minReadySeconds not
 * simulated: available = ready), observedGeneration. Counts come from the pod table (exact: every
 * write of the simulation updates it at once).
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Delete n active pods of owner uid, the least advanced first. */
static void scale_down(kc__sim *s, const char *uid, int64_t n)
{
    for (int rank = 0; rank < 3 && n > 0; rank++)
        for (size_t i = 0; i < s->pods.cap && n > 0; i++) {
            kc__sim_pod *p = (kc__sim_pod *)KC__HTAB_AT(&s->pods, i);
            if (!p || p->deleting || p->succeeded || p->failed || strcmp(p->owner_uid, uid) != 0)
                continue;
            int r = p->node < 0 ? 0 : !p->ready ? 1 : 2;
            if (r != rank)
                continue;
            const char *ns = p->key, *name = p->key + strlen(p->key) + 1;
            kc__entry *e = kc__store_find(s->r[SIM_POD], ns, name);
            if (e) {
                kc__sim_delete(s, s->r[SIM_POD], e);
                n--;
                i = (size_t)-1; /* the table may have moved entries: start over */
            }
        }
}

void kc__sim_reconcile_rs(kc__sim *s, const char *ns, const char *name)
{
    pthread_mutex_lock(&s->srv->mu);
    kc__entry *e = kc__store_find(s->r[SIM_RS], ns, name);
    json_t *doc = e && !kc_obj_deleting(e->obj) ? kc__doc_from_obj(e->obj) : NULL;
    if (!doc)
        goto out;
    char uid[64], gen[80];
    snprintf(uid, sizeof(uid), "%s", kc_obj_uid(e->obj));
    snprintf(gen, sizeof(gen), "%.57s-", name);
    json_t *spec = json_object_get(doc, "spec");
    int64_t want = kc__sim_int(spec, "replicas", 1);
    kc__sim_count c;
    kc__sim_count_pods(s, ns, uid, NULL, &c);
    for (int64_t k = c.active; k < want; k++) {
        json_t *pod = kc__sim_pod_from_template(json_object_get(spec, "template"), doc, "apps/v1",
                                                "ReplicaSet", NULL, gen, NULL);
        int rc = pod ? kc__sim_create(s, s->r[SIM_POD], ns, pod, false, NULL) : KC_ENOMEM;
        json_decref(pod);
        if (rc)
            break;
    }
    if (c.active > want)
        scale_down(s, uid, c.active - want);
    kc__sim_count_pods(s, ns, uid, NULL, &c);
    json_t *st = json_pack("{s:I, s:I, s:I}", "replicas", (json_int_t)c.active,
                           "fullyLabeledReplicas", (json_int_t)c.active, "observedGeneration",
                           (json_int_t)kc_obj_generation(e->obj));
    if (c.ready) {
        json_object_set_new(st, "readyReplicas", json_integer(c.ready));
        json_object_set_new(st, "availableReplicas", json_integer(c.ready));
    }
    json_t *old = json_object_get(json_object_get(doc, "status"), "conditions");
    if (old)
        json_object_set(st, "conditions", old);
    json_object_set_new(doc, "status", st);
    if ((e = kc__store_find(s->r[SIM_RS], ns, name))) {
        kc__sim_update(s, s->r[SIM_RS], e, doc, SIM_STATUS, NULL);
        /* a change the status does not show (a terminating pod gone) still matters to the
         * Deployment (Recreate waits for it) */
        const char *ok = kc_obj_controller_kind(e->obj), *on = kc_obj_controller_name(e->obj);
        if (ok && on && !strcmp(ok, "Deployment"))
            kc__sim_enqueue(s, SIM_DEPLOY, ns, on);
    }
out:
    json_decref(doc);
    pthread_mutex_unlock(&s->srv->mu);
}

/*
 * sim_ds.c — the DaemonSet controller of the simulated cluster: one pod per simulated node whose
 * labels satisfy the template's nodeSelector, created with generateName "<ds>-", the label
 * controller-revision-hash and spec.nodeName set (the controller binds, as before the scheduler
 * did it for DaemonSets); extra pods on a node deleted. RollingUpdate: once every pod is ready,
 * one pod of an older revision is deleted at a time (maxUnavailable 1). Status:
 * desiredNumberScheduled, currentNumberScheduled, numberReady, numberAvailable,
 * updatedNumberScheduled, numberMisscheduled, numberUnavailable, observedGeneration.
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dsnode {
    int64_t pods, ready, updated;
} dsnode;

/* Tally the DaemonSet's active pods per node; deletes extras (and, when all is ready, one
 * outdated pod). */
static void tally(kc__sim *s, const char *uid, const char *rev, dsnode *per, bool roll)
{
    for (size_t i = 0; i < s->pods.cap; i++) {
        kc__sim_pod *p = (kc__sim_pod *)KC__HTAB_AT(&s->pods, i);
        if (!p || strcmp(p->owner_uid, uid) != 0 || p->deleting || p->succeeded || p->failed ||
            p->node < 0)
            continue;
        dsnode *n = &per[p->node];
        bool upd = !strcmp(p->rev, rev);
        const char *ns = p->key, *name = p->key + strlen(p->key) + 1;
        if (n->pods >= 1 || (roll && !upd)) {
            kc__entry *e = kc__store_find(s->r[SIM_POD], ns, name);
            if (e)
                kc__sim_delete(s, s->r[SIM_POD], e);
            roll = false;
            continue;
        }
        n->pods++;
        n->ready += p->ready;
        n->updated += upd;
    }
}

static void create_pods(kc__sim *s, const char *ns, const char *name, json_t *doc, const char *rev,
                        const dsnode *per)
{
    json_t *tmpl = json_object_get(json_object_get(doc, "spec"), "template");
    json_t *sel = json_object_get(json_object_get(tmpl, "spec"), "nodeSelector");
    char gen[80];
    snprintf(gen, sizeof(gen), "%.57s-", name);
    json_t *extra = json_pack("{s:s}", "controller-revision-hash", rev);
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (per[i].pods || !kc__sim_node_matches(s, (int)i, sel) ||
            !kc__store_find(s->nodes_r, "", s->nodes[i].name))
            continue;
        json_t *pod =
            kc__sim_pod_from_template(tmpl, doc, "apps/v1", "DaemonSet", NULL, gen, extra);
        if (pod) {
            json_object_set_new(json_object_get(pod, "spec"), "nodeName",
                                json_string(s->nodes[i].name));
            kc__sim_create(s, s->r[SIM_POD], ns, pod, false, NULL);
        }
        json_decref(pod);
    }
    json_decref(extra);
}

static void write_status(kc__sim *s, kc__entry *e, json_t *doc, const dsnode *per)
{
    json_t *tmpl = json_object_get(json_object_get(doc, "spec"), "template");
    json_t *sel = json_object_get(json_object_get(tmpl, "spec"), "nodeSelector");
    int64_t desired = 0, cur = 0, ready = 0, upd = 0;
    for (size_t i = 0; i < s->n_nodes; i++) {
        desired += kc__sim_node_matches(s, (int)i, sel);
        cur += per[i].pods;
        ready += per[i].ready;
        upd += per[i].updated;
    }
    json_t *st =
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "currentNumberScheduled", (json_int_t)cur,
                  "desiredNumberScheduled", (json_int_t)desired, "numberMisscheduled",
                  (json_int_t)0, "numberReady", (json_int_t)ready, "observedGeneration",
                  (json_int_t)kc_obj_generation(e->obj), "updatedNumberScheduled", (json_int_t)upd,
                  "numberAvailable", (json_int_t)ready);
    if (desired > ready)
        json_object_set_new(st, "numberUnavailable", json_integer(desired - ready));
    json_object_set_new(doc, "status", st);
    kc__sim_update(s, s->r[SIM_DS], e, doc, SIM_STATUS, NULL);
}

void kc__sim_reconcile_ds(kc__sim *s, const char *ns, const char *name)
{
    pthread_mutex_lock(&s->srv->mu);
    kc__entry *e = kc__store_find(s->r[SIM_DS], ns, name);
    json_t *doc = e && !kc_obj_deleting(e->obj) ? kc__doc_from_obj(e->obj) : NULL;
    dsnode *per = doc ? calloc(s->n_nodes, sizeof(*per)) : NULL;
    if (!per)
        goto out;
    char uid[64], hash[16];
    snprintf(uid, sizeof(uid), "%s", kc_obj_uid(e->obj));
    kc__sim_template_hash(json_object_get(json_object_get(doc, "spec"), "template"), 0, hash);
    kc__sim_count c;
    kc__sim_count_pods(s, ns, uid, hash, &c);
    bool roll = c.ready == c.active && c.updated < c.active;
    tally(s, uid, hash, per, roll);
    create_pods(s, ns, name, doc, hash, per);
    memset(per, 0, s->n_nodes * sizeof(*per));
    tally(s, uid, hash, per, false);
    if ((e = kc__store_find(s->r[SIM_DS], ns, name)))
        write_status(s, e, doc, per);
out:
    free(per);
    json_decref(doc);
    pthread_mutex_unlock(&s->srv->mu);
}

/*
 * sim_pods.c — the simulation's pod table: for every pod of the store, its uid, controller,
 * revision label, node, resource requests and state (ready, being deleted, Succeeded, Failed),
 * refreshed from every pod event and every write of the simulation itself (an event older than
 * the state already seen is ignored: resourceVersions compared). The nodes' usage (requests,
 * pod count) follows it. The controllers count their pods here instead of scanning the store.
 */
#include "server/controllers/sim_internal.h"

#include <stdlib.h>
#include <string.h>

static kc__sim_pod *lookup(kc__sim *s, const char *ns, const char *name)
{
    kc__hkey k;
    kc__hkey_init(&k, 2, ns, name, NULL);
    return (kc__sim_pod *)kc__htab_find_key(&s->pods, &k, NULL);
}

kc__sim_pod *kc__sim_pod_find(kc__sim *s, const char *ns, const char *name)
{
    return lookup(s, ns, name);
}

static void account(kc__sim *s, kc__sim_pod *p, int sign)
{
    if (p->node < 0 || (size_t)p->node >= s->n_nodes)
        return;
    kc__sim_node *n = &s->nodes[p->node];
    n->used_cpu += sign * p->cpu_m;
    n->used_mem += sign * p->mem;
    n->used_pods += sign;
}

/* Sum of the containers' requests (limits stand in when requests are not given, as upstream's
 * defaulting does). */
static void requests(const json_t *spec, int64_t *cpu, int64_t *mem)
{
    *cpu = *mem = 0;
    json_t *cs = json_object_get(spec, "containers");
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        json_t *res = json_object_get(c, "resources");
        json_t *req = json_object_get(res, "requests");
        json_t *lim = json_object_get(res, "limits");
        json_t *qc = json_object_get(req, "cpu"), *qm = json_object_get(req, "memory");
        if (!qc)
            qc = json_object_get(lim, "cpu");
        if (!qm)
            qm = json_object_get(lim, "memory");
        *cpu += kc__sim_quantity(json_string_value(qc), 1000);
        *mem += kc__sim_quantity(json_string_value(qm), 1);
    }
}

static void fill(kc__sim *s, kc__sim_pod *p, const kc_obj *obj)
{
    json_t *doc = kc__doc_from_obj(obj);
    json_t *spec = json_object_get(doc, "spec"), *st = json_object_get(doc, "status");
    json_t *labels = json_object_get(json_object_get(doc, "metadata"), "labels");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(st, "phase"));
    const char *rev = json_string_value(json_object_get(labels, "pod-template-hash"));
    if (!rev)
        rev = json_string_value(json_object_get(labels, "controller-revision-hash"));
    snprintf(p->rev, sizeof(p->rev), "%s", rev ? rev : "");
    const char *ou = kc_obj_controller_uid(obj);
    snprintf(p->owner_uid, sizeof(p->owner_uid), "%s", ou ? ou : "");
    p->node = node && *node ? kc__sim_node_index(s, node) : -1;
    requests(spec, &p->cpu_m, &p->mem);
    p->succeeded = phase && !strcmp(phase, "Succeeded");
    p->failed = phase && !strcmp(phase, "Failed");
    const char *ready = kc__sim_condition(st, "Ready");
    p->ready = ready && !strcmp(ready, "True");
    p->deleting = kc_obj_deleting(obj);
    p->rv = kc_obj_rv_int(obj);
    json_decref(doc);
}

void kc__sim_pod_observe(kc__sim *s, const char *ns, const char *name, const kc_obj *obj)
{
    kc__sim_pod *p = lookup(s, ns, name);
    if (p && obj && !strcmp(p->uid, kc_obj_uid(obj)) && kc_obj_rv_int(obj) <= p->rv)
        return; /* what was seen already, or older */
    if (p && p->counted) {
        account(s, p, -1);
        p->counted = false;
    }
    if (!obj) {
        if (p) {
            kc__htab_remove_ent(&s->pods, &p->h);
            free(p);
        }
        return;
    }
    if (p && strcmp(p->uid, kc_obj_uid(obj)) != 0) {
        kc__htab_remove_ent(&s->pods, &p->h);
        free(p);
        p = NULL;
    }
    if (!p) {
        kc__hkey k;
        kc__hkey_init(&k, 2, ns, name, NULL);
        if (!(p = calloc(1, sizeof(*p) + k.klen + 1)))
            return;
        kc__hkey_write(&k, p->key);
        p->h = (kc__hent){.hash = k.hash, .klen = k.klen, .key = p->key};
        snprintf(p->uid, sizeof(p->uid), "%s", kc_obj_uid(obj));
        if (kc__htab_insert(&s->pods, &p->h) != 0) {
            free(p);
            return;
        }
    }
    fill(s, p, obj);
    p->exists = true;
    if (p->node >= 0 && !p->succeeded && !p->failed) {
        account(s, p, 1);
        p->counted = true;
    }
}

void kc__sim_pods_free(kc__sim *s)
{
    for (size_t i = 0; i < s->pods.cap; i++) {
        kc__hent *e = KC__HTAB_AT(&s->pods, i);
        free(e);
    }
    kc__htab_free(&s->pods);
    for (size_t i = 0; i < s->n_nodes; i++)
        s->nodes[i].used_cpu = s->nodes[i].used_mem = s->nodes[i].used_pods = 0;
}

void kc__sim_count_pods(kc__sim *s, const char *ns, const char *owner_uid, const char *rev,
                        kc__sim_count *c)
{
    (void)ns; /* uids are unique across namespaces */
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < s->pods.cap; i++) {
        kc__sim_pod *p = (kc__sim_pod *)KC__HTAB_AT(&s->pods, i);
        if (!p || strcmp(p->owner_uid, owner_uid) != 0)
            continue;
        c->succeeded += p->succeeded;
        c->failed += p->failed;
        c->terminating += p->deleting && !p->succeeded && !p->failed;
        if (p->deleting || p->succeeded || p->failed)
            continue;
        bool upd = rev && !strcmp(p->rev, rev);
        c->active++;
        c->ready += p->ready;
        c->updated += upd;
        c->updated_ready += upd && p->ready;
    }
}

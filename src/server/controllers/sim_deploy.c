/*
 * sim_deploy.c — the Deployment controller of the simulated cluster, after upstream's
 * pkg/controller/deployment:
 *   - the new ReplicaSet is the one whose pod-template-hash label is the hash of spec.template
 *     (sim_util.c); missing, it is created as "<deployment>-<hash>" with the label in its
 *     selector and template, and annotations deployment.kubernetes.io/revision (the highest old
 *     revision + 1), desired-replicas and max-replicas; the Deployment gets the same revision
 *     annotation;
 *   - RollingUpdate: the new ReplicaSet grows while all ReplicaSets together stay within
 *     replicas + maxSurge; old ones shrink while available pods stay at least
 *     replicas - maxUnavailable (unhealthy old pods first). Counts are exact (the pod table):
 *     an old ReplicaSet's pods above its spec.replicas count as already gone for availability
 *     and as still there for the surge, so the invariants hold at every step, not only on
 *     average. Recreate: old ReplicaSets to 0, the new one scaled up once no old pod runs
 * (terminating ones included);
 *   - status: replicas, updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas,
 *     observedGeneration, conditions Available (MinimumReplicasAvailable /
 *     MinimumReplicasUnavailable) and Progressing (NewReplicaSetCreated, ReplicaSetUpdated,
 *     NewReplicaSetAvailable) — what `kubectl rollout status` and `kubectl wait` read.
 * The revision annotation of the Deployment is written with its status (through /status, as
 * upstream: no generation bump).
 * Old ReplicaSets beyond spec.revisionHistoryLimit (default 10) are deleted once idle.
 * Not simulated: minReadySeconds, progressDeadlineSeconds, paused, rollback (rollout undo works
 * as a template change back: the matching old ReplicaSet becomes the new one, with a new
 * revision).
 */
#include "server/controllers/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RS 64
#define REV    "deployment.kubernetes.io/revision"

typedef struct rsinfo {
    char name[256], uid[64], hash[64];
    int64_t spec, active, ready, rev, running; /* running: active + terminating */
} rsinfo;

typedef struct dstate {
    const char *ns, *name;
    json_t *doc;
    int64_t replicas, surge, unavail;
    bool recreate, created;
    char hash[16];
    rsinfo rs[MAX_RS];
    size_t n;
    int new_i;
} dstate;

static int64_t intstr(const json_t *v, int64_t total, bool up, int64_t def)
{
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    if (!s)
        return def;
    double pct = strtod(s, NULL);
    double x = pct * (double)total / 100.0;
    return up ? (int64_t)(x + 0.999999) : (int64_t)x;
}

static void load_rs(kc__sim *s, dstate *d, const char *uid)
{
    size_t n = 0;
    kc__entry **all = kc__store_sorted(s->r[SIM_RS], &n);
    d->n = 0;
    d->new_i = -1;
    for (size_t i = 0; all && i < n && d->n < MAX_RS; i++) {
        const char *cu = kc_obj_controller_uid(all[i]->obj);
        if (strcmp(all[i]->ns, d->ns) != 0 || !cu || strcmp(cu, uid) != 0)
            continue;
        rsinfo *r = &d->rs[d->n];
        json_t *doc = kc__doc_from_obj(all[i]->obj);
        json_t *m = json_object_get(doc, "metadata");
        const char *h =
            json_string_value(json_object_get(json_object_get(m, "labels"), "pod-template-hash"));
        const char *rev =
            json_string_value(json_object_get(json_object_get(m, "annotations"), REV));
        snprintf(r->name, sizeof(r->name), "%s", all[i]->name);
        snprintf(r->uid, sizeof(r->uid), "%s", kc_obj_uid(all[i]->obj));
        snprintf(r->hash, sizeof(r->hash), "%s", h ? h : "");
        r->spec = kc__sim_int(json_object_get(doc, "spec"), "replicas", 1);
        r->rev = rev ? strtoll(rev, NULL, 10) : 0;
        json_decref(doc);
        kc__sim_count c;
        kc__sim_count_pods(s, d->ns, r->uid, NULL, &c);
        r->active = c.active;
        r->running = c.active + c.terminating;
        r->ready = c.ready < r->spec ? c.ready : r->spec;
        if (!strcmp(r->hash, d->hash))
            d->new_i = (int)d->n;
        d->n++;
    }
}

/* Set replicas (and, when rev > 0, the revision annotation) of ReplicaSet r. */
static void set_rs(kc__sim *s, dstate *d, rsinfo *r, int64_t replicas, int64_t rev)
{
    kc__entry *e = kc__store_find(s->r[SIM_RS], d->ns, r->name);
    json_t *doc = e ? kc__doc_from_obj(e->obj) : NULL;
    if (!doc)
        return;
    json_object_set_new(json_object_get(doc, "spec"), "replicas", json_integer(replicas));
    json_t *m = json_object_get(doc, "metadata");
    json_t *a = json_object_get(m, "annotations");
    if (!a) {
        a = json_object();
        json_object_set_new(m, "annotations", a);
    }
    json_object_set_new(a, "deployment.kubernetes.io/desired-replicas",
                        json_sprintf("%lld", (long long)d->replicas));
    json_object_set_new(a, "deployment.kubernetes.io/max-replicas",
                        json_sprintf("%lld", (long long)(d->replicas + d->surge)));
    if (rev > 0)
        json_object_set_new(a, REV, json_sprintf("%lld", (long long)rev));
    kc__sim_update(s, s->r[SIM_RS], e, doc, SIM_MAIN, NULL);
    json_decref(doc);
    r->spec = replicas;
}

static void create_new_rs(kc__sim *s, dstate *d, int64_t rev, int64_t replicas)
{
    json_t *spec = json_object_get(d->doc, "spec");
    json_t *tmpl = json_deep_copy(json_object_get(spec, "template"));
    json_t *sel = json_deep_copy(json_object_get(spec, "selector"));
    json_t *tm = json_object_get(tmpl, "metadata");
    if (!tm) {
        tm = json_object();
        json_object_set_new(tmpl, "metadata", tm);
    }
    json_t *tl = json_object_get(tm, "labels");
    if (!tl) {
        tl = json_object();
        json_object_set_new(tm, "labels", tl);
    }
    json_object_set_new(tl, "pod-template-hash", json_string(d->hash));
    json_t *ml = json_object_get(sel, "matchLabels");
    if (!ml) {
        ml = json_object();
        json_object_set_new(sel, "matchLabels", ml);
    }
    json_object_set_new(ml, "pod-template-hash", json_string(d->hash));
    json_t *om = json_object_get(d->doc, "metadata");
    char name[320];
    snprintf(name, sizeof(name), "%s-%s", d->name, d->hash);
    json_t *rs = json_pack(
        "{s:s, s:s, s:{s:s, s:O, s:{s:s%, s:s%, s:s%}, s:[{s:s, s:s, s:s, s:O, s:b, s:b}]}, "
        "s:{s:I, s:I, s:o, s:o}}",
        "apiVersion", "apps/v1", "kind", "ReplicaSet", "metadata", "name", name, "labels", tl,
        "annotations", "deployment.kubernetes.io/desired-replicas", "", 0,
        "deployment.kubernetes.io/max-replicas", "", 0, REV, "", 0, "ownerReferences", "apiVersion",
        "apps/v1", "kind", "Deployment", "name", d->name, "uid", json_object_get(om, "uid"),
        "controller", 1, "blockOwnerDeletion", 1, "spec", "replicas", (json_int_t)replicas,
        "minReadySeconds", (json_int_t)kc__sim_int(spec, "minReadySeconds", 0), "selector", sel,
        "template", tmpl);
    if (rs) {
        json_t *a = json_object_get(json_object_get(rs, "metadata"), "annotations");
        json_object_set_new(a, "deployment.kubernetes.io/desired-replicas",
                            json_sprintf("%lld", (long long)d->replicas));
        json_object_set_new(a, "deployment.kubernetes.io/max-replicas",
                            json_sprintf("%lld", (long long)(d->replicas + d->surge)));
        json_object_set_new(a, REV, json_sprintf("%lld", (long long)rev));
        if (kc__sim_create(s, s->r[SIM_RS], d->ns, rs, false, NULL) == 0)
            d->created = true;
    }
    json_decref(rs);
}

static void rolling(kc__sim *s, dstate *d)
{
    rsinfo *nr = &d->rs[d->new_i];
    int64_t total = 0, avail = 0;
    for (size_t i = 0; i < d->n; i++) {
        total += d->rs[i].spec > d->rs[i].active ? d->rs[i].spec : d->rs[i].active;
        avail += d->rs[i].ready;
    }
    if (nr->spec > d->replicas) {
        set_rs(s, d, nr, d->replicas, 0);
    } else if (nr->spec < d->replicas && total < d->replicas + d->surge) {
        int64_t up = d->replicas + d->surge - total;
        if (up > d->replicas - nr->spec)
            up = d->replicas - nr->spec;
        set_rs(s, d, nr, nr->spec + up, 0);
    }
    int64_t min_avail = d->replicas - d->unavail;
    int64_t new_unavail = nr->spec - nr->ready;
    int64_t budget = total - min_avail - new_unavail;
    /* unhealthy old pods first */
    for (size_t i = 0; i < d->n && budget > 0; i++) {
        rsinfo *r = &d->rs[i];
        int64_t bad = r->spec - r->ready;
        if ((int)i == d->new_i || bad <= 0)
            continue;
        int64_t k = bad < budget ? bad : budget;
        set_rs(s, d, r, r->spec - k, 0);
        budget -= k;
    }
    int64_t down = avail - min_avail;
    for (size_t i = 0; i < d->n && down > 0; i++) {
        rsinfo *r = &d->rs[i];
        if ((int)i == d->new_i || r->spec == 0)
            continue;
        int64_t k = r->spec < down ? r->spec : down;
        set_rs(s, d, r, r->spec - k, 0);
        down -= k;
    }
}

static void recreate(kc__sim *s, dstate *d)
{
    int64_t old_active = 0;
    for (size_t i = 0; i < d->n; i++)
        if ((int)i != d->new_i) {
            old_active += d->rs[i].running; /* terminating pods too, as upstream */
            if (d->rs[i].spec)
                set_rs(s, d, &d->rs[i], 0, 0);
        }
    rsinfo *nr = &d->rs[d->new_i];
    if (!old_active && nr->spec != d->replicas)
        set_rs(s, d, nr, d->replicas, 0);
}

/* The revision annotation of the Deployment in doc (written with its status, as upstream). */
static void set_revision(json_t *doc, int64_t rev)
{
    json_t *m = json_object_get(doc, "metadata");
    json_t *a = json_object_get(m, "annotations");
    if (!a) {
        a = json_object();
        json_object_set_new(m, "annotations", a);
    }
    json_object_set_new(a, REV, json_sprintf("%lld", (long long)rev));
}

static void status(kc__sim *s, dstate *d, kc__entry *e)
{
    json_t *doc = kc__doc_from_obj(e->obj);
    int64_t spec_sum = 0, active = 0, ready = 0, upd = 0;
    for (size_t i = 0; i < d->n; i++) {
        kc__sim_count c;
        kc__sim_count_pods(s, d->ns, d->rs[i].uid, NULL, &c);
        spec_sum += d->rs[i].spec;
        active += c.active;
        ready += c.ready;
        if ((int)i == d->new_i)
            upd = c.active;
    }
    json_t *old = json_object_get(doc, "status");
    json_t *st = json_pack("{s:I, s:I}", "observedGeneration",
                           (json_int_t)kc_obj_generation(e->obj), "replicas", (json_int_t)active);
    if (upd)
        json_object_set_new(st, "updatedReplicas", json_integer(upd));
    if (ready) {
        json_object_set_new(st, "readyReplicas", json_integer(ready));
        json_object_set_new(st, "availableReplicas", json_integer(ready));
    }
    if (spec_sum - ready > 0)
        json_object_set_new(st, "unavailableReplicas", json_integer(spec_sum - ready));
    json_t *conds = json_object_get(old, "conditions");
    if (conds)
        json_object_set(st, "conditions", conds);
    bool ok = ready >= d->replicas - d->unavail;
    kc__sim_set_condition(st, "Available", ok ? "True" : "False",
                          ok ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
                          ok ? "Deployment has minimum availability."
                             : "Deployment does not have minimum availability.",
                          true, false);
    const char *nn = d->new_i >= 0 ? d->rs[d->new_i].name : "";
    char msg[400];
    const char *reason;
    if (upd == d->replicas && active == d->replicas && ready == d->replicas) {
        reason = "NewReplicaSetAvailable";
        snprintf(msg, sizeof(msg), "ReplicaSet \"%s\" has successfully progressed.", nn);
    } else if (d->created) {
        reason = "NewReplicaSetCreated";
        snprintf(msg, sizeof(msg), "Created new replica set \"%s\"", nn);
    } else {
        reason = "ReplicaSetUpdated";
        snprintf(msg, sizeof(msg), "ReplicaSet \"%s\" is progressing.", nn);
    }
    kc__sim_set_condition(st, "Progressing", "True", reason, msg, true, false);
    json_object_set_new(doc, "status", st);
    if (d->new_i >= 0)
        set_revision(doc, d->rs[d->new_i].rev);
    kc__sim_update(s, s->r[SIM_DEPLOY], e, doc, SIM_STATUS_ANNOT, NULL);
    json_decref(doc);
}

/* Old ReplicaSets scaled to 0 with no pod left, beyond spec.revisionHistoryLimit (default 10):
 * deleted, the lowest revision first (upstream's cleanupDeployment). */
static void cleanup(kc__sim *s, dstate *d, int64_t limit)
{
    int64_t idle = 0;
    for (size_t i = 0; i < d->n; i++)
        idle += (int)i != d->new_i && d->rs[i].spec == 0 && d->rs[i].running == 0;
    for (; idle > limit; idle--) {
        rsinfo *oldest = NULL;
        for (size_t i = 0; i < d->n; i++) {
            rsinfo *r = &d->rs[i];
            if ((int)i != d->new_i && r->spec == 0 && r->running == 0 &&
                (!oldest || r->rev < oldest->rev))
                oldest = r;
        }
        kc__entry *e = oldest ? kc__store_find(s->r[SIM_RS], d->ns, oldest->name) : NULL;
        if (!e)
            return;
        kc__sim_delete(s, s->r[SIM_RS], e);
        oldest->spec = -1; /* gone */
    }
}

static void sync(kc__sim *s, dstate *d, kc__entry *e, const char *uid)
{
    load_rs(s, d, uid);
    int64_t maxrev = 0;
    for (size_t i = 0; i < d->n; i++)
        if ((int)i != d->new_i && d->rs[i].rev > maxrev)
            maxrev = d->rs[i].rev;
    if (d->new_i < 0) {
        int64_t old_pods = 0;
        for (size_t i = 0; i < d->n; i++)
            old_pods += d->rs[i].spec + d->rs[i].active;
        create_new_rs(s, d, maxrev + 1, old_pods ? 0 : d->replicas);
        load_rs(s, d, uid);
        if (d->new_i < 0)
            return;
    } else if (d->rs[d->new_i].rev <= maxrev) {
        set_rs(s, d, &d->rs[d->new_i], d->rs[d->new_i].spec, maxrev + 1);
        d->rs[d->new_i].rev = maxrev + 1;
    }
    if (d->recreate)
        recreate(s, d);
    else
        rolling(s, d);
    load_rs(s, d, uid);
    cleanup(s, d, kc__sim_int(json_object_get(d->doc, "spec"), "revisionHistoryLimit", 10));
    load_rs(s, d, uid);
    if ((e = kc__store_find(s->r[SIM_DEPLOY], d->ns, d->name)))
        status(s, d, e);
}

void kc__sim_reconcile_deploy(kc__sim *s, const char *ns, const char *name)
{
    pthread_mutex_lock(&s->srv->mu);
    kc__entry *e = kc__store_find(s->r[SIM_DEPLOY], ns, name);
    dstate *d = e && !kc_obj_deleting(e->obj) ? calloc(1, sizeof(*d)) : NULL;
    if (d && (d->doc = kc__doc_from_obj(e->obj))) {
        char uid[64];
        snprintf(uid, sizeof(uid), "%s", kc_obj_uid(e->obj));
        d->ns = ns;
        d->name = name;
        json_t *spec = json_object_get(d->doc, "spec");
        json_t *strat = json_object_get(spec, "strategy");
        const char *type = json_string_value(json_object_get(strat, "type"));
        json_t *ru = json_object_get(strat, "rollingUpdate");
        d->replicas = kc__sim_int(spec, "replicas", 1);
        d->recreate = type && !strcmp(type, "Recreate");
        d->surge = d->recreate ? 0
                               : intstr(json_object_get(ru, "maxSurge"), d->replicas, true,
                                        (d->replicas + 3) / 4);
        d->unavail = d->recreate ? 0
                                 : intstr(json_object_get(ru, "maxUnavailable"), d->replicas, false,
                                          d->replicas / 4);
        if (!d->recreate && d->surge == 0 && d->unavail == 0)
            d->unavail = 1;
        if (d->unavail > d->replicas)
            d->unavail = d->replicas;
        kc__sim_template_hash(json_object_get(spec, "template"),
                              kc__sim_int(json_object_get(d->doc, "status"), "collisionCount", 0),
                              d->hash);
        sync(s, d, e, uid);
    }
    if (d)
        json_decref(d->doc);
    free(d);
    pthread_mutex_unlock(&s->srv->mu);
}

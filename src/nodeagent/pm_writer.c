/*
 * pm_writer.c — the node agent cache's writer: informer events become entries, tombstones and new
 * snapshots; the keeper thread expires tombstones and reports readiness.
 *
 * One writer at a time: the Pod informer's and the Namespace informer's dispatcher threads and the
 * keeper thread all write under pm->wmu (readers never take it, pm_hazard.c). The writer keeps the
 * plain lists — live pods, tombstones (oldest first), live namespaces, namespace tombstones — and
 * after each change builds a new snapshot (pm_index.c) from them: O(pods on the node +
 * tombstones) per Pod event, O(namespaces) per Namespace event.
 *
 * Tombstones (enrich-semantics DP4, DP5, CA7). A deleted pod's last state (the DELETED event's
 * object, or the live entry when the informer only knows the pod is gone) becomes a deleted entry
 * kept deleted_grace_ms; all share one grace, so the list is in deadline order and expiry pops its
 * head. Beyond max_tombstones the oldest is evicted (counted). A pod coming back with the same uid
 * drops its tombstone; one of the same name with another uid coexists with the old pod's
 * tombstone, which then answers only for the old pod's container ids and uid (pm_index.c). A
 * deleted namespace stays, as a tombstone, while any live pod or pod tombstone is in it.
 *
 * Expiry without polling: the keeper thread sleeps in poll() on its wake eventfd (written when a
 * tombstone is added to an empty list, and at shutdown) and the informers' sync fds (until each
 * has synced), with the time to the oldest tombstone's deadline (or to the pod informer's
 * staleness bound while its watch is down) as the timeout. Every change — event, expiry, sync,
 * staleness — is signalled: the agent's eventfd (kc_podmeta_fd) and the condition lookups waiting
 * for an unknown pod and kc_podmeta_wait_ready sleep on.
 */
#include "nodeagent/internal.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

void kc__pm_signal(kc_podmeta *pm)
{
    uint64_t one = 1;
    ssize_t w = write(pm->efd, &one, sizeof one); /* EAGAIN at the counter's limit: coalesced */
    (void)w;
    pthread_mutex_lock(&pm->mu);
    pm->gen++;
    pthread_cond_broadcast(&pm->cond);
    pthread_mutex_unlock(&pm->mu);
}

static void wake_keeper(kc_podmeta *pm)
{
    uint64_t one = 1;
    ssize_t w = write(pm->wake, &one, sizeof one);
    (void)w;
}

/* ---- publication -------------------------------------------------------------------------- */

static void publish_pods(kc_podmeta *pm)
{
    kc__pm_psnap *s = kc__pm_psnap_new(pm->live, pm->n_live, pm->tombs, pm->n_tombs);
    if (!s) {
        kc__log(KC_LOG_LEVEL_WARN, "podmeta",
                "out of memory for the pod index: lookups answer from "
                "the previous one until the next event");
        return;
    }
    kc__pm_publish(&pm->dom, s, NULL);
    atomic_store(&pm->st_pods, pm->n_live);
    atomic_store(&pm->st_tombs, pm->n_tombs);
}

static void publish_ns(kc_podmeta *pm)
{
    size_t n = pm->n_ns + pm->n_ns_tombs;
    kc_podmeta_ns **all = malloc((n ? n : 1) * sizeof *all);
    kc__pm_nsnap *s = NULL;
    if (all) {
        if (pm->n_ns)
            memcpy(all, pm->ns_live, pm->n_ns * sizeof *all);
        if (pm->n_ns_tombs)
            memcpy(all + pm->n_ns, pm->ns_tombs, pm->n_ns_tombs * sizeof *all);
        s = kc__pm_nsnap_new(all, n);
        free(all);
    }
    if (!s) {
        kc__log(KC_LOG_LEVEL_WARN, "podmeta", "out of memory for the namespace index");
        return;
    }
    kc__pm_publish(&pm->dom, NULL, s);
    atomic_store(&pm->st_ns, pm->n_ns + pm->n_ns_tombs);
}

/* Heap of entries, their objects, the key dictionary and the current snapshots (writer lock
 * held). */
static void account(kc_podmeta *pm)
{
    size_t h = 0;
    for (size_t i = 0; i < pm->n_live; i++)
        h += kc__pm_pod_heap(pm->live[i]);
    for (size_t i = 0; i < pm->n_tombs; i++)
        h += kc__pm_pod_heap(pm->tombs[i]);
    h += kc__pm_dict_heap(pm->dict);
    for (size_t i = 0; i < pm->n_ns; i++)
        h += pm->ns_live[i]->heap + kc_obj_heap_size(pm->ns_live[i]->obj);
    for (size_t i = 0; i < pm->n_ns_tombs; i++)
        h += pm->ns_tombs[i]->heap + kc_obj_heap_size(pm->ns_tombs[i]->obj);
    h +=
        kc__pm_psnap_heap(atomic_load(&pm->dom.pods)) + kc__pm_nsnap_heap(atomic_load(&pm->dom.ns));
    atomic_store(&pm->st_heap, h);
}

int kc__pm_publish_empty(kc_podmeta *pm)
{
    kc__pm_psnap *p = kc__pm_psnap_new(NULL, 0, NULL, 0);
    kc__pm_nsnap *n = kc__pm_nsnap_new(NULL, 0);
    if (!p || !n) {
        kc__pm_psnap_free(p);
        kc__pm_nsnap_free(n);
        return KC_ENOMEM;
    }
    kc__pm_publish(&pm->dom, p, n);
    return 0;
}

/* ---- lists -------------------------------------------------------------------------------- */

static bool same_name(const kc_obj *a, const kc_obj *b)
{
    return strcmp(kc_obj_name(a), kc_obj_name(b)) == 0 &&
           strcmp(kc_obj_namespace(a), kc_obj_namespace(b)) == 0;
}

static bool pods_in_ns(kc_podmeta *pm, const char *ns)
{
    for (size_t i = 0; i < pm->n_live; i++)
        if (strcmp(kc_obj_namespace(pm->live[i]->obj), ns) == 0)
            return true;
    for (size_t i = 0; i < pm->n_tombs; i++)
        if (strcmp(kc_obj_namespace(pm->tombs[i]->obj), ns) == 0)
            return true;
    return false;
}

/* Drop namespace tombstones no pod needs any more (DP5); true when any was dropped. */
static bool sweep_ns(kc_podmeta *pm)
{
    size_t k = 0;
    for (size_t i = 0; i < pm->n_ns_tombs; i++) {
        if (pods_in_ns(pm, kc_obj_name(pm->ns_tombs[i]->obj)))
            pm->ns_tombs[k++] = pm->ns_tombs[i];
        else
            kc_podmeta_ns_unref(pm->ns_tombs[i]);
    }
    bool any = k != pm->n_ns_tombs;
    pm->n_ns_tombs = k;
    return any;
}

static void remove_at(kc_podmeta_pod **a, size_t *n, size_t i)
{
    memmove(a + i, a + i + 1, (*n - i - 1) * sizeof *a);
    (*n)--;
}

/* obj with its record (a new reference): obj itself when the informer's transform made it, else
 * made now (the transform ran out of memory; feeds that bypass the informer). NULL on failure. */
static kc_obj *with_rec(kc_podmeta *pm, kc_obj *obj)
{
    if (kc__obj_ext(obj))
        return kc_obj_ref(obj);
    kc_obj *r = NULL;
    return kc__pm_rec_build(obj, pm->dict, &r) == 0 ? r : NULL;
}

kc_obj *kc__pm_transform(void *ud, kc_obj *obj)
{
    kc_podmeta *pm = ud;
    return kc__obj_ext(obj) ? NULL : with_rec(pm, obj);
}

static kc_podmeta_pod *entry_for(kc_podmeta *pm, kc_obj *obj, bool deleted, uint64_t expires)
{
    kc_obj *r = with_rec(pm, obj);
    kc_podmeta_pod *e =
        r ? kc__pm_pod_new(r, pm->dict, deleted, deleted ? (int64_t)kc__wall_ms() : 0, expires)
          : NULL;
    kc_obj_unref(r);
    return e;
}

/* A tombstone for the deleted pod p's last state obj (writer lock held). */
static void add_tombstone(kc_podmeta *pm, kc_obj *obj)
{
    if (pm->o.deleted_grace_ms < 0)
        return;
    uint64_t expires = kc__now_ns() + (uint64_t)pm->o.deleted_grace_ms * 1000000u;
    kc_podmeta_pod *t = entry_for(pm, obj, true, expires);
    if (!t || kc__grow(&pm->tombs, &pm->cap_tombs, pm->n_tombs + 1, sizeof t, 16)) {
        kc_podmeta_pod_unref(t);
        kc__log(KC_LOG_LEVEL_WARN, "podmeta", "out of memory: the deleted pod %s/%s is not kept",
                kc_obj_namespace(obj), kc_obj_name(obj));
        return;
    }
    pm->tombs[pm->n_tombs++] = t;
    while (pm->n_tombs > pm->o.max_tombstones) { /* oldest first (CA7) */
        kc_podmeta_pod_unref(pm->tombs[0]);
        remove_at(pm->tombs, &pm->n_tombs, 0);
        atomic_fetch_add(&pm->st_evicted, 1);
    }
    if (pm->n_tombs == 1)
        wake_keeper(pm); /* a new earliest deadline */
}

/* ---- Pod events ----------------------------------------------------------------------------- */

static void pod_upsert(kc_podmeta *pm, kc_obj *obj)
{
    kc_podmeta_pod *e = entry_for(pm, obj, false, 0);
    if (!e) {
        kc__log(KC_LOG_LEVEL_WARN, "podmeta", "out of memory: pod %s/%s not cached",
                kc_obj_namespace(obj), kc_obj_name(obj));
        return;
    }
    pthread_mutex_lock(&pm->wmu);
    const char *uid = kc_obj_uid(obj);
    for (size_t i = 0; i < pm->n_tombs; i++) { /* back with the same uid: not deleted after all */
        if (*uid && strcmp(kc_obj_uid(pm->tombs[i]->obj), uid) == 0) {
            kc_podmeta_pod_unref(pm->tombs[i]);
            remove_at(pm->tombs, &pm->n_tombs, i--);
        }
    }
    size_t i = 0;
    while (i < pm->n_live && !same_name(pm->live[i]->obj, obj))
        i++;
    if (i < pm->n_live) {
        kc_podmeta_pod *old = pm->live[i];
        if (strcmp(kc_obj_uid(old->obj), uid) != 0) /* recreated, its delete unseen (relist) */
            add_tombstone(pm, old->obj);
        pm->live[i] = e;
        kc_podmeta_pod_unref(old);
    } else if (kc__grow(&pm->live, &pm->cap_live, pm->n_live + 1, sizeof e, 16) == 0) {
        pm->live[pm->n_live++] = e;
    } else {
        kc_podmeta_pod_unref(e);
        kc__log(KC_LOG_LEVEL_WARN, "podmeta", "out of memory: pod %s/%s not cached",
                kc_obj_namespace(obj), kc_obj_name(obj));
    }
    publish_pods(pm);
    account(pm);
    pthread_mutex_unlock(&pm->wmu);
    kc__pm_signal(pm);
}

static void on_pod_add(void *ud, kc_obj *obj)
{
    pod_upsert(ud, obj);
}

static void on_pod_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    if (old_obj == new_obj)
        return; /* a resync: nothing changed */
    pod_upsert(ud, new_obj);
}

static void on_pod_delete(void *ud, kc_obj *obj, bool final_unknown)
{
    kc_podmeta *pm = ud;
    pthread_mutex_lock(&pm->wmu);
    size_t i = 0;
    while (i < pm->n_live && !same_name(pm->live[i]->obj, obj))
        i++;
    if (i < pm->n_live) {
        kc_podmeta_pod *old = pm->live[i];
        remove_at(pm->live, &pm->n_live, i);
        add_tombstone(pm, final_unknown ? old->obj : obj);
        kc_podmeta_pod_unref(old);
    } else {
        add_tombstone(pm, obj);
    }
    sweep_ns(pm);
    publish_pods(pm);
    publish_ns(pm);
    account(pm);
    pthread_mutex_unlock(&pm->wmu);
    kc__pm_signal(pm);
}

const kc_informer_handlers kc__pm_pod_handlers = {
    .on_add = on_pod_add, .on_update = on_pod_update, .on_delete = on_pod_delete};

/* ---- Namespace events ----------------------------------------------------------------------- */

static void remove_ns(kc_podmeta_ns **a, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(kc_obj_name(a[i]->obj), name) == 0) {
            kc_podmeta_ns_unref(a[i]);
            memmove(a + i, a + i + 1, (*n - i - 1) * sizeof *a);
            (*n)--;
            return;
        }
    }
}

static void on_ns_add(void *ud, kc_obj *obj)
{
    kc_podmeta *pm = ud;
    kc_podmeta_ns *e = kc__pm_ns_new(obj, false);
    pthread_mutex_lock(&pm->wmu);
    remove_ns(pm->ns_tombs, &pm->n_ns_tombs, kc_obj_name(obj));
    remove_ns(pm->ns_live, &pm->n_ns, kc_obj_name(obj));
    if (e && kc__grow(&pm->ns_live, &pm->cap_ns, pm->n_ns + 1, sizeof e, 16) == 0)
        pm->ns_live[pm->n_ns++] = e;
    else
        kc_podmeta_ns_unref(e);
    publish_ns(pm);
    account(pm);
    pthread_mutex_unlock(&pm->wmu);
    kc__pm_signal(pm);
}

static void on_ns_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    if (old_obj != new_obj)
        on_ns_add(ud, new_obj);
}

static void on_ns_delete(void *ud, kc_obj *obj, bool final_unknown)
{
    (void)final_unknown;
    kc_podmeta *pm = ud;
    pthread_mutex_lock(&pm->wmu);
    remove_ns(pm->ns_live, &pm->n_ns, kc_obj_name(obj));
    remove_ns(pm->ns_tombs, &pm->n_ns_tombs, kc_obj_name(obj));
    kc_podmeta_ns *t = pods_in_ns(pm, kc_obj_name(obj)) ? kc__pm_ns_new(obj, true) : NULL;
    if (t && kc__grow(&pm->ns_tombs, &pm->cap_ns_tombs, pm->n_ns_tombs + 1, sizeof t, 8) == 0)
        pm->ns_tombs[pm->n_ns_tombs++] = t;
    else
        kc_podmeta_ns_unref(t);
    publish_ns(pm);
    account(pm);
    pthread_mutex_unlock(&pm->wmu);
    kc__pm_signal(pm);
}

const kc_informer_handlers kc__pm_ns_handlers = {
    .on_add = on_ns_add, .on_update = on_ns_update, .on_delete = on_ns_delete};

/* ---- the keeper thread ---------------------------------------------------------------------- */

/* Pop expired tombstones; true when any. */
static bool expire(kc_podmeta *pm, uint64_t *next_ns)
{
    uint64_t now = kc__now_ns();
    bool any = false;
    pthread_mutex_lock(&pm->wmu);
    size_t k = 0;
    while (k < pm->n_tombs && pm->tombs[k]->expires_ns <= now)
        kc_podmeta_pod_unref(pm->tombs[k++]);
    if (k) {
        memmove(pm->tombs, pm->tombs + k, (pm->n_tombs - k) * sizeof *pm->tombs);
        pm->n_tombs -= k;
        bool ns = sweep_ns(pm);
        publish_pods(pm);
        if (ns)
            publish_ns(pm);
        account(pm);
        any = true;
    }
    *next_ns = pm->n_tombs ? pm->tombs[0]->expires_ns : 0;
    pthread_mutex_unlock(&pm->wmu);
    return any;
}

/* Poll timeout in ms until deadline_ns (monotonic), -1 for none. */
static int timeout_to(uint64_t deadline_ns)
{
    if (!deadline_ns)
        return -1;
    uint64_t now = kc__now_ns();
    if (deadline_ns <= now)
        return 0;
    uint64_t ms = (deadline_ns - now + 999999) / 1000000;
    return ms > 3600000 ? 3600000 : (int)ms;
}

/* Time to the pod informer's staleness bound while its watch is down, else -1. */
static int staleness_timeout(kc_podmeta *pm)
{
    if (pm->o.max_staleness_ms <= 0 || !atomic_load(&pm->pods_synced))
        return -1;
    kc_informer_status st;
    kc_informer_get_status(pm->pods, &st);
    if (st.connected || st.disconnected_ms > pm->o.max_staleness_ms)
        return -1;
    return (int)(pm->o.max_staleness_ms - st.disconnected_ms + 1);
}

static void synced(kc_podmeta *pm, kc_informer_reg *reg, _Atomic bool *flag)
{
    /* The informer has its list; the registration hands it to us right after. */
    if (kc_informer_reg_wait_synced(reg, 60000, NULL) == 0) {
        atomic_store(flag, true);
        kc__pm_signal(pm);
    }
}

void *kc__pm_keeper(void *arg)
{
    kc_podmeta *pm = arg;
    bool was_ready = false;
    uint64_t next = 0;
    while (!atomic_load(&pm->quit)) {
        struct pollfd fds[3] = {{pm->wake, POLLIN, 0}};
        int n = 1, ip = -1, in = -1;
        if (!atomic_load(&pm->pods_synced) && !atomic_load(&pm->stopped))
            ip = n, fds[n++] = (struct pollfd){kc_informer_sync_fd(pm->pods), POLLIN, 0};
        if (pm->nsi && !atomic_load(&pm->ns_synced) && !atomic_load(&pm->stopped))
            in = n, fds[n++] = (struct pollfd){kc_informer_sync_fd(pm->nsi), POLLIN, 0};
        int t = timeout_to(next), s = staleness_timeout(pm);
        if (s >= 0 && (t < 0 || s < t))
            t = s;
        if (poll(fds, (nfds_t)n, t) < 0)
            continue; /* EINTR */
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            ssize_t r = read(pm->wake, &v, sizeof v);
            (void)r;
        }
        if (ip > 0 && (fds[ip].revents & POLLIN))
            synced(pm, pm->pods_reg, &pm->pods_synced);
        if (in > 0 && (fds[in].revents & POLLIN))
            synced(pm, pm->ns_reg, &pm->ns_synced);
        if (expire(pm, &next))
            kc__pm_signal(pm);
        bool ready = kc_podmeta_ready(pm);
        if (ready != was_ready) {
            was_ready = ready;
            kc__pm_signal(pm);
        }
    }
    return NULL;
}

void kc__pm_writer_clear(kc_podmeta *pm)
{
    for (size_t i = 0; i < pm->n_live; i++)
        kc_podmeta_pod_unref(pm->live[i]);
    for (size_t i = 0; i < pm->n_tombs; i++)
        kc_podmeta_pod_unref(pm->tombs[i]);
    for (size_t i = 0; i < pm->n_ns; i++)
        kc_podmeta_ns_unref(pm->ns_live[i]);
    for (size_t i = 0; i < pm->n_ns_tombs; i++)
        kc_podmeta_ns_unref(pm->ns_tombs[i]);
    free(pm->live);
    free(pm->tombs);
    free(pm->ns_live);
    free(pm->ns_tombs);
    pm->live = pm->tombs = NULL;
    pm->ns_live = pm->ns_tombs = NULL;
    pm->n_live = pm->n_tombs = pm->n_ns = pm->n_ns_tombs = 0;
}

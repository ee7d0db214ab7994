/*
 * storage.h — what the storage room (src/server/storage/) gives the rooms above it (discovery,
 * api, controllers, http): the resource types and the registry, the server object with its store
 * (the one lock, the resource registry, the global RV counter, the bounded event history ring,
 * paging snapshots, the watch hub: hub.h), lookups and snapshots, object conversions, API
 * failures as a kc_error (errors.c) and metadata helpers. The write path is write.h. Storage
 * returns objects and a kc_error and never builds a reply; it calls no room above it: the
 * optional controllers and the CRD rules reach it as tables it is handed (srv->ctl, srv->crd).
 * Not installed.
 *
 * Pieces:
 *   - kc__rsrc: one resource type (built-in or CRD): its discovery description and its storage
 *     (hash map ns/name → kc_obj, a lazily rebuilt key-sorted index, byte count).
 *   - struct kc_server: the server object; the store is embedded in it (the fields after mu),
 *     beside what the http room's lifecycle owns (listen address, TLS, daemon, faults).
 * Locking: srv->mu guards everything in the store (registry, maps, rv, history, snapshots).
 * It is the only lock the core takes; the hub's short locks may be taken under it (hub.h).
 * Objects (kc_obj) are immutable and reference-counted: a reader refs them under the lock and
 * serialises them after unlocking.
 */
#ifndef KC_SERVER_STORAGE_H
#define KC_SERVER_STORAGE_H

#include <jansson.h>
#include <pthread.h>

#include "core/htab.h"
#include "core/internal.h"
#include "kcache/decode.h"
#include "kcache/rv.h"
#include "kcache/selector.h"
#include "kcache/shard.h"
#include "kcache/server.h"
#include "server/patch/validate.h"
#include "server/storage/hub.h"
#include "server/testbed/faults.h"

/* ---- resources ------------------------------------------------------------------------------ */

#define KC__MAX_VERSIONS 8
#define KC__MAX_NAMES    8

enum kc__gen_rule {
    KC__GEN_NONE = 0,   /* no generation (ConfigMap, Secret, ...) */
    KC__GEN_SPEC,       /* 1 on create; +1 when spec changes */
    KC__GEN_SPEC_ANNOT, /* +1 when spec or annotations change (Deployment) */
    KC__GEN_CR,         /* 1 on create; +1 on any change outside metadata (and status) */
};

typedef struct kc__entry {
    kc__hent h;  /* in kc__rsrc.map: the key (ns, name) as a kc__hkey, h.key = key */
    kc_obj *obj; /* current state (one reference) */
    /* resources with r->node_indexed: obj's spec.nodeName in the string form field selectors
     * compare (node_len bytes, borrowed from obj's text; "" when absent), located once per write
     * — node_known false when it cannot be compared as it stands (escapes) */
    const char *node;
    size_t node_len;
    bool node_known;
    const char *ns;   /* into key */
    const char *name; /* into key */
    char key[];       /* ns NUL name NUL */
} kc__entry;

/* One row of the built-in resource table (resources.c). Strings are comma-separated
 * lists where plural ("v2,v1": served versions, preferred first). */
/* KC__BI_VIRTUAL: a create-only review resource (authorization.k8s.io, authentication.k8s.io)
 * that stores nothing: the authz room answers its POST (authz/review.c). */
enum { KC__BI_NAMESPACED = 1, KC__BI_RETURN_DELETED = 2, KC__BI_GRACEFUL = 4, KC__BI_VIRTUAL = 8 };
typedef struct kc__builtin {
    const char *group, *versions, *plural, *singular, *kind, *shorts, *cats;
    const char *verbs, *subresources; /* as discovery lists them (subresources may be NULL) */
    unsigned flags;                   /* KC__BI_* */
    kc__name_rule rule;
    enum kc__gen_rule gen;
    const char *const *fields; /* extra field selectors (NULL-terminated) or NULL */
} kc__builtin;

/* A subresource as discovery describes it: kind NULL = the parent's kind; group/version NULL =
 * the parent's; parent NULL = any parent. */
typedef struct kc__subresource {
    const char *name, *parent, *kind, *group, *version, *verbs;
} kc__subresource;

/* The subresource plural/name as discovery describes it (resources.c), NULL when unknown. */
const kc__subresource *kc__subresource_find(const char *plural, const char *name);

typedef struct kc__rsrc {
    /* description (strings owned) */
    char *group; /* "" for core */
    char *versions[KC__MAX_VERSIONS];
    size_t n_versions; /* versions[0] is the preferred/storage version */
    char *plural, *singular, *kind, *list_kind;
    char *short_names[KC__MAX_NAMES];
    size_t n_short;
    char *categories[KC__MAX_NAMES];
    size_t n_categories;
    bool namespaced, has_status, is_crd, return_deleted, graceful;
    _Atomic bool removed; /* set under mu when a CRD goes away; watch streams poll it */
    kc__name_rule name_rule;
    enum kc__gen_rule gen_rule;
    const char *const *fields; /* extra supported field selectors (NULL-terminated) or NULL */
    char **crd_fields;      /* CRD selectableFields (owned; NULL-terminated), aliased by fields */
    char *crd_name;         /* CRD that registered it */
    const kc__builtin *def; /* the table row of a built-in; NULL for custom resources */
    int model[KC__MAX_VERSIONS]; /* schema model (schema.h) of each version, -1 when none */
    /* custom resources: the CRD's spec.versions (schemas, printer columns; a new reference,
     * replaced under mu when the CRD is updated; readers outside mu take their own reference) */
    json_t *crd_versions;
    pthread_mutex_t crd_mu; /* guards the crd_versions pointer (a leaf lock; custom resources) */
    /* storage */
    kc__htab map; /* kc__entry by (ns, name); map.n = the object count */
    kc__entry **sorted;
    size_t n_sorted;
    bool sorted_dirty;
    size_t n_owned; /* stored objects with ownerReferences (the garbage collector skips the rest) */
    bool node_indexed; /* spec.nodeName is a field selector of r (pods): entries cache it */
    /* changes: bumped (under mu) by every commit and clear of r's objects; read without the lock
     * by caches derived from them (authz/: RBAC rules), which compare it with what they saw */
    _Atomic uint64_t changes;
} kc__rsrc;

/* ---- history and snapshots ------------------------------------------------------------------ */

typedef struct kc__hist {
    kc__rsrc *rsrc;
    kc_watch_type type;
    kc_obj *obj, *old;
    uint64_t rv;
} kc__hist;

typedef struct kc__snapshot {
    uint64_t id, rv, created_ms;
    kc__rsrc *rsrc;
    kc_obj **items;
    size_t n;
} kc__snapshot;

#define KC__MAX_SNAPSHOTS 16

/* ---- server --------------------------------------------------------------------------------- */

struct kc_server {
    kc_server_opts opts; /* strings below are owned copies */
    char *listen, *token, *seed_dir, *seed_spec;
    char host[64];
    unsigned port;
    char *url;
    char adv_host[64]; /* the address the `kubernetes` Endpoints name (set by start) */
    unsigned adv_port;
    struct kc__tls_material *tls; /* tls.h; allocated by the first start with opts.tls */
    bool have_tls;                /* tls holds generated material */
    struct MHD_Daemon *mhd;
    bool started;
    _Atomic bool stopping;
    kc__faults *faults;
    kc__hub *hub;

    pthread_mutex_t mu; /* the store lock */
    pthread_cond_t cond;
    /* requests running on helper threads (http.c): count under off_mu, off_cond on change */
    pthread_mutex_t off_mu;
    pthread_cond_t off_cond;
    unsigned offloaded;
    kc__rsrc **rsrcs; /* registry: live resources */
    size_t n_rsrcs, cap_rsrcs;
    kc__rsrc **retired; /* removed CRD resources, freed at server free (watchers may hold them) */
    size_t n_retired, cap_retired;
    _Atomic uint64_t rv;
    uint64_t floor; /* every event with rv > floor is in the history */
    uint64_t epoch; /* bumped by restart */
    kc__hist *hist;
    size_t hist_cap, hist_head, hist_len;
    kc__snapshot snaps[KC__MAX_SNAPSHOTS];
    uint64_t next_snap_id;
    uint64_t rng; /* names and uids; under mu */
    kc_decode_opts dopts;
    struct kc__svc_alloc *svc_alloc; /* Service cluster IPs and node ports (defaults room) */
    char *service_cidr, *node_port_range;
    char *webhook_services;          /* opts.webhook_services (admission/config.c) */
    const struct kc__ctl_ops *ctl;   /* controllers (controllers/); NULL = none */
    struct kc__gc_index *gc_index;   /* the garbage collector's (controllers/gc_index.c) */
    const struct kc__crd_hooks *crd; /* CRD hooks (discovery/crd.c); NULL = CRDs inert */
    struct kc__sim *sim;             /* simulated cluster (controllers/sim.c); NULL = off */
    struct kc__authz *authz;         /* authentication and authorization (authz/) */
    /* sharded list and watch (shard.c): shardSelector ignored (S12); sharded watches open; events
     * the shard selectors of watches filtered out (metrics) */
    _Atomic bool shard_ignored;
    _Atomic size_t shard_watchers;
    _Atomic uint64_t shard_filtered;
};

/* ---- optional controllers (controllers/, installed by server.c) ----------------------------- */

/* The write path's calls into the optional controllers, all with mu held, none on a dry run.
 * created / removed: obj of r was just stored / removed (its last state); best effort (a
 * controller's own failure is not the request's). deleting: a DELETE of cur with the request's
 * propagationPolicy (NULL = default); returns 1 when the controller carried it out (*ret_obj the
 * object's state to reply with, new reference), 0 to let the plain delete go on, or an error. */
typedef struct kc__ctl_ops {
    void (*created)(kc_server *srv, kc__rsrc *r, kc_obj *obj);
    void (*removed)(kc_server *srv, kc__rsrc *r, kc_obj *obj);
    int (*deleting)(kc_server *srv, kc__rsrc *r, kc__entry *cur, const char *propagation,
                    kc_obj **ret_obj, kc_error *err);
    /* holds: true when cur, being deleted and without finalizers now, must stay anyway (a
     * namespace that still has objects); the write is then an ordinary update. */
    bool (*holds)(kc_server *srv, const kc__rsrc *r, const kc__entry *cur);
    /* committed: kc__store_commit stored (ADDED, MODIFIED) or removed (DELETED) obj of r, old
     * its previous state (NULL on ADDED): the garbage collector's owner-uid index follows. */
    void (*committed)(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old);
} kc__ctl_ops;

/* ---- CRD hooks (installed by discovery/crd.c) --------------------------------------------- */

/* What the write path calls when it stores CustomResourceDefinitions and custom resources, all
 * with mu held, none on a dry run except validate. The discovery room, which owns what a CRD
 * means (its resources in the registry, its schemas), hands the table to storage
 * (kc__store_set_crd_hooks) when the server is built; without it a CRD is an inert object.
 * prepare: a CRD about to be created: validate it and fill its status (422 Invalid).
 * stored: a CRD about to be committed (create or update): register its resources, or refresh
 * the schemas and printer columns of those it registered. removed: a CRD gone (its objects
 * already removed): unregister its resources. validate: a custom resource of r about to be stored
 * at the request's version, against that version's schema (422 Invalid, as upstream's create and
 * update strategies; status left out when skip_status). */
typedef struct kc__crd_hooks {
    int (*prepare)(kc_server *srv, json_t *doc, kc_error *err);
    int (*stored)(kc_server *srv, const kc_obj *crd, kc_error *err);
    void (*removed)(kc_server *srv, const char *crd_name);
    int (*validate)(kc__rsrc *r, const char *version, const json_t *doc, const char *name,
                    bool skip_status, kc_error *err);
} kc__crd_hooks;

/* ---- store (store.c) ------------------------------------------------------------------------ */

int kc__store_init(kc_server *srv);
/* Hand storage the CRD hooks (before any write; hooks static, not copied). */
void kc__store_set_crd_hooks(kc_server *srv, const kc__crd_hooks *hooks);
void kc__store_destroy(kc_server *srv);
/* Lookup (mu held). NULL when absent. */
kc__entry *kc__store_find(kc__rsrc *r, const char *ns, const char *name);
/* The key-sorted entries of r (mu held; rebuilt when dirty). NULL on ENOMEM (count 0 → may be
 * NULL too: check *ret_n). */
kc__entry **kc__store_sorted(kc__rsrc *r, size_t *ret_n);
/* Can e's object match a field selector pinning spec.nodeName to node (kc__watch_node_pin)?
 * false only when it certainly cannot (its cached nodeName differs): a LIST or a watch's initial
 * state skips it without a JSON match. true for resources without the cache. */
bool kc__entry_on_node(const kc__rsrc *r, const kc__entry *e, const char *node);
/* Drop every object of r (mu held) without events. */
void kc__store_clear_rsrc(kc__rsrc *r);
/* Give every stored object of every live resource a new RV 1..N, in the order of their current
 * RVs (mu held), N into *ret_n; uids and content kept, history and counter untouched (the caller
 * sets srv->rv and compacts). KC_ENOMEM changes nothing. */
int kc__store_renumber_locked(kc_server *srv, uint64_t *ret_n);
/* Drop all history (mu held); floor becomes the current RV. */
void kc__store_compact_locked(kc_server *srv);
/* Paging snapshots (mu held). put takes over items (n refs); returns its id (0 on ENOMEM: items
 * released). get returns NULL when expired. */
uint64_t kc__snap_put(kc_server *srv, kc__rsrc *r, uint64_t rv, kc_obj **items, size_t n);
kc__snapshot *kc__snap_get(kc_server *srv, uint64_t id);

/* Go's encoder's escapes (gojson.c): text with <, >, & and U+2028/9 escaped as Go writes them,
 * as a new malloc'd string (*ret_len its length); NULL when nothing needs escaping (use text as
 * is) — or on ENOMEM, which callers treat the same way (the bytes stay valid JSON). */
char *kc__go_json_escape(const char *text, size_t len, size_t *ret_len);

/* A copy of obj whose metadata.resourceVersion is rv (DELETED events, selector exits). */
int kc__obj_with_rv(kc_server *srv, const kc_obj *obj, uint64_t rv, kc_obj **ret, kc_error *err);
/* Parse an object's text with jansson (NULL on failure). */
json_t *kc__doc_from_obj(const kc_obj *obj);

/* ---- registry (registry.c, resources.c) ---------------------------------------------------- */

int kc__registry_init_builtins(kc_server *srv);
void kc__rsrc_free(kc__rsrc *r);
/* Find the resource served at group/version/plural (mu held). */
kc__rsrc *kc__registry_find(kc_server *srv, const char *group, const char *version,
                            const char *plural);
/* Find by apiVersion + kind (mu held), e.g. for seeding. */
kc__rsrc *kc__registry_find_kind(kc_server *srv, const char *api_version, const char *kind);
/* Does r list subresource sub in discovery (built-ins: their row; CRDs: status when on)? */
bool kc__rsrc_has_sub(const kc__rsrc *r, const char *sub);
/* The version index of v in r, -1 when r does not serve it. */
int kc__rsrc_version_index(const kc__rsrc *r, const char *version);
/* true when the resource is served in version v. */
bool kc__rsrc_serves(const kc__rsrc *r, const char *version);
/* "v1" or "apps/v1" for r at version v into out. */
void kc__rsrc_api_version(const kc__rsrc *r, const char *version, char *out, size_t cap);
/* Field selector support: NULL when ok, else the unsupported field (borrowed from sel). */
const char *kc__rsrc_bad_field(const kc__rsrc *r, const kc_field_selector *sel);
/* Registry add (mu held); takes over r. */
int kc__registry_add(kc_server *srv, kc__rsrc *r);
void kc__registry_remove(kc_server *srv, kc__rsrc *r);
/* The namespaces resource (mu held). */
kc__rsrc *kc__rsrc_namespaces(kc_server *srv);

/* ---- errors (errors.c) ---------------------------------------------------------------------- */

/* Fill err with an API failure: HTTP status, reason, message; code from the HTTP status.
 * Returns the KC_E code. */
int kc__fail(kc_error *err, int http, const char *reason, const char *fmt, ...) KC__PRINTF(4, 5);
/* Set details.name/group/kind (copied; NULLs skipped). */
void kc__fail_details(kc_error *err, const char *name, const char *group, const char *kind);
int kc__fail_cause(kc_error *err, const char *reason, const char *field, const char *msg);
int kc__fail_notfound(kc_error *err, const kc__rsrc *r, const char *name);
/* The generic 404 ("the server could not find the requested resource") or 405 ("the server
 * does not allow this method on the requested resource") with empty details, as upstream's
 * NewGenericServerResponse. */
int kc__fail_generic(kc_error *err, int http);

/* ---- metadata (meta.c) ---------------------------------------------------------------------- */

json_t *kc__meta(json_t *doc); /* metadata object, created when missing; NULL on ENOMEM */
const char *kc__meta_str(json_t *doc, const char *key); /* NULL when absent / not a string */
int kc__meta_set_str(json_t *doc, const char *key, const char *val);
void kc__meta_del(json_t *doc, const char *key);
/* Drops what Go's omitempty drops from ObjectMeta on the way to storage: labels, annotations,
 * finalizers, ownerReferences, managedFields when empty or null; generateName and namespace
 * when "" or null (a real server never shows `finalizers: []` or `labels: {}`). */
void kc__meta_omit_empty(json_t *doc);
void kc__rv_str(uint64_t rv, char out[24]);
/* Would an update storing nu change nothing of old? Every member equal, managedFields compared
 * without their entries' "time" (an apply repeated a second later is a no-op, spec §2
 * resourceVersion). */
bool kc__doc_same_but_times(json_t *nu, json_t *old);

/* ---- sharded watch (shard.c; KEP-5866, docs/serve.md) --------------------------------------- */

/* Does ev's object fall in sel (NULL = everything)? Uses ev's hashes when filled. A miss counts
 * in srv->shard_filtered. uid and namespace are immutable: old and new state agree (S10). */
bool kc__shard_event_match(kc_server *srv, const kc_shard_selector *sel, const kc__hub_event *ev);

#endif

/*
 * srv.h — internal contract of the embedded API server's storage, HTTP edge and discovery files
 * (the rooms that include it: storage/, http/, discovery/). Not installed.
 *
 * Pieces:
 *   - kc__rsrc: one resource type (built-in or CRD): its discovery description and its storage
 *     (hash map ns/name → kc_obj, a lazily rebuilt key-sorted index, byte count).
 *   - kc__store (embedded in kc_server): the one lock, the resource registry, the global RV
 *     counter, the bounded event history ring, paging snapshots, the watch hub.
 *   - kc__req: one HTTP request as the verbs see it (route, query, headers, body) and the
 *     reply helpers of http.c.
 * Locking: srv->mu guards everything in the store (registry, maps, rv, history, snapshots).
 * It is the only lock the core takes; the hub's short locks may be taken under it (hub.h).
 * Objects (kc_obj) are immutable and reference-counted: a reader refs them under the lock and
 * serialises them after unlocking.
 */
#ifndef KC_SERVER_SRV_H
#define KC_SERVER_SRV_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>

#include "core/htab.h"
#include "core/internal.h"
#include "kcache/decode.h"
#include "kcache/rv.h"
#include "kcache/selector.h"
#include "kcache/shard.h"
#include "kcache/server.h"
#include "server/testbed/faults.h"
#include "server/storage/hub.h"
#include "server/patch/validate.h"

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
    kc__hent h;       /* in kc__rsrc.map: the key (ns, name) as a kc__hkey, h.key = key */
    kc_obj *obj;      /* current state (one reference) */
    const char *ns;   /* into key */
    const char *name; /* into key */
    char key[];       /* ns NUL name NUL */
} kc__entry;

/* One row of the built-in resource table (discovery/resources.c). Strings are comma-separated
 * lists where plural ("v2,v1": served versions, preferred first). */
enum { KC__BI_NAMESPACED = 1, KC__BI_RETURN_DELETED = 2, KC__BI_GRACEFUL = 4 };
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

/* The table and its subresource kinds (resources.c). */
const kc__builtin *kc__builtins(size_t *ret_n);
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
    const struct kc__ctl_ops *ctl;   /* optional controllers (controllers/); NULL = none */
    const struct kc__crd_hooks *crd; /* CRD hooks (discovery/crd.c); NULL = CRDs inert */
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
/* Commit one change (mu held): type ADDED (insert obj), MODIFIED (replace with obj), DELETED
 * (remove; obj is the last state carrying the delete rv). Takes its own references. Records the
 * event in the history and publishes it. Returns 0 or KC_ENOMEM. */
int kc__store_commit(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old,
                     uint64_t rv);
/* The key-sorted entries of r (mu held; rebuilt when dirty). NULL on ENOMEM (count 0 → may be
 * NULL too: check *ret_n). */
kc__entry **kc__store_sorted(kc__rsrc *r, size_t *ret_n);
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
void kc__snap_clear(kc_server *srv);

/* Go's encoder's escapes (gojson.c): text with <, >, & and U+2028/9 escaped as Go writes them,
 * as a new malloc'd string (*ret_len its length); NULL when nothing needs escaping (use text as
 * is) — or on ENOMEM, which callers treat the same way (the bytes stay valid JSON). */
char *kc__go_json_escape(const char *text, size_t len, size_t *ret_len);

/* Parse JSON text into a stored object (keeps managedFields; Go's escapes applied). */
int kc__obj_from_json(kc_server *srv, const char *json, size_t len, kc_obj **ret, kc_error *err);
int kc__obj_from_doc(kc_server *srv, const json_t *doc, kc_obj **ret, kc_error *err);
/* A copy of obj whose metadata.resourceVersion is rv (DELETED events, selector exits). */
int kc__obj_with_rv(kc_server *srv, const kc_obj *obj, uint64_t rv, kc_obj **ret, kc_error *err);
/* Parse an object's text with jansson (NULL on failure). */
json_t *kc__doc_from_obj(const kc_obj *obj);

/* ---- registry (registry.c, crd.c) ----------------------------------------------------------- */

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
/* "pods" or "deployments.apps" (for messages) into out. */
void kc__rsrc_qualified(const kc__rsrc *r, char *out, size_t cap);
/* "v1" or "apps/v1" for r at version v into out. */
void kc__rsrc_api_version(const kc__rsrc *r, const char *version, char *out, size_t cap);
/* Field selector support: NULL when ok, else the unsupported field (borrowed from sel). */
const char *kc__rsrc_bad_field(const kc__rsrc *r, const kc_field_selector *sel);
/* Discovery documents (new malloc'd JSON; NULL on ENOMEM / when group-version unknown). */
char *kc__discovery_api(kc_server *srv, size_t *ret_len);
char *kc__discovery_apis(kc_server *srv, size_t *ret_len);
char *kc__discovery_group(kc_server *srv, const char *group, size_t *ret_len);
char *kc__discovery_resources(kc_server *srv, const char *group, const char *version,
                              size_t *ret_len);
/* Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) of the core group (/api)
 * or of the named groups (/apis). New malloc'd JSON, NULL on ENOMEM. */
char *kc__discovery_aggregated(kc_server *srv, bool core, size_t *ret_len);
/* Content-Type of an aggregated discovery body. */
#define KC__AGGREGATED_CTYPE "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
/* The OpenAPI v3 index and group-version documents and the v2 document (openapi.c; mu held),
 * JSON, malloc'd. accept: the request's Accept (v2 is JSON only). NULL when the path has no
 * document (→ 404). */
char *kc__openapi_doc(kc_server *srv, const char *path, const char *accept, size_t *ret_len);
/* Custom resources against their CRD's schema (crd.c). The schema of version (NULL when the CRD
 * has none) comes from r->crd_versions with its own reference, so this may run with or without
 * mu: prune doc (unknown fields reported through fn, as kc__schema_unknown) and apply the
 * schema's defaults. */
int kc__crd_decode(kc__rsrc *r, const char *version, json_t *doc, const json_t *base,
                   int (*fn)(void *, const char *, json_t *, const char *), void *ud);
/* r->crd_versions with a new reference (caller json_decref), NULL when none. */
json_t *kc__crd_versions_ref(kc__rsrc *r);
/* The openAPIV3Schema of version in a CRD's spec.versions (borrowed from versions), NULL when
 * that version has none. */
const json_t *kc__crd_schema_of(const json_t *versions, const char *version);
/* Install the CRD hooks (kc__crd_hooks) in srv's storage: prepare and validate as above,
 * stored registers the resources of a stored CRD (an update of a registered CRD replaces its
 * schemas and printer columns; names and scope stay), removed unregisters them. */
void kc__crd_install(kc_server *srv);
/* Registry add (mu held); takes over r. */
int kc__registry_add(kc_server *srv, kc__rsrc *r);
void kc__registry_remove(kc_server *srv, kc__rsrc *r);

/* ---- requests (http.c, route.c, query.c, negotiate.c) -------------------------------------- */

enum kc__method { KC__M_GET = 1, KC__M_POST, KC__M_PUT, KC__M_PATCH, KC__M_DELETE, KC__M_OTHER };

typedef struct kc__route {
    enum {
        KC__R_NONE = 0,
        KC__R_API,      /* /api */
        KC__R_APIS,     /* /apis */
        KC__R_GROUP,    /* /apis/{g} */
        KC__R_GV,       /* /api/v1, /apis/{g}/{v} */
        KC__R_RESOURCE, /* resource paths */
    } kind;
    char group[128], version[64], plural[128], ns[256], name[256], sub[64];
    bool has_ns, has_name, has_sub, watch_path;
} kc__route;

/* Parse a URL path (already percent-decoded). 0, or KC_ENOTFOUND for paths outside the API. */
int kc__route_parse(const char *path, kc__route *ret);

/* Query options of a resource request. Strings borrowed from MHD (valid during the request). */
typedef struct kc__query {
    bool watch, watch_set, bookmarks, send_initial, send_initial_set, force, force_set;
    const char *rv, *rv_match, *label_sel, *field_sel, *cont, *dry_run, *field_manager,
        *field_validation, *propagation, *limit_s, *timeout_s, *grace_s, *include_object,
        *shard_sel;
    int64_t limit, timeout, grace; /* -1 when absent */
} kc__query;

int kc__query_parse(struct MHD_Connection *conn, kc__query *ret, kc_error *err);
/* Parameter boolean rule: false only for "0" or case-insensitive "false" (NULL value = true). */
bool kc__param_bool(const char *v);

enum kc__fmt { KC__FMT_JSON = 0, KC__FMT_TABLE, KC__FMT_PARTIAL };
/* Pick a representation from an Accept header (NULL = JSON). KC_EMEDIATYPE → 406. */
int kc__negotiate(const char *accept, enum kc__fmt *ret, kc_error *err);

#define KC__MAX_WARNINGS 8   /* Warning headers per reply; more unknown fields are not named */
#define KC__WARNING_MAX  160 /* bytes of one warning text, NUL included */

typedef struct kc__req {
    kc_server *srv;
    struct MHD_Connection *conn;
    enum kc__method method;
    const char *method_name; /* as received ("GET", "HEAD", …), for the request log */
    const char *path;
    kc__route route;
    kc__query q;
    enum kc__fmt fmt;
    const char *accept, *content_type;
    const char *body;
    size_t body_len;
    /* reply (set by the verb) */
    struct MHD_Response *resp;
    unsigned status;
    /* `Warning: 299 - "<text>"` headers for the reply (fieldValidation=Warn), added by kc__reply */
    char warnings[KC__MAX_WARNINGS][KC__WARNING_MAX];
    int n_warnings;
    kc_error err; /* verbs that fail fill it and return its code; http.c replies with it */
    /* the canonical shardSelector a list echoes in metadata.shardInfo.selector (S8); NULL = none
     * (borrowed from the verb's parsed selector, valid while it replies) */
    const char *shard_echo;
} kc__req;

/* Reply helpers: take over body (malloc'd). Return 0, or KC_ENOMEM. */
int kc__reply(kc__req *req, unsigned status, char *body, size_t len);
int kc__reply_text(kc__req *req, unsigned status, const char *text);
/* The body as given (no Go escapes, no final newline added: /version), the Warning headers. */
int kc__reply_raw(kc__req *req, unsigned status, char *body, size_t len);
/* Reply with the Status of err (code and details). Always returns 0 unless out of memory. */
int kc__reply_error(kc__req *req, const kc_error *err);
int kc__reply_obj(kc__req *req, unsigned status, kc__rsrc *r, kc_obj *obj);
int kc__reply_doc(kc__req *req, unsigned status, json_t *doc);

/* ---- errors (status.c) ---------------------------------------------------------------------- */

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
/* The Status JSON for err (new malloc'd). */
char *kc__status_json(const kc_error *err, size_t *ret_len);
/* Success Status of a delete. */
char *kc__status_success_json(const kc__rsrc *r, const char *name, const char *uid,
                              size_t *ret_len);
/* Map err to its HTTP status (err->http_status or derived from code). */
int kc__err_http(const kc_error *err);

/* ---- verbs ---------------------------------------------------------------------------------- */

int kc__verb_get(kc__req *req, kc__rsrc *r);
int kc__verb_list(kc__req *req, kc__rsrc *r);
int kc__verb_watch(kc__req *req, kc__rsrc *r);
int kc__verb_create(kc__req *req, kc__rsrc *r);
int kc__verb_update(kc__req *req, kc__rsrc *r);
int kc__verb_patch(kc__req *req, kc__rsrc *r);
int kc__verb_delete(kc__req *req, kc__rsrc *r);
int kc__verb_deletecollection(kc__req *req, kc__rsrc *r);
int kc__admin_handle(kc__req *req);
/* The scale subresource (scale.c). */
bool kc__rsrc_has_scale(const kc__rsrc *r);
int kc__scale_get(kc__req *req, kc__rsrc *r);
int kc__scale_write(kc__req *req, kc__rsrc *r, bool patch);

/* Decode a Kubernetes protobuf request body ("k8s\0" + runtime.Unknown) of a supported kind
 * into a new JSON document (proto.c). 400 when malformed, 415 for other kinds. */
int kc__proto_to_json(const char *body, size_t len, json_t **ret, kc_error *err);

/* Seeding create without jansson (create_fast.c; mu held). o0 borrowed. KC_EUNSUPPORTED when
 * the object needs the general path. */
int kc__create_fast(kc_server *srv, kc__rsrc *r, kc_obj *o0, kc_error *err);

/* Create an object from JSON text (seeding, mu NOT held) through the create path: defaulted,
 * status kept. as_stored: the text is already what the server would store (generated objects),
 * so the fast path (create_fast.c, no defaulting) may take any kind; otherwise it takes only
 * kinds without defaults. */
int kc__create_json(kc_server *srv, const char *json, size_t len, bool as_stored, kc_error *err);
/* The same with have_lock = true when the caller holds mu (restart). */
int kc__create_json_ex(kc_server *srv, const char *json, size_t len, bool have_lock, bool as_stored,
                       kc_error *err);

/* Shared write helpers (write.c), all with mu held unless stated. */
typedef struct kc__write {
    kc__rsrc *r;
    const char *ns;      /* request namespace ("" for cluster-scoped) */
    const char *version; /* request version */
    bool dry_run;
    bool status_sub;
    bool keep_status; /* seeding: keep .status on create */
    /* managedFields "Update" entry of a non-apply write (#46): manager NULL = record nothing
     * (apply, which records its own "Apply" entry; seeding; no manager derivable). subresource
     * "status"/"scale" or NULL. */
    const char *manager;
    const char *subresource;
} kc__write;

/* Maximum length of a field manager name (bytes), as upstream. */
#define KC__FIELD_MANAGER_MAX 128
/* The field manager of a non-apply write into out: the fieldManager query parameter (validated:
 * at most 128 bytes, printable, else 422), else the User-Agent up to its first '/' (non-printable
 * characters dropped, cut at 128 bytes), as upstream. out is "" when neither gives a name. */
int kc__write_manager(kc__req *req, char out[KC__FIELD_MANAGER_MAX + 1]);

/* fieldValidation (field_validation.c): the request's mode ("Strict", "Warn" — the default — or
 * "Ignore"; *ret_mode static), 400 for any other value. */
int kc__field_validation_mode(kc__req *req, const char **ret_mode);
/* Check doc's top-level (built-in kinds) and metadata fields under the request's mode: Strict →
 * 400 naming the first unknown field; Warn → a warning per unknown field (req->warnings) and the
 * field removed from doc; Ignore → removed. Fields base (the stored object a patch started from,
 * or NULL) already has at the same place are accepted. */
int kc__field_check(kc__req *req, const kc__rsrc *r, json_t *doc, const json_t *base);

/* Validate dryRun query ("All" or absent). */
int kc__dry_run_parse(const char *v, bool *ret, kc_error *err);
/* Store doc as the new state of an existing entry (update path, mu held). Handles RV
 * preconditions, immutable fields, status, generation, finalizers, no-op. *ret_obj is the reply
 * object (new reference), *ret_deleted set when removing the last finalizer deleted it. */
int kc__write_update(kc_server *srv, const kc__write *w, kc__entry *cur, json_t *doc,
                     bool require_rv, kc_obj **ret_obj, kc_error *err);
/* Insert doc as a new object (create path, mu held). */
int kc__write_create(kc_server *srv, const kc__write *w, json_t *doc, kc_obj **ret_obj,
                     kc_error *err);
/* Defaulting (defaulting.c, mu held; docs/server.md "Defaulting"). kc__write_defaults: the
 * scheme's defaulters on doc (the decode of every create/update/patch/apply), before the
 * writer's managedFields entry is recorded. kc__write_prepare: the registry's step (old NULL =
 * create: PrepareForCreate, pod admission — 403 for an unknown priority class; update:
 * PrepareForUpdate) and Service allocations (422/500 as upstream; reserved unless dry run).
 * kc__write_settle after the commit (committed) or a failure after kc__write_prepare: releases
 * what the stored object no longer holds, or what this write reserved. kc__write_released: a
 * removed object gives its allocations back. */
int kc__write_defaults(kc_server *srv, const kc__write *w, json_t *doc, kc_error *err);
int kc__write_prepare(kc_server *srv, const kc__write *w, json_t *doc, const json_t *old,
                      kc_error *err);
void kc__write_settle(kc_server *srv, const kc__write *w, const json_t *doc, const json_t *old,
                      bool committed);
void kc__write_released(kc_server *srv, const kc__rsrc *r, const kc_obj *obj);

/* Remove an entry now (mu held): DELETED event with the last state at a new RV.
 * *ret_last (may be NULL) gets the DELETED object (new reference). */
int kc__write_remove(kc_server *srv, kc__rsrc *r, kc__entry *cur, kc_obj **ret_last, kc_error *err);
/* The delete verb on one entry (mu held); *ret_obj the object to reply with or NULL for a
 * Status Success; *ret_uid copied uid. */
int kc__delete_one(kc_server *srv, kc__rsrc *r, kc__entry *cur, json_t *opts, bool dry_run,
                   int64_t grace, kc_obj **ret_obj, bool *ret_gone, kc_error *err);
/* Start the deletion of cur (mu held): deletionTimestamp (now + grace), the generation bumped,
 * add_finalizer (may be NULL) appended to metadata.finalizers, a namespace's status.phase
 * Terminating; one MODIFIED event. *ret_obj the new state (new reference). */
int kc__mark_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, int64_t grace,
                      const char *add_finalizer, bool dry_run, kc_obj **ret_obj, kc_error *err);
/* A write of the server itself (controllers; mu held): doc (borrowed) replaces cur's object as an
 * update without a resourceVersion check and without a managedFields entry. */
int kc__write_internal_update(kc_server *srv, kc__rsrc *r, kc__entry *cur, json_t *doc,
                              kc_error *err);

/* Metadata helpers (meta.c). */
json_t *kc__meta(json_t *doc); /* metadata object, created when missing; NULL on ENOMEM */
const char *kc__meta_str(json_t *doc, const char *key); /* NULL when absent / not a string */
int kc__meta_set_str(json_t *doc, const char *key, const char *val);
void kc__meta_del(json_t *doc, const char *key);
void kc__rv_str(uint64_t rv, char out[24]);
/* Namespace checks of a create of r's object name (mu held), as the NamespaceLifecycle admission
 * plugin: 404 `namespaces "ns" not found`, 403 while the namespace terminates. */
int kc__check_namespace(kc_server *srv, const char *ns, const kc__rsrc *r, const char *name,
                        kc_error *err);
kc__rsrc *kc__rsrc_namespaces(kc_server *srv);

/* The Table of items of r (table_crd.c): a custom resource's CRD printer columns (Name, Age
 * without), a built-in's kubectl columns (kc__table_build). New reference, NULL on ENOMEM; items
 * borrowed. Runs with or without mu. */
json_t *kc__table_for(kc__rsrc *r, kc_obj *const *items, size_t n, const char *rv, const char *cont,
                      bool with_columns);

/* Sharded list and watch (shard.c; KEP-5866, docs/serve.md). The shardSelector of the request as
 * a new selector in *ret (NULL when the parameter is absent or empty, or the server ignores it:
 * S12); an invalid one → 400 BadRequest "invalid shard selector: <why>" (S11). */
int kc__shard_selector_of(kc__req *req, kc_shard_selector **ret);
/* Fill ev's shard hashes (uid and namespace of ev->obj) once per event, when sharded watchers
 * exist, so each sharded watcher's filter compares instead of hashing (mu held, before publish). */
void kc__shard_event_hash(kc_server *srv, kc__hub_event *ev);
/* Does ev's object fall in sel (NULL = everything)? Uses ev's hashes when filled. A miss counts
 * in srv->shard_filtered. uid and namespace are immutable: old and new state agree (S10). */
bool kc__shard_event_match(kc_server *srv, const kc_shard_selector *sel, const kc__hub_event *ev);

/* Encoding (encode.c). */
/* Reply with a list of items in the negotiated format. Takes over items (a malloc'd array, may
 * be NULL when n is 0) and the n references in it, also on failure. */
int kc__reply_list(kc__req *req, kc__rsrc *r, kc_obj **items, size_t n, uint64_t rv,
                   const char *cont, int64_t remaining);
/* One watch event line in the negotiated format, appended to out. first: Table columns. */
int kc__encode_event(kc__buf *out, enum kc__fmt fmt, kc__rsrc *r, const char *type, kc_obj *obj,
                     bool first);

#endif

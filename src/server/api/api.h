/*
 * api.h — what the api room (src/server/api/: the verbs) gives the http room: the request as the
 * verbs see it (route, query, headers, body; http/ parses and fills it), the verbs and the scale
 * subresource (request in, reply out: a verb fills req's reply or req->err and returns its code),
 * and the reply helpers (reply.c) the http room answers non-resource requests with.
 * Not installed.
 */
#ifndef KC_SERVER_API_API_H
#define KC_SERVER_API_API_H

#include <microhttpd.h>

#include "server/discovery/table.h"
#include "server/storage/storage.h"

/* ---- requests (filled by http/: http.c, route.c, negotiate.c) ------------------------------ */

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

/* Query options of a resource request. Strings borrowed from MHD (valid during the request). */
typedef struct kc__query {
    bool watch, watch_set, bookmarks, send_initial, send_initial_set, force, force_set;
    const char *rv, *rv_match, *label_sel, *field_sel, *cont, *dry_run, *field_manager,
        *field_validation, *propagation, *limit_s, *timeout_s, *grace_s, *include_object,
        *shard_sel;
    int64_t limit, timeout, grace; /* -1 when absent */
} kc__query;

/* PROTO: application/vnd.kubernetes.protobuf for built-in kinds, 406 for others; PROTO_JSON:
 * the same with JSON for others (the Accept also allowed JSON). kc__fmt_for settles both. */
enum kc__fmt {
    KC__FMT_JSON = 0,
    KC__FMT_TABLE,
    KC__FMT_PARTIAL,
    KC__FMT_PROTO,
    KC__FMT_PROTO_JSON
};

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
    enum kc__table_obj table_obj; /* ?includeObject= of a Table reply */
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
    /* who sent the request (authentication.k8s.io/v1 UserInfo: username, uid, groups) when
     * authentication ran (tokens configured or RBAC mode; http/authorize.c), handed to admission
     * webhooks as request.userInfo; owned, freed with the request. NULL = the default admin. */
    json_t *user_info;
} kc__req;

/* Reply helpers: take over body (malloc'd). Return 0, or KC_ENOMEM. */
int kc__reply(kc__req *req, unsigned status, char *body, size_t len);
int kc__reply_text(kc__req *req, unsigned status, const char *text);
/* The body as given (no Go escapes, no final newline added: /version), the Warning headers. */
int kc__reply_raw(kc__req *req, unsigned status, char *body, size_t len);
/* Adds req's `Warning: 299 - "<text>"` headers to resp (every reply path does). */
void kc__reply_warnings(const kc__req *req, struct MHD_Response *resp);
/* Reply with the Status of err (code and details). Always returns 0 unless out of memory. */
int kc__reply_error(kc__req *req, const kc_error *err);

/* ---- verbs ---------------------------------------------------------------------------------- */

int kc__verb_get(kc__req *req, kc__rsrc *r);
int kc__verb_list(kc__req *req, kc__rsrc *r);
int kc__verb_watch(kc__req *req, kc__rsrc *r);
int kc__verb_create(kc__req *req, kc__rsrc *r);
int kc__verb_update(kc__req *req, kc__rsrc *r);
int kc__verb_patch(kc__req *req, kc__rsrc *r);
int kc__verb_delete(kc__req *req, kc__rsrc *r);
int kc__verb_deletecollection(kc__req *req, kc__rsrc *r);
/* The pods subresources a kubelet serves: log, exec, attach, portforward, proxy
 * (pod_connect.c); kc__pod_connect answers them as a server without a reachable kubelet. */
bool kc__pod_connect_sub(const kc__rsrc *r, const char *sub);
/* A watch filter's field selector fs against o, one of a published event's objects (slot 0: the
 * new state, 1: the old), locating each field once per event through memo (watch_fields.c);
 * memo NULL: kc_field_selector_match. */
bool kc__watch_fields_match(const kc_field_selector *fs, const kc_obj *o, kc__ev_memo *memo,
                            int slot);
/* The node fs pins (spec.nodeName=X or ==X: X, borrowed from fs) and, in *ret_pointer, the JSON
 * Pointer of that field (borrowed from fs); NULL (and *ret_pointer NULL) when it pins none: the
 * key of the hub's and the store's node indexes (watch_fields.c). */
const char *kc__watch_node_pin(const kc_field_selector *fs, const char **ret_pointer);
/* The pods/binding subresource (pod_binding.c): POST a Binding to set a pod's node. */
bool kc__pod_binding_sub(const kc__rsrc *r, const char *sub);
int kc__pod_binding(kc__req *req, kc__rsrc *r);
int kc__pod_connect(kc__req *req, kc__rsrc *r);
/* The scale subresource (scale.c). */
bool kc__rsrc_has_scale(const kc__rsrc *r);
int kc__scale_get(kc__req *req, kc__rsrc *r);
int kc__scale_write(kc__req *req, kc__rsrc *r, bool patch);

#endif

/*
 * api_internal.h — what the files of the api room share: replies of objects, lists and watch
 * events in the negotiated format (encode.c), Status bodies (reply.c), protobuf bodies
 * (proto.c), and what the verbs read from a request (request.c, field_validation.c).
 * Not installed.
 */
#ifndef KC_SERVER_API_INTERNAL_H
#define KC_SERVER_API_INTERNAL_H

#include "server/api/api.h"
#include "server/admission/admission.h"
#include "server/storage/write.h"

/* ---- replies (reply.c, encode.c) ------------------------------------------------------------ */

int kc__reply_obj(kc__req *req, unsigned status, kc__rsrc *r, kc_obj *obj);
int kc__reply_doc(kc__req *req, unsigned status, json_t *doc);
/* The Status JSON for err (new malloc'd). */
char *kc__status_json(const kc_error *err, size_t *ret_len);
/* Success Status of a delete. */
char *kc__status_success_json(const kc__rsrc *r, const char *name, const char *uid,
                              size_t *ret_len);
/* Map err to its HTTP status (err->http_status or derived from code). */
int kc__err_http(const kc_error *err);
/* Reply with a list of items in the negotiated format. Takes over items (a malloc'd array, may
 * be NULL when n is 0) and the n references in it, also on failure. */
int kc__reply_list(kc__req *req, kc__rsrc *r, kc_obj **items, size_t n, uint64_t rv,
                   const char *cont, int64_t remaining);
/* One watch event line in the negotiated format, appended to out. first: Table columns. */
int kc__encode_event(kc__buf *out, enum kc__fmt fmt, enum kc__table_obj tobj, kc__rsrc *r,
                     const char *type, kc_obj *obj, bool first);

/* ---- request bodies and options (proto.c, request.c, field_validation.c) -------------------- */

/* Decode a Kubernetes protobuf request body ("k8s\0" + runtime.Unknown) of a built-in kind
 * into a new JSON document (proto.c). 400 naming the field path and byte offset when
 * malformed, 415 for kinds without a protobuf message (custom resources). */
int kc__proto_to_json(const char *body, size_t len, json_t **ret, kc_error *err);
/* Protobuf responses (proto.c): whether apiVersion + kind has a message here; the enveloped
 * object of JSON text; a list {ListMeta, items} of items (borrowed); one watch frame (4-byte
 * big-endian length + WatchEvent) of an object, or of a JSON event line ({"type","object"}).
 * Append to out; 0, KC_ENOTFOUND (no message for the kind), KC_EINVAL (bad JSON), KC_ENOMEM. */
bool kc__proto_has(const char *av, const char *kind);
int kc__proto_obj(kc__buf *out, const char *json, size_t len);
int kc__proto_list(kc__buf *out, const char *av, const char *list_kind, kc_obj **items, size_t n,
                   const char *rv, const char *cont, int64_t remaining);
int kc__proto_event(kc__buf *out, const char *type, const char *json, size_t len);
int kc__proto_event_line(kc__buf *out, const char *line);
/* The representation of req's replies for resource r: KC__FMT_PROTO* become PROTO for built-in
 * kinds, JSON for others when the Accept allowed JSON, else 406 (encode.c). */
int kc__fmt_for(kc__req *req, const kc__rsrc *r, enum kc__fmt *ret);
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
/* Sharded list and watch (request.c; KEP-5866, docs/serve.md). The shardSelector of the request as
 * a new selector in *ret (NULL when the parameter is absent or empty, or the server ignores it:
 * S12); an invalid one → 400 BadRequest "invalid shard selector: <why>" (S11). */
int kc__shard_selector_of(kc__req *req, kc_shard_selector **ret);

/* ---- admission webhooks (admit.c) ------------------------------------------------------------ */

/* How many times a write whose object changed while its webhooks ran starts again (then 409). */
#define KC__ADMIT_RETRIES 5
/* The admission of this request (mu NOT held): *ret NULL when no webhook configuration is stored
 * (the verb goes its own way). opts_kind: "CreateOptions", "UpdateOptions", "DeleteOptions". */
int kc__admit_begin(kc__req *req, kc__rsrc *r, const char *op, bool dry, const char *opts_kind,
                    const char *manager, kc__adm_chain **ret);
/* {kind, apiVersion: meta.k8s.io/v1, dryRun, fieldManager} (new reference; NULL on ENOMEM). */
json_t *kc__admit_options(const char *kind, bool dry, const char *manager);
/* Mutate *doc (replaced), dry-run + validate, write (mu NOT held). old_rv NULL = create; else the
 * RV the stored object had when the verb read it: *retry when it changed since. */
int kc__admit_write(kc__req *req, const kc__write *w, kc__adm_chain *c, const char *old_rv,
                    bool require_rv, json_t **doc, kc_obj **ret_obj, bool *retry);
/* The stored object's document (new reference) and RV (mu NOT held); 0, or a 404 / ENOMEM. */
int kc__admit_read(kc__req *req, kc__rsrc *r, const char *ns, json_t **ret_old, char rv[24]);
/* DELETE through admission webhooks (object null, oldObject the stored one; opts borrowed). */
int kc__admit_delete(kc__req *req, kc__rsrc *r, kc__adm_chain *c, json_t *opts, bool dry,
                     int64_t grace, kc_obj **ret_obj, bool *ret_gone);
/* DELETE of a collection through admission webhooks, each object its own DELETE (mu NOT held);
 * replies with the list of deleted objects. An object changed meanwhile is left alone. */
int kc__admit_delete_collection(kc__req *req, kc__rsrc *r, kc__adm_chain *c, const char *ns,
                                const kc_label_selector *ls, const kc_field_selector *fs,
                                json_t *opts, bool dry, int64_t grace);
/* CRD conversion webhooks (convert.c): items not at the request's version converted in place
 * (references replaced); and a write's body converted to the storage version (*converted: the
 * write then goes at the storage version). mu NOT held. */
int kc__convert_objs(kc__req *req, kc__rsrc *r, kc_obj **items, size_t n);
int kc__convert_in(kc__req *req, kc__rsrc *r, json_t **doc, bool *converted);
/* The same with the caller's converter, to apiVersion desired ("group/version"). */
int kc__convert_objs_with(kc__req *req, kc__rsrc *r, kc__conv *cv, const char *desired,
                          kc_obj **items, size_t n);

/* WATCH conversion (watch_convert.c): a converter thread per watch in a non-storage version of a
 * CRD converting by webhook. start takes cv (owned) and the watcher's wake; take pops converted
 * events (0; at the end KC_ESTOPPED / KC_ETOOLARGE / KC_ENOMEM, or KC_EIO with *error the
 * conversion failure, malloc'd); park: 1 when something is ready, else 0 and the connection is
 * resumed when it is or at wake_at_ns; stop takes the stream's watcher and never waits: the
 * thread frees all at its end when a call is in flight (c NULL: the watcher freed). */
typedef struct kc__wconv kc__wconv;
int kc__wconv_start(kc_server *srv, kc__rsrc *r, const char *version, kc__watcher *w,
                    struct MHD_Connection *conn, kc__conv *cv, kc__wconv **ret);
int kc__wconv_take(kc__wconv *c, kc__hub_event *evs, size_t max, size_t *ret_n, char **error);
int kc__wconv_park(kc__wconv *c, uint64_t wake_at_ns);
void kc__wconv_stop(kc__wconv *c, kc__watcher *w);
/* The 409 after KC__ADMIT_RETRIES. */
int kc__admit_conflict(kc__req *req, kc__rsrc *r);

#endif

/*
 * rest/verbs.c — the REST verbs: get, list (one page), list_all (pager), create, update,
 * update_status, patch, delete, deletecollection (apiserver-semantics §3–§4), and the Table GET
 * of server-side printing (kubectl get's Accept header).
 *
 * Request bodies are the caller's JSON, sent as is; responses are decoded by the json layer
 * (kc_obj_parse for one object, kc_list_decode for lists — the bulk path, no DOM). DeleteOptions
 * are written as a JSON body (a non-empty body wins over the query upstream).
 */
#include "rest/internal.h"
#include "core/slab.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

kc_decode_opts kc__decode_opts(const kc_decode_opts *d, bool metadata_only)
{
    kc_decode_opts o = {0};
    if (d)
        o = *d;
    if (metadata_only)
        o.flags |= KC_DECODE_METADATA_ONLY;
    return o;
}

int kc__list_opts_paged(const kc_client *c, const kc_list_opts *opts, kc_list_opts *ret,
                        kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    kc_list_opts o = {0};
    if (opts)
        o = *opts;
    if (o.limit <= 0)
        o.limit = KC__DEFAULT_PAGE;
    *ret = o;
    return 0;
}

/* Build the path into b; KC_EINVAL naming the field on a bad gvr, namespace, name or
 * subresource (path.c: an escaped '/' would still reach another URL). */
static int kc__build_path(kc__buf *b, const kc_gvr *gvr, const char *ns, const char *name,
                          const char *sub, kc_error *err)
{
    int rc = kc__gvr_check(gvr, err);
    rc = rc ? rc : kc__ns_check(ns, err);
    if (!rc && name)
        rc = kc__segment_check("object name", name, err);
    if (!rc && sub && *sub)
        rc = kc__segment_check("subresource", sub, err);
    if (rc)
        return rc;
    rc = kc__path(b, gvr, ns, name, sub);
    if (rc)
        return kc_error_set(err, rc, rc == KC_EINVAL ? "bad resource path" : "out of memory");
    return 0;
}

/* Send and decode one object from the response (ret_obj may be NULL; *ret_obj NULL for a
 * Status body when status_ok, which then goes to *ret_status when that is not NULL). */
static int kc__object_call_ex(kc_client *c, const char *method, kc__buf *path, const char *ctype,
                              const char *body, size_t len, bool idempotent,
                              const kc_decode_opts *dopts, bool status_ok, kc_obj **ret_status,
                              kc_obj **ret_obj, kc_error *err)
{
    kc__http_req req = {.method = method,
                        .path = path->data,
                        .content_type = ctype,
                        .body = body,
                        .body_len = body ? len : 0};
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    int rc = kc__client_call(c, &req, idempotent, &resp, err);
    if (rc)
        goto out;
    kc_obj *o = NULL;
    kc_decode_opts d = kc__decode_opts(dopts, false);
    rc = kc_obj_parse(resp.body.data ? resp.body.data : "", resp.body.len, &d, &o, err);
    if (rc)
        goto out;
    if (status_ok && strcmp(kc_obj_kind(o), "Status") == 0) {
        if (ret_status)
            *ret_status = o;
        else
            kc_obj_unref(o);
        o = NULL;
    }
    if (ret_obj)
        *ret_obj = o;
    else
        kc_obj_unref(o);
out:
    kc__http_resp_free(&resp);
    return rc;
}

static int kc__object_call(kc_client *c, const char *method, kc__buf *path, const char *ctype,
                           const char *body, size_t len, bool idempotent,
                           const kc_decode_opts *dopts, bool status_ok, kc_obj **ret_obj,
                           kc_error *err)
{
    return kc__object_call_ex(c, method, path, ctype, body, len, idempotent, dopts, status_ok, NULL,
                              ret_obj, err);
}

int kc_client_get(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                  kc_obj **ret_obj, kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    kc__buf p = KC__BUF_INIT(0);
    int rc = kc__build_path(&p, gvr, ns, name ? name : "", NULL, err);
    if (!rc)
        rc = kc__object_call(c, "GET", &p, NULL, NULL, 0, true, NULL, false, ret_obj, err);
    kc__buf_free(&p);
    return rc;
}

static int kc__list_query(kc__buf *p, const kc_list_opts *o)
{
    int rc = kc__query(p, "labelSelector", o->label_selector);
    rc = rc ? rc : kc__query(p, "fieldSelector", o->field_selector);
    if (!rc && o->limit > 0)
        rc = kc__query_int(p, "limit", o->limit);
    rc = rc ? rc : kc__query(p, "continue", o->continue_token);
    rc = rc ? rc : kc__query(p, "resourceVersion", o->resource_version);
    rc = rc ? rc : kc__query(p, "resourceVersionMatch", o->resource_version_match);
    if (!rc && o->timeout_s > 0)
        rc = kc__query_int(p, "timeoutSeconds", o->timeout_s);
    /* Every page: the continue token does not carry it (controller-semantics S9). */
    rc = rc ? rc : kc__query(p, "shardSelector", o->shard_selector);
    return rc;
}

/* GET the collection (name NULL; opts' selectors, limit, continue… in the query) or one object,
 * with the given Accept (NULL = JSON), into *resp (the caller frees it). */
static int get_call(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                    const kc_list_opts *opts, const char *accept,
                    void (*on_body)(void *, const kc__buf *), void *body_ud, kc__http_resp *resp,
                    kc_error *err)
{
    kc__buf p = KC__BUF_INIT(0);
    int rc = kc__build_path(&p, gvr, ns, name, NULL, err);
    if (!rc && !name && kc__list_query(&p, opts))
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    if (!rc) {
        kc__http_req req = {.method = "GET",
                            .path = p.data,
                            .cancel = opts->cancel,
                            .accept = accept,
                            .on_body = on_body,
                            .body_ud = body_ud};
        rc = kc__client_call(c, &req, true, resp, err);
    }
    kc__buf_free(&p);
    return rc;
}

int kc__get_call(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                 const kc_list_opts *opts, const char *accept, kc__http_resp *resp, kc_error *err)
{
    return get_call(c, gvr, ns, name, opts, accept, NULL, NULL, resp, err);
}

int kc__list_call_watched(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                          const char *accept, void (*on_body)(void *body_ud, const kc__buf *body),
                          void *body_ud, kc__http_resp *resp, kc_error *err)
{
    return get_call(c, gvr, ns, NULL, opts, accept, on_body, body_ud, resp, err);
}

/* One LIST page (opts a full-size copy or NULL); ext (may be NULL) gets what kc_list_meta cannot
 * hold (the shardInfo echo). */
static int list_page(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                     const kc_shard_selector *shard, kc_list_meta *ret_meta, kc__list_ext *ext,
                     kc_list_item_cb on_item, void *ud, kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    kc_list_opts none = {0};
    if (!opts)
        opts = &none;
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    /* Metadata-only: ask the server for PartialObjectMetadataList (as client-go's metadata
     * informers do), falling back to full objects, which the decoder then trims. */
    int rc = kc__get_call(c, gvr, ns, NULL, opts,
                          opts->metadata_only ? KC__ACCEPT_PARTIAL_LIST : NULL, &resp, err);
    if (!rc) {
        kc_decode_opts d = kc__decode_opts(opts->decode, opts->metadata_only);
        rc = kc__list_decode_ex(resp.body.data ? resp.body.data : "", resp.body.len, &d, shard,
                                ret_meta, ext, on_item, ud, err);
    }
    kc__http_resp_free(&resp);
    return rc;
}

/* kc_client_list (one page) or, when all, kc_client_list_all: the caller's kc_list_opts
 * (opts_size bytes, may be NULL) taken as a full-size copy, its decode (when set) too. */
static int list_call(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                     size_t opts_size, bool all, kc_list_meta *ret_meta, kc_list_item_cb on_item,
                     void *ud, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_list_opts, err);
    kc_decode_opts dec;
    KC__OPTS_TAKE_NESTED(opts__copy, decode, &dec, "kc_list_opts.decode", err);
    if (all)
        return kc__client_list_all_ex(c, gvr, ns, opts, NULL, ret_meta, NULL, on_item, ud, err);
    int rc = list_page(c, gvr, ns, opts, NULL, ret_meta, NULL, on_item, ud, err);
    kc__slab_release_thread(); /* the objects' arena chunk (core/slab.h): the bulk is over */
    return rc;
}

int(kc_client_list)(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                    size_t opts_size, kc_list_meta *ret_meta, kc_list_item_cb on_item, void *ud,
                    kc_error *err)
{
    return list_call(c, gvr, ns, opts, opts_size, false, ret_meta, on_item, ud, err);
}

/* Server-side printing (kubectl get): a Table, or the plain document when the server has none. */
#define KC__ACCEPT_TABLE "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

int(kc_client_get_table)(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                         const kc_list_opts *opts, size_t opts_size, char **ret_json,
                         size_t *ret_len, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_list_opts, err);
    if (!c || !ret_json)
        return kc_error_set(err, KC_EINVAL, "kc_client_get_table: client and ret_json required");
    if (name && !*name)
        return kc_error_set(err, KC_EINVAL, "kc_client_get_table: empty name");
    kc_list_opts none = {0};
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    int rc = kc__get_call(c, gvr, ns, name, opts ? opts : &none, KC__ACCEPT_TABLE, &resp, err);
    if (!rc) {
        char *body = kc__buf_steal(&resp.body, ret_len);
        if (body)
            *ret_json = body;
        else
            rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    kc__http_resp_free(&resp);
    return rc;
}

int(kc_client_list_all)(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                        size_t opts_size, kc_list_meta *ret_meta, kc_list_item_cb on_item, void *ud,
                        kc_error *err)
{
    return list_call(c, gvr, ns, opts, opts_size, true, ret_meta, on_item, ud, err);
}

/* One page, counted in echo (may be NULL). The arena chunk stays with the thread (more pages). */
static int page_echo(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                     const kc_shard_selector *shard, kc_list_meta *ret_meta, kc__list_echo *echo,
                     kc_list_item_cb on_item, void *ud, kc_error *err)
{
    kc__list_ext ext = {0};
    int rc = list_page(c, gvr, ns, opts, shard, ret_meta, &ext, on_item, ud, err);
    if (!rc && echo) {
        echo->pages++;
        const char *sent = opts ? opts->shard_selector : NULL;
        if (sent && ext.shard_selector && strcmp(ext.shard_selector, sent) == 0)
            echo->pages_echoed++;
    }
    kc__list_ext_clear(&ext);
    return rc;
}

int kc__client_list_page(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                         const kc_shard_selector *shard, kc_list_meta *ret_meta,
                         kc__list_echo *echo, kc_list_item_cb on_item, void *ud, kc_error *err)
{
    int rc = page_echo(c, gvr, ns, opts, shard, ret_meta, echo, on_item, ud, err);
    kc__slab_release_thread(); /* the objects' arena chunk (core/slab.h): the bulk is over */
    return rc;
}

int kc__list_pages_exceeded(const kc_gvr *gvr, const kc_list_opts *opts, kc_error *err)
{
    return kc_error_set(err, KC_ETOOLARGE,
                        "list of %s: still a continue token after %lld pages "
                        "(kc_list_opts.max_pages; an informer's kc_informer_opts.max_list_pages)",
                        gvr && gvr->resource ? gvr->resource : "?", (long long)opts->max_pages);
}

int kc__client_list_all_ex(kc_client *c, const kc_gvr *gvr, const char *ns,
                           const kc_list_opts *opts, const kc_shard_selector *shard,
                           kc_list_meta *ret_meta, kc__list_echo *echo, kc_list_item_cb on_item,
                           void *ud, kc_error *err)
{
    kc_list_opts o;
    int rc = kc__list_opts_paged(c, opts, &o, err);
    if (rc)
        return rc;
    kc_list_meta meta = {0};
    meta.remaining_item_count = -1;
    char *cont = NULL;
    uint64_t pages = 0;
    for (;;) {
        if (o.cancel && kc_cancel_fired(o.cancel)) {
            free(cont);
            rc = kc_error_set(err, KC_ECANCELED, "list cancelled");
            break;
        }
        o.continue_token = cont;
        kc_list_meta_clear(&meta);
        rc = page_echo(c, gvr, ns, &o, shard, &meta, echo, on_item, ud, err);
        free(cont);
        cont = NULL;
        if (rc)
            break;
        if (!meta.continue_token || !*meta.continue_token)
            break;
        if (o.max_pages > 0 && ++pages >= (uint64_t)o.max_pages) {
            rc = kc__list_pages_exceeded(gvr, &o, err);
            break;
        }
        /* A continue token carries the snapshot RV: later pages must not pin another one. */
        o.resource_version = NULL;
        o.resource_version_match = NULL;
        cont = meta.continue_token;
        meta.continue_token = NULL;
    }
    kc__slab_release_thread(); /* the objects' arena chunk (core/slab.h): the bulk is over */
    if (rc) {
        kc_list_meta_clear(&meta);
        return rc;
    }
    if (ret_meta)
        *ret_meta = meta;
    else
        kc_list_meta_clear(&meta);
    return 0;
}

static int kc__write_query(kc__buf *p, const char *manager, const char *validation, bool dry)
{
    int rc = kc__query(p, "fieldManager", manager);
    rc = rc ? rc : kc__query(p, "fieldValidation", validation);
    return rc ? rc : (dry ? kc__query(p, "dryRun", "All") : 0);
}

/* The prologue of the verbs that send a body with kc_write_opts (create, update): the caller's
 * options (opts_size bytes, may be NULL) as a full-size copy into *ret, its decode (when set)
 * copied into *dec, which *ret then points to; KC_EINVAL when c is NULL or json is (verb names
 * the call in that message). */
static int write_opts_take(const kc_client *c, const kc_write_opts *opts, size_t opts_size,
                           const char *json, const char *verb, kc_write_opts *ret,
                           kc_decode_opts *dec, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_write_opts, err);
    KC__OPTS_TAKE_NESTED(opts__copy, decode, dec, "kc_write_opts.decode", err);
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    if (!json)
        return kc_error_set(err, KC_EINVAL, "%s: body required", verb);
    *ret = opts__copy;
    return 0;
}

int(kc_client_create)(kc_client *c, const kc_gvr *gvr, const char *ns, const char *json, size_t len,
                      const kc_write_opts *opts, size_t opts_size, kc_obj **ret_obj, kc_error *err)
{
    kc_write_opts o;
    kc_decode_opts dec;
    int rc = write_opts_take(c, opts, opts_size, json, "create", &o, &dec, err);
    if (rc)
        return rc;
    kc__buf p = KC__BUF_INIT(0);
    rc = kc__build_path(&p, gvr, ns, NULL, NULL, err);
    if (!rc && kc__write_query(&p, o.field_manager, o.field_validation, o.dry_run))
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    if (!rc)
        rc = kc__object_call(c, "POST", &p, NULL, json, len, false, o.decode, false, ret_obj, err);
    kc__buf_free(&p);
    return rc;
}

/* kc_client_update (sub NULL) and kc_client_update_status (sub "status"). */
static int kc__update(kc_client *c, const kc_gvr *gvr, const char *ns, const char *json, size_t len,
                      const char *sub, const kc_write_opts *opts, size_t opts_size,
                      kc_obj **ret_obj, kc_error *err)
{
    kc_write_opts o;
    kc_decode_opts dec;
    int rc = write_opts_take(c, opts, opts_size, json, "update", &o, &dec, err);
    if (rc)
        return rc;
    kc_obj *in = NULL;
    rc = kc_obj_parse(json, len, NULL, &in, err);
    if (rc)
        return rc == KC_EPARSE ? kc_error_set(err, KC_EINVAL, "update: body is not a JSON object")
                               : rc;
    if (!*kc_obj_name(in)) {
        kc_obj_unref(in);
        return kc_error_set(err, KC_EINVAL, "update: body has no metadata.name");
    }
    kc__buf p = KC__BUF_INIT(0);
    rc = kc__build_path(&p, gvr, ns, kc_obj_name(in), sub, err);
    kc_obj_unref(in);
    if (!rc && kc__write_query(&p, o.field_manager, o.field_validation, o.dry_run))
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    if (!rc)
        rc = kc__object_call(c, "PUT", &p, NULL, json, len, true, o.decode, false, ret_obj, err);
    kc__buf_free(&p);
    return rc;
}

int(kc_client_update)(kc_client *c, const kc_gvr *gvr, const char *ns, const char *json, size_t len,
                      const kc_write_opts *opts, size_t opts_size, kc_obj **ret_obj, kc_error *err)
{
    return kc__update(c, gvr, ns, json, len, NULL, opts, opts_size, ret_obj, err);
}

int(kc_client_update_status)(kc_client *c, const kc_gvr *gvr, const char *ns, const char *json,
                             size_t len, const kc_write_opts *opts, size_t opts_size,
                             kc_obj **ret_obj, kc_error *err)
{
    return kc__update(c, gvr, ns, json, len, "status", opts, opts_size, ret_obj, err);
}

int(kc_client_patch)(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                     kc_patch_type type, const char *body, size_t len, const kc_patch_opts *opts,
                     size_t opts_size, kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_patch_opts, err);
    kc_decode_opts dec;
    KC__OPTS_TAKE_NESTED(opts__copy, decode, &dec, "kc_patch_opts.decode", err);
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    static const char *const ctypes[] = {
        "application/merge-patch+json", "application/json-patch+json",
        "application/strategic-merge-patch+json", "application/apply-patch+yaml"};
    kc_patch_opts none = {0};
    if (!opts)
        opts = &none;
    if ((unsigned)type >= KC__ARRAY_LEN(ctypes) || !body || !name)
        return kc_error_set(err, KC_EINVAL, "patch: name, body and a known patch type required");
    if (type == KC_PATCH_APPLY && (!opts->field_manager || !*opts->field_manager))
        return kc_error_set(err, KC_EINVAL, "server-side apply needs a field manager");
    kc__buf p = KC__BUF_INIT(0);
    int rc = kc__build_path(&p, gvr, ns, name, opts->subresource, err);
    if (!rc && (kc__write_query(&p, opts->field_manager, NULL, opts->dry_run) ||
                (type == KC_PATCH_APPLY && opts->force && kc__query(&p, "force", "true"))))
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    if (!rc)
        rc = kc__object_call(c, "PATCH", &p, ctypes[type], body, len, false, opts->decode, false,
                             ret_obj, err);
    kc__buf_free(&p);
    return rc;
}

/* DeleteOptions JSON body. */
static int kc__delete_body(kc__buf *b, const kc_delete_opts *o)
{
    int rc = kc__buf_append_str(b, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"");
    if (!rc && o->propagation) {
        rc = kc__buf_append_str(b, ",\"propagationPolicy\":");
        rc = rc ? rc : kc__json_append_string(b, o->propagation);
    }
    if (!rc && o->has_grace_period)
        rc = kc__buf_printf(b, ",\"gracePeriodSeconds\":%" PRId64, o->grace_period_s);
    if (!rc && (o->precondition_uid || o->precondition_rv)) {
        rc = kc__buf_append_str(b, ",\"preconditions\":{");
        if (!rc && o->precondition_uid) {
            rc = kc__buf_append_str(b, "\"uid\":");
            rc = rc ? rc : kc__json_append_string(b, o->precondition_uid);
        }
        if (!rc && o->precondition_rv) {
            rc = kc__buf_append_str(b, o->precondition_uid ? ",\"resourceVersion\":"
                                                           : "\"resourceVersion\":");
            rc = rc ? rc : kc__json_append_string(b, o->precondition_rv);
        }
        rc = rc ? rc : kc__buf_append_char(b, '}');
    }
    if (!rc && o->dry_run)
        rc = kc__buf_append_str(b, ",\"dryRun\":[\"All\"]");
    return rc ? rc : kc__buf_append_char(b, '}');
}

int(kc_client_delete)(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                      const kc_delete_opts *opts, size_t opts_size, kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_delete_opts, err);
    return kc__client_delete_ex(c, gvr, ns, name, opts, ret_obj, NULL, err);
}

int kc__client_delete_ex(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                         const kc_delete_opts *opts, kc_obj **ret_obj, char **ret_status_uid,
                         kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    kc_delete_opts o = {0};
    if (opts)
        o = *opts; /* a full-size copy (KC__OPTS_TAKE of the public entry point) */
    kc_decode_opts dec;
    KC__OPTS_TAKE_NESTED(o, decode, &dec, "kc_delete_opts.decode", err);
    opts = &o;
    if (!name)
        return kc_error_set(err, KC_EINVAL, "delete: name required");
    kc__buf p = KC__BUF_INIT(0), body = KC__BUF_INIT(0);
    int rc = kc__build_path(&p, gvr, ns, name, NULL, err);
    if (!rc && kc__delete_body(&body, opts))
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    kc_obj *status = NULL;
    if (!rc)
        rc = kc__object_call_ex(c, "DELETE", &p, NULL, body.data, body.len, true, opts->decode,
                                true, ret_status_uid ? &status : NULL, ret_obj, err);
    if (ret_status_uid) {
        *ret_status_uid = NULL; /* absent, or not a string: unknown */
        if (status)
            kc__obj_get_cstring(status, "/details/uid", ret_status_uid, false, NULL);
    }
    kc_obj_unref(status);
    kc__buf_free(&p);
    kc__buf_free(&body);
    return rc;
}

int(kc_client_delete_collection)(kc_client *c, const kc_gvr *gvr, const char *ns,
                                 const kc_delete_opts *opts, size_t opts_size, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_delete_opts, err);
    if (!c)
        return kc_error_set(err, KC_EINVAL, "client is NULL");
    kc__buf p = KC__BUF_INIT(0), body = KC__BUF_INIT(0);
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    int rc = kc__build_path(&p, gvr, ns, NULL, NULL, err);
    if (!rc &&
        (kc__query(&p, "labelSelector", opts->label_selector) ||
         kc__query(&p, "fieldSelector", opts->field_selector) || kc__delete_body(&body, opts)))
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    if (!rc) {
        kc__http_req req = {
            .method = "DELETE", .path = p.data, .body = body.data, .body_len = body.len};
        rc = kc__client_call(c, &req, true, &resp, err);
    }
    kc__http_resp_free(&resp);
    kc__buf_free(&p);
    kc__buf_free(&body);
    return rc;
}

/*
 * informer/verify.c — what the reflector refuses from the server, and saying why.
 *
 * Two things the list and watch paths share, kept out of reflector.c's state machine:
 *
 * The reason an object was refused. The store and these checks say why in a kc_error, but the
 * list decoder's item callback and the watch decoder's event callback return only a code, so the
 * decoders report "stopped by the item callback (KC_EINVAL)". The reflector adds objects through
 * kc__inf_batch_add / kc__inf_check_event, and hands what kc_store_apply refused to
 * kc__inf_keep_reason, which keep the reason (inf->item_err); after the call,
 * kc__inf_item_error puts it into the call's kc_error in place of the callback text, keeping what
 * the decoder said around it ("items[3]: ") and its byte offset. It is what kc_informer_status and
 * kc_informer_wait_synced then show ("items[3]: store: object without a name…").
 *
 * The kind of the objects. A LIST's items are checked against the list's kind by the decoder
 * (obj.c). Watch events carry their object's kind; the informer expects the kind of its last LIST
 * (the list's kind minus "List": PartialObjectMetadata for metadata_only informers) or, before
 * any (streaming lists), of the first event that said one; apiVersion likewise. An event whose
 * object says another kind or apiVersion is refused (KC_EPARSE) and not applied. Absent is fine.
 *
 * Threads: inf->item_err and the expected kind are the reflector's, and the paged LIST's decoding
 * worker's while the reflector waits for it (rest/pager.c joins it before the call returns).
 */
#include "informer/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kc__inf_expect_type(kc_informer *inf, const char *list_kind, const char *api_version)
{
    size_t n = list_kind ? strlen(list_kind) : 0;
    if (n > 4 && strcmp(list_kind + n - 4, "List") == 0 && n - 4 < sizeof inf->want_kind) {
        memcpy(inf->want_kind, list_kind, n - 4);
        inf->want_kind[n - 4] = '\0';
    }
    if (api_version && *api_version && strlen(api_version) < sizeof inf->want_api)
        strcpy(inf->want_api, api_version);
}

int kc__inf_keep_reason(kc_informer *inf, int rc, kc_error *e)
{
    kc_error_clear(&inf->item_err);
    inf->item_err = *e;
    kc_error_init(e);
    return rc;
}

int kc__inf_batch_add(kc_informer *inf, kc_store_batch *b, kc_obj *obj)
{
    kc_error e = KC_ERROR_INIT;
    int rc = kc_store_batch_add(b, obj, &e);
    if (rc)
        return kc__inf_keep_reason(inf, rc, &e);
    return 0;
}

int kc__inf_check_event(kc_informer *inf, const kc_obj *obj)
{
    const char *kind = kc_obj_kind(obj), *api = kc_obj_api_version(obj);
    if (!inf->want_kind[0] && *kind && strlen(kind) < sizeof inf->want_kind)
        strcpy(inf->want_kind, kind);
    if (!inf->want_api[0] && *api && strlen(api) < sizeof inf->want_api)
        strcpy(inf->want_api, api);
    kc_error e = KC_ERROR_INIT;
    if (*kind && strcmp(kind, inf->want_kind) != 0)
        kc_error_set(&e, KC_EPARSE,
                     "watch event object %s/%s of kind \"%s\" (expected \"%s\"): refused",
                     kc_obj_namespace(obj), kc_obj_name(obj), kind, inf->want_kind);
    else if (*api && strcmp(api, inf->want_api) != 0)
        kc_error_set(&e, KC_EPARSE,
                     "watch event object %s/%s of apiVersion \"%s\" (expected \"%s\"): refused",
                     kc_obj_namespace(obj), kc_obj_name(obj), api, inf->want_api);
    else
        return 0;
    return kc__inf_keep_reason(inf, KC_EPARSE, &e);
}

void kc__inf_item_error(kc_informer *inf, int rc, kc_error *err)
{
    kc_error *ie = &inf->item_err;
    if (!ie->code) /* nothing refused during the call */
        return;
    if (rc != ie->code || !err || !err->message || !strstr(err->message, "callback (")) {
        kc_error_clear(ie);
        return;
    }
    /* "items[3]: stopped by the item callback (KC_EINVAL)" → "items[3]: <the reason>" */
    const char *cut = strstr(err->message, "watch stopped by");
    if (!cut)
        cut = strstr(err->message, "stopped by the");
    int head = cut ? (int)(cut - err->message) : 0;
    char *msg = NULL;
    if (asprintf(&msg, "%.*s%s", head, err->message, ie->message ? ie->message : "") >= 0) {
        free(err->message);
        err->message = msg;
    }
    kc_error_clear(ie);
}

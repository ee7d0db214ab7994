/*
 * shard.c — server-side sharded list and watch (KEP-5866; controller-semantics S1–S14 as
 * docs/serve.md "Sharded list and watch" describes them): the per-event shard hashes of the watch
 * fan-out, the match of an event against a selector, and the run-time switch that makes the
 * server ignore the parameter as an old or gate-off server does (S12). The request's
 * shardSelector is parsed in api/request.c by the shared parser of kcache/shard.h (json layer; no
 * second grammar here).
 *
 * An object is kept iff the FNV-1a hash of its uid or namespace falls in a term of the selector
 * (S7). uid and namespace never change, so an event's old and new state are in the same shard and
 * one hash per event decides for every watcher (S10): the publisher hashes each event once, and
 * only while sharded watches exist; replayed history events (no hashes) are hashed by the filter.
 * A bad selector is a 400 BadRequest carrying the parser's message (kube-apiserver answers 500
 * reason Unknown with the same "invalid shard selector: …" text, S11; clients treat both as
 * permanent). An empty parameter value is the same as no parameter, as upstream, where the field
 * is a plain string whose zero value means unset.
 */
#include "server/storage/storage_internal.h"

#include <stdatomic.h>
#include <string.h>

void kc__shard_event_hash(kc_server *srv, kc__hub_event *ev)
{
    if (!atomic_load_explicit(&srv->shard_watchers, memory_order_relaxed) || !ev->obj)
        return;
    const char *uid = kc_shard_key(ev->obj, KC_SHARD_FIELD_UID);
    const char *ns = kc_shard_key(ev->obj, KC_SHARD_FIELD_NAMESPACE);
    ev->uid_hash = kc_shard_hash(uid, uid ? strlen(uid) : 0);
    ev->ns_hash = kc_shard_hash(ns, ns ? strlen(ns) : 0);
    ev->hashed = true;
}

bool kc__shard_event_match(kc_server *srv, const kc_shard_selector *sel, const kc__hub_event *ev)
{
    if (!sel)
        return true;
    bool ok;
    if (ev->hashed)
        ok = kc_shard_selector_match_hash(
            sel, kc_shard_selector_field(sel) == KC_SHARD_FIELD_UID ? ev->uid_hash : ev->ns_hash);
    else
        ok = kc_shard_selector_match(sel, ev->obj ? ev->obj : ev->old);
    if (!ok)
        atomic_fetch_add_explicit(&srv->shard_filtered, 1, memory_order_relaxed);
    return ok;
}

KC_API int kc_server_set_shard_selector_ignored(kc_server *srv, bool ignored)
{
    if (!srv)
        return KC_EINVAL;
    atomic_store(&srv->shard_ignored, ignored);
    return 0;
}

KC_API bool kc_server_shard_selector_ignored(const kc_server *srv)
{
    return srv ? atomic_load(&((kc_server *)srv)->shard_ignored) : false;
}

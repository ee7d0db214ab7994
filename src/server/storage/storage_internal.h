/*
 * storage_internal.h — what the files of the storage room share and no other room calls: the
 * built-in table, the commit, snapshots' reset, object parsing, messages' qualified names,
 * namespace admission, defaulting around a write, the shard hashes of an event. Not installed.
 */
#ifndef KC_SERVER_STORAGE_INTERNAL_H
#define KC_SERVER_STORAGE_INTERNAL_H

#include "server/storage/write.h"

/* The built-in resource table (resources.c). */
const kc__builtin *kc__builtins(size_t *ret_n);
/* Commit one change (mu held): type ADDED (insert obj), MODIFIED (replace with obj), DELETED
 * (remove; obj is the last state carrying the delete rv). Takes its own references. Records the
 * event in the history and publishes it. Returns 0 or KC_ENOMEM. */
int kc__store_commit(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old,
                     uint64_t rv);
void kc__snap_clear(kc_server *srv);
/* Parse JSON text into a stored object (keeps managedFields; Go's escapes applied). */
int kc__obj_from_json(kc_server *srv, const char *json, size_t len, kc_obj **ret, kc_error *err);
int kc__obj_from_doc(kc_server *srv, const json_t *doc, kc_obj **ret, kc_error *err);
/* "pods" or "deployments.apps" (for messages) into out. */
void kc__rsrc_qualified(const kc__rsrc *r, char *out, size_t cap);
/* Namespace checks of a create of r's object name (mu held), as the NamespaceLifecycle admission
 * plugin: 404 `namespaces "ns" not found`, 403 while the namespace terminates. */
int kc__check_namespace(kc_server *srv, const char *ns, const kc__rsrc *r, const char *name,
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
/* Fill ev's shard hashes (uid and namespace of ev->obj) once per event, when sharded watchers
 * exist, so each sharded watcher's filter compares instead of hashing (mu held, before publish). */
void kc__shard_event_hash(kc_server *srv, kc__hub_event *ev);

#endif

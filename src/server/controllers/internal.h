/*
 * internal.h — what the controllers' files share (controllers/ only). All run with mu held.
 */
#ifndef KC_SERVER_CONTROLLERS_INTERNAL_H
#define KC_SERVER_CONTROLLERS_INTERNAL_H

#include "server/controllers/controllers.h"

/* true when r is the core resource of that plural. */
bool kc__ctl_is_core(const kc__rsrc *r, const char *plural);

/* Garbage collector (gc.c). */
/* The ownerReferences of o (new array) or NULL when it has none. */
json_t *kc__gc_owner_refs(const kc_obj *o);
void kc__gc_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj);
int kc__gc_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, const char *propagation,
                    kc_obj **ret_obj, kc_error *err);

/* The owner-uid index (gc_index.c). committed: keep it exact after a commit (nothing before its
 * first use). dependents: fn(r, entry, ud) for each stored object the index says refers to uid
 * (fn must not write); their count, or (size_t)-1 on ENOMEM. free: at server free. */
typedef struct kc__gc_index kc__gc_index;
typedef void (*kc__gc_visit)(kc__rsrc *r, kc__entry *e, void *ud);
void kc__gc_committed(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old);
size_t kc__gc_index_dependents(kc_server *srv, const char *uid, kc__gc_visit fn, void *ud);
void kc__gc_index_free(kc_server *srv);

/* Namespace lifecycle (namespace.c). */
void kc__ns_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj);
/* A terminating namespace stays while objects are left in it. */
bool kc__ns_holds(kc_server *srv, const kc__rsrc *r, const kc__entry *cur);
int kc__ns_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, kc_obj **ret_obj, kc_error *err);

/* ServiceAccount "default" (namespace.c). */
void kc__sa_created(kc_server *srv, kc__rsrc *r, kc_obj *obj);
void kc__sa_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj);

#endif

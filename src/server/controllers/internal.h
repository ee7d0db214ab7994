/*
 * internal.h — what the controllers' files share (controllers/ only). All run with mu held.
 */
#ifndef KC_SERVER_CONTROLLERS_INTERNAL_H
#define KC_SERVER_CONTROLLERS_INTERNAL_H

#include "server/controllers/controllers.h"

/* true when r is the core resource of that plural. */
bool kc__ctl_is_core(const kc__rsrc *r, const char *plural);

/* Garbage collector (gc.c). */
void kc__gc_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj);
int kc__gc_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, const char *propagation,
                    kc_obj **ret_obj, kc_error *err);

/* Namespace lifecycle (namespace.c). */
void kc__ns_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj);
/* A terminating namespace stays while objects are left in it. */
bool kc__ns_holds(kc_server *srv, const kc__rsrc *r, const kc__entry *cur);
int kc__ns_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, kc_obj **ret_obj, kc_error *err);

/* ServiceAccount "default" (namespace.c). */
void kc__sa_created(kc_server *srv, kc__rsrc *r, kc_obj *obj);
void kc__sa_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj);

#endif

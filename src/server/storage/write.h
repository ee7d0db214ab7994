/*
 * write.h — the storage room's write path, for the verbs (api/) and the optional controllers:
 * create, update, remove and delete one entry, all with srv->mu held unless stated, each
 * returning the stored object (a new reference) and a kc_error; and the create from JSON text
 * of seeding. The rules are storage's (write.c, delete.c, defaulting.c, create_fast.c); the
 * request-level options (dryRun, field manager, fieldValidation) are read by the verbs and come
 * in kc__write. Not installed.
 */
#ifndef KC_SERVER_STORAGE_WRITE_H
#define KC_SERVER_STORAGE_WRITE_H

#include "server/storage/storage.h"

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
    /* with status_sub: metadata.annotations come from the body too (the simulated Deployment
     * controller's revision annotation, as upstream's Deployment status strategy keeps them) */
    bool status_annotations;
    bool keep_status; /* seeding: keep .status on create */
    /* the pods/binding subresource's write (the simulated scheduler): spec.nodeName set on a pod
     * without one, which the pod update rules of validation/ forbid to an ordinary update */
    bool binding;
    /* managedFields "Update" entry of a non-apply write (#46): manager NULL = record nothing
     * (apply, which records its own "Apply" entry; seeding; no manager derivable). subresource
     * "status"/"scale" or NULL. */
    const char *manager;
    const char *subresource;
    /* a server-side apply: the body's metadata.managedFields are the apply's result (its own
     * "Apply" entry included) and are stored through the status subresource too */
    bool apply;
} kc__write;

/* Store doc as the new state of an existing entry (update path, mu held). Handles RV
 * preconditions, immutable fields, status, generation, finalizers, no-op. *ret_obj is the reply
 * object (new reference), *ret_deleted set when removing the last finalizer deleted it. */
int kc__write_update(kc_server *srv, const kc__write *w, kc__entry *cur, json_t *doc,
                     bool require_rv, kc_obj **ret_obj, kc_error *err);
/* Insert doc as a new object (create path, mu held). */
int kc__write_create(kc_server *srv, const kc__write *w, json_t *doc, kc_obj **ret_obj,
                     kc_error *err);

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

#endif

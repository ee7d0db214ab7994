/*
 * kcache/finalizer.h — finalizers on a kc_doc (being edited) and on a kc_obj (read-only): what
 * controller-runtime's controllerutil.ContainsFinalizer / AddFinalizer / RemoveFinalizer do on a
 * Go object, in C.
 *
 * A finalizer name is a qualified name ("example.com/cleanup", "kubernetes" — a DNS-1123 subdomain
 * prefix, '/', and a name of at most 63 characters), as the API server validates it; a name that
 * is not is KC_EINVAL with the kc_error message naming it. The helpers keep the other finalizers
 * and their order; add appends once, remove drops every copy.
 *
 * The server-side variants, which patch an object with an optimistic-lock precondition and retry
 * on conflict, are kc_cached_client_add_finalizer / kc_cached_client_remove_finalizer
 * (kcache/cached_client.h); the controller's finalizer registry (kube-runtime's finalizer()) is
 * kc_controller_add_finalizer (kcache/controller.h). docs/controller.md, "Idioms".
 */
#ifndef KCACHE_FINALIZER_H
#define KCACHE_FINALIZER_H

#include "doc.h"

KC_BEGIN_DECLS

/* true when doc's /metadata/finalizers array holds the string name. false when doc or name is NULL
 * or there is no such array. Both borrowed. Thread-safe for distinct documents. Never fails.
 * Since 0.1. */
KC_API bool kc_doc_finalizer_has(const kc_doc *doc, const char *name);

/* Append name (copied) to doc's /metadata/finalizers unless present (the array and metadata are
 * created when missing). *ret_changed (may be NULL) says whether doc changed. Errors: KC_EINVAL
 * (NULL doc or name, name not a qualified name, metadata or finalizers of another type: err names
 * it), KC_ENOMEM. Not thread-safe (the document's owner only). Since 0.1. No ownership transfer. */
KC_API int kc_doc_finalizer_add(kc_doc *doc, const char *name, bool *ret_changed, kc_error *err);

/* Remove every copy of name from doc's /metadata/finalizers (the array stays, possibly empty).
 * *ret_changed (may be NULL) says whether doc changed; absent is not an error. Errors: KC_EINVAL
 * (NULL doc or name, name not a qualified name, finalizers not an array), KC_ENOMEM. Not
 * thread-safe (the document's owner only). Since 0.1. No ownership transfer. */
KC_API int kc_doc_finalizer_remove(kc_doc *doc, const char *name, bool *ret_changed, kc_error *err);

/* true when obj's metadata.finalizers holds name. Reads obj in place (no copy of the object).
 * false for NULL arguments. Both borrowed. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_obj_has_finalizer(const kc_obj *obj, const char *name);

KC_END_DECLS

#endif

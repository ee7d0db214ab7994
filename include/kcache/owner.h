/*
 * kcache/owner.h — owner references (metadata.ownerReferences) of a document being built from
 * an owner kc_obj, and ownership tests on stored objects, with controller-runtime's
 * controllerutil semantics:
 *
 *   - an owner reference is written from the owner object's apiVersion, kind, name and uid (all
 *     four required); a controller reference adds controller=true and blockOwnerDeletion=true;
 *   - a reference "to the same owner" is one with the same API group (apiVersion without its
 *     version), kind and name (controllerutil's referSameObject): it is updated in place — uid
 *     and version refreshed — instead of being added twice;
 *   - a namespaced owner must be in the document's namespace (/metadata/namespace), and a
 *     cluster-scoped document (no namespace) cannot have a namespaced owner (KC_EINVAL); a
 *     cluster-scoped owner may own anything;
 *   - a document controlled by another owner cannot get a second controller: KC_ECONFLICT, with
 *     err->reason "AlreadyOwned" (controllerutil.AlreadyOwnedError).
 *
 * Ownership tests compare uids (metav1.IsControlledBy), so an owner deleted and re-created
 * under the same name does not own the old object's dependents.
 */
#ifndef KCACHE_OWNER_H
#define KCACHE_OWNER_H

#include "doc.h"

KC_BEGIN_DECLS

/* Make owner the controller of doc (controllerutil.SetControllerReference): add or update, in
 * /metadata/ownerReferences, {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion:
 * true}. owner is borrowed for the call; its strings are copied into doc. Errors: KC_EINVAL (NULL
 * doc or owner; owner without uid, name, kind or apiVersion — err names which; a namespaced owner
 * of a cluster-scoped document or one in another namespace; /metadata/ownerReferences not an
 * array), KC_ECONFLICT (doc already has another controller: err->reason "AlreadyOwned", the
 * message names its kind, name and uid), KC_ENOMEM. Not thread-safe (the document's owner only).
 * Since 0.1. */
KC_API int kc_doc_set_controller_reference(kc_doc *doc, const kc_obj *owner, kc_error *err);

/* Add owner to doc's owner references, or update the reference to the same owner in place
 * (controllerutil.SetOwnerReference: no controller nor blockOwnerDeletion flag is written; an
 * updated reference keeps neither). owner is borrowed for the call; its strings are copied into
 * doc. Errors: KC_EINVAL (as kc_doc_set_controller_reference), KC_ENOMEM. Not thread-safe (the
 * document's owner only). Since 0.1. */
KC_API int kc_doc_set_owner_reference(kc_doc *doc, const kc_obj *owner, kc_error *err);

/* Remove the reference to owner (same group, kind and name) from doc's owner references
 * (controllerutil.RemoveOwnerReference). owner is borrowed for the call. Errors: KC_EINVAL (NULL
 * doc or owner, owner without name, kind or apiVersion), KC_ENOTFOUND (no such reference),
 * KC_ENOMEM. Not thread-safe (the document's owner only). Since 0.1. No ownership transfer. */
KC_API int kc_doc_remove_owner_reference(kc_doc *doc, const kc_obj *owner, kc_error *err);

/* true when one of obj's owner references has owner's uid (owner's uid not ""). Both borrowed.
 * false for NULL arguments. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_obj_is_owned_by(const kc_obj *obj, const kc_obj *owner);

/* true when one of doc's owner references has owner's uid (owner's uid not ""). Both borrowed.
 * false for NULL arguments. No ownership transfer. Thread-safe for distinct documents. Never
 * fails. Since 0.1. */
KC_API bool kc_doc_is_owned_by(const kc_doc *doc, const kc_obj *owner);

/* true when obj's controller reference has owner's uid (metav1.IsControlledBy; owner's uid not
 * ""). Both borrowed. false for NULL arguments. No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API bool kc_obj_is_controlled_by(const kc_obj *obj, const kc_obj *owner);

KC_END_DECLS

#endif

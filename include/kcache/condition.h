/*
 * kcache/condition.h — status conditions (metav1.Condition, status.conditions[]) with
 * apimachinery's meta.SetStatusCondition rules:
 *
 *   - a condition is identified by its type; a new type is appended;
 *   - lastTransitionTime changes only when the status changes: to the caller's value when given,
 *     else to now (RFC 3339, seconds, UTC: "2026-01-02T03:04:05Z"); a new condition without one
 *     gets now;
 *   - reason, message and observedGeneration are updated in place;
 *   - the set reports whether anything changed, so a create-or-update can skip an unchanged write.
 *
 * The fields are checked as the API server validates a metav1.Condition: type required, status
 * one of "True", "False", "Unknown", reason required (a letter, then letters, digits, '_', ',' or
 * ':', ending with a letter, digit or '_'; at most 1024 bytes), message at most 32768 bytes,
 * observedGeneration not negative.
 */
#ifndef KCACHE_CONDITION_H
#define KCACHE_CONDITION_H

#include "doc.h"

KC_BEGIN_DECLS

/* One condition. Passed in: strings borrowed for the call (copied into the document); NULL
 * message = "". Filled by kc_doc_condition_find: strings borrowed from the document. Grows at the
 * end (docs/abi.md): zero-initialise it. */
typedef struct kc_condition {
    const char *type;   /* e.g. "Ready" */
    const char *status; /* "True", "False" or "Unknown" */
    const char *reason; /* CamelCase, e.g. "SecretSynced" */
    const char *message;
    int64_t observed_generation; /* metadata.generation the condition was computed from; 0 none */
    const char *last_transition_time; /* RFC 3339; NULL or "" = now when the status changes */
} kc_condition;

/* Set condition *c in doc's /status/conditions (meta.SetStatusCondition; see the top of this
 * file), creating /status and the array when absent. *ret_changed (may be NULL) gets whether the
 * document changed. c is borrowed for the call (its strings copied). Errors: KC_EINVAL (NULL doc
 * or c; type missing; status not True/False/Unknown; reason missing or malformed; message too
 * long; negative observed_generation; /status/conditions not an array), KC_EUNSUPPORTED (c longer
 * than this library's with unknown fields set), KC_ENOMEM. Not thread-safe (the document's owner
 * only). Since 0.1. */
KC_API int(kc_doc_condition_set)(kc_doc *doc, const kc_condition *c, size_t c_size,
                                 bool *ret_changed, kc_error *err);
#define kc_doc_condition_set(doc, c, ret_changed, err)                                             \
    (kc_doc_condition_set)((doc), (c), sizeof(kc_condition), (ret_changed), (err))

/* The condition of the given type into *ret (its fields borrowed from doc, NUL-terminated, valid
 * until doc is next changed or freed; "" for an absent string, 0 for an absent
 * observedGeneration). type borrowed for the call. Errors: KC_EINVAL (NULL argument), KC_ENOTFOUND
 * (no condition of that type). Thread-safe for distinct documents. Since 0.1. */
KC_API int(kc_doc_condition_find)(const kc_doc *doc, const char *type, kc_condition *ret,
                                  size_t ret_size, kc_error *err);
#define kc_doc_condition_find(doc, type, ret, err)                                                 \
    (kc_doc_condition_find)((doc), (type), (ret), sizeof(kc_condition), (err))

/* Remove the condition of the given type (meta.RemoveStatusCondition); *ret_removed (may be NULL)
 * gets whether one was there (absent is not an error). type borrowed for the call. Errors:
 * KC_EINVAL (NULL doc or type), KC_ENOMEM. Not thread-safe (the document's owner only). Since 0.1.
 * No ownership transfer. */
KC_API int kc_doc_condition_remove(kc_doc *doc, const char *type, bool *ret_removed, kc_error *err);

/* true when doc has a condition of the given type with status "True" (meta.IsStatusConditionTrue).
 * false for NULL arguments. No ownership transfer. Thread-safe for distinct documents. Never
 * fails. Since 0.1. */
KC_API bool kc_doc_condition_is_true(const kc_doc *doc, const char *type);

/* The status of obj's condition of the given type, read from the stored text without copying it:
 * *ret is a static string, "True", "False" or "Unknown" (borrowed, never freed). type borrowed for
 * the call. Errors: KC_EINVAL (NULL argument), KC_ENOTFOUND (no condition of that type),
 * KC_EPARSE (a status other than the three, or /status/conditions not an array of objects),
 * KC_ENOMEM, KC_EUNSUPPORTED (a CPU the JSON parser does not support). Thread-safe. Since 0.1. */
KC_API int kc_obj_condition_status(const kc_obj *obj, const char *type, const char **ret,
                                   kc_error *err);

/* true when obj has a condition of the given type with status "True". false for NULL arguments
 * and any error. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_obj_condition_is_true(const kc_obj *obj, const char *type);

KC_END_DECLS

#endif

/*
 * patch.h — patch engines of the embedded server. Pure functions on jansson
 * documents: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch for
 * built-in types (keyed lists: containers, initContainers, ephemeralContainers by name; ports by
 * containerPort (+protocol); env by name; volumes by name; volumeMounts by mountPath; others
 * fall back to merge-patch semantics; $patch: replace/delete directives), and server-side apply
 * (create-or-merge plus a managedFields entry with operation "Apply").
 * Thread-safe: no shared state.
 */
#ifndef KC_SERVER_PATCH_H
#define KC_SERVER_PATCH_H

#include <jansson.h>

#include "kcache/error.h"

typedef enum kc__patch_type {
    KC__PATCH_MERGE = 1, /* application/merge-patch+json */
    KC__PATCH_JSON,      /* application/json-patch+json */
    KC__PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
    KC__PATCH_APPLY,     /* application/apply-patch+yaml (YAML or JSON body) */
} kc__patch_type;

/* Map a Content-Type (parameters ignored) to a patch type. Errors: KC_EMEDIATYPE (415), err's
 * message lists the accepted types (#41). */
int kc__patch_type_from_content_type(const char *content_type, kc__patch_type *ret, kc_error *err);

/*
 * Apply a merge, JSON or strategic patch to current (not modified) giving *ret_new (new reference).
 * kind: the object's kind (selects strategic merge keys); builtin: false for custom resources
 * (strategic → KC_EMEDIATYPE 415, #40). Errors: KC_EBADREQUEST (malformed patch body, #39),
 * KC_EUNPROCESSABLE (a failing JSON-patch test op or a bad path, 422, #39).
 */
int kc__patch_apply(kc__patch_type type, const json_t *current, const char *body, size_t len,
                    const char *kind, bool builtin, json_t **ret_new, kc_error *err);

/*
 * Server-side apply. current may be NULL (object missing → create, #45). body is YAML or JSON.
 * field_manager required (else KC_EUNPROCESSABLE 422, #44). Merges the applied configuration into
 * current, and records/updates the managedFields entry {manager, operation:"Apply", apiVersion,
 * time: now_rfc3339, fieldsType:"FieldsV1", fieldsV1:<fields set by the body>}. When another
 * manager owns a field the body changes and force is false → KC_ECONFLICT with a cause of reason
 * "FieldManagerConflict" (#46). Errors otherwise as kc__patch_apply.
 */
int kc__apply(const json_t *current, const char *body, size_t len, const char *field_manager,
              bool force, const char *now_rfc3339, json_t **ret_new, kc_error *err);

/* The two halves of kc__apply, so a caller can check the applied configuration in between
 * (fieldValidation): decode and check an apply body (YAML or JSON; an object with apiVersion and
 * kind, no managedFields; KC_EBADREQUEST otherwise) into *ret (new reference); then apply it
 * (applied borrowed, not modified). */
int kc__apply_decode(const char *body, size_t len, json_t **ret, kc_error *err);
int kc__apply_doc(const json_t *current, const json_t *applied, const char *field_manager,
                  bool force, const char *now_rfc3339, json_t **ret_new, kc_error *err);
/* The same through a subresource ("status"; NULL or "" = the main resource): the entry records
 * it, and manager's entry of that subresource (not of the main resource) is the one replaced.
 * The caller scopes applied to what the subresource writes (kc__apply_scope). */
int kc__apply_doc_sub(const json_t *current, const json_t *applied, const char *field_manager,
                      const char *subresource, bool force, const char *now_rfc3339,
                      json_t **ret_new, kc_error *err);

/*
 * Record an ordinary write (create, update, non-apply patch) in obj's managedFields, in place, so
 * server-side apply can detect conflicts with it (#46). Call it on the object about to be stored;
 * old is the stored object before the write (NULL for a create). The leaf fields whose value the
 * write changed become owned by manager's {operation:"Update"} entry (created or extended, its
 * time set to now_rfc3339, NULL = now) and leave every other entry's set; fields that disappeared
 * leave every set; emptied entries are dropped. When obj carries no metadata.managedFields, old's
 * are carried over. obj and old are borrowed (obj modified). Errors: KC_EINVAL (obj not an object
 * or no manager), KC_ENOMEM. Thread-safe: no shared state.
 */
int kc__managed_fields_update(json_t *obj, const json_t *old, const char *manager,
                              const char *now_rfc3339, kc_error *err);

/* The same for a write through a subresource: subresource ("status", "scale"; NULL or "" = the
 * main resource) is recorded in the entry and selects which of manager's Update entries the
 * write extends. */
int kc__managed_fields_update_sub(json_t *obj, const json_t *old, const char *manager,
                                  const char *subresource, const char *now_rfc3339, kc_error *err);

#endif

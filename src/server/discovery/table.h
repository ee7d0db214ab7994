/*
 * table.h — meta.k8s.io/v1 Table and PartialObjectMetadata renderings, so kubectl prints real
 * columns (#23, #94, #95) and metadata-only informers work.
 * Thread-safe: no shared state.
 */
#ifndef KC_SERVER_TABLE_H
#define KC_SERVER_TABLE_H

#include <jansson.h>

#include "kcache/obj.h"
#include "server/storage/storage.h"

/* A Table for items of one resource (plural name, e.g. "pods", "deployments"; group may be "").
 * Columns follow kubectl's defaults for known resources (pods: Name, Ready, Status, Restarts,
 * Age; deployments: Name, Ready, Up-to-date, Available, Age; …; others: Name, Created At).
 * with_columns=false omits columnDefinitions (watch events after the first, #95). rv/cont may be
 * NULL. Returns a new reference (NULL on ENOMEM). Items are borrowed. */
json_t *kc__table_build(const char *group, const char *resource, kc_obj *const *items, size_t n,
                        const char *rv, const char *cont, bool with_columns);

/* PartialObjectMetadata of obj: {"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
 * "metadata":{…}} as a new malloc'd compact JSON string (*ret_len gets its length); NULL on
 * ENOMEM. */
char *kc__partial_metadata_json(const kc_obj *obj, size_t *ret_len);

/* kc__table_build with an explicit "now" (seconds since the epoch) for the Age cells, so tests
 * are deterministic. Same ownership and errors. */
json_t *kc__table_build_at(const char *group, const char *resource, kc_obj *const *items, size_t n,
                           const char *rv, const char *cont, bool with_columns, int64_t now);

/* Upstream's duration.HumanDuration (kubectl's AGE): "45s", "5m3s", "17m", "3h12m", "2d5h",
 * "400d", "2y10d". out gets a NUL-terminated string. */
void kc__human_duration(int64_t seconds, char out[32]);
/* Seconds since the epoch of an RFC 3339 timestamp (fraction and offset allowed); -1 when it
 * does not parse or s is NULL (table_printers.c). */
int64_t kc__rfc3339_seconds(const char *s);

/* The Table of items of r (table_crd.c): a custom resource's CRD printer columns (Name, Age
 * without), a built-in's kubectl columns (kc__table_build). New reference, NULL on ENOMEM; items
 * borrowed. Runs with or without mu. */
json_t *kc__table_for(kc__rsrc *r, kc_obj *const *items, size_t n, const char *rv, const char *cont,
                      bool with_columns);

/* What each Table row's "object" holds (?includeObject=, meta.k8s.io/v1 IncludeObjectPolicy):
 * Metadata (the default) → PartialObjectMetadata, None → null, Object → the whole object. */
enum kc__table_obj { KC__TOBJ_METADATA = 0, KC__TOBJ_NONE, KC__TOBJ_OBJECT };

/* Parses an includeObject value ("" / NULL → Metadata). KC_EINVAL when unrecognized. */
int kc__table_obj_parse(const char *s, enum kc__table_obj *out);

/* Replaces each row's "object" of t (a Table of items, in order) as mode asks; Metadata leaves
 * t as built. t and items borrowed. KC_ENOMEM (t then partly rewritten), else 0. */
int kc__table_set_objects(json_t *t, kc_obj *const *items, size_t n, enum kc__table_obj mode);

#endif

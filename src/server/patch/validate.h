/*
 * validate.h — names, generated names, uids and timestamps for the embedded server (the storage
 * rules and server-side apply use them). Thread-safe.
 */
#ifndef KC_SERVER_VALIDATE_H
#define KC_SERVER_VALIDATE_H

#include <stdint.h>

#include "kcache/error.h"

typedef enum kc__name_rule {
    KC__NAME_DNS1123_SUBDOMAIN = 1, /* most resources: ≤253, [a-z0-9]([-a-z0-9.]*[a-z0-9])? */
    KC__NAME_DNS1123_LABEL,         /* namespaces, services: ≤63, [a-z0-9]([-a-z0-9]*[a-z0-9])? */
    KC__NAME_PATH_SEGMENT,          /* e.g. some CRs: not "." or "..", no '/' or '%' */
    KC__NAME_DNS1035_LABEL,         /* services: ≤63, [a-z]([-a-z0-9]*[a-z0-9])? */
} kc__name_rule;

/* Validate a name. Errors: KC_EUNPROCESSABLE with err->kind = kind (copied), one cause
 * {reason:"FieldValueInvalid", field:"metadata.name", message} (#14). */
int kc__validate_name(const char *name, kc__name_rule rule, const char *kind, kc_error *err);

/* The object's name and generateName (may be NULL) as apimachinery's ValidateObjectMeta: the
 * name as kc__validate_name; a generateName is checked as a prefix (a trailing '-' is masked) on
 * field metadata.generateName; both failing: one failure, message "… is invalid: [generateName's,
 * name's]", two causes. Errors: KC_EUNPROCESSABLE, KC_EINVAL (unknown rule), KC_ENOMEM. */
int kc__validate_object_name(const char *name, const char *generate_name, kc__name_rule rule,
                             const char *kind, kc_error *err);

/* Write 5 random characters from "bcdfghjklmnpqrstvwxz2456789" plus NUL into out (#11).
 * rng_state: caller-owned 64-bit state (advanced). */
void kc__generate_name_suffix(uint64_t *rng_state, char out[6]);

/* RFC 4122 version-4 UUID, lower-case, plus NUL. */
void kc__uuid_v4(uint64_t *rng_state, char out[37]);

/* Current UTC time as RFC 3339 with seconds and 'Z' (#9), e.g. "2026-11-29T15:04:05Z". */
void kc__now_rfc3339(char out[32]);

/* Move the clock of kc__now_rfc3339 forward by seconds, for every server of the process: a test
 * hook, so a test can show what a later second changes without sleeping. Thread-safe. */
void kc__clock_advance(int64_t seconds);

#endif

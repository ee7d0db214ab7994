/*
 * validation_internal.h — what the validation room's files share: the field error list (upstream's
 * field.ErrorList: one error is a type, a field path and a body "<Type word>[: <value>][:
 * <detail>]"), the Go renderings of bad values, the syntax checks of names, labels and quantities,
 * and the per-kind validators. Not installed.
 */
#ifndef KC_SERVER_VALIDATION_INTERNAL_H
#define KC_SERVER_VALIDATION_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "server/validation/validation.h"

/* A field path buffer: "spec.template.spec.containers[0].name" (longer paths are cut). */
#define KC__VPATH 512

typedef struct kc__verr {
    const char *type; /* "FieldValueInvalid", … (static) */
    char *field;
    char *body; /* ErrorBody(): "Invalid value: \"x\": detail" */
} kc__verr;

typedef struct kc__vlist {
    kc__verr *e;
    size_t n, cap;
    bool oom;
} kc__vlist;

/* ---- the list (errlist.c) ------------------------------------------------------------------ */

/* Append one error: value is the rendered bad value (NULL: the type omits it). */
void kc__v_add(kc__vlist *l, const char *type, const char *field, const char *value,
               const char *detail);
void kc__v_required(kc__vlist *l, const char *field, const char *detail);
void kc__v_forbidden(kc__vlist *l, const char *field, const char *detail);
/* "Too long: may not be more than <max> bytes" */
void kc__v_toolong(kc__vlist *l, const char *field, long max);
/* Invalid with a string value (Go's %q), an integer, or a value rendered by the caller. */
void kc__v_invalid_s(kc__vlist *l, const char *field, const char *value, const char *detail);
void kc__v_invalid_i(kc__vlist *l, const char *field, int64_t value, const char *detail);
void kc__v_invalid_v(kc__vlist *l, const char *field, const char *value, const char *detail);
void kc__v_duplicate_s(kc__vlist *l, const char *field, const char *value);
void kc__v_notfound_s(kc__vlist *l, const char *field, const char *value);
/* Unsupported value (a string) with the supported values, NULL-terminated, quoted in order. */
void kc__v_unsupported_s(kc__vlist *l, const char *field, const char *value,
                         const char *const *supported);
/* The list as the API server's 422 into err (see validation.h); frees the list. */
int kc__v_finish(kc__vlist *l, const char *group, const char *kind, const char *name,
                 kc_error *err);
void kc__v_free(kc__vlist *l);

/* Go renderings (errlist.c), appended to b: %q of a string; a map[string]string of a JSON
 * object of strings (%#v: keys sorted; "map[string]string(nil)" for NULL); a *LabelSelector
 * through its String() (gogo protobuf's form). */
void kc__v_go_quote(kc__buf *b, const char *s);
void kc__v_go_strmap(kc__buf *b, const json_t *map);
void kc__v_go_selector(kc__buf *b, const json_t *sel);

/* ---- names and labels (names.c) ------------------------------------------------------------ */

bool kc__v_is_dns1123_label(const char *s, size_t n);
bool kc__v_is_dns1123_subdomain(const char *s);
/* IsDNS1123Label / IsDNS1123Subdomain / IsQualifiedName / IsValidLabelValue / IsValidPortName,
 * each message an Invalid error on field with value (the string checked unless noted). */
void kc__v_dns1123_label(kc__vlist *l, const char *field, const char *value);
void kc__v_dns1123_subdomain(kc__vlist *l, const char *field, const char *value);
/* checks `check`, reports `value` (annotations check the key lower-cased) */
void kc__v_qualified_name(kc__vlist *l, const char *field, const char *value, const char *check);
void kc__v_label_value(kc__vlist *l, const char *field, const char *value);
void kc__v_port_name(kc__vlist *l, const char *field, const char *value);
/* ValidateLabels (labels map, non-strings ignored: the decoder rejected them) */
void kc__v_labels(kc__vlist *l, const char *field, const json_t *labels);

/* ---- object metadata and selectors (meta.c) ------------------------------------------------- */

/* ValidateObjectMeta's rules this room owns (name, generateName and namespace are the storage
 * room's): labels, annotations (keys, 256 KiB in total), finalizers, under base ("metadata"). */
void kc__v_object_meta(kc__vlist *l, const char *base, const json_t *meta);
/* Labels and annotations alone (a pod template's: "spec.template.labels"). */
void kc__v_labels_annotations(kc__vlist *l, const char *base, const json_t *meta);
void kc__v_annotations(kc__vlist *l, const char *field, const json_t *ann);
/* ValidateLabelSelector of sel (NULL allowed) at field. */
void kc__v_label_selector(kc__vlist *l, const char *field, const json_t *sel);

/* ---- pods (pod.c, pod_update.c) ------------------------------------------------------------- */

/* ValidatePodSpec's rules here at field ("spec", "spec.template.spec"). */
void kc__v_pod_spec(kc__vlist *l, const char *field, const json_t *spec);
/* ValidatePodTemplateSpec: template labels and annotations, then the spec. */
void kc__v_pod_template(kc__vlist *l, const char *field, const json_t *tmpl);
/* ValidatePodUpdate's spec rule (only images, activeDeadlineSeconds, tolerations additions,
 * terminationGracePeriodSeconds may change). */
void kc__v_pod_update(kc__vlist *l, const json_t *spec, const json_t *old_spec);

/* ---- quantities (quantity.c) ---------------------------------------------------------------- */

/* A parsed resource.Quantity: the value in nano-units and the format it was written in. */
typedef struct kc__vquantity {
    __int128 nano;
    int format; /* 0 DecimalSI, 1 BinarySI, 2 DecimalExponent */
} kc__vquantity;

/* Parse a quantity (string, or a JSON number); false when it is not one. */
bool kc__v_quantity_parse(const json_t *v, kc__vquantity *q);
/* Its canonical String() into out. */
void kc__v_quantity_string(const kc__vquantity *q, char *out, size_t cap);
/* ValidateContainerResourceRequirements' quantity rules at field ("….resources"). */
void kc__v_resources(kc__vlist *l, const char *field, const json_t *res);

/* ---- workloads (workloads.c) ---------------------------------------------------------------- */

void kc__v_workload(kc__vlist *l, const char *group, const char *kind, const json_t *doc,
                    const json_t *old);

#endif

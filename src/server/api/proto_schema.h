/*
 * proto_schema.h — the protobuf field table of the built-in kinds (proto_schema_data.c, generated
 * by tools/gen-proto-schema.py from upstream generated.proto files and Go struct tags) and the
 * table-driven codec over it: proto_decode.c (wire → JSON), proto_encode.c (JSON → wire),
 * proto.c (the "k8s\0" + runtime.Unknown envelope, lists, watch frames). Not installed.
 */
#ifndef KC_SERVER_API_PROTO_SCHEMA_H
#define KC_SERVER_API_PROTO_SCHEMA_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/* Field kinds: proto scalar types, a message (msg = its index) or a map (msg = its entry). */
enum kc__pbk {
    KC__PBK_STRING = 1,
    KC__PBK_BYTES,
    KC__PBK_BOOL,
    KC__PBK_INT32,
    KC__PBK_INT64,
    KC__PBK_UINT32,
    KC__PBK_UINT64,
    KC__PBK_DOUBLE,
    KC__PBK_FLOAT,
    KC__PBK_MSG,
    KC__PBK_MAP
};
/* Field flags from the Go struct tag: repeated, `omitempty`, `,inline`, Go pointer (a zero
 * value that is present on the wire is kept). */
enum { KC__PBF_REP = 1, KC__PBF_OMIT = 2, KC__PBF_INLINE = 4, KC__PBF_PTR = 8 };
/* Messages whose JSON is not an object of their fields (Go MarshalJSON methods). */
enum kc__pbs {
    KC__PBS_NONE = 0,
    KC__PBS_TIME,        /* metav1.Time {1 seconds, 2 nanos} ↔ RFC 3339 seconds */
    KC__PBS_MICROTIME,   /* metav1.MicroTime ↔ RFC 3339 with microseconds */
    KC__PBS_DURATION,    /* metav1.Duration {1 nanoseconds} ↔ Go duration string */
    KC__PBS_QUANTITY,    /* resource.Quantity {1 string} ↔ string */
    KC__PBS_INTSTR,      /* intstr.IntOrString {1 type, 2 intVal, 3 strVal} ↔ number | string */
    KC__PBS_RAW,         /* RawExtension, FieldsV1, apiextensions JSON {1 raw} ↔ embedded JSON */
    KC__PBS_LISTWRAP,    /* +protobuf.nullable list types {1 repeated items} ↔ array */
    KC__PBS_OR_ARRAY,    /* JSONSchemaPropsOrArray {1 schema, 2 schemas} ↔ object | array */
    KC__PBS_OR_BOOL,     /* JSONSchemaPropsOrBool {1 allows, 2 schema} ↔ bool | object */
    KC__PBS_OR_STRARRAY, /* JSONSchemaPropsOrStringArray {1 schema, 2 property} */
    KC__PBS_MAPENTRY     /* {1 key string, 2 value} */
};

typedef struct kc__pbfield {
    const char *json; /* JSON name ("" for inline fields) */
    uint16_t num;
    uint8_t kind, flags;
    int16_t msg; /* message index (MSG), entry index (MAP), -1 */
} kc__pbfield;

typedef struct kc__pbmsg {
    const char *name;
    uint16_t first, n; /* fields kc__pb_fields[first .. first+n), ascending numbers */
    uint8_t special;
} kc__pbmsg;

typedef struct kc__pbtype {
    const char *api_version, *kind;
    uint16_t msg;
} kc__pbtype;

extern const kc__pbmsg kc__pb_msgs[];
extern const size_t kc__pb_nmsgs;
extern const kc__pbfield kc__pb_fields[];
extern const size_t kc__pb_nfields;
extern const kc__pbtype kc__pb_types[]; /* sorted by (api_version, kind) */
extern const size_t kc__pb_ntypes;
extern const int kc__pb_msg_Unknown, kc__pb_msg_WatchEvent, kc__pb_msg_Status;

/* The message of apiVersion + kind, or -1 (proto.c). */
int kc__pb_lookup(const char *api_version, const char *kind);
/* The field numbered num of message mi, or NULL. */
const kc__pbfield *kc__pb_field(int mi, uint32_t num);

#define KC__PB_MAX_DEPTH 64 /* message nesting (CRD schemas nest deeply) */

/* Decode the message body p[0..len) of message mi into a new JSON value (proto_decode.c).
 * base: start of the whole body (byte offsets in errors); path: where it is ("Pod", …); depth:
 * the nesting already used. NULL with err (≤ errcap bytes: "<field path> at byte <offset>:
 * <what>") when malformed; a JSON null for a value Go's JSON leaves out (the zero Time). */
json_t *kc__pb_decode(const uint8_t *base, const uint8_t *p, size_t len, int mi, const char *path,
                      char *err, size_t errcap, int depth);
/* "k8s\0" + runtime.Unknown{typeMeta, raw} of a built-in kind → its JSON document with
 * apiVersion and kind (proto.c). NULL with err as above; err starts with "415 " when the kind
 * has no protobuf message here. */
json_t *kc__pb_decode_envelope(const uint8_t *p, size_t len, char *err, size_t errcap, int depth);

/* Append the wire form of JSON value v as message mi to out (proto_encode.c). Values of the
 * wrong JSON type and unknown keys are skipped (as a real server drops unknown fields).
 * 0 or KC_ENOMEM / KC_EINVAL (nesting deeper than KC__PB_MAX_DEPTH). */
int kc__pb_encode(kc__buf *out, const json_t *v, int mi);

/* Wire helpers (proto_encode.c). */
int kc__pb_put_varint(kc__buf *out, uint64_t v);
int kc__pb_put_bytes(kc__buf *out, uint32_t num, const void *p, size_t n);

#endif

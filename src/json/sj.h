/*
 * json/sj.h — the C face of the one C++ file (sj.cpp), which wraps simdjson On-Demand.
 *
 * sj.cpp does only what needs simdjson: make text compact and padded, iterate it, and report what
 * it found as plain C structs of (pointer, length) spans. Every decision about object layout,
 * transforms and errors is made in C (obj.c, list.c, watch.c, status.c, pointer.c).
 *
 * Spans handed to callbacks point either into the compact text being decoded or into the parser's
 * string buffer: both are valid only during the callback. A context (kc__sj_ctx) owns one parser
 * and one padded scratch buffer; it is used by one thread at a time. kc__sj_thread_ctx() gives the
 * calling thread its own context (kc_obj_parse, pointer access and Status parsing use it).
 */
#ifndef KC_JSON_SJ_H
#define KC_JSON_SJ_H

#include "kcache/error.h"

KC_BEGIN_DECLS

/* Bytes that must be readable after any text handed to simdjson (SIMDJSON_PADDING). */
#define KC__SJ_PADDING 64

/* Deepest nesting accepted in a stored object (simdjson's DOM default is 1024). */
#define KC__SJ_MAX_DEPTH 512

typedef struct kc__sj_ctx kc__sj_ctx;

/* A span of bytes; p may be NULL when n == 0. */
typedef struct kc__sj_str {
    const char *p;
    size_t n;
} kc__sj_str;

typedef struct kc__sj_label {
    kc__sj_str key; /* unescaped */
    kc__sj_str value;
} kc__sj_label;

/* What one pass over a Kubernetes object found. Offsets are relative to text. */
typedef struct kc__sj_meta {
    const char *text; /* the object's compact JSON ('{' … '}'); KC__SJ_PADDING readable beyond */
    size_t len;
    int64_t off; /* offset of text in the document walked (for errors about the whole object) */
    kc__sj_str api_version, kind, ns, name, uid, rv, controller_uid; /* unescaped; n=0 absent */
    kc__sj_str ctrl_api_version, ctrl_kind, ctrl_name; /* the controller owner's; n=0 absent */
    bool has_controller; /* an ownerReferences[] entry has controller=true */
    bool has_api_version, has_kind;
    bool deleting;           /* deletionTimestamp present and not null */
    bool initial_events_end; /* annotation k8s.io/initial-events-end == "true" */
    bool shard_out; /* the context's shard filter rejected the uid/namespace: the rest of the
                       metadata was skipped, not read (the object must be dropped) */
    int64_t generation;
    size_t n_finalizers, n_owners;
    const kc__sj_label *labels;
    size_t n_labels;
    /* Raw spans ("key":value, no comma) of top-level kind/apiVersion/metadata and of
     * metadata.managedFields; len 0 when absent. */
    size_t kind_off, kind_len, apiv_off, apiv_len, meta_off, meta_len, mf_off, mf_len;
} kc__sj_meta;

/* Error out of sj.cpp: code is a KC_E… code; offset relative to the input, -1 when unknown. */
typedef struct kc__sj_err {
    int code;
    int64_t offset;
    char msg[200];
} kc__sj_err;

/* Called with each decoded object; return 0 or a negative code (may fill e) to stop. */
typedef int (*kc__sj_obj_fn)(void *ud, const kc__sj_meta *m, kc__sj_err *e);

/* List-level metadata, delivered once after a successful pass. raw_* are the JSON tokens
 * (with quotes) of the list's apiVersion and kind, for injection into items. */
typedef struct kc__sj_list_info {
    kc__sj_str api_version, kind, raw_api_version, raw_kind, rv, cont;
    bool has_api_version, has_kind, has_rv, has_cont, has_remaining;
    int64_t remaining;
    kc__sj_str shard_selector; /* metadata.shardInfo.selector */
    bool has_shard_info;       /* metadata.shardInfo present (not null) */
    const char *text_base;     /* start of the text item spans point into … */
    int64_t base_off;          /* … at this offset of the body (a window of it; else 0) */
    size_t n_items; /* items[] elements delivered so far: the index of the one being delivered
                       (errors about an item start "items[i]: ") */
} kc__sj_list_info;

/* Item callback for lists: info carries the list's kind/apiVersion (known before items are
 * delivered, even when they follow items in the text). */
typedef int (*kc__sj_item_fn)(void *ud, const kc__sj_list_info *info, const kc__sj_meta *m,
                              kc__sj_err *e);
typedef int (*kc__sj_list_fn)(void *ud, const kc__sj_list_info *info, kc__sj_err *e);

/* One watch event. obj is NULL for ERROR; then status_json is the raw Status object (padded). */
typedef struct kc__sj_event {
    kc__sj_str type;
    const kc__sj_meta *obj;
    kc__sj_str status_json;
    int64_t type_off, obj_off; /* offsets of the type and object values in the line */
} kc__sj_event;
typedef int (*kc__sj_event_fn)(void *ud, const kc__sj_event *ev, kc__sj_err *e);

typedef struct kc__sj_cause {
    kc__sj_str reason, message, field;
} kc__sj_cause;

/* A metav1.Status, as found. */
typedef struct kc__sj_status_info {
    kc__sj_str kind, status, message, reason, d_name, d_group, d_kind, d_uid;
    bool has_kind, has_status, has_code, has_retry;
    int64_t code, retry_after;
    const kc__sj_cause *causes;
    size_t n_causes;
} kc__sj_status_info;
typedef int (*kc__sj_status_fn)(void *ud, const kc__sj_status_info *st, kc__sj_err *e);

/* What a JSON Pointer lookup wants. */
enum kc__sj_want { KC__SJ_WANT_STRING, KC__SJ_WANT_INT, KC__SJ_WANT_BOOL, KC__SJ_WANT_RAW };
typedef struct kc__sj_ptr_out {
    kc__sj_str str; /* STRING (unescaped, parser memory) or RAW (span of the text) */
    int64_t i;
    bool b;
} kc__sj_ptr_out;

/* New context / free (NULL ok). new returns NULL on out of memory. */
kc__sj_ctx *kc__sj_ctx_new(void);
void kc__sj_ctx_free(kc__sj_ctx *ctx);
/* The calling thread's own context (created on first use, freed at thread exit); NULL on OOM. */
kc__sj_ctx *kc__sj_thread_ctx(void);
/* A second per-thread context, for kc_list_decode (whose item callbacks may use the first). */
kc__sj_ctx *kc__sj_thread_list_ctx(void);
/* The shard filter walks on ctx use from now on (NULL: none). While set, the walker stops reading
 * an object's metadata once its uid (UID field) or namespace (NAMESPACE field) is out of range,
 * skips the rest of it and sets kc__sj_meta.shard_out. Watch lines apply it only to objects of
 * ADDED/MODIFIED/DELETED events whose "type" precedes "object". sel is borrowed. */
struct kc_shard_selector;
void kc__sj_ctx_set_shard(kc__sj_ctx *ctx, const struct kc_shard_selector *sel);
/* Release the context's buffers when they hold more than keep bytes. */
void kc__sj_ctx_trim(kc__sj_ctx *ctx, size_t keep);

/* Copy n bytes; true when none of them is <= 0x20 (one pass, vectorised). opens (may be NULL):
 * incremented by the number of '{' and '[' bytes copied, an upper bound of the nesting depth. */
bool kc__sj_copy_compact(char *dst, const char *src, size_t n, size_t *opens);

/* Full validation of text (padded) with simdjson's DOM parser, nesting limited to max_depth:
 * 0, or KC_EPARSE ("nested deeper than …" or the grammar error). Uses ctx's own DOM parser, so
 * it may run while an On-Demand document of the same ctx is being iterated. */
int kc__sj_depth_check(kc__sj_ctx *ctx, const char *text, size_t len, size_t max_depth,
                       kc__sj_err *e);

/* Index of the first byte <= 0x20 (space, newline, CR, tab, control) in p[0..n), or n. */
size_t kc__sj_find_ws(const char *p, size_t n);

/* Minifies in[0..n) into out (n + 8 bytes writable): whitespace outside strings removed, as
 * simdjson::minify does, but whitespace that separates two values ("1 0") is refused (sj_minify).
 * 0 and *out_n; or KC_EPARSE with *join_at the offset of the second value, or -1 for a string
 * left open. kc__sj_minify_reference gives the same results the slow way (simdjson::minify, then
 * kc__json_ws_join), for the fuzzers to compare. */
int kc__sj_minify(const char *in, size_t n, char *out, size_t *out_n, int64_t *join_at);
int kc__sj_minify_reference(const char *in, size_t n, char *out, size_t *out_n, int64_t *join_at);
/* kc__json_ws_outside_strings (locate.h), vectorised (sj_minify.cpp): the first whitespace byte
 * outside strings, or n. Text with none — compact but for spaces inside strings — is its own
 * minified form. */
size_t kc__sj_ws_outside_strings(const char *text, size_t n);

/* cpu_check.c (plain C): NULL when this CPU runs the decoder's instruction set, else the name of
 * a missing feature ("AVX2", ...). Probed once, then one atomic load. */
const char *kc__json_cpu_missing(void);
/* 0, or KC_EUNSUPPORTED with err saying what the CPU lacks and how to build for it. Every entry
 * point into the C++ decoder calls it first, instead of dying of SIGILL. */
int kc__json_cpu_check(kc_error *err);
/* Tests only: pretend the CPU lacks feature (NULL: the truth again). Process-wide. */
void kc__json_cpu_pretend_missing(const char *feature);

/* One JSON object text → fn once. The text is made compact into the context's scratch. strict:
 * KC_DECODE_STRICT (every value validated, not only those read). Error offsets (fn's too) are
 * offsets into json. */
int kc__sj_object(kc__sj_ctx *ctx, const char *json, size_t len, bool strict, kc__sj_obj_fn fn,
                  void *ud, kc__sj_err *e);

/* A complete LIST body: item_fn per items[] element, then list_fn once. padded: body has
 * KC__SJ_PADDING readable bytes after len, and is parsed in place (else it is copied first). Item
 * spans are NOT made compact: the item callback checks (kc__sj_find_ws) and re-decodes an item
 * with whitespace through kc__sj_object. max_item: in a body decoded in windows, an item whose
 * raw text has no end within max_item bytes is KC_ETOOLARGE (at its first byte) once a window of
 * that size shows it — the windows never grow to hold it; 0 = no limit. */
int kc__sj_list(kc__sj_ctx *ctx, const char *body, size_t len, bool padded, bool strict,
                size_t max_item, kc__sj_item_fn item_fn, kc__sj_list_fn list_fn, void *ud,
                kc__sj_err *e);
/* Bodies over min_len bytes are decoded by kc__sj_list in windows of about window bytes of items
 * (defaults when 0: KC__SJ_LIST_WINDOW_MIN, KC__SJ_LIST_WINDOW). Process-wide; tests and fuzzing,
 * which use tiny windows to cross every boundary. */
void kc__sj_list_window_set(size_t min_len, size_t window);
#define KC__SJ_LIST_WINDOW_MIN ((size_t)16 << 20)
#define KC__SJ_LIST_WINDOW     ((size_t)4 << 20)

/* One watch event line (no newline; trailing CR/space allowed). readable: bytes readable from
 * line (>= len). compact: the caller found no byte <= 0x20 in it. Decoded in place when it is
 * compact and padded by the readable bytes, else through the scratch buffer. */
int kc__sj_watch_line(kc__sj_ctx *ctx, const char *line, size_t len, size_t readable, bool compact,
                      bool strict, kc__sj_event_fn fn, void *ud, kc__sj_err *e);

/* A metav1.Status JSON text → fn once (KC_EPARSE when not a JSON object). */
int kc__sj_status(kc__sj_ctx *ctx, const char *json, size_t len, kc__sj_status_fn fn, void *ud,
                  kc__sj_err *e);

/* JSON Pointer lookup in a compact object text with KC__SJ_PADDING readable bytes after it.
 * pointer is already validated (non-empty, starts with '/', ~ escapes well-formed). */
/* sj_project.cpp: the members of the object text[0..len) (KC__SJ_PADDING readable beyond) on the
 * paths of keep (kc_decode_opts.keep; NULL-terminated JSON Pointers, "*" = any member or element),
 * plus top-level kind and apiVersion, without managedFields when drop_mf: comma-separated,
 * without the braces, in *ret (new malloc'd, NUL-terminated; *ret_len its length). Uses a parser
 * of its own, so it may run inside another sj callback. KC_EPARSE / KC_ENOMEM (e filled). */
int kc__sj_project(const char *text, size_t len, const char *const *keep, bool drop_mf, char **ret,
                   size_t *ret_len, kc__sj_err *e);

int kc__sj_pointer(kc__sj_ctx *ctx, const char *text, size_t len, const char *pointer,
                   enum kc__sj_want want, kc__sj_ptr_out *out, kc__sj_err *e);

/* One member or element found by kc__sj_iter (offsets into the text; key_off into the iterator's
 * key buffer when KC__SJ_SPAN_KEY_ESC). type: a kc_json_type. */
enum { KC__SJ_SPAN_KEY = 1, KC__SJ_SPAN_KEY_ESC = 2, KC__SJ_SPAN_STR_ESC = 4 };
typedef struct kc__sj_span {
    uint32_t key_off, key_len, val_off, val_len;
    uint8_t type, flags;
} kc__sj_span;
/* What kc__sj_iter fills: arrays malloc'd (realloc'd geometrically), the caller's to free. */
typedef struct kc__sj_iter_out {
    kc__sj_span *spans;
    size_t n, cap;
    char *keys; /* unescaped keys that had escapes, back to back */
    size_t keys_n, keys_cap;
} kc__sj_iter_out;
/* The members or elements of the object or array at pointer (validated; "" = the whole text) of a
 * compact text with KC__SJ_PADDING readable bytes after it, recorded into out. Errors:
 * KC_ENOTFOUND, KC_EINVAL (a scalar at pointer: e names its type), KC_EPARSE (the text there is
 * not JSON), KC_ENOMEM. */
int kc__sj_iter(kc__sj_ctx *ctx, const char *text, size_t len, const char *pointer,
                kc__sj_iter_out *out, kc__sj_err *e);
/* One scalar token (tok[0..len), readable up to avail bytes, avail >= len + KC__SJ_PADDING) read as
 * a string (unescaped: *s points into the ctx's parser until its next use), int64 or double.
 * Errors: KC_EINVAL (not that type or not representable), KC_ENOMEM. */
enum kc__sj_tok_want { KC__SJ_TOK_STRING, KC__SJ_TOK_INT, KC__SJ_TOK_DOUBLE };
int kc__sj_token(kc__sj_ctx *ctx, const char *tok, size_t len, size_t avail,
                 enum kc__sj_tok_want want, kc__sj_str *s, int64_t *i, double *d);

/* kc_doc_from_obj's tree (sj_doc.cpp): a jansson tree built by walking a stored object's text (an
 * object, KC__SJ_PADDING readable bytes after it). *ret is a new reference. */
struct json_t;
int kc__sj_doc_build(kc__sj_ctx *ctx, const char *text, size_t len, struct json_t **ret,
                     kc__sj_err *e);

/* Benchmark reference (bench/bench_decode.c): the bare simdjson On-Demand pass the decoders build
 * on — stage 1 over text (padded, len + KC__SJ_PADDING readable) and a skip over every element of
 * its top-level "items" array (or over the whole document when it has none). Returns the number
 * of items, or a negative KC code. stage1_only: stop after stage 1 (returns 0) — the floor under
 * any decoder built on simdjson. */
int64_t kc__sj_reference_pass(kc__sj_ctx *ctx, const char *text, size_t len, bool stage1_only);

/* Build simdjson's lazily constructed singletons now (sj_statics.cpp), so that an exit handler
 * registered afterwards runs before their destructors. Idempotent, thread-safe. */
void kc__sj_init_statics(void);

KC_END_DECLS

#endif

/*
 * json/doc_internal.h — the kc_doc representation (a jansson tree) shared by src/json/doc*.c.
 *
 * jansson is an implementation detail of the json layer: it never appears in a public header
 * (kc_doc is opaque). A kc_doc owns one reference to its root value. Every entry point keeps the
 * document at most KC__DOC_MAX_DEPTH containers deep (doc.h, "Bounds").
 */
#ifndef KC_JSON_DOC_INTERNAL_H
#define KC_JSON_DOC_INTERNAL_H

#include "core/internal.h"
#include "kcache/doc.h"

#include <jansson.h>

/* Deepest nesting of arrays/objects in a document (doc.h; the stored objects' bound too). */
#define KC__DOC_MAX_DEPTH 512

struct kc_doc {
    json_t *root; /* never NULL */
};

/* How kc_doc_from_obj builds the tree: (a) jansson's parser over the stored text, (b) a simdjson
 * walk of it (sj_doc.cpp). DEFAULT is the one kc_doc_from_obj uses (doc.c says why). */
enum kc__doc_builder { KC__DOC_BUILD_JANSSON, KC__DOC_BUILD_SIMDJSON };
#define KC__DOC_BUILD_DEFAULT KC__DOC_BUILD_SIMDJSON

/* kc_doc_from_obj with the builder chosen (bench/bench_doc.c measures both). */
int kc__doc_from_obj_with(const kc_obj *obj, enum kc__doc_builder how, kc_doc **ret, kc_error *err);

/* A document from JSON text already validated as an object (e.g. a kc_obj's text, or text made
 * from one), by the simdjson walk, without making a kc_obj first. KC_EPARSE, KC_ENOMEM. */
int kc__doc_from_text(const char *text, size_t len, kc_doc **ret, kc_error *err);

/* The type of a jansson value as a kc_json_type. */
kc_json_type kc__doc_jtype(const json_t *v);

/* A new kc_doc owning root (stolen; freed on failure). KC_ENOMEM. */
int kc__doc_wrap(json_t *root, kc_doc **ret, kc_error *err);

/* Parse len bytes of JSON text (any value) into a new jansson tree, at most max_depth containers
 * deep. what names the caller in messages. KC_EPARSE (line, column, offset named), KC_ETOOLARGE
 * (depth), KC_ENOMEM. */
int kc__doc_load(const char *json, size_t len, size_t max_depth, const char *what, json_t **ret,
                 kc_error *err);

/* Containers nesting in v (0 for a scalar), counting no further than limit + 1. */
size_t kc__doc_tree_depth(const json_t *v, size_t limit);

/* Compact JSON text of v (new malloc'd, NUL-terminated; doc_write.c). KC_ENOMEM. */
int kc__doc_dump(const json_t *v, char **ret, size_t *ret_len, kc_error *err);

/* true when a and b are equal JSON values (members in any order, numbers by value). */
bool kc__doc_jequal(const json_t *a, const json_t *b);

/* ---- pointers (doc_pointer.c) ---------------------------------------------------------------- */

/* The value at ptr (borrowed from root). what names the caller. KC_EINVAL (malformed pointer,
 * a value of another type on the path), KC_ENOTFOUND. */
int kc__doc_lookup(const json_t *root, const char *ptr, const char *what, json_t **ret,
                   kc_error *err);

/* Put v (stolen, also on failure) at ptr of doc, creating missing parents. "" replaces the root
 * only when allow_root. KC_EINVAL, KC_ETOOLARGE (the result would nest too deep), KC_ENOMEM. */
int kc__doc_place(kc_doc *doc, const char *ptr, json_t *v, bool allow_root, const char *what,
                  kc_error *err);

/*
 * Copy-on-write: a document may share subtrees with others (kc_doc_copy; the template below). A
 * shared container (jansson reference count > 1) is never changed in place: kc__doc_place and
 * kc_doc_remove copy it first (doc_pointer.c). Code that changes a tree of a kc_doc must go
 * through those two.
 *
 * While set on the calling thread, kc_doc_from_obj(obj) answers a document sharing root (borrowed:
 * it must outlive the set) instead of building one; root must be equal to what kc_doc_from_obj
 * builds from obj. The webhook's review path sets the request's object around the handler call
 * (its tree is already built); (NULL, NULL) clears it.
 */
void kc__doc_set_template(const kc_obj *obj, json_t *root);

/* Number of reference tokens in ptr, or -1 when it is malformed. */
long kc__doc_ptr_tokens(const char *ptr);

#endif

/*
 * doc_pointer.c — RFC 6901 JSON Pointers over a kc_doc's tree: resolution for the getters,
 * placement (with missing parents created) for the setters, and kc_json_pointer_escape.
 *
 * A cursor walks the pointer's reference tokens, unescaping each ("~1" → '/', "~0" → '~') into a
 * small buffer (the heap for long tokens). Array tokens are RFC 6901 indexes ("0" or no leading
 * zero) or "-", the element past the end. Errors name the pointer and, for a value of the wrong
 * type, the prefix where it sits and the type found, so a caller sees which step went wrong.
 * Placement checks the depth bound before changing anything: tokens (the containers above the
 * value) plus the value's own nesting stay within KC__DOC_MAX_DEPTH.
 *
 * Copy-on-write: documents may share subtrees (kc_doc_copy, and kc_doc_from_obj of a webhook's
 * request object share the tree they were made from; doc_internal.h). Every change goes through
 * kc__doc_place or kc_doc_remove, which walk down from an owned root and replace each container on
 * the path that is also held elsewhere (jansson reference count > 1) by a shallow copy before
 * descending into it — so a change never shows in another document, and a copy costs the
 * containers on the changed paths, not the tree.
 */
#include "json/doc_internal.h"
#include "json/locate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct cursor {
    const char *ptr;  /* the whole pointer (messages) */
    const char *next; /* the '/' opening the next token, or the terminating NUL */
    const char *tok_start;
    char *tok; /* the current token, unescaped, NUL-terminated */
    size_t tok_len;
    size_t cap;
    char small[128];
} cursor;

long kc__doc_ptr_tokens(const char *ptr)
{
    if (!ptr || (ptr[0] != '\0' && ptr[0] != '/'))
        return -1;
    long n = 0;
    for (const char *p = ptr; *p; p++) {
        if (*p == '/')
            n++;
        else if (*p == '~' && p[1] != '0' && p[1] != '1')
            return -1;
    }
    return n;
}

static void cursor_init(cursor *c, const char *ptr)
{
    c->ptr = ptr;
    c->next = ptr;
    c->tok = c->small;
    c->tok_len = 0;
    c->cap = sizeof c->small;
}

static void cursor_fini(cursor *c)
{
    if (c->tok != c->small)
        free(c->tok);
}

/* 1 with the next token in c->tok, 0 at the end, KC_ENOMEM. The pointer was checked. */
static int cursor_next(cursor *c)
{
    if (*c->next == '\0')
        return 0;
    c->tok_start = c->next;
    const char *s = c->next + 1;
    size_t raw = strcspn(s, "/");
    if (raw + 1 > c->cap) {
        char *t = malloc(raw + 1);
        if (!t)
            return KC_ENOMEM;
        if (c->tok != c->small)
            free(c->tok);
        c->tok = t;
        c->cap = raw + 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < raw; i++) {
        if (s[i] == '~') {
            c->tok[n++] = s[i + 1] == '1' ? '/' : '~';
            i++;
        } else {
            c->tok[n++] = s[i];
        }
    }
    c->tok[n] = '\0';
    c->tok_len = n;
    c->next = s + raw;
    return 1;
}

/* The length of the pointer prefix naming the current token's parent. */
static int parent_len(const cursor *c)
{
    return (int)(c->tok_start - c->ptr);
}

/* The token as an array index: 1 and *ret, 0 for "-", -1 when not an index. */
static int token_index(const cursor *c, size_t *ret)
{
    if (c->tok_len == 1 && c->tok[0] == '-')
        return 0;
    if (c->tok_len == 0 || c->tok_len > 18 || (c->tok[0] == '0' && c->tok_len > 1))
        return -1;
    size_t v = 0;
    for (size_t i = 0; i < c->tok_len; i++) {
        if (c->tok[i] < '0' || c->tok[i] > '9')
            return -1;
        v = v * 10 + (size_t)(c->tok[i] - '0');
    }
    *ret = v;
    return 1;
}

/* true when v is held by more than one parent or document (copy-on-write). */
static bool shared(const json_t *v)
{
    return (json_is_object(v) || json_is_array(v)) &&
           __atomic_load_n(&v->refcount, __ATOMIC_ACQUIRE) > 1;
}

/* doc's root, owned by doc alone (a shallow copy replaces a shared one). KC_ENOMEM. */
static int own_root(kc_doc *doc)
{
    if (!shared(doc->root))
        return 0;
    json_t *c = json_copy(doc->root);
    if (!c)
        return KC_ENOMEM;
    json_decref(doc->root);
    doc->root = c;
    return 0;
}

/* The child of the owned container cur at the cursor's token (object member, or element i of an
 * array), made owned: a shallow copy replaces it in cur when it is shared. NULL on out of memory.
 */
static json_t *own_child(const cursor *c, json_t *cur, size_t i, json_t *child)
{
    if (!shared(child))
        return child;
    json_t *copy = json_copy(child);
    if (!copy)
        return NULL;
    int r = json_is_object(cur) ? json_object_setn_new_nocheck(cur, c->tok, c->tok_len, copy)
                                : json_array_set_new(cur, i, copy);
    return r == 0 ? copy : NULL;
}

static int wrong_type(const cursor *c, const json_t *v, const char *what, kc_error *err)
{
    return kc_error_set(err, KC_EINVAL, "%s \"%s\": \"%.*s\" is %s %s, not an object or array",
                        what, c->ptr, parent_len(c), c->ptr,
                        json_is_array(v) || json_is_object(v) || json_is_integer(v) ? "an" : "a",
                        kc_json_type_name(kc__doc_jtype(v)));
}

static int bad_index(const cursor *c, const char *what, kc_error *err)
{
    return kc_error_set(err, KC_EINVAL,
                        "%s \"%s\": \"%.*s\" is an array and \"%s\" is not an index", what, c->ptr,
                        parent_len(c), c->ptr, c->tok);
}

static int malformed(const char *ptr, const char *what, kc_error *err)
{
    return kc_error_set(err, KC_EINVAL,
                        "%s: malformed JSON pointer \"%s\" (must be \"\" or start with '/'; "
                        "'~' only as ~0 or ~1)",
                        what, ptr ? ptr : "(null)");
}

/* One step down from cur through the cursor's token, for reading. */
static int step(const cursor *c, const json_t *cur, const char *what, json_t **ret, kc_error *err)
{
    if (json_is_object(cur)) {
        *ret = json_object_getn(cur, c->tok, c->tok_len);
    } else if (json_is_array(cur)) {
        size_t i = 0;
        int k = token_index(c, &i);
        if (k < 0)
            return bad_index(c, what, err);
        *ret = k == 1 ? json_array_get(cur, i) : NULL;
    } else {
        return wrong_type(c, cur, what, err);
    }
    if (!*ret)
        return kc_error_set(err, KC_ENOTFOUND, "%s \"%s\": not found (no \"%s\" in \"%.*s\")", what,
                            c->ptr, c->tok, parent_len(c), c->ptr);
    return 0;
}

int kc__doc_lookup(const json_t *root, const char *ptr, const char *what, json_t **ret,
                   kc_error *err)
{
    if (kc__doc_ptr_tokens(ptr) < 0)
        return malformed(ptr, what, err);
    cursor c;
    cursor_init(&c, ptr);
    const json_t *cur = root;
    int rc = 0, k;
    while ((k = cursor_next(&c)) == 1) {
        json_t *child;
        if ((rc = step(&c, cur, what, &child, err)) != 0)
            break;
        cur = child;
    }
    if (k < 0)
        rc = kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
    cursor_fini(&c);
    if (rc == 0)
        *ret = (json_t *)cur;
    return rc;
}

/* The child of the container cur named by the token, created (as an array when the token after it
 * is "-", else an object) when missing. */
static int descend_create(cursor *c, json_t *cur, const char *what, json_t **ret, kc_error *err)
{
    json_t *child = NULL;
    if (json_is_object(cur)) {
        child = json_object_getn(cur, c->tok, c->tok_len);
        if (!child) {
            bool arr = c->next[0] == '/' && c->next[1] == '-' && c->next[2] == '\0';
            child = arr ? json_array() : json_object();
            if (!child || json_object_setn_new_nocheck(cur, c->tok, c->tok_len, child) != 0)
                return kc_error_set(err, KC_ENOMEM, "%s \"%s\": out of memory", what, c->ptr);
        } else if (!(child = own_child(c, cur, 0, child))) {
            return kc_error_set(err, KC_ENOMEM, "%s \"%s\": out of memory", what, c->ptr);
        }
    } else if (json_is_array(cur)) {
        size_t i = 0;
        int k = token_index(c, &i);
        if (k < 0)
            return bad_index(c, what, err);
        if (k == 0 || !(child = json_array_get(cur, i)))
            return kc_error_set(err, KC_EINVAL,
                                "%s \"%s\": \"%.*s\" has no element \"%s\" to descend into", what,
                                c->ptr, parent_len(c), c->ptr, c->tok);
        if (!(child = own_child(c, cur, i, child)))
            return kc_error_set(err, KC_ENOMEM, "%s \"%s\": out of memory", what, c->ptr);
    } else {
        return wrong_type(c, cur, what, err);
    }
    *ret = child;
    return 0;
}

/* Put v (stolen) into the container cur under the cursor's (last) token. */
static int put_last(cursor *c, json_t *cur, json_t *v, const char *what, kc_error *err)
{
    if (json_is_object(cur)) {
        /* The pointer is UTF-8 (kc__doc_place checked it). */
        if (json_object_setn_new_nocheck(cur, c->tok, c->tok_len, v) != 0)
            return kc_error_set(err, KC_ENOMEM, "%s \"%s\": out of memory", what, c->ptr);
        return 0;
    }
    if (!json_is_array(cur)) {
        int rc = wrong_type(c, cur, what, err);
        json_decref(v);
        return rc;
    }
    size_t i = 0, n = json_array_size(cur);
    int k = token_index(c, &i);
    if (k < 0) {
        json_decref(v);
        return bad_index(c, what, err);
    }
    if (k == 1 && i > n) {
        json_decref(v);
        return kc_error_set(err, KC_EINVAL,
                            "%s \"%s\": index %zu past the end of \"%.*s\" (%zu "
                            "elements)",
                            what, c->ptr, i, parent_len(c), c->ptr, n);
    }
    int r = (k == 0 || i == n) ? json_array_append_new(cur, v) : json_array_set_new(cur, i, v);
    return r == 0 ? 0 : kc_error_set(err, KC_ENOMEM, "%s \"%s\": out of memory", what, c->ptr);
}

int kc__doc_place(kc_doc *doc, const char *ptr, json_t *v, bool allow_root, const char *what,
                  kc_error *err)
{
    long ntok = kc__doc_ptr_tokens(ptr);
    int64_t bad;
    int rc;
    if (!v) {
        rc = kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
    } else if (ntok < 0) {
        rc = malformed(ptr, what, err);
    } else if ((bad = kc__json_bad_utf8(ptr, strlen(ptr))) >= 0) {
        /* Member names become JSON text: they must be UTF-8 like any string. */
        rc = kc_error_set(err, KC_EINVAL, "%s: JSON pointer \"%s\" is not UTF-8 (byte %lld)", what,
                          ptr, (long long)bad);
    } else if (ntok == 0 && !allow_root) {
        rc = kc_error_set(err, KC_EINVAL,
                          "%s: \"\" (the whole document) cannot take this value; "
                          "name a member",
                          what);
    } else if ((size_t)ntok + kc__doc_tree_depth(v, KC__DOC_MAX_DEPTH) > KC__DOC_MAX_DEPTH) {
        rc = kc_error_set(err, KC_ETOOLARGE,
                          "%s \"%s\": the document would nest deeper than %d "
                          "levels",
                          what, ptr, KC__DOC_MAX_DEPTH);
    } else if (ntok == 0) {
        json_decref(doc->root);
        doc->root = v;
        return 0;
    } else {
        cursor c;
        cursor_init(&c, ptr);
        rc = own_root(doc) ? kc_error_set(err, KC_ENOMEM, "%s: out of memory", what) : 0;
        json_t *cur = doc->root;
        for (long t = 0; t < ntok && rc == 0; t++) {
            if (cursor_next(&c) < 0) {
                rc = kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
            } else if (t + 1 < ntok) {
                rc = descend_create(&c, cur, what, &cur, err);
            } else {
                rc = put_last(&c, cur, v, what, err); /* consumes v */
                cursor_fini(&c);
                return rc;
            }
        }
        cursor_fini(&c);
    }
    json_decref(v);
    return rc;
}

/* As kc__doc_lookup on doc's root, making every container on the way owned (copy-on-write), so
 * the value found may be changed. */
static int lookup_owned(kc_doc *doc, const char *ptr, const char *what, json_t **ret, kc_error *err)
{
    if (own_root(doc))
        return kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
    cursor c;
    cursor_init(&c, ptr);
    json_t *cur = doc->root;
    int rc = 0, k;
    while ((k = cursor_next(&c)) == 1) {
        json_t *child;
        size_t i = 0;
        if ((rc = step(&c, cur, what, &child, err)) != 0)
            break;
        if (json_is_array(cur))
            token_index(&c, &i);
        if (!(cur = own_child(&c, cur, i, child))) {
            rc = kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
            break;
        }
    }
    if (k < 0)
        rc = kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
    cursor_fini(&c);
    if (rc == 0)
        *ret = cur;
    return rc;
}

int kc_doc_remove(kc_doc *doc, const char *ptr, kc_error *err)
{
    long ntok = kc__doc_ptr_tokens(ptr);
    if (!doc || ntok < 0)
        return doc ? malformed(ptr, "kc_doc_remove", err)
                   : kc_error_set(err, KC_EINVAL, "kc_doc_remove: NULL doc");
    if (ntok == 0)
        return kc_error_set(err, KC_EINVAL,
                            "kc_doc_remove: \"\" (the whole document) cannot be "
                            "removed");
    /* The parent: the pointer without its last token. */
    const char *last = strrchr(ptr, '/');
    char *parent_ptr = kc__strdup_n(ptr, (size_t)(last - ptr));
    if (!parent_ptr)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_remove: out of memory");
    json_t *parent = NULL;
    int rc = lookup_owned(doc, parent_ptr, "kc_doc_remove", &parent, err);
    free(parent_ptr);
    if (rc)
        return rc;
    cursor c;
    cursor_init(&c, last);
    if (cursor_next(&c) < 0)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_remove: out of memory");
    c.ptr = ptr; /* messages name the whole pointer */
    c.tok_start = last;
    json_t *child;
    rc = step(&c, parent, "kc_doc_remove", &child, err);
    if (rc == 0) {
        size_t i = 0;
        if (json_is_object(parent))
            json_object_deln(parent, c.tok, c.tok_len);
        else if (token_index(&c, &i) == 1)
            json_array_remove(parent, i);
    }
    cursor_fini(&c);
    return rc;
}

size_t kc_json_pointer_escape(const char *key, size_t len, char *buf, size_t cap)
{
    size_t n = 0;
    if (!key)
        len = 0;
    for (const char *k = key, *end = key + len; k && k < end; k++) {
        const char *rep = *k == '~' ? "~0" : *k == '/' ? "~1" : NULL;
        size_t m = rep ? 2 : 1;
        for (size_t j = 0; j < m; j++, n++)
            if (buf && n + 1 < cap)
                buf[n] = rep ? rep[j] : *k;
    }
    if (buf && cap > 0)
        buf[n < cap ? n : cap - 1] = '\0';
    return n;
}

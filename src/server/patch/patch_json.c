/*
 * patch_json.c — JSON patch (RFC 6902) with JSON pointers (RFC 6901) on jansson documents (#39).
 *
 * Design: the operations array is validated as a whole before any operation runs (every element
 * an object with a known string "op", a string "path", "from" for move/copy, "value" for
 * add/replace/test); a malformed array is KC_EBADREQUEST (400) and nothing is applied. Operations
 * then run in order on the caller's copy; the first failing one (a failed "test", a path that
 * does not exist, an index out of range, moving a value into itself) is KC_EUNPROCESSABLE (422), as
 * upstream's json-patch handler answers. Pointer tokens are unescaped (~1 → '/', ~0 → '~'); array
 * indexes are decimal without leading zeros, and "-" appends (add only). Numbers compare by value
 * in "test". Thread-safe: pure functions.
 */
#include "server/patch/patch_internal.h"

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

typedef enum json_op { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST } json_op;

static const char *const op_names[] = {"add", "remove", "replace", "move", "copy", "test"};

/* Unescape the pointer token (s, n) into out (room for n + 1). false on a bad '~' escape. */
static bool token_unescape(const char *s, size_t n, char *out)
{
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '~') {
            out[j++] = s[i];
            continue;
        }
        if (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1'))
            return false;
        out[j++] = s[i + 1] == '0' ? '~' : '/';
        i++;
    }
    out[j] = '\0';
    return true;
}

/* Array index token: digits without a leading zero, below SIZE_MAX / 2. -1 when malformed. */
static long long parse_index(const char *tok)
{
    size_t n = strlen(tok);
    if (n == 0 || n > 18 || (n > 1 && tok[0] == '0'))
        return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return -1;
        v = v * 10 + (tok[i] - '0');
    }
    return v;
}

/*
 * Walk path in doc. With want_parent, stop before the last token: *ret is the parent container
 * and *ret_tok (new malloc'd string, caller frees) the unescaped last token. Without it, *ret is
 * the value itself (borrowed). path "" with want_parent is an error (the root has no parent).
 */
static int resolve(json_t *doc, const char *path, bool want_parent, json_t **ret, char **ret_tok,
                   kc_error *err)
{
    if (path[0] != '\0' && path[0] != '/')
        return kc_error_set(err, KC_EUNPROCESSABLE, "invalid JSON pointer %s: must start with '/'",
                            path);
    if (want_parent && path[0] == '\0')
        return kc_error_set(err, KC_EUNPROCESSABLE,
                            "invalid JSON pointer \"\": the root has no parent");
    char *tok = malloc(strlen(path) + 1);
    if (!tok)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    json_t *cur = doc;
    const char *p = path;
    while (*p == '/') {
        const char *seg = p + 1;
        size_t n = strcspn(seg, "/");
        if (!token_unescape(seg, n, tok)) {
            free(tok);
            return kc_error_set(err, KC_EUNPROCESSABLE, "invalid JSON pointer %s: bad '~' escape",
                                path);
        }
        p = seg + n;
        if (want_parent && *p == '\0') {
            if (!json_is_object(cur) && !json_is_array(cur)) {
                free(tok);
                return kc_error_set(err, KC_EUNPROCESSABLE,
                                    "path %s: the parent is not an object or array", path);
            }
            *ret = cur;
            *ret_tok = tok;
            return 0;
        }
        json_t *next = NULL;
        if (json_is_object(cur)) {
            next = json_object_get(cur, tok);
        } else if (json_is_array(cur)) {
            long long i = parse_index(tok);
            if (i >= 0 && (size_t)i < json_array_size(cur))
                next = json_array_get(cur, (size_t)i);
        }
        if (!next) {
            free(tok);
            return kc_error_set(err, KC_EUNPROCESSABLE, "path %s does not exist in the object",
                                path);
        }
        cur = next;
    }
    free(tok);
    *ret = cur;
    return 0;
}

/* Add value (consumed, on failure too) at path. */
static int op_add(json_t **doc, const char *path, json_t *value, kc_error *err)
{
    if (path[0] == '\0') {
        json_decref(*doc);
        *doc = value;
        return 0;
    }
    json_t *parent;
    char *tok;
    int rc = resolve(*doc, path, true, &parent, &tok, err);
    if (rc < 0) {
        json_decref(value);
        return rc;
    }
    if (json_is_object(parent)) {
        rc = json_object_set_new(parent, tok, value) < 0
                 ? kc_error_set(err, KC_ENOMEM, "out of memory")
                 : 0;
    } else if (strcmp(tok, "-") == 0) {
        rc = json_array_append_new(parent, value) < 0
                 ? kc_error_set(err, KC_ENOMEM, "out of memory")
                 : 0;
    } else {
        long long i = parse_index(tok);
        if (i < 0 || (size_t)i > json_array_size(parent)) {
            json_decref(value);
            rc = kc_error_set(err, KC_EUNPROCESSABLE, "path %s: array index out of range", path);
        } else {
            rc = json_array_insert_new(parent, (size_t)i, value) < 0
                     ? kc_error_set(err, KC_ENOMEM, "out of memory")
                     : 0;
        }
    }
    free(tok);
    return rc;
}

/* Remove the value at path; with ret_removed, hand it over (new reference) instead of dropping. */
static int op_remove(json_t *doc, const char *path, json_t **ret_removed, kc_error *err)
{
    json_t *parent;
    char *tok;
    int rc = resolve(doc, path, true, &parent, &tok, err);
    if (rc < 0)
        return rc;
    json_t *victim = NULL;
    long long i = -1;
    if (json_is_object(parent)) {
        victim = json_object_get(parent, tok);
    } else {
        i = parse_index(tok);
        if (i >= 0 && (size_t)i < json_array_size(parent))
            victim = json_array_get(parent, (size_t)i);
    }
    if (!victim) {
        rc = kc_error_set(err, KC_EUNPROCESSABLE, "path %s does not exist in the object", path);
        goto out;
    }
    if (ret_removed)
        *ret_removed = json_incref(victim);
    if (json_is_object(parent))
        json_object_del(parent, tok);
    else
        json_array_remove(parent, (size_t)i);
out:
    free(tok);
    return rc;
}

/* Replace the existing value at path with value (consumed). */
static int op_replace(json_t **doc, const char *path, json_t *value, kc_error *err)
{
    json_t *target;
    int rc = resolve(*doc, path, false, &target, NULL, err);
    if (rc < 0) {
        json_decref(value);
        return rc;
    }
    json_t *removed = NULL;
    if (path[0] != '\0' && (rc = op_remove(*doc, path, &removed, err)) < 0) {
        json_decref(value);
        return rc;
    }
    json_decref(removed);
    return op_add(doc, path, value, err);
}

/* Validate one operation; fills *ret_op. KC_EBADREQUEST when malformed. */
static int check_op(const json_t *o, size_t idx, json_op *ret_op, kc_error *err)
{
    if (!json_is_object(o))
        return kc_error_set(err, KC_EBADREQUEST, "json patch operation %zu is not an object", idx);
    const char *op = json_string_value(json_object_get(o, "op"));
    if (!op)
        return kc_error_set(err, KC_EBADREQUEST, "json patch operation %zu has no string \"op\"",
                            idx);
    size_t k;
    for (k = 0; k < KC__ARRAY_LEN(op_names); k++) {
        if (strcmp(op, op_names[k]) == 0)
            break;
    }
    if (k == KC__ARRAY_LEN(op_names))
        return kc_error_set(err, KC_EBADREQUEST, "json patch operation %zu: unknown op \"%s\"", idx,
                            op);
    if (!json_is_string(json_object_get(o, "path")))
        return kc_error_set(err, KC_EBADREQUEST,
                            "json patch operation %zu (%s) has no string \"path\"", idx, op);
    if ((k == OP_MOVE || k == OP_COPY) && !json_is_string(json_object_get(o, "from")))
        return kc_error_set(err, KC_EBADREQUEST,
                            "json patch operation %zu (%s) has no string \"from\"", idx, op);
    if ((k == OP_ADD || k == OP_REPLACE || k == OP_TEST) && !json_object_get(o, "value"))
        return kc_error_set(err, KC_EBADREQUEST, "json patch operation %zu (%s) has no \"value\"",
                            idx, op);
    *ret_op = (json_op)k;
    return 0;
}

/* Nodes one patch may create through "copy", summed over its operations (a copy of the root,
 * repeated, would otherwise double the document each time). Upstream bounds this too
 * (json-patch AccumulatedCopySizeLimit). */
#define MAX_COPIED_NODES ((size_t)1 << 20)

/* Nesting depth of v (a scalar is 0), counting no further than cap + 1. */
static int depth_of(const json_t *v, int cap)
{
    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    if (cap < 0)
        return 1;
    int d = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c)
        {
            int cd = depth_of(c, cap - 1);
            d = cd > d ? cd : d;
            if (d > cap)
                break;
        }
    } else {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c)
        {
            int cd = depth_of(c, cap - 1);
            d = cd > d ? cd : d;
            if (d > cap)
                break;
        }
    }
    return d + 1;
}

/* Nodes in v, counting no further than limit + 1. */
static size_t count_nodes(const json_t *v, size_t limit)
{
    size_t n = 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c)
        {
            if (n > limit)
                break;
            n += count_nodes(c, limit - n);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c)
        {
            if (n > limit)
                break;
            n += count_nodes(c, limit - n);
        }
    }
    return n;
}

/* Placing v at path must keep the document within KC__PATCH_MAX_DEPTH (so no later operation
 * or deep copy recurses without bound). */
static int check_depth(const json_t *v, const char *path, kc_error *err)
{
    int tokens = 0;
    for (const char *p = path; *p && tokens <= KC__PATCH_MAX_DEPTH; p++)
        tokens += *p == '/';
    if (tokens > KC__PATCH_MAX_DEPTH ||
        depth_of(v, KC__PATCH_MAX_DEPTH - tokens) > KC__PATCH_MAX_DEPTH - tokens)
        return kc_error_set(err, KC_EUNPROCESSABLE,
                            "json patch: the value at %s would nest deeper than %d levels", path,
                            KC__PATCH_MAX_DEPTH);
    return 0;
}

static int run_op(json_t **doc, json_op op, const json_t *o, size_t *copied, kc_error *err)
{
    const char *path = json_string_value(json_object_get(o, "path"));
    const char *from = json_string_value(json_object_get(o, "from"));
    json_t *value = json_object_get(o, "value");
    json_t *v;
    int rc;
    switch (op) {
    case OP_ADD:
        if ((rc = check_depth(value, path, err)) < 0)
            return rc;
        if (!(v = json_deep_copy(value)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        return op_add(doc, path, v, err);
    case OP_REMOVE:
        if (path[0] == '\0')
            return kc_error_set(err, KC_EUNPROCESSABLE,
                                "json patch: cannot remove the whole object");
        return op_remove(*doc, path, NULL, err);
    case OP_REPLACE:
        if ((rc = check_depth(value, path, err)) < 0)
            return rc;
        if (!(v = json_deep_copy(value)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        return op_replace(doc, path, v, err);
    case OP_MOVE: {
        if (strcmp(from, path) == 0)
            return resolve(*doc, from, false, &v, NULL, err);
        size_t fl = strlen(from);
        if (strncmp(path, from, fl) == 0 && path[fl] == '/')
            return kc_error_set(err, KC_EUNPROCESSABLE,
                                "json patch: cannot move %s into its child %s", from, path);
        if (from[0] == '\0')
            return kc_error_set(err, KC_EUNPROCESSABLE, "json patch: cannot move the whole object");
        if ((rc = resolve(*doc, from, false, &v, NULL, err)) < 0 ||
            (rc = check_depth(v, path, err)) < 0)
            return rc;
        if ((rc = op_remove(*doc, from, &v, err)) < 0)
            return rc;
        return op_add(doc, path, v, err);
    }
    case OP_COPY:
        if ((rc = resolve(*doc, from, false, &v, NULL, err)) < 0 ||
            (rc = check_depth(v, path, err)) < 0)
            return rc;
        *copied += count_nodes(v, MAX_COPIED_NODES);
        if (*copied > MAX_COPIED_NODES)
            return kc_error_set(err, KC_EUNPROCESSABLE,
                                "json patch: copies exceed the limit of %zu values in total",
                                MAX_COPIED_NODES);
        if (!(v = json_deep_copy(v)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        return op_add(doc, path, v, err);
    case OP_TEST:
        if ((rc = resolve(*doc, path, false, &v, NULL, err)) < 0)
            return rc;
        if (!kc__json_equal(v, value))
            return kc_error_set(err, KC_EUNPROCESSABLE, "testing value %s failed", path);
        return 0;
    }
    return kc_error_set(err, KC_EINVAL, "json patch: bad op");
}

int kc__json_patch(json_t **doc, const json_t *ops, kc_error *err)
{
    if (!json_is_array(ops))
        return kc_error_set(err, KC_EBADREQUEST,
                            "error decoding patch: a json patch must be a JSON array");
    size_t n = json_array_size(ops);
    if (n > KC__PATCH_MAX_OPS)
        return kc_error_set(err, KC_ETOOLARGE,
                            "the json patch has %zu operations, more than the limit %d", n,
                            KC__PATCH_MAX_OPS);
    json_op op;
    size_t copied = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = check_op(json_array_get(ops, i), i, &op, err);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(ops, i);
        check_op(o, i, &op, NULL);
        int rc = run_op(doc, op, o, &copied, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

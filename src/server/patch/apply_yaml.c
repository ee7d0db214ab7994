/*
 * apply_yaml.c — YAML (or JSON) body → jansson value for server-side apply.
 *
 * Design: libyaml's event parser drives a small explicit stack of open containers (no recursion,
 * so hostile nesting costs no C stack; the depth is capped by the caller's limit). Plain scalars
 * resolve like sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 flavour): null/~/empty → null,
 * true/false/yes/no/on/off/y/n (three casings) → booleans, decimal and 0x integers, decimal floats;
 * .inf/.nan stay strings because JSON cannot carry them. Quoted, literal and folded scalars and
 * "!!str"-tagged ones are strings. Mapping keys are always strings (the scalar text). Anchors are
 * ignored; aliases are rejected (no billion-laughs expansion). Exactly one document.
 * Thread-safe: pure function.
 */
#include "server/patch/patch_internal.h"

#include "core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct frame {
    json_t *node;
    char *key; /* mapping: the pending key (malloc'd) or NULL */
} frame;

typedef struct ystate {
    frame *stack;
    size_t depth, cap;
    json_t *root;
    int docs;
} ystate;

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++) {
        if (strcmp(s, *list) == 0)
            return true;
    }
    return false;
}

/* Resolve a plain scalar to a new jansson value (NULL on ENOMEM). */
static json_t *resolve_plain(const char *s, size_t n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", "y",  "Y",  "yes",
                                        "Yes",  "YES",  "on",   "On", "ON", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", "n",   "N",   "no",
                                         "No",    "NO",    "off",   "Off", "OFF", NULL};
    if (strlen(s) != n)
        return json_stringn(s, n); /* embedded NUL: keep as text */
    if (in_list(s, nulls))
        return json_null();
    if (in_list(s, trues))
        return json_true();
    if (in_list(s, falses))
        return json_false();
    const char *d = s + (s[0] == '-' || s[0] == '+');
    bool hex = d[0] == '0' && (d[1] == 'x' || d[1] == 'X') && d[2];
    if (hex || (d[0] >= '0' && d[0] <= '9')) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, hex ? 16 : 10);
        if (*end == '\0' && errno == 0 && (hex || d[0] != '0' || d[1] == '\0'))
            return json_integer(v);
    }
    /* floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
    const char *p = d;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (digits > 0 && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (*q >= '0' && *q <= '9') {
            while (*q >= '0' && *q <= '9')
                q++;
            p = q;
        }
    }
    if (digits > 0 && *p == '\0' && (strchr(d, '.') || strchr(d, 'e') || strchr(d, 'E')))
        return json_real(strtod(s, NULL));
    return json_stringn(s, n);
}

/* Attach v (consumed) to the open container or make it the root. is_key_text: v came from a
 * scalar whose raw text is text (used when a mapping waits for a key). */
static int attach(ystate *st, json_t *v, const char *text, size_t tlen, kc_error *err, size_t line)
{
    if (!v)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (st->depth == 0) {
        if (st->root) {
            json_decref(v);
            return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: more than one value", line);
        }
        st->root = v;
        return 0;
    }
    frame *top = &st->stack[st->depth - 1];
    if (json_is_array(top->node))
        return json_array_append_new(top->node, v) < 0
                   ? kc_error_set(err, KC_ENOMEM, "out of memory")
                   : 0;
    if (!top->key) {
        json_decref(v);
        if (!text)
            return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: mapping keys must be scalars",
                                line);
        if (!(top->key = kc__strdup_n(text, tlen)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        return 0;
    }
    int rc = json_object_set_new(top->node, top->key, v) < 0
                 ? kc_error_set(err, KC_EBADREQUEST,
                                "yaml: line %zu: key is not valid UTF-8 or out of memory", line)
                 : 0;
    free(top->key);
    top->key = NULL;
    return rc;
}

static int push(ystate *st, json_t *node, int max_depth, kc_error *err, size_t line)
{
    if (!node)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (st->depth >= (size_t)max_depth) {
        json_decref(node);
        return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: nesting deeper than %d levels",
                            line, max_depth);
    }
    if (kc__grow(&st->stack, &st->cap, st->depth + 1, sizeof *st->stack, 16) < 0) {
        json_decref(node);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    st->stack[st->depth++] = (frame){node, NULL};
    return 0;
}

static int pop(ystate *st, kc_error *err, size_t line)
{
    frame f = st->stack[--st->depth];
    free(f.key);
    return attach(st, f.node, NULL, 0, err, line);
}

static int on_event(ystate *st, const yaml_event_t *ev, int max_depth, kc_error *err)
{
    size_t line = ev->start_mark.line + 1;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++st->docs > 1)
            return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: only one document is allowed",
                                line);
        return 0;
    case YAML_MAPPING_START_EVENT:
        if (st->depth && json_is_object(st->stack[st->depth - 1].node) &&
            !st->stack[st->depth - 1].key)
            return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: mapping keys must be scalars",
                                line);
        return push(st, json_object(), max_depth, err, line);
    case YAML_SEQUENCE_START_EVENT:
        if (st->depth && json_is_object(st->stack[st->depth - 1].node) &&
            !st->stack[st->depth - 1].key)
            return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: mapping keys must be scalars",
                                line);
        return push(st, json_array(), max_depth, err, line);
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
        return pop(st, err, line);
    case YAML_ALIAS_EVENT:
        return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: aliases are not supported", line);
    case YAML_SCALAR_EVENT: {
        const char *s = (const char *)ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        const char *tag = (const char *)ev->data.scalar.tag;
        bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                     !(tag && strcmp(tag, YAML_STR_TAG) == 0);
        json_t *v = plain ? resolve_plain(s, n) : json_stringn(s, n);
        if (!v && !plain)
            return kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: invalid UTF-8", line);
        return attach(st, v, s, n, err, line);
    }
    default:
        return 0;
    }
}

int kc__yaml_decode(const char *body, size_t len, int max_depth, json_t **ret, kc_error *err)
{
    yaml_parser_t parser;
    ystate st = {0};
    int rc = 0;
    if (!yaml_parser_initialize(&parser))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)(body ? body : ""), len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = kc_error_set(err, KC_EBADREQUEST, "yaml: line %zu: %s",
                              (size_t)parser.problem_mark.line + 1,
                              parser.problem ? parser.problem : "parse error");
            break;
        }
        bool end = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&st, &ev, max_depth, err);
        yaml_event_delete(&ev);
        if (rc < 0 || end)
            break;
    }
    yaml_parser_delete(&parser);
    while (st.depth > 0) {
        st.depth--;
        free(st.stack[st.depth].key);
        json_decref(st.stack[st.depth].node);
    }
    free(st.stack);
    if (rc == 0 && !st.root)
        rc = kc_error_set(err, KC_EBADREQUEST, "the apply body is empty");
    if (rc < 0) {
        json_decref(st.root);
        return rc;
    }
    *ret = st.root;
    return 0;
}

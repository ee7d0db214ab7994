/*
 * yaml_tree.c — a small immutable tree (maps, sequences, scalars) built from libyaml's event
 * parser, for kubeconfig files.
 *
 * Bounded: nesting depth KC__YAML_MAX_DEPTH, node count KC__YAML_MAX_NODES (the input size is
 * bounded by the caller). Only the first document is read. Aliases are refused (kubeconfigs do
 * not use them, and they are the classic YAML memory bomb). Map keys must be scalars; a repeated
 * key keeps its first value, as kubectl's decoder would reject it anyway.
 */
#include "http/internal.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

void kc__ynode_free(kc__ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++)
        kc__ynode_free(n->items[i]);
    free(n->items);
    free(n->scalar);
    free(n->key);
    free(n);
}

const kc__ynode *kc__ynode_get(const kc__ynode *n, const char *key)
{
    if (!n || n->type != KC__Y_MAP)
        return NULL;
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->items[i]->key, key) == 0)
            return n->items[i];
    return NULL;
}

const char *kc__ynode_str(const kc__ynode *n, const char *key)
{
    const kc__ynode *v = kc__ynode_get(n, key);
    return v && v->type == KC__Y_SCALAR ? v->scalar : NULL;
}

static int kc__ynode_add(kc__ynode *parent, kc__ynode *child)
{
    if ((parent->n & (parent->n - 1)) == 0) { /* grow at powers of two */
        size_t cap = parent->n ? parent->n * 2 : 4;
        kc__ynode **items = realloc(parent->items, cap * sizeof *items);
        if (!items)
            return KC_ENOMEM;
        parent->items = items;
    }
    parent->items[parent->n++] = child;
    return 0;
}

typedef struct kc__yframe {
    kc__ynode *node;
    char *pending_key; /* map: key waiting for its value */
} kc__yframe;

/* The tree being built: the open maps and sequences (innermost last), the node count, the root. */
typedef struct kc__ybuild {
    kc__yframe stack[KC__YAML_MAX_DEPTH];
    int depth;
    size_t nodes;
    kc__ynode *root;
} kc__ybuild;

/* A new node for a scalar, mapping-start or sequence-start event. */
static int kc__ynode_new(const yaml_event_t *ev, int line, kc__ynode **ret, kc_error *err)
{
    kc__ynode *n = calloc(1, sizeof *n);
    if (!n)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    n->line = line;
    if (ev->type == YAML_SCALAR_EVENT) {
        n->type = KC__Y_SCALAR;
        n->scalar = kc__strdup_n((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (!n->scalar) {
            kc__ynode_free(n);
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        }
    } else {
        n->type = ev->type == YAML_MAPPING_START_EVENT ? KC__Y_MAP : KC__Y_SEQ;
    }
    *ret = n;
    return 0;
}

/* Attach *np to the parent frame top (under its pending key), or make it the root. A repeated
 * key's value is freed and *np set to NULL (the first value is kept). On failure *np is freed. */
static int kc__ybuild_attach(kc__ybuild *b, kc__yframe *top, kc__ynode **np, kc_error *err)
{
    kc__ynode *n = *np;
    if (!top) {
        b->root = n;
        return 0;
    }
    if (top->node->type == KC__Y_MAP) {
        n->key = top->pending_key;
        top->pending_key = NULL;
        if (kc__ynode_get(top->node, n->key)) {
            kc__ynode_free(n); /* repeated key: keep the first */
            *np = NULL;
            return 0;
        }
    }
    if (kc__ynode_add(top->node, n)) {
        kc__ynode_free(n);
        *np = NULL;
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    return 0;
}

/* Open a frame for a map or sequence n (NULL: a dropped repeated-key value, which still needs a
 * frame to absorb its children). */
static int kc__ybuild_push(kc__ybuild *b, yaml_event_type_t type, kc__ynode *n, int line,
                           kc_error *err)
{
    if (b->depth == KC__YAML_MAX_DEPTH)
        return kc_error_set(err, KC_ECONFIG, "YAML nested deeper than %d (line %d)",
                            KC__YAML_MAX_DEPTH, line);
    if (!n) {
        n = calloc(1, sizeof *n);
        if (!n)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        n->type = type == YAML_MAPPING_START_EVENT ? KC__Y_MAP : KC__Y_SEQ;
        n->line = -1; /* orphan: freed when its frame is popped */
    }
    b->stack[b->depth].node = n;
    b->stack[b->depth].pending_key = NULL;
    b->depth++;
    return 0;
}

/* Close the innermost frame. */
static void kc__ybuild_pop(kc__ybuild *b)
{
    b->depth--;
    free(b->stack[b->depth].pending_key);
    if (b->stack[b->depth].node->line == -1)
        kc__ynode_free(b->stack[b->depth].node);
}

/* A scalar, mapping-start or sequence-start event: a map's key, or a node attached to its
 * parent (and, for a map or sequence, a new frame). */
static int kc__ybuild_node(kc__ybuild *b, const yaml_event_t *ev, int line, kc_error *err)
{
    if (++b->nodes > KC__YAML_MAX_NODES)
        return kc_error_set(err, KC_ECONFIG, "YAML has more than %d nodes", KC__YAML_MAX_NODES);
    kc__yframe *top = b->depth ? &b->stack[b->depth - 1] : NULL;
    if (top && top->node->type == KC__Y_MAP && !top->pending_key) {
        if (ev->type != YAML_SCALAR_EVENT)
            return kc_error_set(err, KC_ECONFIG, "YAML map key is not a scalar (line %d)", line);
        top->pending_key = kc__strdup((const char *)ev->data.scalar.value);
        if (!top->pending_key)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        return 0;
    }
    kc__ynode *n = NULL;
    int rc;
    if ((rc = kc__ynode_new(ev, line, &n, err)) != 0 ||
        (rc = kc__ybuild_attach(b, top, &n, err)) != 0)
        return rc;
    if (ev->type != YAML_SCALAR_EVENT)
        return kc__ybuild_push(b, ev->type, n, line, err);
    return 0;
}

int kc__yaml_parse(const char *text, size_t len, kc__ynode **ret, kc_error *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    kc__ybuild b = {.depth = 0};
    int rc = 0;
    bool done = false;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = kc_error_set(err, KC_ECONFIG, "YAML error at line %zu column %zu: %s",
                              p.problem_mark.line + 1, p.problem_mark.column + 1,
                              p.problem ? p.problem : "syntax error");
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        switch (ev.type) {
        case YAML_DOCUMENT_END_EVENT:
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_ALIAS_EVENT:
            rc = kc_error_set(err, KC_ECONFIG, "YAML aliases are not supported (line %d)", line);
            break;
        case YAML_SCALAR_EVENT:
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            rc = kc__ybuild_node(&b, &ev, line, err);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            if (b.depth > 0)
                kc__ybuild_pop(&b);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    while (b.depth > 0)
        kc__ybuild_pop(&b);
    yaml_parser_delete(&p);
    if (rc) {
        kc__ynode_free(b.root);
        return rc;
    }
    *ret = b.root;
    return 0;
}

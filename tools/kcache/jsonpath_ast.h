/* jsonpath_ast.h — the syntax tree of a JSONPath template, shared by its parser (jsonpath.c) and
 * its evaluator (jsonpath_eval.c). Internal to those two files. */
#ifndef KC_CLI_JSONPATH_AST_H
#define KC_CLI_JSONPATH_AST_H

#include "jsonpath.h"

#include <stddef.h>

typedef enum jp_step_kind {
    JP_FIELD,   /* .name or ['name'] */
    JP_WILD,    /* .* or [*]: every value of an object or element of an array */
    JP_RECURSE, /* ..: the value and every object or array below it (then a field) */
    JP_SLICE,   /* [i], [a:b], [a:b:c] */
    JP_FILTER   /* [?(…)] */
} jp_step_kind;

typedef enum jp_op { JP_EXISTS, JP_EQ, JP_NE, JP_LT, JP_GT, JP_LE, JP_GE } jp_op;

typedef struct jp_filter jp_filter;

typedef struct jp_path {
    bool from_root; /* $: from the document, else from the current value (@, or a leading '.') */
    struct jp_step *steps;
    size_t n;
} jp_path;

typedef struct jp_step {
    jp_step_kind kind;
    char *name;      /* JP_FIELD */
    long idx[3];     /* JP_SLICE: start, end, step */
    bool has[3];     /* which of them were given */
    bool single;     /* JP_SLICE: [i] (one index, no ':') */
    jp_filter *cond; /* JP_FILTER */
} jp_step;

struct jp_filter {
    jp_path lhs;
    jp_op op;
    bool rhs_is_path;
    jp_path rhs;     /* when rhs_is_path */
    json_t *literal; /* otherwise: a string, integer, real or boolean */
};

typedef enum jp_node_kind {
    JP_TEXT,  /* text outside actions, or a quoted literal inside one */
    JP_EXPR,  /* {path} */
    JP_RANGE, /* {range path}: the nodes up to its JP_END run once per result */
    JP_END
} jp_node_kind;

typedef struct jp_node {
    jp_node_kind kind;
    char *text; /* JP_TEXT */
    size_t len;
    jp_path path; /* JP_EXPR, JP_RANGE */
    size_t end;   /* JP_RANGE: index of its JP_END */
} jp_node;

struct jp_tmpl {
    jp_node *nodes;
    size_t n, cap;
};

#endif
